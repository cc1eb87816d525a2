//! Gemini CLI chat parser (`~/.gemini/tmp/<project>/chats/session-*.json`,
//! `session-*.jsonl`, and a sub-agent's `chats/<parent id>/<id>.jsonl`).
//!
//! Owns turning one Gemini CLI chat file into a [`ParsedSession`]. Gemini
//! CLI has written two layouts of the same `ConversationRecord`
//! (`packages/core/src/services/chatRecordingService.ts`):
//!
//! * **A JSON document** (`.json`, up to v0.38): `{sessionId, projectHash,
//!   startTime, lastUpdated, summary?, messages: [...]}`, rewritten whole
//!   after every message. It is parsed as one document: a truncated or
//!   damaged file is an error naming the line and column, and nothing of
//!   it reaches the index (the source's earlier rows stay).
//! * **A log of records** (`.jsonl`, v0.39 on), replayed as Gemini CLI
//!   replays it: a first metadata line (`sessionId`, `projectHash`, ...),
//!   then message records (a record whose `id` was seen before replaces
//!   that message in place: tool calls and token counts are added that
//!   way), `{"$set": {...}}` metadata updates (a `$set` with `messages`
//!   is Gemini CLI's list after a compression or a resume: its messages
//!   come after every earlier message, which recall keeps, so a
//!   compression never takes what was said out of the index), and
//!   `{"$rewindTo": id}`, which drops that
//!   message and all after it (all of them when the id is unknown). A bad
//!   line is a [`Problem`] and skipped; an unterminated last line that is
//!   not yet complete JSON is left for the next run.
//!
//! The file is not append-only in meaning (a rewind or a `$set` changes
//! what came before), so it is always parsed whole and replaces the
//! source's rows.
//!
//! # What is indexed
//! * `user` messages as [`Role::User`]: `displayContent` (what was typed)
//!   when present, else `content` (a string, a part, or a list of parts and
//!   strings; `text` parts joined). Dropped: slash commands (`/chat save`,
//!   `/memory add ...`: a first word that is `/name`), `?` help,
//!   `functionResponse` parts (tool results; they are read from the call),
//!   and what Gemini CLI injected: `<session_context>` and `<hook_context>`
//!   spans, wherever they sit. Gemini CLI appends a BeforeAgent hook's
//!   context to the prompt it records as a `<hook_context>` part, and
//!   recall's own recalled memory must never be indexed back as a prompt.
//! * `gemini` messages as [`Role::Assistant`]: the `text` parts of
//!   `content` that are not `thought` parts. **`thoughts` (the model's
//!   thought summaries) and `thought` parts are never read**: chain of
//!   thought is not stored. `tokens` and `model` are skipped.
//! * Each entry of a `gemini` message's `toolCalls` as one [`Role::Tool`]
//!   message (id = the call's `id`, name = the tool's `name`) after the
//!   message's text: a compact first line (`[exec] cargo test` for
//!   `run_shell_command`, `[read_file] src/lib.rs` for a tool given a path,
//!   else `[name] <compact JSON args, ~200 chars>`), then the output cut to
//!   [`Options::tool_output_cap`] chars ([`ERROR_CAP_FACTOR`]× for errors).
//!   The output is the `functionResponse.response.output` (or `.error`) of
//!   `result`, else its text parts, else a string `resultDisplay`. Shell
//!   output is unwrapped from its `Command: / Output: / Exit Code:` frame
//!   and `<untrusted_context>` wrapper; a non-zero exit code, an `error`
//!   response or `status: "error"` sets [`Message::is_error`]; a cancelled
//!   call says `[cancelled]`.
//! * `error` messages (API errors shown in the chat) as [`Role::System`]
//!   with [`Message::is_error`].
//!
//! Skipped silently: `info` and `warning` messages (update notices, UI
//! chrome) and any other message `type`. A message whose text ends up
//! blank is dropped. A message without an `id` (only in hand-written
//! files) gets `<stem>:<n>`; a tool call without one `<message id>:<n>`.
//!
//! # Session meta
//! `id` = the last `sessionId` (a resumed session is renamed by a `$set`;
//! fallback: the file stem), `started_at` = `startTime` (fallback: the
//! first message's `timestamp`), `title` = `summary` (Gemini CLI's own
//! one-line summary) else the first typed prompt (80 chars). The file
//! records the project only as a hash, so `cwd` is left unset.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use super::commits::commit_subject;
use super::lenient::{LBool, LStr, ObjList, ObjOr};
use super::lines::Problems;
use super::model::{Message, ParsedSession, Problem, Role, SessionMeta};
use super::transcript::{ARGS_CAP, DETAIL_CAP, TITLE_CAP};
use super::{lines, recalled, values};

