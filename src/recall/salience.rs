//! Salience: how often a hit was returned, and when last. Updated after the
//! output is written, best effort: a busy database skips the update rather
//! than slowing or failing the caller.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use super::plan::Table;
use super::search::Touched;

/// Count one return of each touched row, in the index at `path`. Never
/// waits on a lock and never fails: errors are logged at debug level.
pub fn record_hits(path: &Path, touched: &[Touched], target: usize, now: i64) {
    let rows: Vec<&Touched> = touched.iter().filter(|t| t.target == target).collect();
    if rows.is_empty() {
        return;
    }
    if let Err(e) = update(path, &rows, now) {
        tracing::debug!("salience update skipped: {e}");
    }
}

fn update(path: &Path, rows: &[&Touched], now: i64) -> rusqlite::Result<()> {
    let mut c = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE)?;
    c.busy_timeout(Duration::ZERO)?;
    let tx = c.transaction()?;
    for t in rows {
        let table = match t.table {
            Table::Records => "records",
            Table::Chunks => "chunks",
            Table::Tickets => "tickets",
        };
        tx.execute(
            &format!("UPDATE {table} SET hits = hits + 1, last_hit = ?2 WHERE rowid = ?1"),
            rusqlite::params![t.rowid, now],
        )?;
    }
    tx.commit()
}
