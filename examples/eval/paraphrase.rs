//! `paraphrase`: questions asked in other words than the record or passage
//! that answers them (`testdata/paraphrase/`, see its README), against the
//! real agent transcripts and the set's records. The set lexical recall
//! fails on by construction, where hybrid recall must find ≥ 60% in the
//! top 5 (issue 38).
//!
//! Every `.jsonl` transcript under `--transcripts` (`claude-code/<project>/`
//! and `codex/<project>/`, subagent and compaction files included) is
//! copied into the workspace and indexed with `--kind session` into the
//! project its folder names, after every record of `records/<project>/`
//! was added with `recall record add` (so that indexing embeds the records
//! too when a model is configured). Each question is asked in its project with
//! `recall query --format json --limit 50`. A hit is gold when it is the
//! gold record (its `title` is the record's key), or a passage of the gold
//! session (`source.session_id` is it, or a subagent file of it) whose text
//! holds the gold's `contains` string (whitespace collapsed, case
//! ignored). Metrics over the hits in rank order: top-1 and top-5 hit
//! rates and MRR.
//!
//! The `recall` processes inherit this process's environment (only
//! `RECALL_HOME` is removed), so a hybrid switch set there
//! (`RECALL_SEMANTIC_MODEL`, `RECALL_SEMANTIC_HYBRID`) reaches them;
//! `--semantic MODEL_DIR` and `--no-hybrid` set the same variables, as for
//! the other sets.
//!
//! Floor: one in-memory FTS5 table per project, one row per record (key
//! and body) and one per message of the transcripts as recall's parsers
//! read them, queried by the floor's usual rule, scored the same way.

use std::collections::HashMap;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context as _, Result};
use clap::Parser;
use recall::ingest::prepare::parse_file;
use recall::ingest::{Format, IngestOptions};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::args::Common;
use crate::floor::{Floor, Row};
use crate::metrics::mean;
use crate::report::{f3, opt3, write_json, Headline, Run, Table};
use crate::runner::{par_map, parse_hits, Outcome, Recall};
use crate::workspace::Workspace;

/// The workspace marker's name.
const DATASET: &str = "paraphrase";
/// Bumped whenever the conversion changes.
const SIGNATURE: &str = "paraphrase v1";
const DEFAULT_LIMIT: usize = 50;
/// The launchers' folders under `--transcripts`, and their formats.
const LAUNCHERS: [(&str, Format); 2] = [
    ("claude-code", Format::ClaudeCode),
    ("codex", Format::Codex),
];

/// The paraphrase set: questions in other words than their gold record or
/// passage, over the real transcripts
#[derive(Debug, Parser)]
#[command(name = "paraphrase")]
pub struct Opts {
    /// The set's folder (questions.jsonl, records/<project>/<category>/)
    #[arg(default_value = "testdata/paraphrase")]
    pub dir: PathBuf,
    /// The real transcripts: claude-code/<project>/ and codex/<project>/
    #[arg(long, default_value = "../shared/data/agent-transcripts")]
    pub transcripts: PathBuf,
    #[command(flatten)]
    pub common: Common,
}

/// One line of `questions.jsonl`.
#[derive(Debug, Deserialize)]
struct Question {
    id: String,
    question: String,
    project: String,
    gold: Vec<Gold>,
}

/// What answers a question: a record, or a passage of a session.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(untagged)]
enum Gold {
    Record { record: String },
    Passage { session: String, contains: String },
}

/// A record file of the set.
struct Record {
    project: String,
    category: String,
    key: String,
    importance: Option<String>,
    body: String,
}

/// A transcript file: its project, its path and its launcher's format.
struct Transcript {
    project: String,
    path: PathBuf,
    /// Relative to `--transcripts`: where its copy goes.
    rel: PathBuf,
    format: Format,
}

/// A hit as this set scores it.
#[derive(Debug, Clone, Default)]
struct Seen {
    kind: String,
    title: String,
    /// The root session: a subagent file's session is its parent's.
    session: Option<String>,
    /// The text, whitespace collapsed and lower-cased.
    text: String,
}

