//! Codex (`codex exec`) with recall installed by `recall hook install
//! --codex --allow-mcp`: native hooks, trusted by the install (Codex skips
//! an untrusted hook without a word), and the MCP server.

use std::path::{Path, PathBuf};

use super::fake_model::{FakeModel, Logged};
use super::{assert_ran, launcher, run, two_tool_script, Machine};

const CODEWORD: &str = "xylophonewombat";

/// The model requests' input items, as text, of the last request.
fn tool_outputs(requests: &[Logged]) -> Vec<String> {
    let last = requests.last().expect("the model was called");
    last.body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i["type"] == "function_call_output")
        .map(|i| i["output"].to_string())
        .collect()
}

#[test]
fn codex_runs_recalls_native_hooks_and_mcp_tools() {
    let Some(bin) = launcher("codex") else {
        return;
    };
    let m = Machine::new();
    let model = FakeModel::start(two_tool_script(CODEWORD));
    let codex_home = codex_home(&m, &model);
    let installed = m.recall(
        &bin,
        &[
            "hook",
            "install",
            "--codex",
            "--allow-mcp",
            "--yes",
            "--no-backfill",
        ],
    );
    assert!(installed.contains("hooks.json"), "{installed}");
    m.add_record(&bin);
    git_commit(&m.project);
    let out = run(
        m.command(&bin, &bin)
            .env("CODEX_HOME", &codex_home)
            .args(["exec", "How do we deploy the service?"]),
        180,
    );
    assert_ran("codex exec", &out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(CODEWORD), "{stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("clamping"),
        "SessionEnd's timeout is over Codex's cap: {stderr}"
    );

    let requests = model.model_requests();
    assert!(requests.len() >= 3, "{} requests", requests.len());
    // The hooks ran (trusted by the install, no bypass flag): their text
    // is a developer message of the first request.
    let developer: Vec<String> = requests[0].body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i["role"] == "developer")
        .map(|i| i.to_string())
        .collect();
    assert!(
        developer
            .iter()
            .any(|d| d.contains("Recalled context") && d.contains("make ship-it")),
        "no hook's text reached the model: {developer:?}"
    );
    let tools = requests[0].body["tools"].to_string();
    assert!(tools.contains("\"mcp__recall\""), "{tools}");
    let outputs = tool_outputs(&requests);
    assert_eq!(outputs.len(), 2, "{outputs:?}");
    assert!(outputs[0].contains("make ship-it"), "{outputs:?}");
    assert!(outputs[1].contains("Remembered"), "{outputs:?}");
    assert!(m
        .agent_records()
        .iter()
        .any(|r| r.contains("docs/RELEASING.md")));
    let hits = m.wait_for_session_hit(&bin, CODEWORD);
    let session = hits["hits"]
        .as_array()
        .and_then(|h| h.iter().find(|h| h["kind"] == "session"))
        .unwrap_or_else(|| panic!("the rollout was not indexed: {hits}"));
    assert!(
        !session.to_string().contains("Recalled context"),
        "{session}"
    );
}

/// The user's Codex home, configured with a model provider on loopback
/// (`model`); recall's install merges into its `config.toml`.
pub(super) fn codex_home(m: &Machine, model: &FakeModel) -> PathBuf {
    let home = m.home.join(".codex");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join("config.toml"),
        format!(
            "model = \"fake-model\"\nmodel_provider = \"fake\"\n\n\
             [model_providers.fake]\nname = \"Fake\"\nbase_url = \"{}/v1\"\nwire_api = \"responses\"\n\n\
             [features]\nplugins = false\n",
            model.url()
        ),
    )
    .unwrap();
    home
}

/// Codex wants a repository with a commit to call its folder trusted.
fn git_commit(dir: &Path) {
    let ok = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@e",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "start",
        ])
        .current_dir(dir)
        .status()
        .unwrap()
        .success();
    assert!(ok);
}
