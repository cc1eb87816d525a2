//! Load on `recall serve`: 32 concurrent loopback clients for 30 s, half
//! asking `GET /api/projects/{p}/recall`, half writing `POST …/memories`
//! (each with a unique key). Prints p50/p99 per endpoint, errors, and
//! records lost: acknowledged writes (2xx) that are missing afterwards from
//! the files or from `recall record list` (the index).
//!
//! ```text
//! cargo bench --bench serve                      # 32 clients, 30 s
//! cargo bench --bench serve -- --clients 8 --secs 5
//! RECALL_BENCH_BIN=/tmp/recall-before cargo bench --bench serve   # another build
//! ```
//!
//! The store is seeded with 200 records and the demo corpus
//! (`testdata/demo`), through the release `recall` binary; the corpus is
//! fixed, and queries are drawn round-robin from a fixed list.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The `recall` binary under test: this build's, or `RECALL_BENCH_BIN`
/// (a copy of an older build, for a before/after from one session).
fn bin() -> String {
    std::env::var("RECALL_BENCH_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_recall").into())
}

const QUERIES: &[&str] = &[
    "config reload panic on empty file",
    "which package manager do we use",
    "flaky test in the reload watcher",
    "how do we deploy the release",
    "database migration rollback",
    "sqlite busy timeout during index",
    "prefer small commits with reasons",
    "incident postmortem for the outage",
];

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn recall(home: &Path, args: &[&str]) -> String {
    let out = Command::new(bin())
        .arg("--home")
        .arg(home)
        .args(["--project", "bench"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "recall {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn seed(home: &Path) {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/demo");
    for sub in ["sessions", "tickets"] {
        let _ = Command::new(bin())
            .arg("--home")
            .arg(home)
            .args(["--project", "bench", "index"])
            .arg(demo.join(sub))
            .output();
    }
    for i in 0..200 {
        let text = format!(
            "Decision {i}: {} because the {} failed under load.",
            QUERIES[i % QUERIES.len()],
            ["cache", "queue", "index", "worker"][i % 4]
        );
        recall(
            home,
            &[
                "record",
                "add",
                "--category",
                "decisions",
                "--key",
                &format!("seed-{i}"),
                &text,
            ],
        );
    }
}

#[derive(Default)]
struct Tally {
    recall: Vec<f64>,
    write: Vec<f64>,
    errors: Vec<String>,
    acked: Vec<String>,
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn client(base: String, id: usize, stop: Arc<AtomicBool>) -> Tally {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .into();
    let mut t = Tally::default();
    let mut n = 0usize;
    while !stop.load(Ordering::Relaxed) {
        n += 1;
        let t0 = Instant::now();
        let writer = id % 2 == 1;
        let result = if writer {
            let key = format!("load-{id}-{n}");
            let body = serde_json::json!({"key": key, "value": format!("Client {id} wrote fact {n} about the worker queue.")});
            agent
                .post(format!("{base}/api/projects/bench/memories"))
                .header("Content-Type", "application/json")
                .send(body.to_string())
                .map(|r| (r.status().as_u16(), Some(key)))
        } else {
            let q = QUERIES[(id + n) % QUERIES.len()].replace(' ', "+");
            agent
                .get(format!(
                    "{base}/api/projects/bench/recall?q={q}&format=prompt"
                ))
                .call()
                .map(|r| (r.status().as_u16(), None))
        };
        let ms = t0.elapsed().as_secs_f64() * 1e3;
        match result {
            Ok((s, key)) if (200..300).contains(&s) => {
                if let Some(k) = key {
                    t.acked.push(k);
                    t.write.push(ms);
                } else {
                    t.recall.push(ms);
                }
            }
            Ok((s, _)) => t.errors.push(format!("HTTP {s}")),
            Err(e) => t.errors.push(e.to_string()),
        }
    }
    t
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let clients = arg("--clients", 32) as usize;
    let secs = arg("--secs", 30);
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    eprintln!("seeding {} ...", home.display());
    seed(&home);
    let mut server = Command::new(bin())
        .arg("--home")
        .arg(&home)
        .args(["serve", "--addr", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(server.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = line
        .trim()
        .trim_start_matches("listening on ")
        .trim_end_matches('/')
        .to_string();
    eprintln!("{clients} clients for {secs} s against {base} ...");
    let stop = Arc::new(AtomicBool::new(false));
    let handles: Vec<_> = (0..clients)
        .map(|i| {
            let (b, s) = (base.clone(), stop.clone());
            std::thread::spawn(move || client(b, i, s))
        })
        .collect();
    std::thread::sleep(Duration::from_secs(secs));
    stop.store(true, Ordering::Relaxed);
    let mut all = Tally::default();
    for h in handles {
        let t = h.join().unwrap();
        all.recall.extend(t.recall);
        all.write.extend(t.write);
        all.errors.extend(t.errors);
        all.acked.extend(t.acked);
    }
    // SAFETY: kill(2) on our own child has no memory effects.
    unsafe { libc::kill(server.id() as i32, libc::SIGTERM) };
    let status = server.wait().unwrap();
    let listed: serde_json::Value = serde_json::from_str(&recall(
        &home,
        &["record", "list", "--scope", "project", "--format", "json"],
    ))
    .unwrap();
    let indexed: BTreeSet<String> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["key"].as_str().unwrap().to_string())
        .collect();
    let lost: Vec<&String> = all.acked.iter().filter(|k| !indexed.contains(*k)).collect();
    println!("| endpoint | requests | p50 ms | p99 ms | req/s |");
    println!("|---|---|---|---|---|");
    for (name, v) in [
        ("GET …/recall (prompt)", &mut all.recall),
        ("POST …/memories", &mut all.write),
    ] {
        let n = v.len();
        println!(
            "| {name} | {n} | {:.1} | {:.1} | {:.0} |",
            pct(v, 0.5),
            pct(v, 0.99),
            n as f64 / secs as f64
        );
    }
    println!();
    println!(
        "{clients} clients, {secs} s; errors: {}; acknowledged writes: {}; records lost: {}; server exit: {status}",
        all.errors.len(),
        all.acked.len(),
        lost.len()
    );
    if let Some(e) = all.errors.first() {
        println!("first error: {e}");
    }
}
