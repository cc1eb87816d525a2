//! Pulled sources written through the index writer, several server pages
//! to a transaction.
//!
//! A fresh host pulling 1,000,000 passages wrote 3.2x the index it built
//! (issue 36 item 2). Every page is written twice in WAL mode (the log,
//! then the checkpoint), and beyond that three things were written again
//! and again: the term statistics (`term_df`, 25 MB, touched nearly whole
//! by every transaction), FTS5's segments (merged four at a time as they
//! pile up, so each posting was copied level after level), and pages a
//! merge freed, zeroed (see [`adds_only`]). So:
//!
//! - consecutive pages that hold only sources are written in one
//!   transaction of up to [`TX_BYTES`] of bodies, which ends early as soon
//!   as another writer waits for its turn ([`turn_wanted`]): that writer
//!   waits at most one page, as before;
//! - inside that transaction FTS5 merges only once [`PULL_AUTOMERGE`]
//!   segments pile up on a level ([`Merges`]); the setting is put back
//!   before the commit, so no other writer, and no pull killed mid-way,
//!   ever sees it;
//! - a page that only adds sources runs with `secure_delete = FAST`;
//! - the pull runs with a 256 MB page cache (`PULL_CACHE_KIB` in
//!   [`super::exchange`]), so the pages a transaction changes again and
//!   again are written once, at its commit.
//!
//! Every page still sets the cursor and flushes the term counts in the
//! transaction that writes it, and pages still stream (one held, the next
//! fetched while it is written), so memory does not grow with the
//! transaction.

use rayon::prelude::*;
use rusqlite::{Connection, OptionalExtension, Transaction};

use super::exchange::{Me, Row, ScopeReport};
use super::local::{self, Kind};
use crate::error::{Error, Result};
use crate::index::{
    has_source_at, prepare_import, remove_source_at, write_import, Import, SourceDoc,
};
use crate::store::{begin_in_turn, turn_wanted, Table, TermDeltas};

/// A page of rows from the server and the id of its last row (rows of a
/// kind this version does not know are left out, their ids are not).
pub(super) type Page = (Vec<Row>, i64);

/// Bodies a pull writes in one transaction, at most (a page more than
/// this, when the last page passes it).
pub(super) const TX_BYTES: i64 = 128 << 20;

/// FTS5's `automerge` while a pull writes: a level's segments are merged
/// once this many pile up, instead of 4 (the default).
pub(super) const PULL_AUTOMERGE: i64 = 16;

/// The FTS tables a pulled source writes.
const FTS: [Table; 2] = [Table::Chunks, Table::Tickets];

/// Prepared sources the writer may have waiting.
const PREPARED_AHEAD: usize = 64;

/// Whether a page holds sources only, and so may join a pull's open
/// transaction.
pub(super) fn sources_only(rows: &[Row]) -> bool {
    !rows.is_empty() && rows.iter().all(|r| r.kind == Kind::Source)
}

/// Write `page` and the pages after it that hold sources only, in one
/// transaction, fetching each next page (`fetch(after)`) while one is
/// written. Returns the page that ends the run (not written: it holds
/// records, or the transaction is full) and the id the cursor is at.
pub(super) fn write_pages(
    conn: &mut Connection,
    me: &Me,
    page: Page,
    fetch: &mut (dyn FnMut(i64) -> Result<Option<Page>> + Send),
    report: &mut ScopeReport,
) -> Result<(Option<Page>, i64)> {
    let mut w = Writing::begin(conn)?;
    let mut page = page;
    loop {
        let (rows, last) = page;
        w.bytes += rows
            .iter()
            .map(|r| r.body.as_ref().map_or(0, |b| b.len() as i64))
            .sum::<i64>();
        let (written, fetched) = std::thread::scope(|scope| {
            let ahead = scope.spawn(|| fetch(last));
            let written = w.write(me, rows, last, report);
            let fetched = ahead
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (written, fetched)
        });
        written?;
        fail::fail_point!("sync-pull-page-written");
        let next = match fetched {
            Ok(next) => next,
            Err(e) => {
                // What is written stays: the next sync goes on from here.
                w.commit()?;
                return Err(e);
            }
        };
        match next {
            Some(n) if sources_only(&n.0) && !w.full() => page = n,
            next => {
                w.commit()?;
                return Ok((next, last));
            }
        }
    }
}

