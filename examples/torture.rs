//! The reliability and security torture suite: scenarios that try to break
//! `recall` the way a crash, a busy machine, a hostile input or a careless
//! file would, each measured and printed as one table of figures.
//!
//! ```text
//! bash scripts/torture.sh            # full form (minutes)
//! bash scripts/torture.sh --quick    # short form with a fixed seed (seconds; in CI)
//! target/release/examples/torture [--quick] [--seed S] [--kills N] [--load-secs S]
//!                                 [--fuzz N] [--recall-bin PATH] [--keep DIR]
//!                                 [--only kill,load,fuzz,secrets,isolation,hostile]
//! ```
//!
//! Scenarios (each row of the table names its target; the run exits 1 when
//! a target is missed):
//! - **kill -9**: `--kills` times, one of `index`, `index --full`,
//!   `reindex --full`, `record add|update|delete`, `extract` and `serve`
//!   (a loop of `POST` writes) is started on a seeded corpus and killed at
//!   a random moment. After every kill the
//!   index passes `PRAGMA integrity_check`. At the end the jobs are re-run
//!   once and: no `.recall-*.tmp` is left, every record file parses, every
//!   record whose `record add` (exit 0) or `POST` (2xx) was acknowledged
//!   is found by `record get`, the passage count equals a clean index of the same
//!   corpus, and `doctor` passes.
//! - **load**: 8 hook loops (`recall hook claude-code`, UserPromptSubmit),
//!   one `index` loop over a growing corpus and one `record add` loop run
//!   together for `--load-secs`. Hook failures, deadline misses, records
//!   acknowledged but missing from the index right afterwards, the largest
//!   WAL seen, and hook p50/p99 under load against idle.
//! - **fuzz**: the query sanitizer (every output run as an FTS5 `MATCH`)
//!   and every transcript and ticket parser on mutated fixture files,
//!   `--fuzz` inputs in all (10,000,000 in the full form); panics and SQL
//!   errors.
//! - **secrets**: planted secrets of 21 kinds (issue #26's among them)
//!   through every input path (transcript text, a Claude Code line's cwd and
//!   branch, a ticket, `record add --redact` with the secret in the text and
//!   in the key, `remember --redact` with the key built from the text, a
//!   record file written by hand, extraction); every byte and every file
//!   name under the home (except the hand-written file itself), every output
//!   format, the hook output and `recall serve`'s answers (a refused write,
//!   both lists, recall in every format) are searched for them, whole and as
//!   lowercased runs (what a slug or an FTS term keeps).
//! - **isolation**: projects with colliding names (`my.app`, `my-app`,
//!   the same name in two folders) each get a marker; a query in each must
//!   find its own marker and none of the others'.
//! - **hostile**: a bad config, an index from an old schema, a symlinked
//!   records folder, and a full disk (a 1 MB tmpfs, when mounting is
//!   allowed): each gives a clear message or works, never a panic, and a
//!   full disk leaves the index intact.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Parser;

#[allow(dead_code)] // shared with the integration tests, which use all of it
#[path = "../tests/it/common/pg.rs"]
mod pg;
#[path = "torture/sync.rs"]
mod sync;

#[derive(Parser, Debug)]
#[command(about = "recall's reliability and security torture suite")]
struct Opts {
    /// The short form: few kills, a short load, 20,000 fuzz inputs
    #[arg(long)]
    quick: bool,
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// kill -9 rounds [default: 200, quick 12]
    #[arg(long)]
    kills: Option<usize>,
    /// Seconds of load [default: 60, quick 4]
    #[arg(long)]
    load_secs: Option<u64>,
    /// Fuzz inputs [default: 10,000,000, quick 20,000]
    #[arg(long)]
    fuzz: Option<u64>,
    /// The recall binary [default: `recall` next to this executable]
    #[arg(long)]
    recall_bin: Option<PathBuf>,
    /// Keep the workspace in DIR
    #[arg(long)]
    keep: Option<PathBuf>,
    /// Sync kill -9 rounds [default: 100, quick 12]
    #[arg(long)]
    sync_kills: Option<usize>,
    /// Run only these scenarios (kill, load, fuzz, secrets, isolation, hostile, sync)
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
}

/// One line of the result table.
struct Row {
    scenario: &'static str,
    metric: String,
    value: String,
    target: String,
    met: bool,
}

fn row(scenario: &'static str, metric: &str, value: impl ToString, target: &str, met: bool) -> Row {
    Row {
        scenario,
        metric: metric.into(),
        value: value.to_string(),
        target: target.into(),
        met,
    }
}

/// A seeded xorshift generator: runs repeat.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

struct World {
    bin: PathBuf,
    root: PathBuf,
}

impl World {
    fn cmd(&self, home: &Path) -> Command {
        let mut c = Command::new(&self.bin);
        c.env_remove("RECALL_HOME")
            .env_remove("RECALL_PROJECT")
            .env_remove("RECALL_LOG")
            .env("NO_COLOR", "1")
            .arg("--home")
            .arg(home)
            .stdin(Stdio::null());
        c
    }

    fn run(&self, home: &Path, args: &[&str]) -> Result<Output> {
        Ok(self.cmd(home).args(args).output()?)
    }
}

