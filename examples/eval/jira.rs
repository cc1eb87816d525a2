//! `jira-dups`: a new bug ticket asks for the earlier tickets its
//! developers marked as its duplicates. See the crate doc for the rules.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context as _, Result};
use serde::Serialize;
use serde_json::{json, Value};

use crate::args::Common;
use crate::data::{jsonl, load_qrels, str_field};
use crate::distract::{Doc, Draw, Scale, Span};
use crate::floor::Floor;
use crate::metrics::{distinct, hit_at, mean, ndcg_graded, reciprocal_rank};
use crate::report::{f3, opt3, Headline, Run, Table};
use crate::runner::{par_map, Hit, Outcome, Recall};
use crate::workspace::Workspace;

const PROJECT: &str = "jira-dups";
/// Bumped whenever the converted files change.
const SIGNATURE: &str = "jira-dups v1";
/// Hits asked per query: parts of one ticket collapse, and later tickets
/// are dropped, so more than the 10 scored.
const DEFAULT_LIMIT: usize = 100;
/// Distinct past tickets kept per ranking (MRR's depth).
const DEPTH: usize = 100;

/// One corpus ticket.
pub struct Ticket {
    id: String,
    title: String,
    text: String,
    components: Vec<String>,
    /// Seconds since the epoch.
    created: i64,
}

struct Query {
    id: String,
    text: String,
    created: i64,
    gold: Vec<String>,
}

/// `2013-10-17T22:13:40.000+0000`, JIRA's form, as seconds.
fn parse_created(s: &str) -> Option<i64> {
    let t = jiff::fmt::strtime::parse("%Y-%m-%dT%H:%M:%S%.f%z", s)
        .ok()?
        .to_timestamp()
        .ok()?;
    Some(t.as_second())
}

