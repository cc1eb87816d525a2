//! Query planning: weight the sanitizer's terms by how discriminative they
//! are in one table, and choose which ones FTS5 searches within a cost
//! budget.
//!
//! Statistics come from the writer-kept `term_df` table (one probe per
//! term; see `store::terms`). On an index whose statistics are missing or
//! stale they are counted with FTS5 instead, up to caps (see `doc_freqs`).
//!
//! Cost model ([`search_cost`]): an OR query merges the doclists of its
//! terms and bm25 visits every term for every row matched, so its cost is
//! about `terms × (Σ df + a per-term look-up cost)`. Terms are taken rarest
//! (highest weight, a stem at its word's) first while that cost stays
//! within
//! [`Tuning::plan_budget`](super::tuning::Tuning); the first term is always
//! taken. A rare word is therefore only dropped when rarer words
//! already fill the budget, and a very common one never blows it. Every
//! term found in the table, searched or not, rescores the candidates
//! (`Plan::scoring`), so dropping a common word from the search does not
//! drop it from the ranking. On a small or mid-sized index every content
//! word fits.

use std::collections::HashMap;

use rusqlite::Connection;

use super::sanitize::{to_match, Term, TermKind};
use crate::error::Result;
use crate::text::words;

pub use crate::store::Table;

/// A term with its statistics in one table.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Weighted {
    #[serde(flatten)]
    pub term: Term,
    /// Documents containing the term (for phrases: of its rarest word);
    /// a lower bound when `exact` is false.
    pub df: i64,
    /// Whether `df` is an exact count rather than the cap it reached.
    pub exact: bool,
    /// Weight used for ranking: idf times the kind boost.
    pub weight: f64,
}

/// A planned query for one table.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// Terms FTS5 searches for, highest weight first.
    pub terms: Vec<Weighted>,
    /// Every term the table contains (a superset of `terms`), for
    /// rescoring candidates.
    pub scoring: Vec<Weighted>,
    /// Rows in the table (exact with current statistics, else the largest
    /// rowid).
    pub docs: i64,
    /// Estimated doclist entries the search walks: the sum of the searched
    /// terms' document frequencies.
    pub cost: i64,
    /// Searched terms the question stresses (its title line): they appear
    /// twice in the expression, so bm25 counts them twice, as BM25 counts a
    /// word the query repeats.
    pub stressed: Vec<Term>,
}

impl Plan {
    /// The FTS5 expression, or `None` when no term can match.
    pub fn to_match(&self) -> Option<String> {
        let terms: Vec<Term> = self
            .terms
            .iter()
            .map(|w| w.term.clone())
            .chain(self.stressed.iter().cloned())
            .collect();
        to_match(&terms)
    }
}

/// The weight of a term's kind (see [`IDENTIFIER_WEIGHT`](super::tuning::IDENTIFIER_WEIGHT)).
pub fn kind_weight(kind: TermKind) -> f64 {
    use super::tuning::{IDENTIFIER_WEIGHT, PHRASE_WEIGHT, STEM_WEIGHT, WORD_WEIGHT};
    match kind {
        TermKind::Identifier => IDENTIFIER_WEIGHT,
        TermKind::Phrase => PHRASE_WEIGHT,
        TermKind::Word => WORD_WEIGHT,
        TermKind::Stem => STEM_WEIGHT,
    }
}