fn main() -> Result<()> {
    let o = Opts::parse();
    let bin = match &o.recall_bin {
        Some(b) => b.clone(),
        None => std::env::current_exe()?
            .parent()
            .and_then(Path::parent)
            .context("no folder above the example")?
            .join("recall"),
    };
    if !bin.exists() {
        bail!(
            "no recall binary at {}: build it, or pass --recall-bin",
            bin.display()
        );
    }
    let tmp = tempfile::Builder::new()
        .prefix("recall-torture-")
        .tempdir()?;
    let root = match &o.keep {
        Some(d) => {
            std::fs::create_dir_all(d)?;
            d.clone()
        }
        None => tmp.path().to_path_buf(),
    };
    let w = World { bin, root };
    let t0 = Instant::now();
    let mut rows = Vec::new();
    let kills = o.kills.unwrap_or(if o.quick { 12 } else { 200 });
    let load = Duration::from_secs(o.load_secs.unwrap_or(if o.quick { 4 } else { 60 }));
    let fuzz = o.fuzz.unwrap_or(if o.quick { 20_000 } else { 10_000_000 });
    let wanted = |name: &str| o.only.is_empty() || o.only.iter().any(|x| x == name);
    if wanted("kill") {
        eprintln!("torture: kill -9 x{kills}");
        rows.extend(kill9(&w, kills, o.seed)?);
    }
    if wanted("load") {
        eprintln!("torture: load for {load:?}");
        rows.extend(load_test(&w, load, !o.quick)?);
    }
    if wanted("fuzz") {
        eprintln!("torture: fuzz x{fuzz}");
        rows.extend(fuzzing(fuzz, o.seed)?);
    }
    if wanted("secrets") {
        eprintln!("torture: secrets");
        rows.extend(secrets(&w)?);
    }
    if wanted("isolation") {
        eprintln!("torture: isolation");
        rows.extend(isolation(&w, o.seed)?);
    }
    if wanted("sync") {
        let n = o.sync_kills.unwrap_or(if o.quick { 12 } else { 100 });
        eprintln!("torture: sync kill -9 x{n}");
        rows.extend(sync::sync_kill9(&w, n, o.seed)?);
    }
    if wanted("hostile") {
        eprintln!("torture: hostile environment");
        rows.extend(hostile(&w)?);
    }
    println!(
        "## recall torture suite ({} form, seed {}, {:.0} s)\n",
        if o.quick { "quick" } else { "full" },
        o.seed,
        t0.elapsed().as_secs_f64()
    );
    println!("| scenario | metric | value | target | met |\n|---|---|---:|---|---|");
    for r in &rows {
        println!(
            "| {} | {} | {} | {} | {} |",
            r.scenario,
            r.metric,
            r.value,
            r.target,
            if r.met { "yes" } else { "**no**" }
        );
    }
    let missed = rows.iter().filter(|r| !r.met).count();
    if missed > 0 {
        eprintln!("torture: {missed} target(s) missed");
        std::process::exit(1);
    }
    Ok(())
}

// ---------------------------------------------------------------- corpus

/// A neutral transcript of `n` messages about `topic`.
fn transcript(id: &str, topic: &str, n: usize, seed: u64) -> String {
    let mut r = Rng(seed | 1);
    let words = [
        "deploy",
        "cache",
        "parser",
        "timeout",
        "retry",
        "index",
        "migration",
        "queue",
        "token",
        "release",
        "branch",
        "schema",
        "worker",
        "latency",
        "budget",
    ];
    let mut out = format!(
        "{}\n",
        serde_json::json!({"session": {"id": id, "title": format!("{topic} work")}})
    );
    for i in 0..n {
        let text: Vec<&str> = (0..40)
            .map(|_| words[r.below(words.len() as u64) as usize])
            .collect();
        let line = serde_json::json!({
            "role": if i % 2 == 0 { "user" } else { "assistant" },
            "content": format!("{topic} {} step {i}", text.join(" ")),
            "id": format!("{id}-m{i}"),
            "timestamp": format!("2020-01-0{}T10:{:02}:{:02}Z", 1 + i % 9, i / 60 % 60, i % 60),
        });
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out
}

fn write_corpus(dir: &Path, files: usize, msgs: usize, seed: u64) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    for f in 0..files {
        let id = format!("s{f:03}");
        std::fs::write(
            dir.join(format!("{id}.jsonl")),
            transcript(&id, &format!("topic{f}"), msgs, seed ^ f as u64),
        )?;
    }
    Ok(())
}

fn index_db(home: &Path, project: &str) -> Option<PathBuf> {
    let projects = home.join("projects");
    std::fs::read_dir(projects).ok()?.flatten().find_map(|e| {
        let name = e.file_name().to_string_lossy().into_owned();
        name.starts_with(&format!("{project}-"))
            .then(|| e.path().join("index.db"))
    })
}

fn integrity_ok(db: &Path) -> bool {
    let Ok(c) =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
    else {
        return false;
    };
    let _ = c.busy_timeout(Duration::from_secs(10));
    c.query_row("PRAGMA integrity_check", [], |r| r.get::<_, String>(0))
        .is_ok_and(|s| s == "ok")
}

fn count(db: &Path, sql: &str) -> i64 {
    rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .and_then(|c| c.query_row(sql, [], |r| r.get(0)))
        .unwrap_or(-1)
}

/// Move every temp file's mtime `by` into the past.
fn age_temp_files(dir: &Path, by: Duration) {
    for e in walkdir::WalkDir::new(dir).into_iter().flatten() {
        if recall::store::is_temp_name(&e.file_name().to_string_lossy()) {
            if let Ok(f) = std::fs::OpenOptions::new().write(true).open(e.path()) {
                let _ = f.set_modified(std::time::SystemTime::now() - by);
            }
        }
    }
}

fn temp_files(dir: &Path) -> usize {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| recall::store::is_temp_name(&e.file_name().to_string_lossy()))
        .count()
}

// ---------------------------------------------------------------- kill -9