pub use super::transcript::{Options, ERROR_CAP_FACTOR};

/// Bump when the output for the same input changes (forces a re-index;
/// 2: recall's own memory tools' results left out).
pub const PARSER_VERSION: u32 = 2;

/// Spans of user text that Gemini CLI injected, not the user typed: its
/// environment context and hooks' context (`isIgnoredUserContent` in its
/// `utils/sessionUtils.ts`; `client.ts` appends a BeforeAgent hook's
/// context to the prompt as `<hook_context>...</hook_context>`).
const INJECTED: [(&str, &str); 2] = [
    ("<session_context>", "</session_context>"),
    ("<hook_context>", "</hook_context>"),
];

/// One record: a whole JSON document, a line of a `.jsonl` log (metadata,
/// a message, a `$set` or a `$rewindTo`), or a message of `messages`. One
/// lenient struct serves all, as the shapes share their fields.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Record<'a> {
    #[serde(rename = "sessionId", borrow)]
    session_id: LStr<'a>,
    #[serde(rename = "projectHash", borrow)]
    project_hash: LStr<'a>,
    #[serde(rename = "startTime", borrow)]
    start_time: LStr<'a>,
    #[serde(borrow)]
    summary: LStr<'a>,
    #[serde(borrow)]
    messages: Option<ObjList<Record<'a>>>,
    #[serde(rename = "$set", borrow)]
    set: Option<ObjOr<Box<Record<'a>>>>,
    #[serde(rename = "$rewindTo", borrow)]
    rewind_to: LStr<'a>,
    #[serde(borrow)]
    id: LStr<'a>,
    #[serde(borrow)]
    timestamp: LStr<'a>,
    #[serde(rename = "type", borrow)]
    kind: LStr<'a>,
    #[serde(borrow)]
    content: Parts<'a>,
    #[serde(rename = "displayContent", borrow)]
    display_content: Parts<'a>,
    #[serde(rename = "toolCalls", borrow)]
    tool_calls: ObjList<ToolCall<'a>>,
}

/// One entry of a message's `toolCalls`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ToolCall<'a> {
    #[serde(borrow)]
    id: LStr<'a>,
    #[serde(borrow)]
    name: LStr<'a>,
    args: Option<serde_json::Value>,
    #[serde(borrow)]
    result: Parts<'a>,
    #[serde(borrow)]
    status: LStr<'a>,
    #[serde(borrow)]
    timestamp: LStr<'a>,
    #[serde(rename = "resultDisplay", borrow)]
    result_display: LStr<'a>,
}

/// A `PartListUnion`: a string, one part, or a list of parts and strings.
/// Anything else reads as no parts.
#[derive(Debug, Default)]
struct Parts<'a>(Vec<Part<'a>>);

/// One part (`@google/genai`'s `Part`), only the fields recall reads.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Part<'a> {
    #[serde(borrow)]
    text: LStr<'a>,
    thought: LBool,
    #[serde(rename = "functionResponse", borrow)]
    function_response: Option<ObjOr<FunctionResponse<'a>>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct FunctionResponse<'a> {
    #[serde(borrow)]
    response: Option<ObjOr<Response<'a>>>,
}

/// A tool's response: `{output}` or `{error}`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Response<'a> {
    #[serde(borrow)]
    output: LStr<'a>,
    #[serde(borrow)]
    error: LStr<'a>,
}

struct PartsVisitor;

