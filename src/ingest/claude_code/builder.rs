//! The Claude Code [`Builder`]: the lines of a file (or of one part of
//! it) into messages and session meta, in file order. User lines give
//! prompts and tool results, assistant lines sharing a `message.id` join
//! into one message, compaction summaries and `summary` lines whose leaf
//! resolves become System messages, and the title is chosen at the end.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use super::blocks::{assistant_part, block_text, classify_user_text, UserText};
use super::{Block, Line, Options, Outlook};
use crate::ingest::commits::commit_subject;
use crate::ingest::lenient::{self, Content, ObjOr};
use crate::ingest::lines::Problems;
use crate::ingest::model::{Message, Role, SessionMeta};
use crate::ingest::transcript::{self, Transcript, TITLE_CAP};
use crate::ingest::{recalled, values};

/// A message under construction, placed at `node`.
struct Unit {
    node: usize,
    id: Option<String>,
    role: Role,
    text: String,
    timestamp: Option<i64>,
    is_error: bool,
    /// A typed prompt (a title candidate), not a slash command.
    prompt: bool,
}

impl Unit {
    /// Appends one part on its own line (moving it in when it is the first).
    fn push_part(&mut self, part: Cow<'_, str>) {
        if self.text.is_empty() {
            self.text = part.into_owned();
        } else {
            self.text.push('\n');
            self.text.push_str(&part);
        }
    }
}

/// A `summary` line waiting for leaf resolution.
struct Summary<'a> {
    node: usize,
    leaf: Cow<'a, str>,
    text: Cow<'a, str>,
}

/// Session-level facts gathered in file order.
#[derive(Default)]
struct MetaAcc {
    session_id: Option<String>,
    agent_id: Option<String>,
    cwd: Option<String>,
    git_branch: Option<String>,
    started_at: Option<i64>,
    /// From a `custom-title` line (the user's `/rename`).
    custom_title: Option<String>,
    /// The subjects of the commits its Bash calls made.
    did: Vec<String>,
}

pub(super) struct Builder<'a, 'o> {
    /// The file stem: the session id when no line names one.
    stem: &'o str,
    opts: &'o Options,
    /// Lines parsed so far: the position of the next line's units.
    lines: usize,
    outlook: Option<&'o Outlook>,
    /// The uuids of the input's lines (what its summaries resolve against
    /// without an outlook).
    uuids: HashSet<Cow<'a, str>>,
    units: Vec<Unit>,
    /// `message.id` -> index of the assistant unit it joins into.
    groups: HashMap<Cow<'a, str>, usize>,
    summaries: Vec<Summary<'a>>,
    meta: MetaAcc,
    /// Ids of calls to recall's own memory tools, whose results are left
    /// out ([`crate::ingest::recalled`]).
    recalls: HashSet<String>,
}

impl<'a> Transcript<'a> for Builder<'a, '_> {
    type Line = Line<'a>;

    fn line(&mut self, n: usize, mut l: Line<'a>, problems: &mut Problems) {
        self.note_meta(&l);
        let node = self.lines;
        self.lines += 1;
        if self.outlook.is_none() {
            if let Some(uuid) = l.uuid.0.clone() {
                self.uuids.insert(uuid);
            }
        }
        let kind = l.kind.0.take();
        match kind.as_deref() {
            Some("user") => self.user(n, node, &l, problems),
            Some("assistant") => self.assistant(n, node, &mut l, problems),
            Some("summary") => self.summary(n, node, &mut l, problems),
            Some("custom-title") => {
                if let Some(t) = l.custom_title.non_blank() {
                    self.meta.custom_title = Some(values::title(t, TITLE_CAP));
                }
            }
            Some(
                "system" | "progress" | "file-history-snapshot" | "queue-operation" | "attachment",
            ) => {}
            other => transcript::unknown_type(n, other, problems),
        }
    }

    fn finish(mut self) -> (SessionMeta, Vec<Message>) {
        let summary = self.resolve_summaries();
        let named = match self.outlook {
            Some(o) => o.title.clone(),
            None => self.meta.custom_title.take().or(summary),
        };
        // File order: units are made in line order, except the summaries
        // resolved above, which sit at their own line.
        self.units.sort_by_key(|u| u.node);
        let title = named.or_else(|| {
            self.units
                .iter()
                .find(|u| u.prompt && u.role == Role::User)
                .map(|u| values::title(&u.text, TITLE_CAP))
        });
        // A compaction's transcript repeats its parent session: the
        // conversation it summarises, the instruction to summarise, and the
        // summary, which the parent holds as its compaction summary. Indexed,
        // it was a second hit beside the parent's with the same summary.
        let messages = if self.meta.is_compaction() {
            Vec::new()
        } else {
            self.units
                .into_iter()
                .filter(|u| !values::is_blank(&u.text))
                .map(into_message)
                .collect()
        };
        (self.meta.into_session_meta(self.stem, title), messages)
    }
}

