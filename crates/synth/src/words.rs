//! The word lists every generator draws from. The long ones are text files
//! (`words/*.txt`, `#` lines are comments) so the lists read as lists; the
//! short ones are constants. English is in frequency order: a word's place
//! is its [`Zipf`](crate::Zipf) rank.

use std::sync::LazyLock;

fn list(text: &'static str) -> Vec<&'static str> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .flat_map(str::split_whitespace)
        .collect()
}

/// English of coding conversations, most frequent first.
pub static ENGLISH: LazyLock<Vec<&'static str>> =
    LazyLock::new(|| list(include_str!("words/english.txt")));
/// Verbs that start identifiers.
pub static VERBS: LazyLock<Vec<&'static str>> =
    LazyLock::new(|| list(include_str!("words/verbs.txt")));
/// Nouns of code.
pub static NOUNS: LazyLock<Vec<&'static str>> =
    LazyLock::new(|| list(include_str!("words/nouns.txt")));
/// Adjectives of code.
pub static ADJECTIVES: LazyLock<Vec<&'static str>> =
    LazyLock::new(|| list(include_str!("words/adjectives.txt")));

/// File extensions, Rust the most common.
pub const EXTENSIONS: &[&str] = &[
    "rs", "rs", "rs", "ts", "tsx", "py", "go", "ex", "md", "toml", "json",
];
/// First folders of a path in a repository.
pub const TOP_DIRS: &[&str] = &[
    "src", "src", "src", "lib", "tests", "packages", "app", "crates",
];
/// Project names (folders under `/home/dev/projects`).
pub const PROJECTS: &[&str] = &[
    "recall", "spotter", "ledger", "atlas", "harbor", "quill", "orbit", "lumen", "tessera",
    "meridian", "cobalt", "fathom",
];
/// Models an assistant line names.
pub const MODELS: &[&str] = &[
    "claude-opus-4-6",
    "claude-sonnet-4-5-20250929",
    "claude-opus-4-1",
];

/// Syllable parts of the pseudo-words (rare domain vocabulary).
pub const ONSETS: &[&str] = &[
    "b", "br", "c", "ch", "cl", "d", "dr", "f", "fl", "g", "gr", "h", "j", "k", "l", "m", "n", "p",
    "pl", "pr", "qu", "r", "s", "sh", "sk", "sl", "st", "t", "th", "tr", "v", "w", "z",
];
/// See [`ONSETS`].
pub const VOWELS: &[&str] = &["a", "e", "i", "o", "u", "ai", "ea", "io", "ou", "y"];
/// See [`ONSETS`].
pub const CODAS: &[&str] = &["", "", "n", "r", "l", "s", "t", "m", "nd", "st", "rk", "x"];
/// See [`ONSETS`].
pub const SUFFIXES: &[&str] = &[
    "", "", "", "", "ing", "ed", "s", "er", "ion", "able", "ment", "ly",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_read_without_comments_or_repeats() {
        for l in [&ENGLISH, &VERBS, &NOUNS, &ADJECTIVES] {
            assert!(l.iter().all(|w| !w.starts_with('#')));
            let mut s = l.to_vec();
            s.sort_unstable();
            s.dedup();
            assert_eq!(s.len(), l.len());
        }
        assert_eq!(&ENGLISH[..3], ["the", "to", "and"]);
    }
}
