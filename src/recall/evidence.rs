//! What a question's words say about which past session it is about: each
//! word weighed by how few of the project's sessions hold it.
//!
//! bm25 and the passage scores weigh a word by the passages that hold it.
//! That is right for ranking, and wrong for judging whether a session is
//! evidence at all: a team's prompt template ("Work on bead X. Run bd show
//! X to see the issue details …") is a few passages in every session, so
//! its words look rare among passages and match every session's opening
//! equally well. A word every session holds tells nothing about which one a
//! prompt is about; a word one session holds points at it. So the prompt
//! hook judges session hits by these weights (see
//! `memory::prompt::relevance_bar`): `ln((S + 1) / (s + 0.5))` for a word
//! held by `s` of the `S` sessions, times the kind's weight. A word no
//! session holds gets the highest weight: a prompt whose own subject
//! (a new ticket's id, the function it names) is nowhere in memory is not
//! covered by a session that shares only its other words.

use rusqlite::Connection;

use super::plan::{Table, Weighted};
use super::sanitize::{to_match, Term};
use crate::error::Result;

/// A session hit's session must cover at least this share of what the
/// best-covering session covers (see [`Request::cover_bar`](super::Request::cover_bar)):
/// a long ticket's words are spread over the session that worked on it.
pub const RELATIVE_COVER: f64 = 0.75;

/// Passages read, at most, to count the sessions holding the question's
/// words, per scope. Words are counted rarest first (the ones that weigh);
/// past the budget a word's sessions are estimated from its passages (see
/// [`spread`]). Reading a common word's doclist costs about as much as its
/// passages, whatever the LIMIT: counting every word of a long ticket on a
/// 48,000-passage index took 60 ms of the hook's 100.
const COUNT_BUDGET: i64 = 5_000;

/// Sessions of `sessions` that `passages` passages spread at random would
/// touch: `S (1 - e^(-passages / S))`, at least one. An estimate for words
/// too common to count, which weigh little as evidence anyway.
fn spread(passages: i64, sessions: i64) -> f64 {
    let s = sessions.max(1) as f64;
    (s * (1.0 - (-(passages as f64) / s).exp())).clamp(1.0, s)
}

/// One scope's sessions and, for each question term, the sessions that
/// hold it.
pub struct ScopeCounts {
    /// Sessions in the scope's index.
    pub sessions: i64,
    /// Sessions holding each term: counted, or estimated (see `spread`).
    pub holding: Vec<f64>,
    /// Whether each term's `holding` was counted (exact), not estimated.
    pub exact: Vec<bool>,
}