/// The set as loaded.
struct Set {
    questions: Vec<Question>,
    records: Vec<Record>,
    transcripts: Vec<Transcript>,
    /// Names what was indexed: the records' and transcripts' bytes.
    digest: String,
}

/// Run the set: the `paraphrase` subcommand.
pub fn main(opts: Opts) -> Result<()> {
    let common = &opts.common;
    let ws = Workspace::open(common.keep_home.as_deref())?;
    let recall =
        Recall::new(common.recall_bin.as_deref(), ws.home(), &common.at)?.with_semantic(common)?;
    let ws = ws.built_by(recall.fingerprint());
    eprintln!("eval: recall binary {}", recall.bin().display());
    let run = run(&opts.dir, &opts.transcripts, common, &ws, &recall)?;
    print!("{}", run.markdown());
    match &common.json {
        Some(out) => write_json(out, &run.results),
        None => Ok(()),
    }
}

/// Run the set from `dir` over the transcripts under `transcripts`.
pub fn run(
    dir: &Path,
    transcripts: &Path,
    common: &Common,
    ws: &Workspace,
    recall: &Recall,
) -> Result<Run> {
    let set = load(dir, transcripts, common.limit_questions)?;
    let child = Child::new(recall, ws.home(), common)?;
    ensure_indexed(ws, &child, &set, common.reindex)?;
    let limit = common.limit.unwrap_or(DEFAULT_LIMIT);
    let t0 = Instant::now();
    let ours = par_map(&set.questions, common.workers, |q| {
        ask(&child, &common.at, q, limit)
    });
    let wall_s = t0.elapsed().as_secs_f64();
    let floor = match common.no_floor {
        true => None,
        false => Some(floor_answers(&set, limit)?),
    };
    let results: Vec<Scored> = set
        .questions
        .iter()
        .enumerate()
        .map(|(i, q)| Scored {
            id: q.id.clone(),
            project: q.project.clone(),
            question: q.question.clone(),
            gold: q.gold.clone(),
            ours: rank_of(&q.gold, &ours[i].1),
            top: ours[i].1.iter().take(5).map(label).collect(),
            floor: floor.as_ref().map(|f| rank_of(&q.gold, &f.answers[i])),
            error: ours[i].0.error.clone(),
        })
        .collect();
    let outcomes: Vec<Outcome> = ours.into_iter().map(|(o, _)| o).collect();
    let floor_out = floor.as_ref().map(|f| f.outcomes.as_slice());
    let mut run = report(&results, &outcomes, floor_out, wall_s);
    if let Some(f) = &floor {
        run.table.row(
            "gold strings in no floor row (data check)",
            "-".into(),
            f.unreachable.to_string(),
            "0",
        );
    }
    run.results = serde_json::to_value(&results)?;
    Ok(run)
}

/// Read the questions, the records and the list of transcripts.
fn load(dir: &Path, transcripts: &Path, limit: Option<usize>) -> Result<Set> {
    let path = dir.join("questions.jsonl");
    let text =
        fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut questions = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let q: Question = serde_json::from_str(line)
            .with_context(|| format!("{}:{}: not a question", path.display(), i + 1))?;
        questions.push(q);
    }
    questions.truncate(limit.unwrap_or(usize::MAX));
    let records = load_records(&dir.join("records"))?;
    let transcripts = list_transcripts(transcripts)?;
    let mut h = blake3::Hasher::new();
    for r in &records {
        for part in [&r.project, &r.category, &r.key, &r.body] {
            h.update(part.as_bytes());
            h.update(b"\0");
        }
    }
    for t in &transcripts {
        h.update(t.rel.to_string_lossy().as_bytes());
        h.update(&fs::metadata(&t.path).map_or(0, |m| m.len()).to_le_bytes());
    }
    let digest = h.finalize().to_hex()[..16].to_string();
    Ok(Set {
        questions,
        records,
        transcripts,
        digest,
    })
}