/// The question's terms weighted over several tables at once, as if they
/// were one: a term's document frequency is summed over the plans, and so
/// are the documents. Terms no table contains are left out. Weights from
/// one table are not comparable with another's (a word rare in the records
/// may fill the sessions); these are, so they can judge lists against each
/// other.
pub fn pooled<'a>(plans: impl IntoIterator<Item = &'a Plan>) -> Vec<Weighted> {
    let mut docs = 0i64;
    let mut out: Vec<Weighted> = Vec::new();
    // Where each term is in `out` (a ticket has hundreds of terms).
    let mut at: HashMap<&Term, usize> = HashMap::new();
    for p in plans {
        docs = docs.saturating_add(p.docs);
        for w in &p.scoring {
            match at.get(&w.term) {
                Some(&i) => {
                    let o = &mut out[i];
                    o.df = o.df.saturating_add(w.df);
                    o.exact &= w.exact;
                }
                None => {
                    at.insert(&w.term, out.len());
                    out.push(w.clone());
                }
            }
        }
    }
    for w in &mut out {
        w.weight = idf(docs, w.df) * kind_weight(w.term.kind);
    }
    out
}

/// Robertson-Sparck Jones idf, never negative.
pub fn idf(docs: i64, df: i64) -> f64 {
    let (n, d) = (docs.max(1) as f64, df.max(0) as f64);
    ((n - d + 0.5) / (d + 0.5) + 1.0).ln()
}

/// Document frequencies are counted in rounds, each with a cap four times
/// the last, stopping once enough terms have exact counts or the work would
/// pass [`COUNT_BUDGET`] (see [`doc_freqs`]). Counting exactly with
/// `fts5vocab` walks each term's whole doclist: 10-20 ms per common word at
/// 1,000,000 chunks, which was most of a query's time.
const FIRST_CAP: i64 = 1_000;
const CAP_STEP: i64 = 4;
/// Most doclist rows counted for one plan (about 15 ms at 1,000,000 chunks).
const COUNT_BUDGET: i64 = 250_000;

/// Documents containing `word` (one `words()` item), counted up to `cap`:
/// the FTS5 query stops after `cap` rows of the doclist.
fn doc_freq(conn: &Connection, table: Table, word: &str, cap: i64) -> Result<i64> {
    let Some(expr) = to_match(&[Term {
        text: word.to_string(),
        kind: TermKind::Word,
    }]) else {
        return Ok(0);
    };
    let fts = table.fts();
    let sql = format!("SELECT count(*) FROM (SELECT 1 FROM {fts} WHERE {fts} MATCH ?1 LIMIT ?2)");
    Ok(conn
        .prepare_cached(&sql)?
        .query_row(rusqlite::params![expr, cap], |r| r.get(0))?)
}

/// Document frequencies of every term (for a phrase, of its rarest word),
/// exact below the final cap. A count that reached the cap is only a lower
/// bound: such a term is rarer than no term with an exact count, so it
/// ranks below all of them whatever its true frequency. Rounds go on while
/// fewer than `wanted` terms have exact counts, the cap is below the number
/// of documents, and the next round fits the budget; so small indexes and
/// short queries get exact counts, and a long query on a large index stops
/// after the cheap rounds.
fn doc_freqs(
    conn: &Connection,
    table: Table,
    terms: &[Term],
    docs: i64,
    wanted: usize,
    budget: i64,
) -> Result<Vec<(i64, bool)>> {
    let mut counts: HashMap<&str, (i64, bool)> = HashMap::new();
    let (mut cap, mut spent) = (FIRST_CAP, 0);
    loop {
        for t in terms {
            for w in words(&t.text) {
                let known = counts.get(w).is_some_and(|&(_, exact)| exact);
                if !known {
                    let n = doc_freq(conn, table, w, cap)?;
                    spent += n;
                    counts.insert(w, (n, n < cap || cap >= docs));
                }
            }
        }
        let per_term = |t: &Term| {
            words(&t.text)
                .filter_map(|w| counts.get(w).copied())
                .min_by_key(|&(n, _)| n)
                .unwrap_or((0, true))
        };
        let dfs: Vec<(i64, bool)> = terms.iter().map(per_term).collect();
        let exact = dfs.iter().filter(|&&(n, e)| e && n > 0).count();
        let open = counts.values().filter(|&&(_, e)| !e).count() as i64;
        let next = cap.saturating_mul(CAP_STEP);
        if exact >= wanted || cap >= docs || spent + open * next > budget {
            return Ok(dfs);
        }
        cap = next;
    }
}