/// One run of sources inside a page that also holds records: its own
/// transaction, with the cursor at `last`.
pub(super) fn apply_sources(
    conn: &mut Connection,
    me: &Me,
    rows: Vec<Row>,
    last: i64,
    report: &mut ScopeReport,
) -> Result<()> {
    let mut w = Writing::begin(conn)?;
    w.write(me, rows, last, report)?;
    w.commit()
}

/// A pull's open write transaction.
struct Writing<'c> {
    tx: Transaction<'c>,
    merges: Merges,
    /// Bodies written in it so far.
    bytes: i64,
}

impl<'c> Writing<'c> {
    fn begin(conn: &'c mut Connection) -> Result<Writing<'c>> {
        let tx = begin_in_turn(conn)?;
        let merges = Merges::raise(&tx)?;
        Ok(Writing {
            tx,
            merges,
            bytes: 0,
        })
    }

    /// Whether to commit rather than take another page: the transaction
    /// holds [`TX_BYTES`], or another writer waits.
    fn full(&self) -> bool {
        self.bytes >= TX_BYTES || turn_wanted(&self.tx)
    }

    /// Write one page's sources (each key comes once in a page, so the
    /// order they are written in does not matter) and move the cursor to
    /// `last`. Freed pages need not be zeroed when the page only adds: see
    /// [`adds_only`].
    fn write(
        &mut self,
        me: &Me,
        rows: Vec<Row>,
        last: i64,
        report: &mut ScopeReport,
    ) -> Result<()> {
        let fast = adds_only(&self.tx, &rows)?;
        if fast {
            self.tx.pragma_update(None, "secure_delete", "FAST")?;
        }
        let done = write_sources(&self.tx, me, rows, report);
        if fast {
            self.tx.pragma_update(None, "secure_delete", true)?;
        }
        done?;
        local::set_cursor(&self.tx, last)
    }

    fn commit(self) -> Result<()> {
        self.merges.restore(&self.tx)?;
        self.tx.commit()?;
        Ok(())
    }
}

/// Sources pulled, prepared (parsed, scanned for secrets again, their
/// terms counted) on the preparer threads while one writer writes them,
/// as `recall index` does with files; their term counts are flushed at
/// the end of the page, so they are held for one page only.
fn write_sources(
    tx: &Transaction,
    me: &Me,
    rows: Vec<Row>,
    report: &mut ScopeReport,
) -> Result<()> {
    let mut stats = TermDeltas::default();
    let (send, ready) = std::sync::mpsc::sync_channel::<Result<Incoming>>(PREPARED_AHEAD);
    std::thread::scope(|scope| -> Result<()> {
        scope.spawn(move || {
            // Stops when the writer hangs up (an error).
            let _ = rows.into_par_iter().try_for_each_with(send, |send, row| {
                send.send(Incoming::prepare(row)).map_err(drop)
            });
        });
        for incoming in ready {
            let Incoming { key, hash, doc } = incoming?;
            match doc {
                None => {
                    remove_source_at(tx, &format!("sync://{key}"), &mut stats)?;
                    local::set_state(tx, Kind::Source, &key, None)?;
                }
                Some(doc) => {
                    report.passages_pulled += doc.passages;
                    report.redacted += write_import(tx, doc.import, me.now, &mut stats)?;
                    local::set_state(tx, Kind::Source, &key, Some(&hash))?;
                }
            }
            report.pulled += 1;
        }
        Ok(())
    })?;
    stats.flush(tx)?;
    Ok(())
}

/// FTS5's merge setting as the pull's transaction found it, raised to
/// [`PULL_AUTOMERGE`] until [`Merges::restore`].
///
/// FTS5 writes a segment each time its pending terms pass `hashsize`
/// (32 MB here, `schema/0006`) and at each commit, and with `automerge`
/// at 4 it merges a level as soon as four segments are on it, copying
/// every posting again at each level. A pull writes far more at once than
/// `recall index` does between its commits, so with 16 each posting is
/// copied about half as many times. The setting is stored in the table
/// (`<fts>_config`); setting it first flushes the pending terms under the
/// old one, so a restore just before the commit covers everything written,
/// and what is committed never holds the raised value.
struct Merges {
    /// Each table's stored `automerge` (`None`: never set, the default).
    prior: [Option<i64>; 2],
}

impl Merges {
    fn raise(tx: &Connection) -> Result<Merges> {
        let mut prior = [None; 2];
        for (t, p) in FTS.iter().zip(&mut prior) {
            *p = automerge(tx, *t)?;
            set_automerge(tx, *t, PULL_AUTOMERGE)?;
        }
        Ok(Merges { prior })
    }

