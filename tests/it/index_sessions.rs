//! `recall index` end to end: formats, incremental runs, bad input, prune
//! and exit codes, against real SQLite files in temporary homes.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::common::{assert_success, Env};
use predicates::prelude::*;
use rusqlite::Connection;

fn project_db(env: &Env) -> PathBuf {
    env.project_dir().join("index.db")
}

fn count(db: &Path, sql: &str) -> i64 {
    Connection::open(db)
        .unwrap()
        .query_row(sql, [], |r| r.get(0))
        .unwrap()
}

/// Run `recall index --json ARGS` and return (exit code, summary).
fn index(env: &Env, args: &[&str]) -> (i32, serde_json::Value) {
    let out = env
        .cmd()
        .arg("index")
        .arg("--json")
        .args(args)
        .output()
        .unwrap();
    let code = out.status.code().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("no JSON ({code}): {}", String::from_utf8_lossy(&out.stderr)));
    (code, v["summary"].clone())
}

fn neutral_line(i: usize, text: &str) -> String {
    let role = if i.is_multiple_of(2) {
        "user"
    } else {
        "assistant"
    };
    format!("{{\"role\":\"{role}\",\"id\":\"m{i}\",\"content\":\"{text}\"}}\n")
}

fn write_neutral(path: &Path, range: std::ops::Range<usize>, append: bool) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(append)
        .write(true)
        .truncate(!append)
        .open(path)
        .unwrap();
    if !append {
        f.write_all(b"{\"session\":{\"id\":\"sess-1\",\"title\":\"refactor the loader\"}}\n")
            .unwrap();
    }
    for i in range {
        f.write_all(
            neutral_line(
                i,
                &format!("message number {i} about topic{i} and the loader"),
            )
            .as_bytes(),
        )
        .unwrap();
    }
}

#[test]
fn every_fixture_format_indexes() {
    let env = Env::new();
    let dir = crate::common::testdata("formats");
    let (code, s) = index(&env, &[dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{s}");
    // A plain-text ticket found in a folder needs `--kind ticket`.
    assert_eq!(
        (s["indexed"].as_i64(), s["skipped"].as_i64()),
        (Some(7), Some(1)),
        "{s}"
    );
    assert_eq!(s["failed"], 0);
    let (code, s) = index(
        &env,
        &["--kind", "ticket", dir.join("ticket.txt").to_str().unwrap()],
    );
    assert_eq!((code, s["tickets"].as_i64()), (0, Some(1)), "{s}");
    let db = project_db(&env);
    assert!(count(&db, "SELECT count(*) FROM sessions") >= 4);
    assert!(count(&db, "SELECT count(DISTINCT ticket_id) FROM tickets") >= 4);
    let launchers = count(&db, "SELECT count(DISTINCT launcher) FROM sessions");
    assert_eq!(launchers, 2, "neutral and markdown");
}

#[test]
fn unchanged_sources_are_skipped_on_stat() {
    let env = Env::new();
    let t = env.tmp.path().join("s.jsonl");
    write_neutral(&t, 0..10, false);
    assert_eq!(index(&env, &[t.to_str().unwrap()]).1["indexed"], 1);
    let (_, s) = index(&env, &[t.to_str().unwrap()]);
    assert_eq!(
        (
            s["unchanged"].as_i64(),
            s["indexed"].as_i64(),
            s["chunks"].as_i64()
        ),
        (Some(1), Some(0), Some(0))
    );
}

#[test]
fn appended_transcript_indexes_only_new_messages() {
    let env = Env::new();
    let t = env.tmp.path().join("s.jsonl");
    write_neutral(&t, 0..6, false);
    index(&env, &[t.to_str().unwrap()]);
    let db = project_db(&env);
    let before = count(&db, "SELECT count(*) FROM chunks");
    write_neutral(&t, 6..12, true);
    let (code, s) = index(&env, &[t.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert_eq!(s["appended"], 1, "{s}");
    assert_eq!(
        count(&db, "SELECT count(*) FROM chunks") - before,
        s["chunks"].as_i64().unwrap()
    );
    // New chunks continue the message numbering and the session id.
    assert_eq!(count(&db, "SELECT max(msg_last) FROM chunks"), 11);
    // One passage per message: the appended ones start at seq 6.
    assert_eq!(before, 6);
    assert_eq!(
        count(&db, "SELECT min(msg_first) FROM chunks WHERE seq >= 6"),
        6
    );
    assert_eq!(
        count(
            &db,
            "SELECT count(DISTINCT session_id) FROM chunks WHERE session_id='sess-1'"
        ),
        1
    );
    assert_eq!(
        count(
            &db,
            "SELECT messages FROM sessions WHERE session_id='sess-1'"
        ),
        12
    );
    let ids = count(
        &db,
        "SELECT count(*) FROM chunks WHERE message_ids LIKE '%\"m11\"%'",
    );
    assert_eq!(ids, 1);
}

#[test]
fn modified_and_truncated_sources_are_replaced() {
    let env = Env::new();
    let t = env.tmp.path().join("s.jsonl");
    write_neutral(&t, 0..20, false);
    index(&env, &[t.to_str().unwrap()]);
    let db = project_db(&env);
    // Modify the middle: same length is not enough to fool the hash.
    let text = std::fs::read_to_string(&t)
        .unwrap()
        .replace("topic3 ", "TOPIC3 ");
    std::fs::write(&t, text).unwrap();
    let (_, s) = index(&env, &[t.to_str().unwrap()]);
    assert_eq!(s["indexed"], 1, "{s}");
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'topic3'"
        ),
        1
    );
    // Truncate to half.
    write_neutral(&t, 0..5, false);
    let (_, s) = index(&env, &[t.to_str().unwrap()]);
    assert_eq!(s["indexed"], 1, "{s}");
    assert_eq!(count(&db, "SELECT max(msg_last) FROM chunks"), 4);
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'topic15'"
        ),
        0
    );
    assert_eq!(
        count(&db, "SELECT count(*) FROM chunks"),
        count(&db, "SELECT count(*) FROM chunks_fts")
    );
}

