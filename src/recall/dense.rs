//! Hybrid recall's dense side (issue 38): the question's vector against
//! the vectors stored beside the FTS5 rows, used to *rescue* what the
//! words miss, never to reorder what they found.
//!
//! Plain reciprocal rank fusion of the two lists loses on LoCoMo (the
//! model alone ranks far below the lexical ranking, and fusing by rank
//! pushes good lexical hits down). So the lexical ranking stays as it is
//! and the dense side may add at most [`Rescue::most`] hits right after
//! its top [`Rescue::after`]: passages or records whose cosine with the
//! question is at least [`Rescue::min_cosine`] and that the words did not
//! rank there. A rescued hit the lexical side also found lower down moves
//! up to that place; one it did not find at all is read from its table,
//! through the same filters as the lexical candidates (session, excluded
//! session, times, category, archived and expired records).
//!
//! The vectors are scanned whole: a brute-force pass over the quantised
//! BLOBs of the scope (`semantic::quant`'s form; the scale cancels in the
//! cosine), keeping those above the bar. The recall core never loads a
//! model: the front end embeds the question and hands the vector over in
//! [`Request::dense`](super::Request::dense).

use std::collections::HashMap;

use rusqlite::{named_params, Connection, OptionalExtension};

use super::candidates::{self, Candidate};
use super::hit::{Dense, Explain, HitKind};
use super::passage::Scorer;
use super::plan::Table;
use super::request::{Request, Target};
use crate::error::Result;
use crate::store::flat_vectors::{Copy, Stamp, Writer};
use crate::store::ScopeDir;

/// The schema that holds `chunk_vectors` and `record_vectors`, and the
/// one that adds `ticket_vectors`.
const VECTORS_SCHEMA: i64 = 10;
const TICKET_VECTORS_SCHEMA: i64 = 11;

/// Best dense rows kept per table and scope before the filters: enough
/// for [`Rescue::most`] to survive a session filter's losses.
const KEEP: usize = 64;

/// How many hits the dense side may add, where, and how similar they must
/// be (`[semantic] min_cosine`, `rescue`, `rescue_after`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rescue {
    /// The cosine a rescued hit needs at least.
    pub min_cosine: f64,
    /// And how far above the scope's usual cosine it must stand, in
    /// standard deviations of the cosines of every vector of its table
    /// with the question: a static model's cosines crowd together (0.75 to
    /// 0.85 for a whole conversation), so a fixed bar admits everything.
    pub min_z: f64,
    /// Most hits rescued.
    pub most: usize,
    /// They are placed right after this many of the lexical ranking's best.
    pub after: usize,
}

impl Default for Rescue {
    fn default() -> Rescue {
        Rescue {
            min_cosine: 0.5,
            min_z: 2.0,
            most: 3,
            after: 3,
        }
    }
}

/// The question's vector and how it may rescue.
#[derive(Debug, Clone, PartialEq)]
pub struct DenseQuery {
    /// The question embedded by the model the index's vectors were made
    /// with (unit length or not: it is scaled here).
    pub vector: Vec<f32>,
    /// The model's identity (see `semantic::identity`): an index whose
    /// vectors another model made (`meta.semantic_model`) is not scanned.
    pub model: String,
    pub rescue: Rescue,
}

/// A row the dense side scored: which scope, which table, which row.
type RowKey = (usize, Table, i64);

/// A row and its cosine with the question.
type Scored = (RowKey, f32);

/// What [`rescue`] did, for the timings and the "no vectors" note.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Rescued {
    /// Vectors compared with the question.
    pub scanned: usize,
    /// Hits added or moved up.
    pub rescued: usize,
    /// Indexes not scanned because another model made their vectors.
    pub other_model: usize,
}