    /// Put the settings back (flushing the pending terms first), leaving
    /// each table's `_config` as it was.
    fn restore(&self, tx: &Connection) -> Result<()> {
        for (t, p) in FTS.iter().zip(&self.prior) {
            set_automerge(tx, *t, p.unwrap_or(4))?;
            if p.is_none() {
                tx.execute(
                    &format!("DELETE FROM {}_config WHERE k = 'automerge'", t.fts()),
                    [],
                )?;
            }
        }
        Ok(())
    }
}

/// `t`'s stored `automerge`, if it was ever set.
pub(super) fn automerge(conn: &Connection, t: Table) -> Result<Option<i64>> {
    Ok(conn
        .query_row(
            &format!("SELECT v FROM {}_config WHERE k = 'automerge'", t.fts()),
            [],
            |r| r.get(0),
        )
        .optional()?)
}

fn set_automerge(conn: &Connection, t: Table, n: i64) -> Result<()> {
    let fts = t.fts();
    conn.execute(
        &format!("INSERT INTO {fts}({fts}, rank) VALUES('automerge', ?1)"),
        [n],
    )?;
    Ok(())
}

/// Whether a page only adds sources this index does not hold (no
/// tombstone, no new version of a source here), and so deletes no text.
///
/// The writer zeroes every page it frees (`PRAGMA secure_delete`), so that
/// a deleted record's text does not stay in the file. A page that only
/// adds still frees many pages: FTS5 merges its segments as they grow, and
/// each page a merge frees was written a second time, as zeros, through
/// the WAL and again at the checkpoint. What those pages hold (postings
/// and cells of live rows, copied to the merged segment) is in the file
/// anyway, and text deleted earlier was zeroed when it was deleted, so
/// such a page runs with `secure_delete = FAST`, which still zeroes what
/// is deleted inside a page written anyway. A fresh host pulling 1,000,000
/// passages wrote 3.9x the index it built (issue 36 item 2).
pub(super) fn adds_only(conn: &Connection, rows: &[Row]) -> Result<bool> {
    for row in rows {
        let path = format!("sync://{}", row.key);
        if row.deleted || row.body.is_none() || has_source_at(conn, &path)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// A pulled source, ready for the writer.
struct Incoming {
    key: String,
    hash: String,
    /// `None`: a tombstone.
    doc: Option<Prepared>,
}

struct Prepared {
    import: Import,
    passages: usize,
}

impl Incoming {
    fn prepare(row: Row) -> Result<Incoming> {
        let Some(body) = row.body.filter(|_| !row.deleted) else {
            return Ok(Incoming {
                key: row.key,
                hash: row.hash,
                doc: None,
            });
        };
        let doc: SourceDoc = serde_json::from_str(&body).map_err(|e| {
            Error::Sync(format!(
                "a shared source from host {} ({}) is not readable ({e}); upgrade recall on this host",
                row.host, row.key
            ))
        })?;
        let passages = doc.passages();
        let import = prepare_import(&format!("sync://{}", row.key), &row.host, doc)?;
        Ok(Incoming {
            key: row.key,
            hash: row.hash,
            doc: Some(Prepared { import, passages }),
        })
    }
}
