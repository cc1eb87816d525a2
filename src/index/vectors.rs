//! Vectors beside the FTS5 rows (issue 38, opt-in): the passages,
//! records and ticket parts that have none yet are embedded and stored, a batch per
//! transaction. The pipeline embeds a source's passages on its preparer
//! threads; this pass takes what it did not: records (written by `record`,
//! `remember`, a record sync or a pull), passages pulled from other hosts,
//! and whatever an earlier run left when it was stopped or had no model.
//! A vector goes with its row (`schema/0010_vectors.sql`: deleting the row
//! deletes it), so "has none" is exactly "new or changed since".

use rusqlite::{params, Connection, OptionalExtension};

use crate::error::Result;
use crate::semantic::{quant, Model};

/// Rows embedded and written per transaction.
const BATCH: usize = 256;

/// What [`fill`] embedded.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Filled {
    pub chunks: usize,
    pub records: usize,
    pub tickets: usize,
}

/// The tables that hold vectors: the rows, their text, their vectors.
const TABLES: [(&str, &str); 3] = [
    (
        "SELECT c.rowid, f.body FROM chunks c JOIN chunks_fts f ON f.rowid = c.rowid
         WHERE c.rowid > ?2 AND NOT EXISTS (SELECT 1 FROM chunk_vectors v WHERE v.rowid = c.rowid)
         ORDER BY c.rowid LIMIT ?1",
        "INSERT INTO chunk_vectors(rowid, v) VALUES(?1, ?2)",
    ),
    (
        "SELECT r.rowid, f.body FROM records r JOIN records_fts f ON f.rowid = r.rowid
         WHERE r.rowid > ?2 AND NOT EXISTS (SELECT 1 FROM record_vectors v WHERE v.rowid = r.rowid)
         ORDER BY r.rowid LIMIT ?1",
        "INSERT INTO record_vectors(rowid, v) VALUES(?1, ?2)",
    ),
    // A ticket part is embedded with its title, as it is searched.
    (
        "SELECT t.rowid, f.title || char(10) || f.body FROM tickets t JOIN tickets_fts f ON f.rowid = t.rowid
         WHERE t.rowid > ?2 AND NOT EXISTS (SELECT 1 FROM ticket_vectors v WHERE v.rowid = t.rowid)
         ORDER BY t.rowid LIMIT ?1",
        "INSERT INTO ticket_vectors(rowid, v) VALUES(?1, ?2)",
    ),
];

/// Embed every passage, record and ticket part of the index `conn` writes that has no
/// vector yet. Each batch is its own transaction, so a run stopped
/// half-way keeps what it wrote and the next one goes on.
pub fn fill(conn: &mut Connection, model: &Model) -> Result<Filled> {
    fill_tables(conn, model, &[0, 1, 2])
}

/// Embed the records of the index `conn` writes that have no vector yet:
/// what a record write made (see `Memory::embed_records`), without the
/// passages' scan, which on a large index costs a read of every row.
pub fn fill_records(conn: &mut Connection, model: &Model) -> Result<usize> {
    Ok(fill_tables(conn, model, &[1])?.records)
}

/// Which model made the vectors of the index `conn` reads
/// (`meta.semantic_model`, see `semantic::identity`); `None` before any
/// were made.
pub fn vectors_model(conn: &Connection) -> rusqlite::Result<Option<String>> {
    conn.prepare_cached("SELECT value FROM meta WHERE key = 'semantic_model'")?
        .query_row([], |r| r.get(0))
        .optional()
}

/// The model whose vectors the index `conn` reads holds
/// (`meta.semantic_model`), when one of its records has no vector yet:
/// what a record write leaves for [`fill_records`]. `None` when every
/// record has one, or no model embedded this index yet.
pub fn records_without_vectors(conn: &Connection) -> Result<Option<String>> {
    Ok(conn
        .query_row(
            "SELECT value FROM meta WHERE key = 'semantic_model'
               AND EXISTS (SELECT 1 FROM records r
                           WHERE NOT EXISTS (SELECT 1 FROM record_vectors v WHERE v.rowid = r.rowid))",
            [],
            |r| r.get(0),
        )
        .optional()?)
}

fn fill_tables(conn: &mut Connection, model: &Model, tables: &[usize]) -> Result<Filled> {
    let mut done = [0usize; 3];
    for &n in tables {
        let (select, insert) = TABLES[n];
        // Rows are taken in rowid order from past the last batch, so each
        // batch reads only rows it has not seen.
        let mut after = 0i64;
        loop {
            let tx = crate::store::begin_in_turn(conn)?;
            let rows: Vec<(i64, String)> = tx
                .prepare_cached(select)?
                .query_map(params![BATCH as i64, after], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()?;
            if rows.is_empty() {
                break;
            }
            let texts: Vec<&str> = rows.iter().map(|(_, t)| t.as_str()).collect();
            let vectors = model.embed(&texts)?;
            for ((rowid, _), v) in rows.iter().zip(&vectors) {
                tx.prepare_cached(insert)?
                    .execute(params![rowid, quant::encode(v)])?;
            }
            tx.commit()?;
            done[n] += rows.len();
            after = rows[rows.len() - 1].0;
        }
    }
    Ok(Filled {
        chunks: done[0],
        records: done[1],
        tickets: done[2],
    })
}
