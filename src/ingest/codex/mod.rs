//! OpenAI Codex CLI rollout parser (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).
//!
//! Owns turning one Codex rollout (or the appended tail of one) into a
//! [`ParsedSession`]. Lines are `{timestamp, type, payload}`; each is decoded
//! by `lines::read_lines` (driven by `transcript::parse`, the skeleton it
//! shares with `claude_code`) into one borrowed, lenient struct (`Item`) whose
//! `payload` is the same struct again, so every payload kind is read in a
//! single pass without `serde_json::Value` (encrypted reasoning, base
//! instructions and token counts are skipped unread).
//!
//! # What is indexed
//! * **User text** from `event_msg/user_message` ([`Role::User`]). Text that
//!   is itself injected context (starts with `<environment_context>`,
//!   `<user_instructions>`, `<permissions instructions>` or
//!   `# AGENTS.md instructions`) is dropped. `response_item` messages with
//!   role `user` are used **only when the input has no `user_message` event
//!   at all** (older rollouts, and 0.171, which writes no such event), with
//!   the same filter; `developer`/`system` messages (0.171 puts hooks'
//!   context there) never are.
//! * **Assistant text**: `response_item` messages with role `assistant`
//!   (`output_text` blocks joined by `\n`) are preferred. An
//!   `event_msg/agent_message` is kept only if no assistant `response_item`
//!   in the same input has the same trimmed text (on the real files every
//!   `agent_message` duplicates one; Codex Desktop writes only the
//!   `response_item`).
//! * **Tool calls** ([`Role::Tool`], one message per call, id = `call_id`,
//!   name = the function name): `function_call`, `local_shell_call` and
//!   `custom_tool_call`, joined by `call_id` with their
//!   `function_call_output` / `custom_tool_call_output` and with
//!   `exec_command_end` / `patch_apply_end` events. The first line is
//!   compact: `[exec] cargo test` for shell tools (`shell`, `exec_command`,
//!   `shell_command`, `container.exec`, `local_shell`; `bash -lc X` is shown
//!   as `X`), `[apply_patch] a.rs, b.rs` (paths from the patch headers),
//!   `[write_stdin] ...`, or `[name] <compact JSON args, ~200 chars>`. Then
//!   the output, cut to [`Options::tool_output_cap`] chars (4× for errors).
//!   Output source: `exec_command_end` (`aggregated_output`, else stdout +
//!   stderr, and `exit_code`) wins over `function_call_output`, whose JSON
//!   form (`{"output", "metadata": {"exit_code"}}`) or unified-exec header
//!   (`Chunk ID: ... Process exited with code N ... Output:`) is unwrapped.
//!   A non-zero exit code or `patch_apply_end` with `success: false` sets
//!   [`Message::is_error`]. `write_stdin` calls with empty `chars` are pure
//!   polling (their output is repeated in `exec_command_end`) and are
//!   dropped with their outputs. An output or `exec_command_end` whose call
//!   is not in the input becomes its own Tool message (`[tool output]` /
//!   `[exec] cmd` header), id = `call_id`.
//! * `event_msg/web_search_end` as `[web_search] query` (Tool, id =
//!   `call_id`; the matching `response_item/web_search_call` is skipped) and
//!   `compacted` summaries as [`Role::System`].
//!
//! Skipped silently: `reasoning`, `turn_context`, `ghost_snapshot`, and any
//! other `response_item`/`event_msg` payload type (`task_started`,
//! `task_complete`, `token_count`, `agent_reasoning`, ...: Codex adds new
//! ones often). An unknown top-level `type` (0.171 adds `world_state` and
//! `token_usage_record`) is skipped and counted in
//! [`ParsedSession::unknown_lines`]; a missing one or a non-object payload
//! is a [`Problem`](super::model::Problem).
//!
//! Messages without a native id (user and agent messages, summaries, and
//! assistant messages without `id`) get `"<key>:<line>"`, where `<key>` is
//! the UUID at the end of `stem` (the rollout's session id) or the stem
//! itself. The file-derived key (not the `session_meta` id) keeps ids equal
//! between a full parse and an incremental parse of a tail that no longer
//! contains `session_meta`. Messages are in file order (tool calls at the
//! call's position).
//!
//! A large rollout is read in parts ([`parse_part`]), cut where
//! [`starts_step`] allows, so a call and its outputs, and an
//! `agent_message` and the `response_item` it repeats, are read together;
//! whether a `user_message` was read carries over ([`Carry`]).
//!
//! # Older formats
//! Lines without `payload` are read as a bare response item when their
//! `type` is one (`message`, `function_call`, ...); `{"record_type": ...}`
//! lines are skipped; a first-line header `{"id", "timestamp", ...}` without
//! `type` supplies the session meta.
//!
//! # Session meta
//! From the first `session_meta` (or legacy header): `id` (fallback: the
//! stem key), `cwd` (fallback: first `turn_context` cwd), `git.branch`,
//! `started_at` = payload `timestamp` (fallback: the line's, then the first
//! line timestamp seen), `parent_id` = `source.subagent.thread_spawn.
//! parent_thread_id` for spawned sub-agent threads. `title` = first user
//! message (whitespace collapsed, 80 chars).
//!
//! # Files
//! The shape of a line, the entry points, the sniff and where a part may
//! start are here; the lines made into messages and meta in file order are
//! in `builder`, and what a tool call becomes (its header, its output, its
//! error flag) in `calls`; the tests are in `tests`.
//!
//! [`Role::User`]: super::model::Role::User
//! [`Role::Tool`]: super::model::Role::Tool
//! [`Role::System`]: super::model::Role::System
//! [`Message::is_error`]: super::model::Message::is_error

