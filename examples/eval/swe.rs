//! `swe-sessions`: an issue (its full text, or its title alone) asks for
//! the one coding-agent session that worked on it. See the crate doc for
//! the rules.

use std::collections::HashSet;
use std::fs;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context as _, Result};
use serde::Serialize;
use serde_json::{json, Value};

use crate::args::Common;
use crate::data::{jsonl, load_qrels, str_field};
use crate::distract::{Doc, Draw, Scale};
use crate::floor::{Floor, Row};
use crate::metrics::{distinct, hit_at, mean, reciprocal_rank};
use crate::report::{f3, opt3, Headline, Run, Table};
use crate::runner::{par_map, Hit, Outcome, Recall};
use crate::workspace::Workspace;

const PROJECT: &str = "swe-sessions";
/// Bumped whenever the converted files change.
const SIGNATURE: &str = "swe-sessions v1";
const DEFAULT_LIMIT: usize = 50;
/// Floor rows taken per query before they collapse into sessions.
const FLOOR_ROWS: usize = 2000;
/// Distinct sessions kept per ranking (MRR's depth).
const DEPTH: usize = 50;

/// The two query forms.
#[derive(Clone, Copy)]
pub enum Form {
    /// The full text (`queries.jsonl`).
    Full,
    /// Its first line only (`queries_title.jsonl`).
    Title,
}

impl Form {
    fn file(self) -> &'static str {
        match self {
            Form::Full => "queries.jsonl",
            Form::Title => "queries_title.jsonl",
        }
    }

    /// Its key in `--json` output.
    pub fn key(self) -> &'static str {
        match self {
            Form::Full => "swe_full",
            Form::Title => "swe_titles",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Form::Full => "swe-sessions (full issues)",
            Form::Title => "swe-sessions (titles)",
        }
    }
}

struct Query {
    id: String,
    text: String,
    gold: String,
}

/// One line of `sessions.jsonl.gz`, already in the neutral document form.
pub struct Session {
    id: String,
    line: Value,
}

/// The sessions of `sessions.jsonl.gz` that have an id.
pub fn load_sessions(dir: &Path) -> Result<Vec<Session>> {
    Ok(jsonl(&dir.join("sessions.jsonl.gz"))?
        .into_iter()
        .map(|v| Session {
            id: v["session"]["id"].as_str().unwrap_or_default().to_string(),
            line: v,
        })
        .filter(|s| !s.id.is_empty())
        .collect())
}

fn load_queries(dir: &Path, form: Form, limit: Option<usize>) -> Result<Vec<Query>> {
    let mut qrels = load_qrels(&dir.join("qrels.tsv"))?;
    let mut out: Vec<Query> = jsonl(&dir.join(form.file()))?
        .iter()
        .filter_map(|v| {
            let id = str_field(v, "id");
            let gold = qrels.remove(&id)?.into_keys().next()?;
            let text = str_field(v, "text");
            // A full issue is its title line, then its body (the set's
            // README; `queries_title.jsonl` is that first line): asked as
            // a ticket is written, a title, a blank line, the body.
            let text = match (form, text.split_once('\n')) {
                (Form::Full, Some((title, body))) => format!("{title}\n\n{body}"),
                _ => text,
            };
            Some(Query { text, id, gold })
        })
        .collect();
    out.truncate(limit.unwrap_or(usize::MAX));
    Ok(out)
}

/// The messages of a session line.
fn messages(s: &Session) -> &[Value] {
    s.line["messages"].as_array().map_or(&[], Vec::as_slice)
}

/// The sessions as distractors for the other sets' scale curves.
pub fn distractors(sessions: &[Session]) -> Vec<Doc> {
    sessions
        .iter()
        .map(|s| {
            Doc::session(
                s.id.clone(),
                s.line["session"].clone(),
                messages(s).to_vec(),
            )
        })
        .collect()
}

