//! Distractors for the scale curve (`eval scale`): unrelated history drawn
//! from the other sets and indexed into a set's own projects, so that its
//! questions are asked inside more text that competes with the answer.
//!
//! Every set can lend its documents as distractors, in the form its own
//! converter writes them ([`Doc`]: a neutral transcript or a ticket). Each
//! source's documents are put in a fixed order once (by a seeded hash of
//! their ids), and a project draws from every source in turn, the source
//! with the fewest characters drawn so far first, taking each document
//! that still fits the budget, until the budget is met or no document is
//! left (nothing is ever taken twice). Each project starts at its own place
//! in every source's order (a hash of the project's name), so the
//! projects of one set do not all get the same documents.
//!
//! A distractor never holds gold: every id it carries (session, message,
//! ticket) is rewritten as `x:<source>:<id>`, which no gold id starts with,
//! and it comes from another set. Its time is a hash of its id spread over
//! the target set's own time span (undated when the set is), so time
//! neither hides it (`--until`) nor singles it out (recency).
//!
//! Sizes count characters (Unicode scalar values) of indexed text: the
//! messages' contents for a session, title and text for a ticket; the sets
//! count their own text the same way. Size `n` means the project holds `n`
//! times its set's characters: the set and `n - 1` times as much
//! distractor text.

use std::fs;
use std::path::Path;
use std::sync::Mutex;

use anyhow::{Context as _, Result};
use serde::Serialize;
use serde_json::{json, Value};

use crate::floor::Row;
use crate::jira::ticket_markdown;
use crate::runner::Recall;

/// What every distractor id starts with; no set's gold id does.
pub const PREFIX: &str = "x:";
/// The seed of every source's order. Changing it changes every draw.
const SEED: &str = "recall eval scale v1";

/// What a distractor holds, in its set's converted form.
pub enum Body {
    /// A neutral transcript: the `session` object and one object per
    /// message, as the set's converter writes them.
    Session { meta: Value, messages: Vec<Value> },
    Ticket {
        title: String,
        text: String,
        labels: Vec<String>,
    },
}

/// One document a set lends as a distractor.
pub struct Doc {
    /// Its id in its own set (a session or ticket id).
    pub id: String,
    pub body: Body,
    /// Characters of indexed text (see the module doc).
    pub chars: usize,
}

impl Doc {
    pub fn session(id: String, meta: Value, messages: Vec<Value>) -> Doc {
        let chars = messages.iter().map(|m| content(m).chars().count()).sum();
        Doc {
            id,
            body: Body::Session { meta, messages },
            chars,
        }
    }

    pub fn ticket(id: String, title: String, text: String, labels: Vec<String>) -> Doc {
        Doc {
            id,
            chars: title.chars().count() + text.chars().count(),
            body: Body::Ticket {
                title,
                text,
                labels,
            },
        }
    }
}

/// A message's `content` when it is a string (every set writes strings).
fn content(m: &Value) -> &str {
    m["content"].as_str().unwrap_or_default()
}

/// One set's documents in their fixed draw order.
pub struct Source {
    pub name: &'static str,
    docs: Vec<Doc>,
}

impl Source {
    /// `docs` in the seeded order; empty documents are left out.
    pub fn new(name: &'static str, docs: Vec<Doc>) -> Source {
        let mut docs: Vec<(u64, Doc)> = docs
            .into_iter()
            .filter(|d| d.chars > 0)
            .map(|d| (hash(&[SEED, name, &d.id]), d))
            .collect();
        docs.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.id.cmp(&b.1.id)));
        Source {
            name,
            docs: docs.into_iter().map(|(_, d)| d).collect(),
        }
    }

    pub fn chars(&self) -> usize {
        self.docs.iter().map(|d| d.chars).sum()
    }
}

/// The first 8 bytes of the blake3 hash of `parts` (each ended by a NUL).
fn hash(parts: &[&str]) -> u64 {
    let mut h = blake3::Hasher::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update(&[0]);
    }
    let bytes: [u8; 8] = h.finalize().as_bytes()[..8]
        .try_into()
        .expect("a blake3 hash has 32 bytes");
    u64::from_le_bytes(bytes)
}

/// A time span in seconds since the epoch, both ends included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub from: i64,
    pub to: i64,
}

impl Span {
    /// The span of `times`; `None` when there is none.
    pub fn of(times: impl IntoIterator<Item = i64>) -> Option<Span> {
        times.into_iter().fold(None, |s, t| match s {
            None => Some(Span { from: t, to: t }),
            Some(s) => Some(Span {
                from: s.from.min(t),
                to: s.to.max(t),
            }),
        })
    }

