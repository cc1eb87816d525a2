//! Waiting for something another process does: a condition polled until
//! it holds, and handshakes that say a child is blocked on a lock (so a
//! lock test releases the lock only once the child is really waiting for
//! it, however late the child started).
//!
//! The time limits here only turn a hang into a failure with a message;
//! no test asserts how long anything took.

use std::path::Path;
use std::time::{Duration, Instant};

/// Poll `f` every 100 ms for up to `secs` seconds; whether it came true.
pub fn eventually(secs: u64, mut f: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < end {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    f()
}

/// Poll `f` until it is true; panics with `what` after `secs` seconds.
pub fn until(secs: u64, what: &str, f: impl FnMut() -> bool) {
    assert!(eventually(secs, f), "{what} (waited {secs} s)");
}

/// Wait until process `pid` sleeps in kernel function `wchan`
/// (`/proc/PID/wchan`), e.g. `locks_lock_inode_wait` for a blocking
/// `flock`: the child is then waiting, not merely started.
#[cfg(target_os = "linux")]
pub fn for_wchan(pid: u32, wchan: &str) {
    let path = format!("/proc/{pid}/wchan");
    let t0 = Instant::now();
    while std::fs::read_to_string(&path).unwrap_or_default() != wchan {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "process {pid} never waited in {wchan}"
        );
        std::thread::yield_now();
    }
}

/// Wait until process `pid` holds `path` open: for a lock a process polls
/// for (`index.lock`), opening it is the step before the wait.
#[cfg(target_os = "linux")]
pub fn for_open_file(pid: u32, path: &Path) {
    let want = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let t0 = Instant::now();
    loop {
        let open = std::fs::read_dir(format!("/proc/{pid}/fd"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|p| p == want));
        if open {
            return;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "process {pid} never opened {}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Wait until some process waits for the write lock of the index at `db`,
/// which the caller holds (`BEGIN IMMEDIATE` on a connection of its own).
///
/// recall's writers take the turn file `index.db-turn` before they ask
/// for the write lock and hold it until they have it (`store/turn.rs`), so
/// a turn held by someone else is a writer waiting behind the caller: a
/// handshake on the lock itself.
pub fn for_writer_waiting(db: &Path) {
    let mut turn = db.as_os_str().to_owned();
    turn.push("-turn");
    let t0 = Instant::now();
    loop {
        // The writer creates the file; until then nobody waits.
        if let Ok(f) = std::fs::File::open(&turn) {
            match f.try_lock() {
                Err(std::fs::TryLockError::WouldBlock) => return,
                Err(e) => panic!("cannot test the lock on {}: {e}", db.display()),
                Ok(()) => f.unlock().unwrap(),
            }
        }
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "no writer waited for the lock on {}",
            db.display()
        );
        std::thread::yield_now();
    }
}
