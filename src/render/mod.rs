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
    hit_reference, prompt_text, render_prompt, render_prompt_shown, PromptOptions, PROMPT_TOKENS,
};
pub use session_start::{render_session_start, SESSION_START_HEADER};
pub use snippets::{render_snippets, Style};

use crate::recall::{HL_CLOSE, HL_OPEN};

/// The output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Snippets,
    Prompt,
    Json,
}

pub use crate::text::estimate_tokens;

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
