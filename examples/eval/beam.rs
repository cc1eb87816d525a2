//! BEAM (100K and 500K chats): loading the gzipped JSON, conversion to
//! neutral transcripts and indexing, per conversation or merged into one
//! project. The questions, floor and report are in `beam_eval.rs`. See the
//! crate doc for the rules.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use std::time::Instant;

use anyhow::{Context as _, Result};
use regex::Regex;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::data::read_maybe_gz;
use crate::distract::{Doc, Draw, Scale, Span};
use crate::evidence::Gold;
use crate::locomo::month_number;
use crate::runner::Recall;
use crate::workspace::Workspace;

/// Bumped whenever the converted files change.
const SIGNATURE: &str = "beam v1";

/// One conversation, as the file has it (unknown fields are ignored).
#[derive(Deserialize)]
pub struct Conversation {
    #[serde(rename = "conversation_id", default)]
    pub id: String,
    #[serde(default)]
    pub split: String,
    #[serde(default)]
    topic: Topic,
    #[serde(default)]
    pub sessions: Vec<Session>,
    #[serde(default)]
    pub questions: Vec<Question>,
}

#[derive(Deserialize, Default)]
struct Topic {
    #[serde(default)]
    title: String,
}

#[derive(Deserialize)]
pub struct Session {
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    date: String,
    #[serde(default)]
    pub messages: Vec<Message>,
}

#[derive(Deserialize)]
pub struct Message {
    #[serde(default)]
    role: String,
    #[serde(default)]
    pub content: String,
    /// An integer in the file; read leniently.
    #[serde(default)]
    pub id: Value,
}

#[derive(Deserialize)]
pub struct Question {
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub category: String,
    #[serde(default)]
    pub question: String,
    #[serde(default)]
    pub answer: Value,
    /// Message ids; empty for abstention and a few others.
    #[serde(default)]
    pub evidence: Vec<Value>,
}

/// Where the conversations go: one project each, or one for all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    PerConversation,
    Merged,
}

/// The merged project unless `--project` names another.
pub const MERGED_PROJECT: &str = "beam-merged";

/// Where the conversations are indexed and their questions asked.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    pub layout: Layout,
    /// The project of the merged layout ([`MERGED_PROJECT`] by default).
    pub merged_project: &'a str,
}

impl Target<'_> {
    /// One project per conversation.
    pub fn per_conversation() -> Target<'static> {
        Target {
            layout: Layout::PerConversation,
            merged_project: MERGED_PROJECT,
        }
    }

    /// Every conversation in `project` (by default [`MERGED_PROJECT`]).
    pub fn merged(project: Option<&str>) -> Target<'_> {
        Target {
            layout: Layout::Merged,
            merged_project: project.unwrap_or(MERGED_PROJECT),
        }
    }

    /// The project `conv`'s questions are asked against.
    pub fn project(&self, conv: &Conversation) -> String {
        match self.layout {
            Layout::PerConversation => conv.project(),
            Layout::Merged => self.merged_project.to_string(),
        }
    }
}

impl Layout {
    /// The set's name in reports.
    pub fn set_name(self) -> &'static str {
        match self {
            Layout::PerConversation => "BEAM",
            Layout::Merged => "BEAM merged",
        }
    }
}

impl Conversation {
    /// `100K-1` as `100k-1`: lower-case, other characters as `-`.
    fn slug(&self) -> String {
        self.id
            .chars()
            .map(|c| match c.to_ascii_lowercase() {
                c @ ('a'..='z' | '0'..='9' | '-' | '_') => c,
                _ => '-',
            })
            .collect()
    }

    /// Its own project, when each conversation has one.
    pub fn project(&self) -> String {
        format!("beam-{}", self.slug())
    }

    /// A message id as written to the transcripts and the gold: the number,
    /// prefixed with `<conversation_id>:` when merged.
    pub fn message_key(&self, layout: Layout, id: &Value) -> Option<String> {
        let id = match id {
            Value::Number(n) => n.to_string(),
            Value::String(s) if !s.is_empty() => s.clone(),
            _ => return None,
        };
        Some(match layout {
            Layout::PerConversation => id,
            Layout::Merged => format!("{}:{id}", self.id),
        })
    }

    /// The gold of `q`: its evidence ids and the sessions holding them.
    pub fn gold(&self, layout: Layout, q: &Question) -> Gold {
        let ids: BTreeSet<String> = q
            .evidence
            .iter()
            .filter_map(|e| self.message_key(layout, e))
            .collect();
        let sessions = self
            .sessions
            .iter()
            .filter(|s| {
                s.messages
                    .iter()
                    .filter_map(|m| self.message_key(layout, &m.id))
                    .any(|k| ids.contains(&k))
            })
            .map(|s| s.id.clone())
            .collect();
        Gold { ids, sessions }
    }
}

/// The conversations of a BEAM file (`.gz` is read through `gzip -dc`).
pub fn load(path: &Path) -> Result<Vec<Conversation>> {
    let bytes = read_maybe_gz(path)?;
    let mut convs: Vec<Conversation> = serde_json::from_slice(&bytes)
        .with_context(|| format!("{} is not a BEAM JSON array", path.display()))?;
    for (i, c) in convs.iter_mut().enumerate() {
        if c.id.is_empty() {
            c.id = format!("conv{i}");
        }
    }
    Ok(convs)
}