/// Every `records/<project>/<category>/<id>.md`, in path order.
fn load_records(root: &Path) -> Result<Vec<Record>> {
    let mut out = Vec::new();
    for e in walkdir::WalkDir::new(root).sort_by_file_name() {
        let e = e.with_context(|| format!("cannot list {}", root.display()))?;
        let path = e.path();
        if !e.file_type().is_file() || path.extension().is_none_or(|x| x != "md") {
            continue;
        }
        let rel: Vec<String> = path
            .strip_prefix(root)?
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        let [project, category, _] = rel.as_slice() else {
            bail!(
                "{}: a record goes in records/<project>/<category>/",
                path.display()
            );
        };
        let text =
            fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        out.push(
            parse_record(project, category, &text).with_context(|| path.display().to_string())?,
        );
    }
    Ok(out)
}

/// A record file's `key`, `importance` and body (the frontmatter is read
/// line by line: `name: value`, a value in double quotes being JSON).
fn parse_record(project: &str, category: &str, text: &str) -> Result<Record> {
    let rest = text
        .strip_prefix("---\n")
        .context("no frontmatter: the file must start with ---")?;
    let (front, body) = rest
        .split_once("\n---\n")
        .context("the frontmatter has no closing ---")?;
    let mut fields = HashMap::new();
    for line in front.lines() {
        if let Some((name, value)) = line.split_once(": ") {
            let value = match value.starts_with('"') {
                true => serde_json::from_str(value)
                    .with_context(|| format!("{name}: not a double-quoted string"))?,
                false => value.to_string(),
            };
            fields.insert(name.to_string(), value);
        }
    }
    let key = fields.remove("key").context("no key in the frontmatter")?;
    if fields.get("category").is_some_and(|c| c != category) {
        bail!("its category is not its folder's, {category}");
    }
    Ok(Record {
        project: project.to_string(),
        category: category.to_string(),
        key,
        importance: fields.remove("importance"),
        body: body.trim().to_string(),
    })
}

/// Every `.jsonl` under `<launcher>/<project>/`, in path order.
fn list_transcripts(root: &Path) -> Result<Vec<Transcript>> {
    let mut out = Vec::new();
    for (launcher, format) in LAUNCHERS {
        let base = root.join(launcher);
        if !base.is_dir() {
            continue;
        }
        for e in walkdir::WalkDir::new(&base).sort_by_file_name() {
            let e = e.with_context(|| format!("cannot list {}", base.display()))?;
            let path = e.path();
            if !e.file_type().is_file() || path.extension().is_none_or(|x| x != "jsonl") {
                continue;
            }
            let rel = path.strip_prefix(root)?.to_path_buf();
            let Some(project) = path.strip_prefix(&base)?.iter().next() else {
                continue;
            };
            out.push(Transcript {
                project: project.to_string_lossy().into_owned(),
                path: path.to_path_buf(),
                rel,
                format,
            });
        }
    }
    if out.is_empty() {
        bail!(
            "no transcripts under {} (claude-code/<project>/*.jsonl, codex/<project>/*.jsonl; see ../shared/data/README.md)",
            root.display()
        );
    }
    Ok(out)
}

/// Index the transcripts and add the records, unless the workspace
/// already has this set.
fn ensure_indexed(ws: &Workspace, child: &Child, set: &Set, reindex: bool) -> Result<()> {
    let signature = format!("{SIGNATURE} {}", set.digest);
    if !reindex && ws.is_indexed(DATASET, &signature) {
        eprintln!(
            "eval: reusing the paraphrase index in {}",
            ws.root().display()
        );
        return Ok(());
    }
    ws.unmark(DATASET);
    let t0 = Instant::now();
    let data = ws.data(DATASET);
    let mut projects: Vec<&str> = set.transcripts.iter().map(|t| t.project.as_str()).collect();
    projects.sort_unstable();
    projects.dedup();
    for t in &set.transcripts {
        let to = data.join(&t.project).join(&t.rel);
        fs::create_dir_all(to.parent().context("a copy has a folder")?)?;
        fs::copy(&t.path, &to).with_context(|| format!("cannot copy {}", t.path.display()))?;
    }
    // Records first: indexing then embeds them with the passages, when
    // a model is configured (the index's fill pass takes every row
    // without a vector).
    for r in &set.records {
        add_record(child, r)?;
    }
    let mut summaries = serde_json::Map::new();
    for p in &projects {
        let summary = child.recall.index(p, &data.join(p), "session", reindex)?;
        summaries.insert(p.to_string(), summary);
    }
    eprintln!(
        "eval: indexed {} transcripts into {} projects and added {} records in {:.1}s",
        set.transcripts.len(),
        projects.len(),
        set.records.len(),
        t0.elapsed().as_secs_f64()
    );
    ws.mark_indexed(DATASET, &signature, Value::Object(summaries))
}