    /// The instant `id` gets inside the span: spread by its hash.
    fn instant(&self, id: &str) -> i64 {
        let width = (self.to - self.from).max(0) as u64 + 1;
        self.from + (hash(&[SEED, "time", id]) % width) as i64
    }
}

/// The documents `budgets` chars buy from sources whose documents have the
/// `sizes` given (in draw order), each source read from its `start`
/// (wrapping round, never past where it began): the source with the fewest
/// chars drawn so far goes first; a document larger than what is left of
/// the budget is passed over. Returns (source, document) indexes in the
/// order drawn.
pub fn fill(sizes: &[Vec<usize>], start: &[usize], budget: usize) -> Vec<(usize, usize)> {
    let mut next = vec![0usize; sizes.len()];
    let mut drawn = vec![0usize; sizes.len()];
    let mut left = budget;
    let mut out = Vec::new();
    while left > 0 {
        let open = (0..sizes.len()).filter(|&s| next[s] < sizes[s].len());
        let Some(s) = open.min_by_key(|&s| (drawn[s], s)) else {
            break;
        };
        let i = (start[s] + next[s]) % sizes[s].len();
        next[s] += 1;
        let chars = sizes[s][i];
        if chars <= left {
            left -= chars;
            drawn[s] += chars;
            out.push((s, i));
        }
    }
    out
}

/// What the draws of one size added, over every project of a set.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Tally {
    /// The set's own characters, and the distractors'.
    pub base_chars: usize,
    pub distractor_chars: usize,
    pub sessions: usize,
    pub tickets: usize,
    /// Characters drawn per source.
    pub by_source: Vec<(String, usize)>,
    /// Whether some project wanted more than its pool had.
    pub ran_out: bool,
}

impl Tally {
    /// The corpus over the set: 1 when alone.
    pub fn ratio(&self) -> f64 {
        if self.base_chars == 0 {
            return 1.0;
        }
        (self.base_chars + self.distractor_chars) as f64 / self.base_chars as f64
    }
}

/// One point of the scale curve: its size and the sources distractors are
/// drawn from. [`Scale::alone`] is what every ordinary run uses.
pub struct Scale<'a> {
    pub size: u32,
    pool: Vec<&'a Source>,
    /// Behind a lock because the sets ask for projects from query threads.
    tally: Mutex<Tally>,
}

impl<'a> Scale<'a> {
    /// The set alone: no distractors, its usual projects.
    pub fn alone() -> Scale<'static> {
        Scale {
            size: 1,
            pool: vec![],
            tally: Mutex::default(),
        }
    }

    pub fn new(size: u32, pool: Vec<&'a Source>) -> Scale<'a> {
        Scale {
            size: size.max(1),
            pool,
            tally: Mutex::default(),
        }
    }

    /// Whether this is the set alone (size 1: no distractors).
    pub fn is_alone(&self) -> bool {
        self.size <= 1
    }

    /// The project a set's `base` project is at this size: itself when
    /// alone, `<base>-x<size>` otherwise.
    pub fn project(&self, base: &str) -> String {
        if self.is_alone() {
            base.to_string()
        } else {
            format!("{base}-x{}", self.size)
        }
    }

    /// The distractors of `project`, whose set has `base_chars` of its own
    /// dated within `span`. Empty when alone.
    pub fn draw(&self, project: &str, base_chars: usize, span: Option<Span>) -> Draw<'a> {
        let mut t = self.tally.lock().unwrap_or_else(|e| e.into_inner());
        t.base_chars += base_chars;
        if self.is_alone() {
            return Draw::default();
        }
        let budget = base_chars * (self.size as usize - 1);
        let sizes: Vec<Vec<usize>> = self
            .pool
            .iter()
            .map(|s| s.docs.iter().map(|d| d.chars).collect())
            .collect();
        let start: Vec<usize> = self
            .pool
            .iter()
            .map(|s| {
                (hash(&[SEED, "start", project, s.name]) % s.docs.len().max(1) as u64) as usize
            })
            .collect();
        let picks = fill(&sizes, &start, budget);
        let docs: Vec<Drawn<'a>> = picks
            .into_iter()
            .map(|(s, i)| {
                let source = self.pool[s];
                let doc = &source.docs[i];
                let id = format!("{PREFIX}{}:{}", source.name, doc.id);
                let at = span.map(|sp| sp.instant(&id));
                Drawn {
                    source: source.name,
                    doc,
                    id,
                    at,
                }
            })
            .collect();
        let draw = Draw { docs };
        let chars = draw.chars();
        t.distractor_chars += chars;
        t.ran_out |= chars < budget && draw.docs.len() == sizes.iter().map(Vec::len).sum::<usize>();
        for d in &draw.docs {
            match d.doc.body {
                Body::Session { .. } => t.sessions += 1,
                Body::Ticket { .. } => t.tickets += 1,
            }
            match t.by_source.iter_mut().find(|(n, _)| n == d.source) {
                Some((_, c)) => *c += d.doc.chars,
                None => t.by_source.push((d.source.to_string(), d.doc.chars)),
            }
        }
        draw
    }

    /// What the draws so far added.
    pub fn tally(&self) -> Tally {
        self.tally.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// One drawn document, with its distractor id and time.
struct Drawn<'a> {
    source: &'static str,
    doc: &'a Doc,
    /// `x:<source>:<id>`.
    id: String,
    at: Option<i64>,
}