fn kill9(w: &World, kills: usize, seed: u64) -> Result<Vec<Row>> {
    let home = w.root.join("kill/home");
    let corpus = w.root.join("kill/corpus");
    write_corpus(&corpus, 12, 400, seed)?;
    let reference = w.root.join("kill/reference");
    let p = ["--project", "t"];
    let out = w.run(&reference, &[p[0], p[1], "index", corpus.to_str().unwrap()])?;
    if !out.status.success() {
        bail!(
            "reference index failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let want_chunks = count(
        &index_db(&reference, "t").context("no reference index")?,
        "SELECT count(*) FROM chunks",
    );
    let mut r = Rng(seed | 1);
    let mut alive: BTreeMap<String, bool> = BTreeMap::new();
    let (mut corrupt, mut killed) = (0, 0);
    let (mut serve_rounds, mut serve_acked) = (0, 0);
    for round in 0..kills {
        let key = format!("k{}", r.below(40));
        let text = format!(
            "decision {round}: use the {} queue for retries",
            r.below(1000)
        );
        if r.below(8) == 7 {
            let (acked, was_killed) = serve_round(w, &home, round, r.below(400))?;
            serve_rounds += 1;
            serve_acked += acked.len();
            for k in acked {
                alive.insert(k, true);
            }
            killed += usize::from(was_killed);
            if let Some(db) = index_db(&home, "t") {
                if db.exists() && !integrity_ok(&db) {
                    corrupt += 1;
                }
            }
            continue;
        }
        let args: Vec<String> = match r.below(7) {
            0 => vec!["index".into(), corpus.display().to_string()],
            1 => vec![
                "index".into(),
                "--full".into(),
                corpus.display().to_string(),
            ],
            2 => vec!["reindex".into(), "--full".into()],
            3 | 4 => vec![
                "record".into(),
                "add".into(),
                "--category".into(),
                "decisions".into(),
                "--key".into(),
                key.clone(),
                text,
            ],
            5 => vec!["record".into(), "delete".into(), key.clone()],
            _ => vec![
                "extract".into(),
                "--extractor".into(),
                "builtin".into(),
                "--since".into(),
                "2000-01-01".into(),
            ],
        };
        let mut child = w
            .cmd(&home)
            .args(p)
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        std::thread::sleep(Duration::from_millis(r.below(400)));
        let status = match child.try_wait()? {
            Some(s) => Some(s),
            None => {
                child.kill()?;
                child.wait()?;
                killed += 1;
                None
            }
        };
        if let Some(s) = status.filter(|s| s.success()) {
            match (args[0].as_str(), args.get(1).map(String::as_str)) {
                ("record", Some("add")) => drop(alive.insert(key, true)),
                ("record", Some("delete")) => drop(alive.remove(&key)),
                _ => {}
            }
            let _ = s;
        }
        if let Some(db) = index_db(&home, "t") {
            if db.exists() && !integrity_ok(&db) {
                corrupt += 1;
            }
        }
    }
    // A killed write's temp file is an orphan once it is ORPHAN_AGE old
    // (younger ones may be a live writer's); stand in for that wait.
    age_temp_files(&home, recall::store::ORPHAN_AGE + Duration::from_secs(1));
    // Re-run: index and sync converge.
    w.run(&home, &[p[0], p[1], "index", corpus.to_str().unwrap()])?;
    w.run(&home, &[p[0], p[1], "reindex"])?;
    let leftovers = temp_files(&home);
    let mut bad_files = 0;
    for e in walkdir::WalkDir::new(&home).into_iter().flatten() {
        let path = e.path();
        if path.extension().is_some_and(|x| x == "md")
            && path.components().any(|c| c.as_os_str() == "records")
        {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            if recall::records::parse_record(&text, path, &Default::default()).is_err() {
                bad_files += 1;
            }
        }
    }
    let mut lost = 0;
    for key in alive.keys() {
        if !w
            .run(&home, &[p[0], p[1], "record", "get", key])?
            .status
            .success()
        {
            lost += 1;
        }
    }
    let db = index_db(&home, "t").context("no index after the kills")?;
    let chunks = count(&db, "SELECT count(*) FROM chunks");
    let doctor = w.run(&home, &[p[0], p[1], "doctor"])?;
    Ok(vec![
        row(
            "kill -9",
            "rounds (killed mid-run)",
            format!("{kills} ({killed})"),
            "",
            true,
        ),
        row(
            "kill -9",
            "of them `serve` rounds (acknowledged POSTs)",
            format!("{serve_rounds} ({serve_acked})"),
            "",
            true,
        ),
        row(
            "kill -9",
            "integrity_check failures",
            corrupt,
            "0",
            corrupt == 0,
        ),
        row(
            "kill -9",
            "acknowledged records lost",
            format!("{lost} of {}", alive.len()),
            "0",
            lost == 0,
        ),
        row(
            "kill -9",
            "temp files left after a re-run a minute later",
            leftovers,
            "0",
            leftovers == 0,
        ),
        row(
            "kill -9",
            "record files that do not parse",
            bad_files,
            "0",
            bad_files == 0,
        ),
        row(
            "kill -9",
            "passages after a re-run / clean index",
            format!("{chunks} / {want_chunks}"),
            "equal",
            chunks == want_chunks,
        ),
        row(
            "kill -9",
            "doctor after a re-run",
            doctor.status.code().unwrap_or(-1),
            "0",
            doctor.status.success(),
        ),
    ])
}

/// `recall serve` on a free loopback port: the child and its base URL, or
/// `None` (the child reaped) when it did not start.
fn start_serve(w: &World, home: &Path) -> Result<Option<(std::process::Child, String)>> {
    use std::io::BufRead as _;
    let mut child = w
        .cmd(home)
        .args(["serve", "--addr", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.as_mut().context("no stdout")?).read_line(&mut line)?;
    match line.trim().strip_prefix("listening on ") {
        Some(url) => Ok(Some((child, url.trim_end_matches('/').to_string()))),
        None => {
            child.kill()?;
            child.wait()?;
            Ok(None)
        }
    }
}

/// An HTTP client that returns error statuses instead of failing on them.
fn http_agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

/// One kill -9 round of `recall serve`: start it, `POST` upserts to project
/// `t` until `ms` milliseconds have passed, then kill it. Returns the keys
/// whose write was acknowledged (2xx) and whether the server was killed
/// (rather than failing to start).
fn serve_round(w: &World, home: &Path, round: usize, ms: u64) -> Result<(Vec<String>, bool)> {
    let Some((mut child, base)) = start_serve(w, home)? else {
        return Ok((vec![], false));
    };
    let agent = http_agent();
    let deadline = Instant::now() + Duration::from_millis(ms);
    let mut acked = Vec::new();
    let mut n = 0;
    while Instant::now() < deadline {
        n += 1;
        let key = format!("s{}", (round * 7 + n) % 40);
        let body = format!("{{\"key\":\"{key}\",\"value\":\"served decision {round}-{n}\"}}");
        let resp = agent
            .post(format!("{base}/api/projects/t/memories"))
            .header("Content-Type", "application/json")
            .send(body);
        if resp.is_ok_and(|r| r.status().is_success()) {
            acked.push(key);
        }
    }
    child.kill()?;
    child.wait()?;
    Ok((acked, true))
}

// ---------------------------------------------------------------- load

fn percentile(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn hook_once(w: &World, home: &Path, cwd: &Path) -> Result<(f64, bool, bool)> {
    let payload = serde_json::json!({
        "session_id": "load", "cwd": cwd, "hook_event_name": "UserPromptSubmit",
        "prompt": "why does the deploy queue retry after a timeout in the parser?",
    });
    let t = Instant::now();
    let mut child = w
        .cmd(home)
        .args(["hook", "claude-code"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.to_string().as_bytes())?;
    let out = child.wait_with_output()?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    let err = String::from_utf8_lossy(&out.stderr);
    let failed = !out.status.success() || (!err.is_empty() && !err.contains("deadline"));
    Ok((ms, failed, err.contains("deadline")))
}

/// `gate_time`: whether the latency ratio is a target (the full form) or
/// only reported (the quick form runs in CI on shared machines, where a
/// timed assertion would be noise).
fn load_test(w: &World, secs: Duration, gate_time: bool) -> Result<Vec<Row>> {
    let home = w.root.join("load/home");
    let proj = w.root.join("load/project");
    std::fs::create_dir_all(proj.join(".git"))?;
    let corpus = w.root.join("load/corpus");
    write_corpus(&corpus, 6, 300, 7)?;
    let pc = |args: &[&str]| -> Result<Output> {
        Ok(w.cmd(&home).arg("--cwd").arg(&proj).args(args).output()?)
    };
    pc(&["index", corpus.to_str().unwrap()])?;
    pc(&[
        "record",
        "add",
        "--category",
        "decisions",
        "--key",
        "seed",
        "retries use the deploy queue",
    ])?;
    // Idle: the same 8 hook loops without the writers, so the ratio shows
    // what the writers cost the hooks (on 2 cores, 8 processes alone are
    // several times slower than one).
    let mut idle = hooks_only(w, &home, &proj, secs / 2);
    let idle_p99 = percentile(&mut idle.clone(), 0.99);
    let idle_p50 = percentile(&mut idle, 0.5);
    let stop = Arc::new(AtomicBool::new(false));
    let lat = Arc::new(Mutex::new(Vec::new()));
    let (failures, misses, wal_max) = (
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
    );
    let acked = Arc::new(Mutex::new(Vec::<String>::new()));
    let db = index_db(&home, "project").context("no load index")?;
    std::thread::scope(|s| {
        for _ in 0..8 {
            let (stop, lat, failures, misses) =
                (stop.clone(), lat.clone(), failures.clone(), misses.clone());
            let (home, proj) = (&home, &proj);
            s.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    if let Ok((ms, failed, missed)) = hook_once(w, home, proj) {
                        lat.lock().unwrap().push(ms);
                        failures.fetch_add(u64::from(failed), Ordering::Relaxed);
                        misses.fetch_add(u64::from(missed), Ordering::Relaxed);
                    }
                }
            });
        }
        let (stop2, home2, proj2) = (stop.clone(), &home, &proj);
        let growing = w.root.join("load/growing");
        s.spawn(move || {
            let mut n = 0;
            while !stop2.load(Ordering::Relaxed) {
                let _ = write_corpus_file(&growing, n);
                n += 1;
                let _ = w
                    .cmd(home2)
                    .arg("--cwd")
                    .arg(proj2)
                    .args(["index", growing.to_str().unwrap()])
                    .output();
            }
        });
        let (stop3, acked3, home3, proj3) = (stop.clone(), acked.clone(), &home, &proj);
        s.spawn(move || {
            let mut n = 0;
            while !stop3.load(Ordering::Relaxed) {
                let key = format!("w{n}");
                n += 1;
                let out = w
                    .cmd(home3)
                    .arg("--cwd")
                    .arg(proj3)
                    .args([
                        "record",
                        "add",
                        "--category",
                        "decisions",
                        "--key",
                        &key,
                        "load writer fact",
                    ])
                    .output();
                if out.is_ok_and(|o| o.status.success()) {
                    acked3.lock().unwrap().push(key);
                }
            }
        });
        let (stop4, wal4, db4) = (stop.clone(), wal_max.clone(), &db);
        s.spawn(move || {
            let wal = PathBuf::from(format!("{}-wal", db4.display()));
            while !stop4.load(Ordering::Relaxed) {
                let size = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
                wal4.fetch_max(size, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        std::thread::sleep(secs);
        stop.store(true, Ordering::Relaxed);
    });
    // Acknowledged records must be in the index now, not after a reindex.
    let keys = acked.lock().unwrap().clone();
    let c = rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let mut missing = 0;
    for k in &keys {
        let n: i64 = c.query_row("SELECT count(*) FROM records WHERE key = ?1", [k], |r| {
            r.get(0)
        })?;
        missing += usize::from(n == 0);
    }
    let mut l = lat.lock().unwrap().clone();
    let (p50, p99) = (percentile(&mut l.clone(), 0.5), percentile(&mut l, 0.99));
    let wal_mb = wal_max.load(Ordering::Relaxed) as f64 / 1e6;
    let f = failures.load(Ordering::Relaxed);
    let m = misses.load(Ordering::Relaxed);
    Ok(vec![
        row(
            "load",
            "hook runs / records added",
            format!("{} / {}", l.len(), keys.len()),
            "",
            true,
        ),
        row("load", "hook failures", f, "0", f == 0),
        row("load", "hook deadline misses", m, "0", m == 0),
        row(
            "load",
            "acknowledged records missing from the index",
            missing,
            "0",
            missing == 0,
        ),
        row(
            "load",
            "hook p50 ms: 8 hooks alone / with the writers",
            format!("{idle_p50:.1} / {p50:.1}"),
            "",
            true,
        ),
        row(
            "load",
            "hook p99 ms: 8 hooks alone / with the writers",
            format!("{idle_p99:.1} / {p99:.1} ({:.2}x)", p99 / idle_p99),
            if gate_time {
                "<= 3x alone"
            } else {
                "<= 3x alone (gated in the full form)"
            },
            !gate_time || p99 <= 3.0 * idle_p99,
        ),
        row(
            "load",
            "largest WAL (MB)",
            format!("{wal_mb:.1}"),
            "<= 64",
            wal_mb <= 64.0,
        ),
    ])
}

/// Latencies of 8 concurrent hook loops run for `secs`.
fn hooks_only(w: &World, home: &Path, proj: &Path, secs: Duration) -> Vec<f64> {
    let stop = AtomicBool::new(false);
    let lat = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    if let Ok((ms, _, _)) = hook_once(w, home, proj) {
                        lat.lock().unwrap().push(ms);
                    }
                }
            });
        }
        std::thread::sleep(secs);
        stop.store(true, Ordering::Relaxed);
    });
    lat.into_inner().unwrap()
}

