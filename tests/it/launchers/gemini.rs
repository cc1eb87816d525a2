//! Gemini CLI (`gemini -p`) with recall installed by `recall hook install
//! --gemini --allow-mcp`, and again from the extension in this repository.

use std::path::Path;

use serde_json::{json, Value};

use super::fake_model::{FakeModel, Logged};
use super::{assert_ran, launcher, run, two_tool_script, Machine};

const CODEWORD: &str = "quokkamarmalade";

/// The user's Gemini CLI settings: an API key against the fake model,
/// no usage statistics, and `extra` merged in.
pub(super) fn user_settings(m: &Machine, extra: Value) {
    let dir = m.home.join(".gemini");
    std::fs::create_dir_all(&dir).unwrap();
    let mut v = json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": false}
    });
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    std::fs::write(dir.join("settings.json"), v.to_string()).unwrap();
}

fn gemini(m: &Machine, bin: &Path, model: &FakeModel, args: &[&str]) -> std::process::Output {
    run(
        m.command(bin, bin)
            .env("GEMINI_API_KEY", "dummy")
            .env("GOOGLE_GEMINI_BASE_URL", model.url())
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
            .args(args),
        180,
    )
}

/// The model's streamed turns (not the router's calls).
fn turns(model: &FakeModel) -> Vec<Logged> {
    model
        .model_requests()
        .into_iter()
        .filter(|r| r.path.contains(":streamGenerateContent"))
        .collect()
}

fn check_session(m: &Machine, bin: &Path, model: &FakeModel) {
    let turns = turns(model);
    assert!(turns.len() >= 3, "{} turns", turns.len());
    let first = turns[0].text();
    assert!(first.contains("<hook_context>"), "no hook's text: {first}");
    assert!(first.contains("make ship-it"), "{first}");
    let names = turns[0].body["tools"].to_string();
    for tool in ["recall", "remember", "get", "list", "forget"] {
        assert!(
            names.contains(&format!("\"mcp_recall_{tool}\"")),
            "{tool}: {names}"
        );
    }
    let responses: Vec<String> = turns.last().unwrap().body["contents"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
        .filter(|p| p.get("functionResponse").is_some())
        .map(|p| p.to_string())
        .collect();
    assert_eq!(responses.len(), 2, "{responses:?}");
    assert!(responses[0].contains("make ship-it"), "{responses:?}");
    assert!(responses[1].contains("Remembered"), "{responses:?}");
    assert!(m
        .agent_records()
        .iter()
        .any(|r| r.contains("docs/RELEASING.md")));
    let hits = m.wait_for_session_hit(bin, CODEWORD);
    let session = hits["hits"]
        .as_array()
        .and_then(|h| h.iter().find(|h| h["kind"] == "session"))
        .unwrap_or_else(|| panic!("the chat was not indexed: {hits}"));
    assert!(
        !session.to_string().contains("Recalled context"),
        "{session}"
    );
}

#[test]
fn gemini_cli_runs_recalls_hooks_and_mcp_tools() {
    let Some(bin) = launcher("gemini") else {
        return;
    };
    let m = Machine::new();
    user_settings(&m, json!({}));
    let installed = m.recall(
        &bin,
        &[
            "hook",
            "install",
            "--gemini",
            "--allow-mcp",
            "--yes",
            "--no-backfill",
        ],
    );
    assert!(installed.contains("trusted"), "{installed}");
    m.add_record(&bin);
    let model = FakeModel::start(two_tool_script(CODEWORD));
    let out = gemini(&m, &bin, &model, &["-p", "How do we deploy the service?"]);
    assert_ran("gemini -p", &out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(CODEWORD), "{stdout}");
    check_session(&m, &bin, &model);
}

/// The extension in this repository, installed from its folder by the
/// real CLI, runs the same hooks; the person allows recall's MCP server
/// in their settings (an extension's server cannot be trusted by it).
#[test]
fn gemini_cli_extension_installs_from_the_repository_and_runs() {
    let Some(bin) = launcher("gemini") else {
        return;
    };
    let m = Machine::new();
    user_settings(&m, json!({"mcp": {"allowed": ["recall"]}}));
    let model = FakeModel::start(two_tool_script(CODEWORD));
    let ext = Path::new(env!("CARGO_MANIFEST_DIR")).join("plugins/gemini");
    let out = gemini(
        &m,
        &bin,
        &model,
        &["extensions", "install", ext.to_str().unwrap(), "--consent"],
    );
    assert_ran("gemini extensions install", &out);
    assert!(m
        .home
        .join(".gemini/extensions/recall/gemini-extension.json")
        .is_file());
    m.add_record(&bin);
    let out = gemini(&m, &bin, &model, &["-p", "How do we deploy the service?"]);
    assert_ran("gemini -p", &out);
    assert!(String::from_utf8_lossy(&out.stdout).contains(CODEWORD));
    check_session(&m, &bin, &model);
}
