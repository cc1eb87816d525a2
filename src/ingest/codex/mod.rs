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
//!   at all** (older rollouts), with the same filter; `developer`/`system`
//!   messages never are.
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
//! ones often). An unknown top-level `type`, a missing one or a non-object
//! payload is a [`Problem`](super::model::Problem).
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

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use serde::de::IgnoredAny;
use serde::Deserialize;

use super::lenient::{Content, LBool, LStr, ObjOr, StrList, TextPart, LI64};
use super::lines::Problems;
use super::model::{Message, ParsedSession, Role, SessionMeta};
use super::transcript::{self, FirstLine, Transcript, ARGS_CAP, DETAIL_CAP, TITLE_CAP};
use super::{lenient, values};

pub use super::transcript::{Options, ERROR_CAP_FACTOR};

/// Bump when the output for the same input changes (forces a re-index).
pub const PARSER_VERSION: u32 = 1;

/// User text starting with one of these is injected context, not typed.
const INJECTED_PREFIXES: [&str; 4] = [
    "<environment_context>",
    "<user_instructions>",
    "<permissions instructions>",
    "# AGENTS.md instructions",
];

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

/// The JSON `arguments` of a function call (only the fields we show).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Args<'a> {
    #[serde(borrow)]
    command: StrList<'a>,
    #[serde(borrow)]
    cmd: StrList<'a>,
    #[serde(borrow)]
    chars: LStr<'a>,
    session_id: LI64,
    #[serde(borrow)]
    input: LStr<'a>,
}

/// The JSON form of an older `function_call_output.output`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct JsonOutput<'a> {
    #[serde(borrow)]
    output: LStr<'a>,
    metadata: Option<ObjOr<OutputMeta>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct OutputMeta {
    exit_code: LI64,
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

/// What a part of a rollout leaves for the parts after it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Carry {
    /// A `user_message` event was read: `response_item` user messages are
    /// then never used (see the module doc).
    pub had_user_event: bool,
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
    matches!(
        (head.kind.get(), payload),
        (Some("turn_context"), _) | (Some("response_item"), Some("reasoning"))
    )
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

/// Where a plain message came from (for the dedupe / fallback rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    Normal,
    AgentMessageEvent,
    ResponseItemUser,
}

/// Join state of a tool call.
#[derive(Debug, Default)]
struct CallState {
    header: String,
    output: Option<String>,
    exit_code: Option<i64>,
    patch_ok: Option<bool>,
    /// `exec_command_end` was seen: its output and exit code win.
    from_end_event: bool,
}

/// A message under construction.
struct Unit {
    id: String,
    role: Role,
    name: Option<String>,
    text: String,
    timestamp: Option<i64>,
    origin: Origin,
    call: Option<CallState>,
}

/// Session-level facts gathered in file order.
#[derive(Default)]
struct MetaAcc {
    seen: bool,
    id: Option<String>,
    cwd: Option<String>,
    turn_cwd: Option<String>,
    git_branch: Option<String>,
    started_at: Option<i64>,
    first_ts: Option<i64>,
    parent_id: Option<String>,
}

struct Builder<'k, 'o, 'c> {
    opts: &'o Options,
    key: &'k str,
    units: Vec<Unit>,
    calls: HashMap<String, usize>,
    skipped_calls: HashSet<String>,
    assistant_texts: HashSet<String>,
    /// What the parts before this one left, updated as lines are read.
    carry: &'c mut Carry,
    meta: MetaAcc,
}

