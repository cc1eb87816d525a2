//! The launcher hooks end to end: `recall hook claude-code|codex` with
//! real-looking payloads on stdin, every failure mode (each must exit 0),
//! and `recall hook install`.
//!
//! The project is always chosen from the payload's `cwd` (a folder with a
//! `.git` inside the temporary folder); no test passes `--project`.
//!
//! This file holds the commands, payloads and project set-up every part
//! uses; the tests are in one file per event or concern: `session_start`,
//! `prompt` (UserPromptSubmit), `session_end` (SessionEnd, Stop,
//! PreCompact), `failures` (each must exit 0), `install` and `gemini`
//! (Gemini CLI's events and settings).

mod failures;
mod gemini;
mod install;
mod prompt;
mod session_end;
mod session_start;

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::{testdata, Env};
use assert_cmd::Command;
use serde_json::{json, Value};

const LAUNCHERS: [&str; 2] = ["claude-code", "codex"];

/// `recall --home HOME` with a clean environment, run from the temporary
/// folder (which is not inside the project).
fn recall_with(env: &Env, home: &Path) -> Command {
    let mut c = Command::cargo_bin("recall").unwrap();
    c.env_remove("RECALL_HOME")
        .env_remove("RECALL_PROJECT")
        .env_remove("RECALL_LIMIT")
        .env_remove("RECALL_HOOK_DEADLINE_MS")
        .env_remove("RECALL_LOG")
        .env_remove("RUST_LOG")
        .env("NO_COLOR", "1")
        .arg("--home")
        .arg(home)
        .current_dir(env.tmp.path());
    c
}

fn recall(env: &Env) -> Command {
    recall_with(env, &env.home())
}

/// `recall --home H --cwd PROJ ...`: set-up and checks in the project.
fn in_project(env: &Env, proj: &Path) -> Command {
    let mut c = recall(env);
    c.arg("--cwd").arg(proj);
    c
}

