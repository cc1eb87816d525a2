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

struct Ticket {
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

fn load_corpus(dir: &Path) -> Result<Vec<Ticket>> {
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
    let created = jiff::Timestamp::from_second(t.created)
        .map(|c| c.to_string())
        .unwrap_or_default();
    format!(
        "---\nid: {}\ntitle: {}\ncreated: {created}\nlabels: {}\n---\n\n{}\n",
        json!(t.id),
        json!(t.title),
        json!(t.components),
        t.text
    )
}

fn ensure_indexed(ws: &Workspace, recall: &Recall, corpus: &[Ticket], reindex: bool) -> Result<()> {
    if !reindex && ws.is_indexed("jira-dups", SIGNATURE) {
        eprintln!(
            "eval: reusing the jira-dups index in {}",
            ws.root().display()
        );
        return Ok(());
    }
    ws.unmark("jira-dups");
    let data = ws.data("jira-dups");
    fs::create_dir_all(&data).with_context(|| format!("cannot create {}", data.display()))?;
    for t in corpus {
        let path = data.join(format!("{}.md", t.id));
        fs::write(&path, markdown(t))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let t0 = Instant::now();
    let summary = recall.index(PROJECT, &data, "ticket", reindex)?;
    eprintln!(
        "eval: indexed {} tickets in {:.1}s",
        corpus.len(),
        t0.elapsed().as_secs_f64()
    );
    ws.mark_indexed("jira-dups", SIGNATURE, summary)
}

/// The ticket of a hit: `source.ticket_id`, else the hit id before `#`.
fn ticket_of(h: &Hit) -> Option<String> {
    Some(match &h.ticket_id {
        Some(t) => t.clone(),
        None => h.id.split('#').next().unwrap_or_default().to_string(),
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
    let corpus = load_corpus(dir)?;
    let (queries, skipped) = load_queries(dir, common.limit_questions)?;
    ensure_indexed(ws, recall, &corpus, common.reindex)?;
    let created: HashMap<&str, i64> = corpus.iter().map(|t| (t.id.as_str(), t.created)).collect();
    let limit = common.limit.unwrap_or(DEFAULT_LIMIT);
    let t0 = Instant::now();
    let ours = par_map(&queries, common.workers, |q| {
        recall.query_with(PROJECT, &q.text, limit, &until(q))
    });
    let wall_s = t0.elapsed().as_secs_f64();
    let floor = if common.no_floor {
        None
    } else {
        let rows = corpus
            .iter()
            .map(|t| (t.id.clone(), format!("{} {}", t.title, t.text)));
        let floor = Floor::new(rows)?;
        eprintln!("eval: jira-dups floor");
        Some(
            queries
                .iter()
                .map(|q| {
                    let past =
                        |id: &str| id != q.id && created.get(id).is_some_and(|&c| c < q.created);
                    floor.search_keys(&q.text, DEPTH, past)
                })
                .collect::<Vec<_>>(),
        )
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
}
