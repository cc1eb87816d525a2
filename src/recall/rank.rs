//! Turning per-table candidate lists into one ranking.
//!
//! bm25 values from different tables (and different indexes) are not
//! comparable, so each list is normalised first: its bm25 and passage
//! scores are divided by the list's best, and blended. Lists are then fused
//! by these calibrated scores (not by rank, as reciprocal-rank fusion would:
//! RRF throws away how far ahead the best hit of a list is), scaled by the
//! kind weight and the boosts: pinned, importance, recency and salience.
//! Finally: adjacent windows of one session merge, near-duplicates go, and
//! each session contributes at most `per_session` hits.

use std::collections::{HashMap, HashSet};

use crate::dedupe::WordSet;

use super::candidates::Candidate;
use super::hit::HitKind;
use super::tuning::Tuning;

/// Pivoted length normalisation of the passage scores of one list: each is
/// divided by `(1 - slope) + slope × words / mean words`. The passage score
/// adds up matches without regard to length, so a long text that repeats
/// the question's words (an assistant's reply, a long abstract) would
/// outrank the short statement that answers it; bm25's own `b` does the
/// same for the bm25 score. 0 leaves the scores as they are.
///
/// The passages of agents' work sessions (those with tool output) are
/// normalised among themselves, with `work_slope` and their own mean, and
/// every other candidate with `slope` and the mean of the rest. A window
/// of code and tool output is not a turn of a chat: the grep line that
/// names a function is no likelier to be the session's work than the
/// reasoning around it, while in a chat the short message is most often
/// the statement itself. Their own mean keeps a project's chats ranked
/// as they would be without the work sessions beside them.
pub fn normalise_length(list: &mut [Candidate], slope: f64, work_slope: f64) {
    for (work, slope) in [(false, slope), (true, work_slope)] {
        pivot(list.iter_mut().filter(|c| c.work == work).collect(), slope);
    }
}

fn pivot(list: Vec<&mut Candidate>, slope: f64) {
    let slope = slope.clamp(0.0, 1.0);
    if slope == 0.0 || list.is_empty() {
        return;
    }
    let mean = list.iter().map(|c| c.words as f64).sum::<f64>() / list.len() as f64;
    if mean <= 0.0 {
        return;
    }
    for c in list {
        // A text of no words has no passage score to normalise; the floor
        // keeps the divisor away from 0 when slope is 1.
        let pivot = (1.0 - slope) + slope * (c.words.max(1) as f64 / mean);
        c.passage /= pivot;
        if let Some(e) = c.hit.explain.as_mut() {
            e.length_pivot = pivot;
        }
    }
}

/// Normalise one list's scores into `[0, 1]` and store them in `hit.score`:
/// `bm25_share` of the bm25 score divided by the list's best, plus the rest
/// of the passage score divided by the list's best.
pub fn normalise(list: &mut [Candidate], bm25_share: f64) {
    let bm25_share = bm25_share.clamp(0.0, 1.0);
    let max_b = list.iter().map(|c| c.bm25).fold(0.0, f64::max);
    let max_p = list.iter().map(|c| c.passage).fold(0.0, f64::max);
    for c in list {
        let b = if max_b > 0.0 { c.bm25 / max_b } else { 0.0 };
        let p = if max_p > 0.0 { c.passage / max_p } else { 0.0 };
        c.hit.score = bm25_share * b + (1.0 - bm25_share) * p;
        if let Some(e) = c.hit.explain.as_mut() {
            e.bm25 = c.bm25;
            e.bm25_norm = b;
            if e.length_pivot <= 0.0 {
                e.length_pivot = 1.0;
            }
            e.passage = c.passage * e.length_pivot;
            e.passage_norm = p;
            e.bm25_share = bm25_share;
            e.base = c.hit.score;
            e.coverage = 1.0;
        }
    }
}