fn write_corpus_file(dir: &Path, n: usize) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    let id = format!("g{n:05}");
    std::fs::write(
        dir.join(format!("{id}.jsonl")),
        transcript(&id, "growth", 200, n as u64),
    )?;
    Ok(())
}

// ---------------------------------------------------------------- fuzz

fn fuzzing(inputs: u64, seed: u64) -> Result<Vec<Row>> {
    use recall::recall::sanitize::{extract_terms, to_match};
    let c = rusqlite::Connection::open_in_memory()?;
    c.execute_batch(
        "CREATE VIRTUAL TABLE t USING fts5(title, body, aux, tokenize = 'unicode61 remove_diacritics 2');
         INSERT INTO t VALUES ('redis pool', 'the checkout redis pool is exhausted', 'redi pool');",
    )?;
    let alphabet: Vec<char> =
        "abcXYZ019 \"'*^:-+()[]{}.,;!?/\\<>=&|~`#@$%_\t\nNOTANDORNEAR éü中文🙂\u{202e}\u{0}"
            .chars()
            .collect();
    let mut r = Rng(seed | 1);
    let (mut panics, mut sql_errors) = (0u64, 0u64);
    let query_inputs = inputs * 4 / 5;
    for _ in 0..query_inputs {
        let len = r.below(60) as usize;
        let q: String = (0..len)
            .map(|_| alphabet[r.below(alphabet.len() as u64) as usize])
            .collect();
        let res = std::panic::catch_unwind(|| to_match(&extract_terms(&q)));
        match res {
            Err(_) => panics += 1,
            Ok(Some(m)) => {
                if c.prepare_cached("SELECT count(*) FROM t WHERE t MATCH ?1")
                    .and_then(|mut st| st.query_row([&m], |row| row.get::<_, i64>(0)))
                    .is_err()
                {
                    sql_errors += 1;
                }
            }
            Ok(None) => {}
        }
    }
    // Parsers on mutated fixtures.
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let files: Vec<Vec<u8>> = walkdir::WalkDir::new(&fixtures)
        .into_iter()
        .flatten()
        .filter(|e| {
            e.path()
                .extension()
                .is_some_and(|x| x == "jsonl" || x == "json" || x == "md" || x == "txt")
        })
        .filter_map(|e| std::fs::read(e.path()).ok())
        .collect();
    let opts = recall::ingest::claude_code::Options::default();
    let copts = recall::ingest::codex::Options::default();
    let parser_inputs = inputs - query_inputs;
    for i in 0..parser_inputs {
        let mut b = files[(i as usize) % files.len()].clone();
        for _ in 0..1 + r.below(8) {
            if b.is_empty() {
                break;
            }
            let at = r.below(b.len() as u64) as usize;
            match r.below(4) {
                0 => b[at] ^= 1 << r.below(8),
                1 => b.truncate(at),
                2 => b.insert(at, b"{}[]\":,\n\\"[r.below(9) as usize]),
                _ => drop(b.remove(at)),
            }
        }
        let ok = std::panic::catch_unwind(|| {
            recall::ingest::claude_code::parse(&b, 1, "f", &opts);
            recall::ingest::codex::parse(&b, 1, "f", &copts);
            recall::ingest::neutral::parse(&b, 1, "f");
            recall::ingest::chatlog::parse(&b, "f");
            let _ = recall::ingest::ticket::parse(&b, "f");
        });
        panics += u64::from(ok.is_err());
    }
    Ok(vec![
        row(
            "fuzz",
            "inputs (queries + mutated files)",
            format!("{query_inputs} + {parser_inputs}"),
            "",
            true,
        ),
        row("fuzz", "panics", panics, "0", panics == 0),
        row(
            "fuzz",
            "MATCH expressions SQLite rejected",
            sql_errors,
            "0",
            sql_errors == 0,
        ),
    ])
}

