//! Facts as an agent's memory keeps them: a short key, a category, a body
//! and keywords, each about the topic of one generated session, like a
//! fact distilled from it. The benches render them as recall's records.

use std::collections::HashSet;

use crate::{stream, tags, Draw, Mix, Text, Vocab};

/// One fact.
#[derive(Clone, Debug)]
pub struct Fact {
    /// Unique among the facts of one call.
    pub key: String,
    /// An index below the `categories` asked for.
    pub category: usize,
    pub body: String,
    pub keywords: Vec<String>,
}

/// `n` facts of the corpus of `seed` over `sessions` sessions' topics,
/// in `categories` categories.
pub fn facts(vocab: &Vocab, seed: u64, n: usize, sessions: usize, categories: usize) -> Vec<Fact> {
    let mut keys = HashSet::new();
    (0..n)
        .map(|i| {
            let s = stream(seed, tags::FACT_SESSION, i as u64).usize(..sessions.max(1));
            let rng = stream(seed, tags::FACT, i as u64);
            let mut t = Text::new(vocab, rng, Mix::CHAT).with_topic(vocab.topic(s), 120);
            let mut key = t.title();
            while !keys.insert(key.clone()) {
                key.push(' ');
                key.push_str(t.topic_word());
            }
            let mut body = String::new();
            let words = t.rng.log_uniform(15, 150);
            t.prose(&mut body, words);
            let keywords = (0..t.rng.usize(..4))
                .map(|_| t.topic_word().to_lowercase())
                .collect();
            Fact {
                key,
                category: t.rng.usize(..categories),
                body,
                keywords,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_unique_and_facts_repeat_for_a_seed() {
        let v = Vocab::new(2);
        let a = facts(&v, 2, 500, 40, 6);
        let keys: HashSet<&str> = a.iter().map(|f| f.key.as_str()).collect();
        assert_eq!(keys.len(), 500);
        assert!(a.iter().all(|f| f.category < 6 && !f.body.is_empty()));
        let b = facts(&v, 2, 500, 40, 6);
        assert!(a
            .iter()
            .zip(&b)
            .all(|(x, y)| x.key == y.key && x.body == y.body));
    }
}
