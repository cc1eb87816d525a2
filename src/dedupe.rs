//! Near-duplicate detection, shared by recall (dropping repeated hits) and
//! extraction (dropping facts already known): normalised word sets and
//! their Jaccard similarity.
//!
//! A set is stored as the sorted, distinct 64-bit hashes of its words, so
//! a comparison is one linear merge with no allocation or hashing. Recall
//! compares every candidate with every hit kept before it; with hash sets
//! of strings that cost about 100 ms for a 100-hit query, and now costs
//! well under a millisecond.

use std::hash::{DefaultHasher, Hash as _, Hasher as _};

use crate::text::words;

/// Words that carry no meaning for near-duplicate detection.
const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "for", "from", "has", "have",
    "in", "into", "is", "it", "its", "of", "on", "or", "so", "that", "the", "their", "then",
    "there", "these", "this", "those", "to", "was", "we", "were", "when", "which", "with", "you",
];

/// The normalised word set of a text: `unicode61`-style words (maximal
/// alphanumeric runs, so `cargo-test` is two words), lowercased, without
/// English stopwords. No stemming: a different inflection counts as a
/// different word, which keeps dedupe conservative.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WordSet(Vec<u64>);

impl WordSet {
    /// The word set of `text`.
    pub fn new(text: &str) -> WordSet {
        let mut v: Vec<u64> = words(text)
            .filter(|w| !is_stopword(w))
            .map(hash_lowercase)
            .collect();
        v.sort_unstable();
        v.dedup();
        WordSet(v)
    }

    /// Distinct words.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the text had no words but stopwords.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// |a ∩ b| / |a ∪ b|; 0.0 when both sets are empty (nothing to compare,
    /// so nothing is called a duplicate).
    pub fn jaccard(&self, other: &WordSet) -> f64 {
        let (a, b) = (&self.0, &other.0);
        let (mut i, mut j, mut common) = (0, 0, 0usize);
        while i < a.len() && j < b.len() {
            match a[i].cmp(&b[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    common += 1;
                    i += 1;
                    j += 1;
                }
            }
        }
        let union = a.len() + b.len() - common;
        if union == 0 {
            return 0.0;
        }
        common as f64 / union as f64
    }
}

fn is_stopword(w: &str) -> bool {
    w.len() <= 5 && STOPWORDS.iter().any(|s| s.eq_ignore_ascii_case(w))
}

/// A fixed-key hash of the lowercased word; allocates only for a word that
/// has upper-case letters.
fn hash_lowercase(w: &str) -> u64 {
    let mut h = DefaultHasher::new();
    if w.chars().any(char::is_uppercase) {
        w.to_lowercase().hash(&mut h);
    } else {
        w.hash(&mut h);
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_lowercased_split_and_stopwords_dropped() {
        let a = WordSet::new("The cargo-test command");
        assert_eq!(a, WordSet::new("cargo TEST Command command"));
        assert_eq!(a.len(), 3);
        assert!(WordSet::new("the and of to").is_empty());
        assert_eq!(WordSet::new("Ünïcode ÜNÏCODE"), WordSet::new("ünïcode"));
    }

    #[test]
    fn jaccard_of_sets() {
        let a = WordSet::new("The cargo-test command");
        assert!((a.jaccard(&a) - 1.0).abs() < f64::EPSILON);
        assert!(WordSet::default().jaccard(&WordSet::default()).abs() < f64::EPSILON);
        let b = WordSet::new("cargo build");
        assert!((a.jaccard(&b) - 0.25).abs() < 1e-9);
        assert!((b.jaccard(&a) - 0.25).abs() < 1e-9);
        assert_eq!(a.jaccard(&WordSet::new("unrelated words")), 0.0);
    }
}