// ---------------------------------------------------------------- secrets

/// What `recall serve` answers about the secrets home: a refused write of
/// a secret, both lists and recall in every format. Every body, concatenated.
fn served(w: &World, home: &Path, project: &str, planted: &[String]) -> Result<String> {
    let Some((mut child, base)) = start_serve(w, home)? else {
        bail!("recall serve did not start on the secrets home");
    };
    let agent = http_agent();
    let mut out = String::new();
    let mut body = |r: Result<ureq::http::Response<ureq::Body>, ureq::Error>| -> Result<()> {
        out.push_str(&r?.body_mut().read_to_string()?);
        Ok(())
    };
    let write =
        serde_json::json!({"key": "api-leak", "value": format!("the key is {}", planted[3])});
    body(
        agent
            .post(format!("{base}/api/projects/{project}/memories"))
            .header("Content-Type", "application/json")
            .send(write.to_string()),
    )?;
    body(
        agent
            .get(format!("{base}/api/projects/{project}/memories"))
            .call(),
    )?;
    body(agent.get(format!("{base}/api/user/memories")).call())?;
    for fmt in ["json", "prompt", "snippets"] {
        for q in [
            "deploy+credential+rotate",
            "leaked+token",
            "Deploy+with+set",
            "CI+uploads",
        ] {
            body(
                agent
                    .get(format!(
                        "{base}/api/projects/{project}/recall?q={q}&format={fmt}"
                    ))
                    .call(),
            )?;
        }
    }
    child.kill()?;
    child.wait()?;
    // 1 refused write, then 2 lists and 12 recalls that must have answered.
    let answered = out.matches("\"success\":true").count();
    if answered != 14 {
        bail!("recall serve answered {answered} of 14 reads on the secrets home: {out}");
    }
    Ok(out)
}