impl<'a> Transcript<'a> for Builder<'_, '_, '_> {
    type Line = Item<'a>;

    fn line(&mut self, n: usize, item: Item<'a>, problems: &mut Problems) {
        let ts = item.timestamp.get().and_then(values::parse_ts);
        if self.meta.first_ts.is_none() {
            self.meta.first_ts = ts;
        }
        let kind = item.kind.get();
        let p = match &item.payload {
            Some(ObjOr::Obj(p)) => p,
            Some(ObjOr::NotObject(k)) => {
                return problems.push(n, format!("payload is {k}, not an object"))
            }
            None => return self.legacy_line(n, &item, ts, problems),
        };
        match kind {
            Some("session_meta") => self.session_meta(p, ts),
            Some("response_item") => self.response_item(n, p, ts),
            Some("event_msg") => self.event(n, p, ts),
            Some("turn_context") => {
                if self.meta.turn_cwd.is_none() {
                    self.meta.turn_cwd = p.cwd.non_blank().map(str::to_owned);
                }
            }
            Some("compacted") => {
                if let Some(text) = p.message.non_blank() {
                    let id = self.synth_id(n);
                    self.push_unit(id, Role::System, text.trim().to_owned(), ts, Origin::Normal);
                }
            }
            other => transcript::unknown_type(n, other, problems),
        }
    }

    fn finish(self) -> (SessionMeta, Vec<Message>) {
        let Builder {
            opts,
            key,
            units,
            assistant_texts,
            carry,
            meta,
            ..
        } = self;
        let messages: Vec<Message> = units
            .into_iter()
            .filter(|u| match u.origin {
                Origin::Normal => true,
                Origin::AgentMessageEvent => !assistant_texts.contains(&u.text),
                Origin::ResponseItemUser => !carry.had_user_event,
            })
            .map(|u| into_message(u, opts))
            .filter(|m| !values::is_blank(&m.text))
            .collect();
        let title = messages
            .iter()
            .find(|m| m.role == Role::User)
            .map(|m| values::title(&m.text, TITLE_CAP));
        let meta = SessionMeta {
            id: meta.id.unwrap_or_else(|| key.to_owned()),
            title,
            cwd: meta.cwd.or(meta.turn_cwd),
            git_branch: meta.git_branch,
            started_at: meta.started_at.or(meta.first_ts),
            parent_id: meta.parent_id,
        };
        (meta, messages)
    }
}

impl<'k, 'o, 'c> Builder<'k, 'o, 'c> {
    fn new(opts: &'o Options, key: &'k str, carry: &'c mut Carry) -> Self {
        Builder {
            opts,
            key,
            units: Vec::new(),
            calls: HashMap::new(),
            skipped_calls: HashSet::new(),
            assistant_texts: HashSet::new(),
            carry,
            meta: MetaAcc::default(),
        }
    }

    /// A line without `payload`: a bare response item, a state record or a
    /// legacy header.
    fn legacy_line(&mut self, n: usize, item: &Item<'_>, ts: Option<i64>, problems: &mut Problems) {
        match item.kind.get() {
            Some(
                "message"
                | "function_call"
                | "function_call_output"
                | "custom_tool_call"
                | "custom_tool_call_output"
                | "local_shell_call"
                | "reasoning"
                | "web_search_call",
            ) => self.response_item(n, item, ts),
            Some(other) => problems.push(n, format!("unknown line type {other:?} (no payload)")),
            None if item.record_type.is_some() => {}
            None if item.id.get().is_some() && !self.meta.seen => self.session_meta(item, ts),
            None => problems.push(n, "missing \"type\" field"),
        }
    }

    fn session_meta(&mut self, p: &Item<'_>, ts: Option<i64>) {
        let m = &mut self.meta;
        if m.seen {
            return;
        }
        m.seen = true;
        m.id = p.id.non_blank().map(str::to_owned);
        m.cwd = p.cwd.non_blank().map(str::to_owned);
        m.git_branch = p
            .git
            .as_ref()
            .and_then(ObjOr::as_obj)
            .and_then(|g| g.branch.non_blank())
            .map(str::to_owned);
        m.started_at = p.timestamp.get().and_then(values::parse_ts).or(ts);
        m.parent_id = p
            .source
            .as_ref()
            .and_then(ObjOr::as_obj)
            .and_then(|s| {
                s.subagent
                    .as_ref()?
                    .as_obj()?
                    .thread_spawn
                    .as_ref()?
                    .as_obj()
            })
            .and_then(|t| t.parent_thread_id.non_blank())
            .map(str::to_owned);
    }

    fn synth_id(&self, n: usize) -> String {
        format!("{}:{n}", self.key)
    }

