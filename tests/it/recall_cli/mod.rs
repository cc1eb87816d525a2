//! `recall query` end to end: the three output formats on a fixed corpus
//! (snapshots), every filter, the token budget and the limit, dedupe, the
//! per-session cap, exit codes, hostile input, and queries while an index
//! job is writing.
//!
//! The fixed corpus is `testdata/recall`: three project records, one
//! user-scope preference, two session transcripts and two tickets, all with
//! fixed ids and 2020 timestamps so the output does not depend on the day the
//! tests run. Temporary paths are replaced by `[TMP]`, timings and scores by
//! placeholders, before anything is snapshotted.
//!
//! This file holds the corpus and the helpers every part uses, the JSON
//! output checker among them; the tests are in one file per concern:
//! `formats` (the snapshots, the schema, the debug log), `filters`,
//! `budget` (token budget and limit), `sessions` (what a session hit cites
//! and shows, dedupe, the per-session cap, merged windows), `ranking` (the
//! lifts, calibration, `--at`, `--explain`), `exit_codes` (no hits, hostile
//! input) and `concurrency` (queries beside an index job).

mod budget;
mod concurrency;
mod exit_codes;
mod filters;
mod formats;
mod ranking;
mod sessions;

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::{testdata, Env};
use serde_json::{json, Value};

/// Copy every file under `from` to the same relative path under `to`.
fn copy_tree(from: &Path, to: &Path) {
    for e in walkdir::WalkDir::new(from) {
        let e = e.unwrap();
        let dst = to.join(e.path().strip_prefix(from).unwrap());
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&dst).unwrap();
        } else {
            std::fs::copy(e.path(), &dst).unwrap();
        }
    }
}

/// The store folder of the env's project.
/// `recall index --json PATHS`; panics unless it exits 0.
fn index(env: &Env, paths: &[&Path]) -> Value {
    let out = env
        .cmd()
        .args(["index", "--json"])
        .args(paths)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "index failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Value>(&out.stdout).unwrap()["summary"].clone()
}

/// `recall query ARGS`: (exit code, stdout, stderr).
fn query(env: &Env, args: &[&str]) -> (i32, String, String) {
    let out = env.cmd().arg("query").args(args).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `recall query --format json ARGS`: exit code (0 or 1) and the document.
fn query_json(env: &Env, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    let (code, out, err) = query(env, &all);
    assert!(
        code == 0 || code == 1,
        "query {args:?} exited {code}: {err}"
    );
    let v: Value = serde_json::from_str(&out)
        .unwrap_or_else(|e| panic!("query {args:?}: not JSON ({e}): {out:?} {err}"));
    (code, v)
}

fn hits(v: &Value) -> &Vec<Value> {
    v["hits"].as_array().expect("hits is an array")
}

fn ids(v: &Value) -> Vec<String> {
    hits(v)
        .iter()
        .map(|h| h["id"].as_str().unwrap().to_string())
        .collect()
}

fn field<'a>(h: &'a Value, f: &str) -> &'a str {
    h[f].as_str().unwrap_or_default()
}

/// Replace the temporary folder (as given and canonical) with `[TMP]`.
fn scrub(env: &Env, s: &str) -> String {
    let mut s = s.to_string();
    let raw = env.tmp.path().to_path_buf();
    let canon = std::fs::canonicalize(&raw).unwrap();
    for p in [canon, raw] {
        s = s.replace(p.to_str().unwrap(), "[TMP]");
    }
    s
}

/// The fixed corpus in a fresh home: transcripts and tickets indexed from a
/// copy under the temporary folder, record files copied into the project and
/// user scopes and synced by a first query that matches nothing.
fn corpus() -> Env {
    let env = Env::new();
    let src = env.tmp.path().join("src");
    copy_tree(&testdata("recall").join("sessions"), &src.join("sessions"));
    copy_tree(&testdata("recall").join("tickets"), &src.join("tickets"));
    let s = index(&env, &[&src]);
    assert_eq!(
        (s["indexed"].as_i64(), s["failed"].as_i64()),
        (Some(4), Some(0)),
        "{s}"
    );
    copy_tree(
        &testdata("recall").join("records"),
        &env.project_dir().join("records"),
    );
    copy_tree(
        &testdata("recall").join("user"),
        &env.home().join("user").join("records"),
    );
    // Syncs the record files; matches nothing, so no salience is recorded.
    let (code, v) = query_json(&env, &["qqzzxxwarmup"]);
    assert_eq!((code, hits(&v).len()), (1, 0));
    env
}

/// The query the format snapshots use: it reaches every section.
const Q: &str = "checkout timeouts: the redis pool is exhausted, which commands do I run?";

