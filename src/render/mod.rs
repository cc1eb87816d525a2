//! Turning a recall [`Response`](crate::recall::Response) into text:
//! `snippets` for people, `prompt` for a system prompt, `json` for programs;
//! and the SessionStart context (`session_start`).
//! Never touches SQL.

mod json;
mod prompt;
mod session_start;
mod snippets;

pub use json::render_json;
pub use prompt::{
    hit_reference, prompt_text, render_prompt, render_prompt_shown, Named, PromptOptions,
    PROMPT_TOKENS,
};
pub use session_start::{render_session_start, SESSION_START_HEADER};
pub use snippets::{render_snippets, Style, MARK_CLOSE, MARK_OPEN};

use crate::recall::{HL_CLOSE, HL_OPEN};

/// The output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Snippets,
    Prompt,
    Json,
}

pub use crate::text::estimate_tokens;

/// A snippet as plain text and the character ranges its highlight marks
/// enclosed: `[start, end)` in Unicode scalar values (Rust `chars`,
/// Python `str`, JavaScript `Array.from`), so markers never mix with the
/// text's own Markdown. Line breaks become spaces, as in [`highlight`].
pub fn highlight_ranges(s: &str) -> (String, Vec<[usize; 2]>) {
    let mut out = String::with_capacity(s.len());
    let mut ranges = Vec::new();
    let (mut at, mut open) = (0usize, None);
    for c in s.chars() {
        match c {
            HL_OPEN => open = Some(at),
            HL_CLOSE => {
                if let Some(start) = open.take() {
                    if start < at {
                        ranges.push([start, at]);
                    }
                }
            }
            c => {
                out.push(if matches!(c, '\n' | '\r') { ' ' } else { c });
                at += 1;
            }
        }
    }
    (out, ranges)
}

/// Replace highlight marks with `open`/`close`.
pub fn highlight(s: &str, open: &str, close: &str) -> String {
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            HL_OPEN => out.push_str(open),
            HL_CLOSE => out.push_str(close),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 37 item 13: JSON snippets wrapped matches in `**`, which
    /// nested with the text's own bold (`****Codex**`).
    #[test]
    fn r37_highlights_are_ranges_beside_the_text_not_marks_in_it() {
        let s = format!("run **{HL_OPEN}Codex{HL_CLOSE}** with\n{HL_OPEN}é{HL_CLOSE}");
        let (text, ranges) = highlight_ranges(&s);
        assert_eq!(text, "run **Codex** with é");
        assert_eq!(ranges, [[6, 11], [19, 20]]);
        let chars: Vec<char> = text.chars().collect();
        let marked: Vec<String> = ranges
            .iter()
            .map(|[a, b]| chars[*a..*b].iter().collect())
            .collect();
        assert_eq!(marked, ["Codex", "é"]);
    }
}