/// Sessions in one scope's index, and the sessions holding each of
/// `terms`. `dfs` holds each term's passage count in that index (0: none
/// holds it, and it is not looked up). Only the terms `count` marks (the
/// ones the hits hold) are counted, rarest first within
/// `COUNT_BUDGET`; the others are estimated (see `spread`).
#[tracing::instrument(level = "debug", name = "session_counts", skip_all, fields(counted))]
pub fn session_counts(
    conn: &Connection,
    terms: &[Term],
    dfs: &[i64],
    count: &[bool],
) -> Result<ScopeCounts> {
    // Subagents' and compactions' files are not sessions of their own.
    let sessions = crate::store::root_sessions(conn)?;
    let mut out = vec![0.0; terms.len()];
    // A term no passage holds is held by no session: that is exact too.
    let mut exact: Vec<bool> = dfs.iter().map(|&df| df == 0).collect();
    if sessions == 0 {
        return Ok(ScopeCounts {
            sessions: 0,
            holding: out,
            exact,
        });
    }
    let fts = Table::Chunks.fts();
    let (join, root) = passage_roots(conn)?;
    let sql = format!(
        "SELECT count(DISTINCT {root})
         FROM (SELECT rowid FROM {fts} WHERE {fts} MATCH ?1) f {join}"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut order: Vec<usize> = (0..terms.len()).filter(|&i| dfs[i] > 0).collect();
    // Counted ones first, rarest first; the budget is theirs.
    order.sort_by_key(|&i| (!count[i], dfs[i]));
    let mut spent = 0i64;
    let mut counted = 0;
    for i in order {
        let df = dfs[i];
        let expr = to_match(std::slice::from_ref(&terms[i]));
        out[i] = match expr.filter(|_| count[i] && spent + df <= COUNT_BUDGET) {
            Some(expr) => {
                spent += df;
                counted += 1;
                exact[i] = true;
                let n: i64 = stmt.query_row([expr], |r| r.get(0))?;
                n as f64
            }
            None => spread(df, sessions),
        }
        .min(sessions as f64);
    }
    tracing::Span::current().record("counted", counted);
    Ok(ScopeCounts {
        sessions,
        holding: out,
        exact,
    })
}

/// At most how many sessions hold a passage with every one of `groups`
/// (each group a term's forms, as indexes into the question's terms),
/// told from the counts alone: no more than hold the group held by the
/// fewest, where a group's count is the sum of its forms' and is known
/// when every form was counted in every scope. `None` when no group's
/// count is known.
pub fn together_bound(groups: &[Vec<usize>], per_scope: &[ScopeCounts]) -> Option<f64> {
    groups
        .iter()
        .filter(|g| {
            g.iter()
                .all(|&i| per_scope.iter().all(|c| c.exact.get(i) == Some(&true)))
        })
        .map(|g| {
            g.iter()
                .map(|&i| per_scope.iter().map(|c| c.holding[i]).sum::<f64>())
                .sum::<f64>()
        })
        .min_by(f64::total_cmp)
}

/// The root session of a session id: the parent's for a subagent's or a
/// compaction's transcript (see `root`).
pub fn root_of(session_id: &str) -> &str {
    session_id
        .split_once("/agent-")
        .map_or(session_id, |(parent, _)| parent)
}

/// The SQL for the session a `column` of session ids belongs to: a
/// subagent's or a compaction's transcript (`<id>/agent-…`) is part of its
/// parent's session, which its prompt and summary repeat.
fn root(column: &str) -> String {
    format!(
        "CASE WHEN instr({column}, '/agent-') > 0 \
         THEN substr({column}, 1, instr({column}, '/agent-') - 1) ELSE {column} END"
    )
}

/// How the passages `f` (a subquery of rowids) are taken to their root
/// sessions: the join, and the expression naming the root. Through the
/// narrow `chunk_roots` (`0015_chunk_roots.sql`) where the index has it,
/// else through `chunks` (an older index, read as it is by a hook).
fn passage_roots(conn: &Connection) -> Result<(&'static str, String)> {
    Ok(
        if crate::store::schema_version(conn)? >= crate::store::CHUNK_ROOTS_SCHEMA {
            ("JOIN chunk_roots r ON r.rowid = f.rowid", "r.root".into())
        } else {
            ("JOIN chunks c ON c.rowid = f.rowid", root("c.session_id"))
        },
    )
}

/// Sessions (at most `cap + 1` are counted) with a passage that holds
/// every word of `expr`, an AND of the rarest words a hit matched (see
/// [`to_match_all`](super::sanitize::to_match_all)). A session whose
/// matched words stand together in many sessions (a prompt template, a
/// greeting) points at none of them, however rare each word is alone.
#[tracing::instrument(level = "debug", name = "sessions_together", skip_all)]
pub fn sessions_together(conn: &Connection, expr: &str, cap: i64) -> Result<i64> {
    let fts = Table::Chunks.fts();
    let (join, root) = passage_roots(conn)?;
    let sql = format!(
        "SELECT count(*) FROM (SELECT DISTINCT {root} FROM
           (SELECT rowid FROM {fts} WHERE {fts} MATCH ?1) f {join} LIMIT ?2)"
    );
    Ok(conn
        .prepare_cached(&sql)?
        .query_row(rusqlite::params![expr, cap + 1], |r| r.get(0))?)
}

/// A word's weight as evidence for a session: see the module doc.
pub fn weight(sessions: f64, holding: f64, kind_weight: f64) -> f64 {
    (((sessions + 1.0) / (holding + 0.5)).ln()).max(0.0) * kind_weight
}