/// Message ids of the fixture transcripts, in order.
fn fixture_message_order() -> BTreeMap<&'static str, Vec<&'static str>> {
    BTreeMap::from([
        ("sess-redis-hang", vec!["u1", "a1", "u2", "a2"]),
        ("sess-release-push", vec!["u1", "a1", "u2", "a2"]),
    ])
}

// ---------------------------------------------------------------------------
// schema/recall-output.schema.json, checked by the `jsonschema` crate.

fn check_schema(v: &Value, errs: &mut Vec<String>) {
    let validator = jsonschema::validator_for(&schema()).expect("the output schema compiles");
    for e in validator.iter_errors(v) {
        errs.push(format!("${}: {e}", e.instance_path()));
    }
}

fn schema() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/recall-output.schema.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Every problem of a `--format json` document: the schema, plus what the
/// schema cannot say. `order` gives each session's message ids in order.
fn output_problems(v: &Value, order: &BTreeMap<&str, Vec<&str>>) -> Vec<String> {
    let mut errs = Vec::new();
    check_schema(v, &mut errs);
    if v["version"] != json!(2) {
        errs.push(format!("version is {}", v["version"]));
    }
    let Some(list) = v["hits"].as_array() else {
        return errs;
    };
    let mut last_score = f64::INFINITY;
    for (i, h) in list.iter().enumerate() {
        let at = format!("hits[{i}]");
        if h["rank"] != json!(i + 1) {
            errs.push(format!("{at}: rank {} != {}", h["rank"], i + 1));
        }
        // Not bounded by 1: boosts multiply it (README, "Output formats").
        let score = h["score"].as_f64().unwrap_or(-1.0);
        if !(score > 0.0 && score.is_finite()) {
            errs.push(format!("{at}: score {score} is not positive"));
        }
        if score > last_score + 1e-12 {
            errs.push(format!("{at}: score {score} above the previous hit's"));
        }
        last_score = score;
        let snippet = field(h, "snippet");
        if snippet.contains(['\u{2}', '\u{3}']) {
            errs.push(format!("{at}: raw highlight marks in the snippet"));
        }
        // Each highlight a non-empty range of the snippet, in order.
        let chars = snippet.chars().count() as u64;
        let mut end = 0;
        for r in h["highlights"].as_array().into_iter().flatten() {
            let (a, b) = (r[0].as_u64().unwrap_or(0), r[1].as_u64().unwrap_or(0));
            if a < end || a >= b || b > chars {
                errs.push(format!("{at}: highlight {r} is not a range of the snippet's {chars} characters after {end}"));
            }
            end = b;
        }
        let src = &h["source"];
        match field(h, "kind") {
            "session" => {
                let sid = src["session_id"].as_str();
                let msg_ids = src["message_ids"].as_array();
                match (sid, msg_ids) {
                    (Some(sid), Some(m)) if !m.is_empty() => {
                        let got: Vec<&str> = m.iter().filter_map(Value::as_str).collect();
                        if let Some(all) = order.get(sid) {
                            let pos: Vec<Option<usize>> = got
                                .iter()
                                .map(|id| all.iter().position(|x| x == id))
                                .collect();
                            if pos.iter().any(Option::is_none)
                                || pos.windows(2).any(|w| w[0] >= w[1])
                            {
                                errs.push(format!(
                                    "{at}: message_ids {got:?} not in transcript order {all:?}"
                                ));
                            }
                        }
                    }
                    _ => errs.push(format!(
                        "{at}: a session hit needs session_id and non-empty message_ids: {src}"
                    )),
                }
                if src["message_range"].as_array().map(Vec::len) != Some(2) {
                    errs.push(format!("{at}: a session hit needs message_range"));
                }
            }
            "ticket" => {
                if !src["ticket_id"].is_string() {
                    errs.push(format!("{at}: a ticket hit needs ticket_id"));
                }
            }
            "record" => {
                if !h["category"].is_string() || !src["path"].is_string() {
                    errs.push(format!("{at}: a record hit needs category and path"));
                }
            }
            other => errs.push(format!("{at}: kind {other:?}")),
        }
    }
    errs
}

/// A neutral transcript line.
fn msg(id: &str, role: &str, ts: &str, text: &str) -> String {
    json!({"role": role, "id": id, "timestamp": ts, "content": text}).to_string() + "\n"
}

fn session_line(id: &str, title: &str) -> String {
    json!({"session": {"id": id, "title": title}}).to_string() + "\n"
}

fn sessions_of(v: &Value) -> Vec<String> {
    let mut s: Vec<String> = hits(v)
        .iter()
        .filter_map(|h| h["source"]["session_id"].as_str().map(String::from))
        .collect();
    s.sort();
    s.dedup();
    s
}
