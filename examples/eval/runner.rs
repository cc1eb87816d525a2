//! Running the `recall` binary: indexing, one process per query, and the
//! parallel loop over queries.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{bail, Context as _, Result};
use serde::Serialize;
use serde_json::Value;

/// One hit as the harness needs it, read leniently from the JSON output.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Hit {
    pub rank: usize,
    pub kind: String,
    pub id: String,
    /// Characters (Unicode scalar values) of the hit's full `text`: what
    /// counts against budgets.
    pub chars: usize,
    pub message_ids: Vec<String>,
    /// `source.session_id`: the session a hit comes from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ticket_id: Option<String>,
}

impl Hit {
    /// A hit built by the floor: `key` is the covered id, `session` the
    /// session of the row (if any), `text` the row.
    pub fn floor(rank: usize, key: String, session: Option<String>, text: &str) -> Hit {
        Hit {
            rank,
            kind: "floor".into(),
            chars: text.chars().count(),
            id: key.clone(),
            message_ids: vec![key.clone()],
            session_id: session,
            ticket_id: Some(key),
        }
    }
}

/// The result of one query.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    pub hits: Vec<Hit>,
    /// `timings_ms.total` as reported by the engine.
    pub engine_ms: Option<f64>,
    /// Wall time of the whole process (or of the in-process floor query).
    pub wall_ms: f64,
    pub error: Option<String>,
}

/// The `recall` binary and the home it works on.
pub struct Recall {
    bin: PathBuf,
    home: PathBuf,
    /// `--at` for every query.
    at: String,
    /// Hybrid recall's environment for every child (`--semantic`), and the
    /// model folder it names.
    semantic: Option<(PathBuf, bool)>,
}

impl Recall {
    pub fn new(bin: Option<&Path>, home: PathBuf, at: &str) -> Result<Recall> {
        let bin = match bin {
            Some(b) => b.to_path_buf(),
            None => default_bin()?,
        };
        if !bin.is_file() {
            bail!(
                "no recall binary at {}: build it with `cargo build --release --bin recall` or pass --recall-bin",
                bin.display()
            );
        }
        Ok(Recall {
            bin,
            home,
            at: at.to_string(),
            semantic: None,
        })
    }

    /// Hybrid recall as `--semantic MODEL_DIR` and `--no-hybrid` ask: the
    /// model folder must exist (a typo must not index without vectors and
    /// score as if hybrid were on).
    pub fn with_semantic(self, common: &crate::args::Common) -> Result<Recall> {
        let Some(dir) = &common.semantic else {
            return Ok(self);
        };
        let dir = std::fs::canonicalize(dir).with_context(|| {
            format!(
                "no embedding model at {}: --semantic names a model folder (`bash scripts/get-model.sh DIR` fetches one)",
                dir.display()
            )
        })?;
        eprintln!(
            "eval: vectors from {}, hybrid recall {}",
            dir.display(),
            if common.no_hybrid { "off" } else { "on" }
        );
        Ok(Recall {
            semantic: Some((dir, !common.no_hybrid)),
            ..self
        })
    }

    pub fn bin(&self) -> &Path {
        &self.bin
    }

