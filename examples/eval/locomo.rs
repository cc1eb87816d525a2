//! LoCoMo-10: loading, conversion to neutral transcripts, indexing, queries
//! and metrics. See the crate doc for the rules.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::Write as _;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context as _, Result};
use regex::Regex;
use serde::Serialize;
use serde_json::{json, Value};

use crate::args::Common;
use crate::distract::{Doc, Draw, Scale, Span};
use crate::evidence::{self, Gold, Scores, Summary, BUDGET};
use crate::floor::{Floor, Row};
use crate::report::{Run, Table};
use crate::runner::{par_map, Outcome, Recall};
use crate::workspace::Workspace;

const DEFAULT_LIMIT: usize = 50;
const CATEGORIES: [(i64, &str); 5] = [
    (1, "1 multi-hop"),
    (2, "2 temporal"),
    (3, "3 open-domain"),
    (4, "4 single-hop"),
    (5, "5 adversarial"),
];

pub struct Conversation {
    pub id: String,
    speaker_a: String,
    sessions: Vec<Session>,
    qa: Vec<Qa>,
}

struct Session {
    n: u64,
    date: Option<String>,
    turns: Vec<Turn>,
}

struct Turn {
    speaker: String,
    id: String,
    /// The text, with `" [image: <caption>]"` appended when there is one.
    text: String,
}

struct Qa {
    question: String,
    answer: String,
    category: i64,
    gold: Gold,
}

impl Conversation {
    fn project(&self) -> String {
        format!("locomo-{}", self.id)
    }

    /// The transcript session id of session `n`.
    fn session_id(&self, n: u64) -> String {
        format!("{}-s{n}", self.id)
    }
}

/// A string field, or numbers and booleans written out; `""` otherwise.
fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null | Value::Array(_) | Value::Object(_) => String::new(),
        other => other.to_string(),
    }
}

/// The conversations of `locomo10.json`.
pub fn load(path: &Path) -> Result<Vec<Conversation>> {
    let bytes = fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let doc: Value = serde_json::from_slice(&bytes)
        .with_context(|| format!("{} is not JSON", path.display()))?;
    let list = doc.as_array().map(Vec::as_slice).unwrap_or_default();
    let id_re = Regex::new(r"^D\d+:\d+$")?;
    let convs = list
        .iter()
        .enumerate()
        .map(|(i, c)| conversation(i, c, &id_re))
        .collect();
    Ok(convs)
}

fn conversation(i: usize, v: &Value, id_re: &Regex) -> Conversation {
    let id = Some(text_of(&v["sample_id"]))
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| format!("conv{i}"));
    let c = &v["conversation"];
    let qa = v["qa"].as_array().map(Vec::as_slice).unwrap_or_default();
    let mut conv = Conversation {
        id,
        speaker_a: text_of(&c["speaker_a"]),
        sessions: sessions(c),
        qa: qa.iter().map(|q| parse_qa(q, id_re)).collect(),
    };
    let session_of: BTreeMap<String, String> = conv
        .sessions
        .iter()
        .flat_map(|s| s.turns.iter().map(|t| (t.id.clone(), conv.session_id(s.n))))
        .collect();
    for qa in &mut conv.qa {
        let sessions = qa.gold.ids.iter().filter_map(|id| session_of.get(id));
        qa.gold.sessions = sessions.cloned().collect();
    }
    conv
}

/// Every `session_<N>` list, by N.
fn sessions(c: &Value) -> Vec<Session> {
    let Some(obj) = c.as_object() else {
        return vec![];
    };
    let mut out: Vec<Session> = obj
        .iter()
        .filter_map(|(k, v)| {
            let n = k.strip_prefix("session_")?.parse::<u64>().ok()?;
            let turns = v.as_array()?.iter().map(turn).collect();
            let date = c[format!("session_{n}_date_time")].as_str();
            Some(Session {
                n,
                date: date.map(str::to_string),
                turns,
            })
        })
        .collect();
    out.sort_by_key(|s| s.n);
    out
}

fn turn(v: &Value) -> Turn {
    let mut text = text_of(&v["text"]);
    let caption = text_of(&v["blip_caption"]);
    if !caption.is_empty() {
        text.push_str(&format!(" [image: {caption}]"));
    }
    Turn {
        speaker: text_of(&v["speaker"]),
        id: text_of(&v["dia_id"]),
        text,
    }
}

