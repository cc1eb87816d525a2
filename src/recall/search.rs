//! Searching each scope's records and merging the lists.

use std::collections::BTreeMap;
use std::time::Instant;

use jiff::Timestamp;
use rusqlite::{params, Connection};
use serde::Serialize;

use super::hit::{Hit, HitKind, HitSource};
use super::sanitize::{extract_terms, to_match, Term};
use crate::error::Result;
use crate::records::Category;
use crate::store::{Db, ScopeDir};

/// One scope to search.
pub struct Target<'a> {
    pub dir: &'a ScopeDir,
    pub db: &'a Db,
}

/// A recall request.
#[derive(Debug, Clone)]
pub struct Request {
    pub query: String,
    pub limit: usize,
    pub category: Option<Category>,
    /// Injected so ranking and expiry are deterministic in tests.
    pub now: Timestamp,
}

/// The result of a recall.
#[derive(Debug, Clone, Serialize)]
pub struct Response {
    pub query: String,
    pub terms: Vec<Term>,
    pub hits: Vec<Hit>,
    pub timings_ms: BTreeMap<String, f64>,
}

/// bm25 column weights of `records_fts(key, body, tags, aux)`.
const RECORD_WEIGHTS: [f64; 4] = [4.0, 1.0, 2.0, 0.4];

/// Search every target and merge the hits into one ranking.
pub fn recall(targets: &[Target], req: &Request) -> Result<Response> {
    let t0 = Instant::now();
    let terms = extract_terms(&req.query);
    let mut timings = BTreeMap::new();
    let mut hits = Vec::new();
    if let Some(expr) = to_match(&terms) {
        for t in targets {
            let list = t.db.with_conn(|c| search_records(c, t.dir, &expr, req))?;
            hits.extend(normalise(list));
        }
    }
    hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
    hits.truncate(req.limit);
    for (i, h) in hits.iter_mut().enumerate() {
        h.rank = i + 1;
    }
    timings.insert("total".into(), t0.elapsed().as_secs_f64() * 1000.0);
    Ok(Response {
        query: req.query.clone(),
        terms,
        hits,
        timings_ms: timings,
    })
}

/// Scale a list's scores into `(0, 1]` by its best score: bm25 values from
/// different indexes are not comparable, their order within a list is.
fn normalise(mut list: Vec<Hit>) -> Vec<Hit> {
    let max = list.iter().map(|h| h.score).fold(0.0, f64::max);
    if max > 0.0 {
        for h in &mut list {
            h.score /= max;
        }
    }
    list
}

fn search_records(c: &Connection, dir: &ScopeDir, expr: &str, req: &Request) -> Result<Vec<Hit>> {
    let w = RECORD_WEIGHTS;
    // The FTS subquery has its own LIMIT; metadata filters stay outside it.
    let sql = format!(
        "SELECT r.id, r.key, r.category, r.path, r.pinned, r.importance, r.updated, f.score, f.snip, f.body
         FROM (SELECT rowid, -bm25(records_fts, {}, {}, {}, {}) AS score,
                      snippet(records_fts, 1, char(2), char(3), '…', 16) AS snip, body
               FROM records_fts WHERE records_fts MATCH ?1
               ORDER BY bm25(records_fts, {}, {}, {}, {}) LIMIT ?2) f
         JOIN records r ON r.rowid = f.rowid
         WHERE r.status = 'active' AND (r.expires IS NULL OR r.expires > ?3)
           AND (?4 IS NULL OR r.category = ?4)
         ORDER BY f.score DESC",
        w[0], w[1], w[2], w[3], w[0], w[1], w[2], w[3]
    );
    let fetch = (req.limit * 4 + 32) as i64;
    let mut st = c.prepare_cached(&sql)?;
    let rows = st.query_map(
        params![
            expr,
            fetch,
            req.now.as_second(),
            req.category.map(|c| c.as_str())
        ],
        |r| {
            let rel: String = r.get(3)?;
            Ok(Hit {
                rank: 0,
                id: r.get(0)?,
                title: r.get(1)?,
                category: Some(r.get(2)?),
                source: HitSource {
                    path: Some(dir.root.join(rel).to_string_lossy().into_owned()),
                    ..HitSource::default()
                },
                pinned: r.get(4)?,
                importance: r.get(5)?,
                updated: Some(r.get(6)?),
                score: r.get(7)?,
                snippet: r.get(8)?,
                text: r.get(9)?,
                kind: HitKind::Record,
                scope: dir.scope,
            })
        },
    )?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}
