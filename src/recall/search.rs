//! Recall end to end: sanitize the query, plan it per table, gather
//! candidates from every scope and kind, rank, diversify and cut to the
//! limit and the token budget.

use std::collections::BTreeMap;
use std::time::Instant;

use jiff::Timestamp;
use serde::Serialize;

use super::candidates::{self, Candidate};
use super::hit::{Hit, HitKind};
use super::passage::Scorer;
use super::plan::{plan_with, pooled, share, table_docs, Plan, Table, Weighted, WordCounts};
use super::rank;
use super::sanitize::extract_terms;
use crate::error::Result;
use crate::records::Category;
use crate::store::{Db, ScopeDir};

/// One scope to search.
pub struct Target<'a> {
    pub dir: &'a ScopeDir,
    pub db: &'a Db,
}

/// Ranking knobs; the defaults were chosen with the quality harness
/// (`examples/eval.rs`).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Tuning {
    /// The planner's cost budget per table, in work units of
    /// `terms × (Σ df + docs / 1000)` (see `recall::plan::search_cost`),
    /// for the whole query: each table gets a share in proportion to its
    /// rows, and searches its terms rarest first within that share.
    /// 150,000 is about 30 ms of FTS5 work (mostly bm25) at 1,000,000
    /// passages.
    pub plan_budget: i64,
    /// Ignored: replaced by `plan_budget` (kept so that older config
    /// files still load).
    #[serde(skip_serializing)]
    pub max_terms: Option<usize>,
    /// Candidates fetched from each table.
    pub candidates: usize,
    /// Size of a session hit's window of messages, in characters.
    pub window_chars: usize,
    /// Most hits from one session.
    pub per_session: usize,
    /// Context of a session hit: its neighbouring messages, nearest first,
    /// while each side's added text stays within this many characters (0
    /// turns context off). The best session hit gets `lead_context_chars`
    /// instead.
    pub context_chars: usize,
    /// Context on each side of the best session hit (see `context_chars`).
    pub lead_context_chars: usize,
    /// Session evidence: a session hit's score gains this share of the
    /// mean of its session's next two best hits, so a session with several
    /// matching messages outranks one lucky message.
    pub session_share: f64,
    /// Near-duplicate threshold (Jaccard of word sets).
    pub max_jaccard: f64,
    /// Kind weights.
    pub weight_record: f64,
    pub weight_ticket: f64,
    pub weight_session: f64,
    /// Recency half-life.
    pub half_life_days: f64,
    /// bm25 column weights: records (key, body, tags, aux), chunks (title,
    /// body, aux), tickets (title, body, labels, aux).
    pub record_columns: Vec<f64>,
    pub chunk_columns: Vec<f64>,
    pub ticket_columns: Vec<f64>,
    /// Share of the normalised bm25 score in a hit's score within its list;
    /// the rest is the passage score of the text actually returned. 0.7
    /// beat 0.5 on every set at once (LoCoMo, BEAM, BEAM merged, SciFact;
    /// no category down more than 0.005); 0.8 cost a BEAM category 0.018.
    pub bm25_share: f64,
    /// Calibration across lists: each list's scores are scaled by
    /// `(coverage / best coverage) ^ coverage_power`, where a list's
    /// coverage is how much of the question (idf over all tables) its best
    /// hit matches. 0 turns it off: every list's best hit then scores 1.
    pub coverage_power: f64,
    /// Passage scores: weight of the bonus for query words found near each
    /// other (see `passage::Scorer::with_proximity`; 0 turns it off). 1.0
    /// against 0: BEAM +0.006, BEAM merged +0.010, SciFact +0.001, LoCoMo
    /// -0.003 (2.0 gave the same shape, with SciFact -0.001).
    pub proximity: f64,
    /// Pivoted length normalisation of passage scores (see
    /// `rank::normalise_length`): the slope from 0 (off) to 1 (a score per
    /// word of the list's mean length). 0.75 against 0: LoCoMo +0.005,
    /// BEAM +0.025, BEAM merged +0.030, SciFact +0.000, no category down
    /// more than 0.003. 1.0 gave BEAM +0.037 but SciFact -0.004; 0.5 gave
    /// less everywhere but SciFact (+0.003). Dividing the saturation
    /// constant instead (bm25's own form, `tf / (tf + K)`) gave half the
    /// BEAM gain. Records and session passages; tickets have their own
    /// slope, `ticket_length_norm`.
    pub length_norm: f64,
    /// `length_norm` for ticket lists. A ticket part is a document, not a
    /// turn of a chat: a longer abstract is no more likely to repeat the
    /// question than to answer it, and bm25 (most of the score) already
    /// normalises the same text. 0 against 0.75 on SciFact: test queries
    /// 0.696 both, train queries (809, not used for any other default)
    /// 0.703 against 0.695, the FTS5 floor's 0.701; 0.25 and 0.5 gave
    /// 0.697 on train.
    pub ticket_length_norm: f64,
    /// Answer type: for a question that asks when (`recall::temporal`),
    /// each hit whose text mentions a time is multiplied by
    /// `1 + this × ln(1 / share)`, `share` being the part of the
    /// candidates that mention one; so the lift fades where times are
    /// common (a long history full of dates) and vanishes when every
    /// candidate has one. 0 turns it off. Against 0, on the questions that
    /// ask when: 0.1 LoCoMo +0.013, BEAM +0.028, BEAM merged +0.000; 0.2
    /// +0.022 / +0.028 / -0.006 (whole sets: LoCoMo +0.003, both halves of
    /// its conversations; BEAM +0.002; BEAM merged -0.000); 0.5 +0.030 /
    /// -0.003 / -0.031. A fixed factor (1.5) cost BEAM merged's
    /// questions 0.025.
    pub temporal_boost: f64,
    /// The subject of the question (`recall::subject`): for a question in
    /// the first person, each session hit the user wrote (in a chat with
    /// unnamed speakers) is multiplied by `1 + this × ln(1 / share)`,
    /// `share` being the part of the candidates the user wrote. 0 turns it
    /// off. Against 0: 0.1 BEAM +0.018, BEAM merged +0.022; 0.2 +0.020 /
    /// +0.031; 0.3 +0.030 / +0.034; 0.6 +0.043 / +0.034; LoCoMo (named
    /// speakers) and SciFact (tickets) unchanged. BEAM summarization, whose
    /// evidence is 63% assistant replies, fell 0.015 at 0.2 (to 0.081, its
    /// floor 0.016).
    pub subject_boost: f64,
    /// Periods the question names (`recall::period`: "in March 2024",
    /// "in June", "in 2023"): each hit whose time falls in one is
    /// multiplied by `1 + this × ln(1 / share)`, `share` being the part of
    /// the candidates that do. 0 turns it off. Against 0: 0.2 LoCoMo
    /// +0.002 (its 264 questions that name a month or year: 0.823 ->
    /// 0.836; both halves of its conversations gain), BEAM -0.000, BEAM
    /// merged -0.001, SciFact unchanged; 0.5 +0.003 / -0.001 / -0.002.
    /// BEAM's 19 such questions lose (0.2: -0.013 per conversation,
    /// -0.036 merged): its times are coarse batch anchors, and its
    /// questions name the dates of plans, not of messages. Times relative
    /// to now ("yesterday", "last week", "two days ago": `recall::relative`)
    /// are lifted the same way.
    pub period_boost: f64,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            plan_budget: 150_000,
            max_terms: None,
            candidates: 60,
            window_chars: 800,
            per_session: 5,
            context_chars: 150,
            lead_context_chars: 600,
            session_share: 0.3,
            max_jaccard: 0.8,
            weight_record: 1.0,
            weight_ticket: 0.85,
            weight_session: 0.7,
            half_life_days: 90.0,
            record_columns: vec![4.0, 1.0, 2.0, 1.0],
            chunk_columns: vec![1.0, 1.0, 1.0],
            ticket_columns: vec![2.0, 1.0, 1.5, 1.0],
            bm25_share: 0.7,
            coverage_power: 0.5,
            proximity: 1.0,
            length_norm: 0.75,
            ticket_length_norm: 0.0,
            temporal_boost: 0.2,
            subject_boost: 0.2,
            period_boost: 0.2,
        }
    }
}

