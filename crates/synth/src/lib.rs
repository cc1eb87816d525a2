//! Seeded synthetic corpora for recall's benches, tests and torture suite:
//! one generator, so "same seed, same corpus" holds everywhere and a bench,
//! a test and the torture suite talk about the same kind of text.
//!
//! The layers, from words up:
//! - [`Rng`] (fastrand's wyrand, re-exported so every user draws from the
//!   same generator) with the few draws it lacks ([`Draw`]), and
//!   [`stream`] for an independent generator per item, so items can be
//!   generated in parallel and still byte-identically;
//! - [`words`]: the word lists (`words/*.txt`), and [`Zipf`] ranks;
//! - [`Vocab`]: a seeded vocabulary, English of coding talk plus
//!   pseudo-words, identifiers, type names and file paths, and per-session
//!   topics of rare words;
//! - [`Text`]: words, sentences, prose, Markdown, code and tool output
//!   drawn from a vocabulary in one of two [`Mix`]es;
//! - what is made of text: [`claude`] transcripts (Claude Code JSONL files
//!   and whole corpora of them), [`conversation`]s of plain messages,
//!   [`neutral`] transcripts, [`records`] and [`tickets`].
//!
//! Nothing here depends on `recall`: the benches turn these plain values
//! into recall's types, and recall's own unit tests can use the crate too.

pub mod claude;
pub mod conversation;
pub mod neutral;
pub mod records;
pub mod text;
pub mod tickets;
mod tool_output;
pub mod vocab;
pub mod words;
mod zipf;

pub use fastrand::Rng;
pub use text::{Mix, Text};
pub use vocab::Vocab;
pub use zipf::Zipf;

/// The `tag`s of [`stream`]: one per kind of item, so no two kinds share
/// a generator.
mod tags {
    pub const VOCAB: u64 = 1;
    pub const TOPIC: u64 = 2;
    pub const SIZES: u64 = 3;
    pub const SESSION: u64 = 4;
    pub const FACT_SESSION: u64 = 5;
    pub const FACT: u64 = 6;
    pub const TICKET: u64 = 7;
}

/// The draws [`Rng`] does not have.
pub trait Draw {
    /// True with probability `per_mille / 1000`.
    fn chance(&mut self, per_mille: u32) -> bool;
    /// Log-uniform in `lo..=hi` (`0 < lo <= hi`): as many values of each
    /// order of magnitude, as sizes of real files and messages are.
    fn log_uniform(&mut self, lo: usize, hi: usize) -> usize;
    /// One element of a non-empty slice.
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T;
}

impl Draw for Rng {
    fn chance(&mut self, per_mille: u32) -> bool {
        self.u32(..1000) < per_mille
    }

    fn log_uniform(&mut self, lo: usize, hi: usize) -> usize {
        let (a, b) = ((lo as f64).ln(), ((hi + 1) as f64).ln());
        ((a + (b - a) * self.f64()).exp() as usize).clamp(lo, hi)
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.usize(..xs.len())]
    }
}

/// The generator of item `i` of the kind `tag` in the corpus of `seed`: an
/// item's text depends on these three only, never on the items drawn
/// before it. wyrand mixes its whole state into every output, so seeds
/// that differ in a few bits give unrelated streams.
pub fn stream(seed: u64, tag: u64, i: u64) -> Rng {
    Rng::with_seed(seed ^ tag.rotate_right(8) ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// `word` with its first letter in upper case.
pub fn cap(word: &str) -> String {
    let mut c = word.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_uniform_stays_in_range_and_spreads_over_octaves() {
        let mut r = Rng::with_seed(1);
        let xs: Vec<usize> = (0..10_000).map(|_| r.log_uniform(8, 700)).collect();
        assert!(xs.iter().all(|&x| (8..=700).contains(&x)));
        let small = xs.iter().filter(|&&x| x < 80).count();
        // ln(80/8) / ln(701/8): about half below a tenth of the range.
        assert!((4_500..5_800).contains(&small), "{small}");
    }

    #[test]
    fn streams_of_neighbouring_items_differ() {
        let mut a: Vec<u64> = (0..64).map(|i| stream(42, 1, i).u64(..)).collect();
        a.sort_unstable();
        a.dedup();
        assert_eq!(a.len(), 64);
        assert_ne!(stream(42, 1, 0).u64(..), stream(42, 2, 0).u64(..));
        assert_eq!(stream(7, 3, 9).u64(..), stream(7, 3, 9).u64(..));
    }
}