#[test]
fn deleted_sources_are_pruned() {
    let env = Env::new();
    let a = env.tmp.path().join("a.jsonl");
    let b = env.tmp.path().join("b.jsonl");
    write_neutral(&a, 0..4, false);
    std::fs::write(&b, neutral_line(0, "bravo text")).unwrap();
    index(&env, &[a.to_str().unwrap(), b.to_str().unwrap()]);
    std::fs::remove_file(&b).unwrap();
    let (_, s) = index(&env, &["--prune", a.to_str().unwrap()]);
    assert_eq!(s["removed"], 1, "{s}");
    let db = project_db(&env);
    assert_eq!(count(&db, "SELECT count(*) FROM sources"), 1);
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'bravo'"
        ),
        0
    );
}

#[test]
fn bad_lines_are_reported_with_path_line_and_the_batch_goes_on() {
    let env = Env::new();
    let t = env.tmp.path().join("bad.jsonl");
    let mut body = String::from("{\"session\":{\"id\":\"bad\"}}\n");
    body += &neutral_line(0, "first good line");
    body += "{not json\n";
    body += &neutral_line(1, "after the bad line");
    std::fs::write(&t, body.as_bytes()).unwrap();
    let mut bytes = std::fs::read(&t).unwrap();
    bytes.extend_from_slice(b"{\"role\":\"user\",\"content\":\"\xff\xfe\"}\n");
    bytes.extend_from_slice(b"{\"role\":\"user\",\"content\":\"cut off mid-wri");
    std::fs::write(&t, &bytes).unwrap();
    let good = env.tmp.path().join("good.jsonl");
    write_neutral(&good, 0..3, false);
    let out = env
        .cmd()
        .args(["index", "--json"])
        .arg(&t)
        .arg(&good)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{}:3: invalid JSON", t.display())),
        "{err}"
    );
    assert!(err.contains("truncated last line"), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["summary"]["indexed"], 2);
    // The unfinished last line is counted in the summary, apart from the
    // problems (a live transcript is not a failure).
    assert_eq!(v["summary"]["incomplete"], 1, "{v}");
    assert!(err.contains("1 unfinished last lines"), "{err}");
    let db = project_db(&env);
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'after'"
        ),
        1
    );
    // The truncated line is finished later: only it is read on the next run.
    let mut f = std::fs::OpenOptions::new().append(true).open(&t).unwrap();
    f.write_all(b"ting\"}\n").unwrap();
    drop(f);
    let (_, s) = index(&env, &[t.to_str().unwrap()]);
    assert_eq!(s["appended"], 1, "{s}");
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'writing'"
        ),
        1
    );
}