/// A recall request.
#[derive(Debug, Clone)]
pub struct Request {
    pub query: String,
    pub limit: usize,
    /// Kinds to search; empty means all.
    pub kinds: Vec<HitKind>,
    pub category: Option<Category>,
    /// Unix seconds bounds on a hit's time.
    pub since: Option<i64>,
    pub until: Option<i64>,
    /// Only chunks of this session.
    pub session: Option<String>,
    /// Cap on the summed text of the hits, in estimated tokens.
    pub max_tokens: Option<usize>,
    /// Injected so ranking and expiry are deterministic in tests.
    pub now: Timestamp,
    pub tuning: Tuning,
    /// Keep each hit's score breakdown ([`super::Explain`]).
    pub explain: bool,
}

impl Request {
    /// A request with default filters and tuning.
    pub fn new(query: impl Into<String>, limit: usize, now: Timestamp) -> Request {
        Request {
            query: query.into(),
            limit,
            kinds: vec![],
            category: None,
            since: None,
            until: None,
            session: None,
            max_tokens: None,
            now,
            tuning: Tuning::default(),
            explain: false,
        }
    }

    fn wants(&self, k: HitKind) -> bool {
        let kind_ok = self.kinds.is_empty() || self.kinds.contains(&k);
        // A category names records; a session id names sessions.
        let cat_ok = self.category.is_none() || k == HitKind::Record;
        let session_ok = self.session.is_none() || k == HitKind::Session;
        kind_ok && cat_ok && session_ok
    }
}

/// Where a returned hit's row lives, for the salience update.
#[derive(Debug, Clone, Copy)]
pub struct Touched {
    pub target: usize,
    pub table: Table,
    pub rowid: i64,
}