/// Add the dense side to the lexical candidates `all` (already lifted):
/// each candidate's cosine is noted for `--explain`, and up to
/// [`Rescue::most`] rows the words missed or ranked low are scored to
/// stand right after the lexical top [`Rescue::after`].
pub fn rescue(
    targets: &[Target],
    req: &Request,
    dense: &DenseQuery,
    scorer: &Scorer,
    all: &mut Vec<Candidate>,
) -> Result<Rescued> {
    let q = Probe::new(&dense.vector);
    let r = dense.rescue;
    let mut out = Rescued::default();
    // Rows above the bar (`scan`), and the lexical candidates' cosines.
    let (mut near, mut known): (Vec<Scored>, Vec<Scored>) = (vec![], vec![]);
    for (ti, t) in targets.iter().enumerate() {
        let found = t.db.with_conn(|c| {
            let schema = crate::store::schema_version(c)?;
            if schema < VECTORS_SCHEMA {
                return Ok((0, vec![], vec![], false));
            }
            // Vectors of another model are in another space: a cosine
            // with this question's would mean nothing.
            if crate::index::vectors_model(c)?.is_some_and(|m| m != dense.model) {
                return Ok((0, vec![], vec![], true));
            }
            let mut scanned = 0;
            let mut rows = Vec::new();
            for table in [Table::Records, Table::Chunks, Table::Tickets] {
                let held = table != Table::Tickets || schema >= TICKET_VECTORS_SCHEMA;
                // Nothing to rescue (the prompt hook's gate): the
                // candidates' own cosines are all that is read.
                if held && r.most > 0 && req.wants(kind_of(table)) {
                    let (n, best) = scan(c, t.dir, table, &q, r)?;
                    scanned += n;
                    rows.extend(best.into_iter().map(|(id, cos)| ((ti, table, id), cos)));
                }
            }
            // The lexical candidates' own cosines, for --explain.
            let mut own = Vec::new();
            let held = |t: Table| t != Table::Tickets || schema >= TICKET_VECTORS_SCHEMA;
            for cand in all.iter().filter(|c| c.target == ti && held(c.table)) {
                if let Some(cos) = cosine_of(c, cand.table, cand.rowid, &q)? {
                    own.push(((ti, cand.table, cand.rowid), cos));
                }
            }
            // Without a scan, the vectors compared are the candidates'.
            let scanned = if r.most == 0 { own.len() } else { scanned };
            Ok((scanned, rows, own, false))
        })?;
        out.other_model += usize::from(found.3);
        out.scanned += found.0;
        near.extend(found.1);
        known.extend(found.2);
    }
    let cosines: HashMap<RowKey, f32> = near.iter().chain(&known).copied().collect();
    for c in all.iter_mut() {
        let Some(&cos) = cosines.get(&(c.target, c.table, c.rowid)) else {
            continue;
        };
        c.hit.cosine = Some(f64::from(cos));
        if let Some(e) = c.hit.explain.as_mut() {
            e.dense = Some(Dense {
                cosine: f64::from(cos),
                rescued: false,
            });
        }
    }
    if r.most == 0 {
        return Ok(out);
    }
    // The lexical ranking as it stands, best first.
    let mut order: Vec<usize> = (0..all.len()).collect();
    order.sort_by(|&a, &b| all[b].hit.score.total_cmp(&all[a].hit.score));
    let top: Vec<RowKey> = order.iter().take(r.after).map(|&i| key(&all[i])).collect();
    let at = |n: usize| order.get(n).map(|&i| all[i].hit.score);
    // The place after the top `after`: below the last of them, above the
    // one after it. With no lexical hit at all, the rescued stand alone.
    let above = at(r.after.saturating_sub(1).min(order.len().saturating_sub(1))).unwrap_or(1.0);
    let below = at(r.after).unwrap_or(0.0).min(above);
    let mut wanted: Vec<(RowKey, f32)> =
        near.into_iter().filter(|(k, _)| !top.contains(k)).collect();
    wanted.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0 .2.cmp(&b.0 .2)));
    wanted.dedup_by_key(|(k, _)| *k);
    let index: HashMap<RowKey, usize> = all.iter().enumerate().map(|(i, c)| (key(c), i)).collect();
    let mut placed = 0;
    for (k, cos) in wanted {
        if placed == r.most {
            break;
        }
        let i = match index.get(&k) {
            Some(&i) => i,
            None => {
                let (ti, table, rowid) = k;
                let t = &targets[ti];
                let loaded =
                    t.db.with_conn(|c| load(c, t.dir, table, rowid, scorer, req))?;
                let Some(mut cand) = loaded else {
                    continue;
                };
                cand.target = ti;
                all.push(cand);
                all.len() - 1
            }
        };
        placed += 1;
        // Strictly between `above` and `below`, the most similar first.
        let score = above - (above - below) * placed as f64 / (r.most + 1) as f64;
        let c = &mut all[i];
        c.hit.score = score;
        c.hit.cosine = Some(f64::from(cos));
        let e = c.hit.explain.get_or_insert_with(Explain::default);
        e.dense = Some(Dense {
            cosine: f64::from(cos),
            rescued: true,
        });
    }
    out.rescued = placed;
    Ok(out)
}

