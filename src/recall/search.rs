//! Recall end to end, in four stages: plan the question per table, fetch
//! candidates from every scope and kind, lift them by what the question
//! asks for, and select within the caps (diversity, the limit and the
//! token budget).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Instant;

use super::candidates::{self, Candidate};
use super::hit::{Hit, HitKind};
use super::passage::Scorer;
use super::plan::{plan_with, pooled, share, table_docs, Plan, Table, Weighted, WordCounts};
use super::rank;
use super::request::{Request, Response, Target, Touched};
use super::sanitize::{extract_terms, title_line};
use crate::error::Result;

fn ms(t: Instant) -> f64 {
    (t.elapsed().as_secs_f64() * 1e6).round() / 1e3
}

/// Search every target and merge the hits into one ranking.
#[tracing::instrument(level = "debug", skip_all, fields(scopes = targets.len(), query_chars = req.query.len(), limit = req.limit))]
pub fn recall(targets: &[Target], req: &Request) -> Result<Response> {
    let t0 = Instant::now();
    let terms = extract_terms(&req.query);
    let mut timings = BTreeMap::new();
    let plans = plan(targets, req, &terms)?;
    timings.insert("plan".into(), ms(t0));
    // The question's weights over every table at once: they calibrate the
    // lists against each other (see `rank::calibrate`) and mark snippets.
    let terms_pooled = pooled(plans.iter().flatten().map(|(_, p)| p));
    let judge = Scorer::new(&terms_pooled);
    let (mut all, fetch_ms) = fetch(targets, req, &plans, &judge)?;
    timings.insert("fetch".into(), fetch_ms);
    timings.insert("search".into(), ms(t0));
    let t1 = Instant::now();
    lift(&mut all, req, &terms_pooled);
    let mut rescued = None;
    // Hybrid recall: the dense side rescues what the words missed, after
    // the lexical ranking is complete (see `recall::dense`).
    if let Some(dense) = &req.dense {
        let td = Instant::now();
        let done = super::dense::rescue(targets, req, dense, &judge, &mut all)?;
        timings.insert("dense".into(), ms(td));
        rescued = Some(done);
    }
    // The prompt hook's evidence: which question words each session's
    // candidates hold is read before `select` consumes them; how much each
    // word weighs is counted after, for the words the hits hold.
    let words = req
        .evidence
        .then(|| Scorer::for_coverage(&unit_weights(&terms)));
    let seen = words
        .as_ref()
        .map(|w| words_by_session(&all, w))
        .unwrap_or_default();
    let mut list = select(targets, req, all, &judge);
    super::stale::newer_first(&mut list, &terms_pooled);
    let (mut hits, touched) = number(list);
    if !req.explain {
        for h in &mut hits {
            h.explain = None;
        }
    }
    timings.insert("rank".into(), ms(t1));
    let mut evidence = Evidence::default();
    if let Some(words) = words.filter(|_| hits.iter().any(|h| h.kind == HitKind::Session)) {
        let t2 = Instant::now();
        evidence = weigh_evidence(targets, req, &terms, &plans, &hits, &words, &seen)?;
        timings.insert("evidence".into(), ms(t2));
    }
    timings.insert("total".into(), ms(t0));
    let mut shown: Vec<Weighted> = Vec::new();
    for (_, p) in plans.iter().flatten() {
        for w in &p.terms {
            if !shown.iter().any(|s| s.term == w.term) {
                shown.push(w.clone());
            }
        }
    }
    shown.sort_by(|a, b| b.weight.total_cmp(&a.weight));
    Ok(Response {
        query: req.query.clone(),
        terms: shown,
        hits,
        timings_ms: timings,
        touched,
        evidence: evidence.terms,
        evidence_sessions: evidence.sessions,
        together: evidence.together,
        session_cover: evidence.session_cover,
        dense: rescued,
    })
}

