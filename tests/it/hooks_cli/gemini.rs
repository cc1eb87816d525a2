//! Gemini CLI (issue 25 part 4): SessionStart and BeforeAgent add context,
//! SessionEnd indexes the chat, bad input exits 0 with an empty object, and
//! `recall hook install gemini` merges its settings and offers to index the
//! project's earlier chats.

use std::path::{Path, PathBuf};

use super::{
    backups, hook, in_project, make_project, ok, populated, query_sessions, recall, run_hook,
};
use crate::common::{assert_success, Env};
use serde_json::{json, Value};

/// A payload as Gemini CLI sends it (`packages/core/src/hooks/types.ts`).
fn gemini_payload(event: &str, cwd: &Path, transcript: &Path, extra: Value) -> Value {
    let mut p = json!({
        "session_id": "3f2a9c1e-7d41-4b8e-9c0a-5e6f7a8b9c0d",
        "transcript_path": transcript,
        "cwd": cwd,
        "hook_event_name": event,
        "timestamp": "2026-05-02T09:14:03.120Z",
    });
    for (k, v) in extra.as_object().unwrap() {
        p[k] = v.clone();
    }
    p
}

/// The hand-written v0.39 chat log of `testdata/gemini/`, copied to `dir`
/// as Gemini CLI names it.
fn gemini_chat(dir: &Path) -> PathBuf {
    let name = "session-2026-05-02T09-14-3f2a9c1e.jsonl";
    let src = crate::common::testdata("gemini").join(name);
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(name);
    std::fs::copy(src, &path).unwrap();
    path
}

/// Gemini CLI gets the same context as Claude Code, under its own event
/// names: SessionStart for the session, BeforeAgent for each prompt.
#[test]
fn gemini_session_start_and_before_agent_add_context() {
    let env = Env::new();
    let proj = populated(&env);
    let chat = proj.join("chat.jsonl");
    let p = gemini_payload("SessionStart", &proj, &chat, json!({"source": "startup"}));
    let ctx = hook(&env, "gemini", &p).context("SessionStart");
    assert!(ctx.contains("database migrations run with sqlx"), "{ctx}");
    let p = gemini_payload(
        "BeforeAgent",
        &proj.join("src/api"),
        &chat,
        json!({"prompt": "checkout hangs: is the redis pool exhausted again?"}),
    );
    let ctx = hook(&env, "gemini", &p).context("BeforeAgent");
    assert!(ctx.contains("Redis pool was exhausted"), "{ctx}");
    // The prompt event is recognised by name, whichever launcher's hook
    // gets it (another session: this one was given the hit already).
    let p = gemini_payload(
        "UserPromptSubmit",
        &proj,
        &chat,
        json!({"prompt": "redis pool", "session_id": "another"}),
    );
    assert!(hook(&env, "gemini", &p)
        .context("UserPromptSubmit")
        .contains("Redis"));
}

/// Regression (issue 35: Gemini CLI 0.61 prepends SessionStart's context
/// to the prompt BeforeAgent gets, so recall searched its own earlier
/// answer): the prompt is what the person typed, without `<hook_context>`.
#[test]
fn r_gemini_before_agent_recalls_the_typed_prompt_not_the_injected_context() {
    let env = Env::new();
    let proj = populated(&env);
    let chat = proj.join("chat.jsonl");
    let injected = "<hook_context>## Recalled context\n- checkout hangs: the Redis pool was exhausted</hook_context>\n\n";
    let p = gemini_payload(
        "BeforeAgent",
        &proj,
        &chat,
        json!({"prompt": format!("{injected}say hello to the team")}),
    );
    let out = hook(&env, "gemini", &p).json().to_string();
    assert!(
        !out.contains("Redis"),
        "recalled from the injected context: {out}"
    );
    // What the person typed is still recalled for.
    let p = gemini_payload(
        "BeforeAgent",
        &proj,
        &chat,
        json!({"prompt": format!("{injected}checkout hangs: is the redis pool exhausted again?"),
               "session_id": "another"}),
    );
    assert!(hook(&env, "gemini", &p)
        .context("BeforeAgent")
        .contains("Redis pool was exhausted"));
}