use serde::de::IgnoredAny;
use serde::Deserialize;

use super::lenient::{Content, LBool, LStr, ObjOr, StrList, TextPart, LI64};
use super::model::ParsedSession;
use super::transcript::{self, FirstLine};

pub use super::transcript::{Options, ERROR_CAP_FACTOR};

use builder::Builder;

mod builder;
mod calls;

/// Bump when the output for the same input changes (forces a re-index;
/// 2: MCP calls named by namespace, recall's own tools' results left out).
pub const PARSER_VERSION: u32 = 2;

/// One rollout line, or its payload (same shape, all fields optional and
/// lenient).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Item<'a> {
    #[serde(rename = "type", borrow)]
    kind: LStr<'a>,
    #[serde(borrow)]
    timestamp: LStr<'a>,
    #[serde(borrow)]
    payload: Option<ObjOr<Box<Item<'a>>>>,
    record_type: Option<IgnoredAny>,
    #[serde(borrow)]
    id: LStr<'a>,
    #[serde(borrow)]
    cwd: LStr<'a>,
    #[serde(borrow)]
    git: Option<ObjOr<Git<'a>>>,
    #[serde(borrow)]
    source: Option<ObjOr<Source<'a>>>,
    #[serde(borrow)]
    role: LStr<'a>,
    #[serde(borrow)]
    content: Option<Content<'a, TextPart<'a>>>,
    #[serde(borrow)]
    message: LStr<'a>,
    #[serde(borrow)]
    name: LStr<'a>,
    /// An MCP tool call's server (`mcp__recall`, 0.171), before `name`.
    #[serde(borrow)]
    namespace: LStr<'a>,
    #[serde(borrow)]
    arguments: LStr<'a>,
    #[serde(borrow)]
    input: LStr<'a>,
    #[serde(borrow)]
    call_id: LStr<'a>,
    #[serde(borrow)]
    output: Option<Content<'a, TextPart<'a>>>,
    #[serde(borrow)]
    action: Option<ObjOr<Action<'a>>>,
    #[serde(borrow)]
    command: StrList<'a>,
    #[serde(borrow)]
    aggregated_output: LStr<'a>,
    #[serde(borrow)]
    stdout: LStr<'a>,
    #[serde(borrow)]
    stderr: LStr<'a>,
    exit_code: LI64,
    success: Option<LBool>,
    #[serde(borrow)]
    query: LStr<'a>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Git<'a> {
    #[serde(borrow)]
    branch: LStr<'a>,
}

/// `session_meta.source` when it is an object (a spawned sub-agent).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Source<'a> {
    #[serde(borrow)]
    subagent: Option<ObjOr<SubAgent<'a>>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct SubAgent<'a> {
    #[serde(borrow)]
    thread_spawn: Option<ObjOr<ThreadSpawn<'a>>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ThreadSpawn<'a> {
    #[serde(borrow)]
    parent_thread_id: LStr<'a>,
}

/// `local_shell_call.action`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Action<'a> {
    #[serde(borrow)]
    command: StrList<'a>,
}

/// Parses a Codex rollout. `input` is the file content starting at byte
/// `base_offset` of the file (0 for a full parse; >0 when an append-only
/// file grew: then only new lines are given), `first_line` is the 1-based
/// line number of input's first line, `stem` is the file stem used as a
/// fallback session id (and as the key of synthesized message ids).
pub fn parse(input: &[u8], first_line: usize, stem: &str, opts: &Options) -> ParsedSession {
    parse_part(input, first_line, stem, opts, &mut Carry::default())
}