/// What the prompt hook judges session hits by (see `recall::evidence`
/// and [`Response::evidence`]).
#[derive(Default)]
struct Evidence {
    sessions: i64,
    terms: Vec<Weighted>,
    together: HashMap<String, i64>,
    session_cover: HashMap<String, f64>,
}

/// A session's key for the evidence: its scope and root session.
type SessionRoot = (crate::store::Scope, String);

/// Words of a hit, its rarest, that must stand together in a passage for
/// the count of sessions that hold them together.
const TOGETHER_WORDS: usize = 3;

/// `terms`, each of weight 1: a scorer that only says which are matched.
fn unit_weights(terms: &[super::Term]) -> Vec<Weighted> {
    terms
        .iter()
        .map(|t| Weighted {
            term: t.clone(),
            df: 0,
            exact: true,
            weight: 1.0,
        })
        .collect()
}

/// For each session (by scope and root id, see `recall::evidence::root_of`),
/// the question words its candidates hold between them (flags by
/// [`Scorer::for_coverage`]'s word). Only the passages that matched are
/// read, so a long session is not credited with every word it holds
/// somewhere.
fn words_by_session(all: &[Candidate], words: &Scorer) -> HashMap<SessionRoot, Vec<bool>> {
    let mut seen: HashMap<SessionRoot, Vec<bool>> = HashMap::new();
    for c in all.iter().filter(|c| c.hit.kind == HitKind::Session) {
        let Some(id) = c.hit.source.session_id.as_deref() else {
            continue;
        };
        let key = (c.hit.scope, super::evidence::root_of(id).to_string());
        let flags = seen
            .entry(key)
            .or_insert_with(|| vec![false; words.words()]);
        if !flags.iter().all(|&f| f) {
            words.mark_seen(&format!("{}\n{}", c.hit.title, c.hit.text), flags);
        }
    }
    seen
}