/// `"March-15-2024"` as RFC 3339 UTC midnight; `None` when it does not parse.
fn parse_date(s: &str) -> Option<String> {
    let re = Regex::new(r"^([A-Za-z]+)-(\d{1,2})-(\d{4})$").ok()?;
    let c = re.captures(s.trim())?;
    let day = c[2].parse::<i8>().ok()?;
    let date = jiff::civil::Date::new(c[3].parse().ok()?, month_number(&c[1])?, day).ok()?;
    Some(format!("{date}T00:00:00Z"))
}

/// One session as a neutral transcript: its `session` object and one
/// object per message.
fn neutral(conv: &Conversation, s: &Session, layout: Layout) -> (Value, Vec<Value>) {
    let title = [conv.topic.title.trim(), s.date.trim()]
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(" · ");
    let mut meta = json!({"id": s.id, "title": title});
    if let Some(t) = parse_date(&s.date) {
        meta["started_at"] = json!(t);
    }
    let messages = s.messages.iter().map(|m| {
        let mut line = json!({"role": m.role, "content": m.content});
        if let Some(id) = conv.message_key(layout, &m.id) {
            line["id"] = json!(id);
        }
        line
    });
    (meta, messages.collect())
}

/// The neutral transcript lines of one session.
fn transcript(conv: &Conversation, s: &Session, layout: Layout) -> String {
    let (meta, messages) = neutral(conv, s, layout);
    let mut out = json!({ "session": meta }).to_string() + "\n";
    for line in messages {
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out
}

/// Every session as a distractor for the other sets' scale curves, its
/// message ids as when merged (`<conversation_id>:<id>`).
pub fn distractors(convs: &[Conversation]) -> Vec<Doc> {
    convs
        .iter()
        .flat_map(|c| {
            c.sessions.iter().map(move |s| {
                let (meta, messages) = neutral(c, s, Layout::Merged);
                Doc::session(s.id.clone(), meta, messages)
            })
        })
        .collect()
}

impl Conversation {
    /// Characters of its messages: its size on the scale curve.
    pub fn chars(&self) -> usize {
        let messages = self.sessions.iter().flat_map(|s| &s.messages);
        messages.map(|m| m.content.chars().count()).sum()
    }

    /// The span of its sessions' dates.
    pub fn span(&self) -> Option<Span> {
        let times = self.sessions.iter().filter_map(|s| {
            let t: jiff::Timestamp = parse_date(&s.date)?.parse().ok()?;
            Some(t.as_second())
        });
        Span::of(times)
    }
}

/// The index marker's signature: the conversion's, and the distractors'.
fn with_distractors(base: String, draw: &Draw) -> String {
    match draw.is_empty() {
        true => base,
        false => format!("{base} distractors {}", draw.digest()),
    }
}

/// Write every session of `conv` as `dir/<session id>.jsonl`.
fn write_conversation(conv: &Conversation, dir: &Path, layout: Layout) -> Result<()> {
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for (i, s) in conv.sessions.iter().enumerate() {
        let stem = if s.id.is_empty() {
            format!("s{i}")
        } else {
            s.id.replace(['/', '\\'], "-")
        };
        let path = dir.join(format!("{stem}.jsonl"));
        fs::write(&path, transcript(conv, s, layout))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// Convert and index what `convs` need in `target` at `scale`, with their
/// distractors (`draws`: one per conversation, in the order of `convs`, or
/// one for the merged project), unless the workspace already has it: one
/// marker per conversation, or one for the merged project (which always
/// holds every conversation). Returns the seconds spent indexing, `None`
/// when every index was reused.
pub fn ensure_indexed(
    ws: &Workspace,
    recall: &Recall,
    (convs, draws): (&[&Conversation], &[Draw]),
    (target, scale): (Target, &Scale),
    reindex: bool,
) -> Result<Option<f64>> {
    match target.layout {
        Layout::PerConversation => {
            let t0 = Instant::now();
            let mut n = 0;
            for (i, (conv, draw)) in convs.iter().zip(draws).enumerate() {
                let project = scale.project(&conv.project());
                n += usize::from(index_one(ws, recall, conv, (&project, draw), reindex)?);
                if n > 0 && (i + 1) % 10 == 0 {
                    eprintln!("eval: BEAM {}/{} conversations ready", i + 1, convs.len());
                }
            }
            if n == 0 {
                return Ok(None);
            }
            let secs = t0.elapsed().as_secs_f64();
            eprintln!("eval: indexed {n} BEAM conversations in {secs:.1}s");
            Ok(Some(secs))
        }
        Layout::Merged => {
            let project = scale.project(target.merged_project);
            let none = Draw::default();
            let draw = draws.first().unwrap_or(&none);
            index_merged(ws, recall, convs, (&project, draw), reindex)
        }
    }
}

/// Index one conversation into `project` with its distractors; whether it
/// had to.
fn index_one(
    ws: &Workspace,
    recall: &Recall,
    conv: &Conversation,
    (project, draw): (&str, &Draw),
    reindex: bool,
) -> Result<bool> {
    let signature = with_distractors(SIGNATURE.to_string(), draw);
    if !reindex && ws.is_indexed(project, &signature) {
        return Ok(false);
    }
    ws.unmark(project);
    let dir = ws.data("beam").join(conv.slug());
    write_conversation(conv, &dir, Layout::PerConversation)?;
    let mut summary = recall.index(project, &dir, "session", reindex)?;
    if !draw.is_empty() {
        let dir = ws.data("scale").join(project);
        summary = json!({
            "sessions": summary,
            "distractors": draw.index(&dir, recall, project, reindex)?,
        });
    }
    ws.mark_indexed(project, &signature, summary)?;
    Ok(true)
}

/// Index every conversation into `project` (converted once into
/// `data/beam-merged`, whatever the project); the seconds spent, `None`
/// when the marker says it is done.
fn index_merged(
    ws: &Workspace,
    recall: &Recall,
    convs: &[&Conversation],
    (project, draw): (&str, &Draw),
    reindex: bool,
) -> Result<Option<f64>> {
    let ids: Vec<&str> = convs.iter().map(|c| c.id.as_str()).collect();
    let ids = ids.join(",");
    // The default project keeps the marker and signature it always had.
    let (marker, signature) = if project == MERGED_PROJECT || !draw.is_empty() {
        (project.to_string(), format!("{SIGNATURE} merged {ids}"))
    } else {
        (
            format!("{MERGED_PROJECT}-into-{project}"),
            format!("{SIGNATURE} merged into {project}: {ids}"),
        )
    };
    let signature = with_distractors(signature, draw);
    if !reindex && ws.is_indexed(&marker, &signature) {
        let place = ws.index_place().display();
        eprintln!("eval: reusing the BEAM merged index (project {project}) in {place}");
        return Ok(None);
    }
    ws.unmark(&marker);
    let data = ws.data(MERGED_PROJECT);
    for conv in convs {
        write_conversation(conv, &data.join(conv.slug()), Layout::Merged)?;
    }
    let t0 = Instant::now();
    let mut summary = recall.index(project, &data, "session", reindex)?;
    if !draw.is_empty() {
        let dir = ws.data("scale").join(project);
        summary = json!({
            "sessions": summary,
            "distractors": draw.index(&dir, recall, project, reindex)?,
        });
    }
    let secs = t0.elapsed().as_secs_f64();
    eprintln!(
        "eval: indexed {} conversations into {project} in {secs:.1}s",
        convs.len()
    );
    let summaries: BTreeMap<&str, Value> = [(project, summary)].into_iter().collect();
    ws.mark_indexed(&marker, &signature, json!(summaries))?;
    Ok(Some(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conv() -> Conversation {
        let doc = json!({
            "conversation_id": "100K-1",
            "split": "100K",
            "topic": {"title": "Budget app"},
            "sessions": [
                {"id": "100K-1-b1-t1", "batch": 1, "date": "March-15-2024", "messages": [
                    {"role": "user", "content": "hi", "id": 0},
                    {"role": "assistant", "content": "hello", "id": 1}
                ]},
                {"id": "100K-1-b1-t2", "batch": 1, "date": "March-15-2024", "messages": [
                    {"role": "user", "content": "flask?", "id": 2}
                ]}
            ],
            "questions": [{"id": "q", "category": "x", "question": "?", "answer": "a", "evidence": [2, 9]}]
        });
        serde_json::from_value(doc).unwrap()
    }

    #[test]
    fn dates_parse() {
        assert_eq!(
            parse_date("March-15-2024").as_deref(),
            Some("2024-03-15T00:00:00Z")
        );
        assert_eq!(parse_date("February-30-2024"), None);
        assert_eq!(parse_date("soon"), None);
    }

    #[test]
    fn merged_ids_carry_the_conversation() {
        let c = conv();
        let q = &c.questions[0];
        let gold = c.gold(Layout::Merged, q);
        let ids: Vec<&str> = gold.ids.iter().map(String::as_str).collect();
        assert_eq!(ids, ["100K-1:2", "100K-1:9"]);
        assert_eq!(gold.sessions.len(), 1);
        assert!(gold.sessions.contains("100K-1-b1-t2"));
        let per = c.gold(Layout::PerConversation, q);
        assert!(per.ids.contains("2"));
        assert_eq!(c.project(), "beam-100k-1");
        assert_eq!(Target::merged(Some("bench")).project(&c), "bench");
        assert_eq!(Target::merged(None).project(&c), MERGED_PROJECT);
    }

    #[test]
    fn transcripts_start_with_the_session_line() {
        let c = conv();
        let t = transcript(&c, &c.sessions[0], Layout::Merged);
        let lines: Vec<Value> = t
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines[0]["session"]["title"], "Budget app · March-15-2024");
        assert_eq!(lines[0]["session"]["started_at"], "2024-03-15T00:00:00Z");
        assert_eq!(lines[2]["id"], "100K-1:1");
        assert_eq!(lines[2]["role"], "assistant");
    }
}
