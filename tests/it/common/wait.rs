//! Waiting for something another process does: a condition polled until
//! it holds, and handshakes that say a child is blocked on a lock (so a
//! lock test releases the lock only once the child is really waiting for
//! it, however late the child started).
//!
//! The time limits here only turn a hang into a failure with a message;
//! no test asserts how long anything took.

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
