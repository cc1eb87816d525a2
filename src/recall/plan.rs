//! Query planning: weight and select the sanitizer's terms by how
//! discriminative they are in one table, using FTS5's `fts5vocab`.
//!
//! Ranking cost grows with the number of rows the OR query matches, so the
//! plan keeps the most discriminative terms (highest idf, identifiers and
//! phrases boosted) up to a cap, drops terms no document contains, and
//! drops very common words when rarer ones exist.

use rusqlite::{Connection, OptionalExtension};

use super::sanitize::{to_match, Term, TermKind};
use crate::error::Result;
use crate::text::words;

/// The FTS table family a plan is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    Records,
    Chunks,
    Tickets,
}

impl Table {
    fn vocab(self) -> &'static str {
        match self {
            Table::Records => "records_vocab",
            Table::Chunks => "chunks_vocab",
            Table::Tickets => "tickets_vocab",
        }
    }

    fn meta(self) -> &'static str {
        match self {
            Table::Records => "records",
            Table::Chunks => "chunks",
            Table::Tickets => "tickets",
        }
    }
}

/// A term with its statistics in one table.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Weighted {
    #[serde(flatten)]
    pub term: Term,
    /// Documents containing the term (for phrases: of its rarest word).
    pub df: i64,
    /// Weight used for ranking: idf times the kind boost.
    pub weight: f64,
}

/// A planned query for one table.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub terms: Vec<Weighted>,
    /// Rows in the table (approximate: the largest rowid).
    pub docs: i64,
}

impl Plan {
    /// The FTS5 expression, or `None` when no term can match.
    pub fn to_match(&self) -> Option<String> {
        let terms: Vec<Term> = self.terms.iter().map(|w| w.term.clone()).collect();
        to_match(&terms)
    }
}

fn boost(kind: TermKind) -> f64 {
    match kind {
        TermKind::Identifier => 1.6,
        TermKind::Phrase => 1.4,
        TermKind::Word => 1.0,
        TermKind::Stem => 0.6,
    }
}

/// Robertson-Sparck Jones idf, never negative.
pub fn idf(docs: i64, df: i64) -> f64 {
    let (n, d) = (docs.max(1) as f64, df.max(0) as f64);
    ((n - d + 0.5) / (d + 0.5) + 1.0).ln()
}

fn doc_freq(conn: &Connection, vocab: &str, word: &str) -> Result<i64> {
    let sql = format!("SELECT doc FROM {vocab} WHERE term = ?1");
    Ok(conn
        .prepare_cached(&sql)?
        .query_row([word], |r| r.get(0))
        .optional()?
        .unwrap_or(0))
}

/// Weight `terms` by their statistics in `table` and keep at most
/// `max_terms` of them.
pub fn plan(conn: &Connection, table: Table, terms: &[Term], max_terms: usize) -> Result<Plan> {
    let docs: i64 = conn
        .prepare_cached(&format!(
            "SELECT coalesce(max(rowid), 0) FROM {}",
            table.meta()
        ))?
        .query_row([], |r| r.get(0))?;
    if docs == 0 {
        return Ok(Plan::default());
    }
    let mut out = Vec::with_capacity(terms.len());
    for t in terms {
        let mut df = i64::MAX;
        for w in words(&t.text) {
            df = df.min(doc_freq(conn, table.vocab(), w)?);
        }
        if df == 0 || df == i64::MAX {
            continue;
        }
        out.push(Weighted {
            term: t.clone(),
            df,
            weight: idf(docs, df) * boost(t.kind),
        });
    }
    out.sort_by(|a, b| b.weight.total_cmp(&a.weight));
    // Words in more than half of all documents carry almost no signal but
    // make the OR query match most rows; keep them only if nothing else.
    if out.iter().any(|w| w.df * 2 <= docs) {
        out.retain(|w| w.df * 2 <= docs || w.term.kind != TermKind::Word);
    }
    out.truncate(max_terms);
    Ok(Plan { terms: out, docs })
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

    #[test]
    fn rare_terms_outweigh_common_ones_and_unknown_terms_drop() -> Result<()> {
        let c = db();
        for i in 0..10 {
            let body = if i == 3 {
                "the flaky loader test"
            } else {
                "the test passed"
            };
            c.execute(
                "INSERT INTO tickets(source_id, ticket_id, part) VALUES(0, ?1, 0)",
                [i.to_string()],
            )
            .ok();
            c.execute(
                "INSERT INTO tickets_fts(rowid, title, body, labels, aux) VALUES(?1, '', ?2, '', '')",
                rusqlite::params![i + 1, body],
            )?;
        }
        // rowids for the metadata table, so docs is right
        c.execute_batch("PRAGMA foreign_keys=OFF;")?;
        for i in 1..=10 {
            c.execute(
                "INSERT OR IGNORE INTO tickets(rowid, source_id, ticket_id, part) VALUES(?1, 0, 'x', 0)",
                [i],
            )?;
        }
        let p = plan(&c, Table::Tickets, &extract_terms("flaky test zebra"), 8)?;
        let texts: Vec<&str> = p.terms.iter().map(|w| w.term.text.as_str()).collect();
        assert_eq!(texts.first(), Some(&"flaky"));
        assert!(!texts.contains(&"zebra"));
        assert!(
            !texts.contains(&"test"),
            "a word in every row is dropped when rarer ones exist"
        );
        assert!(p.to_match().is_some());
        Ok(())
    }

    #[test]
    fn idf_is_positive_and_decreasing() {
        assert!(idf(100, 1) > idf(100, 50));
        assert!(idf(100, 100) > 0.0);
    }
}
