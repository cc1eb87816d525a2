//! Claude Code (`claude -p`) with recall installed by `recall hook install
//! --claude-code --allow-mcp`, and again from the plugin in this
//! repository.

use std::path::Path;

use serde_json::{json, Value};

use std::process::Command;

use super::fake_model::{FakeModel, Logged};
use super::{assert_ran, launcher, run, two_tool_script, Machine};

/// What the fake model says last: a word only its answer holds.
const CODEWORD: &str = "zanzibarquokka";

/// Claude Code's environment for `model`, offline.
pub(super) fn claude_env(c: &mut Command, model_url: &str) {
    c.env("ANTHROPIC_BASE_URL", model_url)
        .env("ANTHROPIC_API_KEY", "dummy")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
}

/// `claude -p PROMPT` on `m` against `model`, with `extra` arguments.
fn claude(m: &Machine, bin: &Path, model: &FakeModel, prompt: &str, extra: &[&str]) -> String {
    let mut c = m.command(bin, bin);
    claude_env(&mut c, &model.url());
    let out = run(c.args(["-p", prompt]).args(extra), 180);
    assert_ran("claude -p", &out);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The tool results in the last model request, as text.
fn tool_results(requests: &[Logged]) -> Vec<String> {
    let last = requests.last().expect("the model was called");
    last.body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b["content"].to_string())
        .collect()
}

fn tool_names(r: &Logged) -> Vec<String> {
    r.body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect()
}

/// Everything the suite checks of one session: the hooks' text in the
/// first request, the tools offered, the round trip, the agent's record
/// and the transcript indexed.
fn check_session(m: &Machine, bin: &Path, model: &FakeModel, prefix: &str) {
    let requests = model.model_requests();
    assert!(requests.len() >= 3, "{} requests", requests.len());
    let first = requests[0].text();
    assert!(
        first.contains("SessionStart hook additional context"),
        "SessionStart's text did not reach the model: {first}"
    );
    assert!(
        first.contains("UserPromptSubmit hook additional context"),
        "the prompt hook's text did not reach the model: {first}"
    );
    assert!(first.contains("make ship-it"), "{first}");
    let names = tool_names(&requests[0]);
    for tool in ["recall", "remember", "get", "list", "forget"] {
        let want = format!("{prefix}__{tool}");
        assert!(names.contains(&want), "{want} not offered: {names:?}");
    }
    let results = tool_results(&requests);
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(results[0].contains("make ship-it"), "{results:?}");
    assert!(results[1].contains("Remembered"), "{results:?}");
    let records = m.agent_records();
    assert!(
        records.iter().any(|r| r.contains("docs/RELEASING.md")),
        "{records:?}"
    );
    // The transcript Claude Code wrote was indexed at SessionEnd: the word
    // only the model's answer held is found in a session.
    let hits = m.wait_for_session_hit(bin, CODEWORD);
    let session = hits["hits"]
        .as_array()
        .and_then(|h| h.iter().find(|h| h["kind"] == "session"))
        .unwrap_or_else(|| panic!("the session was not indexed: {hits}"));
    // What recall's own tool returned is not indexed back as evidence.
    let text = session.to_string();
    assert!(!text.contains("Recalled context"), "{text}");
}

#[test]
fn claude_code_runs_recalls_hooks_and_mcp_tools() {
    let Some(bin) = launcher("claude") else {
        return;
    };
    let m = Machine::new();
    let installed = m.recall(
        &bin,
        &[
            "hook",
            "install",
            "--claude-code",
            "--allow-mcp",
            "--yes",
            "--no-backfill",
        ],
    );
    assert!(installed.contains("mcp__recall"), "{installed}");
    m.add_record(&bin);
    let model = FakeModel::start(two_tool_script(CODEWORD));
    let answer = claude(&m, &bin, &model, "How do we deploy the service?", &[]);
    assert!(answer.contains(CODEWORD), "{answer}");
    check_session(&m, &bin, &model, "mcp__recall");
}

/// The plugin in this repository, added as a local marketplace and
/// installed by the real CLI, runs the same hooks and serves the same
/// tools (named by the plugin).
#[test]
fn claude_code_plugin_installs_from_the_repository_and_runs() {
    let Some(bin) = launcher("claude") else {
        return;
    };
    let m = Machine::new();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let plugin = |args: &[&str]| {
        let out = run(m.command(&bin, &bin).arg("plugin").args(args), 120);
        assert_ran(&format!("claude plugin {args:?}"), &out);
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    plugin(&["validate", repo.to_str().unwrap()]);
    plugin(&["marketplace", "add", repo.to_str().unwrap()]);
    plugin(&["install", "recall@recall"]);
    let listed: Value = serde_json::from_str(&plugin(&["list", "--json"])).unwrap();
    assert!(listed.to_string().contains("recall@recall"), "{listed}");
    // The person allows the plugin's tools in their own settings.
    let settings = m.home.join(".claude/settings.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    v["permissions"] = json!({"allow": ["mcp__plugin_recall_recall"]});
    std::fs::write(&settings, v.to_string()).unwrap();
    m.add_record(&bin);
    let model = FakeModel::start(two_tool_script(CODEWORD));
    let answer = claude(&m, &bin, &model, "How do we deploy the service?", &[]);
    assert!(answer.contains(CODEWORD), "{answer}");
    check_session(&m, &bin, &model, "mcp__plugin_recall_recall");
}