/// The evidence for the session hits: every question word weighed by how
/// few sessions hold it (counted for the words the hits hold, estimated
/// for the others), each hit's session's share of that weight in its
/// matching passages (`seen`), and how many sessions have a passage that
/// holds its rarest words together (asked only for the hits whose session
/// clears [`Request::cover_bar`]).
fn weigh_evidence(
    targets: &[Target],
    req: &Request,
    terms: &[super::Term],
    plans: &[Vec<(Table, Plan)>],
    hits: &[Hit],
    words: &Scorer,
    seen: &HashMap<SessionRoot, Vec<bool>>,
) -> Result<Evidence> {
    let session_hits: Vec<&Hit> = hits.iter().filter(|h| h.kind == HitKind::Session).collect();
    let text = |h: &Hit| format!("{}\n{}", h.title, h.text);
    let matched: Vec<Vec<Vec<usize>>> = session_hits
        .iter()
        .map(|h| words.matched_words(&text(h)))
        .collect();
    let mut counted = vec![false; terms.len()];
    for i in matched.iter().flatten().flatten() {
        counted[*i] = true;
    }
    let mut per_scope = Vec::with_capacity(targets.len());
    for (ti, t) in targets.iter().enumerate() {
        let scoring = plans[ti]
            .iter()
            .find(|(table, _)| *table == Table::Chunks)
            .map(|(_, p)| p.scoring.as_slice())
            .unwrap_or_default();
        let dfs: Vec<i64> = terms
            .iter()
            .map(|term| scoring.iter().find(|w| w.term == *term).map_or(0, |w| w.df))
            .collect();
        per_scope
            .push(t.db.with_conn(|c| super::evidence::session_counts(c, terms, &dfs, &counted))?);
    }
    let weighed = super::evidence::weigh(terms, &per_scope);
    let weighted = Scorer::for_coverage(&weighed.terms);
    let mut out = Evidence {
        sessions: weighed.sessions,
        ..Evidence::default()
    };
    for h in &session_hits {
        let Some(root) = h.source.session_id.as_deref().map(super::evidence::root_of) else {
            continue;
        };
        if let Some(flags) = seen.get(&(h.scope, root.to_string())) {
            out.session_cover
                .insert(h.id.clone(), weighted.share(flags));
        }
    }
    let best_cover = out.session_cover.values().copied().fold(0.0, f64::max);
    let mut asked: HashMap<String, i64> = HashMap::new();
    for (h, groups) in session_hits.iter().zip(matched) {
        let covered = out.session_cover.get(&h.id).copied().unwrap_or(0.0);
        if h.source.session_id.is_none()
            || !super::evidence::covers(covered, best_cover, req.cover_bar)
        {
            continue;
        }
        // Its rarest words, by their weight as evidence: they say what it
        // is about, and their doclists are short. A hit that holds only a
        // template's words has only common ones.
        let heaviest = |g: &Vec<usize>| {
            g.iter()
                .map(|&i| weighed.terms[i].weight)
                .fold(0.0, f64::max)
        };
        let mut groups = groups;
        groups.sort_by(|a, b| heaviest(b).total_cmp(&heaviest(a)));
        groups.truncate(TOGETHER_WORDS);
        // A word one session holds stands with the others in at most that
        // session: no need to ask the index (the bar passes any count of 1).
        if let Some(bound) =
            super::evidence::together_bound(&groups, &per_scope).filter(|&b| b <= 1.0)
        {
            out.together.insert(h.id.clone(), bound.round() as i64);
            continue;
        }
        let groups: Vec<Vec<super::Term>> = groups
            .into_iter()
            .map(|g| g.into_iter().map(|i| terms[i].clone()).collect())
            .collect();
        let Some(expr) = super::sanitize::to_match_all(&groups) else {
            continue;
        };
        // Passages of one session often hold the same rarest words.
        if let Some(&n) = asked.get(&expr) {
            out.together.insert(h.id.clone(), n);
            continue;
        }
        let mut n = 0;
        let with_sessions = targets
            .iter()
            .zip(&per_scope)
            .filter(|(_, c)| c.sessions > 0);
        for (t, _) in with_sessions {
            n += t.db.with_conn(|c| {
                super::evidence::sessions_together(c, &expr, super::request::TOGETHER_CAP)
            })?;
        }
        asked.insert(expr, n);
        out.together.insert(h.id.clone(), n);
    }
    out.terms = weighed.terms;
    Ok(out)
}

/// Stage 1, plan: each wanted table of each scope, its terms chosen within
/// its share of the cost budget.
///
/// Every table's counts of the question's words come first, one probe per
/// word, with the tables' sizes (exact beside the counts, else the largest
/// rowid). One cost budget for the whole query is shared by the tables in
/// proportion to their size: a table ten times larger gets ten times the
/// work, so a large session index cannot be starved by the records and a
/// small record list costs little.
fn plan(
    targets: &[Target],
    req: &Request,
    terms: &[super::Term],
) -> Result<Vec<Vec<(Table, Plan)>>> {
    let mut counts = Vec::with_capacity(targets.len());
    let mut sizes = Vec::with_capacity(targets.len());
    for t in targets {
        let (c, s) = t.db.with_conn(|c| {
            let counts = WordCounts::load(c, terms)?;
            let mut s = [0i64; 3];
            for (i, &(kind, table)) in TABLES.iter().enumerate() {
                if req.wants(kind) {
                    s[i] = match counts.docs(table) {
                        Some(n) => n,
                        None => table_docs(c, table)?,
                    };
                }
            }
            Ok((counts, s))
        })?;
        counts.push(c);
        sizes.push(s);
    }
    let total: i64 = sizes.iter().flatten().sum();
    let mut plans: Vec<Vec<(Table, Plan)>> = Vec::with_capacity(targets.len());
    for (ti, t) in targets.iter().enumerate() {
        plans.push(t.db.with_conn(|c| {
            let mut out = Vec::new();
            for (i, &(kind, table)) in TABLES.iter().enumerate() {
                if req.wants(kind) {
                    let budget = share(req.tuning.plan_budget, sizes[ti][i], total);
                    out.push((table, plan_with(c, table, terms, budget, &counts[ti])?));
                }
            }
            Ok(out)
        })?);
    }
    emphasise_title(&mut plans, &req.query, req.tuning.title_weight);
    Ok(plans)
}

