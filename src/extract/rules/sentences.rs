//! The prose reader every family of rules shares: a message's text as
//! sentences (fenced and indented code, tables, quotes and tool lines
//! skipped; markdown stripped, inline code kept), whether a rule may read a
//! sentence at all (no question, no hypothetical, no secret), its body
//! without leading fillers, and its content words.

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;

use super::re;
use crate::secrets::contains_secret;
use crate::text::words;

/// One prose sentence, markdown stripped.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Sentence {
    pub(super) text: String,
    pub(super) question: bool,
}

static LINK: LazyLock<Regex> = LazyLock::new(|| re(r"\[([^\]]+)\]\([^)]*\)"));
static LIST_MARK: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(?:#{1,6}\s+|[-*+•]\s+|\d{1,3}[.)]\s+)+"));
static HYPOTHETICAL: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:if|what if|maybe|perhaps|should we|could|would|can we|do we|shall we|unless|suppose|imagine|in case|not sure|i wonder|i think|i guess|hmm|wait)\b",
    )
});

/// Prose sentences of `text`.
pub(super) fn sentences(text: &str) -> Vec<Sentence> {
    let mut out = Vec::new();
    let mut in_fence = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence || !is_prose_line(line) {
            continue;
        }
        split_sentences(&strip_markdown(t), &mut out);
    }
    out
}

/// False for indented code, tables, quotes, tool lines and markup.
fn is_prose_line(line: &str) -> bool {
    let t = line.trim();
    !(t.is_empty()
        || line.starts_with("    ")
        || line.starts_with('\t')
        || t.starts_with(['|', '>', '<', '{', '}', '[', '$', '='])
        || t.starts_with("//"))
}

/// Emphasis, headings, list markers and links removed; inline code kept.
fn strip_markdown(line: &str) -> String {
    let no_links = LINK.replace_all(line, "$1");
    let no_marks = LIST_MARK.replace(&no_links, "");
    no_marks.replace("**", "").trim().to_string()
}

/// Splits after `.`, `!` or `?` followed by whitespace.
fn split_sentences(line: &str, out: &mut Vec<Sentence>) {
    let mut start = 0;
    let mut chars = line.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let boundary =
            matches!(c, '.' | '!' | '?') && chars.peek().is_none_or(|(_, n)| n.is_whitespace());
        if boundary {
            push_sentence(&line[start..i + c.len_utf8()], out);
            start = i + c.len_utf8();
        }
    }
    push_sentence(&line[start..], out);
}

fn push_sentence(s: &str, out: &mut Vec<Sentence>) {
    let text = s.trim();
    if text.chars().filter(|c| c.is_alphanumeric()).count() >= 3 {
        out.push(Sentence {
            text: text.to_string(),
            question: text.contains('?'),
        });
    }
}

/// A sentence a rule may read: no question, no hypothetical, no secret,
/// at least three words and at most 300 characters.
pub(super) fn usable(s: &Sentence) -> bool {
    !s.question
        && !HYPOTHETICAL.is_match(&s.text)
        && words(&s.text).count() >= 3
        && s.text.chars().count() <= 300
        && !contains_secret(&s.text)
}

static FILLERS: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:(?:please|pls|also|and|but|so|ok|okay|just|oh|however|then|note|remember|important)\b[,:!]?\s*)+",
    )
});

/// `s` without leading fillers (`please`, `also`, `ok,` ...).
pub(super) fn body(s: &str) -> &str {
    FILLERS.find(s).map_or(s, |m| &s[m.end()..])
}

static STOPWORDS: LazyLock<HashSet<&'static str>> = LazyLock::new(|| {
    "the a an and or but of to in on for with at by from is are was were be been it this that these those we you i our your let lets s use using just also so as not no yes do does did will would can could should have has had there here then than into about all any some more most very great good ok okay perfect sure now"
        .split(' ')
        .collect()
});

/// Lowercase content words of `s` (no stopwords, at least three letters).
pub(super) fn content_words(s: &str) -> HashSet<String> {
    words(s)
        .map(str::to_lowercase)
        .filter(|w| w.chars().count() >= 3 && !STOPWORDS.contains(w.as_str()))
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::extract::rules::extract;
    use crate::extract::rules::test_transcripts::{asst, user};
    use crate::records::Category;

    #[test]
    fn no_chain_of_thought_or_code_dump() {
        let msgs = [
            user("u1", "hi"),
            asst("a1", "Hmm, maybe we decided to use redis? Wait, I think we should go with Postgres.\n```\nlet's use = 1;\nwe decided = 2;\n```"),
        ];
        assert!(extract(&msgs)
            .iter()
            .all(|c| c.confidence < 0.6 || c.category != Category::Decisions));
        assert!(extract(&msgs).iter().all(|c| !c.text.contains("```")));
    }
}