impl<'de> Visitor<'de> for PartsVisitor {
    type Value = Parts<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Parts(vec![text_part(Cow::Borrowed(v))]))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Parts(vec![text_part(Cow::Owned(v.to_owned()))]))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Parts(vec![text_part(Cow::Owned(v))]))
    }

    /// A list: each element a part or a string (a nested list is read
    /// flat).
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut parts = Vec::new();
        while let Some(Parts(more)) = seq.next_element::<Parts>()? {
            parts.extend(more);
        }
        Ok(Parts(parts))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        Part::deserialize(de::value::MapAccessDeserializer::new(map)).map(|p| Parts(vec![p]))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Parts::default())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Parts::default())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Parts::default())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Parts::default())
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Parts::default())
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Parts<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(PartsVisitor)
    }
}

fn text_part(text: Cow<'_, str>) -> Part<'_> {
    Part {
        text: LStr(Some(text)),
        ..Part::default()
    }
}

impl Parts<'_> {
    /// The text parts that are not thoughts, joined by blank lines.
    fn text(&self) -> String {
        let texts = self
            .0
            .iter()
            .filter(|p| !p.thought.0 && p.function_response.is_none())
            .filter_map(|p| p.text.get());
        join(texts, "\n\n")
    }

    /// The tool output the parts hold: `functionResponse` outputs and
    /// errors, else text parts; and whether any was an error.
    fn tool_output(&self) -> (String, bool) {
        let mut failed = false;
        let responses = self
            .0
            .iter()
            .filter_map(|p| {
                p.function_response
                    .as_ref()?
                    .as_obj()?
                    .response
                    .as_ref()?
                    .as_obj()
            })
            .filter_map(|r| match (r.output.get(), r.error.get()) {
                (Some(out), _) => Some(out),
                (None, Some(err)) => {
                    failed = true;
                    Some(err)
                }
                (None, None) => None,
            });
        let out = join(responses, "\n");
        if !out.is_empty() {
            return (out, failed);
        }
        (self.text(), false)
    }
}

fn join<'s>(parts: impl Iterator<Item = &'s str>, sep: &str) -> String {
    let mut out = String::new();
    for p in parts.filter(|p| !values::is_blank(p)) {
        if !out.is_empty() {
            out.push_str(sep);
        }
        out.push_str(p);
    }
    out
}

/// Whether a file looks like a Gemini CLI chat: its first JSON object
/// names a `sessionId` and a `projectHash` (every chat Gemini CLI writes
/// starts so), or a `sessionId` and a `startTime` (a log's first line
/// written by hand). Looks at the first 4 KB; works on a cut head.
pub fn sniff(head: &[u8]) -> bool {
    let head = &head[..head.len().min(4096)];
    let trimmed = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    if !trimmed.trim_ascii_start().starts_with(b"{") {
        return false;
    }
    let has = |k: &[u8]| memchr::memmem::find(trimmed, k).is_some();
    has(b"\"sessionId\"") && (has(b"\"projectHash\"") || has(b"\"startTime\""))
}

/// Parses a Gemini CLI chat file (either layout, see the module doc).
/// `stem` is the file stem: the fallback session id. A JSON document
/// that does not parse is an `Err` naming the line and column; a log's bad
/// lines are problems of the session.
pub fn parse(input: &[u8], stem: &str, opts: &Options) -> Result<ParsedSession, Problem> {
    let input = input.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(input);
    let mut replay = Replay::default();
    let mut problems = Problems::default();
    let consumed = if is_log(input) {
        lines::read_lines::<Record, _>(input, 1, &mut problems, |n, record, problems| {
            replay.apply(record, n, problems)
        })
    } else {
        let doc: Record = serde_json::from_slice(input).map_err(|e| Problem {
            line: e.line(),
            message: format!(
                "cannot parse the chat at line {}, column {}: {}; the file is truncated or damaged: nothing of it was indexed, and it is read again when it changes",
                e.line(),
                e.column(),
                serde_message(&e)
            ),
        })?;
        if doc.session_id.get().is_none() && doc.messages.is_none() {
            return Err(Problem {
                line: 1,
                message: "not a Gemini CLI chat: no sessionId and no messages".into(),
            });
        }
        replay.apply(doc, 1, &mut problems);
        input.len()
    };
    let (meta, messages) = replay.finish(stem, opts);
    Ok(ParsedSession {
        meta,
        messages,
        unknown_lines: problems.unknown(),
        problems: problems.finish(),
        consumed,
    })
}

