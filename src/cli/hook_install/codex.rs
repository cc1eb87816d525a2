//! `recall hook install --codex`: Codex's native hooks (0.171 and later)
//! in `$CODEX_HOME/hooks.json`, trusted in its `config.toml`, beside the
//! MCP server (`[mcp_servers.recall]`).
//!
//! Codex runs a hook only once it is trusted: `config.toml` holds, under
//! `[hooks.state."<hooks.json>:<event>:<group>:<handler>"]`, the
//! `trusted_hash` of the handler as Codex hashes it (SHA-256 of its
//! definition as compact JSON with sorted keys; see [`trusted_hash`]). A
//! hook that is not trusted, or whose definition changed since, is skipped
//! without a word in `codex exec`. Installing recall's hooks is the user's
//! consent, so the install records their trust; Codex's own `/hooks` shows
//! it, and trusts them again there should a later Codex hash otherwise.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use serde_json::{json, Value};
use sha2::{Digest as _, Sha256};

use super::{launcher_hook_command, mcp_args, merge_hooks, read_json, read_text, Change};
use crate::cli::context::Ctx;

/// The Codex events recall hooks into, with each one's timeout in seconds.
/// Codex caps a SessionEnd hook at 3 s (and warns above): recall's own
/// there hands a long index to a child process well within it.
const CODEX_EVENTS: &[(&str, &str, u64)] = &[
    ("SessionStart", "session_start", 10),
    ("UserPromptSubmit", "user_prompt_submit", 10),
    ("PreCompact", "pre_compact", 10),
    ("SessionEnd", "session_end", 3),
];

/// Whether a hooks.json command is one of recall's Codex hooks.
fn is_recall_codex_hook(cmd: &str) -> bool {
    super::runs_recall_hook(cmd, "codex")
}

