//! BEIR (SciFact): docs as Markdown tickets, test queries, nDCG@10 and
//! recall@100. See the crate doc for the rules.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::Write as _;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context as _, Result};
use serde::Serialize;
use serde_json::{json, Value};

use crate::args::Common;
use crate::data::{jsonl, load_qrels, str_field, Qrels};
use crate::distract;
use crate::floor::Floor;
use crate::metrics::{mean, ndcg_graded, ratio};
use crate::report::{f3, opt3, Headline, Run, Table};
use crate::runner::{par_map, Hit, Outcome, Recall};
use crate::workspace::Workspace;

const PROJECT: &str = "beir-scifact";
const DEFAULT_LIMIT: usize = 100;
/// Distinct docs kept per ranking.
const DEPTH: usize = 100;

/// One corpus document.
pub struct Doc {
    id: String,
    title: String,
    text: String,
}

/// The documents of `corpus.jsonl` that have an id.
pub fn load_corpus(dir: &Path) -> Result<Vec<Doc>> {
    let rows = jsonl(&dir.join("corpus.jsonl"))?;
    Ok(rows
        .iter()
        .map(|v| Doc {
            id: str_field(v, "_id"),
            title: str_field(v, "title"),
            text: str_field(v, "text"),
        })
        .filter(|d| !d.id.is_empty())
        .collect())
}

/// The documents as distractor tickets for the other sets' scale curves.
pub fn distractors(docs: &[Doc]) -> Vec<distract::Doc> {
    docs.iter()
        .map(|d| distract::Doc::ticket(d.id.clone(), d.title.clone(), d.text.clone(), vec![]))
        .collect()
}

fn load_queries(dir: &Path) -> Result<HashMap<String, String>> {
    let rows = jsonl(&dir.join("queries.jsonl"))?;
    Ok(rows
        .iter()
        .map(|v| (str_field(v, "_id"), str_field(v, "text")))
        .collect())
}

/// A Markdown ticket; frontmatter strings are JSON-quoted (valid YAML).
fn ticket(doc: &Doc) -> String {
    let mut out = format!("---\nid: {}\n", json!(doc.id));
    if !doc.title.trim().is_empty() {
        out.push_str(&format!("title: {}\n", json!(doc.title)));
    }
    out.push_str("---\n\n");
    out.push_str(&doc.text);
    out.push('\n');
    out
}

fn write_tickets(docs: &[Doc], dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for (i, doc) in docs.iter().enumerate() {
        let path = dir.join(format!("doc-{i:05}.md"));
        let mut f =
            fs::File::create(&path).with_context(|| format!("cannot write {}", path.display()))?;
        f.write_all(ticket(doc).as_bytes())?;
    }
    Ok(())
}

fn ensure_indexed(ws: &Workspace, recall: &Recall, docs: &[Doc], reindex: bool) -> Result<()> {
    let signature = "scifact v1";
    if !reindex && ws.is_indexed("scifact", signature) {
        eprintln!("eval: reusing the index in {}", ws.root().display());
        return Ok(());
    }
    ws.unmark("scifact");
    let data = ws.data("scifact");
    write_tickets(docs, &data)?;
    let t0 = Instant::now();
    let summary = recall.index(PROJECT, &data, "ticket", reindex)?;
    eprintln!(
        "eval: indexed {} docs in {:.1}s",
        docs.len(),
        t0.elapsed().as_secs_f64()
    );
    ws.mark_indexed("scifact", signature, summary)
}

/// The doc of a hit: `source.ticket_id`, else the hit id before `#`.
fn doc_of(h: &Hit) -> String {
    match &h.ticket_id {
        Some(t) => t.clone(),
        None => h.id.split('#').next().unwrap_or_default().to_string(),
    }
}

/// Distinct docs in rank order (first = best part), at most [`DEPTH`].
fn doc_ranking(hits: &[Hit]) -> Vec<String> {
    let mut seen = HashSet::new();
    hits.iter()
        .map(doc_of)
        .filter(|d| seen.insert(d.clone()))
        .take(DEPTH)
        .collect()
}