/// How this set starts `recall` itself (it reads more of a hit than
/// [`Recall::query`] keeps): the runner's binary and home, this process's
/// environment but its `RECALL_HOME`, and `--semantic`'s environment as
/// the runner sets it.
struct Child<'a> {
    recall: &'a Recall,
    home: PathBuf,
    /// The model folder and whether hybrid is on (`--semantic`,
    /// `--no-hybrid`).
    semantic: Option<(PathBuf, bool)>,
}

impl<'a> Child<'a> {
    fn new(recall: &'a Recall, home: PathBuf, common: &Common) -> Result<Child<'a>> {
        let semantic = match &common.semantic {
            Some(dir) => Some((
                fs::canonicalize(dir)
                    .with_context(|| format!("no embedding model at {}", dir.display()))?,
                !common.no_hybrid,
            )),
            None => None,
        };
        Ok(Child {
            recall,
            home,
            semantic,
        })
    }

    /// `recall --home HOME --project PROJECT`.
    fn command(&self, project: &str) -> Command {
        let mut c = Command::new(self.recall.bin());
        c.arg("--home").arg(&self.home).args(["--project", project]);
        c.env_remove("RECALL_HOME").env("NO_COLOR", "1");
        if let Some((dir, hybrid)) = &self.semantic {
            c.env("RECALL_SEMANTIC_MODEL", dir)
                .env("RECALL_SEMANTIC_HYBRID", if *hybrid { "1" } else { "0" });
        }
        c
    }
}

/// `recall record add`, the body on stdin.
fn add_record(child: &Child, r: &Record) -> Result<()> {
    let mut c = child.command(&r.project);
    c.args(["record", "add", "--category", &r.category, "--key", &r.key]);
    if let Some(importance) = &r.importance {
        c.args(["--importance", importance]);
    }
    let mut child = c
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot run {}", child.recall.bin().display()))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(r.body.as_bytes())?;
    }
    let out = child.wait_with_output()?;
    if !out.status.success() {
        bail!(
            "recall record add {:?} failed ({}): {}",
            r.key,
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// Ask one question; its outcome and its hits as this set scores them.
fn ask(child: &Child, at: &str, q: &Question, limit: usize) -> (Outcome, Vec<Seen>) {
    let t0 = Instant::now();
    let result = (|| -> Result<Value> {
        let mut proc = child
            .command(&q.project)
            .args(["query", "--format", "json", "--no-salience"])
            .args(["--limit", &limit.to_string(), "--at", at])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot run {}", child.recall.bin().display()))?;
        if let Some(mut stdin) = proc.stdin.take() {
            stdin.write_all(q.question.as_bytes())?;
        }
        let out = proc.wait_with_output()?;
        // Exit code 1 means "no hits"; the JSON is still printed.
        if !matches!(out.status.code(), Some(0 | 1)) {
            bail!(
                "exit {}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        serde_json::from_slice(&out.stdout).context("the query output is not JSON")
    })();
    let wall_ms = t0.elapsed().as_secs_f64() * 1000.0;
    match result {
        Ok(doc) => {
            let seen = doc["hits"]
                .as_array()
                .map(|hits| hits.iter().map(seen_of).collect())
                .unwrap_or_default();
            let outcome = Outcome {
                hits: parse_hits(&doc),
                engine_ms: doc["timings_ms"]["total"].as_f64(),
                wall_ms,
                error: None,
            };
            (outcome, seen)
        }
        Err(e) => (
            Outcome {
                wall_ms,
                error: Some(format!("{e:#}")),
                ..Outcome::default()
            },
            vec![],
        ),
    }
}

/// One hit of the JSON output (hits come in rank order).
fn seen_of(v: &Value) -> Seen {
    let session = v["source"]["session_id"].as_str().map(root_session);
    Seen {
        kind: v["kind"].as_str().unwrap_or_default().to_string(),
        title: v["title"].as_str().unwrap_or_default().to_string(),
        session,
        text: squash(v["text"].as_str().unwrap_or_default()),
    }
}

/// A subagent or compaction file's session id is `<parent>/<agent>`.
fn root_session(id: &str) -> String {
    id.split('/').next().unwrap_or(id).to_string()
}

/// Whitespace collapsed to one space, lower-cased.
fn squash(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

fn is_gold(g: &Gold, s: &Seen) -> bool {
    match g {
        Gold::Record { record } => s.kind == "record" && s.title == *record,
        Gold::Passage { session, contains } => {
            s.session.as_deref() == Some(session.as_str()) && s.text.contains(&squash(contains))
        }
    }
}

/// The 1-based rank of the first gold hit.
fn rank_of(gold: &[Gold], hits: &[Seen]) -> Option<usize> {
    hits.iter()
        .position(|s| gold.iter().any(|g| is_gold(g, s)))
        .map(|i| i + 1)
}

/// A hit's short name in `--json`: the record's key or the session.
fn label(s: &Seen) -> String {
    match s.kind.as_str() {
        "record" => format!("record: {}", s.title),
        _ => format!("{}: {}", s.kind, s.session.as_deref().unwrap_or("?")),
    }
}

/// The floor's answers to every question.
struct FloorAnswers {
    answers: Vec<Vec<Seen>>,
    outcomes: Vec<Outcome>,
    /// Session golds whose string no floor row of their session holds.
    unreachable: usize,
}

/// One FTS5 table per project: its records and its messages.
fn floor_answers(set: &Set, limit: usize) -> Result<FloorAnswers> {
    let mut rows: HashMap<&str, Vec<Seen>> = HashMap::new();
    for r in &set.records {
        rows.entry(&r.project).or_default().push(Seen {
            kind: "record".into(),
            title: r.key.clone(),
            session: None,
            text: format!("{}\n{}", r.key, r.body),
        });
    }
    for t in &set.transcripts {
        let parsed = parse_file(&t.path, t.format, &IngestOptions::default())
            .with_context(|| format!("cannot read {}", t.path.display()))?;
        let session = parsed.meta.parent_id.unwrap_or(parsed.meta.id);
        let list = rows.entry(&t.project).or_default();
        list.extend(parsed.messages.into_iter().map(|m| Seen {
            kind: "session".into(),
            title: String::new(),
            session: Some(session.clone()),
            text: m.text,
        }));
    }
    let mut floors = HashMap::new();
    for (project, list) in &rows {
        let table = list.iter().enumerate().map(|(i, s)| Row {
            key: i.to_string(),
            session: s.session.clone(),
            body: s.text.clone(),
        });
        floors.insert(*project, Floor::with_sessions(table)?);
    }
    let squashed: HashMap<&str, Vec<Seen>> = rows
        .iter()
        .map(|(p, list)| {
            let list = list
                .iter()
                .map(|s| Seen {
                    text: squash(&s.text),
                    ..s.clone()
                })
                .collect();
            (*p, list)
        })
        .collect();
    let mut out = FloorAnswers {
        answers: Vec::new(),
        outcomes: Vec::new(),
        unreachable: 0,
    };
    for q in &set.questions {
        let list = squashed
            .get(q.project.as_str())
            .map_or(&[][..], Vec::as_slice);
        out.unreachable += q
            .gold
            .iter()
            .filter(|g| matches!(g, Gold::Passage { .. }) && !list.iter().any(|s| is_gold(g, s)))
            .count();
        let outcome = match floors.get(q.project.as_str()) {
            Some(f) => f.search(&q.question, Some(limit)),
            None => Outcome::default(),
        };
        let seen = outcome
            .hits
            .iter()
            .filter_map(|h| list.get(h.id.parse::<usize>().ok()?).cloned())
            .collect();
        out.answers.push(seen);
        out.outcomes.push(outcome);
    }
    Ok(out)
}

/// One question's result, for `--json`.
#[derive(Serialize)]
struct Scored {
    id: String,
    project: String,
    question: String,
    gold: Vec<Gold>,
    /// The rank of the first gold hit (none in the hits asked).
    ours: Option<usize>,
    /// The first 5 hits.
    top: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    floor: Option<Option<usize>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

type Metric = fn(Option<usize>) -> f64;
/// Which questions a row of the table takes.
type Keep = fn(&Scored) -> bool;

const METRICS: [(&str, Metric); 3] = [
    ("**top-5 hit rate**", |r| {
        f64::from(u8::from(r.is_some_and(|r| r <= 5)))
    }),
    ("top-1 hit rate", |r| f64::from(u8::from(r == Some(1)))),
    ("MRR", |r| r.map_or(0.0, |r| 1.0 / r as f64)),
];

fn report(results: &[Scored], ours: &[Outcome], floor: Option<&[Outcome]>, wall_s: f64) -> Run {
    let mut t = Table::default();
    let mut headlines = Vec::new();
    let floor_of = |r: &Scored| r.floor;
    for (i, (name, metric)) in METRICS.iter().enumerate() {
        let o = mean(results.iter().map(|r| metric(r.ours)));
        let f: Option<Vec<f64>> = results.iter().map(|r| floor_of(r).map(metric)).collect();
        let f = f.map(mean);
        let target = if i == 0 { "≥ 0.600 (hybrid)" } else { "" };
        t.row(name, f3(o), opt3(f), target);
        headlines.push(Headline {
            set: "paraphrase".into(),
            metric: name.trim_matches('*').into(),
            ours: o,
            floor: f,
        });
    }
    let groups: [(&str, Keep); 2] = [
        ("record gold", |r| {
            matches!(r.gold.first(), Some(Gold::Record { .. }))
        }),
        ("passage gold", |r| {
            matches!(r.gold.first(), Some(Gold::Passage { .. }))
        }),
    ];
    let mut projects: Vec<&str> = results.iter().map(|r| r.project.as_str()).collect();
    projects.sort_unstable();
    projects.dedup();
    let top5 = METRICS[0].1;
    let mut row = |name: String, part: Vec<&Scored>| {
        let o = mean(part.iter().map(|r| top5(r.ours)));
        let f: Option<Vec<f64>> = part.iter().map(|r| r.floor.map(top5)).collect();
        t.row(&name, f3(o), opt3(f.map(mean)), "");
    };
    for (name, keep) in groups {
        let part: Vec<&Scored> = results.iter().filter(|r| keep(r)).collect();
        row(format!("top-5, {name} ({})", part.len()), part);
    }
    for p in projects {
        let part: Vec<&Scored> = results.iter().filter(|r| r.project == p).collect();
        row(format!("top-5, {p} ({})", part.len()), part);
    }
    t.failures_and_latency(ours, floor, wall_s);
    Run {
        title: format!(
            "paraphrase: {} questions in other words than their gold",
            results.len()
        ),
        table: t,
        headlines,
        results: Value::Null,
        summary: json!(null),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn passage(session: &str, text: &str) -> Seen {
        Seen {
            kind: "session".into(),
            session: Some(session.into()),
            text: squash(text),
            ..Seen::default()
        }
    }

    #[test]
    fn a_passage_is_gold_in_its_session_and_subagents_only() {
        let gold = vec![Gold::Passage {
            session: "s1".into(),
            contains: "Default  port is".into(),
        }];
        let hits = [
            passage("s2", "default port is 1100"),
            Seen {
                session: Some(root_session("s1/agent-x")),
                ..passage("", "The default\nPORT is 1100")
            },
        ];
        assert_eq!(rank_of(&gold, &hits), Some(2));
        assert_eq!(rank_of(&gold, &hits[..1]), None);
    }

    #[test]
    fn a_record_is_gold_by_its_key() -> Result<()> {
        let r = parse_record(
            "p",
            "decisions",
            "---\nid: x\nkey: \"a: key\"\ncategory: decisions\n---\n\nBody.\n",
        )?;
        assert_eq!((r.key.as_str(), r.body.as_str()), ("a: key", "Body."));
        let hit = Seen {
            kind: "record".into(),
            title: "a: key".into(),
            ..Seen::default()
        };
        let gold = [Gold::Record { record: r.key }];
        assert_eq!(rank_of(&gold, &[hit]), Some(1));
        Ok(())
    }
}