/// The tickets of `corpus.jsonl.gz` that have an id and a creation time.
pub fn load_corpus(dir: &Path) -> Result<Vec<Ticket>> {
    let rows = jsonl(&dir.join("corpus.jsonl.gz"))?;
    Ok(rows
        .iter()
        .filter_map(|v| {
            Some(Ticket {
                id: str_field(v, "id"),
                title: str_field(v, "title"),
                text: str_field(v, "text"),
                components: v["components"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default(),
                created: parse_created(v["created"].as_str()?)?,
            })
        })
        .filter(|t| !t.id.is_empty())
        .collect())
}

/// The queries with gold that do not quote their gold's key.
fn load_queries(dir: &Path, limit: Option<usize>) -> Result<(Vec<Query>, usize)> {
    let mut qrels = load_qrels(&dir.join("qrels.tsv"))?;
    let rows = jsonl(&dir.join("queries.jsonl"))?;
    let mut skipped = 0;
    let mut out = Vec::new();
    for v in &rows {
        if v["mentions_gold_key"].as_bool() == Some(true) {
            skipped += 1;
            continue;
        }
        let id = str_field(v, "id");
        let Some(rels) = qrels.remove(&id) else {
            continue;
        };
        let Some(created) = v["created"].as_str().and_then(parse_created) else {
            continue;
        };
        let mut gold: Vec<String> = rels.into_keys().collect();
        gold.sort();
        out.push(Query {
            id,
            text: str_field(v, "text"),
            created,
            gold,
        });
    }
    out.truncate(limit.unwrap_or(usize::MAX));
    Ok((out, skipped))
}

/// A Markdown ticket; frontmatter strings are JSON-quoted (valid YAML).
/// The components are its labels.
fn markdown(t: &Ticket) -> String {
    ticket_markdown(&t.id, &t.title, Some(t.created), &t.components, &t.text)
}

/// A Markdown ticket (`created` in seconds, left out when `None`), as this
/// set writes them; the scale curve's distractor tickets are written so too.
pub fn ticket_markdown(
    id: &str,
    title: &str,
    created: Option<i64>,
    labels: &[String],
    text: &str,
) -> String {
    let created = created
        .and_then(|c| jiff::Timestamp::from_second(c).ok())
        .map(|c| format!("created: {c}\n"))
        .unwrap_or_default();
    format!(
        "---\nid: {}\ntitle: {}\n{created}labels: {}\n---\n\n{text}\n",
        json!(id),
        json!(title),
        json!(labels),
    )
}

/// The tickets as distractors for the other sets' scale curves.
pub fn distractors(corpus: &[Ticket]) -> Vec<Doc> {
    corpus
        .iter()
        .map(|t| {
            Doc::ticket(
                t.id.clone(),
                t.title.clone(),
                t.text.clone(),
                t.components.clone(),
            )
        })
        .collect()
}

/// Characters of the corpus's text (titles and descriptions): its size on
/// the scale curve.
fn chars(corpus: &[Ticket]) -> usize {
    corpus
        .iter()
        .map(|t| t.title.chars().count() + t.text.chars().count())
        .sum()
}

/// Convert and index the corpus into `project`, with `draw`'s distractors
/// (none when the set is alone), unless the workspace already has them.
fn ensure_indexed(
    ws: &Workspace,
    recall: &Recall,
    corpus: &[Ticket],
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
    let data = ws.data("jira-dups");
    fs::create_dir_all(&data).with_context(|| format!("cannot create {}", data.display()))?;
    for t in corpus {
        let path = data.join(format!("{}.md", t.id));
        fs::write(&path, markdown(t))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let t0 = Instant::now();
    let mut summary = json!({ "tickets": recall.index(project, &data, "ticket", reindex)? });
    if !draw.is_empty() {
        let dir = ws.data("scale").join(project);
        summary["distractors"] = draw.index(&dir, recall, project, reindex)?;
    }
    eprintln!(
        "eval: indexed {} tickets ({} distractor chars) into {project} in {:.1}s",
        corpus.len(),
        draw.chars(),
        t0.elapsed().as_secs_f64()
    );
    ws.mark_indexed(project, &signature, summary)
}

/// The item a hit counts as: its ticket (`source.ticket_id`), else its
/// session (a distractor's), else the hit id before `#`.
fn ticket_of(h: &Hit) -> Option<String> {
    Some(match (&h.ticket_id, &h.session_id) {
        (Some(t), _) | (None, Some(t)) => t.clone(),
        (None, None) => h.id.split('#').next().unwrap_or_default().to_string(),
    })
}

/// How one ranking did on one query.
#[derive(Serialize)]
struct Scored {
    ndcg10: f64,
    recall10: f64,
    mrr: f64,
    tickets: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// Score the distinct past tickets of `o`: the query's own ticket and every
/// ticket created at or after it are dropped.
fn score(o: &Outcome, q: &Query, created: &HashMap<&str, i64>) -> Scored {
    let past =
        |id: &String| id != &q.id && created.get(id.as_str()).is_some_and(|&c| c < q.created);
    let all = distinct(&o.hits, ticket_of, usize::MAX);
    let ranked: Vec<String> = all.into_iter().filter(past).take(DEPTH).collect();
    let gold: HashSet<&str> = q.gold.iter().map(String::as_str).collect();
    let rels: HashMap<String, i64> = q.gold.iter().map(|g| (g.clone(), 1)).collect();
    Scored {
        ndcg10: ndcg_graded(&ranked, &rels, 10),
        recall10: f64::from(u8::from(hit_at(&ranked, &gold, 10))),
        mrr: reciprocal_rank(&ranked, &gold),
        tickets: ranked.into_iter().take(10).collect(),
        error: o.error.clone(),
    }
}

#[derive(Serialize)]
struct QueryResult {
    id: String,
    gold: Vec<String>,
    ours: Scored,
    #[serde(skip_serializing_if = "Option::is_none")]
    floor: Option<Scored>,
}

/// The `--until` of a query: one second before its ticket was filed, so
/// the engine itself asks for past tickets only.
fn until(q: &Query) -> Vec<String> {
    let t = jiff::Timestamp::from_second(q.created - 1).expect("a JIRA date is in range");
    vec!["--until".into(), t.to_string()]
}

/// Run `jira-dups` from `dir` in `ws` with `recall`.
pub fn run(dir: &Path, common: &Common, ws: &Workspace, recall: &Recall) -> Result<Run> {
    run_loaded(&load_corpus(dir)?, dir, &Scale::alone(), common, ws, recall)
}

/// Run `jira-dups` on its loaded corpus (the queries are read from `dir`)
/// at the size `scale` says. Distractors are dated over the corpus's time
/// span, and every one dated before a query competes in its ranking as a
/// ticket that is not gold (a session counts as one item).
pub fn run_loaded(
    corpus: &[Ticket],
    dir: &Path,
    scale: &Scale,
    common: &Common,
    ws: &Workspace,
    recall: &Recall,
) -> Result<Run> {
    let (queries, skipped) = load_queries(dir, common.limit_questions)?;
    let project = scale.project(PROJECT);
    let span = Span::of(corpus.iter().map(|t| t.created));
    let draw = scale.draw(&project, chars(corpus), span);
    ensure_indexed(ws, recall, corpus, (&project, &draw), common.reindex)?;
    let mut created: HashMap<&str, i64> =
        corpus.iter().map(|t| (t.id.as_str(), t.created)).collect();
    let times: Vec<(String, i64)> = draw.times().collect();
    created.extend(times.iter().map(|(id, at)| (id.as_str(), *at)));
    let limit = common.limit.unwrap_or(DEFAULT_LIMIT);
    let t0 = Instant::now();
    let ours = par_map(&queries, common.workers, |q| {
        recall.query_with(&project, &q.text, limit, &until(q))
    });
    let wall_s = t0.elapsed().as_secs_f64();
    let floor = if common.no_floor {
        None
    } else {
        let rows = corpus
            .iter()
            .map(|t| (t.id.clone(), format!("{} {}", t.title, t.text)));
        // A distractor session's messages are rows of one item.
        let extra = draw.rows().map(|r| (r.session.unwrap_or(r.key), r.body));
        let t0 = Instant::now();
        let floor = Floor::new(rows.chain(extra))?;
        let built_s = t0.elapsed().as_secs_f64();
        let out: Vec<Outcome> = queries
            .iter()
            .map(|q| {
                let mut seen = HashSet::new();
                let past = |id: &str| {
                    id != q.id
                        && created.get(id).is_some_and(|&c| c < q.created)
                        && seen.insert(id.to_string())
                };
                floor.search_keys(&q.text, DEPTH, past)
            })
            .collect();
        eprintln!(
            "eval: jira-dups floor built in {built_s:.1}s, queried in {:.1}s",
            t0.elapsed().as_secs_f64() - built_s
        );
        Some(out)
    };
    let results: Vec<QueryResult> = queries
        .iter()
        .enumerate()
        .map(|(i, q)| QueryResult {
            id: q.id.clone(),
            gold: q.gold.clone(),
            ours: score(&ours[i], q, &created),
            floor: floor.as_ref().map(|f| score(&f[i], q, &created)),
        })
        .collect();
    let mut run = report(&results, &ours, floor.as_deref(), skipped, wall_s);
    run.results = serde_json::to_value(&results)?;
    Ok(run)
}

type Metric = fn(&Scored) -> f64;

fn report(
    results: &[QueryResult],
    ours: &[Outcome],
    floor: Option<&[Outcome]>,
    skipped: usize,
    wall_s: f64,
) -> Run {
    let mut t = Table::default();
    let mut headlines = Vec::new();
    let metrics: [(&str, &str, Metric); 3] = [
        ("**nDCG@10**", "", |s| s.ndcg10),
        ("recall@10 (any gold)", "", |s| s.recall10),
        ("MRR", "", |s| s.mrr),
    ];
    for (name, target, metric) in metrics {
        let o = mean(results.iter().map(|r| metric(&r.ours)));
        let f: Option<Vec<f64>> = results
            .iter()
            .map(|r| r.floor.as_ref().map(metric))
            .collect();
        let f = f.map(mean);
        t.row(name, f3(o), opt3(f), target);
        headlines.push(Headline {
            set: "jira-dups".into(),
            metric: name.trim_matches('*').into(),
            ours: o,
            floor: f,
        });
    }
    t.failures_and_latency(ours, floor, wall_s);
    Run {
        title: format!(
            "jira-dups: {} queries, past tickets only ({skipped} that quote their gold's key skipped)",
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
    fn jira_dates_parse() {
        assert_eq!(
            parse_created("2013-10-17T22:13:40.000+0000"),
            Some(1_382_048_020)
        );
        assert_eq!(parse_created("yesterday"), None);
    }

    #[test]
    fn only_past_tickets_are_scored() {
        let hit = |t: &str| Hit {
            id: format!("{t}#0"),
            ticket_id: Some(t.into()),
            ..Hit::default()
        };
        let q = Query {
            id: "Q".into(),
            text: String::new(),
            created: 100,
            gold: vec!["G".into()],
        };
        let created = HashMap::from([("Q", 100), ("LATER", 100), ("G", 50), ("X", 10)]);
        let o = Outcome {
            hits: vec![hit("Q"), hit("LATER"), hit("X"), hit("G"), hit("X")],
            ..Outcome::default()
        };
        let s = score(&o, &q, &created);
        assert_eq!(s.tickets, ["X", "G"]);
        assert_eq!(s.mrr, 0.5);
        assert_eq!(s.recall10, 1.0);
    }

    /// On the scale curve a distractor session is one item, ranked like a
    /// ticket that is not gold, when it is dated before the query.
    #[test]
    fn a_distractor_session_is_one_item() {
        let session = |s: &str| Hit {
            id: format!("{s}#3"),
            session_id: Some(s.into()),
            ..Hit::default()
        };
        let ticket = |t: &str| Hit {
            ticket_id: Some(t.into()),
            ..Hit::default()
        };
        let q = Query {
            id: "Q".into(),
            text: String::new(),
            created: 100,
            gold: vec!["G".into()],
        };
        let created = HashMap::from([("x:beam:s1", 10), ("x:beam:late", 200), ("G", 50)]);
        let hits = vec![
            session("x:beam:s1"),
            session("x:beam:late"),
            session("x:beam:s1"),
            ticket("G"),
        ];
        let s = score(
            &Outcome {
                hits,
                ..Outcome::default()
            },
            &q,
            &created,
        );
        assert_eq!(s.tickets, ["x:beam:s1", "G"]);
        assert_eq!(s.mrr, 0.5);
    }
}