    /// The binary's path, size and modification time: what tells one build
    /// from another.
    pub fn fingerprint(&self) -> Value {
        let meta = std::fs::metadata(&self.bin).ok();
        let modified = meta
            .as_ref()
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_secs());
        serde_json::json!({
            "path": self.bin.display().to_string(),
            "size": meta.map(|m| m.len()),
            "modified": modified,
            "vectors": self.semantic.as_ref().map(|(dir, _)| dir.display().to_string()),
        })
    }

    fn command(&self, project: &str) -> Command {
        let mut c = Command::new(&self.bin);
        c.arg("--home")
            .arg(&self.home)
            .arg("--project")
            .arg(project);
        c.env_remove("RECALL_HOME").env("NO_COLOR", "1");
        // `--semantic` over whatever this shell sets; without it the
        // children read the shell's `RECALL_SEMANTIC_*` as any other key.
        if let Some((dir, hybrid)) = &self.semantic {
            c.env("RECALL_SEMANTIC_MODEL", dir)
                .env("RECALL_SEMANTIC_HYBRID", if *hybrid { "1" } else { "0" });
        }
        c
    }

    /// `recall index --json --kind KIND [--full] PATH`; returns the summary.
    pub fn index(&self, project: &str, path: &Path, kind: &str, full: bool) -> Result<Value> {
        let mut c = self.command(project);
        c.args(["index", "--json", "--kind", kind]);
        if full {
            c.arg("--full");
        }
        let out = c
            .arg(path)
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("cannot run {}", self.bin.display()))?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        // Exit code 3: the batch finished but some files had problems.
        if !matches!(out.status.code(), Some(0 | 3)) {
            bail!(
                "recall index {} failed ({}): {}",
                path.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        let summary: Value = serde_json::from_str(stdout.trim()).unwrap_or(Value::Null);
        if out.status.code() == Some(3) {
            eprintln!("eval: warning: recall index {project}: some files had problems: {summary}");
        }
        Ok(summary)
    }

    /// `recall query --format json --limit N`, the question on stdin.
    pub fn query(&self, project: &str, question: &str, limit: usize) -> Outcome {
        self.query_with(project, question, limit, &[])
    }

    /// [`Recall::query`] with more query flags (`--until WHEN`).
    pub fn query_with(
        &self,
        project: &str,
        question: &str,
        limit: usize,
        flags: &[String],
    ) -> Outcome {
        let t0 = Instant::now();
        let result = self.run_query(project, question, limit, flags);
        let wall_ms = t0.elapsed().as_secs_f64() * 1000.0;
        match result {
            Ok(doc) => Outcome {
                hits: parse_hits(&doc),
                engine_ms: doc["timings_ms"]["total"].as_f64(),
                wall_ms,
                error: None,
            },
            Err(e) => Outcome {
                wall_ms,
                error: Some(format!("{e:#}")),
                ..Outcome::default()
            },
        }
    }

    fn run_query(
        &self,
        project: &str,
        question: &str,
        limit: usize,
        flags: &[String],
    ) -> Result<Value> {
        // `--no-salience`: a question must not shift the ranking of the
        // next ones (nor of a later run reusing this index).
        let mut child = self
            .command(project)
            .args(["query", "--format", "json", "--no-salience"])
            .args(["--limit", &limit.to_string()])
            .args(["--at", &self.at])
            .args(flags)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot run {}", self.bin.display()))?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(question.as_bytes())?;
        }
        let out = child.wait_with_output()?;
        // Exit code 1 means "no hits"; the JSON is still printed.
        if !matches!(out.status.code(), Some(0 | 1)) {
            bail!(
                "exit {}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        serde_json::from_slice(&out.stdout).context("the query output is not JSON")
    }
}

/// `recall` next to this executable: `target/release/recall` when this is
/// `target/release/examples/eval`.
fn default_bin() -> Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot find the current executable")?;
    let name = format!("recall{}", std::env::consts::EXE_SUFFIX);
    let candidates = exe.ancestors().skip(1).take(2).map(|d| d.join(&name));
    let candidates: Vec<PathBuf> = candidates.collect();
    Ok(candidates
        .iter()
        .find(|p| p.is_file())
        .or(candidates.last())
        .cloned()
        .unwrap_or_else(|| PathBuf::from(name)))
}

/// The hits of a query's JSON output; missing fields become empty.
pub fn parse_hits(doc: &Value) -> Vec<Hit> {
    let Some(list) = doc["hits"].as_array() else {
        return vec![];
    };
    let mut hits: Vec<Hit> = list.iter().enumerate().map(parse_hit).collect();
    hits.sort_by_key(|h| h.rank);
    hits
}

fn parse_hit((i, v): (usize, &Value)) -> Hit {
    let text = v["text"].as_str().unwrap_or_default();
    let src = &v["source"];
    let message_ids = src["message_ids"]
        .as_array()
        .map(|ids| ids.iter().filter_map(id_string).collect())
        .unwrap_or_default();
    Hit {
        rank: v["rank"].as_u64().map_or(i + 1, |r| r as usize),
        kind: v["kind"].as_str().unwrap_or_default().to_string(),
        id: v["id"].as_str().unwrap_or_default().to_string(),
        chars: text.chars().count(),
        message_ids,
        session_id: src.get("session_id").and_then(id_string),
        ticket_id: src.get("ticket_id").and_then(id_string),
    }
}

/// A native id written as a string or a number.
fn id_string(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// `f` over `items` on `workers` threads, results in input order. Prints
/// progress on stderr.
pub fn par_map<T: Sync, R: Send>(
    items: &[T],
    workers: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let done = Mutex::new(Vec::with_capacity(items.len()));
    std::thread::scope(|s| {
        for _ in 0..workers.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let r = f(item);
                let mut d = done.lock().unwrap_or_else(|e| e.into_inner());
                d.push((i, r));
                progress(d.len(), items.len());
            });
        }
    });
    let mut done = done.into_inner().unwrap_or_else(|e| e.into_inner());
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

fn progress(done: usize, total: usize) {
    if done.is_multiple_of(200) || done == total {
        eprintln!("eval: {done}/{total} queries");
    }
}