fn key(c: &Candidate) -> RowKey {
    (c.target, c.table, c.rowid)
}

fn kind_of(table: Table) -> HitKind {
    match table {
        Table::Records => HitKind::Record,
        Table::Chunks => HitKind::Session,
        Table::Tickets => HitKind::Ticket,
    }
}

/// The vectors' table of `table` (tickets have none).
fn vectors(table: Table) -> Option<&'static str> {
    match table {
        Table::Records => Some("record_vectors"),
        Table::Chunks => Some("chunk_vectors"),
        Table::Tickets => Some("ticket_vectors"),
    }
}

/// The question as the scan reads it: its values quantised to signed
/// bytes like the stored vectors, and their norm, so each comparison is
/// two integer sums over bytes (which the compiler vectorises) instead of
/// a float conversion per value.
pub struct Probe {
    values: Vec<i8>,
    norm: f32,
    dot: Dot,
}

impl Probe {
    /// `v` (any length, any scale) as a probe.
    pub fn new(v: &[f32]) -> Probe {
        let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
        let values: Vec<i8> = v
            .iter()
            .map(|x| match max > 0.0 && max.is_finite() {
                true => (x / max * 127.0).round().clamp(-127.0, 127.0) as i8,
                false => 0,
            })
            .collect();
        let norm = values.iter().map(|&x| i32::from(x).pow(2)).sum::<i32>() as f32;
        Probe {
            values,
            norm: norm.sqrt(),
            dot: best_dot(),
        }
    }
}

/// The cosine of the question with a stored BLOB: the scale cancels, so
/// the signed bytes are read as they are. `None` for a BLOB of another
/// dimension (a model changed since indexing), a damaged one, or zeros.
pub fn cosine_stored(q: &Probe, blob: &[u8]) -> Option<f32> {
    let (_, values) = blob.split_first_chunk::<4>()?;
    if values.len() != q.values.len() {
        return None;
    }
    cosine_with(q, values, squared(values))
}

/// The sum of a stored vector's squared values (signed bytes).
fn squared(values: &[u8]) -> u32 {
    values
        .iter()
        .map(|&b| i32::from(b as i8).pow(2))
        .sum::<i32>() as u32
}

/// The cosine of `q` with stored values (signed bytes, as many as the
/// question's) whose squares sum to `norm`: the one computation both the
/// SQLite scan and a flat copy's scan make, so they agree to the bit.
fn cosine_with(q: &Probe, values: &[u8], norm: u32) -> Option<f32> {
    if q.norm == 0.0 || norm == 0 {
        return None;
    }
    Some((q.dot)(&q.values, values) as f32 / (q.norm * (norm as f32).sqrt()))
}

/// The dot product of the question's bytes with a stored vector's. Integer
/// sums are exact in any order, so every variant gives the same number.
type Dot = fn(&[i8], &[u8]) -> i32;

#[inline(always)]
fn dot_plain(q: &[i8], v: &[u8]) -> i32 {
    q.iter()
        .zip(v)
        .map(|(&x, &b)| i32::from(x) * i32::from(b as i8))
        .sum()
}