impl<'a, 'o> Builder<'a, 'o> {
    pub(super) fn new(stem: &'o str, opts: &'o Options, outlook: Option<&'o Outlook>) -> Self {
        Builder {
            stem,
            opts,
            lines: 0,
            outlook,
            uuids: HashSet::new(),
            units: Vec::new(),
            groups: HashMap::new(),
            summaries: Vec::new(),
            meta: MetaAcc::default(),
            recalls: HashSet::new(),
        }
    }

    fn note_meta(&mut self, l: &Line<'a>) {
        let m = &mut self.meta;
        if m.session_id.is_none() {
            if let Some(sid) = l.session_id.non_blank() {
                m.session_id = Some(sid.to_owned());
                if l.is_sidechain.0 {
                    m.agent_id = l.agent_id.non_blank().map(str::to_owned);
                }
            }
        }
        if m.cwd.is_none() {
            m.cwd = l.cwd.non_blank().map(str::to_owned);
        }
        if m.git_branch.is_none() {
            m.git_branch = l.git_branch.non_blank().map(str::to_owned);
        }
        if m.started_at.is_none() {
            m.started_at = l.timestamp.get().and_then(values::parse_ts);
        }
    }

    fn new_unit(&mut self, node: usize, l: &Line<'a>, role: Role, id: Option<String>) -> usize {
        self.units.push(Unit {
            node,
            id,
            role,
            text: String::new(),
            timestamp: l.timestamp.get().and_then(values::parse_ts),
            is_error: false,
            prompt: false,
        });
        self.units.len() - 1
    }

    fn user(&mut self, n: usize, node: usize, l: &Line<'a>, problems: &mut Problems) {
        if l.is_meta.0 {
            return;
        }
        let Some(content) = message_content(n, l, problems) else {
            return;
        };
        if l.is_compact_summary.0 {
            let text = content.join("\n", block_text);
            if !values::is_blank(&text) {
                let u = self.new_unit(node, l, Role::System, l.uuid.get().map(str::to_owned));
                self.units[u].text = text.into_owned();
            }
            return;
        }
        let (tool, texts, is_error) = match content {
            Content::Text(t) => (
                String::new(),
                classify_user_text(t).into_iter().collect(),
                false,
            ),
            Content::Blocks(blocks) => self.split_user_blocks(blocks),
            Content::Other => {
                problems.push(n, "user message content is neither a string nor a list");
                return;
            }
        };
        self.push_user_units(node, l, tool, texts, is_error);
    }

    /// Adds the Tool unit (results of a user line) and the User unit (its
    /// prompt text), either of which may be empty.
    fn push_user_units(
        &mut self,
        node: usize,
        l: &Line<'a>,
        tool: String,
        texts: Vec<UserText>,
        is_error: bool,
    ) {
        let uuid = l.uuid.get().map(str::to_owned);
        let has_tool = !tool.is_empty();
        if has_tool {
            let u = self.new_unit(node, l, Role::Tool, uuid.clone());
            self.units[u].text = tool;
            self.units[u].is_error = is_error;
        }
        let Some(prompt) = texts.first().map(|t| t.prompt) else {
            return;
        };
        let id = match uuid {
            Some(u) if has_tool => Some(format!("{u}:text")),
            other => other,
        };
        let u = self.new_unit(node, l, Role::User, id);
        for t in texts {
            self.units[u].push_part(Cow::Owned(t.text));
        }
        self.units[u].prompt = prompt;
    }

    /// Splits user blocks into (tool result text, user texts, any error).
    fn split_user_blocks(&self, blocks: &[ObjOr<Block<'a>>]) -> (String, Vec<UserText>, bool) {
        let mut tool = String::new();
        let mut texts = Vec::new();
        let mut any_error = false;
        for b in blocks.iter().filter_map(ObjOr::as_obj) {
            match b.kind.get() {
                Some("text") => texts.extend(b.text.get().and_then(classify_user_text)),
                Some("tool_result") => {
                    if b.tool_use_id
                        .get()
                        .is_some_and(|id| self.recalls.contains(id))
                    {
                        continue;
                    }
                    let is_error = b.is_error.0;
                    let Some(piece) = self.tool_result_piece(b, is_error) else {
                        continue;
                    };
                    any_error |= is_error;
                    if !tool.is_empty() {
                        tool.push('\n');
                    }
                    tool.push_str(&piece);
                }
                _ => {}
            }
        }
        (tool, texts, any_error)
    }

    /// The indexed text of one `tool_result` block, or `None` to drop it.
    fn tool_result_piece(&self, b: &Block<'a>, is_error: bool) -> Option<String> {
        let cap = self.opts.output_cap(is_error);
        let body = match &b.content {
            Some(Content::Text(t)) => values::ellipsize(t.trim(), cap).into_owned(),
            Some(c @ Content::Blocks(_)) => {
                values::ellipsize(c.join("\n", lenient::text_part).trim(), cap).into_owned()
            }
            Some(Content::Other) | None => String::new(),
        };
        match (body.is_empty(), is_error) {
            (false, _) => Some(body),
            (true, true) => Some("[tool error]".to_owned()),
            (true, false) => None,
        }
    }

    fn assistant(&mut self, n: usize, node: usize, l: &mut Line<'a>, problems: &mut Problems) {
        let key: Cow<'a, str> = match &l.message {
            Some(ObjOr::Obj(msg)) => match (msg.id.non_blank(), l.uuid.non_blank()) {
                (Some(_), _) => msg.id.0.clone().unwrap_or_default(),
                (None, Some(_)) => l.uuid.0.clone().unwrap_or_default(),
                (None, None) => Cow::Owned(format!("line:{n}")),
            },
            _ => {
                message_content(n, l, problems);
                return;
            }
        };
        let u = match self.groups.get(&key) {
            Some(&u) => u,
            None => {
                let u = self.new_unit(node, l, Role::Assistant, l.uuid.get().map(str::to_owned));
                self.groups.insert(key, u);
                u
            }
        };
        if message_content(n, l, problems).is_none() {
            return;
        }
        // Take the content out of the line so big text blocks are moved,
        // not copied.
        let Some(ObjOr::Obj(msg)) = l.message.as_mut() else {
            return;
        };
        match msg.content.take() {
            Some(Content::Text(t)) if !values::is_blank(&t) => self.units[u].push_part(t),
            Some(Content::Blocks(blocks)) => {
                for b in blocks.into_iter().filter_map(ObjOr::into_obj) {
                    if b.kind.get() == Some("tool_use")
                        && b.name.get().is_some_and(recalled::returns_memory)
                    {
                        self.recalls.extend(b.id.get().map(str::to_owned));
                    }
                    if b.kind.get() == Some("tool_use") && b.name.get() == Some("Bash") {
                        let command = b.input.as_ref().and_then(|v| v.get("command"));
                        let subject = command.and_then(|c| commit_subject(c.as_str()?));
                        self.meta.did.extend(subject);
                    }
                    if let Some(part) = assistant_part(b) {
                        self.units[u].push_part(part);
                    }
                }
            }
            _ => {}
        }
    }

