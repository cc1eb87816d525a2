//! Tickets: a title and paragraphs of exactly the words asked for, about
//! the topic of one generated session (the questions the recall bench
//! asks its corpus).

use crate::{stream, tags, Mix, Text, Vocab};

/// Ticket `i` of the set of `seed`: `words` whitespace-separated words
/// (title included) about one of `sessions` sessions' topics.
pub fn ticket(vocab: &Vocab, seed: u64, sessions: usize, i: usize, words: usize) -> String {
    let mut r = stream(seed, tags::TICKET, i as u64);
    let s = r.usize(..sessions.max(1));
    let mut t = Text::new(vocab, r, Mix::CHAT).with_topic(vocab.topic(s), 100);
    let mut out = t.title();
    out.push_str("\n\n");
    let mut left = words.saturating_sub(out.split_whitespace().count());
    while left > 0 {
        let n = t.rng.usize(25..=70).min(left);
        let mut p = String::new();
        t.prose(&mut p, n);
        // `prose` counts the words it draws; some hold no space or two.
        // Trim to exact whitespace-separated words.
        let mut ws: Vec<&str> = p.split_whitespace().collect();
        ws.truncate(left);
        left -= ws.len();
        out.push_str(&ws.join(" "));
        out.push_str("\n\n");
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ticket_has_exactly_its_words() {
        let v = Vocab::new(4);
        for i in 0..20 {
            let t = ticket(&v, 4, 100, i, 300);
            assert_eq!(t.split_whitespace().count(), 300, "{t}");
        }
        assert_eq!(ticket(&v, 4, 100, 3, 300), ticket(&v, 4, 100, 3, 300));
    }
}