impl Drawn<'_> {
    /// A message or ticket id as written: prefixed like the document's.
    fn key(&self, id: &str) -> String {
        format!("{PREFIX}{}:{id}", self.source)
    }

    /// The neutral transcript lines of a session.
    fn transcript(&self, meta: &Value, messages: &[Value]) -> String {
        let mut meta = meta.clone();
        meta["id"] = json!(self.id);
        match self.at.and_then(|t| jiff::Timestamp::from_second(t).ok()) {
            Some(t) => meta["started_at"] = json!(t.to_string()),
            None => {
                if let Some(m) = meta.as_object_mut() {
                    m.remove("started_at");
                }
            }
        }
        let mut out = json!({ "session": meta }).to_string() + "\n";
        for m in messages {
            let mut m = m.clone();
            if let Some(obj) = m.as_object_mut() {
                obj.remove("timestamp");
                if let Some(id) = obj.get("id").and_then(id_text) {
                    obj.insert("id".into(), json!(self.key(&id)));
                }
            }
            out.push_str(&m.to_string());
            out.push('\n');
        }
        out
    }

    /// The floor's rows: one per message (its session named), or one for a
    /// ticket (title and text).
    fn rows(&self) -> Vec<Row> {
        match &self.doc.body {
            Body::Session { messages, .. } => messages
                .iter()
                .enumerate()
                .map(|(i, m)| Row {
                    key: id_text(&m["id"])
                        .map_or_else(|| format!("{}#{i}", self.id), |id| self.key(&id)),
                    session: Some(self.id.clone()),
                    body: match m["name"].as_str() {
                        Some(name) => format!("{name}: {}", content(m)),
                        None => content(m).to_string(),
                    },
                })
                .collect(),
            Body::Ticket { title, text, .. } => vec![Row {
                key: self.id.clone(),
                session: None,
                body: format!("{title} {text}"),
            }],
        }
    }
}

/// A native id written as a string or a number.
fn id_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The distractors of one project.
#[derive(Default)]
pub struct Draw<'a> {
    docs: Vec<Drawn<'a>>,
}