#[test]
fn binary_missing_and_unknown_files_fail_without_stopping_the_batch() {
    let env = Env::new();
    let bin = env.tmp.path().join("blob.jsonl");
    std::fs::write(&bin, [0u8, 159, 146, 150, 0, 1, 2, 3].repeat(100)).unwrap();
    let odd = env.tmp.path().join("notes.csv");
    std::fs::write(&odd, "a,b,c\n1,2,3\n").unwrap();
    let dangling = env.tmp.path().join("gone.jsonl");
    std::os::unix::fs::symlink(env.tmp.path().join("nowhere"), &dangling).unwrap();
    let good = env.tmp.path().join("good.jsonl");
    write_neutral(&good, 0..3, false);
    let out = env
        .cmd()
        .args(["index", "--json"])
        .args([&bin, &odd, &dangling, &good])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("binary file"), "{err}");
    assert!(err.contains("unrecognised format: pass --format"), "{err}");
    assert!(err.contains("cannot read"), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (
            v["summary"]["failed"].as_i64(),
            v["summary"]["indexed"].as_i64()
        ),
        (Some(3), Some(1))
    );
    // Regression: with --kind given, the message told the user to pass
    // --kind. It says what a file of that kind looks like instead.
    let plain = env.tmp.path().join("t1.txt");
    std::fs::write(&plain, "just some notes\nabout the deploy\n").unwrap();
    let out = env
        .cmd()
        .args(["index", "--kind", "session"])
        .arg(&plain)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("not a transcript recall recognises") && err.contains("`## User`"),
        "{err}"
    );
    assert!(!err.contains("--kind"), "{err}");
    let out = env
        .cmd()
        .args(["index", "--kind", "ticket"])
        .arg(&odd)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a ticket recall recognises"), "{err}");
    assert!(!err.contains("--kind"), "{err}");
}

#[test]
fn a_fifty_megabyte_line_is_handled() {
    let env = Env::new();
    let t = env.tmp.path().join("huge.jsonl");
    let blob = "word ".repeat(10_000_000);
    let mut body = neutral_line(0, "before the huge line");
    body += &format!("{{\"role\":\"tool\",\"content\":\"{blob}\"}}\n");
    body += &neutral_line(2, "after the huge line");
    std::fs::write(&t, body).unwrap();
    let (code, s) = index(&env, &[t.to_str().unwrap()]);
    assert!(code == 0 || code == 3, "{s}");
    assert_eq!(s["indexed"], 1);
    let db = project_db(&env);
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'after'"
        ),
        1
    );
    // Tool output is capped, so the huge line does not flood the index.
    let total: i64 = count(&db, "SELECT sum(length(body)) FROM chunks_fts");
    assert!(total < 100_000, "{total}");
}

#[test]
fn kind_and_format_overrides() {
    let env = Env::new();
    let t = env.tmp.path().join("plain.txt");
    std::fs::write(
        &t,
        "Login page is slow\n\nThe login page takes 5s to render on mobile.",
    )
    .unwrap();
    env.cmd()
        .args(["index"])
        .arg(&t)
        .assert()
        .code(3)
        .stderr(predicate::str::contains("pass --format"));
    let (code, s) = index(&env, &["--kind", "ticket", t.to_str().unwrap()]);
    assert_eq!((code, s["tickets"].as_i64()), (0, Some(1)), "{s}");
    env.cmd()
        .args(["index", "--kind", "ticket", "--format", "codex"])
        .arg(&t)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a ticket format"));
    env.cmd()
        .args(["index", "--format", "yaml"])
        .arg(&t)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown format"));
}