/// Characters of the sessions' messages: the set's size on the scale curve.
fn chars(sessions: &[Session]) -> usize {
    let content = |m: &Value| m["content"].as_str().map_or(0, |c| c.chars().count());
    sessions
        .iter()
        .flat_map(|s| messages(s).iter().map(content))
        .sum()
}

/// Convert and index the sessions into `project`, with `draw`'s
/// distractors, unless the workspace already has them.
fn ensure_indexed(
    ws: &Workspace,
    recall: &Recall,
    sessions: &[Session],
    (project, draw): (&str, &Draw),
    reindex: bool,
) -> Result<()> {
    let signature = match draw.is_empty() {
        true => SIGNATURE.to_string(),
        false => format!("{SIGNATURE} distractors {}", draw.digest()),
    };
    if !reindex && ws.is_indexed(project, &signature) {
        eprintln!(
            "eval: reusing the {project} index in {}",
            ws.root().display()
        );
        return Ok(());
    }
    ws.unmark(project);
    let data = ws.data("swe-sessions");
    fs::create_dir_all(&data).with_context(|| format!("cannot create {}", data.display()))?;
    for s in sessions {
        let path = data.join(format!("{}.json", s.id));
        fs::write(&path, s.line.to_string())
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let t0 = Instant::now();
    let mut summary = json!({ "sessions": recall.index(project, &data, "session", reindex)? });
    if !draw.is_empty() {
        let dir = ws.data("scale").join(project);
        summary["distractors"] = draw.index(&dir, recall, project, reindex)?;
    }
    eprintln!(
        "eval: indexed {} sessions ({} distractor chars) into {project} in {:.1}s",
        sessions.len(),
        draw.chars(),
        t0.elapsed().as_secs_f64()
    );
    ws.mark_indexed(project, &signature, summary)
}

#[derive(Serialize)]
struct Scored {
    hit1: f64,
    hit5: f64,
    mrr: f64,
    sessions: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// Distinct sessions in rank order, each ranked by its best hit (a
/// distractor ticket counts as one more item).
fn score(o: &Outcome, gold: &str) -> Scored {
    let item = |h: &Hit| h.session_id.clone().or_else(|| h.ticket_id.clone());
    let ranked = distinct(&o.hits, item, DEPTH);
    let gold = HashSet::from([gold]);
    Scored {
        hit1: f64::from(u8::from(hit_at(&ranked, &gold, 1))),
        hit5: f64::from(u8::from(hit_at(&ranked, &gold, 5))),
        mrr: reciprocal_rank(&ranked, &gold),
        sessions: ranked.into_iter().take(5).collect(),
        error: o.error.clone(),
    }
}

#[derive(Serialize)]
struct QueryResult {
    id: String,
    gold: String,
    ours: Scored,
    #[serde(skip_serializing_if = "Option::is_none")]
    floor: Option<Scored>,
}

/// The floor: one row per message, its session named; then the
/// distractors' rows (a ticket's hit is an item of its own: its key).
fn floor_of(sessions: &[Session], draw: &Draw) -> Result<Floor> {
    let rows = sessions.iter().flat_map(|s| {
        messages(s).iter().map(|m| Row {
            key: str_field(m, "id"),
            session: Some(s.id.clone()),
            body: str_field(m, "content"),
        })
    });
    Floor::with_sessions(rows.chain(draw.rows()))
}

/// Run `swe-sessions` from `dir` in `ws` with `recall`, once per form in
/// `forms` (the index and the floor are shared).
pub fn run(
    dir: &Path,
    forms: &[Form],
    common: &Common,
    ws: &Workspace,
    recall: &Recall,
) -> Result<Vec<Run>> {
    let sessions = load_sessions(dir)?;
    run_loaded(&sessions, dir, forms, &Scale::alone(), common, ws, recall)
}

/// Run `swe-sessions` on its loaded sessions (the queries are read from
/// `dir`) at the size `scale` says; the sessions are undated, and so are
/// their distractors.
pub fn run_loaded(
    sessions: &[Session],
    dir: &Path,
    forms: &[Form],
    scale: &Scale,
    common: &Common,
    ws: &Workspace,
    recall: &Recall,
) -> Result<Vec<Run>> {
    let project = scale.project(PROJECT);
    let draw = scale.draw(&project, chars(sessions), None);
    ensure_indexed(ws, recall, sessions, (&project, &draw), common.reindex)?;
    let floor = match common.no_floor {
        true => None,
        false => Some(floor_of(sessions, &draw)?),
    };
    let limit = common.limit.unwrap_or(DEFAULT_LIMIT);
    let mut runs = Vec::new();
    for &form in forms {
        let queries = load_queries(dir, form, common.limit_questions)?;
        let t0 = Instant::now();
        let ours = par_map(&queries, common.workers, |q| {
            recall.query(&project, &q.text, limit)
        });
        let wall_s = t0.elapsed().as_secs_f64();
        let floor_out: Option<Vec<Outcome>> = floor.as_ref().map(|f| {
            queries
                .iter()
                .map(|q| f.search(&q.text, Some(FLOOR_ROWS)))
                .collect()
        });
        let results: Vec<QueryResult> = queries
            .iter()
            .enumerate()
            .map(|(i, q)| QueryResult {
                id: q.id.clone(),
                gold: q.gold.clone(),
                ours: score(&ours[i], &q.gold),
                floor: floor_out.as_ref().map(|f| score(&f[i], &q.gold)),
            })
            .collect();
        let mut run = report(form, &results, &ours, floor_out.as_deref(), wall_s);
        run.results = serde_json::to_value(&results)?;
        runs.push(run);
    }
    Ok(runs)
}

type Metric = fn(&Scored) -> f64;

fn report(
    form: Form,
    results: &[QueryResult],
    ours: &[Outcome],
    floor: Option<&[Outcome]>,
    wall_s: f64,
) -> Run {
    let mut t = Table::default();
    let mut headlines = Vec::new();
    let metrics: [(&str, Metric); 3] = [
        ("**hit@1**", |s| s.hit1),
        ("hit@5", |s| s.hit5),
        ("MRR", |s| s.mrr),
    ];
    for (name, metric) in metrics {
        let o = mean(results.iter().map(|r| metric(&r.ours)));
        let f: Option<Vec<f64>> = results
            .iter()
            .map(|r| r.floor.as_ref().map(metric))
            .collect();
        let f = f.map(mean);
        t.row(name, f3(o), opt3(f), "");
        headlines.push(Headline {
            set: form.name().into(),
            metric: name.trim_matches('*').into(),
            ours: o,
            floor: f,
        });
    }
    t.failures_and_latency(ours, floor, wall_s);
    Run {
        title: format!(
            "{}: {} queries, distinct sessions",
            form.name(),
            results.len()
        ),
        table: t,
        headlines,
        results: Value::Null,
        summary: Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_rank_by_their_best_hit() {
        let hit = |s: &str| Hit {
            session_id: Some(s.into()),
            ..Hit::default()
        };
        let o = Outcome {
            hits: vec![hit("a"), hit("a"), hit("b"), hit("g")],
            ..Outcome::default()
        };
        let s = score(&o, "g");
        assert_eq!(s.sessions, ["a", "b", "g"]);
        assert_eq!((s.hit1, s.hit5), (0.0, 1.0));
        assert!((s.mrr - 1.0 / 3.0).abs() < 1e-12);
    }

    /// On the scale curve a distractor ticket is one more item.
    #[test]
    fn a_distractor_ticket_is_one_item() {
        let ticket = Hit {
            ticket_id: Some("x:jira:HDFS-1".into()),
            ..Hit::default()
        };
        let gold = Hit {
            session_id: Some("g".into()),
            ..Hit::default()
        };
        let o = Outcome {
            hits: vec![ticket.clone(), ticket, gold],
            ..Outcome::default()
        };
        let s = score(&o, "g");
        assert_eq!(s.sessions, ["x:jira:HDFS-1", "g"]);
        assert_eq!(s.hit1, 0.0);
    }
}
