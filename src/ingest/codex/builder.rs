//! The Codex [`Builder`]: the lines of a rollout (or of one part of it)
//! into messages and session meta, in file order. User and assistant text
//! from events and response items (injected context dropped, repeated
//! agent messages deduplicated), tool calls joined with their outputs by
//! `call_id`, web searches and compaction summaries; the session meta from
//! `session_meta` or a legacy header.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use super::calls::{
    call_header, command_line, finish_call, shell_command, unwrap_output, CallState,
};
use super::{Carry, Item, Options};
use crate::ingest::commits::commit_subject;
use crate::ingest::lenient::{self, ObjOr};
use crate::ingest::lines::Problems;
use crate::ingest::model::{Message, Role, SessionMeta};
use crate::ingest::transcript::{self, Transcript, DETAIL_CAP, TITLE_CAP};
use crate::ingest::{recalled, values};

/// Remove `mark` from `marks`; whether it was there.
fn take(marks: &mut Vec<String>, mark: &str) -> bool {
    match marks.iter().position(|m| m == mark) {
        Some(i) => {
            marks.remove(i);
            true
        }
        None => false,
    }
}

/// User text starting with one of these is injected context, not typed.
const INJECTED_PREFIXES: [&str; 4] = [
    "<environment_context>",
    "<user_instructions>",
    "<permissions instructions>",
    "# AGENTS.md instructions",
];

/// Where a plain message came from (for the dedupe / fallback rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    Normal,
    AgentMessageEvent,
    ResponseItemUser,
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
    /// The subjects of the commits its shell calls made.
    did: Vec<String>,
}

pub(super) struct Builder<'k, 'o, 'c> {
    opts: &'o Options,
    key: &'k str,
    units: Vec<Unit>,
    calls: HashMap<String, usize>,
    skipped_calls: HashSet<String>,
    /// Calls to recall's own memory tools, whose outputs are left out
    /// ([`crate::ingest::recalled`]).
    recalls: HashSet<String>,
    assistant_texts: HashSet<String>,
    /// What the parts before this one left, updated as lines are read.
    carry: &'c mut Carry,
    /// What the run before this input stored and a line of its first step
    /// may repeat (see [`Carry`]): such a repeat is not stored again.
    inherited_user: Vec<String>,
    inherited_agent: Vec<String>,
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
        let payload_kind = match &item.payload {
            Some(ObjOr::Obj(p)) => p.kind.get(),
            _ => None,
        };
        if super::is_step(kind, payload_kind) {
            // A repeat comes before the next step: nothing pending is.
            self.inherited_user.clear();
            self.inherited_agent.clear();
            self.carry.pending_user.clear();
            self.carry.pending_agent.clear();
        }
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
        // Pending are only texts stored here: a response item's user text
        // is not once an event was read, nor an agent message a response
        // item repeated.
        if carry.had_user_event {
            carry.pending_user.clear();
        }
        if !carry.pending_agent.is_empty() {
            let repeated: HashSet<String> =
                assistant_texts.iter().map(|t| Carry::mark(t)).collect();
            carry.pending_agent.retain(|m| !repeated.contains(m));
        }
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
            .map(|m| values::title(request(&m.text), TITLE_CAP));
        let meta = SessionMeta {
            id: meta.id.unwrap_or_else(|| key.to_owned()),
            title,
            cwd: meta.cwd.or(meta.turn_cwd),
            git_branch: meta.git_branch,
            started_at: meta.started_at.or(meta.first_ts),
            parent_id: meta.parent_id,
            did: meta.did,
        };
        (meta, messages)
    }
}

impl<'k, 'o, 'c> Builder<'k, 'o, 'c> {
    pub(super) fn new(opts: &'o Options, key: &'k str, carry: &'c mut Carry) -> Self {
        let inherited_user = std::mem::take(&mut carry.pending_user);
        let inherited_agent = std::mem::take(&mut carry.pending_agent);
        Builder {
            inherited_user,
            inherited_agent,
            opts,
            key,
            units: Vec::new(),
            calls: HashMap::new(),
            skipped_calls: HashSet::new(),
            recalls: HashSet::new(),
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
            other @ Some(_) => transcript::unknown_type(n, other, problems),
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
                let mark = Carry::mark(text);
                // The agent message it repeats was stored by the run before.
                if take(&mut self.inherited_agent, &mark) {
                    return;
                }
                take(&mut self.carry.pending_agent, &mark);
                self.assistant_texts.insert(text.to_owned());
                let id =
                    p.id.non_blank()
                        .map_or_else(|| self.synth_id(n), str::to_owned);
                self.push_unit(id, Role::Assistant, text.to_owned(), ts, Origin::Normal);
            }
            Some("user") if !is_injected(text) => {
                if !self.carry.had_user_event {
                    self.carry.pending_user.push(Carry::mark(text));
                }
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
        let mark = Carry::mark(text);
        let (drop, origin) = match role {
            // The response item it repeats was stored by the run before
            // (read here, that item is dropped in `finish` instead).
            Role::User => {
                let repeat = take(&mut self.inherited_user, &mark);
                take(&mut self.carry.pending_user, &mark);
                (is_injected(text) || repeat, Origin::Normal)
            }
            _ => {
                if !text.is_empty() {
                    self.carry.pending_agent.push(mark);
                }
                (text.is_empty(), Origin::AgentMessageEvent)
            }
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
        let name: Cow<'_, str> = match (p.kind.get(), p.name.non_blank()) {
            (Some("local_shell_call"), _) => "local_shell".into(),
            // An MCP tool: its server's namespace and its name, as Claude
            // Code names it (`mcp__recall__recall`).
            (_, Some(name)) => match p.namespace.non_blank() {
                Some(ns) => format!("{ns}__{name}").into(),
                None => name.into(),
            },
            (_, None) => "?".into(),
        };
        if recalled::returns_memory(&name) {
            self.recalls.insert(call_id.clone());
        }
        let command = shell_command(&name, p);
        self.meta
            .did
            .extend(command.as_deref().and_then(commit_subject));
        let Some(header) = call_header(&name, p, command.as_deref()) else {
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
        self.units[u].name = Some(name.into_owned());
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
        if p.call_id.get().is_some_and(|id| self.recalls.contains(id)) {
            return;
        }
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

fn is_injected(text: &str) -> bool {
    text.is_empty() || INJECTED_PREFIXES.iter().any(|p| text.starts_with(p))
}

/// The heading under which the Codex app and IDE extension put what the
/// user typed, after the files the user mentioned.
const REQUEST_HEADING: &str = "## My request for Codex:";

/// What the user asked in a prompt: the text under [`REQUEST_HEADING`]
/// when the prompt holds that heading on a line of its own (the files
/// mentioned above it are context, not the request), else the whole
/// prompt.
fn request(prompt: &str) -> &str {
    let mut at = 0;
    for line in prompt.split_inclusive('\n') {
        at += line.len();
        if line.trim() == REQUEST_HEADING {
            let asked = prompt[at..].trim();
            if !asked.is_empty() {
                return asked;
            }
        }
    }
    prompt
}