/// The question's terms with their evidence weights over every scope:
/// the sessions holding each, summed over the scopes, against all their
/// sessions.
pub struct Weighed {
    pub sessions: i64,
    pub terms: Vec<Weighted>,
}

pub fn weigh(terms: &[Term], per_scope: &[ScopeCounts]) -> Weighed {
    let sessions: i64 = per_scope.iter().map(|c| c.sessions).sum();
    let terms = terms
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let holding: f64 = per_scope.iter().map(|c| c.holding[i]).sum();
            Weighted {
                term: t.clone(),
                df: holding.round() as i64,
                exact: true,
                weight: weight(sessions as f64, holding, super::plan::kind_weight(t.kind)),
            }
        })
        .collect();
    Weighed { sessions, terms }
}

/// Whether a session hit whose session covers `covered` of the evidence
/// weight, when the best-covering one covers `best`, clears a cover bar of
/// `bar` (0 passes every cover).
pub fn covers(covered: f64, best: f64, bar: f64) -> bool {
    bar <= 0.0 || (covered >= bar && covered >= RELATIVE_COVER * best)
}

/// Whether a session holding `held` of the evidence weights is more than
/// chance: were the words independent, `sessions × e^-held` sessions would
/// hold them all, and that must be at most `chance`
/// (`recall.hook_chance`). At 1, one word that a third of the sessions
/// hold is not evidence and two that one session in ten holds each, in a
/// project of ten sessions, are; at 0.3 (the default), two words that two
/// of thirteen sessions hold each are not (13 × (2.5/14)² = 0.41): a short
/// follow-up prompt's few generic words match some session by chance.
pub fn beyond_chance(held: f64, sessions: i64, chance: f64) -> bool {
    sessions.max(1) as f64 * (-held).exp() <= chance
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chance_is_the_sessions_that_would_hold_the_words_at_random() {
        // One word held by 3 of 10 sessions: 10 x 3.5/11 = 3.2 sessions.
        assert!(!beyond_chance(weight(10.0, 3.0, 1.0), 10, 1.0));
        // Two words, each held by 1 of 10: 10 x (1.5/11)^2 = 0.19.
        assert!(beyond_chance(2.0 * weight(10.0, 1.0, 1.0), 10, 1.0));
        // Two words, each held by 2 of 13: 13 x (2.5/14)^2 = 0.41, chance
        // at 1, not at 0.3.
        let two_of_thirteen = 2.0 * weight(13.0, 2.0, 1.0);
        assert!(beyond_chance(two_of_thirteen, 13, 1.0));
        assert!(!beyond_chance(two_of_thirteen, 13, 0.3));
    }

    #[test]
    fn words_together_are_bounded_by_the_fewest_sessions_holding_one() {
        let scope = |holding: Vec<f64>, exact: Vec<bool>| ScopeCounts {
            sessions: 10,
            holding,
            exact,
        };
        // Term 0 is in 1 session, 1 in 4, 2 in 6 but only estimated.
        let one = [scope(vec![1.0, 4.0, 6.0], vec![true, true, false])];
        assert_eq!(together_bound(&[vec![1], vec![0]], &one), Some(1.0));
        // A group's forms add up; an estimated group bounds nothing.
        assert_eq!(together_bound(&[vec![0, 1], vec![2]], &one), Some(5.0));
        assert_eq!(together_bound(&[vec![2]], &one), None);
        // Over two scopes, a group is known only when counted in both.
        let two = [
            scope(vec![1.0, 0.0, 0.0], vec![true, true, true]),
            scope(vec![0.0, 2.0, 3.0], vec![false, true, true]),
        ];
        assert_eq!(together_bound(&[vec![0], vec![1]], &two), Some(2.0));
    }

    /// The prompt hook's cover bar, which also decides whose words are
    /// counted together: an absolute share and a share of the best.
    #[test]
    fn a_session_covers_enough_and_near_the_best() {
        assert!(covers(0.4, 0.5, 0.3));
        // Below the bar, or below 0.75 of the best (0.6 x 0.75 = 0.45).
        assert!(!covers(0.29, 0.29, 0.3));
        assert!(!covers(0.4, 0.6, 0.3));
        assert!(covers(0.45, 0.6, 0.3));
        // A bar of 0 passes every cover, the relative one too.
        assert!(covers(0.0, 0.9, 0.0));
    }

    #[test]
    fn a_word_too_common_to_count_is_estimated_as_spread_over_the_sessions() {
        assert_eq!(spread(1, 10), 1.0);
        assert!((spread(10, 10) - 6.32).abs() < 0.01);
        assert_eq!(spread(1_000, 10), 10.0);
    }

    #[test]
    fn a_word_every_session_holds_weighs_nearly_nothing() {
        let every = weight(9.0, 9.0, 1.0);
        let one = weight(9.0, 1.0, 1.0);
        let none = weight(9.0, 0.0, 1.0);
        assert!(every < 0.06, "{every}");
        assert!(one > 1.8 && one < none, "{one} {none}");
    }

    #[test]
    fn sessions_are_counted_with_their_subagents() -> Result<()> {
        let mut c = Connection::open_in_memory()?;
        crate::store::migrate_for_tests(&mut c);
        c.execute_batch("PRAGMA foreign_keys=OFF;")?;
        let mut rowid = 0;
        let sources = [
            (1, "s1", ["bead template", "bead alpha"]),
            (2, "s2", ["bead template", "beta"]),
            (3, "s2/agent-acompact-1", ["bead template", "alpha summary"]),
        ];
        for (source, session, texts) in sources {
            c.execute(
                "INSERT INTO sessions(source_id, session_id, launcher, parent_id) VALUES(?1, ?2, 'x', ?3)",
                rusqlite::params![source, session, session.split_once("/agent-").map(|(p, _)| p)],
            )?;
            for text in texts {
                rowid += 1;
                c.execute(
                    "INSERT INTO chunks(rowid, source_id, session_id, seq, msg_first, msg_last, message_ids, spans, roles, speakers, launcher)
                     VALUES(?1, ?2, ?3, ?1, 0, 0, '[]', '[]', '[]', '[]', 'x')",
                    rusqlite::params![rowid, source, session],
                )?;
                c.execute(
                    "INSERT INTO chunks_fts(rowid, title, body, aux) VALUES(?1, '', ?2, '')",
                    rusqlite::params![rowid, text],
                )?;
                crate::index::note_root(&c, rowid, session)?;
            }
        }
        let terms = crate::recall::sanitize::extract_terms("bead alpha gamma");
        // A compaction's transcript is its parent's session: "bead" is in
        // both sessions, "alpha" in both too (s2 through its compaction).
        // So it is through `chunk_roots`, and through `chunks` in an index
        // older than it, read as it is.
        for version in [
            crate::store::SCHEMA_VERSION,
            crate::store::CHUNK_ROOTS_SCHEMA - 1,
        ] {
            c.pragma_update(None, "user_version", version)?;
            let counts = session_counts(&c, &terms, &[5, 2, 0], &[true; 3])?;
            assert_eq!(counts.sessions, 2);
            assert_eq!(counts.holding, [2.0, 2.0, 0.0], "schema {version}");
            assert_eq!(counts.exact, [true; 3]);
            // Together in one passage: only s1's; "bead template" in both
            // sessions (s2's twice), counted up to the cap and one more.
            assert_eq!(sessions_together(&c, "bead AND alpha", 5)?, 1);
            assert_eq!(sessions_together(&c, "bead AND template", 5)?, 2);
            assert_eq!(sessions_together(&c, "bead AND template", 0)?, 1);
        }
        // Not counted: estimated, and said to be.
        let counts = session_counts(&c, &terms, &[5, 2, 0], &[false, true, false])?;
        assert_eq!(counts.exact, [false, true, true]);
        assert_eq!(root_of("s2/agent-acompact-1"), "s2");
        Ok(())
    }
}
