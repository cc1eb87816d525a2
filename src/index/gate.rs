//! The point of no return of a record write, shared with whoever may give
//! up waiting for it.
//!
//! A server answers a slow request with "abandoned; try again". That is
//! only true if the write it abandons never happens, so the two sides
//! decide once, atomically: the write passes the gate after it holds every
//! lock it waits for and before it changes a file, and the server cancels
//! the gate when its time is up. Whichever comes first wins. A cancelled
//! write stops at the gate with nothing changed; a write already past it
//! finishes, and the server waits the few milliseconds left and answers
//! with its result.

use std::sync::atomic::{AtomicU8, Ordering};

use crate::error::{Error, Result};

const OPEN: u8 = 0;
const PASSED: u8 = 1;
const CANCELLED: u8 = 2;

/// One request's gate. See the module documentation.
#[derive(Debug, Default)]
pub struct WriteGate(AtomicU8);

impl WriteGate {
    pub fn new() -> WriteGate {
        WriteGate::default()
    }

    /// Called by the write, with its locks held and nothing changed yet:
    /// `Err` when the request was cancelled (the write must stop there).
    /// Passing twice is fine (a request that writes twice).
    pub fn pass(&self) -> Result<()> {
        match self
            .0
            .compare_exchange(OPEN, PASSED, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) | Err(PASSED) => Ok(()),
            Err(_) => Err(Error::Cancelled),
        }
    }

    /// Called by the side that gives up waiting: `true` when the write had
    /// not passed, and now never will; `false` when it already passed and
    /// is finishing, so its result must be awaited and reported.
    pub fn cancel(&self) -> bool {
        match self
            .0
            .compare_exchange(OPEN, CANCELLED, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) | Err(CANCELLED) => true,
            Err(_) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_side_wins_and_the_other_learns_it() {
        let g = WriteGate::new();
        assert!(g.pass().is_ok());
        assert!(g.pass().is_ok(), "a second write of the same request");
        assert!(!g.cancel(), "too late: the write is finishing");

        let g = WriteGate::new();
        assert!(g.cancel());
        assert!(g.cancel());
        assert!(matches!(g.pass(), Err(Error::Cancelled)));
    }

    #[test]
    fn racing_sides_never_both_win() {
        for _ in 0..200 {
            let g = std::sync::Arc::new(WriteGate::new());
            let g2 = g.clone();
            let t = std::thread::spawn(move || g2.pass().is_ok());
            let cancelled = g.cancel();
            let passed = t.join().unwrap();
            assert_ne!(cancelled, passed);
        }
    }
}
