//! `recall hook install` for Claude Code and Codex: the merged settings
//! printed or written, backups, idempotence, the home and the file's mode
//! kept, clear errors, the MCP server wired, and the offer to index a
//! project's earlier sessions.

use std::path::Path;

use super::{add, backups, in_project, make_project, ok, recall, refused, store_dir};
use crate::common::{assert_success, Env};
use serde_json::{json, Value};

const EVENTS: [&str; 3] = ["SessionStart", "UserPromptSubmit", "SessionEnd"];

fn has_recall_hook(settings: &Value, event: &str) -> usize {
    settings["hooks"][event]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["hooks"].as_array().into_iter().flatten())
        .filter(|h| {
            h["type"] == "command"
                && h["command"]
                    .as_str()
                    .is_some_and(|c| c.starts_with("recall ") && c.ends_with(" hook claude-code"))
        })
        .count()
}

#[test]
fn install_print_shows_merged_settings_and_writes_nothing() {
    let env = Env::new();
    let proj = make_project(&env, "shop");
    let out = ok(in_project(&env, &proj).args(["hook", "install", "--claude-code", "--print"]));
    let v: Value = serde_json::from_str(&out).unwrap();
    for e in EVENTS {
        assert_eq!(has_recall_hook(&v, e), 1, "{e}: {v:#}");
    }
    assert!(!proj.join(".claude").exists(), "--print writes nothing");
    // With existing settings, they are kept in the printed result.
    std::fs::create_dir_all(proj.join(".claude")).unwrap();
    let before = r#"{"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify"}]}]}}"#;
    std::fs::write(proj.join(".claude/settings.json"), before).unwrap();
    let out = ok(in_project(&env, &proj).args(["hook", "install", "--claude-code", "--print"]));
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["model"], "opus");
    assert_eq!(v["hooks"]["Stop"][0]["hooks"][0]["command"], "notify");
    assert_eq!(has_recall_hook(&v, "SessionStart"), 1);
    assert_eq!(
        std::fs::read_to_string(proj.join(".claude/settings.json")).unwrap(),
        before
    );
    assert!(backups(&proj.join(".claude")).is_empty());
}

#[test]
fn install_into_the_project_keeps_settings_backs_up_and_is_idempotent() {
    let env = Env::new();
    let proj = make_project(&env, "shop");
    let settings = proj.join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let original = serde_json::to_string_pretty(&json!({
        "model": "opus",
        "permissions": {"allow": ["Bash(cargo test:*)"]},
        "hooks": {"SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]}]}
    }))
    .unwrap();
    std::fs::write(&settings, &original).unwrap();
    // --cwd inside the project (a subfolder) picks the project root.
    let out = ok(recall(&env).arg("--cwd").arg(proj.join("src/api")).args([
        "hook",
        "install",
        "--claude-code",
    ]));
    assert!(out.contains("installed recall hooks"), "{out}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(v["model"], "opus");
    assert_eq!(v["permissions"]["allow"][0], "Bash(cargo test:*)");
    let start = v["hooks"]["SessionStart"].as_array().unwrap();
    assert_eq!(start.len(), 2, "{v:#}");
    assert_eq!(start[0]["hooks"][0]["command"], "echo hi");
    assert_eq!(start[0]["matcher"], "startup");
    for e in EVENTS {
        assert_eq!(has_recall_hook(&v, e), 1, "{e}: {v:#}");
    }
    let b = backups(settings.parent().unwrap());
    assert_eq!(b.len(), 1, "{b:?}");
    assert_eq!(std::fs::read_to_string(&b[0]).unwrap(), original);
    assert!(out.contains("backed up"), "{out}");
    // Again: nothing changes, no second backup.
    let bytes = std::fs::read(&settings).unwrap();
    let out = ok(in_project(&env, &proj).args(["hook", "install", "--claude-code"]));
    assert!(out.contains("already"), "{out}");
    assert_eq!(std::fs::read(&settings).unwrap(), bytes);
    assert_eq!(backups(settings.parent().unwrap()).len(), 1);
}

/// Regression (issue probe: `hook install` dropped the `--home` it was
/// given, so the hooks read another memory, and turned settings.json from
/// 0644 into 0600).
#[test]
fn r_install_keeps_the_home_and_the_settings_mode() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let proj = make_project(&env, "shop");
    ok(in_project(&env, &proj).args(["hook", "install", "--claude-code"]));
    let settings = proj.join(".claude/settings.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    let cmd = v["hooks"]["SessionStart"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        cmd.contains(&format!("--home {}", env.home().display()))
            || cmd.contains(&format!("--home '{}'", env.home().display())),
        "{cmd}"
    );
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&settings), 0o644, "a new settings file is 0644");
    // An existing file keeps its own mode through the rewrite.
    std::fs::write(&settings, r#"{"model": "opus"}"#).unwrap();
    std::fs::set_permissions(&settings, std::fs::Permissions::from_mode(0o640)).unwrap();
    ok(in_project(&env, &proj).args(["hook", "install", "--claude-code"]));
    assert_eq!(mode(&settings), 0o640);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(v["model"], "opus");
}

#[test]
fn install_without_settings_creates_them() {
    let env = Env::new();
    let proj = make_project(&env, "shop");
    ok(in_project(&env, &proj).args(["hook", "install", "--claude-code"]));
    let settings = proj.join(".claude/settings.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    for e in EVENTS {
        assert_eq!(has_recall_hook(&v, e), 1, "{e}");
    }
    assert!(
        backups(settings.parent().unwrap()).is_empty(),
        "nothing to back up"
    );
}