/// Calibrate lists against each other. [`normalise`] gives every list's
/// best hit 1, however little of the question it matches: 100,000 records
/// that share only a common word with the question would rank level with
/// the session that answers it. Each list comes with its coverage (the
/// passage score of its best hit under weights pooled over every table,
/// see `plan::pooled`), and its scores are scaled by
/// `(coverage / best coverage) ^ power`: the list that matches the most of
/// the question keeps its scores, and the order within a list never
/// changes.
pub fn calibrate(lists: &mut [(Vec<Candidate>, f64)], power: f64) {
    let best = lists.iter().map(|(_, c)| *c).fold(0.0, f64::max);
    if power <= 0.0 || best <= 0.0 {
        return;
    }
    for (list, coverage) in lists.iter_mut() {
        let f = (*coverage / best).powf(power);
        for c in list {
            c.hit.score *= f;
            if let Some(e) = c.hit.explain.as_mut() {
                e.coverage = f;
            }
        }
    }
}

/// Multiply in the kind weight and the boosts. `now` is unix seconds;
/// recency is read from `as_of` (see [`Request::as_of`]), salience from
/// `now`, since the hits it counts happened in real time.
///
/// [`Request::as_of`]: super::request::Request::as_of
pub fn boost(c: &mut Candidate, t: &Tuning, now: i64, as_of: i64) {
    let kind = match c.hit.kind {
        HitKind::Record => t.weight_record,
        HitKind::Ticket => t.weight_ticket,
        HitKind::Session => t.weight_session,
    };
    let pinned = if c.hit.pinned { t.pinned_boost } else { 1.0 };
    let importance = (1.0 - t.importance_spread / 2.0)
        + t.importance_spread * f64::from(c.hit.importance.min(100)) / 100.0;
    let recency = c.hit.updated.map_or(1.0, |u| {
        (1.0 - t.recency_share) + t.recency_share * decay(as_of - u, t.half_life_days)
    });
    let salience = 1.0
        + t.salience_weight
            * (1.0 + c.times_hit as f64).ln()
            * c.last_hit
                .map_or(0.0, |l| decay(now - l, t.salience_half_life_days));
    c.hit.score *= kind * pinned * importance * recency * salience;
    if let Some(e) = c.hit.explain.as_mut() {
        (e.kind, e.pinned, e.importance, e.recency, e.salience) =
            (kind, pinned, importance, recency, salience);
    }
}

/// Answer-type matching: multiply each candidate that has the answer's
/// type (`matches`: its text mentions a time, or the user wrote it) by
/// `1 + strength × ln(1 / share)`, where `share` is the part of the
/// candidates that have it. Like a term's idf, the lift is large when few
/// candidates have the type and 0 when all do: then it tells nothing.
pub fn answer_type(
    list: &mut [Candidate],
    name: &str,
    matches: impl Fn(&Candidate) -> bool,
    strength: f64,
) {
    if strength <= 0.0 || list.is_empty() {
        return;
    }
    let typed: Vec<bool> = list.iter().map(&matches).collect();
    let n = typed.iter().filter(|&&t| t).count();
    if n == 0 {
        return;
    }
    let factor = 1.0 + strength * (list.len() as f64 / n as f64).ln();
    for (c, t) in list.iter_mut().zip(typed) {
        if t {
            c.hit.score *= factor;
            if let Some(e) = c.hit.explain.as_mut() {
                e.lifts.push(super::hit::Lift {
                    name: name.to_string(),
                    factor,
                });
            }
        }
    }
}

