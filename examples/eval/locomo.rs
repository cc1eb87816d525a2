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
use crate::floor::Floor;
use crate::metrics::{covered, mean, ndcg_gold, ratio, take_budget};
use crate::report::{f3, opt3, write_json, Table};
use crate::runner::{par_map, Hit, Outcome, Recall};
use crate::workspace::Workspace;

/// Characters of hit text the headline metric may use.
const BUDGET: usize = 4000;
const DEFAULT_LIMIT: usize = 50;
const CATEGORIES: [(i64, &str); 5] = [
    (1, "multi-hop"),
    (2, "temporal"),
    (3, "open-domain"),
    (4, "single-hop"),
    (5, "adversarial"),
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
    gold: BTreeSet<String>,
}

impl Conversation {
    fn project(&self) -> String {
        format!("locomo-{}", self.id)
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

fn load(path: &Path) -> Result<Vec<Conversation>> {
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
    Conversation {
        id,
        speaker_a: text_of(&c["speaker_a"]),
        sessions: sessions(c),
        qa: qa.iter().map(|q| parse_qa(q, id_re)).collect(),
    }
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
        gold: gold_ids(evidence, id_re),
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

fn month_number(name: &str) -> Option<i8> {
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let lower = name.to_ascii_lowercase();
    let pos = MONTHS.iter().position(|m| lower.starts_with(m))?;
    i8::try_from(pos + 1).ok()
}

/// The neutral transcript lines of one session.
fn transcript(conv: &Conversation, s: &Session, all_user: bool) -> String {
    let title = match &s.date {
        Some(d) => format!("Session {}, {d}", s.n),
        None => format!("Session {}", s.n),
    };
    let mut meta = json!({"id": format!("{}-s{}", conv.id, s.n), "title": title});
    if let Some(t) = s.date.as_deref().and_then(parse_date) {
        meta["started_at"] = json!(t);
    }
    let mut out = json!({ "session": meta }).to_string() + "\n";
    for t in &s.turns {
        let role = if all_user || t.speaker == conv.speaker_a {
            "user"
        } else {
            "assistant"
        };
        let mut line = json!({"role": role, "name": t.speaker, "content": t.text});
        if !t.id.is_empty() {
            line["id"] = json!(t.id);
        }
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out
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

/// Convert and index every conversation unless the workspace already has it.
fn ensure_indexed(
    ws: &Workspace,
    recall: &Recall,
    convs: &[Conversation],
    all_user: bool,
    reindex: bool,
) -> Result<()> {
    let signature = format!("locomo v1 all_user={all_user}");
    if !reindex && ws.is_indexed("locomo", &signature) {
        eprintln!("eval: reusing the index in {}", ws.root().display());
        return Ok(());
    }
    ws.unmark("locomo");
    let data = ws.data("locomo");
    let t0 = Instant::now();
    let mut summaries = BTreeMap::new();
    for conv in convs {
        write_conversation(conv, &data, all_user)?;
        let summary = recall.index(&conv.project(), &data.join(&conv.id), "session", reindex)?;
        summaries.insert(conv.id.clone(), summary);
    }
    eprintln!(
        "eval: indexed {} conversations in {:.1}s",
        convs.len(),
        t0.elapsed().as_secs_f64()
    );
    ws.mark_indexed("locomo", &signature, json!(summaries))
}

/// One question to run.
struct Question<'a> {
    conv: &'a Conversation,
    qa: &'a Qa,
}

/// How one ranking did on one question.
#[derive(Serialize)]
struct Scored {
    budget_recall: f64,
    recall10: f64,
    hit10: f64,
    ndcg10: f64,
    /// Hits taken within the budget, and their characters.
    taken: usize,
    chars_used: usize,
    covered_budget: Vec<String>,
    covered10: Vec<String>,
    engine_ms: Option<f64>,
    wall_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    /// The hits taken within the budget, or the top 10 when more.
    hits: Vec<Hit>,
}

fn score(o: &Outcome, gold: &BTreeSet<String>) -> Scored {
    let taken = take_budget(&o.hits, BUDGET);
    let top10 = &o.hits[..o.hits.len().min(10)];
    let in_budget = covered(taken, gold);
    let in10 = covered(top10, gold);
    Scored {
        budget_recall: ratio(in_budget.len(), gold.len()),
        recall10: ratio(in10.len(), gold.len()),
        hit10: if in10.is_empty() { 0.0 } else { 1.0 },
        ndcg10: ndcg_gold(&o.hits, gold, 10),
        taken: taken.len(),
        chars_used: taken.iter().map(|h| h.chars).sum(),
        covered_budget: in_budget.into_iter().collect(),
        covered10: in10.into_iter().collect(),
        engine_ms: o.engine_ms,
        wall_ms: o.wall_ms,
        error: o.error.clone(),
        hits: o.hits[..o.hits.len().min(taken.len().max(10))].to_vec(),
    }
}

/// One row of the `--json` output.
#[derive(Serialize)]
struct QuestionResult {
    conversation: String,
    question: String,
    answer: String,
    category: i64,
    gold: Vec<String>,
    ours: Scored,
    #[serde(skip_serializing_if = "Option::is_none")]
    floor: Option<Scored>,
}

pub fn run(path: &Path, all_user: bool, common: &Common) -> Result<()> {
    let convs = load(path)?;
    let ws = Workspace::open(common.keep_home.as_deref())?;
    let recall = Recall::new(common.recall_bin.as_deref(), ws.home())?;
    eprintln!("eval: recall binary {}", recall.bin().display());
    ensure_indexed(&ws, &recall, &convs, all_user, common.reindex)?;
    let (questions, skipped) = select(&convs, common.limit_questions);
    let limit = common.limit.unwrap_or(DEFAULT_LIMIT);
    let t0 = Instant::now();
    let ours = par_map(&questions, common.workers, |q| {
        recall.query(&q.conv.project(), &q.qa.question, limit)
    });
    let wall_s = t0.elapsed().as_secs_f64();
    let floor = if common.no_floor {
        None
    } else {
        Some(run_floor(&convs, &questions)?)
    };
    let results = score_all(&questions, &ours, floor.as_deref());
    report(&results, &ours, floor.as_deref(), skipped, wall_s);
    if let Some(out) = &common.json {
        write_json(out, &results)?;
    }
    Ok(())
}

/// The questions with gold evidence (at most `limit`), and how many have none.
fn select(convs: &[Conversation], limit: Option<usize>) -> (Vec<Question<'_>>, usize) {
    let all = convs
        .iter()
        .flat_map(|conv| conv.qa.iter().map(move |qa| Question { conv, qa }));
    let (with, without): (Vec<_>, Vec<_>) = all.partition(|q| !q.qa.gold.is_empty());
    let mut with = with;
    with.truncate(limit.unwrap_or(usize::MAX));
    (with, without.len())
}

/// The floor's outcome for every question.
fn run_floor(convs: &[Conversation], questions: &[Question]) -> Result<Vec<Outcome>> {
    let mut floors = BTreeMap::new();
    for conv in convs {
        let rows = conv.sessions.iter().flat_map(|s| &s.turns).map(|t| {
            let body = format!("{}: {}", t.speaker, t.text);
            (t.id.clone(), body)
        });
        floors.insert(conv.id.as_str(), Floor::new(rows)?);
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
            gold: q.qa.gold.iter().cloned().collect(),
            ours: score(&ours[i], &q.qa.gold),
            floor: floor.and_then(|f| f.get(i)).map(|o| score(o, &q.qa.gold)),
        })
        .collect()
}

/// A per-question number to average.
type Metric = fn(&Scored) -> f64;

/// Mean of `metric` over the results matching `keep`, for us and the floor.
fn avg(
    results: &[QuestionResult],
    keep: impl Fn(&QuestionResult) -> bool,
    metric: Metric,
) -> (f64, Option<f64>) {
    let kept: Vec<&QuestionResult> = results.iter().filter(|r| keep(r)).collect();
    let ours = mean(kept.iter().map(|r| metric(&r.ours)));
    let floor: Option<Vec<f64>> = kept.iter().map(|r| r.floor.as_ref().map(metric)).collect();
    (ours, floor.map(mean))
}

fn report(
    results: &[QuestionResult],
    ours: &[Outcome],
    floor: Option<&[Outcome]>,
    skipped: usize,
    wall_s: f64,
) {
    let mut t = Table::default();
    quality_rows(&mut t, results);
    diagnostics_rows(&mut t, ours, skipped);
    let ours_refs: Vec<&Outcome> = ours.iter().collect();
    let floor_refs: Vec<&Outcome> = floor.unwrap_or_default().iter().collect();
    t.latency(&ours_refs, &floor_refs, wall_s);
    t.print(&format!(
        "LoCoMo: {} questions ({} without evidence skipped), budget {BUDGET} chars",
        results.len(),
        skipped
    ));
}

fn quality_rows(t: &mut Table, results: &[QuestionResult]) {
    let all = |_: &QuestionResult| true;
    let (o, f) = avg(results, all, |s| s.budget_recall);
    t.row("**budgeted evidence recall**", f3(o), opt3(f), "≥ 0.80");
    for (cat, name) in CATEGORIES {
        let n = results.iter().filter(|r| r.category == cat).count();
        let (o, f) = avg(results, |r| r.category == cat, |s| s.budget_recall);
        t.row(&format!("– {cat} {name} (n={n})"), f3(o), opt3(f), "");
    }
    let metrics: [(&str, Metric); 3] = [
        ("recall@10", |s| s.recall10),
        ("hit@10", |s| s.hit10),
        ("nDCG@10 (per gold id)", |s| s.ndcg10),
    ];
    for (name, m) in metrics {
        let (o, f) = avg(results, all, m);
        t.row(name, f3(o), opt3(f), "");
    }
    let (o, f) = avg(results, all, |s| s.taken as f64);
    t.row("hits taken within budget (mean)", f3(o), opt3(f), "");
    let (o, f) = avg(results, all, |s| s.chars_used as f64);
    let chars = |x: f64| format!("{x:.0}");
    t.row(
        "chars used (mean)",
        chars(o),
        f.map_or("-".into(), chars),
        "",
    );
}

fn diagnostics_rows(t: &mut Table, ours: &[Outcome], skipped: usize) {
    let errors = ours.iter().filter(|o| o.error.is_some()).count();
    let empty = ours
        .iter()
        .filter(|o| o.error.is_none() && o.hits.is_empty())
        .count();
    t.row(
        "queries failed / with no hit",
        format!("{errors} / {empty}"),
        "-".into(),
        "",
    );
    t.row(
        "questions skipped (no evidence)",
        skipped.to_string(),
        "-".into(),
        "",
    );
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for o in ours {
        for h in &o.hits {
            *kinds.entry(h.kind.as_str()).or_default() += 1;
        }
    }
    let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
    t.row("hits returned by kind", kinds.join(", "), "-".into(), "");
    if let Some(e) = ours.iter().find_map(|o| o.error.as_deref()) {
        eprintln!("eval: first query error: {e}");
    }
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
