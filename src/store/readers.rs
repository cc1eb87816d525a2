//! Pools of read-only connections, one per index file, for the front ends
//! that live long and answer many reads at once (`recall serve`, `recall
//! mcp`): a read borrows an open connection instead of opening the index
//! afresh. The one-shot paths (`query`, the hooks) never make one, so they
//! start none of the threads a pool needs.
//!
//! Each connection is read-only on a WAL index, so a read never waits for
//! the writer, and it sees every commit, of this process or another, at its
//! next statement (no read leaves a transaction open on it). A pool belongs
//! to one file, known by its device and inode: an index replaced under the
//! same path (`recall reindex --full` moving a damaged one aside, say) gets
//! a new pool on the next read, whose connections open the new file; the
//! old pool's connections are never handed out again. The first read of a
//! file opens it the one-shot way ([`Db::open`]), which checks it, reports
//! a damaged one at once (a pool would retry it until its timeout) and
//! picks the fallbacks: an index read `immutable` (a read-only folder, a
//! full disk) is never pooled, since such a connection would not see later
//! writes, and each read tries the usual way again.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use r2d2_sqlite::SqliteConnectionManager;
use scheduled_thread_pool::ScheduledThreadPool;

use super::db::{init_conn, BUSY_TIMEOUT, READ_FLAGS};
use super::{Db, OpenMode};
use crate::error::Result;

/// Most connections open on one index. Reads past it wait for one of them
/// (another read), never for the writer.
const MAX_PER_INDEX: u32 = 16;

/// Threads shared by every pool, which open its connections and close
/// idle ones.
const WORKERS: usize = 2;

/// The identity of a file: an index replaced under the same path has
/// another. A pooled connection keeps its file open, so no new file can
/// take its inode while it lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileId {
    dev: u64,
    ino: u64,
}

/// The identity of the file at `path`; `None` where the platform gives
/// none (no pooling there) or the file is gone.
fn file_id(path: &Path) -> Option<FileId> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).ok()?;
        Some(FileId {
            dev: m.dev(),
            ino: m.ino(),
        })
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// One index file's pool.
struct Entry {
    file: FileId,
    pool: r2d2::Pool<SqliteConnectionManager>,
}

/// Read-only connection pools, one per index file, made on first use.
/// Cheap to share: hold it in an `Arc`.
pub struct ReadPools {
    pools: Mutex<HashMap<PathBuf, Entry>>,
    workers: Arc<ScheduledThreadPool>,
}

impl std::fmt::Debug for ReadPools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.pools.lock().map(|p| p.len()).unwrap_or(0);
        f.debug_struct("ReadPools").field("indexes", &n).finish()
    }
}

impl Default for ReadPools {
    fn default() -> Self {
        ReadPools::new()
    }
}

impl ReadPools {
    /// No pools yet; starts the pools' worker threads.
    pub fn new() -> ReadPools {
        ReadPools {
            pools: Mutex::new(HashMap::new()),
            workers: Arc::new(
                ScheduledThreadPool::builder()
                    .num_threads(WORKERS)
                    .thread_name_pattern("recall-pool-{}")
                    .build(),
            ),
        }
    }

    /// Open the index at `path` for reading, as [`Db::open`] with
    /// [`OpenMode::ReadOnly`] does (the same errors, the same fallbacks),
    /// with a pooled connection when the file has a pool.
    pub fn open(&self, path: &Path) -> Result<Db> {
        let Some(file) = file_id(path) else {
            return Db::open(path, OpenMode::ReadOnly);
        };
        if let Some(pool) = self.pool_of(path, file) {
            match pool.get() {
                Ok(conn) => return Db::pooled(path, conn),
                // Every connection busy past the timeout, or none could be
                // opened: the one-shot way answers, or says what is wrong.
                Err(e) => tracing::debug!("no pooled reader for {}: {e}", path.display()),
            }
        }
        let db = Db::open(path, OpenMode::ReadOnly)?;
        let mut pools = self.lock();
        match db.is_immutable() {
            true => {
                pools.remove(path);
            }
            false => {
                let fresh = pools.get(path).is_none_or(|e| e.file != file);
                if fresh {
                    let entry = Entry {
                        file,
                        pool: self.pool(path),
                    };
                    pools.insert(path.to_path_buf(), entry);
                }
            }
        }
        Ok(db)
    }