/// [`parse`] of one part of a file read in parts, given what the parts
/// before it left in `carry` (empty for the first), which it updates.
pub fn parse_part(
    input: &[u8],
    first_line: usize,
    stem: &str,
    opts: &Options,
    carry: &mut Carry,
) -> ParsedSession {
    transcript::parse(input, first_line, Builder::new(opts, stem_key(stem), carry))
}

/// What a part of a rollout leaves for the parts after it, and, kept in
/// the source's state, for the run that reads what is appended to it.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Carry {
    /// A `user_message` event was read: `response_item` user messages are
    /// then never used (see the module doc).
    #[serde(default)]
    pub had_user_event: bool,
    /// Hashes of text stored since the last step that a line still to come
    /// may repeat (Codex writes a prompt as a `response_item` and then a
    /// `user_message`, and a reply as an `agent_message` and then a
    /// `response_item`): user text taken from a response item before any
    /// event, and agent messages no response item has repeated yet. A run
    /// that stopped between the two (a hook mid-turn) leaves them here, so
    /// the next run's repeat is not stored a second time. A repeat comes
    /// before the next step starts, so a step clears them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending_user: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending_agent: Vec<String>,
}

impl Carry {
    /// The hash a pending text is kept as (short: it only tells a repeat
    /// from another text of one step).
    fn mark(text: &str) -> String {
        blake3::hash(text.as_bytes()).to_hex()[..16].to_string()
    }
}

/// Whether a line of type `kind` (payload type `payload`) starts a step.
fn is_step(kind: Option<&str>, payload: Option<&str>) -> bool {
    matches!(
        (kind, payload),
        (Some("turn_context"), _) | (Some("response_item"), Some("reasoning"))
    )
}

/// Whether a file read in parts may start a part at `line`: a
/// `turn_context` (a new turn) or a `reasoning` item (a new step of the
/// model, which comes after the outputs of the calls before it; an
/// `agent_message` and the `response_item` it repeats come after it
/// together). A light parse of `type` and `payload.type` only.
pub fn starts_step(line: &[u8]) -> bool {
    #[derive(Deserialize)]
    struct Head<'a> {
        #[serde(rename = "type", borrow, default)]
        kind: LStr<'a>,
        #[serde(borrow, default)]
        payload: Option<ObjOr<Kind<'a>>>,
    }
    #[derive(Deserialize)]
    struct Kind<'a> {
        #[serde(rename = "type", borrow, default)]
        kind: LStr<'a>,
    }
    let Ok(head) = serde_json::from_slice::<Head>(line) else {
        return false;
    };
    let payload = match &head.payload {
        Some(ObjOr::Obj(p)) => p.kind.get(),
        _ => None,
    };
    is_step(head.kind.get(), payload)
}

/// Cheap content sniff on the first few KB: does this look like a Codex
/// rollout? Decides on the first non-blank line: a Codex envelope type with a
/// `payload`, or a legacy `{id, timestamp}` header without `type`. A first
/// line cut by the end of `head` is judged by its start.
pub fn sniff(head: &[u8]) -> bool {
    transcript::sniff::<SniffLine>(head)
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct SniffLine<'a> {
    #[serde(rename = "type", borrow)]
    kind: LStr<'a>,
    payload: Option<IgnoredAny>,
    #[serde(borrow)]
    id: LStr<'a>,
    #[serde(borrow)]
    timestamp: LStr<'a>,
    #[serde(rename = "sessionId")]
    session_id: Option<IgnoredAny>,
}

impl<'a> FirstLine<'a> for SniffLine<'a> {
    fn is_format(&self) -> bool {
        let envelope = matches!(
            self.kind.get(),
            Some("session_meta" | "response_item" | "event_msg" | "turn_context" | "compacted")
        );
        let legacy_header =
            self.kind.get().is_none() && self.id.get().is_some() && self.timestamp.get().is_some();
        self.session_id.is_none() && ((envelope && self.payload.is_some()) || legacy_header)
    }

    fn cut_is_format(line: &[u8]) -> bool {
        line.starts_with(b"{\"timestamp\"") && transcript::has(line, b"\"payload\"")
    }
}

/// The session key of a stem: its trailing UUID (`rollout-<date>-<uuid>`),
/// else the stem itself.
fn stem_key(stem: &str) -> &str {
    let Some(tail) = stem.len().checked_sub(36).and_then(|i| stem.get(i..)) else {
        return stem;
    };
    let uuid_like = tail.char_indices().all(|(i, c)| match i {
        8 | 13 | 18 | 23 => c == '-',
        _ => c.is_ascii_hexdigit(),
    });
    if uuid_like {
        tail
    } else {
        stem
    }
}

#[cfg(test)]
mod tests;