/// The same loop compiled for AVX2, which widens and multiplies 16 bytes
/// at a time where the baseline x86-64 target (SSE2) takes 8 in several
/// more steps: the scan's arithmetic was 107 ns a vector of 384 bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dot_avx2(q: &[i8], v: &[u8]) -> i32 {
    dot_plain(q, v)
}

/// The fastest [`Dot`] this CPU runs.
fn best_dot() -> Dot {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: this CPU has AVX2, checked just above.
        return |q, v| unsafe { dot_avx2(q, v) };
    }
    |q, v| dot_plain(q, v)
}

/// Every vector of `table` compared with `q`: the best [`KEEP`] that
/// clear both of `r`'s bars (see [`Rescue::min_z`]), with their cosines;
/// also how many were compared.
///
/// The vectors are read from the table's flat copy beside the index when
/// it holds exactly the table's rows (`store::flat_vectors`); else through
/// SQLite, writing a fresh copy for the next question as they go. Both
/// give the same rows and cosines.
fn scan(
    c: &Connection,
    dir: &ScopeDir,
    table: Table,
    q: &Probe,
    r: Rescue,
) -> Result<(usize, Vec<(i64, f32)>)> {
    let Some(name) = vectors(table) else {
        return Ok((0, vec![]));
    };
    let dim = q.values.len();
    // The stamp and the rows are read in one snapshot, so a copy written
    // from these rows is stamped with their count.
    c.execute_batch("SAVEPOINT dense_scan")?;
    let scanned = (|| -> Result<Seen> {
        let stamp = Stamp::of(c, name)?;
        if let Some(copy) = stamp
            .as_ref()
            .and_then(|s| Copy::open_kept(dir, name, s, dim))
        {
            // Split between the threads: the scan is arithmetic over a
            // mapped file, and the sums are exact in any order.
            use rayon::prelude::*;
            return Ok(copy
                .par_records()
                .fold(
                    || Seen::new(r),
                    |mut seen, (rowid, norm, values)| {
                        seen.add(rowid, cosine_with(q, values, norm));
                        seen
                    },
                )
                .reduce(|| Seen::new(r), Seen::merge));
        }
        let mut seen = Seen::new(r);
        let mut copy = stamp.and_then(|s| Writer::create(dir, name, s, dim));
        let mut st = c.prepare_cached(&format!("SELECT rowid, v FROM {name}"))?;
        let mut rows = st.query([])?;
        while let Some(row) = rows.next()? {
            let Ok(blob) = row.get_ref(1)?.as_blob() else {
                continue;
            };
            let Some((_, values)) = blob.split_first_chunk::<4>() else {
                continue;
            };
            if values.len() != dim {
                continue;
            }
            let rowid = row.get::<_, i64>(0)?;
            let norm = squared(values);
            seen.add(rowid, cosine_with(q, values, norm));
            if let Some(w) = &mut copy {
                if w.push(rowid, norm, values).is_err() {
                    copy = None;
                }
            }
        }
        if let Some(Err(e)) = copy.map(Writer::finish) {
            tracing::debug!(
                "no flat copy of {name} written in {}: {e}",
                dir.root.display()
            );
        }
        Ok(seen)
    })();
    c.execute_batch("RELEASE dense_scan")?;
    Ok(scanned?.best())
}

/// Cosines are summed as integers of this many units per 1.0 (truncated:
/// 0.000015 apart), so the spread of a table's cosines is the same number
/// however its rows are split between threads and in whatever order they
/// are added. A square is at most 2^32 units: a sum of them fits 2^31 rows.
const UNITS: f32 = 65_536.0;

/// One of the best rows: its cosine, then the lower rowid first.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Ranked(f32, i64);

impl Eq for Ranked {}

impl Ord for Ranked {
    fn cmp(&self, o: &Ranked) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0).then(o.1.cmp(&self.1))
    }
}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, o: &Ranked) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