/// Session evidence: each session hit gains `share` times the mean of the
/// two best *other* hits of its session (a missing one counts as 0). A
/// question whose answer spans several messages of a session lifts all of
/// them, while the best message of a session still ranks first within it.
pub fn session_evidence(list: &mut [Candidate], share: f64) {
    if share <= 0.0 {
        return;
    }
    let mut by_session: HashMap<SessionKey, Vec<f64>> = HashMap::new();
    for c in list.iter() {
        if let Some(s) = session_key(c) {
            by_session.entry(s).or_default().push(c.hit.score);
        }
    }
    let mut top: HashMap<(usize, crate::store::Scope, String), [f64; 3]> = HashMap::new();
    for (k, mut scores) in by_session {
        scores.sort_by(|a, b| b.total_cmp(a));
        let at = |i: usize| scores.get(i).copied().unwrap_or(0.0);
        top.insert((k.0, k.1, k.2.to_string()), [at(0), at(1), at(2)]);
    }
    for c in list.iter_mut() {
        let Some((t, scope, s)) = session_key(c) else {
            continue;
        };
        let Some(best) = top.get(&(t, scope, s.to_string())) else {
            continue;
        };
        // The two best scores other than this hit's own.
        let mut others = best.to_vec();
        match others.iter().position(|x| *x == c.hit.score) {
            Some(own) => drop(others.remove(own)),
            None => others.truncate(2),
        }
        let added = share * (others[0] + others[1]) / 2.0;
        c.hit.score += added;
        if let Some(e) = c.hit.explain.as_mut() {
            e.session_evidence = added;
        }
    }
}

/// Session coverage, for agents' work sessions (those with tool output):
/// how much of the question a session's candidates hold between them (each
/// query word once, at its weight; see
/// [`Scorer::covered`](super::passage::Scorer::covered)). Each hit of such
/// a session is multiplied by `(coverage / best such coverage) ^ power`.
/// An agent's session works on one task from start to end, so the session
/// that worked on an issue names its whole title somewhere, while another
/// may repeat its rarest word in one short tool output. A chat's session
/// is a stretch of talk on many things, where the message that answers
/// often holds few of the question's words: chat sessions are left alone.
pub fn session_coverage(list: &mut [Candidate], cover: &super::passage::Scorer, power: f64) {
    if power <= 0.0 || cover.words() == 0 {
        return;
    }
    if !list.iter().any(|c| c.work) {
        return;
    }
    let mut seen: HashMap<SessionKey, Vec<bool>> = HashMap::new();
    for c in list.iter() {
        if let Some(k) = session_key(c).filter(|_| c.work) {
            let flags = seen.entry(k).or_insert_with(|| vec![false; cover.words()]);
            // A session that holds every word already needs no more reading.
            if !flags.iter().all(|&f| f) {
                cover.mark_seen(&c.hit.text, flags);
            }
        }
    }
    let shares: HashMap<_, f64> = seen
        .into_iter()
        .map(|(k, flags)| (k, cover.share(&flags)))
        .collect();
    let best = shares.values().copied().fold(0.0, f64::max);
    if best <= 0.0 {
        return;
    }
    // Each candidate's share, looked up while the list is only borrowed.
    // Only work passages: a chat file may carry a work session's id
    // (session ids are not unique across files).
    let each: Vec<Option<f64>> = list
        .iter()
        .map(|c| {
            session_key(c)
                .filter(|_| c.work)
                .and_then(|k| shares.get(&k).copied())
        })
        .collect();
    for (c, share) in list.iter_mut().zip(each) {
        let Some(share) = share else {
            continue;
        };
        let f = (share / best).powf(power);
        c.hit.score *= f;
        if let Some(e) = c.hit.explain.as_mut() {
            // Scales the evidence already added too, so the breakdown
            // still multiplies out: score = product of factors + evidence.
            e.session_evidence *= f;
            e.lifts.push(super::hit::Lift {
                name: "session_coverage".into(),
                factor: f,
            });
        }
    }
}

/// A session hit's session: its index, scope and id.
type SessionKey<'a> = (usize, crate::store::Scope, &'a str);

fn session_key(c: &Candidate) -> Option<SessionKey<'_>> {
    if c.hit.kind != HitKind::Session {
        return None;
    }
    let s = c.hit.source.session_id.as_deref()?;
    Some((c.target, c.hit.scope, s))
}

/// `0.5 ^ (age / half_life)`; future timestamps count as new.
fn decay(age_secs: i64, half_life_days: f64) -> f64 {
    let days = age_secs.max(0) as f64 / 86_400.0;
    0.5f64.powf(days / half_life_days.max(1e-3))
}