#[test]
fn nothing_to_index_is_an_error() {
    let env = Env::new();
    env.cmd()
        .arg("index")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("nothing to index"));
    env.cmd()
        .args(["index", "/definitely/not/here"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("cannot read"));
    env.cmd()
        .args(["index", "/definitely/not/*.jsonl"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no files match"));
}

#[test]
fn claude_code_discovery_maps_the_project_root() {
    let env = Env::new();
    let root = env.tmp.path().join("work/my.app");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let root = std::fs::canonicalize(&root).unwrap();
    let claude = env.tmp.path().join("claude");
    let mapped: String = root
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let dir = claude.join("projects").join(&mapped);
    std::fs::create_dir_all(dir.join("s1/subagents")).unwrap();
    let line = |uuid: &str, sid: &str, text: &str| {
        format!(
        "{{\"type\":\"user\",\"uuid\":\"{uuid}\",\"parentUuid\":null,\"sessionId\":\"{sid}\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"cwd\":\"{}\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\"}}}}\n",
        root.display()
    )
    };
    std::fs::write(
        dir.join("s1.jsonl"),
        line("u1", "s1", "please fix the parser"),
    )
    .unwrap();
    std::fs::write(
        dir.join("s1/subagents/agent-a1.jsonl"),
        line("u2", "s1", "subagent looks at the parser"),
    )
    .unwrap();
    let other = claude.join("projects/-somewhere-else");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("x.jsonl"), line("u3", "x", "unrelated")).unwrap();
    let mut c = assert_cmd::Command::cargo_bin("recall").unwrap();
    let out = c
        .env_remove("RECALL_PROJECT")
        .arg("--home")
        .arg(env.home())
        .arg("--cwd")
        .arg(&root)
        .args(["index", "--json", "--claude-code", "--claude-home"])
        .arg(&claude)
        .output()
        .unwrap();
    assert_success(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["summary"]["indexed"], 2, "{v}");
}

/// Regression (issue probe: `index --claude-code` said "0 files" without
/// saying where it looked): it names the folder it read and what to do.
#[test]
fn r_claude_code_with_no_transcripts_names_the_folder_it_read() {
    let env = Env::new();
    let root = env.tmp.path().join("repo");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let claude = env.tmp.path().join("claude");
    std::fs::create_dir_all(claude.join("projects")).unwrap();
    let mut c = assert_cmd::Command::cargo_bin("recall").unwrap();
    let out = c
        .env_remove("RECALL_PROJECT")
        .arg("--home")
        .arg(env.home())
        .arg("--cwd")
        .arg(&root)
        .args(["index", "--claude-code", "--claude-home"])
        .arg(&claude)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("no Claude Code transcripts of"), "{stderr}");
    assert!(
        stderr.contains(&format!("{}/projects/-", claude.display())),
        "{stderr}"
    );
    // Regression: a launcher's home that is not there (a typo in a cron
    // job) said the same and exited 0, so nothing was ever indexed.
    for (launcher, flag) in [
        ("--claude-code", "--claude-home"),
        ("--codex", "--codex-home"),
        ("--gemini", "--gemini-home"),
    ] {
        let typo = env.tmp.path().join("cluade");
        let out = assert_cmd::Command::cargo_bin("recall")
            .unwrap()
            .env_remove("RECALL_PROJECT")
            .arg("--home")
            .arg(env.home())
            .arg("--cwd")
            .arg(&root)
            .args(["index", launcher, flag])
            .arg(&typo)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(&format!("{flag} {}: no such folder", typo.display())),
            "{stderr}"
        );
    }
}

// ---------------------------------------------------------------------------
// Gemini CLI

/// A Gemini CLI chat fixture from `testdata/gemini/`.
fn gemini_fixture(name: &str) -> Vec<u8> {
    std::fs::read(crate::common::testdata("gemini").join(name)).unwrap()
}

const GEMINI_REAL: &str = "entireio-cli/session-2026-01-10T02-08-faff42ab.json";
const GEMINI_LOG: &str = "session-2026-05-02T09-14-3f2a9c1e.jsonl";

