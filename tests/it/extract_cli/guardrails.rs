//! `recall extract` and `recall summary` end to end: every guardrail, the
//! command protocol (with the fake extractors in `testdata/extractors/`),
//! leases, idempotence, dry runs, status, provenance and the builtin rules,
//! against real homes in temporary folders.
//!
//! Sessions are neutral JSONL transcripts with timestamps in 2020, so they
//! are long idle; `[extract] max_age_days` is raised so they are not too old.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

use crate::common::wait::until;
use crate::common::{assert_success, record_files, snapshot, Env};
use rusqlite::Connection;
use serde_json::{json, Value};

// ---------------------------------------------------------------------------
// Setup helpers

/// A temporary home whose config lets 2020 sessions be extracted.
fn env() -> Env {
    let env = Env::new();
    std::fs::create_dir_all(env.home()).unwrap();
    std::fs::write(
        env.home().join("config.toml"),
        "[extract]\nmax_age_days = 100000\n",
    )
    .unwrap();
    env
}

/// Where test transcripts live (outside the home).
fn sessions_dir(env: &Env) -> PathBuf {
    let d = env.tmp.path().join("sessions");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Write a neutral transcript `<id>.jsonl`; message `i` is stamped
/// `<day>T10:<i>:00Z` (and `id` `m<i>`).
fn write_session(env: &Env, id: &str, day: &str, msgs: &[(&str, String)]) -> PathBuf {
    let path = sessions_dir(env).join(format!("{id}.jsonl"));
    let mut text = json!({"session": {"id": id, "title": format!("session {id}")}}).to_string();
    text.push('\n');
    for (i, (role, content)) in msgs.iter().enumerate() {
        let line = json!({
            "role": role,
            "content": content,
            "id": format!("m{i}"),
            "timestamp": format!("{day}T10:{:02}:{:02}Z", i / 60 % 60, i % 60),
        });
        text.push_str(&line.to_string());
        text.push('\n');
    }
    std::fs::write(&path, text).unwrap();
    path
}

/// An ordinary conversation of well over 200 characters.
fn chat(topic: &str) -> Vec<(&'static str, String)> {
    vec![
        (
            "user",
            format!("The {topic} test is flaky on CI. Please find out why and fix it; keep the change small."),
        ),
        (
            "assistant",
            format!(
                "I looked at the {topic} test: it races the background file watcher, which sometimes \
                 fires after the assertion. I made the test wait for the watcher's first event before \
                 asserting, and it passed fifty runs in a row."
            ),
        ),
        ("user", "Great, thanks, that looks right to me.".to_string()),
    ]
}

fn index(env: &Env, path: &Path) {
    env.run(&["index", path.to_str().unwrap()]);
}

/// A session with an ordinary conversation, indexed.
fn indexed_session(env: &Env, id: &str) -> PathBuf {
    let p = write_session(env, id, "2020-03-01", &chat(id));
    index(env, &p);
    p
}

fn extractor(name: &str) -> String {
    let p = crate::common::testdata("extractors").join(name);
    format!("'{}'", p.display())
}

/// The fake `facts.py` extractor: its response file, call log and request
/// dumps, all outside the home.
struct Fake {
    facts: PathBuf,
    log: PathBuf,
    dump: PathBuf,
}

impl Fake {
    fn new(env: &Env) -> Fake {
        let d = env.tmp.path().join("fake");
        std::fs::create_dir_all(&d).unwrap();
        Fake {
            facts: d.join("facts.json"),
            log: d.join("calls.log"),
            dump: d.join("requests"),
        }
    }

    fn answer(&self, facts: Vec<Value>) {
        std::fs::write(&self.facts, json!({ "facts": facts }).to_string()).unwrap();
    }

    fn vars(&self) -> Vec<(String, String)> {
        vec![
            (
                "FAKE_EXTRACT_FACTS".into(),
                self.facts.display().to_string(),
            ),
            ("FAKE_EXTRACT_LOG".into(), self.log.display().to_string()),
            ("FAKE_EXTRACT_DUMP".into(), self.dump.display().to_string()),
        ]
    }

    /// `recall extract --json --extractor-cmd facts.py ARGS`.
    fn extract(&self, env: &Env, args: &[&str]) -> Value {
        let cmd = extractor("facts.py");
        let mut all = vec!["--extractor-cmd", cmd.as_str()];
        all.extend_from_slice(args);
        extract_with(env, &all, &self.vars())
    }

    /// One entry per extractor call.
    fn calls(&self) -> Vec<Value> {
        match std::fs::read_to_string(&self.log) {
            Ok(t) => t
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect(),
            Err(_) => vec![],
        }
    }

    fn request(&self, session: &str) -> Value {
        let p = self.dump.join(format!("{session}.json"));
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    }
}

fn fact(category: &str, key: &str, text: &str, confidence: f64) -> Value {
    json!({"category": category, "scope": "project", "key": key, "text": text,
           "confidence": confidence, "evidence": ["m0"]})
}

/// `recall extract --json ARGS` with extra environment; must exit 0.
fn extract_with(env: &Env, args: &[&str], vars: &[(String, String)]) -> Value {
    let mut c = env.cmd();
    c.arg("extract").arg("--json").args(args);
    for (k, v) in vars {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "recall extract {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "extract printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    assert_eq!(v["version"], 1, "{v}");
    v
}

/// `recall extract --status --json`, by session id.
fn status(env: &Env) -> BTreeMap<String, Value> {
    let out = env.run(&["extract", "--status", "--json"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| (r["session_id"].as_str().unwrap().to_string(), r.clone()))
        .collect()
}

fn list(env: &Env, source: &str) -> Vec<Value> {
    let out = env.run(&["record", "list", "--source", source, "--format", "json"]);
    serde_json::from_str::<Value>(&out)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

fn auto_keys(env: &Env) -> Vec<String> {
    let mut v: Vec<String> = list(env, "auto")
        .iter()
        .map(|r| r["key"].as_str().unwrap().to_string())
        .collect();
    v.sort();
    v
}

fn get(env: &Env, key: &str) -> Option<Value> {
    let out = env
        .cmd()
        .args(["record", "get", key, "--format", "json"])
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| serde_json::from_slice(&out.stdout).unwrap())
}

fn outcome<'a>(report: &'a Value, session: &str) -> &'a Value {
    report["report"]["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["session_id"] == session)
        .unwrap_or_else(|| panic!("no outcome for {session}: {report}"))
}

fn record_snapshot(env: &Env) -> Vec<(PathBuf, Vec<u8>)> {
    record_files(&env.home())
        .into_iter()
        .map(|p| {
            let b = std::fs::read(&p).unwrap();
            (p, b)
        })
        .collect()
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

// ---------------------------------------------------------------------------
// Guardrails

#[test]
fn short_transcript_is_skipped_with_a_reason_and_no_records() {
    let env = env();
    let fake = Fake::new(&env);
    fake.answer(vec![fact(
        "decisions",
        "fact of {{session}}",
        "The {{session}} session taught us to pin the toolchain version.",
        0.9,
    )]);
    // 199 characters of text in all: skipped. 200: extracted.
    write_session(
        &env,
        "short",
        "2020-03-01",
        &[("user", "u".repeat(100)), ("assistant", "a".repeat(99))],
    );
    write_session(
        &env,
        "enough",
        "2020-03-01",
        &[("user", "u".repeat(100)), ("assistant", "a".repeat(100))],
    );
    index(&env, &sessions_dir(&env));
    let r = fake.extract(&env, &[]);
    let short = outcome(&r, "short");
    assert_eq!(short["state"], "skipped", "{r}");
    assert!(
        short["reason"].as_str().unwrap().contains("200"),
        "the reason says why: {short}"
    );
    assert_eq!(short["kept"], json!([]));
    assert_eq!(outcome(&r, "enough")["state"], "done", "{r}");
    let called: Vec<Value> = fake.calls().iter().map(|c| c["session"].clone()).collect();
    assert_eq!(
        called,
        [json!("enough")],
        "the extractor never sees 'short'"
    );
    assert_eq!(auto_keys(&env), ["auto:fact-of-enough"]);
    let st = status(&env);
    assert_eq!(st["short"]["state"], "skipped");
    assert!(st["short"]["reason"].as_str().unwrap().contains("200"));
}

#[test]
fn command_input_is_capped_at_12000_chars() {
    let env = env();
    let fake = Fake::new(&env);
    fake.answer(vec![]);
    let mut msgs = vec![(
        "user",
        "Please migrate the whole billing module to the new ledger API.".to_string(),
    )];
    for i in 0..40 {
        let role = if i % 2 == 0 { "assistant" } else { "user" };
        msgs.push((
            role,
            format!("step {i}: {}", "ledger entries balance out. ".repeat(60)),
        ));
    }
    let total: usize = msgs.iter().map(|(_, t)| t.chars().count()).sum();
    assert!(total > 60_000, "the session is long: {total}");
    write_session(&env, "long", "2020-03-01", &msgs);
    index(&env, &sessions_dir(&env));
    fake.extract(&env, &[]);
    let calls = fake.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    let n = calls[0]["transcript_chars"].as_u64().unwrap();
    assert!(n <= 12_000, "transcript of {n} chars sent to the command");
    assert!(n >= 6_000, "the cap still sends a useful amount: {n}");
    let req = fake.request("long");
    let transcript = req["transcript"].as_str().unwrap();
    assert!(
        transcript.starts_with("user: Please migrate the whole billing module"),
        "the first request is kept: {}",
        &transcript[..80]
    );
    assert_eq!(req["max_facts"], 5);
    assert_eq!(req["session"]["id"], "long");
}

#[test]
fn at_most_five_facts_per_session() {
    let env = env();
    indexed_session(&env, "s1");
    let fake = Fake::new(&env);
    let texts = [
        ("pnpm", "Install JavaScript packages with pnpm."),
        ("port", "The API server listens on port 8080 behind nginx."),
        (
            "utc",
            "Timestamps are stored in UTC and rendered in local time.",
        ),
        (
            "flags",
            "Feature flags live in LaunchDarkly, never in env files.",
        ),
        ("deploys", "Deploys go through the staging cluster first."),
        ("migrations", "Database migrations must be reversible."),
        ("logging", "Structured logging uses JSON lines on stderr."),
        (
            "retries",
            "HTTP clients retry idempotent calls three times.",
        ),
    ];
    let facts: Vec<Value> = texts
        .iter()
        .enumerate()
        .map(|(i, (k, t))| fact("decisions", k, t, 0.95 - 0.04 * i as f64))
        .collect();
    fake.answer(facts);
    let r = fake.extract(&env, &[]);
    assert_eq!(r["report"]["records"], 5, "{r}");
    // The five most confident are kept.
    assert_eq!(
        auto_keys(&env),
        [
            "auto:deploys",
            "auto:flags",
            "auto:pnpm",
            "auto:port",
            "auto:utc"
        ]
    );
    assert_eq!(record_files(&env.home()).len(), 5);
    let dropped = outcome(&r, "s1")["dropped"].as_array().unwrap().clone();
    assert_eq!(dropped.len(), 3, "{dropped:?}");
    assert!(dropped
        .iter()
        .all(|d| d.as_str().unwrap().contains("limit of 5")));
}

#[test]
fn facts_below_confidence_threshold_are_dropped() {
    let env = env();
    indexed_session(&env, "s1");
    let fake = Fake::new(&env);
    fake.answer(vec![
        fact(
            "decisions",
            "half sure",
            "Cache entries expire after ten minutes.",
            0.5,
        ),
        fact(
            "decisions",
            "almost",
            "Releases are tagged from the main branch only.",
            0.59,
        ),
        fact(
            "decisions",
            "sure enough",
            "Use pnpm workspaces for the monorepo.",
            0.6,
        ),
    ]);
    let r = fake.extract(&env, &[]);
    assert_eq!(auto_keys(&env), ["auto:sure-enough"], "{r}");
    let dropped = outcome(&r, "s1")["dropped"].to_string();
    assert!(dropped.contains("half sure: confidence 0.50"), "{dropped}");
    assert!(dropped.contains("almost: confidence 0.59"), "{dropped}");
    let rec = get(&env, "auto:sure-enough").unwrap();
    assert_eq!(rec["confidence"], 0.6);
}

#[test]
fn near_duplicate_facts_in_one_batch_become_one_record() {
    let env = env();
    indexed_session(&env, "s1");
    let fake = Fake::new(&env);
    fake.answer(vec![
        fact(
            "decisions",
            "sqlite wal",
            "We decided to use SQLite with WAL for the local cache.",
            0.7,
        ),
        fact(
            "decisions",
            "sqlite cache",
            "We decided to use SQLite with WAL for the local cache!",
            0.8,
        ),
        fact(
            "procedures",
            "staging",
            "Deploys go through the staging cluster first.",
            0.7,
        ),
    ]);
    let r = fake.extract(&env, &[]);
    // The more confident of the two near-identical facts wins.
    assert_eq!(
        auto_keys(&env),
        ["auto:sqlite-cache", "auto:staging"],
        "{r}"
    );
    assert_eq!(record_files(&env.home()).len(), 2);
    let dropped = outcome(&r, "s1")["dropped"].to_string();
    assert!(dropped.contains("duplicate of kept candidate"), "{dropped}");
}

#[test]
fn fact_near_duplicate_of_an_existing_record_is_not_stored() {
    let env = env();
    indexed_session(&env, "s1");
    env.add(
        "decisions",
        "sqlite",
        "We decided to use SQLite with WAL for the local cache.",
    );
    let fake = Fake::new(&env);
    fake.answer(vec![
        fact(
            "decisions",
            "sqlite cache",
            "we decided: use SQLite with WAL for local cache",
            0.9,
        ),
        fact(
            "procedures",
            "staging",
            "Deploys go through the staging cluster first.",
            0.7,
        ),
    ]);
    let r = fake.extract(&env, &[]);
    assert_eq!(auto_keys(&env), ["auto:staging"], "{r}");
    let dropped = outcome(&r, "s1")["dropped"].to_string();
    assert!(
        dropped.contains("duplicate of existing record"),
        "{dropped}"
    );
    // The extractor was told about the existing record, too.
    let existing = fake.request("s1")["existing"].to_string();
    assert!(existing.contains("SQLite with WAL"), "{existing}");
}

#[test]
fn auto_keys_are_normalised_slugs() {
    let env = env();
    indexed_session(&env, "s1");
    let fake = Fake::new(&env);
    fake.answer(vec![
        fact(
            "preferences",
            "Use PNPM, not npm!!",
            "Use pnpm, not npm, for installs.",
            0.8,
        ),
        fact(
            "procedures",
            "  --Run__the::tests--  ",
            "Run the tests with `cargo test --all`.",
            0.8,
        ),
    ]);
    fake.extract(&env, &[]);
    assert_eq!(
        auto_keys(&env),
        ["auto:run-the-tests", "auto:use-pnpm-not-npm"]
    );
    let rec = get(&env, "auto:use-pnpm-not-npm").expect("found by its slug key");
    assert_eq!(rec["text"], "Use pnpm, not npm, for installs.");
}

#[test]
fn changed_session_updates_the_auto_record_with_the_same_key() {
    let env = env();
    let mut msgs = chat("upsert");
    let path = write_session(&env, "s1", "2020-03-01", &msgs);
    index(&env, &path);
    let fake = Fake::new(&env);
    let old = "Use pnpm, not npm, for installing packages.";
    let new = "Always install JavaScript dependencies with pnpm; CI rejects npm lockfiles.";
    fake.answer(vec![fact("preferences", "Use PNPM, not npm!!", old, 0.8)]);
    fake.extract(&env, &[]);
    let first = get(&env, "auto:use-pnpm-not-npm").unwrap();
    assert_eq!(first["text"], old);

    // The session goes on (still long idle), is re-indexed, and the
    // extractor now words the same fact differently.
    msgs.push((
        "user",
        "Also: CI now rejects npm lockfiles, so pnpm is mandatory.".into(),
    ));
    write_session(&env, "s1", "2020-03-01", &msgs);
    index(&env, &path);
    fake.answer(vec![fact("preferences", "Use PNPM, not npm!!", new, 0.85)]);
    let r = fake.extract(&env, &[]);
    assert_eq!(outcome(&r, "s1")["state"], "done", "{r}");
    assert_eq!(
        fake.calls().len(),
        2,
        "the changed session was extracted again"
    );

    assert_eq!(auto_keys(&env), ["auto:use-pnpm-not-npm"]);
    let second = get(&env, "auto:use-pnpm-not-npm").unwrap();
    assert_eq!(second["text"], new);
    assert_eq!(
        second["id"], first["id"],
        "updated in place, not re-created"
    );
    assert_eq!(second["confidence"], 0.85);
    let files = record_files(&env.home());
    assert_eq!(files.len(), 1, "{files:?}");
    let body = std::fs::read_to_string(&files[0]).unwrap();
    assert!(body.contains(new) && !body.contains(old), "{body}");
}

#[test]
fn secrets_in_facts_are_never_stored() {
    let env = env();
    indexed_session(&env, "s1");
    let secret = format!("ghp_{}", "a1B2".repeat(9));
    let fake = Fake::new(&env);
    fake.answer(vec![
        fact(
            "procedures",
            "ci token",
            &format!("CI pushes releases with the token {secret} from the vault."),
            0.9,
        ),
        fact(
            "procedures",
            &format!("token {secret}"),
            "Release pushes authenticate with the GitHub token from the vault.",
            0.9,
        ),
        fact(
            "procedures",
            "staging",
            "Deploys go through the staging cluster first.",
            0.7,
        ),
    ]);
    let r = fake.extract(&env, &[]);
    assert_eq!(
        auto_keys(&env),
        ["auto:staging"],
        "only the clean fact is kept: {r}"
    );
    for (path, bytes) in snapshot(&env.home()) {
        assert!(
            !contains(&bytes, secret.as_bytes()),
            "the secret was stored in {}",
            path.display()
        );
    }
}

#[test]
fn manual_records_are_never_overwritten_or_deleted() {
    let env = env();
    indexed_session(&env, "s1");
    // Manual records that hold exactly the keys the extractor will produce,
    // in both scopes.
    env.add(
        "preferences",
        "auto:use-pnpm",
        "Yarn is fine for the docs site.",
    );
    env.run(&[
        "record",
        "add",
        "--scope",
        "user",
        "--category",
        "preferences",
        "--key",
        "auto:prefer-tabs",
        "Spaces everywhere, whatever the extractor thinks.",
    ]);
    let before = record_snapshot(&env);
    assert_eq!(before.len(), 2);
    let fake = Fake::new(&env);
    let mut tabs = fact(
        "preferences",
        "Prefer tabs",
        "Indent code with tabs, always.",
        0.9,
    );
    tabs["scope"] = json!("user");
    fake.answer(vec![
        fact(
            "preferences",
            "Use pnpm",
            "Use pnpm for every package install.",
            0.9,
        ),
        tabs,
    ]);
    let r = fake.extract(&env, &[]);
    assert_eq!(r["report"]["records"], 0, "{r}");
    let dropped = outcome(&r, "s1")["dropped"].to_string();
    assert_eq!(
        dropped.matches("a manual record has this key").count(),
        2,
        "{dropped}"
    );
    assert_eq!(before, record_snapshot(&env), "manual files untouched");
    assert!(auto_keys(&env).is_empty());
    assert_eq!(
        get(&env, "auto:use-pnpm").unwrap()["source"],
        "manual",
        "still the manual record"
    );
}

#[test]
fn second_run_over_unchanged_sessions_creates_nothing() {
    let env = env();
    write_session(&env, "s1", "2020-03-01", &chat("alpha"));
    write_session(&env, "s2", "2020-03-02", &chat("bravo"));
    index(&env, &sessions_dir(&env));
    let fake = Fake::new(&env);
    fake.answer(vec![fact(
        "incidents",
        "{{session}} flake",
        "The {{session}} flake came from the file watcher racing the assertion.",
        0.8,
    )]);
    let r = fake.extract(&env, &[]);
    assert_eq!(r["report"]["records"], 2, "{r}");
    let records = record_snapshot(&env);
    let listed = list(&env, "auto");
    let states = status(&env);

    let r2 = fake.extract(&env, &[]);
    assert_eq!(r2["report"]["sessions"], 0, "{r2}");
    assert_eq!(r2["report"]["records"], 0, "{r2}");
    assert_eq!(fake.calls().len(), 2, "the extractor is not called again");
    assert_eq!(records, record_snapshot(&env));
    assert_eq!(listed, list(&env, "auto"));
    assert_eq!(states, status(&env));
}

// ---------------------------------------------------------------------------
// Leases

/// `recall extract --json ARGS` as a background process.
fn spawn_extract(env: &Env, args: &[&str], vars: &[(String, String)]) -> Child {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_recall"));
    c.env_remove("RECALL_HOME")
        .env_remove("RECALL_PROJECT")
        .env("NO_COLOR", "1")
        .arg("--home")
        .arg(env.home())
        .arg("--project")
        .arg(&env.project)
        .arg("extract")
        .arg("--json")
        .args(args)
        .current_dir(env.tmp.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in vars {
        c.env(k, v);
    }
    c.spawn().unwrap()
}

fn finish(child: Child) -> Value {
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "extract failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn calls_per_session(fake: &Fake) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for c in fake.calls() {
        *m.entry(c["session"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    m
}

#[test]
fn concurrent_runs_never_process_a_session_twice() {
    let env = env();
    for i in 0..20 {
        write_session(
            &env,
            &format!("s{i:02}"),
            &format!("2020-03-{:02}", i + 1),
            &chat(&format!("topic{i}")),
        );
    }
    index(&env, &sessions_dir(&env));
    let fake = Fake::new(&env);
    fake.answer(vec![]);
    let mut vars = fake.vars();
    vars.push(("FAKE_EXTRACT_SLEEP_MS".into(), "100".into()));
    let cmd = extractor("facts.py");
    let args = ["--extractor-cmd", cmd.as_str()];
    let a = spawn_extract(&env, &args, &vars);
    let b = spawn_extract(&env, &args, &vars);
    let (ra, rb) = (finish(a), finish(b));
    let calls = calls_per_session(&fake);
    assert_eq!(calls.len(), 20, "every session processed: {calls:?}");
    let twice: Vec<_> = calls.iter().filter(|(_, n)| **n != 1).collect();
    assert!(twice.is_empty(), "processed more than once: {twice:?}");
    let done = ra["report"]["done"].as_u64().unwrap() + rb["report"]["done"].as_u64().unwrap();
    assert_eq!(done, 20, "{ra}\n{rb}");
    assert!(status(&env).values().all(|s| s["state"] == "done"));
}

/// Deterministic version of the race above: run A holds `s1` (the newest
/// session) while run B, started meanwhile, extracts `s2`; when A then
/// reaches `s2`, it must see that `s2` is already done.
#[test]
fn session_finished_by_another_run_is_not_claimed_again() {
    let env = env();
    write_session(&env, "s1", "2020-03-02", &chat("alpha"));
    write_session(&env, "s2", "2020-03-01", &chat("bravo"));
    index(&env, &sessions_dir(&env));
    let fake = Fake::new(&env);
    fake.answer(vec![]);
    let gate = env.tmp.path().join("gate");
    let mut vars = fake.vars();
    vars.push(("FAKE_EXTRACT_GATE".into(), gate.display().to_string()));
    vars.push(("FAKE_EXTRACT_GATE_SESSION".into(), "s1".into()));
    let cmd = extractor("facts.py");
    let args = ["--extractor-cmd", cmd.as_str()];
    let a = spawn_extract(&env, &args, &vars);
    until(20, "run A never started s1", || {
        calls_per_session(&fake).contains_key("s1")
    });
    let rb = extract_with(&env, &args, &vars);
    assert_eq!(rb["report"]["sessions"], 1, "B skips the leased s1: {rb}");
    assert_eq!(outcome(&rb, "s2")["state"], "done");
    std::fs::write(&gate, "").unwrap();
    let ra = finish(a);
    let calls = calls_per_session(&fake);
    assert_eq!(
        calls.get("s2"),
        Some(&1),
        "s2 was extracted by both runs: {calls:?}\nA: {ra}"
    );
}

fn source_id(db: &Connection, session: &str) -> i64 {
    db.query_row(
        "SELECT source_id FROM sessions WHERE session_id = ?1",
        [session],
        |r| r.get(0),
    )
    .unwrap()
}

#[test]
fn stale_lease_expires_and_live_lease_is_respected() {
    let env = env();
    write_session(&env, "crashed", "2020-03-01", &chat("alpha"));
    write_session(&env, "busy", "2020-03-02", &chat("bravo"));
    index(&env, &sessions_dir(&env));
    let db = Connection::open(env.project_dir().join("index.db")).unwrap();
    let now = unix_now();
    // A run that crashed ten minutes ago, and one still running.
    for (session, owner, until) in [
        ("crashed", "dead-run", now - 60),
        ("busy", "live-run", now + 3600),
    ] {
        db.execute(
            "INSERT INTO extractions(source_id, session_id, state, lease_owner, lease_until, attempts, updated)
             VALUES (?1, ?2, 'pending', ?3, ?4, 1, ?5)",
            rusqlite::params![source_id(&db, session), session, owner, until, now - 600],
        )
        .unwrap();
    }
    drop(db);
    let fake = Fake::new(&env);
    fake.answer(vec![]);
    let r = fake.extract(&env, &[]);
    let calls: Vec<_> = fake.calls().iter().map(|c| c["session"].clone()).collect();
    assert_eq!(calls, [json!("crashed")], "{r}");
    let st = status(&env);
    assert_eq!(st["crashed"]["state"], "done");
    assert_eq!(st["busy"]["state"], "pending");
}

/// A run that crashed while retrying a failed session leaves a `pending`
/// row with the session's current hash; once its lease expires the session
/// must be tried again, not stay `pending` forever.
#[test]
fn crashed_retry_of_a_failed_session_is_retried_after_its_lease_expires() {
    let env = env();
    indexed_session(&env, "s1");
    let fail = extractor("fail.sh");
    extract_with(&env, &["--extractor-cmd", &fail], &[]);
    assert_eq!(status(&env)["s1"]["state"], "failed");
    // What `claim` leaves behind when the retry's process dies.
    let db = Connection::open(env.project_dir().join("index.db")).unwrap();
    db.execute(
        "UPDATE extractions SET state='pending', lease_owner='dead-run', lease_until=?1,
             attempts = attempts + 1 WHERE session_id = 's1'",
        [unix_now() - 60],
    )
    .unwrap();
    drop(db);
    let fake = Fake::new(&env);
    fake.answer(vec![fact(
        "incidents",
        "watcher race",
        "The flaky test raced the file watcher; tests now wait for its first event.",
        0.8,
    )]);
    let r = fake.extract(&env, &[]);
    assert_eq!(fake.calls().len(), 1, "s1 is retried: {r}");
    assert_eq!(status(&env)["s1"]["state"], "done");
    assert_eq!(auto_keys(&env), ["auto:watcher-race"]);
}

// ---------------------------------------------------------------------------
// The command protocol

#[test]
fn command_success_writes_records_with_provenance() {
    let env = env();
    indexed_session(&env, "s1");
    let fake = Fake::new(&env);
    let mut pref = fact(
        "preferences",
        "Terse answers",
        "Answer in short paragraphs.",
        0.75,
    );
    pref["scope"] = json!("user");
    pref["evidence"] = json!(["m0", "m2"]);
    fake.answer(vec![
        fact(
            "incidents",
            "Watcher race",
            "The flaky test raced the file watcher; tests now wait for its first event.",
            0.85,
        ),
        pref,
    ]);
    let r = fake.extract(&env, &[]);
    assert_eq!(r["dry_run"], false);
    let rep = &r["report"];
    assert_eq!(
        (
            &rep["sessions"],
            &rep["done"],
            &rep["failed"],
            &rep["records"]
        ),
        (&json!(1), &json!(1), &json!(0), &json!(2)),
        "{r}"
    );
    let o = outcome(&r, "s1");
    assert_eq!(o["state"], "done");
    assert!(o["reason"].is_null());
    assert_eq!(
        o["kept"],
        json!([
            "[project] incidents auto:watcher-race: The flaky test raced the file watcher; tests now wait for its first event.",
            "[user] preferences auto:terse-answers: Answer in short paragraphs."
        ])
    );

    let inc = get(&env, "auto:watcher-race").unwrap();
    assert_eq!(inc["source"], "auto");
    assert_eq!(inc["category"], "incidents");
    assert_eq!(inc["scope"], "project");
    assert_eq!(inc["confidence"], 0.85);
    assert_eq!(
        inc["origin"],
        json!({"session": "s1", "messages": ["m0"], "extractor": "command", "extractor_version": "1"})
    );
    let pref = get(&env, "auto:terse-answers").unwrap();
    assert_eq!(pref["scope"], "user");
    assert_eq!(pref["origin"]["messages"], json!(["m0", "m2"]));
    // The provenance is in the file's frontmatter.
    let md = std::fs::read_to_string(inc["path"].as_str().unwrap()).unwrap();
    for needle in [
        "source: auto",
        "origin:",
        "session: s1",
        "extractor: command",
        "confidence: 0.85",
    ] {
        assert!(md.contains(needle), "{needle} missing from:\n{md}");
    }
    let st = status(&env);
    assert_eq!(st["s1"]["state"], "done");
    assert_eq!(st["s1"]["facts"], 2);
}

/// Run a failing fake extractor over one session: the run exits 0, the
/// session is `failed` with a reason containing `why`, nothing is written.
fn assert_command_failure(script: &str, extra: &[&str], why: &str) {
    assert_command_failure_with(script, extra, &[], why);
}

/// The same, with `vars` set for the run (and so for the extractor).
fn assert_command_failure_with(script: &str, extra: &[&str], vars: &[(String, String)], why: &str) {
    let env = env();
    indexed_session(&env, "s1");
    let cmd = extractor(script);
    let mut args = vec!["--extractor-cmd", cmd.as_str()];
    args.extend_from_slice(extra);
    let before = record_snapshot(&env);
    let r = extract_with(&env, &args, vars);
    assert_eq!(r["report"]["failed"], 1, "{r}");
    assert_eq!(r["report"]["records"], 0, "{r}");
    let o = outcome(&r, "s1");
    assert_eq!(o["state"], "failed");
    let reason = o["reason"].as_str().unwrap();
    assert!(reason.contains(why), "reason {reason:?} lacks {why:?}");
    let st = status(&env);
    assert_eq!(st["s1"]["state"], "failed");
    assert!(
        st["s1"]["reason"].as_str().unwrap().contains(why),
        "{:?}",
        st["s1"]
    );
    assert_eq!(before, record_snapshot(&env));
    assert!(record_files(&env.home()).is_empty());
}

#[test]
fn command_timeout_fails_the_session_only() {
    // slow.sh creates `done` after its 3 s sleep: a run that waited for it
    // instead of killing it at the 1 s timeout would leave the file.
    let marker = tempfile::tempdir().unwrap();
    let done = marker.path().join("done");
    let vars = [("SLOW_EXTRACTOR_DONE".into(), done.display().to_string())];
    assert_command_failure_with("slow.sh", &["--timeout", "1"], &vars, "timed out after 1s");
    assert!(
        !done.exists(),
        "the timeout did not cut the 3 s command short"
    );
}

#[test]
fn command_garbage_output_fails_the_session_only() {
    assert_command_failure("garbage.sh", &[], "not a facts response");
}

#[test]
fn command_nonzero_exit_fails_the_session_only() {
    assert_command_failure("fail.sh", &[], "exit status: 3");
    assert_command_failure("fail.sh", &[], "model quota exceeded");
}

// ---------------------------------------------------------------------------
// Dry run, status, listing, summary

#[test]
fn dry_run_writes_nothing() {
    let env = env();
    indexed_session(&env, "s1");
    env.add("decisions", "manual", "Releases are cut on Tuesdays.");
    let fake = Fake::new(&env);
    fake.answer(vec![fact(
        "incidents",
        "Watcher race",
        "The flaky test raced the file watcher; tests now wait for its first event.",
        0.85,
    )]);
    let before = snapshot(&env.home());
    let r = fake.extract(&env, &["--dry-run"]);
    assert_eq!(r["dry_run"], true);
    assert_eq!(
        r["report"]["records"], 1,
        "reports what it would write: {r}"
    );
    assert_eq!(
        outcome(&r, "s1")["kept"],
        json!(["[project] incidents auto:watcher-race: The flaky test raced the file watcher; tests now wait for its first event."])
    );
    let after = snapshot(&env.home());
    let changed: Vec<_> = after
        .iter()
        .filter(|f| !before.contains(f))
        .map(|f| f.0.display().to_string())
        .collect();
    assert!(changed.is_empty(), "a dry run changed {changed:?}");
    assert_eq!(before.len(), after.len());
    assert!(auto_keys(&env).is_empty());
    assert_eq!(status(&env)["s1"]["state"], "pending");
    // And the real run afterwards still has everything to do.
    let r = fake.extract(&env, &[]);
    assert_eq!(r["report"]["records"], 1, "{r}");
}

#[test]
fn status_lists_every_session_state() {
    let env = env();
    write_session(&env, "good", "2020-03-01", &chat("alpha"));
    write_session(&env, "bad", "2020-03-02", &chat("bravo"));
    write_session(&env, "tiny", "2020-03-03", &[("user", "hi".into())]);
    write_session(&env, "untouched", "2020-03-04", &chat("charlie"));
    index(&env, &sessions_dir(&env));
    let fake = Fake::new(&env);
    fake.answer(vec![fact(
        "incidents",
        "watcher race",
        "The flaky test raced the file watcher; tests now wait for its first event.",
        0.8,
    )]);
    fake.extract(&env, &["--session", "good"]);
    fake.extract(&env, &["--session", "tiny"]);
    let fail = extractor("fail.sh");
    extract_with(&env, &["--session", "bad", "--extractor-cmd", &fail], &[]);
    let st = status(&env);
    assert_eq!(st.len(), 4, "{st:?}");
    let state = |s: &str| st[s]["state"].as_str().unwrap().to_string();
    assert_eq!(
        [
            state("good"),
            state("bad"),
            state("tiny"),
            state("untouched")
        ],
        ["done", "failed", "skipped", "pending"]
    );
    assert_eq!(st["good"]["facts"], 1);
    assert!(st["good"]["reason"].is_null());
    assert!(st["bad"]["reason"]
        .as_str()
        .unwrap()
        .contains("exit status: 3"));
    assert!(st["tiny"]["reason"].as_str().unwrap().contains("200"));
    assert!(st["good"]["updated"].is_string());
    assert!(st["untouched"]["updated"].is_null());
    // The text form has one line per session.
    let text = env.run(&["extract", "--status"]);
    assert_eq!(text.lines().count(), 4, "{text}");
    assert!(
        text.lines().any(|l| l.starts_with("bad\tfailed\t")),
        "{text}"
    );
    // Each line ends with its transcript file: state is kept per file.
    assert!(
        text.lines()
            .any(|l| l.starts_with("bad\t") && l.contains("bad.jsonl")),
        "{text}"
    );
    assert!(st["bad"]["path"].as_str().unwrap().ends_with("bad.jsonl"));
}

#[test]
fn record_list_source_auto_lists_only_auto_records() {
    let env = env();
    indexed_session(&env, "s1");
    env.add("decisions", "manual-one", "Releases are cut on Tuesdays.");
    let fake = Fake::new(&env);
    fake.answer(vec![
        fact(
            "incidents",
            "watcher race",
            "The flaky test raced the file watcher.",
            0.8,
        ),
        fact(
            "procedures",
            "staging",
            "Deploys go through the staging cluster first.",
            0.7,
        ),
    ]);
    fake.extract(&env, &[]);
    let auto = list(&env, "auto");
    assert_eq!(auto.len(), 2, "{auto:?}");
    assert!(auto.iter().all(|r| r["source"] == "auto"));
    assert_eq!(auto_keys(&env), ["auto:staging", "auto:watcher-race"]);
    let manual = list(&env, "manual");
    assert_eq!(manual.len(), 1);
    assert_eq!(manual[0]["key"], "manual-one");
}

/// Records in both scopes for the summary tests.
fn summary_env() -> Env {
    let env = env();
    indexed_session(&env, "s1");
    let fake = Fake::new(&env);
    fake.answer(vec![
        fact(
            "incidents",
            "watcher race",
            "The flaky test raced the file watcher.",
            0.8,
        ),
        fact(
            "procedures",
            "staging",
            "Deploys go through the staging cluster first.",
            0.7,
        ),
    ]);
    fake.extract(&env, &[]);
    let topics = [
        "billing", "search", "auth", "exports", "payments", "mailer", "cache", "queue", "uploads",
        "reports", "metrics", "webhooks",
    ];
    for t in topics {
        env.add(
            "decisions",
            &format!("{t}-owner"),
            &format!("The {t} module is owned by the platform team; ask them before changing its public API."),
        );
    }
    env.run(&[
        "record",
        "add",
        "--scope",
        "user",
        "--category",
        "preferences",
        "--key",
        "tone",
        "Keep answers short.",
    ]);
    env
}

#[test]
fn summary_respects_max_tokens() {
    let env = summary_env();
    let full = env.run(&["summary"]);
    assert!(
        full.contains(
            "- **auto:watcher-race** [incidents]: The flaky test raced the file watcher."
        ),
        "{full}"
    );
    assert!(full.contains("## Preferences"), "{full}");
    let all_lines = full.lines().filter(|l| l.starts_with("- **")).count();
    assert_eq!(all_lines, 15, "{full}");
    let mut previous = 0;
    for budget in [40, 64, 100, 150, 250, 400, 1000] {
        let out = env.run(&["summary", "--max-tokens", &budget.to_string()]);
        let tokens = out.chars().count().div_ceil(4);
        assert!(
            tokens <= budget,
            "--max-tokens {budget}: {tokens} tokens:\n{out}"
        );
        let lines = out.lines().filter(|l| l.starts_with("- **")).count();
        assert!(lines >= previous, "a bigger budget never shows less");
        previous = lines;
        // Every line shown is a line of the full summary.
        for l in out.lines() {
            assert!(
                full.lines().any(|f| f == l),
                "{l:?} not in the full summary"
            );
        }
    }
    assert_eq!(previous, all_lines, "a large budget shows everything");
}

/// With a budget too small for even one record line, the summary must
/// still fit the budget and must not claim that there are no records.
#[test]
fn summary_too_small_for_any_record_stays_in_budget_and_does_not_claim_none() {
    let env = summary_env();
    for budget in [4, 20] {
        let out = env.run(&["summary", "--max-tokens", &budget.to_string()]);
        let tokens = out.chars().count().div_ceil(4);
        assert!(
            tokens <= budget,
            "--max-tokens {budget}: {tokens} tokens:\n{out}"
        );
        assert!(
            !out.contains("no records yet"),
            "--max-tokens {budget} with 15 records says there are none:\n{out}"
        );
    }
}

#[test]
fn summary_write_saves_memory_md() {
    let env = summary_env();
    let printed = env.run(&["summary", "--max-tokens", "200"]);
    let path = env.project_dir().join("MEMORY.md");
    assert!(!path.exists());
    let out = env.run(&["summary", "--max-tokens", "200", "--write"]);
    assert_eq!(out, "", "--write prints nothing on stdout");
    let saved = std::fs::read_to_string(&path).unwrap();
    assert_eq!(saved, printed);
    assert!(saved.starts_with("# Memory of alpha\n"), "{saved}");
    assert!(saved.chars().count().div_ceil(4) <= 200);
}

// ---------------------------------------------------------------------------
// The builtin extractor

#[test]
fn builtin_extractor_finds_preferences_decisions_and_procedures() {
    let env = env();
    let msgs: Vec<(&str, String)> = vec![
        ("user", "I prefer short answers without emojis.".into()),
        (
            "assistant",
            "Understood. I will keep my answers short and plain from here on.".into(),
        ),
        ("user", "Always use pnpm, not npm, in this repo.".into()),
        (
            "assistant",
            "Noted: I switched the install instructions in the README to pnpm and removed package-lock.json.".into(),
        ),
        (
            "user",
            "We decided to use SQLite with WAL. Should we move to Postgres later? Don't worry about the old migrations.".into(),
        ),
        (
            "assistant",
            "I enabled WAL mode when the connection opens and added a busy timeout so concurrent readers do not fail.".into(),
        ),
        ("user", "To run the tests, use `cargo test --all`.".into()),
        ("assistant", "Ran `cargo test --all`: all 112 tests pass.".into()),
    ];
    write_session(&env, "real", "2020-03-01", &msgs);
    index(&env, &sessions_dir(&env));
    let r = extract_with(&env, &["--extractor", "builtin"], &[]);
    assert_eq!(outcome(&r, "real")["state"], "done", "{r}");
    let mut got: Vec<(String, String, String)> = list(&env, "auto")
        .iter()
        .map(|x| {
            (
                x["key"].as_str().unwrap().to_string(),
                x["category"].as_str().unwrap().to_string(),
                x["scope"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    got.sort();
    let want = |k: &str, c: &str, s: &str| (k.to_string(), c.to_string(), s.to_string());
    assert_eq!(
        got,
        [
            want(
                "auto:always-use-pnpm-not-npm-in-this-repo",
                "preferences",
                "project"
            ),
            want(
                "auto:i-prefer-short-answers-without-emojis",
                "preferences",
                "user"
            ),
            want("auto:run-the-tests-cargo-test-all", "procedures", "project"),
            want(
                "auto:we-decided-to-use-sqlite-with-wal",
                "decisions",
                "project"
            ),
        ],
        "{r}"
    );
    let pnpm = get(&env, "auto:always-use-pnpm-not-npm-in-this-repo").unwrap();
    assert_eq!(pnpm["text"], "Always use pnpm, not npm, in this repo.");
    assert_eq!(pnpm["origin"]["extractor"], "builtin");
    assert_eq!(pnpm["origin"]["extractor_version"], "1");
    assert_eq!(pnpm["origin"]["session"], "real");
    assert_eq!(pnpm["origin"]["messages"], json!(["m2"]));
    let sqlite = get(&env, "auto:we-decided-to-use-sqlite-with-wal").unwrap();
    assert_eq!(sqlite["text"], "We decided to use SQLite with WAL.");
    assert!(sqlite["confidence"].as_f64().unwrap() >= 0.6);
    // Questions and "don't worry" are not facts.
    let all = list(&env, "auto")
        .iter()
        .map(|x| x["text"].to_string())
        .collect::<String>();
    assert!(
        !all.contains("Postgres") && !all.contains("migrations"),
        "{all}"
    );
}

/// Regression: a user who rewrote an extracted record's text with
/// `record update` lost it to the next extraction of the same fact, because
/// the record stayed `source: auto`.
#[test]
fn r_a_hand_edited_auto_record_is_manual_and_never_overwritten() {
    let env = env();
    indexed_session(&env, "s1");
    let fake = Fake::new(&env);
    fake.answer(vec![fact(
        "decisions",
        "Use pnpm",
        "Use pnpm for every package install.",
        0.9,
    )]);
    fake.extract(&env, &["--session", "s1"]);
    assert_eq!(get(&env, "auto:use-pnpm").unwrap()["source"], "auto");
    env.run(&[
        "record",
        "update",
        "auto:use-pnpm",
        "--text",
        "pnpm, except in the docs site, which uses npm.",
    ]);
    assert_eq!(get(&env, "auto:use-pnpm").unwrap()["source"], "manual");
    indexed_session(&env, "s2");
    let r = fake.extract(&env, &["--session", "s2"]);
    assert_eq!(r["report"]["records"], 0, "{r}");
    let rec = get(&env, "auto:use-pnpm").unwrap();
    assert_eq!(rec["source"], "manual");
    assert!(rec.to_string().contains("except in the docs site"), "{rec}");
}

/// Regression: one fact with an unknown category made the whole response
/// unusable, so the session failed and its good facts were lost.
#[test]
fn r_one_bad_fact_is_dropped_and_the_others_are_kept() {
    let env = env();
    indexed_session(&env, "s1");
    let fake = Fake::new(&env);
    let mut bogus = fact("decisions", "Bogus", "A fact in no known category.", 0.9);
    bogus["category"] = json!("bogus");
    let mut no_text = fact("decisions", "No text", "x", 0.9);
    no_text.as_object_mut().unwrap().remove("text");
    fake.answer(vec![
        bogus,
        fact(
            "decisions",
            "Use pnpm",
            "Use pnpm for every package install.",
            0.9,
        ),
        no_text,
    ]);
    let r = fake.extract(&env, &[]);
    assert_eq!(outcome(&r, "s1")["state"], "done", "{r}");
    assert_eq!(auto_keys(&env), ["auto:use-pnpm"]);
    let dropped = outcome(&r, "s1")["dropped"].to_string();
    assert!(
        dropped.contains("fact 1 (Bogus)") && dropped.contains("bogus"),
        "{dropped}"
    );
    assert!(dropped.contains("fact 3 (No text)"), "{dropped}");
}

/// Regression (issue probe: `extract --since 2020-01-01` still extracted
/// nothing from sessions older than `extract.max_age_days` and said only
/// "0 sessions"): nothing due says why, with counts and the fix, and
/// `--since` overrides the age limit.
#[test]
fn r_since_overrides_max_age_and_nothing_due_says_why() {
    let env = Env::new(); // default max_age_days: 30; the session is from 2020
    let p = write_session(&env, "old", "2020-03-01", &chat("parser"));
    index(&env, &p);
    let out = env
        .cmd()
        .args(["extract", "--extractor", "builtin"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("0 sessions"), "{stderr}");
    assert!(
        stderr.contains("nothing due: 1 indexed sessions; 1 older than 30 days: pass --since or set extract.max_age_days"),
        "{stderr}"
    );
    let v = extract_with(
        &env,
        &["--extractor", "builtin", "--since", "2020-01-01"],
        &[],
    );
    assert_eq!(v["report"]["sessions"], 1, "{v}");
    // Run again: done and unchanged, and it says so.
    let out = env
        .cmd()
        .args(["extract", "--extractor", "builtin", "--since", "2020-01-01"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("1 already extracted and unchanged"),
        "{stderr}"
    );
}

/// Regression (issue probe: `extract --session <unknown id>` exited 0).
#[test]
fn r_extract_of_an_unknown_session_is_an_error() {
    let env = env();
    indexed_session(&env, "known");
    let out = env
        .cmd()
        .args(["extract", "--session", "nosuch"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("no indexed session with id 'nosuch'"),
        "{stderr}"
    );
    assert!(stderr.contains("recall extract --status"), "{stderr}");
}

/// Extract runs of different sessions that propose the same fact at the
/// same time make one record, not one file each: the check for an
/// existing key and the write happen under the scope's records lock.
#[test]
fn r_concurrent_extracts_of_one_new_key_make_one_record() {
    let env = env();
    let sessions: Vec<String> = (0..6).map(|i| format!("par{i}")).collect();
    for s in &sessions {
        indexed_session(&env, s);
    }
    let fake = Fake::new(&env);
    fake.answer(vec![fact(
        "principles",
        "shared rule",
        "Every flaky test gets a tracking issue before it is retried.",
        0.9,
    )]);
    let cmd = extractor("facts.py");
    let children: Vec<_> = sessions
        .iter()
        .map(|s| {
            let mut c = env.std_cmd();
            c.args(["extract", "--json", "--extractor-cmd", &cmd, "--session", s])
                .envs(fake.vars())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped());
            c.spawn().unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert_success(&out);
    }
    assert_eq!(auto_keys(&env), ["auto:shared-rule"]);
    assert_eq!(record_files(&env.home()).len(), 1);
}

/// Stdout and stderr of `recall ARGS` with extra environment (any exit).
fn output_with(env: &Env, args: &[&str], vars: &[(String, String)]) -> String {
    let mut c = env.cmd();
    c.args(args);
    for (k, v) in vars {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

/// Every file under the home that holds `needle`.
fn files_holding(env: &Env, needle: &str) -> Vec<PathBuf> {
    snapshot(&env.home())
        .into_iter()
        .filter(|(_, bytes)| contains(bytes, needle.as_bytes()))
        .map(|(p, _)| p)
        .collect()
}

/// Regression (issue #26: the extractor command's stderr was stored
/// unredacted and shown by `extract --status`, and a fact dropped for a
/// secret in its key was reported with the key as is).
#[test]
fn r26_extractor_stderr_and_dropped_keys_are_redacted() {
    let secret = format!("ghp_{}", "Xk9Qm2Zr7Lp4Wn8Vb3Hd6Jf1Tc5Ys0Ga7Ke2");
    let leak = vec![("LEAK".to_string(), secret.clone())];

    // An extractor that fails, saying the secret on stderr.
    let env = env();
    indexed_session(&env, "s1");
    let script = env.tmp.path().join("fail.sh");
    let body = "cat >/dev/null\necho \"auth failed for token $LEAK\" >&2\nexit 3\n";
    std::fs::write(&script, body).unwrap();
    let cmd = format!("sh '{}'", script.display());
    let mut printed = output_with(&env, &["extract", "--extractor-cmd", &cmd], &leak);
    printed += &output_with(&env, &["extract", "--status"], &[]);
    printed += &output_with(&env, &["extract", "--status", "--json"], &[]);
    assert!(
        printed.contains("auth failed for token [REDACTED:github-token]"),
        "{printed}"
    );
    assert!(!printed.contains(&secret), "{printed}");
    assert_eq!(files_holding(&env, &secret), Vec::<PathBuf>::new());

    // An extractor whose fact holds the secret in its key.
    let env = self::env();
    indexed_session(&env, "s2");
    let fake = Fake::new(&env);
    fake.answer(vec![fact(
        "procedures",
        &format!("token {secret}"),
        "Release pushes authenticate with the token from the vault.",
        0.9,
    )]);
    let r = fake.extract(&env, &[]);
    let dropped = outcome(&r, "s2")["dropped"].to_string();
    assert!(
        dropped.contains("token [REDACTED:github-token]: contains a secret"),
        "{r}"
    );
    assert!(!r.to_string().contains(&secret), "{r}");
    assert_eq!(files_holding(&env, &secret), Vec::<PathBuf>::new());
}

/// Issue 26 item 10: a killed `extract` left its session "being extracted
/// by another run" for ten minutes. A lease whose owner process is gone is
/// taken over at once, and the re-run equals a clean run.
#[test]
fn r26_a_killed_runs_lease_is_taken_over_at_once() {
    let env = env();
    indexed_session(&env, "s1");
    // What `claim` leaves when its process is killed: a live lease held by
    // a pid that no longer exists.
    let mut dead = std::process::Command::new("true").spawn().unwrap();
    let pid = dead.id();
    dead.wait().unwrap();
    let db = Connection::open(env.project_dir().join("index.db")).unwrap();
    db.execute(
        "INSERT INTO extractions(source_id, session_id, state, lease_owner, lease_until, attempts, updated)
         SELECT source_id, session_id, 'pending', ?1, ?2, 1, ?3 FROM sessions WHERE session_id = 's1'",
        rusqlite::params![format!("{pid}-1"), unix_now() + 600, unix_now()],
    )
    .unwrap();
    drop(db);
    let fake = Fake::new(&env);
    fake.answer(vec![fact(
        "incidents",
        "watcher race",
        "The flaky test raced the file watcher; tests now wait for its first event.",
        0.8,
    )]);
    let r = fake.extract(&env, &[]);
    assert_eq!(fake.calls().len(), 1, "s1 is extracted at once: {r}");
    assert_eq!(status(&env)["s1"]["state"], "done");
    assert_eq!(auto_keys(&env), ["auto:watcher-race"]);
}
