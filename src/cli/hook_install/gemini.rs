//! `recall hook install --gemini`: recall's hooks and MCP server merged
//! into Gemini CLI's `settings.json` (the project's `.gemini/settings.json`,
//! or with `--user` Gemini CLI's own), a file with comments only printed.

use std::path::PathBuf;

use anyhow::{bail, Context as _, Result};
use serde_json::{json, Value};

use super::{launcher_hook_command, mcp_args, merge_hooks, read_text, Change};
use crate::cli::args::InstallArgs;
use crate::cli::context::Ctx;
use crate::ingest::discover::default_gemini_home;

/// The Gemini CLI events recall hooks into (its names for Claude Code's
/// SessionStart, UserPromptSubmit, PreCompact and SessionEnd).
const GEMINI_EVENTS: &[&str] = &["SessionStart", "BeforeAgent", "PreCompress", "SessionEnd"];

/// Gemini CLI's hook timeout is in milliseconds (Claude Code's in seconds).
const GEMINI_TIMEOUT_MS: u64 = 10_000;

/// `<project root>/.gemini/settings.json`, or with `--user` Gemini CLI's
/// own (`$GEMINI_CLI_HOME/.gemini` or `~/.gemini`).
pub(super) fn gemini_settings_path(ctx: &Ctx, user: bool) -> Result<PathBuf> {
    if user {
        let home = default_gemini_home(crate::cli::context::env)
            .context("cannot find your home folder: set HOME (or GEMINI_CLI_HOME)")?;
        return Ok(home.join("settings.json"));
    }
    Ok(super::install_folder(ctx, ".gemini/settings.json")?.join(".gemini/settings.json"))
}

/// Gemini CLI's `settings.json` with recall's hooks (named `recall`, so
/// `/hooks disable recall` finds them) and `mcpServers.recall` set (and,
/// for `trust`, its tools run without asking); unchanged when they are.
pub fn merge_gemini(
    settings: Value,
    command: &str,
    mcp_args: &[String],
    trust: bool,
) -> Result<Value> {
    let hook = json!({"name": "recall", "type": "command", "command": command, "timeout": GEMINI_TIMEOUT_MS});
    let mut settings = merge_hooks(settings, GEMINI_EVENTS, hook, is_recall_gemini_hook)?;
    let servers = settings
        .as_object_mut()
        .map(|o| o.entry("mcpServers").or_insert_with(|| json!({})))
        .and_then(Value::as_object_mut)
        .context("\"mcpServers\" is not an object")?;
    super::not_another_json_server(servers.get("recall"), "settings.json", "mcpServers")?;
    // Only the command and its arguments are recall's: a `trust` or
    // `timeout` the user added to the entry stays.
    let entry = servers
        .entry("recall")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .context("\"mcpServers.recall\" is not an object")?;
    entry.insert("command".into(), json!(mcp_args[0]));
    entry.insert("args".into(), json!(mcp_args[1..]));
    if trust {
        entry.insert("trust".into(), json!(true));
    }
    Ok(settings)
}

/// Gemini CLI's `settings.json`, hooks and MCP server merged in. A file
/// with comments (Gemini CLI allows them) is merged for `--print` only: a
/// rewrite would drop the comments, so the user adds what it shows.
pub(super) fn gemini_change(ctx: &Ctx, a: &InstallArgs) -> Result<Change> {
    let path = gemini_settings_path(ctx, a.user)?;
    let (raw, before, commented) = read_settings(&path)?;
    let after = merge_gemini(
        before.clone(),
        &gemini_hook_command(ctx),
        &mcp_args(ctx),
        a.allow_mcp,
    )
    .with_context(|| format!("cannot merge into {}", path.display()))?;
    if commented && after != before && !a.print {
        bail!(
            "{} has comments, which rewriting it would drop; add recall by hand: `recall hook install --gemini --print{}` shows the merged settings",
            path.display(),
            if a.user { " --user" } else { "" }
        );
    }
    Ok(Change {
        changed: after != before,
        after: serde_json::to_string_pretty(&after)? + "\n",
        path,
        before: raw,
        what: format!(
            "recall hooks ({}) and the recall MCP server{}",
            GEMINI_EVENTS.join(", "),
            if a.allow_mcp { ", trusted" } else { "" }
        ),
        gone: false,
    })
}