    fn summary(&mut self, n: usize, node: usize, l: &mut Line<'a>, problems: &mut Problems) {
        match (l.summary.non_blank(), l.leaf_uuid.non_blank()) {
            (Some(_), Some(_)) => self.summaries.push(Summary {
                node,
                leaf: l.leaf_uuid.0.take().unwrap_or_default(),
                text: l.summary.0.take().unwrap_or_default(),
            }),
            (None, _) => problems.push(n, "summary line without summary text"),
            (Some(_), None) => problems.push(n, "summary line without leafUuid"),
        }
    }

    /// Turns summaries whose leaf is a line of the file (of this input,
    /// without an outlook) into System units; returns the last such
    /// summary's text as the title.
    fn resolve_summaries(&mut self) -> Option<String> {
        let mut title = None;
        for s in &self.summaries {
            let resolved = match self.outlook {
                Some(o) => o.leaves.contains(s.leaf.as_ref()),
                None => self.uuids.contains(s.leaf.as_ref()),
            };
            if !resolved {
                continue;
            }
            title = Some(values::title(&s.text, TITLE_CAP));
            self.units.push(Unit {
                node: s.node,
                id: None,
                role: Role::System,
                text: s.text.to_string(),
                timestamp: None,
                is_error: false,
                prompt: false,
            });
        }
        title
    }
}

impl MetaAcc {
    /// Whether the file is a compaction's transcript (`agent-acompact-…`,
    /// the sub-agent Claude Code runs to summarise a session).
    fn is_compaction(&self) -> bool {
        self.agent_id
            .as_deref()
            .is_some_and(|a| a.starts_with("acompact-"))
    }

    fn into_session_meta(self, stem: &str, title: Option<String>) -> SessionMeta {
        let (id, parent_id) = match (self.session_id, self.agent_id) {
            (Some(sid), Some(agent)) => (format!("{sid}/agent-{agent}"), Some(sid)),
            (Some(sid), None) => (sid, None),
            (None, _) => (stem.to_owned(), None),
        };
        SessionMeta {
            id,
            title,
            cwd: self.cwd,
            git_branch: self.git_branch,
            started_at: self.started_at,
            parent_id,
            did: self.did,
        }
    }
}

fn into_message(u: Unit) -> Message {
    let mut text = u.text;
    text.truncate(text.trim_end().len());
    Message {
        id: u.id,
        role: u.role,
        name: None,
        text,
        timestamp: u.timestamp,
        is_error: u.is_error,
    }
}

/// The `message.content` of a user/assistant line, reporting why it is
/// missing or partly unusable.
fn message_content<'l, 'a>(
    n: usize,
    l: &'l Line<'a>,
    problems: &mut Problems,
) -> Option<&'l Content<'a, Block<'a>>> {
    let content = match &l.message {
        None => {
            problems.push(n, "line has no message");
            return None;
        }
        Some(ObjOr::NotObject(kind)) => {
            problems.push(n, format!("message is {kind}, not an object"));
            return None;
        }
        Some(ObjOr::Obj(m)) => m.content.as_ref(),
    };
    let Some(content) = content else {
        problems.push(n, "message has no content");
        return None;
    };
    if let Some((count, kind)) = content.non_objects() {
        problems.push(
            n,
            format!("{count} content block(s) not an object (first is {kind})"),
        );
    }
    Some(content)
}
