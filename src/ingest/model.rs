//! The data model every transcript and ticket parser produces.
//!
//! Parsers turn bytes into [`ParsedSession`] or [`Ticket`]s; the chunker turns
//! messages into chunks; the index writer stores them. Nothing here touches
//! SQL or the filesystem.

use serde::{Deserialize, Serialize};

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
    System,
    Tool,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::System => "system",
            Role::Tool => "tool",
        }
    }
}

/// One message of a transcript, already reduced to indexable text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Native id: Claude `uuid`, Codex call id, Gemini message or call `id`,
    /// neutral `id`, LoCoMo `dia_id`.
    pub id: Option<String>,
    pub role: Role,
    /// Speaker name when the format has one.
    pub name: Option<String>,
    /// The text to index (tool noise already truncated by the parser or the
    /// chunker; secrets are redacted later, before writing).
    pub text: String,
    /// Unix seconds.
    pub timestamp: Option<i64>,
    /// A tool result or command that failed: never dropped by truncation.
    pub is_error: bool,
}

/// Which launcher wrote a transcript.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Launcher {
    ClaudeCode,
    Codex,
    Gemini,
    Neutral,
    Markdown,
}

impl Launcher {
    pub fn as_str(self) -> &'static str {
        match self {
            Launcher::ClaudeCode => "claude-code",
            Launcher::Codex => "codex",
            Launcher::Gemini => "gemini",
            Launcher::Neutral => "neutral",
            Launcher::Markdown => "markdown",
        }
    }
}

/// Session-level details.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionMeta {
    /// Session id; parsers fall back to the file stem.
    pub id: String,
    pub title: Option<String>,
    pub cwd: Option<String>,
    pub git_branch: Option<String>,
    /// Unix seconds.
    pub started_at: Option<i64>,
    /// For a Claude Code subagent file: the session that spawned it.
    pub parent_id: Option<String>,
    /// What the session did: the subject of each commit it made, in order
    /// (see [`crate::ingest::commits`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub did: Vec<String>,
}

/// A problem in one line of a source: reported as `path:line`, counted, and
/// skipped. It never aborts the batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Problem {
    /// 1-based line number in the file (0 when not line-based).
    pub line: usize,
    pub message: String,
}

/// What a transcript parser returns.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParsedSession {
    pub meta: SessionMeta,
    pub messages: Vec<Message>,
    pub problems: Vec<Problem>,
    /// Lines of types the parser does not read (a launcher's newer line
    /// types), skipped: counted, not problems.
    pub unknown_lines: usize,
    /// Bytes of the input that were fully consumed (complete lines). An
    /// incomplete final line (a transcript still being written) is not
    /// consumed, so the next incremental run re-reads it.
    pub consumed: usize,
}

/// A ticket, from Markdown with frontmatter, GitHub issue JSON, or plain text.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ticket {
    pub id: String,
    pub title: String,
    pub status: Option<String>,
    pub labels: Vec<String>,
    /// Unix seconds.
    pub created: Option<i64>,
    pub updated: Option<i64>,
    pub body: String,
    /// Comment texts, each prefixed by its author when known.
    pub comments: Vec<String>,
}