/// Merge session windows that touch (adjacent or overlapping message
/// ranges of the same session) into one hit. `list` is sorted best first.
///
/// Joining two texts adds a separator, so a merge can cost a token more
/// than the two hits did apart; with a token budget, a merge that would
/// pass it is skipped and the two hits stay apart (their texts already fit).
pub fn merge_adjacent(list: Vec<Candidate>, max_tokens: Option<usize>) -> Vec<Candidate> {
    let cost = |c: &Candidate| crate::text::estimate_tokens(&c.hit.text);
    let mut total: usize = list.iter().map(cost).sum();
    let mut out: Vec<Candidate> = Vec::with_capacity(list.len());
    for c in list {
        let Some(o) = out.iter_mut().find(|o| touches(o, &c)) else {
            out.push(c);
            continue;
        };
        let mut merged = o.clone();
        let apart = cost(o) + cost(&c);
        absorb(&mut merged, c.clone());
        let after = total - apart + cost(&merged);
        if max_tokens.is_some_and(|m| after > m) {
            out.push(c);
        } else {
            *o = merged;
            total = after;
        }
    }
    out
}

fn touches(a: &Candidate, b: &Candidate) -> bool {
    let same = a.hit.kind == HitKind::Session
        && b.hit.kind == HitKind::Session
        && a.hit.scope == b.hit.scope
        && a.hit.source.session_id == b.hit.source.session_id;
    match (same, a.range, b.range) {
        (true, Some((a0, a1)), Some((b0, b1))) => b0 <= a1 + 1 && a0 <= b1 + 1,
        _ => false,
    }
}

/// Fold `b` into `a` (a scores at least as high), keeping message order.
fn absorb(a: &mut Candidate, b: Candidate) {
    let (a0, a1) = a.range.unwrap_or((0, 0));
    let (b0, b1) = b.range.unwrap_or((0, 0));
    let b_first = b0 < a0;
    let mut ids = if b_first {
        b.hit.source.message_ids.clone()
    } else {
        a.hit.source.message_ids.clone()
    };
    let rest = if b_first {
        &a.hit.source.message_ids
    } else {
        &b.hit.source.message_ids
    };
    for id in rest {
        if !ids.contains(id) {
            ids.push(id.clone());
        }
    }
    let (x, y) = if b_first {
        (&b.hit.text, &a.hit.text)
    } else {
        (&a.hit.text, &b.hit.text)
    };
    a.hit.text = join_overlapping(x, y);
    a.hit.source.message_ids = ids;
    // RFC 3339 UTC strings of one format order as the times do.
    let (sa, sb) = (&mut a.hit.source, b.hit.source);
    sa.first_timestamp = either(sa.first_timestamp.take(), sb.first_timestamp, String::min);
    sa.last_timestamp = either(sa.last_timestamp.take(), sb.last_timestamp, String::max);
    a.range = Some((a0.min(b0), a1.max(b1)));
    a.hit.source.message_range = a.range.map(|(s, e)| [s, e]);
}

/// `pick` of the two when both are set, else whichever is.
fn either(
    x: Option<String>,
    y: Option<String>,
    pick: fn(String, String) -> String,
) -> Option<String> {
    match (x, y) {
        (Some(x), Some(y)) => Some(pick(x, y)),
        (x, y) => x.or(y),
    }
}

/// `x` then `y`, without repeating message blocks both contain.
fn join_overlapping(x: &str, y: &str) -> String {
    let seen: HashSet<&str> = x.split("\n\n").collect();
    let tail: Vec<&str> = y.split("\n\n").filter(|b| !seen.contains(b)).collect();
    if tail.is_empty() {
        return x.to_string();
    }
    format!("{x}\n\n{}", tail.join("\n\n"))
}

/// Adds context to a hit being kept: given the hit and whether a message
/// index is already shown by a kept hit of its session, the expanded hit,
/// or `None` for nothing to add (see `recall::context`).
pub type Expand<'a> = dyn FnMut(&Candidate, &dyn Fn(i64) -> bool) -> Option<Candidate> + 'a;

