//! The floor: plain SQLite FTS5 with `bm25()`, `porter unicode61`, and every
//! distinct word of the question OR-ed. No stop words, no weights, no
//! phrase or proximity logic. A row may name its session, which its hit
//! then carries as `session_id` (the engine's `source.session_id`).

use std::time::Instant;

use anyhow::Result;
use regex::Regex;
use rusqlite::Connection;

use crate::runner::{Hit, Outcome};

/// One row of the floor's table.
pub struct Row {
    /// The id the row covers (a message or doc id).
    pub key: String,
    /// The session holding the row, when the set has sessions.
    pub session: Option<String>,
    /// The searchable text; also what counts against budgets.
    pub body: String,
}

/// One in-memory FTS5 table of [`Row`]s.
pub struct Floor {
    conn: Connection,
    words: Regex,
}

impl Floor {
    /// Index `rows` of `(key, body)`; only `body` is searchable.
    pub fn new(rows: impl IntoIterator<Item = (String, String)>) -> Result<Floor> {
        let rows = rows.into_iter().map(|(key, body)| Row {
            key,
            session: None,
            body,
        });
        Floor::with_sessions(rows)
    }

    /// Index `rows`; only their `body` is searchable.
    pub fn with_sessions(rows: impl IntoIterator<Item = Row>) -> Result<Floor> {
        let mut conn = Connection::open_in_memory()?;
        conn.execute_batch(
            "CREATE VIRTUAL TABLE t USING fts5(key UNINDEXED, session UNINDEXED, body, tokenize='porter unicode61');",
        )?;
        let tx = conn.transaction()?;
        {
            let mut st = tx.prepare("INSERT INTO t(key, session, body) VALUES (?1, ?2, ?3)")?;
            for r in rows {
                st.execute((r.key, r.session, r.body))?;
            }
        }
        tx.commit()?;
        Ok(Floor {
            conn,
            words: Regex::new(r"\w+")?,
        })
    }

    /// The FTS5 expression: each distinct lower-cased `\w+` word quoted and
    /// OR-ed; `None` when the question has no word.
    pub fn match_expr(&self, question: &str) -> Option<String> {
        let lower = question.to_lowercase();
        let mut seen: Vec<&str> = Vec::new();
        for m in self.words.find_iter(&lower) {
            if !seen.contains(&m.as_str()) {
                seen.push(m.as_str());
            }
        }
        let quoted: Vec<String> = seen
            .iter()
            .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
            .collect();
        (!quoted.is_empty()).then(|| quoted.join(" OR "))
    }

    /// The best `limit` rows (all matching rows when `None`), as hits.
    pub fn search(&self, question: &str, limit: Option<usize>) -> Outcome {
        let t0 = Instant::now();
        let result = match self.match_expr(question) {
            Some(expr) => self.run(&expr, limit),
            None => Ok(vec![]),
        };
        let wall_ms = t0.elapsed().as_secs_f64() * 1000.0;
        match result {
            Ok(hits) => Outcome {
                hits,
                engine_ms: Some(wall_ms),
                wall_ms,
                error: None,
            },
            Err(e) => Outcome {
                wall_ms,
                error: Some(e.to_string()),
                ..Outcome::default()
            },
        }
    }

    /// The best `limit` rows whose key `keep` accepts, as hits without
    /// text (for sets scored by key alone: only the keys are read, and
    /// the walk stops at `limit`).
    pub fn search_keys(
        &self,
        question: &str,
        limit: usize,
        mut keep: impl FnMut(&str) -> bool,
    ) -> Outcome {
        let t0 = Instant::now();
        let result = match self.match_expr(question) {
            Some(expr) => (|| {
                let mut st = self
                    .conn
                    .prepare_cached("SELECT key FROM t WHERE t MATCH ?1 ORDER BY bm25(t)")?;
                let mut rows = st.query([&expr])?;
                let mut hits = Vec::new();
                while let Some(row) = rows.next()? {
                    let key: String = row.get(0)?;
                    if keep(&key) {
                        hits.push(Hit::floor(hits.len() + 1, key, None, ""));
                        if hits.len() == limit {
                            break;
                        }
                    }
                }
                Ok::<_, rusqlite::Error>(hits)
            })(),
            None => Ok(vec![]),
        };
        let wall_ms = t0.elapsed().as_secs_f64() * 1000.0;
        match result {
            Ok(hits) => Outcome {
                hits,
                engine_ms: Some(wall_ms),
                wall_ms,
                error: None,
            },
            Err(e) => Outcome {
                wall_ms,
                error: Some(e.to_string()),
                ..Outcome::default()
            },
        }
    }

    fn run(&self, expr: &str, limit: Option<usize>) -> rusqlite::Result<Vec<Hit>> {
        let limit = limit.map_or(-1, |l| l as i64);
        let mut st = self.conn.prepare_cached(
            "SELECT key, session, body FROM t WHERE t MATCH ?1 ORDER BY bm25(t) LIMIT ?2",
        )?;
        let rows = st.query_map((expr, limit), |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        let mut hits = Vec::new();
        for (i, row) in rows.enumerate() {
            let (key, session, body): (String, Option<String>, String) = row?;
            hits.push(Hit::floor(i + 1, key, session, &body));
        }
        Ok(hits)
    }
}