/// serde's message without its own " at line L column C".
fn serde_message(e: &serde_json::Error) -> String {
    let full = e.to_string();
    full.rsplit_once(" at line ")
        .map_or(full.clone(), |(m, _)| m.to_string())
}

/// A `.jsonl` log: the first non-blank line is a whole JSON object. (A
/// JSON document starts with a line holding `{` alone; a document written
/// on one line reads the same either way.)
fn is_log(input: &[u8]) -> bool {
    let first = input
        .split(|&b| b == b'\n')
        .map(<[u8]>::trim_ascii)
        .find(|l| !l.is_empty());
    first.is_some_and(|l| l.starts_with(b"{") && serde_json::from_slice::<IgnoredAny>(l).is_ok())
}

/// The conversation as Gemini CLI rebuilds it from the records.
#[derive(Default)]
struct Replay<'a> {
    session_id: LStr<'a>,
    start_time: LStr<'a>,
    summary: LStr<'a>,
    messages: Vec<Record<'a>>,
    /// Position of each message id in `messages`.
    index: HashMap<String, usize>,
}

impl<'a> Replay<'a> {
    fn apply(&mut self, record: Record<'a>, line: usize, problems: &mut Problems) {
        if let Some(target) = record.rewind_to.get() {
            self.rewind(target);
        } else if record.id.get().is_some() {
            self.upsert(record);
        } else if let Some(set) = record.set {
            match set {
                ObjOr::Obj(update) => self.merge(*update, true),
                ObjOr::NotObject(k) => {
                    problems.push(line, format!("$set is {k}, not an object; skipped"))
                }
            }
        } else if record.session_id.get().is_some()
            || record.project_hash.get().is_some()
            || record.messages.is_some()
        {
            self.merge(record, false);
        } else {
            problems.push(
                line,
                "not a Gemini CLI chat record (no id, sessionId, $set or $rewindTo); skipped",
            );
        }
    }

    /// Metadata from a first line, a whole document or a `$set`; its
    /// `messages` are added, a `$set`'s (`replaces`: Gemini CLI's new list
    /// after a compression, a summary and the turns it kept) after every
    /// message it leaves out, which stays: what the summary replaced was
    /// said, and stays recallable.
    fn merge(&mut self, r: Record<'a>, replaces: bool) {
        for (mine, theirs) in [
            (&mut self.session_id, r.session_id),
            (&mut self.start_time, r.start_time),
            (&mut self.summary, r.summary),
        ] {
            if theirs.get().is_some() {
                *mine = theirs;
            }
        }
        if let Some(list) = r.messages {
            let list: Vec<Record<'a>> = list
                .items
                .into_iter()
                .filter(|m| m.id.get().is_some())
                .collect();
            if replaces {
                // The messages the new list leaves out, in their order,
                // then the new list.
                let listed: std::collections::HashSet<&str> =
                    list.iter().filter_map(|m| m.id.get()).collect();
                let kept: Vec<Record<'a>> = std::mem::take(&mut self.messages)
                    .into_iter()
                    .filter(|m| m.id.get().is_some_and(|id| !listed.contains(id)))
                    .collect();
                self.index.clear();
                for m in kept {
                    self.upsert(m);
                }
            }
            for m in list {
                self.upsert(m);
            }
        }
    }

    /// A message: a new id is added at the end, a known one replaced in
    /// place.
    fn upsert(&mut self, m: Record<'a>) {
        let id = m.id.get().unwrap_or_default().to_string();
        match self.index.get(&id) {
            Some(&i) => self.messages[i] = m,
            None => {
                self.index.insert(id, self.messages.len());
                self.messages.push(m);
            }
        }
    }

    /// Drop the message `id` and everything after it; all of them when the
    /// id is unknown (as Gemini CLI does).
    fn rewind(&mut self, id: &str) {
        let from = self.index.get(id).copied().unwrap_or(0);
        for m in self.messages.drain(from..) {
            if let Some(id) = m.id.get() {
                self.index.remove(id);
            }
        }
    }