/// How one ranking did on one query.
#[derive(Serialize)]
struct Scored {
    ndcg10: f64,
    recall100: f64,
    docs: Vec<String>,
    engine_ms: Option<f64>,
    wall_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

fn score(o: &Outcome, rels: &HashMap<String, i64>) -> Scored {
    let docs = doc_ranking(&o.hits);
    let relevant: HashSet<&String> = rels
        .iter()
        .filter(|(_, &g)| g > 0)
        .map(|(d, _)| d)
        .collect();
    let found = docs.iter().filter(|d| relevant.contains(d)).count();
    Scored {
        ndcg10: ndcg_graded(&docs, rels, 10),
        recall100: ratio(found, relevant.len()),
        docs: docs.into_iter().take(10).collect(),
        engine_ms: o.engine_ms,
        wall_ms: o.wall_ms,
        error: o.error.clone(),
    }
}

struct Query {
    id: String,
    text: String,
    rels: HashMap<String, i64>,
}

#[derive(Serialize)]
struct QueryResult {
    id: String,
    question: String,
    relevant: Vec<String>,
    ours: Scored,
    #[serde(skip_serializing_if = "Option::is_none")]
    floor: Option<Scored>,
}

/// The qrels queries that have a text, at most `limit`.
fn select(qrels: Qrels, texts: &HashMap<String, String>, limit: Option<usize>) -> Vec<Query> {
    let mut out: Vec<Query> = qrels
        .into_iter()
        .filter_map(|(id, rels)| {
            let text = texts.get(&id)?.clone();
            Some(Query { id, text, rels })
        })
        .collect();
    out.truncate(limit.unwrap_or(usize::MAX));
    out
}

/// Run SciFact from `dir` in `ws` with `recall`.
/// `split` names the qrels file: `test` or `train`.
pub fn run(
    dir: &Path,
    split: &str,
    common: &Common,
    ws: &Workspace,
    recall: &Recall,
) -> Result<Run> {
    let docs = load_corpus(dir)?;
    let qrels = load_qrels(&dir.join("qrels").join(format!("{split}.tsv")))?;
    let n_qrels = qrels.len();
    let queries = select(qrels, &load_queries(dir)?, common.limit_questions);
    ensure_indexed(ws, recall, &docs, common.reindex)?;
    let limit = common.limit.unwrap_or(DEFAULT_LIMIT);
    let t0 = Instant::now();
    let ours = par_map(&queries, common.workers, |q| {
        recall.query(PROJECT, &q.text, limit)
    });
    let wall_s = t0.elapsed().as_secs_f64();
    let floor = if common.no_floor {
        None
    } else {
        Some(run_floor(&docs, &queries)?)
    };
    let results = score_all(&queries, &ours, floor.as_deref());
    let mut run = report(&results, &ours, floor.as_deref(), n_qrels, split, wall_s);
    run.results = serde_json::to_value(&results)?;
    Ok(run)
}

fn run_floor(docs: &[Doc], queries: &[Query]) -> Result<Vec<Outcome>> {
    let rows = docs
        .iter()
        .map(|d| (d.id.clone(), format!("{} {}", d.title, d.text)));
    let floor = Floor::new(rows)?;
    Ok(queries
        .iter()
        .map(|q| floor.search(&q.text, Some(DEPTH)))
        .collect())
}

fn score_all(queries: &[Query], ours: &[Outcome], floor: Option<&[Outcome]>) -> Vec<QueryResult> {
    queries
        .iter()
        .enumerate()
        .map(|(i, q)| QueryResult {
            id: q.id.clone(),
            question: q.text.clone(),
            relevant: q.rels.keys().cloned().collect(),
            ours: score(&ours[i], &q.rels),
            floor: floor.and_then(|f| f.get(i)).map(|o| score(o, &q.rels)),
        })
        .collect()
}

/// A per-query number to average.
type Metric = fn(&Scored) -> f64;

fn avg(results: &[QueryResult], metric: Metric) -> (f64, Option<f64>) {
    let ours = mean(results.iter().map(|r| metric(&r.ours)));
    let floor: Option<Vec<f64>> = results
        .iter()
        .map(|r| r.floor.as_ref().map(metric))
        .collect();
    (ours, floor.map(mean))
}

fn report(
    results: &[QueryResult],
    ours: &[Outcome],
    floor: Option<&[Outcome]>,
    n_qrels: usize,
    split: &str,
    wall_s: f64,
) -> Run {
    let mut t = Table::default();
    let mut headlines = Vec::new();
    // The target is issue #8's, set on the test queries.
    let target = if split == "test" { "≥ 0.70" } else { "" };
    let metrics: [(&str, &str, Metric); 2] = [
        ("**nDCG@10**", target, |s| s.ndcg10),
        ("recall@100 (distinct docs)", "", |s| s.recall100),
    ];
    for (name, target, metric) in metrics {
        let (o, f) = avg(results, metric);
        t.row(name, f3(o), opt3(f), target);
        headlines.push(Headline {
            set: "SciFact".into(),
            metric: name.trim_matches('*').into(),
            ours: o,
            floor: f,
        });
    }
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
    if let Some(e) = ours.iter().find_map(|o| o.error.as_deref()) {
        eprintln!("eval: first query error: {e}");
    }
    let ours_refs: Vec<&Outcome> = ours.iter().collect();
    let floor_refs: Vec<&Outcome> = floor.unwrap_or_default().iter().collect();
    t.latency(&ours_refs, &floor_refs, wall_s);
    Run {
        title: format!(
            "BEIR SciFact: {} {split} queries (of {n_qrels} in the qrels)",
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
    fn tickets_quote_titles() {
        let doc = Doc {
            id: "42".into(),
            title: "a: \"b\" # c".into(),
            text: "body".into(),
        };
        let t = ticket(&doc);
        assert!(t.starts_with("---\nid: \"42\"\ntitle: \"a: \\\"b\\\" # c\"\n---\n"));
    }

    #[test]
    fn parts_of_one_doc_keep_the_best_rank() {
        let hit = |id: &str, t: Option<&str>| Hit {
            id: id.into(),
            ticket_id: t.map(str::to_string),
            ..Hit::default()
        };
        let hits = [
            hit("a#1", Some("a")),
            hit("b#0", None),
            hit("a#2", Some("a")),
        ];
        assert_eq!(doc_ranking(&hits), ["a", "b"]);
    }
}