fn ok(c: &mut Command) -> String {
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{:?} failed: {}",
        c,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs `c`, which must be refused as a usage error (exit 2), and gives
/// its stderr.
fn refused(c: &mut Command) -> String {
    let out = c.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{c:?}: {err}");
    err
}

/// What one hook run gave.
#[derive(Debug)]
struct Ran {
    code: i32,
    out: String,
    err: String,
}

impl Ran {
    /// The printed JSON, which must be the whole of stdout.
    fn json(&self) -> Value {
        assert_eq!(self.out.lines().count(), 1, "one line of JSON: {self:?}");
        serde_json::from_str(&self.out).unwrap_or_else(|e| panic!("invalid JSON ({e}): {self:?}"))
    }

    /// The additional context of a printed hook output for `event`.
    fn context(&self, event: &str) -> String {
        let v = self.json();
        let obj = v.as_object().unwrap();
        assert_eq!(obj.len(), 1, "only hookSpecificOutput: {v}");
        let h = &v["hookSpecificOutput"];
        assert_eq!(h["hookEventName"], event, "{v}");
        assert_eq!(h.as_object().unwrap().len(), 2, "{v}");
        let ctx = h["additionalContext"].as_str().unwrap().to_string();
        assert!(
            ctx.chars().count() < 10_000,
            "context of {} chars",
            ctx.chars().count()
        );
        ctx
    }

    /// Exit 0 with either nothing or a valid hook output on stdout.
    fn empty_or_valid(&self, event: &str) {
        assert_eq!(self.code, 0, "{self:?}");
        if !self.out.trim().is_empty() {
            self.context(event);
        }
    }
}

/// Run a hook. The timeout only kills a hook that hangs (its exit code is
/// then -1, which every test rejects); whether a hook kept its deadline
/// shows in what it says, never in a timer.
fn run_hook(mut c: Command, launcher: &str, stdin: impl Into<Vec<u8>>, args: &[&str]) -> Ran {
    let out = c
        .args(["hook", launcher])
        .args(args)
        .write_stdin(stdin)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    Ran {
        code: out.status.code().unwrap_or(-1),
        out: String::from_utf8_lossy(&out.stdout).into_owned(),
        err: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn hook(env: &Env, launcher: &str, payload: &Value) -> Ran {
    run_hook(recall(env), launcher, payload.to_string(), &[])
}

/// A payload as Claude Code and Codex send it.
fn payload(event: &str, cwd: &Path, extra: Value) -> Value {
    let mut p = json!({
        "session_id": "7f9c2e1a-4b8d-4c3e-9a1f-0d2b3c4d5e6f",
        "transcript_path": cwd.join("transcript.jsonl"),
        "cwd": cwd,
        "hook_event_name": event,
    });
    for (k, v) in extra.as_object().unwrap() {
        p[k] = v.clone();
    }
    p
}

/// A git checkout at `<tmp>/work/shop` (with a nested `src/api` folder the
/// payloads use as `cwd`).
fn make_project(env: &Env, name: &str) -> PathBuf {
    let root = env.tmp.path().join("work").join(name);
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(root.join("src/api")).unwrap();
    std::fs::canonicalize(root).unwrap()
}

/// `git` in `dir` with a fixed author; it must succeed.
fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    crate::common::assert_success(&out);
}

/// A git checkout at `<tmp>/work/app` with one commit and a linked
/// worktree at `<tmp>/work/wt` (branch `feature`): (main, worktree).
fn with_worktree(env: &Env) -> (PathBuf, PathBuf) {
    let main = env.tmp.path().join("work/app");
    std::fs::create_dir_all(&main).unwrap();
    git(&main, &["init", "-q"]);
    git(&main, &["commit", "-q", "--allow-empty", "-m", "first"]);
    git(&main, &["worktree", "add", "-q", "../wt", "-b", "feature"]);
    (main, env.tmp.path().join("work/wt"))
}

/// The project's store folder.
fn store_dir(env: &Env, proj: &Path) -> PathBuf {
    let v: Value = serde_json::from_str(&ok(
        in_project(env, proj).args(["project", "show", "--json"])
    ))
    .unwrap();
    PathBuf::from(v["dir"].as_str().unwrap())
}

fn add(env: &Env, proj: &Path, args: &[&str]) {
    ok(in_project(env, proj).args(["record", "add"]).args(args));
}

/// A project with records in both scopes and the two fixture sessions.
fn populated(env: &Env) -> PathBuf {
    let proj = make_project(env, "shop");
    add(
        env,
        &proj,
        &[
            "--category",
            "decisions",
            "--key",
            "database migrations run with sqlx",
            "--pinned",
            "--importance",
            "80",
            "Schema migrations live in migrations/ and run with `sqlx migrate run` before the server starts.",
        ],
    );
    add(
        env,
        &proj,
        &[
            "--category",
            "incidents",
            "--key",
            "checkout hung when the Redis pool was exhausted",
            "--importance",
            "70",
            "Checkout hung under load because the rate limiter held every Redis connection. Fix: pool size 64 and a 250 ms acquire timeout.",
        ],
    );
    add(
        env,
        &proj,
        &[
            "--category",
            "procedures",
            "--key",
            "how to cut a release",
            "--importance",
            "60",
            "Tag vX.Y.Z on main, wait for CI, then run `just release`.",
        ],
    );
    add(
        env,
        &proj,
        &[
            "--scope",
            "user",
            "--category",
            "preferences",
            "--key",
            "show commands before explanations",
            "When we debug timeouts, show the exact commands first.",
        ],
    );
    let sessions = testdata("recall").join("sessions");
    ok(in_project(env, &proj)
        .arg("index")
        .arg(sessions.join("redis-hang.jsonl"))
        .arg(sessions.join("release-push.jsonl")));
    proj
}

fn query_sessions(env: &Env, proj: &Path, q: &str) -> Vec<String> {
    let out = in_project(env, proj)
        .args(["query", "--format", "json", "--kind", "session", q])
        .output()
        .unwrap();
    assert!(out.status.code().unwrap() <= 1);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["source"]["session_id"].as_str().unwrap().to_string())
        .collect()
}

fn backups(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("settings.json.bak-")
        })
        .collect();
    v.sort();
    v
}