/// What [`select`] keeps.
#[derive(Debug, Clone, Copy)]
pub struct Caps {
    /// Most hits from one session.
    pub per_session: usize,
    /// Near-duplicate threshold: a hit whose word set has a Jaccard
    /// similarity above this with a kept hit is dropped.
    pub max_jaccard: f64,
    /// Most hits.
    pub limit: usize,
    /// Most estimated tokens of hit text, if any.
    pub max_tokens: Option<usize>,
}

/// Walk `list` (sorted best first) and keep hits until `limit`: skipping
/// near-duplicates of a kept hit, hits past the per-session cap, and hits
/// whose text would pass the token budget (a smaller one later may fit).
/// Stops at the limit, so near-duplicate checks cost at most
/// `limit × candidates` comparisons.
#[tracing::instrument(level = "debug", name = "rank_select", skip_all, fields(candidates = list.len()))]
pub fn select(list: Vec<Candidate>, caps: Caps, expand: &mut Expand) -> Vec<Candidate> {
    let mut kept: Vec<(Candidate, WordSet)> = Vec::new();
    let mut per: HashMap<(crate::store::Scope, String), usize> = HashMap::new();
    let mut tokens = 0;
    for c in list {
        if kept.len() >= caps.limit {
            break;
        }
        let fits = |c: &Candidate| {
            let cost = crate::text::estimate_tokens(&c.hit.text);
            caps.max_tokens
                .is_none_or(|m| tokens + cost <= m)
                .then_some(cost)
        };
        if fits(&c).is_none() {
            continue;
        }
        // A subagent's or a compaction's transcript is part of its parent
        // session: they share its cap (a compaction repeats its summary).
        let session = c
            .hit
            .source
            .session_id
            .as_deref()
            .map(|s| (c.hit.scope, super::evidence::root_of(s).to_string()));
        if session
            .as_ref()
            .is_some_and(|k| per.get(k).copied().unwrap_or(0) >= caps.per_session)
        {
            continue;
        }
        // A message a kept hit already shows (another passage of one long
        // message, or a neighbour added as context) is not shown again.
        let repeats = |k: &Candidate| {
            k.hit.scope == c.hit.scope
                && k.hit.source.session_id == c.hit.source.session_id
                && matches!((k.range, c.range), (Some((a, b)), Some((x, y))) if a <= x && y <= b)
        };
        if c.hit.kind == HitKind::Session && kept.iter().any(|(k, _)| repeats(k)) {
            continue;
        }
        let words = WordSet::new(&c.hit.text);
        if kept
            .iter()
            .any(|(_, w)| w.jaccard(&words) > caps.max_jaccard)
        {
            continue;
        }
        // Context is added only when the expanded hit still fits, and never
        // repeats a message another kept hit of the session shows.
        let shown = |msg: i64| {
            kept.iter().any(|(k, _)| {
                k.hit.scope == c.hit.scope
                    && k.hit.source.session_id == c.hit.source.session_id
                    && k.range.is_some_and(|(a, b)| a <= msg && msg <= b)
            })
        };
        let c = match expand(&c, &shown) {
            Some(e) if fits(&e).is_some() => e,
            _ => c,
        };
        let cost = fits(&c).unwrap_or(0);
        if let Some(k) = session {
            *per.entry(k).or_default() += 1;
        }
        tokens += cost;
        kept.push((c, words));
    }
    kept.into_iter().map(|(c, _)| c).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recall::hit::{Hit, HitSource};
    use crate::store::{Scope, Table};

    fn message(session: &str, msg: i64, text: &str) -> Candidate {
        let hit = Hit {
            rank: 0,
            score: 1.0,
            kind: HitKind::Session,
            scope: Scope::Project,
            id: format!("{session}#{msg}"),
            category: None,
            title: session.into(),
            snippet: String::new(),
            text: text.into(),
            source: HitSource {
                session_id: Some(session.into()),
                message_ids: vec![format!("m{msg}")],
                message_range: Some([msg, msg]),
                ..HitSource::default()
            },
            pinned: false,
            importance: 50,
            updated: None,
            explain: None,
            stale_by: None,
            cosine: None,
        };
        Candidate {
            rowid: msg,
            range: Some((msg, msg)),
            ..Candidate::of(hit, Table::Chunks)
        }
    }

    /// Issue 39 item 3: a compaction's transcript (`<id>/agent-acompact-…`)
    /// is part of its parent session, and shares its per-session cap.
    #[test]
    fn a_compaction_transcript_shares_its_parents_cap() {
        let list = vec![
            message("s1", 4, "the parent's summary of the deploy work"),
            message(
                "s1/agent-acompact-7",
                1,
                "a compaction: deploy work summarised",
            ),
            message("s2", 2, "another session on deploys"),
        ];
        let caps = Caps {
            per_session: 1,
            max_jaccard: 1.0,
            limit: 10,
            max_tokens: None,
        };
        let out = select(list, caps, &mut |_, _| None);
        let ids: Vec<&str> = out.iter().map(|c| c.hit.id.as_str()).collect();
        assert_eq!(ids, ["s1#4", "s2#2"]);
    }

    #[test]
    fn adjacent_messages_of_a_session_merge_in_message_order() {
        let list = vec![
            message("s", 4, "four"),
            message("s", 3, "three"),
            message("t", 5, "five"),
        ];
        let out = merge_adjacent(list, None);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].hit.text, "three\n\nfour");
        assert_eq!(out[0].hit.source.message_ids, ["m3", "m4"]);
        assert_eq!(out[0].range, Some((3, 4)));
        assert_eq!(out[1].hit.text, "five");
    }

    /// The session that names every word of the question across its
    /// messages outranks one whose single short message holds only the
    /// rarest word, even when that message scored higher alone.
    #[test]
    fn session_coverage_lifts_the_session_that_holds_the_whole_question() {
        use crate::recall::plan::Weighted;
        use crate::recall::sanitize::{Term, TermKind};
        let terms: Vec<Weighted> = [("parse_duration", 3.0), ("negative", 2.0)]
            .iter()
            .map(|(t, w)| Weighted {
                term: Term {
                    text: t.to_string(),
                    kind: TermKind::Word,
                },
                df: 1,
                exact: true,
                weight: *w,
            })
            .collect();
        let cover = super::super::passage::Scorer::for_coverage(&terms);
        let mut list = vec![
            message("other", 1, "def parse_duration(value):"),
            message("gold", 2, "parse_duration fails here"),
            message("gold", 3, "a negative value is the case"),
            message("neither", 4, "nothing to see"),
            message("chat", 5, "parse_duration"),
            // Regression (review): a chat file that carries a work
            // session's id (ids are not unique across files).
            message("neither", 6, "parse_duration in a chat"),
        ];
        // Every session but the chats has tool output somewhere.
        for c in &mut list[..4] {
            c.work = true;
        }
        list[4].hit.score = 0.3;
        list[5].hit.score = 0.2;
        list[0].hit.score = 1.0;
        list[1].hit.score = 0.8;
        list[2].hit.score = 0.5;
        list[3].hit.score = 0.4;
        session_coverage(&mut list, &cover, 1.0);
        let score = |i: usize| list[i].hit.score;
        assert!(
            (score(1) - 0.8).abs() < 1e-9,
            "the best session keeps its scores"
        );
        assert!(
            (score(0) - 0.6).abs() < 1e-9,
            "3 of 5 of the weight: {}",
            score(0)
        );
        assert!(score(1) > score(0));
        assert_eq!(score(3), 0.0, "a session holding no word of the question");
        assert_eq!(score(4), 0.3, "a chat's session is left alone");
        assert_eq!(score(5), 0.2, "so is a chat with a work session's id");
        let before: Vec<f64> = list.iter().map(|c| c.hit.score).collect();
        session_coverage(&mut list, &cover, 0.0);
        assert_eq!(
            before,
            list.iter().map(|c| c.hit.score).collect::<Vec<_>>(),
            "0 is off"
        );
    }

    /// Regression (CI, proptest case `limit 8, budget 557`): the separator a
    /// merge adds pushed hit texts one token past the budget `select` kept.
    #[test]
    fn r_merging_never_pushes_hit_texts_past_the_token_budget() {
        // 8 + 8 characters are 2 + 2 tokens apart, 18 (with "\n\n") = 5 merged.
        let list = || vec![message("s", 1, "aaaaaaaa"), message("s", 2, "bbbbbbbb")];
        let apart = merge_adjacent(list(), Some(4));
        assert_eq!(apart.len(), 2, "a merge past the budget is skipped");
        let total: usize = apart
            .iter()
            .map(|c| crate::text::estimate_tokens(&c.hit.text))
            .sum();
        assert!(total <= 4);
        assert_eq!(merge_adjacent(list(), Some(5)).len(), 1);
        assert_eq!(merge_adjacent(list(), None).len(), 1);
    }

    /// The list that covers the most of the question keeps its scores; the
    /// others shrink by their coverage ratio, and order within a list holds.
    #[test]
    fn calibrate_scales_lists_by_their_share_of_the_best_coverage() {
        let scored = |s: f64| {
            let mut c = message("s", 1, "x");
            c.hit.score = s;
            c
        };
        let mut lists = vec![
            (vec![scored(1.0), scored(0.5)], 0.25),
            (vec![scored(1.0), scored(0.8)], 1.0),
        ];
        calibrate(&mut lists, 0.5);
        let scores = |l: &[Candidate]| l.iter().map(|c| c.hit.score).collect::<Vec<_>>();
        assert_eq!(scores(&lists[0].0), [0.5, 0.25]);
        assert_eq!(scores(&lists[1].0), [1.0, 0.8]);
        // Power 0 (and lists that match nothing) change nothing.
        let mut off = vec![(vec![scored(1.0)], 0.1), (vec![scored(1.0)], 1.0)];
        calibrate(&mut off, 0.0);
        assert_eq!(off[0].0[0].hit.score, 1.0);
        let mut none = vec![(vec![scored(1.0)], 0.0)];
        calibrate(&mut none, 0.5);
        assert_eq!(none[0].0[0].hit.score, 1.0);
    }

    /// A short statement that matches as much of the question as a long
    /// reply outranks it once lengths count; slope 0 leaves the scores.
    #[test]
    fn a_short_text_with_the_same_matches_outranks_a_long_one() {
        let sized = |words: usize| {
            let mut c = message("s", 1, "x");
            c.passage = 2.0;
            c.words = words;
            c
        };
        let passages = |l: &[Candidate]| l.iter().map(|c| c.passage).collect::<Vec<_>>();
        // Mean 20 words: the 10-word text gets 2 / 0.5, the 30-word one
        // 2 / 1.5.
        let mut list = vec![sized(30), sized(10)];
        normalise_length(&mut list, 1.0, 0.0);
        assert_eq!(passages(&list), [2.0 / 1.5, 4.0]);
        // Halfway: 2 / (0.5 + 0.5 × 1.5) and 2 / (0.5 + 0.5 × 0.5).
        let mut half = vec![sized(30), sized(10)];
        normalise_length(&mut half, 0.5, 0.0);
        assert_eq!(passages(&half), [2.0 / 1.25, 2.0 / 0.75]);
        let mut off = vec![sized(30), sized(10)];
        normalise_length(&mut off, 0.0, 1.0);
        assert_eq!(passages(&off), [2.0, 2.0]);
        // A text of no words cannot divide by zero.
        let mut empty = vec![sized(0), sized(0)];
        normalise_length(&mut empty, 1.0, 1.0);
        assert_eq!(passages(&empty), [2.0, 2.0]);
        let mut one_empty = vec![sized(0), sized(20)];
        normalise_length(&mut one_empty, 1.0, 1.0);
        assert!(passages(&one_empty).iter().all(|p| p.is_finite()));
    }

    /// The passages of a work session (one with tool output) take the work
    /// slope and their own mean; a chat's passages in the same list are
    /// normalised as they would be alone.
    #[test]
    fn work_sessions_are_normalised_apart_with_their_own_slope() {
        let sized = |session: &str, msg: i64, words: usize| {
            let mut c = message(session, msg, "x");
            c.passage = 2.0;
            c.words = words;
            c
        };
        let passages = |l: &[Candidate]| l.iter().map(|c| c.passage).collect::<Vec<_>>();
        let mut list = vec![
            sized("chat", 1, 30),
            sized("chat", 2, 10),
            sized("work", 3, 300),
            sized("work", 4, 100),
        ];
        for c in &mut list[2..] {
            c.work = true;
        }
        normalise_length(&mut list, 1.0, 0.5);
        // The chat's mean is 20 words, as without the work session; the
        // work session's is 200, at slope 0.5.
        assert_eq!(passages(&list), [2.0 / 1.5, 4.0, 2.0 / 1.25, 2.0 / 0.75]);
        // Work slope 0 leaves the work session alone.
        let mut off = vec![sized("chat", 1, 30), sized("work", 2, 100)];
        off[1].work = true;
        normalise_length(&mut off, 1.0, 0.0);
        assert_eq!(passages(&off), [2.0, 2.0]);
    }

    #[test]
    fn answer_type_lifts_the_rare_typed_candidates_like_an_idf() {
        let timed = |c: &Candidate| c.hit.text.contains("yesterday");
        let scores = |l: &[Candidate]| l.iter().map(|c| c.hit.score).collect::<Vec<_>>();
        // One of four has the type: it gains 1 + 0.5 × ln 4.
        let mut list = vec![
            message("s", 1, "we met yesterday"),
            message("s", 2, "a"),
            message("s", 3, "b"),
            message("s", 4, "c"),
        ];
        answer_type(&mut list, "time", timed, 0.5);
        assert_eq!(scores(&list), [1.0 + 0.5 * 4f64.ln(), 1.0, 1.0, 1.0]);
        // When every candidate has it, it tells nothing: no change.
        let mut all = vec![message("s", 1, "yesterday"), message("s", 2, "yesterday")];
        answer_type(&mut all, "time", timed, 0.5);
        assert_eq!(scores(&all), [1.0, 1.0]);
        // None has it, or strength 0: no change.
        let mut none = vec![message("s", 1, "a")];
        answer_type(&mut none, "time", timed, 0.5);
        let mut off = vec![message("s", 1, "yesterday"), message("s", 2, "a")];
        answer_type(&mut off, "time", timed, 0.0);
        assert_eq!((scores(&none), scores(&off)), (vec![1.0], vec![1.0, 1.0]));
    }

    /// A request bounded by `until` (a ticket filed then, asking for
    /// earlier ones) reads recency from that moment: what came a week
    /// before it is recent, though years before today.
    #[test]
    fn recency_is_read_from_the_time_asked_as_of() {
        const DAY: i64 = 86_400;
        let now = 3_000 * DAY;
        let as_of = 1_000 * DAY;
        let at = |days_before: i64| {
            let mut c = message("s", days_before, "x");
            c.hit.updated = Some(as_of - days_before * DAY);
            c
        };
        let t = Tuning::default();
        let (mut near, mut far) = (at(7), at(700));
        boost(&mut near, &t, now, now);
        boost(&mut far, &t, now, now);
        let today = near.hit.score / far.hit.score;
        assert!(
            (today - 1.0).abs() < 1e-3,
            "from today both are old: {today}"
        );
        let (mut near, mut far) = (at(7), at(700));
        boost(&mut near, &t, now, as_of);
        boost(&mut far, &t, now, as_of);
        assert!(near.hit.score > far.hit.score * 1.1);
    }
}