/// SHA-256 hex of a path, as Gemini CLI named project folders before v0.29
/// (`sha256sum` of the path's bytes, computed here without the library).
fn sha256_hex(path: &Path) -> String {
    let out = std::process::Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            child
                .stdin
                .take()
                .unwrap()
                .write_all(path.to_str().unwrap().as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    String::from_utf8(out.stdout).unwrap()[..64].to_string()
}

/// A git checkout and a user home whose `.gemini` holds chats of it: the
/// real chat in the pre-v0.29 hash folder, the v0.39 log in a short-name
/// folder (marker and `projects.json`), and another project's chat.
struct GeminiWorld {
    root: PathBuf,
    user: PathBuf,
    log: PathBuf,
    real: PathBuf,
}

fn gemini_world(env: &Env) -> GeminiWorld {
    let root = env.tmp.path().join("work/fjord");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let root = std::fs::canonicalize(root).unwrap();
    let user = env.tmp.path().join("user");
    let tmp = user.join(".gemini/tmp");
    let real = tmp
        .join(sha256_hex(&root))
        .join("chats/session-2026-01-10T02-08-faff42ab.json");
    let log = tmp.join("fjord/chats").join(GEMINI_LOG);
    let other = tmp.join("elsewhere/chats/session-2026-05-03T10-00-0a0b0c0d.jsonl");
    for (path, bytes) in [
        (&real, gemini_fixture(GEMINI_REAL)),
        (&log, gemini_fixture(GEMINI_LOG)),
        (&other, gemini_fixture(GEMINI_LOG)),
    ] {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    std::fs::write(tmp.join("fjord/.project_root"), root.to_str().unwrap()).unwrap();
    std::fs::write(tmp.join("elsewhere/.project_root"), "/srv/elsewhere").unwrap();
    let registry = serde_json::json!({"projects": {root.to_str().unwrap(): "fjord", "/srv/elsewhere": "elsewhere"}});
    std::fs::write(user.join(".gemini/projects.json"), registry.to_string()).unwrap();
    GeminiWorld {
        root,
        user,
        log,
        real,
    }
}

/// `recall --home H --cwd ROOT ARGS` with `HOME` set to the world's user.
fn in_gemini_world(env: &Env, w: &GeminiWorld, args: &[&str]) -> std::process::Output {
    assert_cmd::Command::cargo_bin("recall")
        .unwrap()
        .env_remove("RECALL_PROJECT")
        .env_remove("GEMINI_CLI_HOME")
        .env("HOME", &w.user)
        .arg("--home")
        .arg(env.home())
        .arg("--cwd")
        .arg(&w.root)
        .args(args)
        .output()
        .unwrap()
}

fn gemini_summary(out: &std::process::Output) -> serde_json::Value {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stderr}"));
    v["summary"].clone()
}

/// Hits of a query in the world's project, as (kind, id) pairs.
fn gemini_hits(env: &Env, w: &GeminiWorld, q: &str) -> Vec<String> {
    let out = in_gemini_world(env, w, &["query", "--format", "json", q]);
    assert!(out.status.code().unwrap_or(2) <= 1, "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap().to_string())
        .collect()
}

/// Issue 25 part 4: `index --gemini` finds this project's chats under
/// `~/.gemini/tmp/` in both folder layouts (not another project's), indexes
/// them without their thoughts, and skips them when unchanged.
#[test]
fn index_gemini_finds_this_projects_chats_and_is_incremental() {
    let env = Env::new();
    let w = gemini_world(&env);
    let out = in_gemini_world(&env, &w, &["index", "--json", "--gemini"]);
    assert!(out.status.success(), "{out:?}");
    let s = gemini_summary(&out);
    assert_eq!(
        (s["files"].as_u64(), s["indexed"].as_u64()),
        (Some(2), Some(2)),
        "{s}"
    );
    let hits = gemini_hits(&env, &w, "fjord importer timeout");
    assert!(
        hits.iter()
            .any(|h| h.starts_with("3f2a9c1e-7d41-4b8e-9c0a-5e6f7a8b9c0d#")),
        "{hits:?}"
    );
    let hits = gemini_hits(&env, &w, "how are you test-gemini.txt");
    assert!(
        hits.iter()
            .any(|h| h.starts_with("faff42ab-6ea5-4f78-b8c4-f7dd6272af08#")),
        "{hits:?}"
    );
    // Thoughts were never indexed, in the real chat or the log.
    for thought in ["Strategically", "walrus", "narwhals"] {
        assert!(gemini_hits(&env, &w, thought).is_empty(), "{thought}");
    }
    // Again: nothing changed, nothing read.
    let s = gemini_summary(&in_gemini_world(&env, &w, &["index", "--json", "--gemini"]));
    assert_eq!(
        (s["unchanged"].as_u64(), s["indexed"].as_u64()),
        (Some(2), Some(0)),
        "{s}"
    );
    // Gemini CLI rewinds the log and goes on: only that chat is read again,
    // and what the rewind removed leaves the index.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&w.log)
        .unwrap();
    f.write_all(b"{\"$rewindTo\":\"g-3\"}\n").unwrap();
    drop(f);
    let s = gemini_summary(&in_gemini_world(&env, &w, &["index", "--json", "--gemini"]));
    assert_eq!(
        (s["unchanged"].as_u64(), s["indexed"].as_u64()),
        (Some(1), Some(1)),
        "{s}"
    );
    assert!(gemini_hits(&env, &w, "stream rows instead of collecting").is_empty());
}

/// `GEMINI_CLI_HOME` moves Gemini CLI's folder (as Gemini CLI reads it);
/// with no chats, the output names where it looked.
#[test]
fn index_gemini_follows_gemini_cli_home_and_says_where_it_looked() {
    let env = Env::new();
    let w = gemini_world(&env);
    let moved = env.tmp.path().join("gemini-home");
    std::fs::create_dir_all(&moved).unwrap();
    let run = |home: &Path| {
        assert_cmd::Command::cargo_bin("recall")
            .unwrap()
            .env_remove("RECALL_PROJECT")
            .env("HOME", &w.user)
            .env("GEMINI_CLI_HOME", home)
            .arg("--home")
            .arg(env.home())
            .arg("--cwd")
            .arg(&w.root)
            .args(["index", "--json", "--gemini"])
            .output()
            .unwrap()
    };
    let out = run(&moved);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("no Gemini CLI chats of"), "{stderr}");
    assert!(
        stderr.contains(&format!("{}/.gemini/tmp", moved.display())),
        "{stderr}"
    );
    assert_eq!(gemini_summary(&out)["files"], 0);
    std::fs::rename(w.user.join(".gemini"), moved.join(".gemini")).unwrap();
    assert_eq!(gemini_summary(&run(&moved))["indexed"], 2);
}

/// A chat cut short (Gemini CLI rewrote the JSON document while it was
/// copied, or the disk filled) fails with the file, line and column; the
/// passages indexed from it before stay; the rest of the batch is indexed.
#[test]
fn a_truncated_gemini_chat_fails_clearly_and_keeps_what_was_indexed() {
    let env = Env::new();
    let w = gemini_world(&env);
    assert!(in_gemini_world(&env, &w, &["index", "--gemini"])
        .status
        .success());
    let whole = std::fs::read(&w.real).unwrap();
    std::fs::write(&w.real, &whole[..whole.len() / 2]).unwrap();
    std::fs::write(
        &w.log,
        [gemini_fixture(GEMINI_LOG), b"\n".to_vec()].concat(),
    )
    .unwrap();
    let out = in_gemini_world(&env, &w, &["index", "--json", "--gemini"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(3),
        "a batch with a failed file: {stderr}"
    );
    let s = gemini_summary(&out);
    assert_eq!(
        (s["failed"].as_u64(), s["indexed"].as_u64()),
        (Some(1), Some(1)),
        "{s}"
    );
    let line = stderr
        .lines()
        .find(|l| l.contains("cannot parse the chat"))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(line.contains(w.real.to_str().unwrap()), "{line}");
    assert!(
        line.contains("at line ") && line.contains(", column "),
        "{line}"
    );
    assert!(
        !gemini_hits(&env, &w, "how are you test-gemini.txt").is_empty(),
        "the chat's earlier passages stay"
    );
}

/// Issue 39 item 3: a compaction's transcript (Claude Code's
/// `agent-acompact-…` sub-agent) holds the instruction to summarise and the
/// summary, which its parent session holds too (its `isCompactSummary`
/// line). Its hits came back beside the parent's with the same summary,
/// under the instruction as their title. The summary is now one hit, the
/// parent's, under the parent's title.
#[test]
fn r39_a_compactions_summary_is_one_hit_of_its_parent_session() {
    let env = Env::new();
    index_a_compaction(&env);
    let v = env.query_json(&env.project, "pinning nom");
    let hits = v["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 1, "{v:#}");
    assert_eq!(hits[0]["source"]["session_id"], "s1", "{v:#}");
    assert_eq!(
        hits[0]["title"], "fix the walrus parser crash on empty input",
        "{v:#}"
    );
    let v = env.query_json(&env.project, "create a detailed summary");
    assert!(
        v["hits"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["source"]["session_id"] != "s1/agent-acompact-7f"),
        "{v:#}"
    );
}

/// A compaction's transcript is indexed without messages, so there is
/// nothing to extract from it: `extract --status` listed it as a session
/// of its own, `pending`, and a run then skipped it as a "transcript
/// under 200 characters". It is neither listed nor due now; asked for by
/// id, it is skipped for what it is.
#[test]
fn r39_a_compaction_is_not_a_session_to_extract() {
    let env = Env::new();
    index_a_compaction(&env);
    let listed = |env: &Env| -> Vec<(String, String)> {
        env.run_json(&["extract", "--status", "--json"])
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
                (s("session_id"), s("state"))
            })
            .collect()
    };
    assert_eq!(listed(&env), [("s1".to_string(), "pending".to_string())]);
    let run = env.run_json(&[
        "extract",
        "--json",
        "--extractor",
        "builtin",
        "--since",
        "2020-01-01",
    ]);
    let ran: Vec<&str> = run["report"]["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["session_id"].as_str().unwrap())
        .collect();
    assert_eq!(ran, ["s1"], "{run:#}");
    let one = env.run_json(&[
        "extract",
        "--json",
        "--extractor",
        "builtin",
        "--session",
        "s1/agent-acompact-7f",
    ]);
    let o = &one["report"]["outcomes"][0];
    assert_eq!(
        (o["state"].as_str(), o["reason"].as_str()),
        (Some("skipped"), Some("no messages to extract")),
        "{one:#}"
    );
    // `s1` itself is short, so skipped too, as a short transcript.
    let mut after = listed(&env);
    after.sort();
    assert_eq!(
        after,
        [
            ("s1".to_string(), "skipped".to_string()),
            ("s1/agent-acompact-7f".to_string(), "skipped".to_string())
        ]
    );
}

/// A Claude Code session `s1` with a compaction, and the compaction's
/// transcript beside it, indexed.
fn index_a_compaction(env: &Env) {
    let dir = env.tmp.path().join("cc");
    std::fs::create_dir_all(dir.join("s1/subagents")).unwrap();
    let line = |uuid: &str, extra: &str, role: &str, text: &str| {
        format!(
            "{{\"type\":\"{role}\",\"uuid\":\"{uuid}\",\"parentUuid\":null,\"sessionId\":\"s1\",{extra}\"timestamp\":\"2026-01-01T00:00:00Z\",\"cwd\":\"/w\",\"message\":{{\"role\":\"{role}\",\"content\":\"{text}\"}}}}\n"
        )
    };
    let summary =
        "Summary: the walrus crash came from an unchecked slice; pinning nom to 7.1 fixed it.";
    std::fs::write(
        dir.join("s1.jsonl"),
        [
            line(
                "u1",
                "",
                "user",
                "fix the walrus parser crash on empty input",
            ),
            line("u2", "\"isCompactSummary\":true,", "user", summary),
        ]
        .concat(),
    )
    .unwrap();
    let sub = "\"isSidechain\":true,\"agentId\":\"acompact-7f\",";
    std::fs::write(
        dir.join("s1/subagents/agent-acompact-7f.jsonl"),
        [
            line(
                "c1",
                sub,
                "user",
                "Your task is to create a detailed summary of the conversation so far",
            ),
            line("c2", sub, "assistant", summary),
        ]
        .concat(),
    )
    .unwrap();
    env.cmd()
        .args(["index", "--format", "claude-code"])
        .arg(&dir)
        .assert()
        .success();
}