/// What `--codex` changes: `hooks.json` (recall's hooks merged in) and
/// `config.toml` (their trust, the hooks feature, the MCP server and, for
/// `allow_mcp`, its approval).
pub(super) fn codex_changes(ctx: &Ctx, home: &Path, allow_mcp: bool) -> Result<Vec<Change>> {
    let hooks_path = home.join("hooks.json");
    let (raw, before) = read_json(&hooks_path)?;
    let command = launcher_hook_command(ctx, "codex");
    let mut after = before.clone();
    for (event, _, timeout) in CODEX_EVENTS {
        let hook = json!({"type": "command", "command": command, "timeout": timeout});
        after = merge_hooks(after, &[event], hook, is_recall_codex_hook)
            .with_context(|| format!("cannot merge into {}", hooks_path.display()))?;
    }
    // The trust keys name hooks.json by its canonical path, as Codex does
    // (a symlinked CODEX_HOME included).
    let canonical = canonical_file(&hooks_path)?;
    let trust = trust_entries(&after, &canonical);

    let config_path = home.join("config.toml");
    let config_raw = read_text(&config_path)?;
    let config = merge_codex_toml(config_raw.as_deref().unwrap_or(""), ctx, allow_mcp, &trust)
        .with_context(|| format!("cannot merge into {}", config_path.display()))?;
    Ok(vec![
        Change {
            changed: after != before,
            after: serde_json::to_string_pretty(&after)? + "\n",
            path: hooks_path,
            before: raw,
            what: format!(
                "recall hooks ({})",
                CODEX_EVENTS
                    .iter()
                    .map(|e| e.0)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            gone: false,
        },
        Change {
            changed: config_raw.as_deref() != Some(config.as_str()),
            path: config_path,
            before: config_raw,
            after: config,
            what: format!(
                "the recall MCP server{}, the hooks' trust and [features] hooks",
                if allow_mcp { " (approved)" } else { "" }
            ),
            gone: false,
        },
    ])
}

/// What `hook uninstall --codex` changes: recall's hooks taken out of
/// `hooks.json`, and out of `config.toml` the MCP server and those hooks'
/// trust. A trust key names a handler by its place, so the other hooks of
/// recall's events that move up keep their trust under their new places
/// (Codex would otherwise see them as new, and skip them until trusted
/// again). `[features] hooks` stays: other hooks may need it.
pub(super) fn codex_removals(home: &Path) -> Result<Vec<Change>> {
    let hooks_path = home.join("hooks.json");
    let (raw, before) = read_json(&hooks_path)?;
    let events = super::uninstall::events_of(&before);
    let events: Vec<&str> = events.iter().map(String::as_str).collect();
    let (after, moves) =
        super::uninstall::unmerge_hooks(before.clone(), &events, is_recall_codex_hook)
            .with_context(|| format!("cannot edit {}", hooks_path.display()))?;
    // Nothing moved, nothing to re-key (and no folder made for it).
    let canonical = match moves.is_empty() {
        true => hooks_path.clone(),
        false => canonical_file(&hooks_path)?,
    };
    let config_path = home.join("config.toml");
    let config_raw = read_text(&config_path)?;
    let config = match &config_raw {
        None => None,
        Some(text) => Some(
            untrust_codex_toml(text, &canonical, &moves)
                .with_context(|| format!("cannot merge into {}", config_path.display()))?,
        ),
    };
    let hooks = super::uninstall::removal(&hooks_path, "recall hooks", raw, &before, &after)?;
    Ok(vec![
        hooks,
        Change {
            changed: config.is_some() && config != config_raw,
            path: config_path,
            after: config.unwrap_or_default(),
            before: config_raw,
            what: "recall's MCP server and hooks' trust".into(),
            gone: false,
        },
    ])
}

/// Codex's `config.toml` without `[mcp_servers.recall]` (when it starts
/// recall's server) and with the trust of the handlers `moves` took out
/// dropped, and of those it moved re-keyed; every other line kept.
fn untrust_codex_toml(
    text: &str,
    file: &Path,
    moves: &[super::uninstall::Moved],
) -> Result<String> {
    let mut doc = parse_toml(text)?;
    if let Some(servers) = doc
        .get_mut("mcp_servers")
        .and_then(|t| t.as_table_like_mut())
    {
        let ours = servers
            .get("recall")
            .and_then(|s| s.as_table_like())
            .is_some_and(|s| {
                super::uninstall::runs_recall_mcp(
                    s.get("command").and_then(|c| c.as_str()),
                    &toml_args(s),
                )
            });
        if ours {
            servers.remove("recall");
        }
    }
    let state = doc
        .get_mut("hooks")
        .and_then(|h| h.as_table_like_mut())
        .and_then(|h| h.get_mut("state"))
        .and_then(|s| s.as_table_like_mut());
    if let Some(state) = state {
        let key = |event: &str, (g, h): (usize, usize)| {
            format!("{}:{}:{g}:{h}", file.display(), snake_case(event))
        };
        let mut moved = Vec::new();
        for m in moves.iter().filter(|m| m.to != Some(m.from)) {
            let item = state.remove(&key(&m.event, m.from));
            if let (Some(item), Some(to)) = (item, m.to) {
                moved.push((key(&m.event, to), item));
            }
        }
        for (k, item) in moved {
            state.insert(&k, item);
        }
    }
    // A table taken from the top leaves the blank line that was before it.
    let out = doc.to_string();
    Ok(match text.starts_with('\n') {
        true => out,
        false => out.trim_start_matches('\n').to_string(),
    })
}

/// A hooks.json event name as Codex names it in a trust key:
/// `UserPromptSubmit` is `user_prompt_submit`.
fn snake_case(event: &str) -> String {
    let mut out = String::with_capacity(event.len() + 4);
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// `path` made absolute with its folder's symlinks resolved (the file
/// itself may not exist yet).
fn canonical_file(path: &Path) -> Result<PathBuf> {
    // The nearest folder that exists, resolved, and the rest as named: a
    // `--dry-run` creates nothing.
    let mut base = path.parent().context("hooks.json has no folder")?;
    let mut rest = vec![path.file_name().context("hooks.json has no name")?];
    while !base.exists() {
        rest.push(base.file_name().context("no folder of the path exists")?);
        base = base.parent().context("no folder of the path exists")?;
    }
    let mut out = base
        .canonicalize()
        .with_context(|| format!("cannot resolve {}", base.display()))?;
    out.extend(rest.iter().rev());
    Ok(out)
}

/// `text` as a TOML document, or what is wrong and what to do.
fn parse_toml(text: &str) -> Result<toml_edit::DocumentMut> {
    text.parse()
        .map_err(|e| anyhow::anyhow!("it is not valid TOML; fix it or move it aside: {e}"))
}

/// The `[hooks.state]` key and trusted hash of each recall handler in
/// `hooks` (a hooks.json), at its place in its event's list.
fn trust_entries(hooks: &Value, file: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (event, snake, _) in CODEX_EVENTS {
        let groups = hooks["hooks"][*event].as_array().into_iter().flatten();
        for (g, group) in groups.enumerate() {
            let handlers = group["hooks"].as_array().into_iter().flatten();
            for (h, handler) in handlers.enumerate() {
                // Every recall hook, one written by hand (`RECALL_LOG=debug
                // recall hook codex`) too: install keeps it as the hook, so
                // Codex must be told to run it.
                if !handler["command"]
                    .as_str()
                    .is_some_and(is_recall_codex_hook)
                {
                    continue;
                }
                let key = format!("{}:{snake}:{g}:{h}", file.display());
                out.push((key, trusted_hash(snake, group.get("matcher"), handler)));
            }
        }
    }
    out
}

/// The hash Codex trusts a hook handler by: `sha256:` and the hex SHA-256
/// of `{"event_name", "hooks": [handler], "matcher"?}` as compact JSON with
/// sorted keys, the handler with `async` (false), `command`, its effective
/// `timeout` in seconds (600 when unset; a SessionEnd's at most 3) and
/// `type`. Codex ignores a matcher on UserPromptSubmit and Stop.
fn trusted_hash(event: &str, matcher: Option<&Value>, handler: &Value) -> String {
    let timeout = handler["timeout"].as_u64();
    let timeout = match event {
        "session_end" => timeout.unwrap_or(1).min(3),
        _ => timeout.unwrap_or(600),
    };
    let mut item = serde_json::Map::new();
    item.insert(
        "async".into(),
        json!(handler["async"].as_bool().unwrap_or(false)),
    );
    item.insert("command".into(), handler["command"].clone());
    if let Some(m) = handler.get("statusMessage") {
        item.insert("statusMessage".into(), m.clone());
    }
    item.insert("timeout".into(), json!(timeout));
    item.insert("type".into(), json!("command"));
    // Keys in sorted order, written in that order (serde_json here keeps
    // insertion order).
    let mut def = serde_json::Map::new();
    def.insert("event_name".into(), json!(event));
    def.insert("hooks".into(), json!([Value::Object(item)]));
    let ignores_matcher = matches!(event, "user_prompt_submit" | "stop");
    if let Some(m) = matcher.filter(|m| !m.is_null() && !ignores_matcher) {
        def.insert("matcher".into(), m.clone());
    }
    let bytes = serde_json::to_vec(&Value::Object(def)).unwrap_or_default();
    let digest = Sha256::digest(&bytes);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// Codex's `config.toml` with `[mcp_servers.recall]` set (and, for
/// `allow_mcp`, its tools approved without asking), the hooks feature on,
/// and the `trust` entries under `[hooks.state]`; every other line
/// (comments and layout included) kept.
fn merge_codex_toml(
    text: &str,
    ctx: &Ctx,
    allow_mcp: bool,
    trust: &[(String, String)],
) -> Result<String> {
    let mut doc = parse_toml(text)?;
    let entry = implicit_table(doc.as_table_mut(), "mcp_servers")?
        .entry("recall")
        .or_insert_with(toml_edit::table)
        .as_table_mut()
        .context("mcp_servers.recall in config.toml is not a table")?;
    let text_of = |key: &str| entry.get(key).and_then(|v| v.as_str());
    super::not_another_server(
        text_of("command"),
        &toml_args(entry),
        text_of("url"),
        "config.toml",
        "mcp_servers",
    )?;
    let args = mcp_args(ctx);
    let same = entry.get("command").and_then(|c| c.as_str()) == Some(args[0].as_str())
        && entry
            .get("args")
            .and_then(|a| a.as_array())
            .is_some_and(|a| {
                a.iter()
                    .map(|x| x.as_str())
                    .eq(args[1..].iter().map(|x| Some(x.as_str())))
            });
    if !same {
        let want: toml_edit::Array = args[1..].iter().map(String::as_str).collect();
        entry["command"] = toml_edit::value(args[0].as_str());
        entry["args"] = toml_edit::value(want);
    }
    if allow_mcp
        && entry
            .get("default_tools_approval_mode")
            .and_then(|m| m.as_str())
            != Some("approve")
    {
        entry["default_tools_approval_mode"] = toml_edit::value("approve");
    }
    let features = doc
        .entry("features")
        .or_insert_with(toml_edit::table)
        .as_table_mut()
        .context("features in config.toml is not a table")?;
    if features.get("hooks").and_then(|h| h.as_bool()) != Some(true) {
        features["hooks"] = toml_edit::value(true);
    }
    let hooks = implicit_table(doc.as_table_mut(), "hooks")?;
    let state = implicit_table(hooks, "state")?;
    for (key, hash) in trust {
        let t = state
            .entry(key)
            .or_insert_with(toml_edit::table)
            .as_table_mut()
            .with_context(|| format!("hooks.state.\"{key}\" in config.toml is not a table"))?;
        if t.get("trusted_hash").and_then(|h| h.as_str()) != Some(hash.as_str()) {
            t["trusted_hash"] = toml_edit::value(hash.as_str());
        }
    }
    Ok(doc.to_string())
}

/// The `args` of an MCP server table in config.toml.
fn toml_args(server: &dyn toml_edit::TableLike) -> Vec<&str> {
    server
        .get("args")
        .and_then(|a| a.as_array())
        .into_iter()
        .flatten()
        .filter_map(|a| a.as_str())
        .collect()
}

/// The table `key` of `parent`, made (implicit: no header of its own)
/// when missing.
fn implicit_table<'t>(
    parent: &'t mut toml_edit::Table,
    key: &str,
) -> Result<&'t mut toml_edit::Table> {
    parent
        .entry(key)
        .or_insert_with(|| {
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            toml_edit::Item::Table(t)
        })
        .as_table_mut()
        .with_context(|| format!("{key} in config.toml is not a table"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hashes Codex 0.171's `hooks/list` reported (`currentHash`) for
    /// recall's handlers with the command `recall hook codex`.
    /// The trust keys of the events recall installs, and of any other.
    #[test]
    fn events_are_named_in_trust_keys_as_codex_names_them() {
        for (event, snake, _) in CODEX_EVENTS {
            assert_eq!(snake_case(event), *snake);
        }
        assert_eq!(snake_case("Stop"), "stop");
        assert_eq!(snake_case("PostToolUse"), "post_tool_use");
    }

    #[test]
    fn trusted_hashes_match_what_codex_computes() {
        let handler = |timeout: u64| json!({"type": "command", "command": "recall hook codex", "timeout": timeout});
        assert_eq!(
            trusted_hash("session_start", None, &handler(10)),
            "sha256:6819f24358a08cf96be88a39ac5a53a5d6a717c735da8ceb4f09dd8debdb1dce"
        );
        assert_eq!(
            trusted_hash("user_prompt_submit", None, &handler(10)),
            "sha256:4bbc928761ad6c2f373b945cd51e73055932d99b9e66fa7fcaebcbdc1b1252f9"
        );
        // Codex clamps a SessionEnd timeout to 3 s before hashing it.
        assert_eq!(
            trusted_hash("session_end", None, &handler(3)),
            "sha256:3e0045358c5cbdd181052b9d46cc911b72b95256329d6e8b5c793bf1513f113f"
        );
        assert_eq!(
            trusted_hash("session_end", None, &handler(10)),
            trusted_hash("session_end", None, &handler(3))
        );
        // A matcher counts, except where Codex ignores it.
        let m = json!("startup");
        assert_ne!(
            trusted_hash("session_start", Some(&m), &handler(10)),
            trusted_hash("session_start", None, &handler(10))
        );
        assert_eq!(
            trusted_hash("user_prompt_submit", Some(&m), &handler(10)),
            trusted_hash("user_prompt_submit", None, &handler(10))
        );
    }
}