/// The result of a recall.
#[derive(Debug, Clone, Serialize)]
pub struct Response {
    pub query: String,
    /// The terms searched (the union over tables), with weights.
    pub terms: Vec<Weighted>,
    pub hits: Vec<Hit>,
    pub timings_ms: BTreeMap<String, f64>,
    #[serde(skip)]
    pub touched: Vec<Touched>,
}

fn ms(t: Instant) -> f64 {
    (t.elapsed().as_secs_f64() * 1e6).round() / 1e3
}

/// Search every target and merge the hits into one ranking.
#[tracing::instrument(level = "debug", skip_all, fields(scopes = targets.len(), query_chars = req.query.len(), limit = req.limit))]
pub fn recall(targets: &[Target], req: &Request) -> Result<Response> {
    let t0 = Instant::now();
    let terms = extract_terms(&req.query);
    let mut timings = BTreeMap::new();
    let mut shown: Vec<Weighted> = Vec::new();
    let (mut plan_ms, mut fetch_ms) = (0.0, 0.0);
    // Every table's counts of the question's words, one probe per word,
    // with the tables' sizes (exact beside the counts, else the largest
    // rowid). One cost budget for the whole query is shared by the tables
    // in proportion to their size: a table ten times larger gets ten times
    // the work, so a large session index cannot be starved by the records
    // and a small record list costs little.
    let tp = Instant::now();
    let mut counts = Vec::with_capacity(targets.len());
    let mut sizes = Vec::with_capacity(targets.len());
    for t in targets {
        let (c, s) = t.db.with_conn(|c| {
            let counts = WordCounts::load(c, &terms)?;
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
    // Plan every table first: the question's weights over all of them
    // calibrate the lists against each other (see `rank::calibrate`).
    let mut plans: Vec<Vec<(Table, Plan)>> = Vec::with_capacity(targets.len());
    for (ti, t) in targets.iter().enumerate() {
        plans.push(t.db.with_conn(|c| {
            let mut out = Vec::new();
            for (i, &(kind, table)) in TABLES.iter().enumerate() {
                if req.wants(kind) {
                    let budget = share(req.tuning.plan_budget, sizes[ti][i], total);
                    out.push((table, plan_with(c, table, &terms, budget, &counts[ti])?));
                }
            }
            Ok(out)
        })?);
    }
    plan_ms += ms(tp);
    for (_, p) in plans.iter().flatten() {
        for w in &p.terms {
            if !shown.iter().any(|s| s.term == w.term) {
                shown.push(w.clone());
            }
        }
    }
    let judge = Scorer::new(&pooled(plans.iter().flatten().map(|(_, p)| p)));
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
            rank::normalise_length(&mut list, slope);
            rank::normalise(&mut list, req.tuning.bm25_share);
            let coverage = coverage(&list, &judge);
            let list = list.into_iter().map(|c| Candidate { target: ti, ..c });
            lists.push((list.collect(), coverage));
        }
    }
    rank::calibrate(&mut lists, req.tuning.coverage_power);
    let mut all: Vec<Candidate> = lists.into_iter().flat_map(|(l, _)| l).collect();
    timings.insert("plan".into(), plan_ms);
    timings.insert("fetch".into(), fetch_ms);
    timings.insert("search".into(), ms(t0));
    let t1 = Instant::now();
    let now = req.now.as_second();
    for c in &mut all {
        rank::boost(c, &req.tuning, now);
    }
    if super::temporal::asks_when(&req.query) {
        rank::answer_type(
            &mut all,
            "time",
            |c| super::temporal::mentions_time(&c.hit.text),
            req.tuning.temporal_boost,
        );
    }
    if super::subject::asks_about_user(&req.query) {
        rank::answer_type(&mut all, "user", |c| c.by_user, req.tuning.subject_boost);
    }
    let periods = super::period::named(&req.query);
    let spans = super::relative::spans(&req.query, req.now);
    if !periods.is_empty() || !spans.is_empty() {
        let in_period = |c: &Candidate| {
            c.hit.updated.is_some_and(|t| {
                periods.iter().any(|p| p.contains(t)) || spans.iter().any(|s| s.contains(t))
            })
        };
        rank::answer_type(&mut all, "period", in_period, req.tuning.period_boost);
    }
    rank::session_evidence(&mut all, req.tuning.session_share);
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
            per_session: req.tuning.per_session,
            max_jaccard: req.tuning.max_jaccard,
            limit: req.limit,
            max_tokens: req.max_tokens,
        },
        &mut expand,
    );
    let mut list = rank::merge_adjacent(list, req.max_tokens);
    // The judge's terms are every table's, as the highlight's are; a
    // snippet only asks which words match, so it can mark them.
    let marker = &judge;
    for c in &mut list {
        c.hit.snippet = marker.snippet(&c.hit.text, 24);
    }
    let (mut hits, touched) = number(list);
    if !req.explain {
        for h in &mut hits {
            h.explain = None;
        }
    }
    timings.insert("rank".into(), ms(t1));
    timings.insert("total".into(), ms(t0));
    shown.sort_by(|a, b| b.weight.total_cmp(&a.weight));
    Ok(Response {
        query: req.query.clone(),
        terms: shown,
        hits,
        timings_ms: timings,
        touched,
    })
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