/// SessionEnd (and AfterAgent, after each turn) index the chat at
/// `transcript_path`; the hook answers `{}` so Gemini CLI shows nothing.
#[test]
fn gemini_session_end_indexes_the_chat() {
    let env = Env::new();
    let proj = populated(&env);
    let chat = gemini_chat(&env.tmp.path().join("gemini/tmp/shop/chats"));
    assert!(query_sessions(&env, &proj, "fjord importer").is_empty());
    let p = gemini_payload(
        "AfterAgent",
        &proj,
        &chat,
        json!({"prompt": "x", "prompt_response": "y", "stop_hook_active": false}),
    );
    let r = hook(&env, "gemini", &p);
    assert_eq!((r.code, r.out.trim()), (0, "{}"), "{r:?}");
    assert_eq!(
        query_sessions(&env, &proj, "fjord importer"),
        ["3f2a9c1e-7d41-4b8e-9c0a-5e6f7a8b9c0d"]
    );
    // More turns, then the session ends: the new turn is found.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&chat)
        .unwrap();
    use std::io::Write as _;
    let turn = json!({"id": "u-9", "timestamp": "2026-05-02T09:20:00Z", "type": "user",
        "content": [{"text": "and the quince exporter drops its header row"}]});
    writeln!(f, "{turn}").unwrap();
    drop(f);
    let p = gemini_payload("SessionEnd", &proj, &chat, json!({"reason": "exit"}));
    let r = hook(&env, "gemini", &p);
    assert_eq!((r.code, r.out.trim()), (0, "{}"), "{r:?}");
    assert_eq!(
        query_sessions(&env, &proj, "quince exporter"),
        ["3f2a9c1e-7d41-4b8e-9c0a-5e6f7a8b9c0d"]
    );
    // The thoughts in the chat never reach the index, nor the context a
    // hook (recall itself) added to a prompt.
    assert!(query_sessions(&env, &proj, "walrus").is_empty());
    assert!(query_sessions(&env, &proj, "pelican queue").is_empty());
}

/// Regression (issue 35: Gemini CLI 0.61 fires PreCompress before every
/// model call, compressing or not, and recall indexed and extracted the
/// chat each time, 79-156 ms a turn): an automatic PreCompress is answered
/// at once and leaves the chat to SessionEnd; the user's `/compress`
/// (trigger `manual`) still indexes it.
#[test]
fn r_gemini_automatic_precompress_does_no_work_and_manual_indexes() {
    let env = Env::new();
    let proj = populated(&env);
    let chat = gemini_chat(&env.tmp.path().join("gemini/tmp/shop/chats"));
    let p = gemini_payload("PreCompress", &proj, &chat, json!({"trigger": "auto"}));
    let r = hook(&env, "gemini", &p);
    assert_eq!((r.code, r.out.trim()), (0, "{}"), "{r:?}");
    assert!(query_sessions(&env, &proj, "fjord importer").is_empty());
    let p = gemini_payload("PreCompress", &proj, &chat, json!({"trigger": "manual"}));
    let r = hook(&env, "gemini", &p);
    assert_eq!((r.code, r.out.trim()), (0, "{}"), "{r:?}");
    assert_eq!(
        query_sessions(&env, &proj, "fjord importer"),
        ["3f2a9c1e-7d41-4b8e-9c0a-5e6f7a8b9c0d"]
    );
}