#[test]
fn install_user_writes_home_settings() {
    let env = Env::new();
    let proj = make_project(&env, "shop");
    let user_home = env.tmp.path().join("userhome");
    std::fs::create_dir_all(user_home.join(".claude")).unwrap();
    std::fs::write(
        user_home.join(".claude/settings.json"),
        r#"{"theme": "dark"}"#,
    )
    .unwrap();
    let out = ok(in_project(&env, &proj).env("HOME", &user_home).args([
        "hook",
        "install",
        "--claude-code",
        "--user",
    ]));
    assert!(
        out.contains(
            &user_home
                .join(".claude/settings.json")
                .display()
                .to_string()
        ),
        "{out}"
    );
    let v: Value = serde_json::from_str(
        &std::fs::read_to_string(user_home.join(".claude/settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(v["theme"], "dark");
    for e in EVENTS {
        assert_eq!(has_recall_hook(&v, e), 1, "{e}");
    }
    assert_eq!(backups(&user_home.join(".claude")).len(), 1);
    assert!(!proj.join(".claude").exists(), "the project is untouched");
}

#[test]
fn install_errors_are_clear_and_change_nothing() {
    let env = Env::new();
    let proj = make_project(&env, "shop");
    // No launcher named.
    let err = refused(in_project(&env, &proj).args(["hook", "install"]));
    assert!(err.contains("--claude-code"), "{err}");
    // Settings that are not JSON are left alone.
    let settings = proj.join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, "{ not json").unwrap();
    let err = refused(in_project(&env, &proj).args(["hook", "install", "--claude-code"]));
    assert!(
        err.contains("settings.json") && err.contains("not valid JSON"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), "{ not json");
    assert!(backups(settings.parent().unwrap()).is_empty());
    // "hooks" of the wrong type.
    std::fs::write(&settings, r#"{"hooks": [1]}"#).unwrap();
    let err = refused(in_project(&env, &proj).args(["hook", "install", "--claude-code"]));
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        r#"{"hooks": [1]}"#
    );
    // Regression (review, stop 57): the message named no file ("in
    // settings.json", and so for Codex's hooks.json too).
    assert!(
        err.contains(&format!("cannot merge into {}", settings.display()))
            && err.contains("\"hooks\" is not an object"),
        "{err}"
    );
    // Regression (review, stop 57): a UTF-8 byte order mark, which some
    // editors write, was "expected value at line 1 column 1".
    std::fs::write(&settings, "\u{feff}{\"model\": \"opus\"}").unwrap();
    ok(in_project(&env, &proj).args(["hook", "install", "--claude-code", "--no-backfill"]));
    let v: Value = serde_json::from_str(
        std::fs::read_to_string(&settings)
            .unwrap()
            .trim_start_matches('\u{feff}'),
    )
    .unwrap();
    assert_eq!(v["model"], "opus");
    assert_eq!(has_recall_hook(&v, "UserPromptSubmit"), 1, "{v:#}");
    // Regression: run from the home folder (no repository around it, so the
    // folder is the project), a project install wrote the launcher's user
    // settings, read in every project, and said it installed into a
    // project.
    let home = env.tmp.path().join("me");
    std::fs::create_dir_all(&home).unwrap();
    for launcher in ["--claude-code", "--gemini"] {
        let err = refused(
            recall(&env)
                .env("HOME", &home)
                .arg("--cwd")
                .arg(&home)
                .args(["hook", "install", launcher, "--no-backfill"]),
        );
        assert!(
            err.contains("is your home folder, not a project") && err.contains("--user"),
            "{err}"
        );
    }
    assert_eq!(
        std::fs::read_dir(&home).unwrap().count(),
        0,
        "nothing written"
    );
}

/// `hook install` wires the MCP server too: `.mcp.json` for Claude Code,
/// `[mcp_servers.recall]` in Codex's `config.toml` (comments and other
/// servers kept); again changes nothing; `--dry-run` shows diffs and writes
/// nothing.
#[test]
fn install_wires_the_mcp_server_for_claude_code_and_codex() {
    let env = Env::new();
    let proj = make_project(&env, "shop");
    let codex = env.tmp.path().join("codex");
    std::fs::create_dir_all(&codex).unwrap();
    let config = codex.join("config.toml");
    let original =
        "# my codex settings\nmodel = \"o4\"\n\n[mcp_servers.other]\ncommand = \"other-mcp\"\n";
    std::fs::write(&config, original).unwrap();
    let run = |args: &[&str]| {
        let mut c = in_project(&env, &proj);
        c.env("CODEX_HOME", &codex)
            .args(["hook", "install"])
            .args(args);
        ok(&mut c)
    };
    // Dry run: diffs, nothing written.
    let out = run(&["--claude-code", "--codex", "--dry-run"]);
    assert!(out.contains("+  \"mcpServers\""), "{out}");
    assert!(out.contains("+[mcp_servers.recall]"), "{out}");
    assert!(!proj.join(".mcp.json").exists());
    assert_eq!(std::fs::read_to_string(&config).unwrap(), original);

    let out = run(&["--claude-code", "--codex"]);
    assert!(out.contains("installed the recall MCP server"), "{out}");
    assert!(out.contains("Codex runs only hooks it trusts"), "{out}");
    let mcp: Value =
        serde_json::from_str(&std::fs::read_to_string(proj.join(".mcp.json")).unwrap()).unwrap();
    let server = &mcp["mcpServers"]["recall"];
    assert_eq!(server["command"], "recall", "{mcp:#}");
    let args: Vec<&str> = server["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(args, ["--home", env.home().to_str().unwrap(), "mcp"]);
    let toml_text = std::fs::read_to_string(&config).unwrap();
    assert!(
        toml_text.starts_with("# my codex settings\nmodel = \"o4\""),
        "{toml_text}"
    );
    assert!(toml_text.contains("[mcp_servers.other]"), "{toml_text}");
    let parsed: toml::Table = toml::from_str(&toml_text).unwrap();
    assert_eq!(
        parsed["mcp_servers"]["recall"]["command"].as_str(),
        Some("recall")
    );
    assert_eq!(
        parsed["mcp_servers"]["recall"]["args"]
            .as_array()
            .unwrap()
            .last()
            .and_then(|a| a.as_str()),
        Some("mcp")
    );
    // Codex's native hooks, in hooks.json, each trusted in config.toml
    // under its canonical path, event and place (Codex skips an untrusted
    // hook without a word).
    let hooks: Value =
        serde_json::from_str(&std::fs::read_to_string(codex.join("hooks.json")).unwrap()).unwrap();
    let canonical = codex.canonicalize().unwrap().join("hooks.json");
    let home = env.home();
    let want_cmd = format!("recall --home {} hook codex", home.to_str().unwrap());
    for (event, snake, timeout) in [
        ("SessionStart", "session_start", 10),
        ("UserPromptSubmit", "user_prompt_submit", 10),
        ("PreCompact", "pre_compact", 10),
        ("SessionEnd", "session_end", 3),
    ] {
        let h = &hooks["hooks"][event][0]["hooks"][0];
        assert_eq!(h["command"].as_str(), Some(want_cmd.as_str()), "{hooks:#}");
        assert_eq!(h["timeout"].as_u64(), Some(timeout), "{event}");
        let key = format!("{}:{snake}:0:0", canonical.display());
        let hash = parsed["hooks"]["state"][&key]["trusted_hash"].as_str();
        assert!(
            hash.is_some_and(|h| h.starts_with("sha256:") && h.len() == 71),
            "{key}: {toml_text}"
        );
    }
    assert_eq!(parsed["features"]["hooks"].as_bool(), Some(true));
    // Without --allow-mcp, recall's tools ask first.
    assert!(parsed["mcp_servers"]["recall"]
        .get("default_tools_approval_mode")
        .is_none());
    // Again: nothing changes.
    let bytes = std::fs::read(&config).unwrap();
    let out = run(&["--claude-code", "--codex"]);
    assert_eq!(out.matches("already in").count(), 4, "{out}");
    assert_eq!(std::fs::read(&config).unwrap(), bytes);
    // A broken config is reported, and left alone.
    std::fs::write(&config, "model = [").unwrap();
    let err = refused(
        in_project(&env, &proj)
            .env("CODEX_HOME", &codex)
            .args(["hook", "install", "--codex"]),
    );
    assert!(err.contains("is not valid TOML"), "{err}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), "model = [");
}

/// `--allow-mcp` lets each launcher call recall's MCP tools (and only
/// recall's) without asking; a second install changes nothing.
#[test]
fn install_allow_mcp_grants_each_launcher_recalls_tools_only() {
    let env = Env::new();
    let proj = make_project(&env, "shop");
    let codex = env.tmp.path().join("codex");
    std::fs::create_dir_all(proj.join(".claude")).unwrap();
    std::fs::write(
        proj.join(".claude/settings.local.json"),
        r#"{"permissions": {"allow": ["Bash(make:*)"]}}"#,
    )
    .unwrap();
    let run = || {
        let mut c = in_project(&env, &proj);
        c.env("CODEX_HOME", &codex).args([
            "hook",
            "install",
            "--claude-code",
            "--codex",
            "--gemini",
            "--allow-mcp",
        ]);
        ok(&mut c)
    };
    let out = run();
    assert!(!out.contains("--allow-mcp"), "{out}");
    let read =
        |p: &Path| -> Value { serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap() };
    // Claude Code: the rule in the person's settings.local.json (a project
    // settings.json's allow rules wait for the folder to be trusted).
    let local = read(&proj.join(".claude/settings.local.json"));
    assert_eq!(
        local["permissions"]["allow"],
        json!(["Bash(make:*)", "mcp__recall"])
    );
    assert!(read(&proj.join(".claude/settings.json"))
        .get("permissions")
        .is_none());
    let gemini = read(&proj.join(".gemini/settings.json"));
    assert_eq!(gemini["mcpServers"]["recall"]["trust"], json!(true));
    let config: toml::Table =
        toml::from_str(&std::fs::read_to_string(codex.join("config.toml")).unwrap()).unwrap();
    assert_eq!(
        config["mcp_servers"]["recall"]["default_tools_approval_mode"].as_str(),
        Some("approve")
    );
    let again = run();
    assert_eq!(again.matches("already in").count(), 6, "{again}");
    // Without it, install says what it would allow.
    let env = Env::new();
    let proj = make_project(&env, "shop");
    let out = ok(in_project(&env, &proj).args(["hook", "install", "--claude-code"]));
    assert!(out.contains("--allow-mcp"), "{out}");
    assert!(!proj.join(".claude/settings.local.json").exists());
}

/// A Claude Code home under `home` holding one earlier session of `root`.
fn claude_home_with_a_session(home: &Path, root: &Path, text: &str) {
    let mapped: String = root
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let dir = home.join(".claude/projects").join(mapped);
    std::fs::create_dir_all(&dir).unwrap();
    let line = json!({
        "type": "user", "uuid": "u1", "parentUuid": null, "sessionId": "s1",
        "timestamp": "2026-01-01T00:00:00Z", "cwd": root,
        "message": {"role": "user", "content": text},
    });
    std::fs::write(dir.join("s1.jsonl"), format!("{line}\n")).unwrap();
}

/// Issue 25 part 1: after `hook install`, a project's earlier transcripts
/// stayed unindexed, so the first sessions recalled nothing. Install now
/// offers to index them: `--yes` does it, no terminal and no `--yes` only
/// says how, `--no-backfill` skips, `--dry-run` says what it would offer.
#[test]
fn install_offers_to_index_the_projects_earlier_sessions() {
    let env = Env::new();
    let proj = make_project(&env, "shop");
    let user_home = env.tmp.path().join("user");
    claude_home_with_a_session(&user_home, &proj, "the walrus cache fails on cold start");
    let install = |extra: &[&str]| {
        let out = in_project(&env, &proj)
            .env("HOME", &user_home)
            .args(["hook", "install", "--claude-code"])
            .args(extra)
            .output()
            .unwrap();
        assert_success(&out);
        String::from_utf8(out.stdout).unwrap()
    };
    let hits = || {
        let out = ok(in_project(&env, &proj).args(["query", "--format", "json", "walrus cache"]));
        let v: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
        v["hits"].as_array().map_or(0, Vec::len)
    };
    let out = install(&["--dry-run"]);
    assert!(
        out.contains("would offer to index 1 earlier session file(s)"),
        "{out}"
    );
    let out = install(&["--no-backfill"]);
    assert!(!out.contains("earlier session"), "{out}");
    let out = install(&[]);
    assert!(
        out.contains("not indexed: `recall index --claude-code`"),
        "{out}"
    );
    let store = store_dir(&env, &proj);
    assert!(
        !store.join("index.db").exists(),
        "nothing indexed without --yes"
    );
    let out = install(&["--yes"]);
    assert!(out.contains("indexed"), "{out}");
    assert_eq!(hits(), 1);
    // Regression (review, stop 60): installing again offered the session
    // indexed a moment before.
    let again = install(&[]);
    assert!(
        again.contains("the 1 earlier session file(s) of") && again.contains("are indexed already"),
        "{again}"
    );
    assert!(!again.contains("not indexed"), "{again}");
    // The session (from January) is older than extraction's 30 days:
    // install says how to distil it, and that command takes it.
    let since = out
        .split("`recall extract --since ")
        .nth(1)
        .and_then(|r| r.split('`').next())
        .unwrap_or_else(|| panic!("no extraction offer: {out}"));
    assert!(
        out.contains("1 of the sessions were last active over 30 days ago"),
        "{out}"
    );
    let report: Value = serde_json::from_str(&ok(in_project(&env, &proj).args([
        "extract",
        "--since",
        since,
        "--dry-run",
        "--json",
    ])))
    .unwrap();
    assert_eq!(report["report"]["sessions"], 1, "{report}");
}

/// Issue 39 item 5: a clone moved to another folder is the same project
/// when the user says so. Install names the transcripts recorded in the
/// old folder (now gone) and the command that takes them; `recall project
/// move --from OLD` makes the new folder that project (its records and
/// sessions), and `recall index --claude-code` then takes the sessions
/// recorded in the old folder.
#[test]
fn a_moved_clone_keeps_its_memory_when_the_user_says_so() {
    let env = Env::new();
    let old = make_project(&env, "shop");
    let user_home = env.tmp.path().join("user");
    claude_home_with_a_session(&user_home, &old, "the walrus cache fails on cold start");
    add(
        &env,
        &old,
        &[
            "--category",
            "decisions",
            "--key",
            "cache",
            "Keep the walrus cache warm.",
        ],
    );
    let old_id = ok(in_project(&env, &old).args(["project", "show", "--json"]));
    let old_id: Value = serde_json::from_str(&old_id).unwrap();
    let old_id = old_id["id"].as_str().unwrap().to_string();
    // The clone moves: same name, another folder; the old one is gone.
    let new = env.tmp.path().join("moved").join("shop");
    std::fs::create_dir_all(new.parent().unwrap()).unwrap();
    std::fs::rename(&old, &new).unwrap();
    let new = new.canonicalize().unwrap();
    let out = ok(in_project(&env, &new).env("HOME", &user_home).args([
        "hook",
        "install",
        "--claude-code",
        "--no-backfill",
    ]));
    assert!(
        !out.contains("project move"),
        "--no-backfill says nothing: {out}"
    );
    let out = ok(in_project(&env, &new).env("HOME", &user_home).args([
        "hook",
        "install",
        "--claude-code",
    ]));
    let hint = format!(
        "1 Claude Code transcript(s) were recorded in {}, a folder that no longer exists: if this project moved from there, `recall project move --from {}` makes them its own",
        old.display(),
        old.display()
    );
    assert!(out.contains(&hint), "{out}");
    // Until the user says so, the new folder is a new, empty project.
    let shown: Value = serde_json::from_str(&ok(
        in_project(&env, &new).args(["project", "show", "--json"])
    ))
    .unwrap();
    assert_ne!(shown["id"], old_id.as_str());
    let out = ok(in_project(&env, &new)
        .args(["project", "move", "--from"])
        .arg(&old));
    assert!(out.contains(&format!("project {old_id}")), "{out}");
    let shown: Value = serde_json::from_str(&ok(
        in_project(&env, &new).args(["project", "show", "--json"])
    ))
    .unwrap();
    assert_eq!(shown["id"], old_id.as_str(), "{shown}");
    assert_eq!(shown["root"], new.to_str().unwrap());
    assert_eq!(shown["moved_from"][0], old.to_str().unwrap());
    let hits = ok(in_project(&env, &new).args(["query", "--format", "json", "walrus cache warm"]));
    assert!(hits.contains("Keep the walrus cache warm."), "{hits}");
    ok(in_project(&env, &new)
        .env("HOME", &user_home)
        .args(["index", "--claude-code"]));
    let sessions = ok(in_project(&env, &new).args([
        "query",
        "--format",
        "json",
        "--kind",
        "session",
        "walrus cache cold start",
    ]));
    assert!(sessions.contains("\"session_id\": \"s1\""), "{sessions}");
    // Again: nothing changes. From a folder no project lived in: an error
    // that says where to look.
    let out = ok(in_project(&env, &new)
        .args(["project", "move", "--from"])
        .arg(&old));
    assert!(out.contains("already lives in"), "{out}");
    let out = in_project(&env, &new)
        .args(["project", "move", "--from", "/no/such/place"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no project lived in /no/such/place; `recall project list`"),
        "{err}"
    );
}

/// Regressions (review, stop 57), each of which changed or broke a
/// launcher's settings:
/// - a settings file linked in from elsewhere (dotfiles) was replaced by a
///   plain copy, cutting it off from where it lives;
/// - `--codex --print` wrote Codex's two files instead of printing;
/// - a relative `--home` went into the hook command as written, so each
///   project the launcher ran in got a home of its own; an `--ephemeral`
///   one was deleted when the install ended;
/// - a recall hook written by hand (recall by path, with variables) was
///   not recognised, so recall ran twice on every prompt.
#[test]
fn install_writes_through_links_and_never_doubles_or_loses_a_hook() {
    use std::os::unix::fs::symlink;
    let env = Env::new();
    let proj = make_project(&env, "shop");
    // Linked in from a dotfiles folder.
    let dotfiles = env.tmp.path().join("dotfiles");
    std::fs::create_dir_all(&dotfiles).unwrap();
    std::fs::create_dir_all(proj.join(".claude")).unwrap();
    let real = dotfiles.join("claude-settings.json");
    std::fs::write(&real, r#"{"model": "opus"}"#).unwrap();
    let link = proj.join(".claude/settings.json");
    symlink(&real, &link).unwrap();
    ok(in_project(&env, &proj).args(["hook", "install", "--claude-code", "--no-backfill"]));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link is kept"
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&real).unwrap()).unwrap();
    assert_eq!(v["model"], "opus");
    assert_eq!(has_recall_hook(&v, "UserPromptSubmit"), 1, "{v:#}");

    // --codex --print: refused, nothing written.
    let codex = env.tmp.path().join("codex");
    let out = in_project(&env, &proj)
        .env("CODEX_HOME", &codex)
        .args(["hook", "install", "--codex", "--print"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("--dry-run"), "{err}");
    assert!(!codex.join("hooks.json").exists() && !codex.join("config.toml").exists());

    // A relative home is written as an absolute path.
    let other = make_project(&env, "other");
    // `recall GLOBAL hook install --claude-code` in `other`, without the
    // test's own --home.
    let install = |global: &[&str]| {
        assert_cmd::Command::cargo_bin("recall")
            .unwrap()
            .env_remove("RECALL_HOME")
            .env("HOME", env.tmp.path())
            .args(global)
            .args(["hook", "install", "--claude-code", "--no-backfill"])
            .current_dir(&other)
            .output()
            .unwrap()
    };
    assert_success(&install(&["--home", "relhome"]));
    let v: Value = serde_json::from_str(
        &std::fs::read_to_string(other.join(".claude/settings.json")).unwrap(),
    )
    .unwrap();
    let cmd = v["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_string();
    let want = std::fs::canonicalize(&other).unwrap().join("relhome");
    assert!(
        cmd.contains(&format!("--home {}", want.display()))
            || cmd.contains(&format!("--home '{}'", want.display())),
        "{cmd}"
    );
    let out = install(&["--ephemeral"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("deleted when this command ends"),
        "{err}"
    );

    // A hook written by hand is recognised and kept as written.
    let third = make_project(&env, "third");
    std::fs::create_dir_all(third.join(".claude")).unwrap();
    let mine = "RECALL_LOG=debug /opt/bin/recall hook claude-code";
    let settings = third.join(".claude/settings.json");
    std::fs::write(
        &settings,
        json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": mine}]}]}})
            .to_string(),
    )
    .unwrap();
    ok(in_project(&env, &third).args(["hook", "install", "--claude-code", "--no-backfill"]));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    let prompt = &v["hooks"]["UserPromptSubmit"];
    assert_eq!(prompt.as_array().unwrap().len(), 1, "{v:#}");
    assert_eq!(prompt[0]["hooks"][0]["command"], mine);
    assert_eq!(has_recall_hook(&v, "SessionStart"), 1, "{v:#}");
}

/// `hook uninstall` takes out what install put in, for each launcher, and
/// nothing else: the user's own hooks, servers and settings stay, a Codex
/// hook that moves up keeps its trust under its new place, a file only
/// recall was in is removed, a backup is written first, and a second
/// uninstall (or a dry run) changes nothing.
#[test]
fn uninstall_takes_out_only_what_install_put_in() {
    let env = Env::new();
    let proj = make_project(&env, "shop");
    let codex = env.tmp.path().join("codex");
    std::fs::create_dir_all(&codex).unwrap();
    let config = codex.join("config.toml");
    std::fs::write(&config, "# mine\nmodel = \"o4\"\n").unwrap();
    let claude_settings = proj.join(".claude/settings.json");
    std::fs::create_dir_all(proj.join(".claude")).unwrap();
    std::fs::write(&claude_settings, r#"{"model": "opus"}"#).unwrap();
    let run = |args: &[&str]| {
        let mut c = in_project(&env, &proj);
        c.env("CODEX_HOME", &codex)
            .env("HOME", env.tmp.path())
            .args(args);
        ok(&mut c)
    };
    let all = ["--claude-code", "--codex", "--gemini"];
    let mut install = vec!["hook", "install", "--allow-mcp", "--no-backfill"];
    install.extend(all);
    run(&install);
    // The user adds a hook of their own after recall's in Codex, and Codex
    // trusts it under its place (the second group of SessionStart).
    let hooks_path = codex.join("hooks.json");
    let mut hooks: Value =
        serde_json::from_str(&std::fs::read_to_string(&hooks_path).unwrap()).unwrap();
    let mine = json!({"type": "command", "command": "my-audit", "timeout": 5});
    hooks["hooks"]["SessionStart"]
        .as_array_mut()
        .unwrap()
        .push(json!({"hooks": [mine.clone()]}));
    std::fs::write(&hooks_path, serde_json::to_string_pretty(&hooks).unwrap()).unwrap();
    let canonical = codex.canonicalize().unwrap().join("hooks.json");
    let key = |g: usize| format!("{}:session_start:{g}:0", canonical.display());
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!(
        "\n[hooks.state.\"{}\"]\ntrusted_hash = \"sha256:mine\"\n",
        key(1)
    ));
    std::fs::write(&config, &text).unwrap();

    let files = [
        &claude_settings,
        &config,
        &hooks_path,
        &proj.join(".mcp.json"),
    ];
    let before: Vec<_> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    let mut uninstall = vec!["hook", "uninstall"];
    uninstall.extend(all);
    let dry = run(&[&uninstall[..], &["--dry-run"]].concat());
    assert!(dry.contains("-      \"mcp__recall\""), "{dry}");
    let after: Vec<_> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    assert_eq!(before, after, "a dry run writes nothing");

    let out = run(&uninstall);
    assert!(out.contains("the memory in"), "{out}");
    // Claude Code: the settings as they were; the MCP server's file and the
    // permission's file held only recall, and are gone.
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(&claude_settings).unwrap()).unwrap();
    assert_eq!(settings, json!({"model": "opus"}));
    assert!(!proj.join(".mcp.json").exists(), "{out}");
    assert!(!proj.join(".claude/settings.local.json").exists(), "{out}");
    assert!(!proj.join(".gemini/settings.json").exists(), "{out}");
    let saved: Vec<String> = backups(&proj.join(".claude"))
        .iter()
        .map(|b| std::fs::read_to_string(b).unwrap())
        .collect();
    assert!(saved.iter().any(|b| b.contains("recall")), "{saved:?}");
    // Codex: only the user's hook, its trust moved with it to its new
    // place; recall's server and trust gone, the rest of config.toml kept.
    let hooks: Value =
        serde_json::from_str(&std::fs::read_to_string(&hooks_path).unwrap()).unwrap();
    assert_eq!(
        hooks,
        json!({"hooks": {"SessionStart": [{"hooks": [mine]}]}})
    );
    let toml_text = std::fs::read_to_string(&config).unwrap();
    assert!(
        toml_text.starts_with("# mine\nmodel = \"o4\"\n"),
        "{toml_text}"
    );
    let parsed: toml::Table = toml::from_str(&toml_text).unwrap();
    assert!(
        parsed
            .get("mcp_servers")
            .is_none_or(|s| s.get("recall").is_none()),
        "{toml_text}"
    );
    let state = parsed["hooks"]["state"].as_table().unwrap();
    assert_eq!(state.len(), 1, "{toml_text}");
    assert_eq!(state[&key(0)]["trusted_hash"].as_str(), Some("sha256:mine"));
    // Again: nothing of recall is left to take out.
    let bytes = std::fs::read(&config).unwrap();
    let out = run(&uninstall);
    assert_eq!(
        out.lines()
            .filter(|l| l.starts_with("nothing of recall in "))
            .count(),
        6,
        "{out}"
    );
    assert!(!out.contains("the memory in"), "{out}");
    assert_eq!(std::fs::read(&config).unwrap(), bytes);
}

/// Regressions from a review of `hook uninstall`: through a linked
/// settings file it deleted the user's dotfile and left a dangling link;
/// recall hooks written by hand under another event, after redirections or
/// by a quoted path survived while it said they were gone; and Gemini CLI
/// settings with comments failed every launcher's uninstall even with
/// nothing of recall in them.
#[test]
fn r_uninstall_keeps_linked_files_finds_hand_written_hooks_and_goes_launcher_by_launcher() {
    let env = Env::new();
    let proj = make_project(&env, "shop");
    let dotfiles = env.tmp.path().join("dotfiles");
    std::fs::create_dir_all(&dotfiles).unwrap();
    std::fs::create_dir_all(proj.join(".claude")).unwrap();
    let target = dotfiles.join("claude-settings.json");
    std::fs::write(&target, "{}").unwrap();
    std::os::unix::fs::symlink(&target, proj.join(".claude/settings.json")).unwrap();
    let run = |args: &[&str]| {
        let mut c = in_project(&env, &proj);
        c.env("HOME", env.tmp.path()).args(args);
        c.output().unwrap()
    };
    assert_success(&run(&["hook", "install", "--claude-code", "--no-backfill"]));
    // Hand-written ones beside install's.
    let link = proj.join(".claude/settings.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&link).unwrap()).unwrap();
    let hand = |cmd: &str| json!({"hooks": [{"type": "command", "command": cmd}]});
    v["hooks"]["Stop"] = json!([
        hand("recall hook claude-code 2>/dev/null || true"),
        hand("\"$HOME/.cargo/bin/recall\" hook claude-code"),
    ]);
    std::fs::write(&link, serde_json::to_string(&v).unwrap()).unwrap();
    // Gemini CLI settings with a comment and nothing of recall.
    std::fs::create_dir_all(proj.join(".gemini")).unwrap();
    let gemini = proj.join(".gemini/settings.json");
    let commented = "{\n  // mine\n  \"theme\": \"dark\"\n}\n";
    std::fs::write(&gemini, commented).unwrap();
    let out = run(&["hook", "uninstall", "--claude-code", "--gemini"]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert_success(&out);
    assert!(
        said.contains(&format!("nothing of recall in {}", gemini.display())),
        "{said}"
    );
    assert_eq!(std::fs::read_to_string(&gemini).unwrap(), commented);
    // The link and the file it points at are both there, emptied of recall.
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let left: Value = serde_json::from_str(&std::fs::read_to_string(&target).unwrap()).unwrap();
    assert_eq!(left, json!({}), "{said}");
    assert!(said.contains("emptied"), "{said}");
    // Installing again works through the link.
    assert_success(&run(&["hook", "install", "--claude-code", "--no-backfill"]));
    // A Gemini CLI file with comments and recall in it is left to the user,
    // named, and the other launchers are uninstalled all the same.
    let with_recall = "{\n  // mine\n  \"mcpServers\": {\"recall\": {\"command\": \"recall\", \"args\": [\"mcp\"]}}\n}\n";
    std::fs::write(&gemini, with_recall).unwrap();
    let out = run(&["hook", "uninstall", "--claude-code", "--gemini"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("not uninstalled from Gemini CLI") && err.contains("has comments"),
        "{err}"
    );
    let left: Value = serde_json::from_str(&std::fs::read_to_string(&target).unwrap()).unwrap();
    assert_eq!(left, json!({}));
}

/// Regression (review, stop 60): an MCP server another program had named
/// `recall` was replaced by recall's (its `env` dropped, or kept on
/// recall's), and the next uninstall removed it for good. Each launcher's
/// install now refuses it, naming the file and the entry, and writes
/// nothing.
#[test]
fn r_another_programs_recall_server_is_not_replaced() {
    let env = Env::new();
    let proj = make_project(&env, "shop");
    let codex = env.tmp.path().join("codex");
    std::fs::create_dir_all(&codex).unwrap();
    let theirs =
        json!({"command": "npx", "args": ["-y", "recall-notes-mcp"], "env": {"NOTES_DIR": "/x"}});
    let mcp = proj.join(".mcp.json");
    std::fs::write(&mcp, json!({"mcpServers": {"recall": theirs}}).to_string()).unwrap();
    let gemini = proj.join(".gemini/settings.json");
    std::fs::create_dir_all(gemini.parent().unwrap()).unwrap();
    std::fs::write(
        &gemini,
        json!({"mcpServers": {"recall": theirs}}).to_string(),
    )
    .unwrap();
    let config = codex.join("config.toml");
    let toml = "[mcp_servers.recall]\ncommand = \"npx\"\nargs = [\"-y\", \"recall-notes-mcp\"]\n";
    std::fs::write(&config, toml).unwrap();
    for (launcher, file) in [
        ("--claude-code", &mcp),
        ("--gemini", &gemini),
        ("--codex", &config),
    ] {
        let before = std::fs::read_to_string(file).unwrap();
        let err = refused(in_project(&env, &proj).env("CODEX_HOME", &codex).args([
            "hook",
            "install",
            launcher,
            "--no-backfill",
        ]));
        assert!(
            err.contains("already has an MCP server named \"recall\"")
                && err.contains("runs `npx -y recall-notes-mcp`")
                && err.contains("rename or remove that entry"),
            "{launcher}: {err}"
        );
        assert_eq!(std::fs::read_to_string(file).unwrap(), before, "{launcher}");
    }
    assert!(
        !codex.join("hooks.json").exists(),
        "nothing of Codex's written"
    );
    assert!(
        !proj.join(".claude").exists(),
        "nothing of Claude Code's written"
    );
}

/// Regression (review, stop 60): install rewrote any hook starting with
/// `recall ` as its own, dropping a hand-set `--project`; a hook with
/// `--deadline-ms` after the launcher was not recognised, so a second one
/// was added (context injected twice) and uninstall left it; and a hooks
/// list of strings panicked (exit 101).
#[test]
fn r_hand_written_recall_hooks_are_kept_and_found() {
    let env = Env::new();
    let proj = make_project(&env, "shop");
    let settings = proj.join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let hand = |cmd: &str| json!([{"hooks": [{"type": "command", "command": cmd}]}]);
    let written = json!({"hooks": {
        "SessionStart": hand("recall --project team-shared hook claude-code"),
        "UserPromptSubmit": hand("recall hook claude-code --deadline-ms 5000"),
    }});
    std::fs::write(&settings, written.to_string()).unwrap();
    ok(in_project(&env, &proj).args(["hook", "install", "--claude-code", "--no-backfill"]));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(
        v["hooks"]["SessionStart"], written["hooks"]["SessionStart"],
        "{v:#}"
    );
    assert_eq!(
        v["hooks"]["UserPromptSubmit"], written["hooks"]["UserPromptSubmit"],
        "{v:#}"
    );
    assert_eq!(has_recall_hook(&v, "SessionEnd"), 1, "{v:#}");
    ok(in_project(&env, &proj).args(["hook", "uninstall", "--claude-code"]));
    let text = std::fs::read_to_string(&settings).unwrap_or_default();
    assert!(!text.contains("recall"), "{text}");

    for shape in [r#"["echo hi"]"#, "[null]", r#"[{"hooks": "echo"}]"#] {
        let text = format!(r#"{{"hooks": {{"SessionStart": {shape}}}}}"#);
        std::fs::write(&settings, &text).unwrap();
        let err = refused(in_project(&env, &proj).args([
            "hook",
            "install",
            "--claude-code",
            "--no-backfill",
        ]));
        assert!(err.contains("\"hooks.SessionStart[0]"), "{shape}: {err}");
        assert_eq!(std::fs::read_to_string(&settings).unwrap(), text);
    }
}

/// Regression (review, stop 60): run in a linked worktree, install wrote
/// the main checkout's settings, which a launcher started in the worktree
/// does not read. The worktree is the same project (one memory), and gets
/// the settings files.
#[test]
fn r_install_in_a_worktree_writes_the_worktrees_settings() {
    let env = Env::new();
    let (main, wt) = super::with_worktree(&env);
    ok(in_project(&env, &wt).args([
        "hook",
        "install",
        "--claude-code",
        "--gemini",
        "--no-backfill",
    ]));
    for file in [
        ".claude/settings.json",
        ".mcp.json",
        ".gemini/settings.json",
    ] {
        assert!(wt.join(file).exists(), "{file} not in the worktree");
        assert!(!main.join(file).exists(), "{file} in the main checkout");
    }
    let id = |dir: &Path| {
        let v: Value = serde_json::from_str(&ok(
            in_project(&env, dir).args(["project", "show", "--json"])
        ))
        .unwrap();
        v["id"].clone()
    };
    assert_eq!(id(&wt), id(&main), "one project");
}

/// Regression (review, stop 60): a Codex install whose config.toml could
/// not be written had already written hooks.json, so Codex skipped the
/// untrusted hooks without a word; a read-only settings file was replaced;
/// `--dry-run` created `~/.codex`; and with `RECALL_PROJECT` set the error
/// blamed a `--project` no one passed.
#[test]
fn r_install_checks_every_file_before_writing_any() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let proj = make_project(&env, "shop");
    let codex = env.tmp.path().join("codex");
    let out = in_project(&env, &proj)
        .env("CODEX_HOME", &codex)
        .args(["hook", "install", "--codex", "--dry-run", "--no-backfill"])
        .output()
        .unwrap();
    assert_success(&out);
    assert!(!codex.exists(), "--dry-run made {}", codex.display());

    std::fs::create_dir_all(&codex).unwrap();
    let config = codex.join("config.toml");
    std::fs::write(&config, "model = \"o4\"\n").unwrap();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o444)).unwrap();
    let err = refused(in_project(&env, &proj).env("CODEX_HOME", &codex).args([
        "hook",
        "install",
        "--codex",
        "--no-backfill",
    ]));
    assert!(
        err.contains("is read-only, so nothing was installed"),
        "{err}"
    );
    assert!(!codex.join("hooks.json").exists(), "hooks.json written");
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        "model = \"o4\"\n"
    );

    let err = refused(recall(&env).env("RECALL_PROJECT", "shared").args([
        "hook",
        "install",
        "--claude-code",
        "--no-backfill",
    ]));
    assert!(
        err.contains("RECALL_PROJECT names a project ('shared')"),
        "{err}"
    );
}

/// Regression (review, stop 60): a recall hook written by hand in Codex's
/// hooks.json (`RECALL_LOG=debug recall hook codex`) was kept as the hook,
/// and install said it was installed, but only install's own command was
/// trusted, so Codex skipped it without a word.
#[test]
fn r_a_hand_written_codex_hook_is_trusted() {
    let env = Env::new();
    let proj = make_project(&env, "shop");
    let codex = env.tmp.path().join("codex");
    std::fs::create_dir_all(&codex).unwrap();
    let hand = "RECALL_LOG=debug recall hook codex";
    let hooks = json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": hand, "timeout": 10}]}]}});
    std::fs::write(codex.join("hooks.json"), hooks.to_string()).unwrap();
    ok(in_project(&env, &proj).env("CODEX_HOME", &codex).args([
        "hook",
        "install",
        "--codex",
        "--no-backfill",
    ]));
    let after: Value =
        serde_json::from_str(&std::fs::read_to_string(codex.join("hooks.json")).unwrap()).unwrap();
    assert_eq!(
        after["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"],
        hand
    );
    let config: toml::Value =
        toml::from_str(&std::fs::read_to_string(codex.join("config.toml")).unwrap()).unwrap();
    let key = format!(
        "{}:user_prompt_submit:0:0",
        codex.canonicalize().unwrap().join("hooks.json").display()
    );
    let hash = config["hooks"]["state"][&key]["trusted_hash"].as_str();
    assert!(
        hash.is_some_and(|h| h.starts_with("sha256:")),
        "{config:#?}"
    );
}