impl Draw<'_> {
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    pub fn chars(&self) -> usize {
        self.docs.iter().map(|d| d.doc.chars).sum()
    }

    /// The distractor ids and times, hashed: what tells one draw from
    /// another in an index marker.
    pub fn digest(&self) -> String {
        let mut h = blake3::Hasher::new();
        for d in &self.docs {
            h.update(d.id.as_bytes());
            h.update(&d.at.unwrap_or(i64::MIN).to_le_bytes());
        }
        h.finalize().to_hex()[..16].to_string()
    }

    /// Every floor row of every distractor.
    pub fn rows(&self) -> impl Iterator<Item = Row> + '_ {
        self.docs.iter().flat_map(Drawn::rows)
    }

    /// Each distractor's id (a session or a ticket: what a ranking of
    /// distinct items counts) and its time, when dated.
    pub fn times(&self) -> impl Iterator<Item = (String, i64)> + '_ {
        self.docs.iter().filter_map(|d| Some((d.id.clone(), d.at?)))
    }

    /// Write the distractors under `dir` (emptied first: `sessions/` as
    /// neutral transcripts, `tickets/` as Markdown tickets) and index them
    /// into `project`, each kind as itself; returns the index summaries.
    pub fn index(&self, dir: &Path, recall: &Recall, project: &str, full: bool) -> Result<Value> {
        if dir.exists() {
            fs::remove_dir_all(dir).with_context(|| format!("cannot empty {}", dir.display()))?;
        }
        let sessions = dir.join("sessions");
        let tickets = dir.join("tickets");
        for d in [&sessions, &tickets] {
            fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
        }
        for (i, d) in self.docs.iter().enumerate() {
            let (path, text) = match &d.doc.body {
                Body::Session { meta, messages } => (
                    sessions.join(format!("{i:06}.jsonl")),
                    d.transcript(meta, messages),
                ),
                Body::Ticket {
                    title,
                    text,
                    labels,
                } => (
                    tickets.join(format!("{i:06}.md")),
                    ticket_markdown(&d.id, title, d.at, labels, text),
                ),
            };
            fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
        }
        let mut summaries = serde_json::Map::new();
        for (kind, d) in [("session", &sessions), ("ticket", &tickets)] {
            if fs::read_dir(d)?.next().is_some() {
                summaries.insert(kind.into(), recall.index(project, d, kind, full)?);
            }
        }
        Ok(Value::Object(summaries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(id: &str, words: &[&str]) -> Doc {
        let messages = words
            .iter()
            .enumerate()
            .map(|(i, w)| json!({"role": "user", "content": w, "id": i}))
            .collect();
        Doc::session(id.into(), json!({"id": id, "title": "t"}), messages)
    }

    fn pool() -> Vec<Source> {
        let a = (0..40)
            .map(|i| session(&format!("a{i}"), &["x".repeat(10 + i).as_str()]))
            .collect();
        let b = (0..40)
            .map(|i| Doc::ticket(format!("T-{i}"), "title".into(), "y".repeat(50), vec![]))
            .collect();
        vec![Source::new("a", a), Source::new("b", b)]
    }

    #[test]
    fn fill_balances_sources_and_never_passes_the_budget() {
        let sizes = vec![vec![10; 100], vec![30; 100]];
        let picks = fill(&sizes, &[0, 0], 600);
        let by = |s| picks.iter().filter(|p| p.0 == s).count();
        assert_eq!((by(0) * 10, by(1) * 30), (300, 300));
        let big = vec![vec![500, 20], vec![30]];
        // 500 does not fit in 100; 30 and 20 do.
        assert_eq!(fill(&big, &[0, 0], 100), [(0, 1), (1, 0)]);
        // A budget beyond the pool takes everything once.
        assert_eq!(fill(&big, &[1, 0], 10_000), [(0, 1), (1, 0), (0, 0)]);
    }

    #[test]
    fn draws_are_deterministic_and_sized() {
        let sources = pool();
        let scale = |size| Scale::new(size, sources.iter().collect());
        let (one, two) = (scale(4), scale(4));
        let d1 = one.draw("p", 200, None);
        let d2 = two.draw("p", 200, None);
        assert_eq!(d1.digest(), d2.digest());
        assert!(d1.chars() <= 600 && d1.chars() > 500, "{}", d1.chars());
        assert_ne!(one.draw("q", 200, None).digest(), d1.digest());
        assert!(Scale::alone().draw("p", 200, None).is_empty());
        let t = one.tally();
        assert_eq!(t.base_chars, 400);
        assert!(!t.ran_out);
        let everything = scale(1000);
        everything.draw("p", 200, None);
        assert!(everything.tally().ran_out);
        assert_eq!(
            everything.tally().distractor_chars,
            sources[0].chars() + sources[1].chars()
        );
    }

    #[test]
    fn no_distractor_id_can_be_gold() {
        let sources = pool();
        let scale = Scale::new(16, sources.iter().collect());
        let span = Some(Span { from: 100, to: 200 });
        let draw = scale.draw("p", 500, span);
        assert!(!draw.is_empty());
        for r in draw.rows() {
            assert!(r.key.starts_with(PREFIX), "{}", r.key);
            assert!(r.session.is_none_or(|s| s.starts_with(PREFIX)));
        }
        for (id, at) in draw.times() {
            assert!(id.starts_with(PREFIX));
            assert!((100..=200).contains(&at));
        }
        let d = &draw.docs.iter().find(|d| d.source == "a").unwrap();
        let Body::Session { meta, messages } = &d.doc.body else {
            unreachable!("source a lends sessions")
        };
        let lines: Vec<Value> = d
            .transcript(meta, messages)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert!(lines[0]["session"]["id"]
            .as_str()
            .unwrap()
            .starts_with("x:a:a"));
        assert!(lines[0]["session"]["started_at"].is_string());
        assert_eq!(lines[1]["id"], "x:a:0");
    }

    #[test]
    fn spans_cover_their_times() {
        assert_eq!(Span::of([5, 1, 9]), Some(Span { from: 1, to: 9 }));
        assert_eq!(Span::of([]), None);
        let s = Span { from: 7, to: 7 };
        assert_eq!(s.instant("anything"), 7);
    }
}
