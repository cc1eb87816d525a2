//! Distil with the launcher's own model: `recall extract --model-cmd`
//! runs each launcher's non-interactive mode, which asks the fake model;
//! the model answers with candidate facts, and the guardrails (at most 5,
//! confidence, near-duplicates, secrets) decide what becomes a record. The
//! launcher's own recall hooks stay quiet in that run: no memory is
//! injected into the extraction prompt and the extraction is not indexed
//! as a session.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use super::fake_model::{FakeModel, Script};
use super::{assert_ran, launcher, run, Machine, RECORD};

/// A session worth distilling, as a neutral transcript with a word the
/// prompt must carry to the model.
const SESSION: &str = r#"{"session": {"id": "flaky-watcher", "title": "the flaky watcher test"}}
{"role": "user", "content": "The gossamer watcher test is flaky on CI. Find out why and fix it; keep the change small.", "id": "m0", "timestamp": "2020-03-01T10:00:00Z"}
{"role": "assistant", "content": "It races the background file watcher, which sometimes fires after the assertion. The test now waits for the watcher's first event before asserting; fifty runs in a row passed.", "id": "m1", "timestamp": "2020-03-01T10:01:00Z"}
{"role": "user", "content": "Good. From now on tests that use the watcher must wait for its first event.", "id": "m2", "timestamp": "2020-03-01T10:02:00Z"}
"#;

/// What the model answers: six good facts (one over the cap), one it is
/// unsure of, one that repeats a record, and one holding a token.
fn answer() -> String {
    let token = format!("ghp_{}", "Xk9Qm2Zr7Lp4Wn8Vb3Hd6Jf1Tc5Ys0Ga7Ke2");
    let fact = |key: &str, text: &str, confidence: f64| {
        json!({"category": "procedures", "scope": "project", "key": key, "text": text,
               "confidence": confidence, "evidence": ["m1"]})
    };
    let facts = json!({"facts": [
        fact("watcher waits", "Tests that use the file watcher wait for its first event before asserting.", 0.95),
        fact("flaky ci", "The watcher test was flaky on CI because it raced the background watcher.", 0.9),
        fact("small changes", "Fixes to flaky tests are kept small and verified with fifty runs.", 0.85),
        fact("watcher events", "The background file watcher can fire after a test's assertion.", 0.8),
        fact("ci reruns", "A flaky test is rerun fifty times in a row before it counts as fixed.", 0.75),
        fact("sixth", "The gossamer suite runs on every pull request in CI.", 0.7),
        fact("unsure", "Maybe the watcher should be replaced by polling.", 0.3),
        fact("deploys again", RECORD, 0.9),
        fact("the token", &format!("The CI token is {token}."), 0.9),
    ]});
    format!("Here is what the session taught:\n```json\n{facts:#}\n```\n")
}

/// Index the session, then `recall extract --model-cmd CMD` with the
/// launcher's environment (`env`); the facts written and the requests the
/// model saw.
fn distil(m: &Machine, bin: &Path, model: &FakeModel, cmd: &str, env: &dyn Fn(&mut Command)) {
    m.add_record(bin);
    let file = m.project.join("flaky-watcher.jsonl");
    std::fs::write(&file, SESSION).unwrap();
    m.recall(bin, &["index", file.to_str().unwrap()]);
    let sessions_before = session_count(m, bin);
    assert_eq!(sessions_before, 1);
    let mut c = m.command(Path::new(env!("CARGO_BIN_EXE_recall")), bin);
    env(&mut c);
    c.args([
        "extract",
        "--session",
        "flaky-watcher",
        "--model-cmd",
        cmd,
        "--timeout",
        "120",
        "--json",
    ]);
    let out = run(&mut c, 200);
    assert_ran("recall extract --model-cmd", &out);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();

    // The prompt reached the model, without memory injected by a hook.
    let asked = model.model_requests();
    assert!(!asked.is_empty(), "the model was not asked");
    let all: String = asked.iter().map(|r| r.text()).collect();
    assert!(all.contains("gossamer watcher test"), "{all}");
    assert!(
        !all.contains("Recalled context"),
        "a hook injected memory: {all}"
    );

    // The guardrails decided what became a record.
    let auto: Vec<String> = walkdir::WalkDir::new(&m.recall_home)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .filter(|t| t.lines().any(|l| l.trim() == "source: auto"))
        .collect();
    assert_eq!(auto.len(), 5, "{report:#}\n{auto:#?}");
    let joined = auto.join("\n");
    assert!(joined.contains("wait for its first event"), "{joined}");
    for left_out in ["polling", "make ship-it", "ghp_", "CI token"] {
        assert!(!joined.contains(left_out), "{left_out} was kept: {joined}");
    }
    assert!(joined.contains("extractor: model"), "{joined}");
    // The extraction run itself is not a session of the project, nor of
    // any other: the launcher's recall hooks did nothing in it.
    assert_eq!(session_count(m, bin), sessions_before, "{report:#}");
    let projects: Value =
        serde_json::from_str(&m.recall(bin, &["project", "list", "--json"])).unwrap();
    assert_eq!(projects.as_array().map(Vec::len), Some(1), "{projects:#}");
}

fn session_count(m: &Machine, bin: &Path) -> usize {
    let out = m.recall(
        bin,
        &["query", "--format", "json", "--kind", "session", "watcher"],
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    v["hits"]
        .as_array()
        .map(|h| {
            let mut ids: Vec<&str> = h
                .iter()
                .filter_map(|h| h["source"]["session_id"].as_str())
                .collect();
            ids.sort();
            ids.dedup();
            ids.len()
        })
        .unwrap_or(0)
}

fn script() -> Script {
    Script {
        tools: Vec::new(),
        answer: answer(),
    }
}

#[test]
fn claude_p_distils_a_session_through_the_guardrails() {
    let Some(bin) = launcher("claude") else {
        return;
    };
    let m = Machine::new();
    let model = FakeModel::start(script());
    // recall's hooks for every Claude Code session of this person: they
    // must stay quiet in the extraction run.
    m.recall(
        &bin,
        &[
            "hook",
            "install",
            "--claude-code",
            "--user",
            "--yes",
            "--no-backfill",
        ],
    );
    let url = model.url();
    distil(&m, &bin, &model, "claude -p", &|c| {
        super::claude::claude_env(c, &url)
    });
}

#[test]
fn codex_exec_distils_a_session_through_the_guardrails() {
    let Some(bin) = launcher("codex") else {
        return;
    };
    let m = Machine::new();
    let model = FakeModel::start(script());
    let codex_home = super::codex::codex_home(&m, &model);
    m.recall(
        &bin,
        &["hook", "install", "--codex", "--yes", "--no-backfill"],
    );
    let home = codex_home.clone();
    distil(
        &m,
        &bin,
        &model,
        "codex exec --skip-git-repo-check -",
        &|c| {
            c.env("CODEX_HOME", &home);
        },
    );
}

#[test]
fn gemini_distils_a_session_through_the_guardrails() {
    let Some(bin) = launcher("gemini") else {
        return;
    };
    let m = Machine::new();
    let model = FakeModel::start(script());
    super::gemini::user_settings(&m, json!({}));
    m.recall(
        &bin,
        &[
            "hook",
            "install",
            "--gemini",
            "--user",
            "--yes",
            "--no-backfill",
        ],
    );
    let url = model.url();
    distil(&m, &bin, &model, "gemini --skip-trust", &|c| {
        c.env("GEMINI_API_KEY", "dummy")
            .env("GOOGLE_GEMINI_BASE_URL", &url);
    });
}