/// The rows a scan compared: how many, the spread of their cosines, and
/// the best [`KEEP`] of them. Those are all the answer needs: it is the
/// best `KEEP` of the rows above a bar on the same cosine, which are the
/// best `KEEP` overall cut at the bar.
struct Seen {
    r: Rescue,
    n: usize,
    sum: i64,
    squares: u64,
    /// The best rows so far, the worst on top.
    best: std::collections::BinaryHeap<std::cmp::Reverse<Ranked>>,
    /// The worst cosine kept once [`KEEP`] are: a row below it is not.
    floor: f32,
}

impl Seen {
    fn new(r: Rescue) -> Seen {
        Seen {
            r,
            n: 0,
            sum: 0,
            squares: 0,
            best: std::collections::BinaryHeap::with_capacity(KEEP + 1),
            floor: f32::NEG_INFINITY,
        }
    }

    /// One row and its cosine (`None`: a row that compares with nothing).
    fn add(&mut self, rowid: i64, cos: Option<f32>) {
        let Some(cos) = cos else { return };
        let units = (cos * UNITS) as i64;
        self.sum += units;
        self.squares += units.unsigned_abs() * units.unsigned_abs();
        self.n += 1;
        if cos >= self.floor && f64::from(cos) >= self.r.min_cosine {
            self.keep(Ranked(cos, rowid));
        }
    }

    fn keep(&mut self, row: Ranked) {
        if self.best.len() < KEEP {
            self.best.push(std::cmp::Reverse(row));
        } else if self.best.peek().is_some_and(|w| row > w.0) {
            self.best.pop();
            self.best.push(std::cmp::Reverse(row));
        } else {
            return;
        }
        if self.best.len() == KEEP {
            self.floor = self.best.peek().map_or(f32::NEG_INFINITY, |w| w.0 .0);
        }
    }

    /// Both parts' rows as one.
    fn merge(mut self, other: Seen) -> Seen {
        self.n += other.n;
        self.sum += other.sum;
        self.squares += other.squares;
        for row in other.best {
            self.keep(row.0);
        }
        self
    }

    /// How many were compared, and the best [`KEEP`] over both bars.
    fn best(self) -> (usize, Vec<(i64, f32)>) {
        let units = f64::from(UNITS);
        let (sum, squares) = (
            self.sum as f64 / units,
            self.squares as f64 / (units * units),
        );
        let bar = bar(self.r, self.n, sum, squares);
        // Sorted by `Reverse`: the best first.
        let best = self
            .best
            .into_sorted_vec()
            .into_iter()
            .map(|r| r.0)
            .filter(|r| f64::from(r.0) >= bar)
            .map(|Ranked(cos, rowid)| (rowid, cos))
            .collect();
        (self.n, best)
    }
}

/// The cosine a row of a table of `n` vectors, whose cosines with the
/// question sum to `sum` (their squares to `squares`), must reach.
fn bar(r: Rescue, n: usize, sum: f64, squares: f64) -> f64 {
    if n < 2 {
        return r.min_cosine;
    }
    let mean = sum / n as f64;
    let sd = (squares / n as f64 - mean * mean).max(0.0).sqrt();
    r.min_cosine.max(mean + r.min_z * sd)
}

/// The cosine of one stored row with `q`, when it has a vector.
fn cosine_of(c: &Connection, table: Table, rowid: i64, q: &Probe) -> Result<Option<f32>> {
    let Some(name) = vectors(table) else {
        return Ok(None);
    };
    let blob: Option<Vec<u8>> = c
        .prepare_cached(&format!("SELECT v FROM {name} WHERE rowid = ?1"))?
        .query_row([rowid], |r| r.get(0))
        .optional()?;
    Ok(blob.and_then(|b| cosine_stored(q, &b)))
}

/// The candidate of one row the words did not find, when it passes the
/// request's filters.
fn load(
    c: &Connection,
    dir: &ScopeDir,
    table: Table,
    rowid: i64,
    scorer: &Scorer,
    req: &Request,
) -> Result<Option<Candidate>> {
    match table {
        Table::Records => load_record(c, dir, rowid, scorer, req),
        Table::Chunks => load_chunk(c, dir, rowid, scorer, req),
        Table::Tickets => load_ticket(c, dir, rowid, scorer, req),
    }
}

