//! What a rule proposes, [`Candidate`], and how every family shapes one:
//! the fact's text (one capitalised sentence, capped), its key (a title of
//! whole words), its evidence (message ids, capped), and the final merge of
//! one session's candidates (secrets dropped, same keys and same incidents
//! merged, strongest first).

use std::collections::HashMap;

use super::incidents::same_incident;
use super::{MAX_KEY_CHARS, MAX_TEXT_CHARS};
use crate::ingest::model::Message;
use crate::records::Category;
use crate::secrets::contains_secret;
use crate::store::Scope;
use crate::text::{slug, truncate_chars};

/// Most evidence ids per candidate.
const MAX_EVIDENCE: usize = 6;

/// One proposed fact.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// Decisions, Procedures, Principles, Incidents or Preferences.
    pub category: Category,
    /// Personal preferences are `User`; facts about the project `Project`.
    pub scope: Scope,
    /// A short human title; the caller turns it into `auto:<slug>`.
    pub key: String,
    /// The fact: one to three self-contained sentences.
    pub text: String,
    /// 0..1, honest.
    pub confidence: f64,
    /// Native ids of the evidence messages, in transcript order.
    pub evidence: Vec<String>,
}

pub(super) fn candidate(
    category: Category,
    scope: Scope,
    text: &str,
    confidence: f64,
) -> Candidate {
    let text = as_fact(text);
    Candidate {
        category,
        scope,
        key: title(&text),
        text,
        confidence,
        evidence: Vec::new(),
    }
}

/// `s` with a capital first letter and one final period.
pub(super) fn as_fact(s: &str) -> String {
    let t = s.trim().trim_end_matches(['.', '!', ',', ';', ':']).trim();
    let first_word = t.split_whitespace().next().unwrap_or("");
    let mut chars = t.chars();
    let Some(first) = chars.next() else {
        return String::new();
    };
    let text = if first_word
        .chars()
        .all(|c| c.is_ascii_lowercase() || c == '\'')
    {
        format!("{}{}.", first.to_uppercase(), chars.as_str())
    } else {
        format!("{t}.")
    };
    cut_text(&text, MAX_TEXT_CHARS)
}

/// At most `max` chars, cut at a word boundary with an ellipsis.
pub(super) fn cut_text(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let head = truncate_chars(s, max.saturating_sub(1));
    let cut = head.rfind(' ').map_or(head, |i| &head[..i]);
    format!("{}…", cut.trim_end_matches([',', ';', ':', ' ']))
}

/// A title from the start of `s`: whole words, at most [`MAX_KEY_CHARS`].
pub(super) fn title(s: &str) -> String {
    let t = s.trim().trim_end_matches(['.', '!', ',', ';', ':']);
    let mut out = String::new();
    for w in t.split_whitespace() {
        if out.chars().count() + w.chars().count() + 1 > MAX_KEY_CHARS {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    if out.is_empty() {
        out = truncate_chars(t, MAX_KEY_CHARS).to_string();
    }
    out
}

/// Native ids of `msgs`, in order, each once, at most [`MAX_EVIDENCE`].
pub(super) fn ids(msgs: &[&Message]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for m in msgs {
        if let Some(id) = &m.id {
            if !out.contains(id) && out.len() < MAX_EVIDENCE {
                out.push(id.clone());
            }
        }
    }
    out
}

/// Ids of the messages at `indices`, in transcript order.
pub(super) fn index_ids(messages: &[Message], indices: &[usize]) -> Vec<String> {
    let mut idx = indices.to_vec();
    idx.sort_unstable();
    idx.dedup();
    let picked: Vec<&Message> = idx.iter().filter_map(|&i| messages.get(i)).collect();
    ids(&picked)
}

/// Drops secrets, merges same-key candidates and sorts by confidence.
pub(super) fn finish(cands: Vec<Candidate>) -> Vec<Candidate> {
    let mut best: HashMap<String, Candidate> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    for c in cands {
        if c.text.is_empty() || contains_secret(&c.text) || contains_secret(&c.key) {
            continue;
        }
        let k = slug(&c.key, MAX_KEY_CHARS);
        match best.get(&k) {
            Some(old) if old.confidence >= c.confidence => {}
            Some(_) => {
                best.insert(k, c);
            }
            None => {
                order.push(k.clone());
                best.insert(k, c);
            }
        }
    }
    let mut merged: Vec<Candidate> = order.iter().filter_map(|k| best.remove(k)).collect();
    merged.sort_by(|a, b| b.confidence.total_cmp(&a.confidence));
    let mut out: Vec<Candidate> = Vec::with_capacity(merged.len());
    for c in merged {
        if !out.iter().any(|k| same_incident(k, &c)) {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::rules::extract;
    use crate::extract::rules::test_transcripts::user;

    #[test]
    fn secrets_are_never_emitted() {
        let key = format!("ghp_{}", "a1B2c3D4e5".repeat(4));
        let msgs = [
            user(
                "u1",
                &format!("always export GITHUB_TOKEN={key} before deploying"),
            ),
            user("u2", "we decided to use password=Hunter2-Xy9 for staging"),
        ];
        let c = extract(&msgs);
        assert!(c.iter().all(|c| !contains_secret(&c.text)), "{c:?}");
        assert!(c.is_empty(), "{c:?}");
    }

    #[test]
    fn text_and_key_are_capped() {
        let long = format!("always {}", "use the shared helper module ".repeat(30));
        let c = extract(&[user("u1", &long)]);
        assert!(c.is_empty() || c.iter().all(|c| c.text.chars().count() <= MAX_TEXT_CHARS));
        assert!(cut_text(&"word ".repeat(100), 20).chars().count() <= 20);
        assert!(title(&"abcdef ".repeat(20)).chars().count() <= MAX_KEY_CHARS);
    }
}
