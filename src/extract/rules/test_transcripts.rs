//! Transcripts for the rule tests: messages by role with native ids, a
//! Claude Code tool run (the call and its result), and the candidates of
//! one category.

use super::Candidate;
use crate::ingest::model::{Message, Role};
use crate::records::Category;

pub(super) fn msg(id: &str, role: Role, text: &str) -> Message {
    Message {
        id: Some(id.to_string()),
        role,
        name: None,
        text: text.to_string(),
        timestamp: None,
        is_error: false,
    }
}

pub(super) fn user(id: &str, text: &str) -> Message {
    msg(id, Role::User, text)
}

pub(super) fn asst(id: &str, text: &str) -> Message {
    msg(id, Role::Assistant, text)
}

pub(super) fn tool(id: &str, text: &str, is_error: bool) -> Message {
    Message {
        is_error,
        ..msg(id, Role::Tool, text)
    }
}

pub(super) fn of(cands: &[Candidate], cat: Category) -> Vec<&Candidate> {
    cands.iter().filter(|c| c.category == cat).collect()
}

pub(super) fn run(id: &str, cmd: &str, out: &str, err: bool) -> [Message; 2] {
    [
        asst(&format!("{id}c"), &format!("[tool Bash] {cmd}")),
        tool(&format!("{id}r"), out, err),
    ]
}