/// A ticket part, shown as `candidates::tickets` shows one, if it is of
/// the request's time span.
fn load_ticket(
    c: &Connection,
    dir: &ScopeDir,
    rowid: i64,
    scorer: &Scorer,
    req: &Request,
) -> Result<Option<Candidate>> {
    let mut st = c.prepare_cached(
        "SELECT t.rowid, t.ticket_id, t.part, NULL, t.created, t.updated, t.hits, t.last_hit, s.path, 0.0, b.body, b.title
         FROM tickets t
         JOIN tickets_fts b ON b.rowid = t.rowid
         JOIN sources s ON s.id = t.source_id
         WHERE t.rowid = :rowid
           AND (:since IS NULL OR coalesce(t.updated, t.created) >= :since)
           AND (:until IS NULL OR coalesce(t.created, t.updated) <= :until)",
    )?;
    let window_chars = req.tuning.window_chars;
    let found = st
        .query_row(
            named_params! { ":rowid": rowid, ":since": req.since, ":until": req.until },
            |r| candidates::ticket(r, dir, scorer, window_chars),
        )
        .optional()?;
    Ok(found)
}

/// A record, in the columns `candidates::record` reads (bm25 0: the words
/// did not find it), if it is active, unexpired, and of the request's
/// category and time span.
fn load_record(
    c: &Connection,
    dir: &ScopeDir,
    rowid: i64,
    scorer: &Scorer,
    req: &Request,
) -> Result<Option<Candidate>> {
    let mut st = c.prepare_cached(
        "SELECT r.rowid, r.id, r.key, r.category, r.path, r.pinned, r.importance, r.updated, r.hits, r.last_hit, 0.0, b.body,
                r.status, r.expires, r.created
         FROM records r JOIN records_fts b ON b.rowid = r.rowid
         WHERE r.rowid = :rowid AND r.status = 'active' AND (r.expires IS NULL OR r.expires > :now)
           AND (:category IS NULL OR r.category = :category)
           AND (:since IS NULL OR r.updated >= :since) AND (:until IS NULL OR r.updated <= :until)",
    )?;
    let category = req.category.map(|c| c.as_str().to_string());
    let found = st
        .query_row(
            named_params! {
                ":rowid": rowid, ":now": req.now.as_second(), ":category": category,
                ":since": req.since, ":until": req.until,
            },
            |r| candidates::record(r, dir, scorer),
        )
        .optional()?;
    Ok(found)
}