/// The cost of a search, in work units: FTS5 merges the doclists of an OR
/// query and bm25 visits every phrase of the query for every row matched,
/// so the work grows with `terms × rows`; and each term costs a look-up in
/// every segment of the index before its first row, which grows with the
/// index. Measured at 1,000,000 passages (`scripts/bench-recall.sh`): about
/// 190 ns per unit of `terms × Σ df`, most of it bm25 reading each matched
/// row's sizes; a term's fixed cost is counted as `docs / TERM_DOCS` rows.
pub fn search_cost(terms: usize, postings: i64, docs: i64) -> i64 {
    (terms as i64).saturating_mul(postings.saturating_add(docs / TERM_DOCS))
}

/// See [`search_cost`]: one term's fixed cost is that of `docs / TERM_DOCS`
/// rows.
const TERM_DOCS: i64 = 1000;

/// The words of a query's terms and their exact counts in every table,
/// looked up once for all the tables a query plans: one b-tree probe per
/// word (see `store::terms::lookup_all`).
pub struct WordCounts<'a> {
    /// Sorted, distinct.
    words: Vec<&'a str>,
    counts: crate::store::TermCounts,
}

impl<'a> WordCounts<'a> {
    pub fn load(conn: &Connection, terms: &'a [Term]) -> Result<WordCounts<'a>> {
        let mut words: Vec<&str> = terms.iter().flat_map(|t| words(&t.text)).collect();
        words.sort_unstable();
        words.dedup();
        let counts = crate::store::term_lookup_all(conn, &words)?;
        Ok(WordCounts { words, counts })
    }

    /// Rows in `table` when its counts are current.
    pub fn docs(&self, table: Table) -> Option<i64> {
        self.counts.get(table).map(|(docs, _)| docs)
    }
}

/// Document frequencies of `terms` (for a phrase, of its rarest word) and
/// the table's row count: exact from the term statistics when they are
/// current, else counted with FTS5 up to caps.
fn term_dfs(
    conn: &Connection,
    table: Table,
    terms: &[Term],
    counts: &WordCounts,
) -> Result<(i64, Vec<(i64, bool)>)> {
    if let Some((docs, dfs)) = counts.counts.get(table) {
        // `counts.words` is sorted and holds every word of `terms`.
        let df_of = |w: &str| counts.words.binary_search(&w).ok().map(|i| dfs[i]);
        let per_term = |t: &Term| {
            let df = words(&t.text).filter_map(df_of).min().unwrap_or(0);
            (df, true)
        };
        return Ok((docs, terms.iter().map(per_term).collect()));
    }
    let docs: i64 = conn
        .prepare_cached(&format!(
            "SELECT coalesce(max(rowid), 0) FROM {}",
            table.meta()
        ))?
        .query_row([], |r| r.get(0))?;
    if docs == 0 {
        return Ok((0, vec![(0, true); terms.len()]));
    }
    let dfs = doc_freqs(conn, table, terms, docs, terms.len(), COUNT_BUDGET)?;
    Ok((docs, dfs))
}

/// A table's part of the query's budget: `budget × size / total`, where
/// `total` is the rows of every table the query searches.
pub fn share(budget: i64, size: i64, total: i64) -> i64 {
    if total <= 0 {
        return budget;
    }
    (budget as f64 * size as f64 / total as f64).round() as i64
}

/// Rows in `table`: exact from the statistics when current, else its
/// largest rowid.
pub fn table_docs(conn: &Connection, table: Table) -> Result<i64> {
    if let Some(docs) = crate::store::current_docs(conn, table)? {
        return Ok(docs);
    }
    let sql = format!("SELECT coalesce(max(rowid), 0) FROM {}", table.meta());
    Ok(conn.prepare_cached(&sql)?.query_row([], |r| r.get(0))?)
}

/// Weight `terms` by their statistics in `table` and choose the ones to
/// search within `budget` doclist entries (see the module doc).
pub fn plan(conn: &Connection, table: Table, terms: &[Term], budget: i64) -> Result<Plan> {
    plan_with(conn, table, terms, budget, &WordCounts::load(conn, terms)?)
}

/// [`plan`] with the words' counts already looked up (for every table at
/// once: see [`WordCounts`]).
#[tracing::instrument(level = "debug", name = "plan", skip(conn, terms, counts), fields(terms = terms.len(), searched, postings))]
pub fn plan_with(
    conn: &Connection,
    table: Table,
    terms: &[Term],
    budget: i64,
    counts: &WordCounts,
) -> Result<Plan> {
    let (docs, dfs) = term_dfs(conn, table, terms, counts)?;
    if docs == 0 {
        return Ok(Plan::default());
    }
    let mut scoring = Vec::with_capacity(terms.len());
    for (t, (df, exact)) in terms.iter().zip(dfs) {
        if df == 0 {
            continue;
        }
        scoring.push(Weighted {
            term: t.clone(),
            df,
            exact,
            weight: idf(docs, df) * kind_weight(t.kind),
        });
    }
    // Highest weight first; among equals, the cheaper term.
    scoring.sort_by(|a, b| b.weight.total_cmp(&a.weight).then(a.df.cmp(&b.df)));
    let mut postings = 0i64;
    let mut searched: Vec<Weighted> = Vec::new();
    // Stemming at parity with `porter`: a word whose stem is a term of its
    // own is searched through the stem alone, which matches every form of
    // the word (the stem itself in the text, or in `aux` for the other
    // forms) at one weight. Searching the word too would rank its exact
    // form twice over the other forms. The word still rescores.
    let stems: std::collections::HashSet<&str> = scoring
        .iter()
        .filter(|w| w.term.kind == TermKind::Stem)
        .map(|w| w.term.text.as_str())
        .collect();
    // A stem is searched on behalf of its word, so it is taken in the
    // word's place: at the weight of a word as rare as it is. It weighs 0.6
    // of its word in the ranking, and ordered by that, "privacy" (searched
    // through its stem "privaci") fell behind "suggest" in 18,871 passages
    // and was left out while they were searched.
    let searching = |w: &Weighted| match w.term.kind {
        TermKind::Stem => w.weight / kind_weight(TermKind::Stem) * kind_weight(TermKind::Word),
        _ => w.weight,
    };
    let mut order: Vec<&Weighted> = scoring.iter().collect();
    order.sort_by(|a, b| searching(b).total_cmp(&searching(a)).then(a.df.cmp(&b.df)));
    for w in order {
        if w.term.kind == TermKind::Word
            && crate::text::with_stem(&w.term.text, |s| stems.contains(s))
        {
            continue;
        }
        // A count that reached its cap is a lower bound: such a term is
        // commoner than every exactly counted one, and is only searched
        // when nothing was counted exactly.
        let unknown_cost = !w.exact && searched.iter().any(|s| s.exact);
        let next = search_cost(searched.len() + 1, postings.saturating_add(w.df), docs);
        if searched.is_empty() || (!unknown_cost && next <= budget) {
            postings = postings.saturating_add(w.df);
            searched.push(w.clone());
        }
    }
    searched.sort_by(|a, b| b.weight.total_cmp(&a.weight).then(a.df.cmp(&b.df)));
    let cost = search_cost(searched.len(), postings, docs);
    let span = tracing::Span::current();
    span.record("searched", searched.len());
    span.record("postings", postings);
    Ok(Plan {
        terms: searched,
        scoring,
        docs,
        cost,
        stressed: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recall::sanitize::extract_terms;

    fn db() -> Connection {
        let mut c = Connection::open_in_memory().unwrap();
        crate::store::migrate_for_tests(&mut c);
        c
    }

    /// A tickets table with one row per body (`aux` empty).
    fn tickets(bodies: &[&str]) -> Result<Connection> {
        tickets_with(bodies, |_| String::new())
    }

    /// A tickets table with one row per body and `aux(body)` as its aux.
    fn tickets_with(bodies: &[&str], aux: impl Fn(&str) -> String) -> Result<Connection> {
        let c = db();
        c.execute_batch("PRAGMA foreign_keys=OFF;")?;
        for (i, body) in bodies.iter().enumerate() {
            let rowid = i as i64 + 1;
            c.execute(
                "INSERT INTO tickets(rowid, source_id, ticket_id, part) VALUES(?1, 0, 'x', ?1)",
                [rowid],
            )?;
            c.execute(
                "INSERT INTO tickets_fts(rowid, title, body, labels, aux) VALUES(?1, '', ?2, '', ?3)",
                rusqlite::params![rowid, body, aux(body)],
            )?;
        }
        Ok(c)
    }

    fn planned(c: &Connection, q: &str, budget: i64) -> Result<(Vec<String>, Vec<String>)> {
        let p = plan(c, Table::Tickets, &extract_terms(q), budget)?;
        let texts = |v: &[Weighted]| v.iter().map(|w| w.term.text.clone()).collect();
        Ok((texts(&p.terms), texts(&p.scoring)))
    }

    /// Issue 39 item 3: a rarer stem is searched before a commoner word,
    /// although its kind weighs less in the ranking.
    #[test]
    fn a_stem_is_searched_in_its_words_place_by_rarity() -> Result<()> {
        let mut bodies = vec!["an unrelated note"; 1000];
        for b in bodies.iter_mut().take(300) {
            *b = "we suggest a change";
        }
        for b in bodies.iter_mut().skip(300).take(150) {
            *b = "privacy policies";
        }
        let c = tickets_with(&bodies, |b| {
            if b.contains("privacy") {
                "privaci polici".into()
            } else {
                String::new()
            }
        })?;
        let p = plan(&c, Table::Tickets, &extract_terms("privacy suggest"), 200)?;
        let searched: Vec<&str> = p.terms.iter().map(|w| w.term.text.as_str()).collect();
        assert_eq!(searched, ["privaci"], "{:?}", p.scoring);
        let stem = p.scoring.iter().find(|w| w.term.text == "privaci").unwrap();
        let word = p.scoring.iter().find(|w| w.term.text == "suggest").unwrap();
        assert!(stem.weight < word.weight, "{stem:?} {word:?}");
        Ok(())
    }

    #[test]
    fn rare_terms_outweigh_common_ones_and_unknown_terms_drop() -> Result<()> {
        let mut bodies = vec!["the test passed"; 10];
        bodies[3] = "the flaky loader test crashed";
        let c = tickets(&bodies)?;
        let (searched, scoring) = planned(&c, "flaky loader crashed test zebra", 1_000_000)?;
        assert_eq!(searched.first().map(String::as_str), Some("flaky"));
        assert!(!scoring.iter().any(|t| t == "zebra"), "{scoring:?}");
        assert!(
            searched.iter().any(|t| t == "test"),
            "a small index searches every content word: {searched:?}"
        );
        assert!(plan(&c, Table::Tickets, &extract_terms("flaky"), 10)?
            .to_match()
            .is_some());
        Ok(())
    }

    /// The cost model: past the budget the commonest word is not searched,
    /// but still rescores; the rarest term is searched even alone over it.
    #[test]
    fn the_budget_drops_common_words_from_the_search_only() -> Result<()> {
        let mut bodies = vec!["the test passed"; 10];
        bodies[3] = "the flaky loader test crashed";
        let c = tickets(&bodies)?;
        let (searched, scoring) = planned(&c, "flaky loader crashed test", 5)?;
        assert!(!searched.iter().any(|t| t == "test"), "{searched:?}");
        assert!(scoring.iter().any(|t| t == "test"), "{scoring:?}");
        assert!(searched.iter().any(|t| t == "flaky"), "{searched:?}");
        let p = plan(&c, Table::Tickets, &extract_terms("test"), 1)?;
        assert_eq!(p.terms.len(), 1, "the first term is always searched");
        assert!(p.cost > 1);
        Ok(())
    }

    /// Porter parity: a word with a stem of its own is searched through the
    /// stem, which matches every form at one weight; the word rescores.
    #[test]
    fn a_word_is_searched_through_its_stem() -> Result<()> {
        let c = tickets_with(
            &["the loader crashed", "it crashes daily", "all fine"],
            crate::text::aux_terms,
        )?;
        let (searched, scoring) = planned(&c, "crashed", 1_000_000)?;
        assert_eq!(searched, ["crash"]);
        assert!(scoring.iter().any(|t| t == "crashed"), "{scoring:?}");
        let p = plan(&c, Table::Tickets, &extract_terms("crashed"), 1_000_000)?;
        let hits: i64 = c.query_row(
            "SELECT count(*) FROM tickets_fts WHERE tickets_fts MATCH ?1",
            [p.to_match().unwrap()],
            |r| r.get(0),
        )?;
        assert_eq!(hits, 2, "both forms match");
        Ok(())
    }

    /// Regression: in a store of three records, `pnpm release` dropped
    /// `pnpm` (in two of the three) and found only the release record.
    #[test]
    fn r_a_short_query_keeps_its_common_words() -> Result<()> {
        let c = tickets(&[
            "We use pnpm workspaces",
            "Run pnpm install first",
            "Tag the release",
        ])?;
        let (searched, _) = planned(&c, "pnpm release", 1_000_000)?;
        assert!(searched.iter().any(|t| t == "pnpm"), "{searched:?}");
        assert!(searched.iter().any(|t| t == "release"), "{searched:?}");
        Ok(())
    }

    /// With current term statistics the plan uses them, not FTS5 counting.
    #[test]
    fn current_statistics_are_used() -> Result<()> {
        let c = tickets(&["alpha beta", "beta gamma", "beta"])?;
        crate::store::repair_term_stats(&c)?;
        // A row the statistics do not know about would make them stale;
        // instead change a count by hand to see which source answers.
        c.execute("UPDATE term_df SET tickets = 2 WHERE term = 'alpha'", [])?;
        let p = plan(&c, Table::Tickets, &extract_terms("alpha beta"), 1_000)?;
        let alpha = p.scoring.iter().find(|w| w.term.text == "alpha").unwrap();
        assert_eq!((alpha.df, alpha.exact), (2, true));
        assert_eq!(p.docs, 3);
        Ok(())
    }

    /// An index from schema 4 (its counts in `term_stats`, no `term_df`),
    /// read as it is by a hook, plans by counting with FTS5.
    #[test]
    fn an_index_without_term_df_is_planned_by_counting() -> Result<()> {
        let c = tickets(&["alpha beta", "beta gamma", "beta"])?;
        crate::store::repair_term_stats(&c)?;
        c.execute_batch("DROP TABLE term_df;")?;
        let p = plan(&c, Table::Tickets, &extract_terms("alpha beta"), 1_000)?;
        let df = |t: &str| p.scoring.iter().find(|w| w.term.text == t).map(|w| w.df);
        assert_eq!((df("alpha"), df("beta")), (Some(1), Some(3)));
        assert_eq!(p.docs, 3);
        Ok(())
    }

    /// 3,000 tickets: `common` in all, `half` in 1,500, `rare` in 3.
    fn tickets_db() -> Result<Connection> {
        let c = db();
        c.execute_batch("PRAGMA foreign_keys=OFF; BEGIN;")?;
        for i in 1..=3000i64 {
            let mut body = String::from("common");
            if i % 2 == 0 {
                body.push_str(" half");
            }
            if i % 1000 == 0 {
                body.push_str(" rare");
            }
            c.execute(
                "INSERT INTO tickets(rowid, source_id, ticket_id, part) VALUES(?1, 0, 'x', ?1)",
                [i],
            )?;
            c.execute(
                "INSERT INTO tickets_fts(rowid, title, body, labels, aux) VALUES(?1, '', ?2, '', '')",
                rusqlite::params![i, body],
            )?;
        }
        c.execute_batch("COMMIT;")?;
        Ok(c)
    }

    #[test]
    fn counts_past_the_first_cap_are_exact_when_the_budget_allows() -> Result<()> {
        let c = tickets_db()?;
        let terms = extract_terms("common half rare");
        let dfs = doc_freqs(&c, Table::Tickets, &terms, 3000, 16, COUNT_BUDGET)?;
        let by_text: Vec<(&str, (i64, bool))> =
            terms.iter().map(|t| t.text.as_str()).zip(dfs).collect();
        assert!(by_text.contains(&("common", (3000, true))), "{by_text:?}");
        assert!(by_text.contains(&("half", (1500, true))), "{by_text:?}");
        assert!(by_text.contains(&("rare", (3, true))), "{by_text:?}");
        let p = plan(&c, Table::Tickets, &terms, 1_000_000)?;
        let texts: Vec<&str> = p.terms.iter().map(|w| w.term.text.as_str()).collect();
        assert_eq!(texts, ["rare", "half", "common"]);
        assert_eq!(p.cost, search_cost(3, 4503, 3000));
        Ok(())
    }

    #[test]
    fn past_the_budget_counts_stop_at_the_first_cap() -> Result<()> {
        let c = tickets_db()?;
        let terms = extract_terms("common half rare");
        // No budget for a second round: the first cap is final.
        let dfs = doc_freqs(&c, Table::Tickets, &terms, 3000, 16, 0)?;
        assert!(dfs.contains(&(FIRST_CAP, false)), "{dfs:?}");
        assert!(dfs.contains(&(3, true)), "{dfs:?}");
        Ok(())
    }

    #[test]
    fn idf_is_positive_and_decreasing() {
        assert!(idf(100, 1) > idf(100, 50));
        assert!(idf(100, 100) > 0.0);
    }

    /// Pooled weights treat the tables as one: a word common in a small
    /// table but rare over all of them is weighted as rare, and the same
    /// term has one weight whichever table it came from.
    #[test]
    fn pooled_weights_count_documents_over_every_table() -> Result<()> {
        let small = tickets(&["morning deploy", "morning build", "morning standup"])?;
        let mut bodies = vec!["my daily commute by train"; 1];
        bodies.extend(std::iter::repeat_n("weekly report filed", 40));
        let large = tickets(&bodies)?;
        let terms = extract_terms("daily commute morning");
        let a = plan(&small, Table::Tickets, &terms, 1_000_000)?;
        let b = plan(&large, Table::Tickets, &terms, 1_000_000)?;
        let weight = |ws: &[Weighted], t: &str| {
            ws.iter()
                .find(|w| w.term.text == t && w.term.kind == TermKind::Word)
                .map(|w| (w.df, w.weight))
        };
        // In its own table "morning" is in every row: a low weight.
        let (_, own) = weight(&a.scoring, "morning").unwrap();
        let all = pooled([&a, &b]);
        let (df, pooled_w) = weight(&all, "morning").unwrap();
        assert_eq!(df, 3);
        assert!(pooled_w > 3.0 * own, "{pooled_w} vs {own}");
        assert_eq!(weight(&all, "commute").unwrap().0, 1);
        assert!(
            weight(&all, "weekly").is_none(),
            "only the question's terms"
        );
        // Pooling is symmetric.
        let back = pooled([&b, &a]);
        assert_eq!(weight(&back, "morning"), weight(&all, "morning"));
        Ok(())
    }
}