/// Gemini CLI's `settings.json` at `path`: its text, its value (`{}` when
/// absent or blank; a byte order mark left out) and whether it has
/// comments (Gemini CLI allows them; a rewrite would drop them).
fn read_settings(path: &std::path::Path) -> Result<(Option<String>, Value, bool)> {
    let raw = read_text(path)?;
    let text = raw.as_deref().unwrap_or("").trim_start_matches('\u{feff}');
    let (value, commented) = match serde_json::from_str::<Value>(text) {
        _ if text.trim().is_empty() => (json!({}), false),
        Ok(v) => (v, false),
        Err(e) => match serde_json::from_str::<Value>(&strip_json_comments(text)) {
            Ok(v) => (v, true),
            Err(_) => {
                return Err(e).with_context(|| {
                    format!(
                        "{} is not valid JSON; fix it or move it aside",
                        path.display()
                    )
                })
            }
        },
    };
    Ok((raw, value, commented))
}

/// `hook uninstall --gemini`: recall's hooks and MCP server taken out of
/// Gemini CLI's `settings.json`. A file with comments is left to the user,
/// as install leaves it: a rewrite would drop them.
pub(super) fn gemini_removal(ctx: &Ctx, user: bool) -> Result<Change> {
    let path = gemini_settings_path(ctx, user)?;
    let what = "recall hooks and the recall MCP server";
    let (raw, before, commented) = read_settings(&path)?;
    let events = super::uninstall::events_of(&before);
    let events: Vec<&str> = events.iter().map(String::as_str).collect();
    let (after, _) =
        super::uninstall::unmerge_hooks(before.clone(), &events, is_recall_gemini_hook)
            .with_context(|| format!("cannot edit {}", path.display()))?;
    let after = super::uninstall::without_mcp_server(after, "mcpServers");
    if commented && after != before {
        bail!(
            "{} has comments, which rewriting it would drop; take out by hand the hooks that run `recall … hook gemini` and mcpServers.recall",
            path.display()
        );
    }
    super::uninstall::removal(&path, what, raw, &before, &after)
}

/// JSON with `//` and `/* */` comments outside strings blanked (Gemini
/// CLI reads its settings through `strip-json-comments`).
fn strip_json_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => out.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => while chars.next_if(|&c| c != '\n').is_some() {},
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

/// Whether a settings command is one of recall's Gemini CLI hooks.
fn is_recall_gemini_hook(cmd: &str) -> bool {
    super::runs_recall_hook(cmd, "gemini")
}

/// The command Gemini CLI's hooks run (see [`hook_command`](super::hook_command)).
fn gemini_hook_command(ctx: &Ctx) -> String {
    launcher_hook_command(ctx, "gemini")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_gemini_keeps_the_rest_and_is_idempotent() -> Result<()> {
        let args = ["recall".to_string(), "mcp".to_string()];
        let s = json!({
            "model": {"name": "gemini-2.5-pro"},
            "hooks": {"BeforeAgent": [{"matcher": "*", "hooks": [{"type": "command", "command": "lint-prompt"}]}]},
            "mcpServers": {"github": {"command": "gh-mcp"}, "recall": {"command": "/opt/old/bin/recall", "args": ["mcp"], "trust": true}}
        });
        let once = merge_gemini(s, "recall hook gemini", &args, false)?;
        assert_eq!(once["model"]["name"], "gemini-2.5-pro");
        let before_agent = once["hooks"]["BeforeAgent"].as_array().map(Vec::len);
        assert_eq!(before_agent, Some(2));
        for event in GEMINI_EVENTS {
            let hook = &once["hooks"][*event].as_array().unwrap().last().unwrap()["hooks"][0];
            assert_eq!(hook["command"], "recall hook gemini", "{event}");
            assert_eq!(
                (hook["name"].as_str(), hook["timeout"].as_u64()),
                (Some("recall"), Some(10_000))
            );
        }
        assert_eq!(once["mcpServers"]["github"]["command"], "gh-mcp");
        assert_eq!(
            once["mcpServers"]["recall"],
            json!({"command": "recall", "args": ["mcp"], "trust": true})
        );
        assert_eq!(
            merge_gemini(once.clone(), "recall hook gemini", &args, false)?,
            once
        );
        let moved = merge_gemini(once, "recall --home /h hook gemini", &args, false)?;
        assert_eq!(
            moved["hooks"]["SessionEnd"].as_array().map(Vec::len),
            Some(1)
        );
        assert_eq!(
            moved["hooks"]["SessionEnd"][0]["hooks"][0]["command"],
            "recall --home /h hook gemini"
        );
        assert!(merge_gemini(json!({"mcpServers": []}), "x", &args, false).is_err());
        Ok(())
    }

    #[test]
    fn json_comments_are_stripped_outside_strings() {
        let text =
            "{\n  // the model\n  \"a\": \"http://x/*y*/\", /* block\n */ \"b\": \"q\\\"//\"\n}";
        let v: Value = serde_json::from_str(&strip_json_comments(text)).unwrap();
        assert_eq!(v, json!({"a": "http://x/*y*/", "b": "q\"//"}));
    }
}