/// Does `haystack` hold `secret`, whole or as one of its alphanumeric runs
/// of 8+ characters in any case (a slug, a lowercased key, an FTS term)?
/// Runs of digits alone are left out: a timestamp could hold one.
fn holds(haystack: &str, secret: &str) -> bool {
    let lower = haystack.to_ascii_lowercase();
    haystack.contains(secret)
        || secret
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| w.len() >= 8 && !w.bytes().all(|b| b.is_ascii_digit()))
            .any(|w| lower.contains(&w.to_ascii_lowercase()))
}

fn secrets(w: &World) -> Result<Vec<Row>> {
    let home = w.root.join("secrets/home");
    let proj = w.root.join("secrets/project");
    std::fs::create_dir_all(proj.join(".git"))?;
    let planted: Vec<String> = vec![
        format!("ghp_{}", "T0rtur3Gh0stKeyAbCdEfGhIjKlMnOpQrStU"),
        format!("AKIA{}", "TORTURE7Q2X9K4LM"),
        format!(
            "sk-ant-api03-{}",
            "t0rtur3-Zq8Xw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7Aa6"
        ),
        format!("xoxb-{}", "1234567890-1234567890123-T0rtur3S1ackT0kenAbCd"),
        format!("npm_{}", "T0rtur3NpmT0kenAbCdEfGhIjKlMnOpQrStU"),
        format!("glpat-{}", "T0rtur3GitLab9xYzAbCd"),
        format!("hf_{}", "T0rtur3HuggingFace9xYzAbCdEfGhIjKlMn"),
        // Issue #26: kinds that were stored as is in every channel.
        format!("pypi-AgEIcHlwaS5vcmc{}", "T0rtur3PyPi".repeat(6)),
        format!("SK{}", "7f3a9c0e1b5d28467f3a9c0e1b5d2846"),
        format!(
            "SG.{}.{}",
            "T0rtur3SendGr1dAbCdEfG", "T0rtur3SendGr1dAbCdEfGhIjKlMnOpQrStUvWxYz01"
        ),
        format!(
            "MTIzNDU2Nzg5MDEyMzQ1Njc4.{}.{}",
            "T0rtAb", "T0rtur3D1sc0rdAbCdEfGhIjKlMnOpQrStUv"
        ),
        format!("shpat_{}", "7f3a9c0e1b5d28467f3a9c0e1b5d2846"),
        format!("key-{}", "a7f3a9c0e1b5d28467f3a9c0e1b5d284"),
        format!("123456789:AA{}", "T0rtur3Te1egramAbCdEfGhIjKlMnOpQr"),
        format!("dop_v1_{}", "7f3a9c0e1b5d2846".repeat(4)),
        format!("glpat-{}", "TorturGitLabNoDigitAb"),
        format!("AKIA{}EXAMPLE", "IOSFODNN7"),
        "T0rtur3MySqlPw9".to_string(),
        "T0rtur3NetrcPw9".to_string(),
        "T0rtur3SshPw9x".to_string(),
        "VDBydHVyM0RvY2tlckF1dGg=".to_string(),
    ];
    // The sentence each secret travels in: a password needs the command
    // or file that names it.
    let carrier = |s: &str| -> String {
        match s {
            _ if s.contains("MySql") => format!("Migrate with mysql -u app -p{s} appdb."),
            _ if s.contains("Netrc") => {
                format!("The netrc says machine git.example.org login ci password {s} today.")
            }
            _ if s.contains("SshPw") => format!("Deploy with sshpass -p '{s}' ssh ci@host now."),
            _ if s.ends_with('=') => {
                format!("Docker config has {{\"auth\": \"{s}\"}} for the registry.")
            }
            _ => format!("We decided to rotate the deploy credential {s} every week."),
        }
    };
    let known = planted
        .iter()
        .filter(|s| !recall::secrets::scan(&carrier(s)).is_empty())
        .count();
    let pc = |args: &[&str]| -> Result<Output> {
        Ok(w.cmd(&home).arg("--cwd").arg(&proj).args(args).output()?)
    };
    // A neutral transcript, and a Claude Code one with secrets in cwd and
    // branch too.
    let t = w.root.join("secrets/s.jsonl");
    let mut text = String::new();
    for (i, s) in planted.iter().enumerate() {
        text.push_str(
            &serde_json::json!({"role": "user", "content": carrier(s), "id": format!("m{i}")})
                .to_string(),
        );
        text.push('\n');
    }
    std::fs::write(&t, text)?;
    let cc = w.root.join("secrets/cc.jsonl");
    let cc_line = serde_json::json!({
        "type": "user", "uuid": "u1", "parentUuid": null, "sessionId": "cc-secret",
        "timestamp": "2020-01-01T00:00:00Z", "cwd": format!("/tmp/{}", planted[0]),
        "gitBranch": planted[1], "message": {"role": "user", "content": format!("Always use the staging key {} for smoke tests.", planted[2])},
    });
    std::fs::write(&cc, format!("{cc_line}\n"))?;
    let ticket = w.root.join("secrets/TICK-1.md");
    std::fs::write(
        &ticket,
        format!(
            "# Rotate credentials\n\nThe leaked token was {}.\n\nAlso rotate {} and {}.\n",
            planted[3], planted[4], planted[5]
        ),
    )?;
    pc(&["index", t.to_str().unwrap(), cc.to_str().unwrap()])?;
    pc(&["index", "--kind", "ticket", ticket.to_str().unwrap()])?;
    pc(&[
        "record",
        "add",
        "--redact",
        "--category",
        "incidents",
        "--key",
        "leak",
        &format!("token {} leaked", planted[0]),
    ])?;
    pc(&[
        "remember",
        "--redact",
        &format!("The CI uses {} for uploads.", planted[1]),
    ])?;
    pc(&[
        "remember",
        "--redact",
        &format!("Model downloads use {} in CI.", planted[6]),
    ])?;
    // Issue #26: keys, ids and file names built from the text (or given)
    // before redaction held the secret, lowercased.
    for (i, s) in planted.iter().enumerate() {
        let text = carrier(s);
        pc(&["remember", "--redact", "--category", "incidents", &text])?;
        let key = format!("k{i} {text}");
        pc(&["record", "add", "--redact", "--key", &key, &text])?;
    }
    // A record file written by hand (the user's own file keeps its text).
    let dir_out = pc(&["project", "show", "--json"])?;
    let dir: serde_json::Value = serde_json::from_slice(&dir_out.stdout)?;
    let store = PathBuf::from(dir["dir"].as_str().context("no store dir")?);
    std::fs::create_dir_all(store.join("records/procedures"))?;
    let hand = store.join("records/procedures/hand.md");
    std::fs::write(&hand, format!("---\nid: hand\nkey: hand written\ncategory: procedures\nscope: project\nsource: manual\ncreated: 2020-01-01T00:00:00Z\nupdated: 2020-01-01T00:00:00Z\n---\n\nDeploy with {} set.\n", planted[2]))?;
    pc(&["extract", "--extractor", "builtin", "--since", "2000-01-01"])?;
    let mut outputs = String::new();
    for fmt in ["json", "prompt", "snippets"] {
        for q in [
            "deploy credential rotate",
            "staging key smoke tests",
            "leaked token",
            "CI uploads",
            "Deploy with set",
        ] {
            let o = pc(&["query", "--format", fmt, q])?;
            outputs.push_str(&String::from_utf8_lossy(&o.stdout));
        }
    }
    let payload = serde_json::json!({"session_id": "x", "cwd": proj, "hook_event_name": "UserPromptSubmit", "prompt": "deploy credential staging key"});
    let mut child = w
        .cmd(&home)
        .args(["hook", "claude-code"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.to_string().as_bytes())?;
    outputs.push_str(&String::from_utf8_lossy(&child.wait_with_output()?.stdout));
    outputs.push_str(&served(
        w,
        &home,
        dir["id"].as_str().unwrap_or(""),
        &planted,
    )?);
    let mut stored = BTreeSet::new();
    for e in walkdir::WalkDir::new(&home).into_iter().flatten() {
        if e.path() == hand {
            continue;
        }
        let rel = e.path().strip_prefix(&home).unwrap_or(e.path()).display();
        let name = e.path().to_string_lossy();
        let bytes = if e.file_type().is_file() {
            std::fs::read(e.path()).unwrap_or_default()
        } else {
            Vec::new()
        };
        for s in &planted {
            if holds(&String::from_utf8_lossy(&bytes), s) {
                stored.insert(format!("{} in {rel}", &s[..8]));
            }
            if holds(&name, s) {
                stored.insert(format!("{} in the name {rel}", &s[..8]));
            }
        }
    }
    let shown = planted.iter().filter(|s| holds(&outputs, s)).count();
    let redacted = outputs.matches("[REDACTED:").count();
    let leaks = if stored.is_empty() {
        "0".to_string()
    } else {
        format!(
            "{}: {}",
            stored.len(),
            stored.iter().cloned().collect::<Vec<_>>().join("; ")
        )
    };
    Ok(vec![
        row(
            "secrets",
            "planted secrets the detector knows (9 input paths)",
            format!("{known} of {}", planted.len()),
            "all",
            known == planted.len(),
        ),
        row(
            "secrets",
            "files under the home holding one",
            leaks,
            "0",
            stored.is_empty(),
        ),
        row(
            "secrets",
            "secrets in query, hook and server output",
            shown,
            "0",
            shown == 0,
        ),
        row(
            "secrets",
            "[REDACTED:...] marks in the output",
            redacted,
            "> 0",
            redacted > 0,
        ),
    ])
}

// ---------------------------------------------------------------- isolation

fn isolation(w: &World, seed: u64) -> Result<Vec<Row>> {
    let home = w.root.join("iso/home");
    let mut r = Rng(seed | 1);
    let dirs: Vec<PathBuf> = [
        "a/my.app",
        "a/my-app",
        "b/my.app",
        "a/My App",
        "c/x",
        "c/x/nested",
    ]
    .iter()
    .map(|d| w.root.join("iso/work").join(d))
    .collect();
    let mut markers = Vec::new();
    for d in &dirs {
        std::fs::create_dir_all(d.join(".git"))?;
        let m = format!("zq{}marker", r.below(1_000_000_000));
        let out = w
            .cmd(&home)
            .arg("--cwd")
            .arg(d)
            .args([
                "record",
                "add",
                "--category",
                "decisions",
                "--key",
                &m,
                &format!("the {m} lives here"),
            ])
            .output()?;
        if !out.status.success() {
            bail!(
                "record add in {}: {}",
                d.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        markers.push(m);
    }
    let (mut cross, mut own) = (0, 0);
    for (i, d) in dirs.iter().enumerate() {
        for (j, m) in markers.iter().enumerate() {
            let out = w
                .cmd(&home)
                .arg("--cwd")
                .arg(d)
                .args(["query", "--format", "json", m])
                .output()?;
            // The hits' text, not the document (which echoes the query).
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
            let found = v["hits"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|h| h["text"].as_str().is_some_and(|t| t.contains(m.as_str())));
            if i == j {
                own += usize::from(found);
            } else {
                cross += usize::from(found);
            }
        }
    }
    Ok(vec![
        row(
            "isolation",
            "projects (colliding names included)",
            dirs.len(),
            "",
            true,
        ),
        row(
            "isolation",
            "own markers found",
            format!("{own} of {}", dirs.len()),
            "all",
            own == dirs.len(),
        ),
        row("isolation", "cross-project hits", cross, "0", cross == 0),
    ])
}

// ---------------------------------------------------------------- hostile

fn hostile(w: &World) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    let no_panic = |o: &Output| o.status.code().is_some_and(|c| c <= 3);
    // A bad config.
    let home = w.root.join("hostile/config");
    std::fs::create_dir_all(&home)?;
    std::fs::write(
        home.join("config.toml"),
        "[recall.tuning]\ncandidates = 0\n",
    )?;
    let o = w.run(&home, &["--project", "p", "query", "x"])?;
    let err = String::from_utf8_lossy(&o.stderr);
    let ok =
        o.status.code() == Some(2) && err.contains("config.toml:2") && err.contains("at least 1");
    rows.push(row(
        "hostile",
        "bad config: exit 2 with file:line and range",
        ok,
        "true",
        ok,
    ));
    // An index from an old schema, opened by this binary.
    let home = w.root.join("hostile/old");
    let out = w.run(
        &home,
        &[
            "--project",
            "p",
            "record",
            "add",
            "--category",
            "decisions",
            "--key",
            "k",
            "old fact",
        ],
    )?;
    let compat = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/compat/index-v1.db");
    if let (true, Some(db)) = (out.status.success(), index_db(&home, "p")) {
        std::fs::copy(&compat, &db)?;
        let o = w.run(&home, &["--project", "p", "query", "old fact"])?;
        let ok = no_panic(&o) && integrity_ok(&db);
        rows.push(row(
            "hostile",
            "old schema: upgraded and answers",
            ok,
            "true",
            ok,
        ));
    }
    // A symlinked records folder.
    let home = w.root.join("hostile/link");
    w.run(
        &home,
        &[
            "--project",
            "p",
            "record",
            "add",
            "--category",
            "decisions",
            "--key",
            "k",
            "linked fact",
        ],
    )?;
    if let Some(db) = index_db(&home, "p") {
        let store = db.parent().unwrap().to_path_buf();
        let elsewhere = w.root.join("hostile/elsewhere-records");
        std::fs::rename(store.join("records"), &elsewhere)?;
        std::os::unix::fs::symlink(&elsewhere, store.join("records"))?;
        let o = w.run(&home, &["--project", "p", "query", "linked fact"])?;
        let ok = o.status.success() && String::from_utf8_lossy(&o.stdout).contains("linked");
        rows.push(row(
            "hostile",
            "symlinked records folder: found",
            ok,
            "true",
            ok,
        ));
    }
    // A full disk: a 1 MB tmpfs, when this machine lets us mount one.
    let mnt = w.root.join("hostile/full");
    std::fs::create_dir_all(&mnt)?;
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
        .arg(&mnt)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if mounted {
        let home = mnt.join("home");
        let corpus = w.root.join("hostile/big");
        write_corpus(&corpus, 8, 400, 3)?;
        let first = w.run(
            &home,
            &[
                "--project",
                "p",
                "record",
                "add",
                "--category",
                "decisions",
                "--key",
                "k",
                "kept fact",
            ],
        )?;
        let o = w.run(
            &home,
            &["--project", "p", "index", corpus.to_str().unwrap()],
        )?;
        let err = String::from_utf8_lossy(&o.stderr);
        let clear =
            no_panic(&o) && (o.status.success() || err.contains("full") || err.contains("space"));
        let db = index_db(&home, "p");
        let intact = db.as_deref().is_some_and(integrity_ok);
        let kept = first.status.success()
            && w.run(&home, &["--project", "p", "record", "get", "k"])?
                .status
                .success();
        // A changed records folder on the full disk: a query still
        // answers from the index as it is (issue 26 item 8).
        if let Some(db) = &db {
            let _ = Command::new("touch")
                .arg(db.with_file_name("records").join("decisions"))
                .status();
        }
        let q = w.run(
            &home,
            &["--project", "p", "query", "--format", "prompt", "kept fact"],
        )?;
        let answers =
            q.status.success() && String::from_utf8_lossy(&q.stdout).contains("kept fact");
        let _ = Command::new("umount").arg(&mnt).status();
        rows.push(row(
            "hostile",
            "full disk: clear error, index intact, records kept, queries answer",
            format!("{clear}/{intact}/{kept}/{answers}"),
            "true/true/true/true",
            clear && intact && kept && answers,
        ));
    } else {
        rows.push(row(
            "hostile",
            "full disk",
            "skipped (cannot mount a tmpfs here)",
            "",
            true,
        ));
    }
    Ok(rows)
}