/// A session passage, shown as `candidates::chunks` shows one, if it
/// passes the request's session, excluded session and time span.
fn load_chunk(
    c: &Connection,
    dir: &ScopeDir,
    rowid: i64,
    scorer: &Scorer,
    req: &Request,
) -> Result<Option<Candidate>> {
    let (did, parent) = candidates::did_columns(c)?;
    let mut st = c.prepare_cached(&format!(
        "SELECT c.rowid, c.session_id, c.seq, c.spans,
                coalesce(c.first_ts, c.last_ts, ss.first_ts), coalesce(c.last_ts, c.first_ts, ss.first_ts),
                c.hits, c.last_hit, s.path, 0.0, b.body, b.title, c.roles, c.speakers, ss.work,
                (SELECT {parent} FROM sessions p
                 WHERE p.session_id = ss.parent_id AND p.parent_id IS NULL AND p.title <> ''
                 LIMIT 1),
                {did}
         FROM chunks c
         JOIN chunks_fts b ON b.rowid = c.rowid
         JOIN sources s ON s.id = c.source_id
         LEFT JOIN sessions ss ON ss.source_id = c.source_id
         WHERE c.rowid = :rowid
           AND (:session IS NULL OR c.session_id = :session)
           AND (:exclude IS NULL OR NOT (c.session_id = :exclude
                OR (c.session_id >= :exclude || '/agent-' AND c.session_id < :exclude || '/agent.')
                OR (:echo IS NOT NULL
                    AND c.rowid IN (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH :echo))))
           AND (:since IS NULL OR coalesce(c.last_ts, c.first_ts, ss.last_ts, ss.first_ts) >= :since)
           AND (:until IS NULL OR coalesce(c.first_ts, c.last_ts, ss.first_ts) <= :until)
         LIMIT 1"
    ))?;
    let window_chars = req.tuning.window_chars;
    let found = st
        .query_row(
            named_params! {
                ":rowid": rowid, ":session": req.session, ":exclude": req.exclude_session,
                ":echo": req.exclude_session.as_deref().and_then(super::filter::echo),
                ":since": req.since, ":until": req.until,
            },
            |r| candidates::chunk(r, dir, scorer, window_chars),
        )
        .optional()?;
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::semantic::quant;

    #[test]
    fn a_stored_vectors_cosine_is_the_f32_ones_within_quantisation() {
        let a: Vec<f32> = (0..64)
            .map(|i| ((i * 7 % 13) as f32 - 6.0) / 10.0)
            .collect();
        let b: Vec<f32> = (0..64)
            .map(|i| ((i * 5 % 11) as f32 - 5.0) / 10.0)
            .collect();
        let q = Probe::new(&a);
        let exact = crate::semantic::cosine(&a, &b);
        let stored = cosine_stored(&q, &quant::encode(&b)).unwrap();
        assert!((exact - stored).abs() < 0.02, "{exact} {stored}");
        assert!((cosine_stored(&q, &quant::encode(&a)).unwrap() - 1.0).abs() < 0.02);
        // A zero question compares with nothing.
        assert_eq!(
            cosine_stored(&Probe::new(&[0.0; 64]), &quant::encode(&b)),
            None
        );
        // Another dimension, a damaged BLOB, zeros: no cosine.
        assert_eq!(cosine_stored(&q, &quant::encode(&b[..32])), None);
        assert_eq!(cosine_stored(&q, &[1, 2]), None);
        assert_eq!(cosine_stored(&q, &quant::encode(&[0.0; 64])), None);
    }

    /// The flat copy (stop 46): the first scan reads SQLite and writes the
    /// copy, the next reads the copy and finds the same rows and cosines;
    /// a vector added or removed since makes the copy stale, and the scan
    /// reads SQLite again, seeing the change, and writes a new one.
    #[test]
    fn a_scan_of_the_flat_copy_finds_what_sqlite_finds_and_a_change_retires_it() -> Result<()> {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ScopeDir {
            scope: crate::store::Scope::Project,
            root: tmp.path().to_path_buf(),
        };
        let mut c = Connection::open(dir.index_path())?;
        crate::store::migrate_for_tests(&mut c);
        c.execute_batch("PRAGMA foreign_keys=OFF;")?;
        let dim = 16;
        let vector = |i: usize| -> Vec<f32> {
            (0..dim)
                .map(|j| (((i * 31 + j * 17) % 23) as f32 - 11.0) / 10.0)
                .collect()
        };
        let add = |i: usize| -> Result<()> {
            c.execute(
                "INSERT INTO chunk_vectors(rowid, v) VALUES(?1, ?2)",
                rusqlite::params![i as i64, quant::encode(&vector(i))],
            )?;
            Ok(())
        };
        for i in 1..=200 {
            add(i)?;
        }
        // A bar everything clears, so every row comes back.
        let r = Rescue {
            min_cosine: -1.0,
            min_z: -10.0,
            ..Rescue::default()
        };
        let q = Probe::new(&vector(7));
        let copy = tmp.path().join("vectors/chunk_vectors.bin");
        let first = scan(&c, &dir, Table::Chunks, &q, r)?;
        assert!(copy.exists(), "the first scan writes the copy");
        assert_eq!(first.0, 200);
        assert_eq!(first.1[0].0, 7, "{:?}", &first.1[..3]);
        // Read from the copy (the table is emptied behind its back, with
        // the triggers off so its stamp stays): the same rows and cosines.
        let written = std::fs::read(&copy).unwrap();
        c.execute_batch(
            "DROP TRIGGER chunk_vectors_delete; DELETE FROM chunk_vectors;
             CREATE TRIGGER chunk_vectors_delete AFTER DELETE ON chunk_vectors BEGIN
                 UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)
                 WHERE key = 'vectors_epoch_chunk_vectors';
             END;",
        )?;
        assert_eq!(scan(&c, &dir, Table::Chunks, &q, r)?, first);
        // A vector added: the copy is stale, SQLite (now one row) answers.
        c.execute(
            "INSERT INTO chunk_vectors(rowid, v) VALUES(500, ?1)",
            [quant::encode(&vector(7))],
        )?;
        let after = scan(&c, &dir, Table::Chunks, &q, r)?;
        assert_eq!(after.0, 1);
        assert_eq!(after.1[0].0, 500);
        assert_ne!(std::fs::read(&copy).unwrap(), written, "a new copy");
        assert_eq!(
            scan(&c, &dir, Table::Chunks, &q, r)?,
            after,
            "from the new copy"
        );
        Ok(())
    }

    /// The copy's scan is split between threads (stop 47): however the
    /// rows are split and merged, the count, the bar and the best rows
    /// (ties by rowid) are the same as one pass over them in order.
    #[test]
    fn a_scan_split_between_threads_finds_what_one_pass_finds() {
        let r = Rescue {
            min_cosine: 0.2,
            min_z: 1.0,
            ..Rescue::default()
        };
        // 1,000 rows, many with equal cosines, a few with none.
        let rows: Vec<(i64, Option<f32>)> = (0..1000)
            .map(|i| {
                let cos = ((i * 7919) % 211) as f32 / 211.0;
                (i, (i % 97 != 0).then_some(cos))
            })
            .collect();
        let one = |rows: &[(i64, Option<f32>)]| {
            let mut seen = Seen::new(r);
            for &(rowid, cos) in rows {
                seen.add(rowid, cos);
            }
            seen
        };
        let whole = one(&rows).best();
        assert_eq!(whole.0, 1000 - 11);
        assert!(!whole.1.is_empty() && whole.1.len() <= KEEP);
        for cuts in [vec![1], vec![500], vec![3, 10, 999], vec![250, 500, 750]] {
            let mut parts = Vec::new();
            let mut from = 0;
            for &to in cuts.iter().chain(std::iter::once(&rows.len())) {
                parts.push(one(&rows[from..to]));
                from = to;
            }
            // Merged in reverse, as rayon may.
            let merged = parts.into_iter().rev().reduce(Seen::merge).unwrap().best();
            assert_eq!(merged, whole, "cut at {cuts:?}");
        }
        // The same through the parallel iterator over a real split.
        use rayon::prelude::*;
        let par = rows
            .par_iter()
            .with_min_len(7)
            .fold(
                || Seen::new(r),
                |mut s, &(rowid, cos)| {
                    s.add(rowid, cos);
                    s
                },
            )
            .reduce(|| Seen::new(r), Seen::merge)
            .best();
        assert_eq!(par, whole);
    }

    #[test]
    fn the_bar_is_the_cosine_floor_or_the_scopes_spread_whichever_is_higher() {
        let r = Rescue {
            min_cosine: 0.5,
            min_z: 2.0,
            ..Rescue::default()
        };
        // Cosines 0.7 and 0.9 (mean 0.8, sd 0.1): 0.8 + 2 x 0.1.
        let (sum, squares) = (0.7 + 0.9, 0.49 + 0.81);
        assert!((bar(r, 2, sum, squares) - 1.0).abs() < 1e-9);
        // Cosines 0.1 and 0.3: the floor.
        assert_eq!(bar(r, 2, 0.4, 0.1), 0.5);
        // One vector has no spread.
        assert_eq!(bar(r, 1, 0.9, 0.81), 0.5);
    }
}