    fn push_unit(
        &mut self,
        id: String,
        role: Role,
        text: String,
        ts: Option<i64>,
        origin: Origin,
    ) -> usize {
        self.units.push(Unit {
            id,
            role,
            name: None,
            text,
            timestamp: ts,
            origin,
            call: None,
        });
        self.units.len() - 1
    }

    fn response_item(&mut self, n: usize, p: &Item<'_>, ts: Option<i64>) {
        match p.kind.get() {
            Some("message") => self.response_message(n, p, ts),
            Some("function_call" | "custom_tool_call" | "local_shell_call") => self.call(n, p, ts),
            Some("function_call_output" | "custom_tool_call_output") => self.call_output(n, p, ts),
            _ => {}
        }
    }

    fn response_message(&mut self, n: usize, p: &Item<'_>, ts: Option<i64>) {
        let text = p
            .content
            .as_ref()
            .map(|c| c.join("\n", lenient::text_part))
            .unwrap_or_default();
        let text = text.trim();
        match p.role.get() {
            Some("assistant") if !text.is_empty() => {
                self.assistant_texts.insert(text.to_owned());
                let id =
                    p.id.non_blank()
                        .map_or_else(|| self.synth_id(n), str::to_owned);
                self.push_unit(id, Role::Assistant, text.to_owned(), ts, Origin::Normal);
            }
            Some("user") if !is_injected(text) => {
                let id =
                    p.id.non_blank()
                        .map_or_else(|| self.synth_id(n), str::to_owned);
                self.push_unit(
                    id,
                    Role::User,
                    text.to_owned(),
                    ts,
                    Origin::ResponseItemUser,
                );
            }
            _ => {}
        }
    }

    fn event(&mut self, n: usize, p: &Item<'_>, ts: Option<i64>) {
        match p.kind.get() {
            Some("user_message") => {
                self.carry.had_user_event = true;
                self.text_event(n, p, ts, Role::User);
            }
            Some("agent_message") => self.text_event(n, p, ts, Role::Assistant),
            Some("exec_command_end") => self.exec_end(n, p, ts),
            Some("patch_apply_end") => {
                let call = p.call_id.get().and_then(|c| self.calls.get(c)).copied();
                if let Some(state) = call.and_then(|u| self.units[u].call.as_mut()) {
                    state.patch_ok = p.success.map(|s| s.0);
                }
            }
            Some("web_search_end") => self.web_search(n, p, ts),
            _ => {}
        }
    }

    /// A `user_message` (injected context dropped) or `agent_message`
    /// (deduplicated in [`Builder::finish`]).
    fn text_event(&mut self, n: usize, p: &Item<'_>, ts: Option<i64>, role: Role) {
        let text = p.message.get().unwrap_or_default().trim();
        let (drop, origin) = match role {
            Role::User => (is_injected(text), Origin::Normal),
            _ => (text.is_empty(), Origin::AgentMessageEvent),
        };
        if !drop {
            let id = self.synth_id(n);
            self.push_unit(id, role, text.to_owned(), ts, origin);
        }
    }

    fn web_search(&mut self, n: usize, p: &Item<'_>, ts: Option<i64>) {
        let query = p.query.get().unwrap_or_default().trim();
        let id = p
            .call_id
            .non_blank()
            .map_or_else(|| self.synth_id(n), str::to_owned);
        let text = format!("[web_search] {}", values::ellipsize(query, DETAIL_CAP));
        let u = self.push_unit(id, Role::Tool, text, ts, Origin::Normal);
        self.units[u].name = Some("web_search".to_owned());
    }

    /// Starts a call message (`function_call`, `custom_tool_call`,
    /// `local_shell_call`).
    fn call(&mut self, n: usize, p: &Item<'_>, ts: Option<i64>) {
        let call_id = p
            .call_id
            .non_blank()
            .map_or_else(|| self.synth_id(n), str::to_owned);
        let name = match (p.kind.get(), p.name.non_blank()) {
            (Some("local_shell_call"), _) => "local_shell",
            (_, Some(name)) => name,
            (_, None) => "?",
        };
        let Some(header) = call_header(name, p) else {
            self.skipped_calls.insert(call_id);
            return;
        };
        let u = self.push_unit(
            call_id.clone(),
            Role::Tool,
            String::new(),
            ts,
            Origin::Normal,
        );
        self.units[u].name = Some(name.to_owned());
        self.units[u].call = Some(CallState {
            header,
            ..CallState::default()
        });
        self.calls.insert(call_id, u);
    }