/// Weigh the terms of the question's title line (`sanitize::title_line`)
/// `factor` times in every plan's passage scores, and search each of them
/// twice (`Plan::stressed`), so bm25 counts them twice. Which terms are
/// searched was chosen before, on their idf alone; the judge (`pooled`)
/// weighs terms afresh, so calibration across lists is unchanged.
fn emphasise_title(plans: &mut [Vec<(Table, Plan)>], query: &str, factor: f64) {
    let Some(title) = title_line(query) else {
        return;
    };
    if factor == 1.0 {
        return;
    }
    let title: HashSet<super::Term> = extract_terms(title).into_iter().collect();
    for (_, p) in plans.iter_mut().flatten() {
        for w in p.terms.iter_mut().chain(p.scoring.iter_mut()) {
            if title.contains(&w.term) {
                w.weight *= factor;
            }
        }
        p.stressed = p
            .terms
            .iter()
            .filter(|w| title.contains(&w.term))
            .map(|w| w.term.clone())
            .collect();
    }
}

/// Stage 2, fetch: each plan's bm25 candidates with their passage scores,
/// normalised within their list and calibrated across lists by how much
/// of the question each covers (`judge`). Also the milliseconds spent in
/// the candidate queries.
fn fetch(
    targets: &[Target],
    req: &Request,
    plans: &[Vec<(Table, Plan)>],
    judge: &Scorer,
) -> Result<(Vec<Candidate>, f64)> {
    let mut fetch_ms = 0.0;
    let mut lists: Vec<(Vec<Candidate>, f64)> = Vec::new();
    for (ti, t) in targets.iter().enumerate() {
        let fetched = t.db.with_conn(|c| {
            let mut out = Vec::with_capacity(plans[ti].len());
            for (table, p) in &plans[ti] {
                let scorer = Scorer::new(&p.scoring).with_proximity(req.tuning.proximity);
                let tf = Instant::now();
                let list = match table {
                    Table::Records => candidates::records(c, t.dir, p, &scorer, req)?,
                    Table::Chunks => candidates::chunks(c, t.dir, p, &scorer, req)?,
                    Table::Tickets => candidates::tickets(c, t.dir, p, &scorer, req)?,
                };
                fetch_ms += ms(tf);
                let slope = match table {
                    Table::Tickets => req.tuning.ticket_length_norm,
                    Table::Records | Table::Chunks => req.tuning.length_norm,
                };
                out.push((list, slope));
            }
            Ok(out)
        })?;
        for (mut list, slope) in fetched {
            rank::normalise_length(&mut list, slope, req.tuning.work_length_norm);
            rank::normalise(&mut list, req.tuning.bm25_share);
            let coverage = coverage(&list, judge);
            let list = list.into_iter().map(|c| Candidate { target: ti, ..c });
            lists.push((list.collect(), coverage));
        }
    }
    rank::calibrate(&mut lists, req.tuning.coverage_power);
    Ok((lists.into_iter().flat_map(|(l, _)| l).collect(), fetch_ms))
}

