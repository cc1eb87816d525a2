//! How much prepared work may wait for the single writer, in bytes.
//!
//! The channel between the preparers and the writer is bounded by a count
//! of items, which keeps memory flat for many small sources; a large
//! transcript arrives as parts of several megabytes each, and eight of them
//! waiting would be most of the memory of a run. Preparers take the bytes
//! of a part from a [`Budget`] before sending it and the writer gives them
//! back once it wrote it, so what waits stays under the budget whatever the
//! mix of sources. One part larger than the budget still goes through, alone.

use std::sync::{Condvar, Mutex, PoisonError};

/// A budget of bytes in flight between threads.
#[derive(Debug)]
pub struct Budget {
    cap: u64,
    state: Mutex<State>,
    freed: Condvar,
}

#[derive(Debug, Default)]
struct State {
    used: u64,
    /// The taker side gives up: the writer stopped.
    closed: bool,
}

impl Budget {
    pub fn new(cap: u64) -> Budget {
        Budget {
            cap,
            state: Mutex::new(State::default()),
            freed: Condvar::new(),
        }
    }

    /// Wait until `n` bytes fit (or nothing else is in flight) and take
    /// them. `false` when the budget was closed: nobody will give back.
    pub fn take(&self, n: u64) -> bool {
        let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        while !s.closed && s.used > 0 && s.used + n > self.cap {
            s = self.freed.wait(s).unwrap_or_else(PoisonError::into_inner);
        }
        s.used += n;
        !s.closed
    }

    /// Give back `n` bytes taken before.
    pub fn give(&self, n: u64) {
        let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        s.used = s.used.saturating_sub(n);
        self.freed.notify_all();
    }

    /// Wake every waiter for good: what they would send has no reader.
    pub fn close(&self) {
        let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        s.closed = true;
        self.freed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_wait_for_gives_and_close_wakes_them() {
        let b = std::sync::Arc::new(Budget::new(10));
        assert!(b.take(8));
        assert!(b.take(0), "nothing to wait for");
        let waiter = {
            let b = b.clone();
            std::thread::spawn(move || b.take(5))
        };
        b.give(8);
        assert!(waiter.join().unwrap(), "fits once given back");
        let b = std::sync::Arc::new(Budget::new(10));
        assert!(b.take(50), "alone, a large take goes through");
        let waiter = {
            let b = b.clone();
            std::thread::spawn(move || b.take(1))
        };
        b.close();
        assert!(!waiter.join().unwrap(), "closed: give up");
    }
}