    fn finish(self, stem: &str, opts: &Options) -> (SessionMeta, Vec<Message>) {
        let mut messages = Vec::new();
        let mut first_prompt = None;
        for (n, m) in self.messages.iter().enumerate() {
            let before = messages.len();
            convert(m, stem, n, opts, &mut messages);
            if first_prompt.is_none() {
                first_prompt = messages[before..]
                    .iter()
                    .find(|m: &&Message| m.role == Role::User)
                    .map(|m| m.text.clone());
            }
        }
        let started_at = self
            .start_time
            .get()
            .and_then(values::parse_ts)
            .or_else(|| messages.iter().find_map(|m| m.timestamp));
        let title = self
            .summary
            .non_blank()
            .map(str::to_string)
            .or(first_prompt)
            .map(|t| values::title(&t, TITLE_CAP));
        let did = self
            .messages
            .iter()
            .flat_map(|m| &m.tool_calls.items)
            .filter(|c| c.name.get() == Some("run_shell_command"))
            .filter_map(|c| c.args.as_ref()?.get("command")?.as_str())
            .filter_map(commit_subject)
            .collect();
        let meta = SessionMeta {
            id: self
                .session_id
                .non_blank()
                .map_or_else(|| stem.to_string(), str::to_string),
            title,
            started_at,
            did,
            ..SessionMeta::default()
        };
        (meta, messages)
    }
}

/// The messages one record gives (see the module doc).
fn convert(m: &Record, stem: &str, n: usize, opts: &Options, out: &mut Vec<Message>) {
    let id =
        m.id.non_blank()
            .map_or_else(|| format!("{stem}:{}", n + 1), str::to_string);
    let timestamp = m.timestamp.get().and_then(values::parse_ts);
    let message = |role, text: String, is_error| Message {
        id: Some(id.clone()),
        role,
        name: None,
        text,
        timestamp,
        is_error,
    };
    match m.kind.get() {
        Some("user") => {
            let typed = m.display_content.text();
            let text = if typed.is_empty() {
                m.content.text()
            } else {
                typed
            };
            let text = without_injected(&text);
            if is_typed_prompt(&text) {
                out.push(message(Role::User, text.trim().to_string(), false));
            }
        }
        Some("gemini") => {
            let text = m.content.text();
            if !text.is_empty() {
                out.push(message(Role::Assistant, text, false));
            }
            for (i, call) in m.tool_calls.items.iter().enumerate() {
                out.push(tool_message(call, &id, i, timestamp, opts));
            }
        }
        Some("error") => {
            let text = m.content.text();
            if !text.is_empty() {
                out.push(message(Role::System, text, true));
            }
        }
        _ => {}
    }
}