    /// The call's unit, creating an orphan one (with `header`) when the call
    /// is not in this input. `None` for calls that were dropped.
    fn call_unit(
        &mut self,
        call_id: Option<&str>,
        n: usize,
        ts: Option<i64>,
        header: impl FnOnce() -> String,
    ) -> Option<usize> {
        if let Some(id) = call_id {
            if self.skipped_calls.contains(id) {
                return None;
            }
            if let Some(&u) = self.calls.get(id) {
                return Some(u);
            }
        }
        let id = call_id.map_or_else(|| self.synth_id(n), str::to_owned);
        let u = self.push_unit(id.clone(), Role::Tool, String::new(), ts, Origin::Normal);
        self.units[u].call = Some(CallState {
            header: header(),
            ..CallState::default()
        });
        self.calls.insert(id, u);
        Some(u)
    }

    fn call_output(&mut self, n: usize, p: &Item<'_>, ts: Option<i64>) {
        let cap = self.error_cap();
        let Some(u) = self.call_unit(p.call_id.non_blank(), n, ts, || "[tool output]".to_owned())
        else {
            return;
        };
        let raw = p
            .output
            .as_ref()
            .map(|c| c.join("\n", lenient::text_part))
            .unwrap_or_default();
        let (body, exit) = unwrap_output(&raw);
        if let Some(state) = self.units[u].call.as_mut() {
            if !state.from_end_event {
                state.output = Some(values::ellipsize(body.trim(), cap).into_owned());
                state.exit_code = state.exit_code.or(exit);
            }
        }
    }

    fn exec_end(&mut self, n: usize, p: &Item<'_>, ts: Option<i64>) {
        let cap = self.error_cap();
        let header = || format!("[exec] {}", command_line(&p.command.0));
        let Some(u) = self.call_unit(p.call_id.non_blank(), n, ts, header) else {
            return;
        };
        let body = match p.aggregated_output.non_blank() {
            Some(all) => all.trim().to_owned(),
            None => [&p.stdout, &p.stderr]
                .iter()
                .filter_map(|s| s.non_blank().map(str::trim))
                .collect::<Vec<_>>()
                .join("\n"),
        };
        if let Some(state) = self.units[u].call.as_mut() {
            state.output = Some(values::ellipsize(&body, cap).into_owned());
            state.exit_code = p.exit_code.0.or(state.exit_code);
            state.from_end_event = true;
        }
    }

    /// An output is kept at the error cap until the call ends: whether it
    /// failed is known only then ([`finish_call`]).
    fn error_cap(&self) -> usize {
        self.opts.output_cap(true)
    }
}

fn into_message(u: Unit, opts: &Options) -> Message {
    let (text, is_error) = match u.call {
        Some(state) => finish_call(state, opts),
        None => (u.text, false),
    };
    Message {
        id: Some(u.id),
        role: u.role,
        name: u.name,
        text,
        timestamp: u.timestamp,
        is_error,
    }
}

/// The text and error flag of a finished call.
fn finish_call(state: CallState, opts: &Options) -> (String, bool) {
    let is_error = state.exit_code.is_some_and(|c| c != 0) || state.patch_ok == Some(false);
    let cap = opts.output_cap(is_error);
    let mut text = state.header;
    if let Some(out) = state.output.as_deref().filter(|o| !o.is_empty()) {
        text.push('\n');
        text.push_str(&values::ellipsize(out, cap));
    }
    (text, is_error)
}

fn is_injected(text: &str) -> bool {
    text.is_empty() || INJECTED_PREFIXES.iter().any(|p| text.starts_with(p))
}