/// Never break the agent: bad input, unknown events, a missing chat or
/// an empty `transcript_path` exit 0 with `{}` on stdout (Gemini CLI would
/// otherwise show the log line on stderr to the user) and the reason on
/// stderr.
#[test]
fn gemini_bad_input_exits_0_with_an_empty_object() {
    let env = Env::new();
    let proj = populated(&env);
    for stdin in [&b""[..], b"not json {{", b"\xff\xfe\x00", b"[1]"] {
        let r = run_hook(recall(&env), "gemini", stdin.to_vec(), &[]);
        assert_eq!((r.code, r.out.trim()), (0, "{}"), "{stdin:?}: {r:?}");
        assert!(
            r.err.contains("recall hook gemini") && r.err.contains("hook payload"),
            "{stdin:?}: {r:?}"
        );
    }
    for event in ["BeforeTool", "Notification", "BeforeModel", ""] {
        let p = gemini_payload(
            event,
            &proj,
            &proj.join("c.json"),
            json!({"tool_name": "read_file"}),
        );
        let r = hook(&env, "gemini", &p);
        assert_eq!((r.code, r.out.trim()), (0, "{}"), "{event}: {r:?}");
    }
    let p = gemini_payload(
        "SessionEnd",
        &proj,
        Path::new(""),
        json!({"reason": "exit"}),
    );
    let r = hook(&env, "gemini", &p);
    assert_eq!((r.code, r.out.trim()), (0, "{}"), "{r:?}");
    assert!(r.err.contains("no transcript_path"), "{r:?}");
    // A chat cut short: reported, nothing indexed, still exit 0.
    let cut = env.tmp.path().join("session-cut.json");
    std::fs::write(&cut, "{\n  \"sessionId\": \"s\",\n  \"projectHash\": \"h\",\n  \"messages\": [\n    {\"id\": \"u\", \"type\": \"user\", \"content\": \"elderberry").unwrap();
    let p = gemini_payload("SessionEnd", &proj, &cut, json!({"reason": "exit"}));
    let r = hook(&env, "gemini", &p);
    assert_eq!((r.code, r.out.trim()), (0, "{}"), "{r:?}");
    assert!(r.err.contains("cannot parse the chat at line 5"), "{r:?}");
    assert!(query_sessions(&env, &proj, "elderberry").is_empty());
}

fn has_recall_gemini_hook(settings: &Value, event: &str) -> usize {
    settings["hooks"][event]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["hooks"].as_array().into_iter().flatten())
        .filter(|h| {
            h["type"] == "command"
                && h["name"] == "recall"
                && h["timeout"] == 10_000
                && h["command"]
                    .as_str()
                    .is_some_and(|c| c.starts_with("recall ") && c.ends_with(" hook gemini"))
        })
        .count()
}

const GEMINI_EVENTS: [&str; 4] = ["SessionStart", "BeforeAgent", "PreCompress", "SessionEnd"];