    /// The pool of `path` if it was made for the file `file`; a pool of a
    /// file no longer there is dropped (its connections close as they come
    /// back).
    fn pool_of(&self, path: &Path, file: FileId) -> Option<r2d2::Pool<SqliteConnectionManager>> {
        let mut pools = self.lock();
        match pools.get(path) {
            Some(e) if e.file == file => Some(e.pool.clone()),
            Some(_) => {
                tracing::debug!("{} was replaced: a new reader pool", path.display());
                pools.remove(path);
                None
            }
            None => None,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Entry>> {
        // The map stays whole whatever a panicking holder did.
        self.pools.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A pool for `path`: no connection until a read asks for one, idle
    /// connections closed after r2d2's idle timeout.
    fn pool(&self, path: &Path) -> r2d2::Pool<SqliteConnectionManager> {
        let manager = SqliteConnectionManager::file(path)
            .with_flags(READ_FLAGS)
            .with_init(init_conn);
        r2d2::Pool::builder()
            .max_size(MAX_PER_INDEX)
            .min_idle(Some(0))
            .connection_timeout(BUSY_TIMEOUT)
            .thread_pool(self.workers.clone())
            .build_unchecked(manager)
    }

    /// How many connections the pool of `path` holds, open and idle.
    #[cfg(test)]
    fn connections(&self, path: &Path) -> Option<(u32, u32)> {
        let pools = self.lock();
        let s = pools.get(path)?.pool.state();
        Some((s.connections, s.idle_connections))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use rusqlite::Connection;

    use super::*;

    /// A new index at `path` whose `meta` row `k` is `v`.
    fn index_with(path: &Path, v: &str) -> Result<()> {
        let mut db = Db::open(path, OpenMode::ReadWrite)?;
        db.writer()?.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES('k', ?1)",
            [v],
        )?;
        Ok(())
    }

    fn value(db: &Db) -> Result<String> {
        db.with_conn(|c| Ok(c.query_row("SELECT value FROM meta WHERE key='k'", [], |r| r.get(0))?))
    }

    /// An index whose `k` is `v`, and pools that have read it once, so the
    /// next read borrows.
    fn pooled(v: &str) -> Result<(tempfile::TempDir, PathBuf, ReadPools)> {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("index.db");
        index_with(&p, v)?;
        let pools = ReadPools::new();
        drop(pools.open(&p)?);
        Ok((t, p, pools))
    }

    /// A read of `p` that borrows a pooled connection.
    fn borrow(pools: &ReadPools, p: &Path) -> Result<Db> {
        let db = pools.open(p)?;
        assert!(db.is_pooled(), "a pooled connection for {}", p.display());
        Ok(db)
    }

    #[test]
    fn the_first_read_checks_the_file_and_later_ones_borrow() -> Result<()> {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("index.db");
        index_with(&p, "a")?;
        let pools = ReadPools::new();
        let first = pools.open(&p)?;
        assert!(!first.is_pooled());
        assert_eq!(value(&first)?, "a");
        for _ in 0..3 {
            assert_eq!(value(&borrow(&pools, &p)?)?, "a");
        }
        // One connection served the three reads, and is idle again.
        assert_eq!(pools.connections(&p), Some((1, 1)));
        Ok(())
    }

    #[test]
    fn a_missing_or_damaged_index_is_reported_as_a_one_shot_open_reports_it() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("index.db");
        let pools = ReadPools::new();
        assert!(matches!(pools.open(&p), Err(crate::Error::NotFound(_))));
        std::fs::write(&p, vec![0x42u8; 8192]).unwrap();
        let err = pools.open(&p).unwrap_err();
        assert!(matches!(err, crate::Error::CorruptIndex { .. }), "{err}");
        assert_eq!(pools.connections(&p), None, "nothing pooled");
    }

    /// An index replaced under its path (what `recall reindex --full` does
    /// to a damaged one: renamed aside, its WAL removed, a new file built)
    /// is read through a new pool: the old pool's idle connection still
    /// has the old file open and would answer from it.
    #[test]
    fn r23_a_read_after_the_index_was_replaced_sees_the_new_file() -> Result<()> {
        let (t, p, pools) = pooled("old")?;
        assert_eq!(value(&borrow(&pools, &p)?)?, "old");
        std::fs::rename(&p, t.path().join("index.db.corrupt-1")).unwrap();
        for f in ["index.db-wal", "index.db-shm"] {
            let _ = std::fs::remove_file(t.path().join(f));
        }
        index_with(&p, "new")?;
        assert_eq!(value(&pools.open(&p)?)?, "new");
        assert_eq!(value(&borrow(&pools, &p)?)?, "new", "the new file's pool");
        Ok(())
    }

    /// A pooled connection reads each commit of another connection at its
    /// next statement: it holds no snapshot between reads.
    #[test]
    fn a_pooled_read_sees_another_connections_commit_at_once() -> Result<()> {
        let (_t, p, pools) = pooled("a")?;
        let db = borrow(&pools, &p)?;
        assert_eq!(value(&db)?, "a");
        Connection::open(&p)?.execute("UPDATE meta SET value = 'b' WHERE key = 'k'", [])?;
        assert_eq!(value(&db)?, "b", "the same borrowed connection");
        drop(db);
        assert_eq!(value(&borrow(&pools, &p)?)?, "b", "borrowed again");
        Ok(())
    }

    /// A writer holds the write lock, exclusive, with a change not yet
    /// committed, until the reads are done: pooled reads answer meanwhile
    /// from the last commit. A read that waited for the lock would fail
    /// with "database is locked" after the busy timeout instead (or, had
    /// the writer no deadline, never answer).
    #[test]
    fn a_pooled_read_does_not_wait_for_a_writer_holding_the_lock() -> Result<()> {
        let (_t, p, pools) = pooled("a")?;
        let (locked_tx, locked_rx) = mpsc::channel();
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let writer = {
            let p = p.clone();
            std::thread::spawn(move || -> Result<String> {
                let w = Connection::open(&p)?;
                w.execute_batch("BEGIN EXCLUSIVE; UPDATE meta SET value = 'b' WHERE key = 'k';")?;
                locked_tx.send(()).unwrap();
                // Held until the reads are done (a read blocked on the lock
                // would never send; the deadline only ends the test).
                let answered = done_rx.recv_timeout(Duration::from_secs(60));
                w.execute_batch("COMMIT")?;
                Ok(format!("{answered:?}"))
            })
        };
        locked_rx.recv().unwrap();
        for _ in 0..2 {
            let db = borrow(&pools, &p)?;
            assert_eq!(value(&db)?, "a", "the last commit, not the open change");
        }
        done_tx.send(()).unwrap();
        assert_eq!(writer.join().unwrap()?, "Ok(())");
        assert_eq!(value(&pools.open(&p)?)?, "b");
        Ok(())
    }
}