/// The compact first line of a call, or `None` for a call that is dropped
/// (`write_stdin` polling with no input).
fn call_header(name: &str, p: &Item<'_>) -> Option<String> {
    if p.kind.get() == Some("local_shell_call") {
        let action = p.action.as_ref().and_then(ObjOr::as_obj);
        let cmd = action.map(|a| command_line(&a.command.0));
        return Some(format!("[exec] {}", cmd.unwrap_or_default()));
    }
    let raw = p.arguments.get().or(p.input.get()).unwrap_or_default();
    let args: Option<Args> = serde_json::from_str(raw).ok();
    let header = match (name, &args) {
        ("shell" | "exec_command" | "shell_command" | "container.exec", Some(a)) => {
            let argv = if a.command.0.is_empty() {
                &a.cmd.0
            } else {
                &a.command.0
            };
            format!("[exec] {}", command_line(argv))
        }
        ("write_stdin", Some(a)) => stdin_header(a)?,
        ("apply_patch", Some(a)) => patch_header(a.input.get().unwrap_or(raw)),
        ("apply_patch", None) => patch_header(raw),
        (_, Some(_)) => {
            let v: serde_json::Value = serde_json::from_str(raw).unwrap_or_default();
            format!("[{name}] {}", values::compact_json(&v, ARGS_CAP))
        }
        (_, None) => format!("[{name}] {}", values::ellipsize(raw.trim(), ARGS_CAP)),
    };
    Some(header.trim_end().to_owned())
}

/// `[write_stdin] session N "chars"`, or `None` for pure polling (no chars).
fn stdin_header(a: &Args<'_>) -> Option<String> {
    let chars = a.chars.get().filter(|c| !c.is_empty())?;
    let session = a.session_id.0.map(|s| format!(" session {s}"));
    Some(format!(
        "[write_stdin]{} {}",
        session.unwrap_or_default(),
        values::compact_json(chars, ARGS_CAP)
    ))
}

/// `[apply_patch] a, b` from the file headers of a patch.
fn patch_header(patch: &str) -> String {
    const MARKERS: [&str; 4] = [
        "*** Add File: ",
        "*** Update File: ",
        "*** Delete File: ",
        "*** Move to: ",
    ];
    let files: Vec<&str> = patch
        .lines()
        .filter_map(|l| MARKERS.iter().find_map(|m| l.strip_prefix(m)))
        .map(str::trim)
        .collect();
    let joined = values::ellipsize(&files.join(", "), DETAIL_CAP).into_owned();
    format!("[apply_patch] {joined}")
}

/// A command line for display: `bash -lc X` is `X`, other argv are joined
/// with spaces.
fn command_line(argv: &[Cow<'_, str>]) -> String {
    let shell_wrapped =
        argv.len() >= 3 && argv[0].ends_with("sh") && matches!(argv[1].as_ref(), "-lc" | "-c");
    let cmd = if shell_wrapped {
        argv[2..].join(" ")
    } else {
        argv.join(" ")
    };
    values::ellipsize(cmd.trim(), DETAIL_CAP).into_owned()
}

/// Unwraps a `function_call_output`: the older JSON form
/// `{"output", "metadata": {"exit_code"}}` or the unified-exec text header
/// (`Chunk ID: ...\nProcess exited with code N\n...\nOutput:\n<body>`).
fn unwrap_output(raw: &str) -> (Cow<'_, str>, Option<i64>) {
    if raw.trim_start().starts_with('{') {
        if let Ok(j) = serde_json::from_str::<JsonOutput>(raw) {
            if let Some(out) = j.output.0 {
                let exit = j
                    .metadata
                    .as_ref()
                    .and_then(ObjOr::as_obj)
                    .and_then(|m| m.exit_code.0);
                return (out, exit);
            }
        }
    }
    let headed = ["Chunk ID:", "Exit code:", "Wall time:"]
        .iter()
        .any(|h| raw.starts_with(h));
    if !headed {
        return (Cow::Borrowed(raw), None);
    }
    let (head, body) = match raw.find("\nOutput:\n") {
        Some(i) => (&raw[..i], &raw[i + "\nOutput:\n".len()..]),
        None => (raw, ""),
    };
    let exit = head.lines().find_map(|l| {
        l.strip_prefix("Process exited with code ")
            .or_else(|| l.strip_prefix("Exit code: "))
            .and_then(|c| c.trim().parse().ok())
    });
    (Cow::Borrowed(body), exit)
}

#[cfg(test)]
mod tests;