/// Stage 3, lift: the kind weight and boosts of each candidate, the
/// answer-type lifts the question asks for (a time, the user, a period),
/// session evidence, and session coverage (over the pooled `terms`).
fn lift(all: &mut [Candidate], req: &Request, terms: &[Weighted]) {
    let (now, as_of) = (req.now.as_second(), req.as_of());
    for c in all.iter_mut() {
        rank::boost(c, &req.tuning, now, as_of);
    }
    if super::temporal::asks_when(&req.query) {
        rank::answer_type(
            all,
            "time",
            |c| super::temporal::mentions_time(&c.hit.text),
            req.tuning.temporal_boost,
        );
    }
    if super::subject::asks_about_user(&req.query) {
        rank::answer_type(all, "user", |c| c.by_user, req.tuning.subject_boost);
    }
    let periods = super::period::named(&req.query);
    let spans = super::relative::spans(&req.query, req.now);
    if !periods.is_empty() || !spans.is_empty() {
        let in_period = |c: &Candidate| {
            c.hit.updated.is_some_and(|t| {
                periods.iter().any(|p| p.contains(t)) || spans.iter().any(|s| s.contains(t))
            })
        };
        rank::answer_type(all, "period", in_period, req.tuning.period_boost);
    }
    rank::session_evidence(all, req.tuning.session_share);
    if req.tuning.session_coverage_power > 0.0 {
        let cover = Scorer::for_coverage(terms);
        rank::session_coverage(all, &cover, req.tuning.session_coverage_power);
    }
}

/// Stage 4, select: best first, one message at a time within the caps
/// (per session, near duplicates, the limit, the token budget), each
/// session hit with its context, touching hits shown as one, and each
/// hit's snippet marked with the question's words (`judge`).
fn select(
    targets: &[Target],
    req: &Request,
    mut all: Vec<Candidate>,
    judge: &Scorer,
) -> Vec<Candidate> {
    all.sort_by(best_first);
    // The best session hit is the likeliest place of the answer, and the
    // messages around it the likeliest place of the rest (most often the
    // reply after it): it gets `lead_context_chars` of context on each
    // side. Every later session hit gets `context_chars`, so a prompt
    // budget holds more distinct hits instead of the margins of weak ones.
    let mut lead = true;
    let mut expand = |c: &Candidate, shown: &dyn Fn(i64) -> bool| -> Option<Candidate> {
        let t = targets.get(c.target)?;
        c.range?;
        let context_chars = if std::mem::take(&mut lead) {
            req.tuning.lead_context_chars
        } else {
            req.tuning.context_chars
        };
        t.db.with_conn(|conn| super::context::expand(conn, c, context_chars, shown))
            .unwrap_or_else(|e| {
                tracing::debug!("no context for {}: {e}", c.hit.id);
                None
            })
    };
    // Hits are chosen one message at a time (a chain of weakly matching
    // neighbours never rides on one strong message), then kept hits that
    // touch, their context included, are shown as one.
    let list = rank::select(
        all,
        rank::Caps {
            // The cap spreads hits over sessions; a search of one session
            // has nothing to spread them over.
            per_session: match req.session {
                Some(_) => usize::MAX,
                None => req.tuning.per_session,
            },
            max_jaccard: req.tuning.max_jaccard,
            limit: req.limit,
            max_tokens: req.max_tokens,
        },
        &mut expand,
    );
    let mut list = rank::merge_adjacent(list, req.max_tokens);
    // The judge's terms are every table's, as the highlight's are; a
    // snippet only asks which words match, so it can mark them.
    for c in &mut list {
        c.hit.snippet = judge.snippet(&c.hit.text, 24);
    }
    list
}

/// Highest score first; ties by id, so the order never depends on input
/// order.
fn best_first(a: &Candidate, b: &Candidate) -> std::cmp::Ordering {
    b.hit
        .score
        .total_cmp(&a.hit.score)
        .then_with(|| a.hit.id.cmp(&b.hit.id))
}

/// Hits of a list whose coverage is judged: its best, by the list's own
/// scores. A list is judged by what it would show, and scoring its other
/// candidates again was 3% of a ticket query's instructions at 1,000,000
/// passages.
const COVERAGE_TOP: usize = 10;

/// How much of the question a list covers (see `rank::calibrate`): the
/// highest judge score among its [`COVERAGE_TOP`] best candidates.
/// `list` holds normalised scores.
fn coverage(list: &[Candidate], judge: &Scorer) -> f64 {
    let mut best: Vec<&Candidate> = list.iter().collect();
    best.sort_by(|a, b| best_first(a, b));
    best.iter()
        .take(COVERAGE_TOP)
        .map(|c| judge.score(&c.hit.text))
        .fold(0.0, f64::max)
}

