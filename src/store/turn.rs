//! Writers of one index take its write lock in turn.
//!
//! SQLite keeps no queue of writers: a writer that finds the lock taken
//! sleeps in its busy handler and tries again, up to 100 ms later. A writer
//! that commits and begins again at once, as `recall index` does batch
//! after batch, takes the lock back before the sleeper wakes, and can do so
//! batch after batch: a one-line `recall record add` waited more than a
//! second behind a large transcript (issue 26 item 7).
//!
//! So the writers that begin often or must not wait long (`recall index`
//! and its prune, record writes, a sync's pull and push, an extraction's
//! claim) hold an advisory lock on `index.db-turn` while they wait for the
//! write lock, and let it go as soon as they hold it. A writer that has just committed
//! waits there behind the one already waiting, instead of racing it.
//! Readers never take it, and the turn is never held while the write lock
//! is held, so no two writers can wait for each other.

use std::fs::File;
use std::path::Path;

use rusqlite::{Connection, Transaction, TransactionBehavior};

use super::fsutil::private_file;
use crate::error::{Error, Result};

/// Begin an immediate transaction on `conn`, waiting in turn with every
/// other writer of its index (see the module doc). Waits for the write lock
/// within the connection's busy timeout, as
/// [`Connection::transaction_with_behavior`] does; an index whose turn file
/// cannot be opened (a read-only folder, an in-memory database) begins
/// without it.
pub fn begin_in_turn(conn: &mut Connection) -> Result<Transaction<'_>> {
    let turn = conn
        .path()
        .filter(|p| !p.is_empty())
        .and_then(|db| take_turn(Path::new(db)));
    let tx = begin_saying_so(conn);
    drop(turn);
    tx
}

/// Begin an immediate transaction within the connection's busy timeout,
/// saying so once the write lock has been taken for [`NOTICE_AFTER`]: a
/// writer stopped while it held the lock (Ctrl-Z) holds every other one
/// for as long as it stays stopped, and a command that waits for minutes
/// without a word looks hung. The whole wait stays the busy timeout.
fn begin_saying_so(conn: &Connection) -> Result<Transaction<'_>> {
    let ms: i64 = conn.pragma_query_value(None, "busy_timeout", |r| r.get(0))?;
    let timeout = std::time::Duration::from_millis(ms.max(0) as u64);
    let begin = || Transaction::new_unchecked(conn, TransactionBehavior::Immediate);
    conn.busy_timeout(NOTICE_AFTER.min(timeout))?;
    let tx = match begin() {
        Err(e)
            if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy)
                && timeout > NOTICE_AFTER =>
        {
            tracing::warn!(
                "waiting for the write lock of {}: another process is writing to it \
                 (a recall job stopped with Ctrl-Z holds it until it is resumed or ended); \
                 waiting up to {}",
                conn.path().unwrap_or_default(),
                match timeout.as_secs() {
                    s if s >= 120 => format!("{} minutes", s / 60),
                    s => format!("{s} s"),
                }
            );
            conn.busy_timeout(timeout - NOTICE_AFTER)?;
            begin()
        }
        first => first,
    };
    conn.busy_timeout(timeout)?;
    Ok(tx?)
}

/// How long a writer waits for the write lock before it says it is
/// waiting (see [`begin_saying_so`]).
const NOTICE_AFTER: std::time::Duration = std::time::Duration::from_secs(5);

/// Whether another writer of `conn`'s index waits for its turn: a writer
/// that holds the write lock across several steps (a pull writing page
/// after page) commits when one does, so it waits one step at most.
/// `false` when the turn file cannot be opened (see [`begin_in_turn`]).
pub fn turn_wanted(conn: &Connection) -> bool {
    let Some(db) = conn.path().filter(|p| !p.is_empty()) else {
        return false;
    };
    let Ok(file) = std::fs::File::open(turn_path(Path::new(db))) else {
        return false;
    };
    match file.try_lock() {
        Ok(()) => false,
        Err(std::fs::TryLockError::WouldBlock) => true,
        Err(_) => false,
    }
}

/// The path of `db`'s turn file.
pub fn turn_path(db: &Path) -> std::path::PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push("-turn");
    name.into()
}

/// Wait for, then hold, the turn of the index at `db`. `None` (begin
/// without a turn) when its file cannot be opened or locked, or the turn
/// was not free within [`TURN_WAIT`]: the turn only orders writers, and
/// each one still waits for the write lock itself.
fn take_turn(db: &Path) -> Option<File> {
    let path = turn_path(db);
    let opened = private_file()
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| Error::io("cannot open", &path, e));
    let file = match opened {
        Ok(f) => f,
        Err(e) => {
            tracing::debug!(%e, "writing without a turn");
            return None;
        }
    };
    // Polled, within the busy timeout a writer waits for the lock anyway:
    // a holder that is stopped (Ctrl-Z, a debugger) must not hold every
    // other writer forever, and the turn only orders them.
    let deadline = std::time::Instant::now() + TURN_WAIT;
    loop {
        match file.try_lock() {
            Ok(()) => return Some(file),
            Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                std::thread::sleep(TURN_POLL);
            }
            Err(e) => {
                tracing::debug!(path = %path.display(), %e, "writing without a turn");
                return None;
            }
        }
    }
}

/// How long a writer waits for its turn before it begins without one (it
/// then waits for the lock itself, as long as a writer waits: a turn held
/// longer is a waiter stopped while it waited, not one writing).
const TURN_WAIT: std::time::Duration = std::time::Duration::from_secs(5);
/// How often a waiting writer tries the turn again.
const TURN_POLL: std::time::Duration = std::time::Duration::from_millis(2);

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    fn wal_db(path: &Path) -> Connection {
        let c = Connection::open(path).unwrap();
        c.pragma_update(None, "journal_mode", "WAL").unwrap();
        c.busy_timeout(Duration::from_secs(5)).unwrap();
        c
    }

    /// A writer waiting for the lock holds the turn, so a writer that has
    /// just committed and begins again waits behind it, rather than taking
    /// the lock back before the waiter's busy handler wakes.
    #[test]
    fn a_writer_that_commits_waits_behind_the_one_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("index.db");
        let mut busy = wal_db(&db);
        busy.execute_batch("CREATE TABLE t(x)").unwrap();
        let first = begin_in_turn(&mut busy).unwrap();
        let (tx, rx) = mpsc::channel();
        let waiter = std::thread::spawn({
            let db = db.clone();
            move || {
                let mut c = wal_db(&db);
                // Holds the turn from here until it holds the write lock.
                let t = begin_in_turn(&mut c).unwrap();
                tx.send("waiter").unwrap();
                t.execute("INSERT INTO t VALUES (1)", []).unwrap();
                t.commit().unwrap();
            }
        });
        // The waiter is waiting once the turn file is locked by it: a
        // handshake on the lock itself, not a sleep.
        let turn = File::open(turn_path(&db)).unwrap();
        while turn.try_lock().is_ok() {
            turn.unlock().unwrap();
            std::thread::yield_now();
        }
        first.commit().unwrap();
        // Begins again at once, as the index does between batches.
        let again = begin_in_turn(&mut busy).unwrap();
        assert_eq!(rx.try_recv(), Ok("waiter"), "the waiter went first");
        let rows: i64 = again
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 1, "and its write was committed before ours began");
        again.commit().unwrap();
        waiter.join().unwrap();
    }

    #[test]
    fn an_in_memory_database_begins_without_a_turn() {
        let mut c = Connection::open_in_memory().unwrap();
        let t = begin_in_turn(&mut c).unwrap();
        t.commit().unwrap();
    }
}