fn parse_qa(v: &Value, id_re: &Regex) -> Qa {
    let answer = match &v["answer"] {
        Value::Null => text_of(&v["adversarial_answer"]),
        a => text_of(a),
    };
    let evidence = v["evidence"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    Qa {
        question: text_of(&v["question"]),
        answer,
        category: v["category"].as_i64().unwrap_or(0),
        gold: Gold {
            ids: gold_ids(evidence, id_re),
            sessions: BTreeSet::new(),
        },
    }
}

/// Evidence strings split on `;` and whitespace, keeping `D\d+:\d+` ids.
fn gold_ids(evidence: &[Value], id_re: &Regex) -> BTreeSet<String> {
    evidence
        .iter()
        .filter_map(Value::as_str)
        .flat_map(|e| e.split(|c: char| c == ';' || c.is_whitespace()))
        .filter(|p| id_re.is_match(p))
        .map(str::to_string)
        .collect()
}

/// `"1:56 pm on 8 May, 2023"` as RFC 3339 UTC; `None` when it does not parse.
fn parse_date(s: &str) -> Option<String> {
    let re = Regex::new(
        r"(?i)^(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([a-z]+),?\s+(\d{4})$",
    )
    .ok()?;
    let c = re.captures(s.trim())?;
    let num = |i: usize| c.get(i)?.as_str().parse::<i16>().ok();
    let mut hour = num(1)? % 12;
    if c[3].eq_ignore_ascii_case("p") {
        hour += 12;
    }
    let month = month_number(&c[5])?;
    let date = jiff::civil::Date::new(num(6)?, month, i8::try_from(num(4)?).ok()?).ok()?;
    let time = jiff::civil::Time::new(hour as i8, i8::try_from(num(2)?).ok()?, 0, 0).ok()?;
    Some(format!("{}T{}Z", date, time.strftime("%H:%M:%S")))
}

/// 1-12 for an English month name or its first three letters.
pub fn month_number(name: &str) -> Option<i8> {
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let lower = name.to_ascii_lowercase();
    let pos = MONTHS.iter().position(|m| lower.starts_with(m))?;
    i8::try_from(pos + 1).ok()
}

/// One session as a neutral transcript: its `session` object and one
/// object per turn.
fn neutral(conv: &Conversation, s: &Session, all_user: bool) -> (Value, Vec<Value>) {
    let title = match &s.date {
        Some(d) => format!("Session {}, {d}", s.n),
        None => format!("Session {}", s.n),
    };
    let mut meta = json!({"id": conv.session_id(s.n), "title": title});
    if let Some(t) = s.date.as_deref().and_then(parse_date) {
        meta["started_at"] = json!(t);
    }
    let turns = s.turns.iter().map(|t| {
        let role = if all_user || t.speaker == conv.speaker_a {
            "user"
        } else {
            "assistant"
        };
        let mut line = json!({"role": role, "name": t.speaker, "content": t.text});
        if !t.id.is_empty() {
            line["id"] = json!(t.id);
        }
        line
    });
    (meta, turns.collect())
}

/// The neutral transcript lines of one session.
fn transcript(conv: &Conversation, s: &Session, all_user: bool) -> String {
    let (meta, turns) = neutral(conv, s, all_user);
    let mut out = json!({ "session": meta }).to_string() + "\n";
    for line in turns {
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out
}

/// Every session as a distractor for the other sets' scale curves.
pub fn distractors(convs: &[Conversation]) -> Vec<Doc> {
    convs
        .iter()
        .flat_map(|c| {
            c.sessions.iter().map(move |s| {
                let (meta, turns) = neutral(c, s, false);
                Doc::session(c.session_id(s.n), meta, turns)
            })
        })
        .collect()
}

impl Conversation {
    /// Characters of its turns (captions included): its size on the scale
    /// curve.
    fn chars(&self) -> usize {
        let turns = self.sessions.iter().flat_map(|s| &s.turns);
        turns.map(|t| t.text.chars().count()).sum()
    }

    /// The span of its sessions' dates.
    fn span(&self) -> Option<Span> {
        let dates = self.sessions.iter().filter_map(|s| s.date.as_deref());
        let times = dates.filter_map(parse_date).filter_map(|t| {
            let t: jiff::Timestamp = t.parse().ok()?;
            Some(t.as_second())
        });
        Span::of(times)
    }
}

/// Write every session of `conv` under `dir/<sample_id>/`.
fn write_conversation(conv: &Conversation, dir: &Path, all_user: bool) -> Result<()> {
    let dir = dir.join(&conv.id);
    fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for s in &conv.sessions {
        let path = dir.join(format!("s{}.jsonl", s.n));
        let mut f =
            fs::File::create(&path).with_context(|| format!("cannot write {}", path.display()))?;
        f.write_all(transcript(conv, s, all_user).as_bytes())?;
    }
    Ok(())
}

/// Convert and index every conversation into its project at `scale`, with
/// its distractors (`draws`, in the order of `convs`), unless the workspace
/// already has them.
fn ensure_indexed(
    ws: &Workspace,
    recall: &Recall,
    (convs, draws): (&[Conversation], &[Draw]),
    (all_user, scale): (bool, &Scale),
    reindex: bool,
) -> Result<()> {
    let mut signature = format!("locomo v1 all_user={all_user}");
    if !scale.is_alone() {
        let digests: Vec<String> = draws.iter().map(Draw::digest).collect();
        signature.push_str(&format!(" distractors {}", digests.join(",")));
    }
    let marker = scale.project("locomo");
    if !reindex && ws.is_indexed(&marker, &signature) {
        eprintln!(
            "eval: reusing the {marker} index in {}",
            ws.root().display()
        );
        return Ok(());
    }
    ws.unmark(&marker);
    let data = ws.data("locomo");
    let t0 = Instant::now();
    let mut summaries = BTreeMap::new();
    for (conv, draw) in convs.iter().zip(draws) {
        write_conversation(conv, &data, all_user)?;
        let project = scale.project(&conv.project());
        let mut summary = json!({
            "sessions": recall.index(&project, &data.join(&conv.id), "session", reindex)?
        });
        if !draw.is_empty() {
            let dir = ws.data("scale").join(&project);
            summary["distractors"] = draw.index(&dir, recall, &project, reindex)?;
        }
        summaries.insert(conv.id.clone(), summary);
    }
    eprintln!(
        "eval: indexed {} conversations into {marker} in {:.1}s",
        convs.len(),
        t0.elapsed().as_secs_f64()
    );
    ws.mark_indexed(&marker, &signature, json!(summaries))
}

/// One question to run.
struct Question<'a> {
    conv: &'a Conversation,
    qa: &'a Qa,
}

/// One row of the `--json` output.
#[derive(Serialize)]
struct QuestionResult {
    conversation: String,
    question: String,
    answer: String,
    category: i64,
    gold: Vec<String>,
    #[serde(flatten)]
    scores: Scores,
}

/// Run LoCoMo in `ws` with `recall`.
pub fn run(
    path: &Path,
    all_user: bool,
    common: &Common,
    ws: &Workspace,
    recall: &Recall,
) -> Result<Run> {
    let convs = load(path)?;
    run_loaded(&convs, all_user, &Scale::alone(), common, ws, recall)
}

/// Run LoCoMo on its loaded conversations at the size `scale` says: each
/// conversation's project gets its own distractors, dated over the
/// conversation's span.
pub fn run_loaded(
    convs: &[Conversation],
    all_user: bool,
    scale: &Scale,
    common: &Common,
    ws: &Workspace,
    recall: &Recall,
) -> Result<Run> {
    let draws: Vec<Draw> = convs
        .iter()
        .map(|c| scale.draw(&scale.project(&c.project()), c.chars(), c.span()))
        .collect();
    ensure_indexed(
        ws,
        recall,
        (convs, &draws),
        (all_user, scale),
        common.reindex,
    )?;
    let (questions, skipped) = select(convs, common.limit_questions);
    let limit = common.limit.unwrap_or(DEFAULT_LIMIT);
    let t0 = Instant::now();
    let ours = par_map(&questions, common.workers, |q| {
        recall.query(&scale.project(&q.conv.project()), &q.qa.question, limit)
    });
    let wall_s = t0.elapsed().as_secs_f64();
    let floor = if common.no_floor {
        None
    } else {
        Some(run_floor(convs, &draws, &questions)?)
    };
    let results = score_all(&questions, &ours, floor.as_deref());
    let mut run = report(&results, &ours, floor.as_deref(), skipped, wall_s);
    run.results = serde_json::to_value(&results)?;
    Ok(run)
}

/// The questions with gold evidence (at most `limit`), and how many have none.
fn select(convs: &[Conversation], limit: Option<usize>) -> (Vec<Question<'_>>, usize) {
    let all = convs
        .iter()
        .flat_map(|conv| conv.qa.iter().map(move |qa| Question { conv, qa }));
    let (with, without): (Vec<_>, Vec<_>) = all.partition(|q| !q.qa.gold.ids.is_empty());
    let mut with = with;
    with.truncate(limit.unwrap_or(usize::MAX));
    (with, without.len())
}

/// The floor's outcome for every question: one table per conversation,
/// its distractors' rows (`draws`, in the order of `convs`) with it.
fn run_floor(
    convs: &[Conversation],
    draws: &[Draw],
    questions: &[Question],
) -> Result<Vec<Outcome>> {
    let mut floors = BTreeMap::new();
    for (conv, draw) in convs.iter().zip(draws) {
        let rows = conv.sessions.iter().flat_map(|s| {
            s.turns.iter().map(|t| Row {
                key: t.id.clone(),
                session: Some(conv.session_id(s.n)),
                body: format!("{}: {}", t.speaker, t.text),
            })
        });
        let floor = Floor::with_sessions(rows.chain(draw.rows()))?;
        floors.insert(conv.id.as_str(), floor);
    }
    Ok(questions
        .iter()
        .map(|q| match floors.get(q.conv.id.as_str()) {
            Some(f) => f.search(&q.qa.question, None),
            None => Outcome::default(),
        })
        .collect())
}

fn score_all(
    questions: &[Question],
    ours: &[Outcome],
    floor: Option<&[Outcome]>,
) -> Vec<QuestionResult> {
    questions
        .iter()
        .enumerate()
        .map(|(i, q)| QuestionResult {
            conversation: q.conv.id.clone(),
            question: q.qa.question.clone(),
            answer: q.qa.answer.clone(),
            category: q.qa.category,
            gold: q.qa.gold.ids.iter().cloned().collect(),
            scores: Scores::new(&ours[i], floor.and_then(|f| f.get(i)), &q.qa.gold),
        })
        .collect()
}

fn report(
    results: &[QuestionResult],
    ours: &[Outcome],
    floor: Option<&[Outcome]>,
    skipped: usize,
    wall_s: f64,
) -> Run {
    let mut t = Table::default();
    let all: Vec<&Scores> = results.iter().map(|r| &r.scores).collect();
    let mut summary = Summary {
        set: "LoCoMo",
        headlines: vec![],
    };
    summary.overall(&mut t, &all, "≥ 0.83");
    let labels = CATEGORIES.iter().map(|c| c.1.to_string()).collect();
    let by_category = evidence::group_by(
        results,
        &labels,
        |r| category_label(r.category),
        |r| &r.scores,
    );
    summary.groups(&mut t, "", &by_category);
    summary.top5(&mut t, &all, false);
    evidence::detail_rows(&mut t, &all);
    evidence::diagnostics_rows(&mut t, ours, skipped);
    let ours_refs: Vec<&Outcome> = ours.iter().collect();
    let floor_refs: Vec<&Outcome> = floor.unwrap_or_default().iter().collect();
    t.latency(&ours_refs, &floor_refs, wall_s);
    Run {
        title: format!(
            "LoCoMo: {} questions ({} without evidence skipped), budget {BUDGET} chars",
            results.len(),
            skipped
        ),
        table: t,
        headlines: summary.headlines,
        results: Value::Null,
        summary: Value::Null,
    }
}

/// `"<n> <name>"` for a known category, `"other"` otherwise.
fn category_label(cat: i64) -> &'static str {
    CATEGORIES
        .iter()
        .find(|c| c.0 == cat)
        .map_or("other", |c| c.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_parse() {
        assert_eq!(
            parse_date("1:56 pm on 8 May, 2023").as_deref(),
            Some("2023-05-08T13:56:00Z")
        );
        assert_eq!(
            parse_date("12:04 am on 19 December, 2023").as_deref(),
            Some("2023-12-19T00:04:00Z")
        );
        assert_eq!(parse_date("sometime"), None);
        assert_eq!(parse_date("1:56 pm on 31 February, 2023"), None);
    }

    #[test]
    fn malformed_evidence_is_split_and_filtered() {
        let re = Regex::new(r"^D\d+:\d+$").unwrap();
        let ev = json!(["D8:6; D9:17", "D", "D:11:26", "D9:1 D4:4", 7]);
        let ids = gold_ids(ev.as_array().unwrap(), &re);
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        assert_eq!(ids, ["D4:4", "D8:6", "D9:1", "D9:17"]);
    }
}
