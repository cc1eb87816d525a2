//! A seeded vocabulary: the English of coding talk followed by a long tail
//! of pseudo-words (rare domain vocabulary), plus code identifiers,
//! CamelCase type names and file paths, each sampled by Zipf rank. Per
//! session, a topic of rare words and identifiers, so that rare terms
//! cluster by session as they do in real transcripts.

use std::collections::HashSet;

use crate::words::{
    ADJECTIVES, CODAS, ENGLISH, EXTENSIONS, NOUNS, ONSETS, SUFFIXES, TOP_DIRS, VERBS, VOWELS,
};
use crate::{cap, stream, tags, Draw, Rng, Zipf};

/// Pseudo-words after the English head.
pub const TAIL_WORDS: usize = 30_000;
const IDENTS: usize = 8_000;
const TYPES: usize = 2_000;
const FILES: usize = 3_000;
/// Rare words in a topic.
const TOPIC_WORDS: usize = 30;
/// Identifiers in a topic.
const TOPIC_IDENTS: usize = 10;

/// Everything words are drawn from; the same seed gives the same lists.
pub struct Vocab {
    seed: u64,
    /// English (the first `ENGLISH.len()`), then the pseudo-word tail.
    words: Vec<String>,
    idents: Vec<String>,
    types: Vec<String>,
    files: Vec<String>,
    english_z: Zipf,
    words_z: Zipf,
    idents_z: Zipf,
    types_z: Zipf,
    files_z: Zipf,
}

impl Vocab {
    /// The vocabulary of `seed`.
    pub fn new(seed: u64) -> Vocab {
        let mut r = stream(seed, tags::VOCAB, 0);
        let words = words(&mut r);
        let idents = idents(&mut r);
        let types = (0..TYPES)
            .map(|_| match r.usize(..3) {
                0 => format!("{}{}", cap(r.pick(&ADJECTIVES)), cap(r.pick(&NOUNS))),
                _ => format!("{}{}", cap(r.pick(&NOUNS)), cap(r.pick(&NOUNS))),
            })
            .collect();
        let files = (0..FILES).map(|_| file(&mut r)).collect();
        Vocab {
            seed,
            english_z: Zipf::new(ENGLISH.len()),
            words_z: Zipf::new(words.len()),
            words,
            idents,
            types,
            files,
            idents_z: Zipf::new(IDENTS),
            types_z: Zipf::new(TYPES),
            files_z: Zipf::new(FILES),
        }
    }

    /// An English word, by frequency.
    pub fn english(&self, r: &mut Rng) -> &str {
        &self.words[self.english_z.sample(r)]
    }

    /// A word of English or of the tail, by frequency over both (the tail
    /// then makes up about 40% of the words).
    pub fn word(&self, r: &mut Rng) -> &str {
        &self.words[self.words_z.sample(r)]
    }

    /// A code identifier (`get_config`, `parseToken`, `QUEUE_LIMIT`).
    pub fn ident(&self, r: &mut Rng) -> &str {
        &self.idents[self.idents_z.sample(r)]
    }

    /// A CamelCase type name.
    pub fn ty(&self, r: &mut Rng) -> &str {
        &self.types[self.types_z.sample(r)]
    }

    /// A file path relative to a repository.
    pub fn file(&self, r: &mut Rng) -> &str {
        &self.files[self.files_z.sample(r)]
    }

    /// The topic of session `s`: rare words and identifiers, uniform over
    /// the tail (so each rare word is the topic of only a few sessions).
    pub fn topic(&self, s: usize) -> Vec<&str> {
        let mut r = stream(self.seed, tags::TOPIC, s as u64);
        let head = ENGLISH.len();
        let mut t: Vec<&str> = (0..TOPIC_WORDS)
            .map(|_| self.words[head + r.usize(..TAIL_WORDS)].as_str())
            .collect();
        t.extend((0..TOPIC_IDENTS).map(|_| self.idents[r.usize(..IDENTS)].as_str()));
        t
    }
}

/// English, then `TAIL_WORDS` pseudo-words of 1-3 syllables (mostly 2:
/// 4-12 letters), none twice and none an English word.
fn words(r: &mut Rng) -> Vec<String> {
    let mut seen: HashSet<String> = ENGLISH.iter().map(|w| w.to_string()).collect();
    let mut words: Vec<String> = ENGLISH.iter().map(|w| w.to_string()).collect();
    while words.len() < ENGLISH.len() + TAIL_WORDS {
        let mut w = String::new();
        let syllables = [1, 2, 2, 2, 2, 3][r.usize(..6)];
        for k in 0..syllables {
            w.push_str(r.pick(ONSETS));
            w.push_str(r.pick(VOWELS));
            if k + 1 == syllables || r.chance(300) {
                w.push_str(r.pick(CODAS));
            }
        }
        w.push_str(r.pick(SUFFIXES));
        if w.len() >= 4 && seen.insert(w.clone()) {
            words.push(w);
        }
    }
    words
}

/// `IDENTS` distinct identifiers in snake_case, camelCase and CONSTANT_CASE.
fn idents(r: &mut Rng) -> Vec<String> {
    let mut idents = Vec::with_capacity(IDENTS);
    let mut seen = HashSet::new();
    while idents.len() < IDENTS {
        let (v, n) = (r.pick(&VERBS), r.pick(&NOUNS));
        let id = match r.usize(..10) {
            0..=3 => format!("{v}_{n}"),
            4..=5 => format!("{v}_{}_{n}", r.pick(&ADJECTIVES)),
            6..=8 => format!("{v}{}{}", cap(r.pick(&ADJECTIVES)), cap(n)),
            _ => format!("{}_{}", n.to_uppercase(), r.pick(&NOUNS).to_uppercase()),
        };
        if seen.insert(id.clone()) {
            idents.push(id);
        }
    }
    idents
}

/// `src/cache/writer.rs`, `tests/queue/pool_lock.ts`.
fn file(r: &mut Rng) -> String {
    let mut p = r.pick(TOP_DIRS).to_string();
    for _ in 0..r.usize(1..=3) {
        p.push('/');
        p.push_str(r.pick(&NOUNS));
    }
    if r.chance(400) {
        p.push('_');
        p.push_str(r.pick(&NOUNS));
    }
    p.push('.');
    p.push_str(r.pick(EXTENSIONS));
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_vocabulary_and_topics() {
        let (a, b) = (Vocab::new(5), Vocab::new(5));
        assert_eq!(a.words, b.words);
        assert_eq!(a.idents, b.idents);
        assert_eq!(a.files, b.files);
        assert_eq!(a.topic(17), b.topic(17));
        assert_ne!(a.topic(17), a.topic(18));
        assert_ne!(Vocab::new(6).words, a.words);
    }

    #[test]
    fn topics_are_rare_words() {
        let v = Vocab::new(1);
        let english: HashSet<&str> = ENGLISH.iter().copied().collect();
        let t = v.topic(0);
        assert_eq!(t.len(), TOPIC_WORDS + TOPIC_IDENTS);
        assert!(t[..TOPIC_WORDS].iter().all(|w| !english.contains(w)));
    }
}