/// `text` without the spans Gemini CLI injected (an unclosed span runs to
/// the end). A BeforeAgent hook's prompt holds them too: Gemini CLI
/// prepends SessionStart's context to the prompt before the event fires.
pub fn without_injected(text: &str) -> Cow<'_, str> {
    if !INJECTED.iter().any(|(open, _)| text.contains(open)) {
        return Cow::Borrowed(text);
    }
    let mut rest = text;
    let mut out = String::with_capacity(text.len());
    while let Some((at, open, close)) = INJECTED
        .iter()
        .filter_map(|(o, c)| rest.find(o).map(|at| (at, *o, *c)))
        .min_by_key(|(at, _, _)| *at)
    {
        out.push_str(&rest[..at]);
        let after = &rest[at + open.len()..];
        rest = after
            .find(close)
            .map_or("", |end| &after[end + close.len()..]);
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// Whether user text (injected spans removed) is a prompt someone typed:
/// not blank, not a slash command or `?` help.
fn is_typed_prompt(text: &str) -> bool {
    let t = text.trim_start();
    if t.is_empty() || t.starts_with('?') {
        return false;
    }
    // `/chat save x` is a command; `/home/me/x fails` is a prompt.
    let first = t.split_whitespace().next().unwrap_or_default();
    let command = first
        .strip_prefix('/')
        .is_some_and(|name| !name.contains('/'));
    !command
}

/// One tool call as a [`Role::Tool`] message.
fn tool_message(
    call: &ToolCall,
    message_id: &str,
    i: usize,
    fallback_ts: Option<i64>,
    opts: &Options,
) -> Message {
    let name = call.name.non_blank().unwrap_or("tool");
    let mut text = header(name, call.args.as_ref());
    let status = call.status.get().unwrap_or_default();
    // What recall's own memory tools returned is left out (see
    // `recalled`); the call stays.
    let (output, failed) = match recalled::returns_memory(name) {
        true => (String::new(), false),
        false => output(call),
    };
    let is_error = failed || status == "error";
    let cap = opts.output_cap(is_error);
    if !output.is_empty() {
        text.push('\n');
        text.push_str(&values::ellipsize(&output, cap));
    } else if status == "cancelled" {
        text.push_str("\n[cancelled]");
    } else if is_error {
        text.push_str("\n[tool error]");
    }
    Message {
        id: Some(
            call.id
                .non_blank()
                .map_or_else(|| format!("{message_id}:{}", i + 1), str::to_string),
        ),
        role: Role::Tool,
        name: Some(name.to_string()),
        text,
        timestamp: call
            .timestamp
            .get()
            .and_then(values::parse_ts)
            .or(fallback_ts),
        is_error,
    }
}

/// The compact first line of a tool call.
fn header(name: &str, args: Option<&serde_json::Value>) -> String {
    let arg = |k: &str| args.and_then(|a| a.get(k)).and_then(|v| v.as_str());
    if name == "run_shell_command" {
        if let Some(cmd) = arg("command") {
            return format!("[exec] {}", values::title(cmd, DETAIL_CAP));
        }
    }
    let path = ["file_path", "absolute_path", "path", "dir_path"]
        .into_iter()
        .find_map(arg);
    match (path, args) {
        (Some(p), _) => format!("[{name}] {}", values::ellipsize(p, DETAIL_CAP)),
        (None, Some(a)) if a.as_object().is_some_and(|o| !o.is_empty()) => {
            format!("[{name}] {}", values::compact_json(a, ARGS_CAP))
        }
        _ => format!("[{name}]"),
    }
}

/// A call's output, and whether it failed.
fn output(call: &ToolCall) -> (String, bool) {
    let (mut out, mut failed) = call.result.tool_output();
    if out.is_empty() {
        if let Some(display) = call.result_display.non_blank() {
            out = display.to_string();
        }
    }
    let out = unwrap_untrusted(&out);
    if call.name.get() == Some("run_shell_command") {
        if let Some((body, exit_failed)) = unwrap_shell(out) {
            failed |= exit_failed;
            return (body, failed);
        }
    }
    (out.trim().to_string(), failed)
}

/// Text inside Gemini CLI's `<untrusted_context>` wrapper, if it has one.
fn unwrap_untrusted(s: &str) -> &str {
    s.trim()
        .strip_prefix("<untrusted_context>")
        .and_then(|r| r.strip_suffix("</untrusted_context>"))
        .unwrap_or(s)
}

/// The output of Gemini CLI's shell tool without its frame (`Command:`,
/// `Directory:`, `Output:`, then `Error:`, `Exit Code:`, `Signal:`, ...),
/// with the error line kept; and whether the command failed (a non-zero
/// exit code or an error). `None` when the text has no `Output:` line.
fn unwrap_shell(s: &str) -> Option<(String, bool)> {
    let start = if s.starts_with("Output: ") {
        0
    } else {
        s.find("\nOutput: ")? + 1
    };
    let body = &s[start + "Output: ".len()..];
    const TRAILERS: [&str; 5] = [
        "\nError: ",
        "\nExit Code: ",
        "\nSignal: ",
        "\nBackground PIDs: ",
        "\nProcess Group PGID: ",
    ];
    let end = TRAILERS
        .iter()
        .filter_map(|t| body.rfind(t))
        .min()
        .unwrap_or(body.len());
    let (output, trailer) = body.split_at(end);
    let mut failed = false;
    let mut text = match output.trim() {
        "(empty)" => String::new(),
        o => o.to_string(),
    };
    for line in trailer.lines() {
        if let Some(code) = line.strip_prefix("Exit Code: ") {
            failed |= code.trim() != "0";
        } else if let Some(err) = line.strip_prefix("Error: ") {
            if err.trim() != "(none)" && !err.trim().is_empty() {
                failed = true;
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str("Error: ");
                text.push_str(err.trim());
            }
        }
    }
    Some((text, failed))
}

#[cfg(test)]
#[path = "gemini_tests.rs"]
mod tests;
