//! Salience: each query notes the rows it returned in the scope's hit log
//! (`store::note_hits`); the next write job folds the log into the index.
//! The read path itself never writes to the database.

use std::path::Path;

use super::request::Touched;

/// Note one return of each touched row of `target`, for the index at
/// `index`. Never fails and never waits.
pub fn record_hits(index: &Path, touched: &[Touched], target: usize, now: i64) {
    let rows: Vec<_> = touched
        .iter()
        .filter(|t| t.target == target)
        .map(|t| (t.table, t.rowid))
        .collect();
    crate::store::note_hits(index, &rows, now);
}