/// The searchable tables, in planning order.
const TABLES: [(HitKind, Table); 3] = [
    (HitKind::Record, Table::Records),
    (HitKind::Session, Table::Chunks),
    (HitKind::Ticket, Table::Tickets),
];

/// Number the selected hits and note the rows they came from (for the
/// salience update).
fn number(list: Vec<Candidate>) -> (Vec<Hit>, Vec<Touched>) {
    let mut hits = Vec::with_capacity(list.len());
    let mut touched = Vec::with_capacity(list.len());
    for c in list {
        touched.push(Touched {
            target: c.target,
            table: c.table,
            rowid: c.rowid,
        });
        let mut h = c.hit;
        h.rank = hits.len() + 1;
        hits.push(h);
    }
    (hits, touched)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recall::{Term, TermKind};

    fn weighted(text: &str) -> Weighted {
        Weighted {
            term: Term {
                text: text.into(),
                kind: TermKind::Word,
            },
            df: 1,
            exact: true,
            weight: 1.0,
        }
    }

    #[test]
    fn a_title_lines_searched_terms_count_twice_in_bm25() {
        let plan = Plan {
            terms: vec![weighted("crash"), weighted("trace")],
            ..Plan::default()
        };
        let mut plans = vec![vec![(Table::Tickets, plan)]];
        emphasise_title(&mut plans, "Crash on start\n\nthe trace", 2.0);
        assert_eq!(
            plans[0][0].1.to_match().as_deref(),
            Some(r#""crash" OR "trace" OR "crash""#)
        );
        let mut plans = vec![vec![(Table::Tickets, plans[0][0].1.clone())]];
        emphasise_title(&mut plans, "crash trace", 2.0);
        assert_eq!(
            plans[0][0].1.stressed.len(),
            1,
            "one line leaves the plan as it was"
        );
    }

    /// FTS5's bm25 sums over the expression's phrases, a repeated one
    /// included: what makes `stressed` weigh in the bm25 score.
    #[test]
    fn fts5_bm25_counts_a_repeated_phrase_twice() {
        let c = rusqlite::Connection::open_in_memory().unwrap();
        c.execute_batch(
            "CREATE VIRTUAL TABLE t USING fts5(body);
             INSERT INTO t VALUES('crash here'), ('trace here');",
        )
        .unwrap();
        // bm25() is negative: lower is better.
        let score = |expr: &str, body: &str| -> f64 {
            c.query_row(
                "SELECT bm25(t) FROM t WHERE t MATCH ?1 AND body = ?2",
                [expr, body],
                |r| r.get(0),
            )
            .unwrap()
        };
        let once = r#""crash" OR "trace""#;
        let twice = r#""crash" OR "trace" OR "trace""#;
        assert_eq!(score(once, "crash here"), score(once, "trace here"));
        assert!(score(twice, "trace here") < score(twice, "crash here"));
        assert!((score(twice, "trace here") - 2.0 * score(once, "trace here")).abs() < 1e-9);
    }

    fn weights(query: &str, factor: f64) -> Vec<f64> {
        let plan = Plan {
            terms: vec![weighted("crash")],
            scoring: vec![weighted("crash"), weighted("trace")],
            ..Plan::default()
        };
        let mut plans = vec![vec![(Table::Tickets, plan)]];
        emphasise_title(&mut plans, query, factor);
        let p = &plans[0][0].1;
        p.terms.iter().chain(&p.scoring).map(|w| w.weight).collect()
    }

    #[test]
    fn a_title_lines_terms_weigh_more() {
        assert_eq!(weights("Crash on start\n\nthe trace", 2.0), [2.0, 2.0, 1.0]);
        // One line has no title; a factor of 1 is off.
        assert_eq!(weights("crash trace", 2.0), [1.0, 1.0, 1.0]);
        assert_eq!(weights("Crash\ntrace", 1.0), [1.0, 1.0, 1.0]);
    }
}
