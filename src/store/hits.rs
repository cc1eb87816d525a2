//! The salience log: how often a hit was returned, and when last.
//!
//! The read path never writes to the database: a query appends one line per
//! returned row to `hits.log` beside the scope's `index.db` (one `write`
//! with `O_APPEND`, no fsync, no lock), and the next write job folds the
//! log into the `hits`/`last_hit` columns ([`fold_hits`], run when an index
//! is opened for writing).
//!
//! The trade-off: counters lag until the next write job (`recall index`,
//! a record write, a session-end hook); a crash can lose the last lines of
//! the log; a row deleted and its rowid reused before the fold gets the old
//! row's count. Salience is a small ranking boost, so none of this matters
//! as much as a query that never waits for, or blocks, `recall index`.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use rusqlite::Connection;

use super::Table;
use crate::error::Result;

/// The log beside an index file.
pub fn hits_log(index: &Path) -> PathBuf {
    index.with_file_name("hits.log")
}

/// A line is at most this long; longer or malformed lines are skipped.
const MAX_LINE: usize = 64;

/// Logs folded per write job at most (older lines beyond are dropped), so
/// a log that grew unboundedly cannot stall a writer.
const MAX_FOLD_BYTES: u64 = 8 << 20;

fn table_code(t: Table) -> &'static str {
    match t {
        Table::Records => "r",
        Table::Chunks => "c",
        Table::Tickets => "t",
    }
}

/// Note one return of each `(table, rowid)` for the index at `index`.
/// Never fails and never waits: errors are logged at debug level.
pub fn note_hits(index: &Path, rows: &[(Table, i64)], now: i64) {
    let mut lines = String::new();
    for (t, rowid) in rows {
        lines.push_str(&format!("{} {rowid} {now}\n", table_code(*t)));
    }
    if lines.is_empty() {
        return;
    }
    let append = super::private_file()
        .append(true)
        .open(hits_log(index))
        .and_then(|mut f| f.write_all(lines.as_bytes()));
    if let Err(e) = append {
        tracing::debug!("salience not noted: {e}");
    }
}

/// Fold `hits.log` into the index inside one transaction of the writer,
/// then remove it. The log is first renamed aside, so lines appended while
/// folding go to a new log. Returns the lines applied.
#[tracing::instrument(level = "debug", skip_all)]
pub fn fold_hits(conn: &mut Connection, index: &Path) -> Result<usize> {
    let log = hits_log(index);
    let aside = log.with_extension("log.folding");
    if !aside.exists() {
        match std::fs::rename(&log, &aside) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(crate::error::Error::io("cannot fold", &log, e)),
        }
    }
    let bytes = match std::fs::metadata(&aside) {
        Ok(m) if m.len() > MAX_FOLD_BYTES => Vec::new(),
        _ => std::fs::read(&aside).unwrap_or_default(),
    };
    let text = String::from_utf8_lossy(&bytes);
    let tx = conn.transaction()?;
    let mut applied = 0;
    for line in text.lines().filter(|l| l.len() <= MAX_LINE) {
        let Some((table, rowid, ts)) = parse_line(line) else {
            continue;
        };
        let sql = format!(
            "UPDATE {table} SET hits = hits + 1, last_hit = max(coalesce(last_hit, 0), ?2) WHERE rowid = ?1"
        );
        applied += tx.prepare_cached(&sql)?.execute([rowid, ts])?;
    }
    tx.commit()?;
    let _ = std::fs::remove_file(&aside);
    Ok(applied)
}

fn parse_line(line: &str) -> Option<(&'static str, i64, i64)> {
    let mut it = line.split(' ');
    let table = match it.next()? {
        "r" => "records",
        "c" => "chunks",
        "t" => "tickets",
        _ => return None,
    };
    let rowid = it.next()?.parse().ok()?;
    let ts = it.next()?.parse().ok()?;
    it.next().is_none().then_some((table, rowid, ts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hits_are_logged_then_folded_once() -> Result<()> {
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path().join("index.db");
        let mut db = super::super::Db::open(&index, super::super::OpenMode::ReadWrite)?;
        let conn = db.writer()?;
        conn.execute_batch(
            "PRAGMA foreign_keys=OFF;
             INSERT INTO tickets(rowid, source_id, ticket_id, part) VALUES(7, 0, 'x', 0);",
        )?;
        note_hits(&index, &[(Table::Tickets, 7)], 100);
        note_hits(&index, &[(Table::Tickets, 7)], 200);
        std::fs::OpenOptions::new()
            .append(true)
            .open(hits_log(&index))
            .unwrap()
            .write_all(b"garbage line\nc x 1\n")
            .unwrap();
        assert_eq!(fold_hits(conn, &index)?, 2);
        let (hits, last): (i64, i64) = conn.query_row(
            "SELECT hits, last_hit FROM tickets WHERE rowid = 7",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        assert_eq!((hits, last), (2, 200));
        assert!(!hits_log(&index).exists());
        assert_eq!(fold_hits(conn, &index)?, 0, "folded once");
        Ok(())
    }
}