/// `hook install --gemini` writes `.gemini/settings.json` as the Claude
/// Code install writes its settings: merged with what is there, backed up,
/// idempotent, with the MCP server entry; a file with comments (which
/// Gemini CLI allows) is left alone with the way to add recall by hand.
#[test]
fn install_gemini_merges_backs_up_and_is_idempotent() {
    let env = Env::new();
    let proj = make_project(&env, "shop");
    let settings = proj.join(".gemini/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let original = serde_json::to_string_pretty(&json!({
        "model": {"name": "gemini-2.5-pro"},
        "hooks": {"SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]}]},
        "mcpServers": {"github": {"command": "github-mcp-server", "args": ["stdio"]}}
    }))
    .unwrap();
    std::fs::write(&settings, &original).unwrap();
    let install = |extra: &[&str]| {
        ok(recall(&env)
            .arg("--cwd")
            .arg(proj.join("src/api"))
            .args(["hook", "install", "--gemini", "--no-backfill"])
            .args(extra))
    };
    let out = install(&["--dry-run"]);
    assert!(out.contains("+            \"name\": \"recall\""), "{out}");
    assert!(out.contains("+    \"recall\": {"), "{out}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), original);
    let out = install(&[]);
    assert!(out.contains("installed recall hooks"), "{out}");
    assert!(out.contains("backed up"), "{out}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(v["model"]["name"], "gemini-2.5-pro");
    assert_eq!(
        v["hooks"]["SessionStart"][0]["hooks"][0]["command"],
        "echo hi"
    );
    for e in GEMINI_EVENTS {
        assert_eq!(has_recall_gemini_hook(&v, e), 1, "{e}: {v:#}");
    }
    assert_eq!(v["mcpServers"]["github"]["command"], "github-mcp-server");
    let recall_mcp = &v["mcpServers"]["recall"];
    assert_eq!(recall_mcp["command"], "recall", "{v:#}");
    assert_eq!(
        recall_mcp["args"],
        json!(["--home", env.home().to_str().unwrap(), "mcp"])
    );
    let b = backups(settings.parent().unwrap());
    assert_eq!(b.len(), 1, "{b:?}");
    assert_eq!(std::fs::read_to_string(&b[0]).unwrap(), original);
    // Again: nothing changes and it says so.
    let bytes = std::fs::read(&settings).unwrap();
    let out = install(&[]);
    assert!(out.contains("already in"), "{out}");
    assert_eq!(std::fs::read(&settings).unwrap(), bytes);
    assert_eq!(backups(settings.parent().unwrap()).len(), 1);
    // Comments: refused with the fix, the file untouched; --print merges.
    let commented = "{\n  // my model\n  \"model\": {\"name\": \"gemini-2.5-flash\"}\n}\n";
    std::fs::write(&settings, commented).unwrap();
    let out = recall(&env)
        .arg("--cwd")
        .arg(&proj)
        .args(["hook", "install", "--gemini", "--no-backfill"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("has comments") && err.contains("--gemini --print"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), commented);
    let printed: Value = serde_json::from_str(&install(&["--print"])).unwrap();
    assert_eq!(printed["model"]["name"], "gemini-2.5-flash");
    assert_eq!(has_recall_gemini_hook(&printed, "BeforeAgent"), 1);
}

/// The install's backfill offer covers Gemini CLI: it finds this project's
/// chats under `~/.gemini`, `--yes` indexes them, and a session then
/// starts with them.
#[test]
fn install_gemini_offers_to_index_the_projects_earlier_chats() {
    let env = Env::new();
    let proj = make_project(&env, "shop");
    let user_home = env.tmp.path().join("user");
    let folder = user_home.join(".gemini/tmp/shop");
    gemini_chat(&folder.join("chats"));
    std::fs::write(folder.join(".project_root"), proj.to_str().unwrap()).unwrap();
    let install = |extra: &[&str]| {
        let out = in_project(&env, &proj)
            .env("HOME", &user_home)
            .env_remove("GEMINI_CLI_HOME")
            .args(["hook", "install", "--gemini"])
            .args(extra)
            .output()
            .unwrap();
        assert_success(&out);
        String::from_utf8(out.stdout).unwrap()
    };
    let out = install(&["--dry-run"]);
    assert!(
        out.contains("would offer to index 1 earlier session file(s)"),
        "{out}"
    );
    assert!(out.contains("1 Gemini CLI"), "{out}");
    let out = install(&[]);
    assert!(
        out.contains("not indexed: `recall index --gemini`"),
        "{out}"
    );
    assert!(query_sessions(&env, &proj, "fjord importer").is_empty());
    let out = install(&["--yes"]);
    assert!(out.contains("indexed"), "{out}");
    assert_eq!(
        query_sessions(&env, &proj, "fjord importer"),
        ["3f2a9c1e-7d41-4b8e-9c0a-5e6f7a8b9c0d"]
    );
    // A new session (its own id) starts with the earlier one.
    let p = gemini_payload(
        "SessionStart",
        &proj,
        &proj.join("c.jsonl"),
        json!({"source": "startup", "session_id": "9b0c1d2e-0000-4000-8000-000000000001"}),
    );
    let ctx = hook(&env, "gemini", &p).context("SessionStart");
    assert!(ctx.contains("Fix the fjord importer timeout"), "{ctx}");
}
