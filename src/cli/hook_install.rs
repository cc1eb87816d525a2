//! `recall hook install --claude-code [--project|--user] [--print]`: merge
//! recall's hooks into Claude Code's `settings.json`, keeping every other
//! setting and hook, writing a backup first.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _, Result};
use serde_json::{json, Value};

use super::args::InstallArgs;
use super::context::Ctx;

/// The events recall hooks into, and why.
const EVENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreCompact",
    "SessionEnd",
];

fn settings_path(ctx: &Ctx, a: &InstallArgs) -> Result<PathBuf> {
    if a.user {
        let home = dirs::home_dir().context("cannot find your home folder")?;
        return Ok(home.join(".claude/settings.json"));
    }
    let project = ctx.project()?;
    let root = project
        .info
        .root
        .context("--project installs into <project root>/.claude/settings.json: run from the project or pass --cwd")?;
    Ok(root.join(".claude/settings.json"))
}

/// `settings` with recall's hooks added; unchanged when they are present.
pub fn merge(mut settings: Value, command: &str) -> Result<Value> {
    if !settings.is_object() {
        bail!("settings.json is not a JSON object");
    }
    let hooks = settings
        .as_object_mut()
        .map(|o| o.entry("hooks").or_insert_with(|| json!({})))
        .filter(|h| h.is_object())
        .context("\"hooks\" in settings.json is not an object")?;
    for event in EVENTS {
        let list = hooks
            .as_object_mut()
            .map(|o| o.entry(*event).or_insert_with(|| json!([])))
            .filter(|l| l.is_array())
            .with_context(|| format!("\"hooks.{event}\" in settings.json is not a list"))?;
        // A recall hook from an earlier install (another home, say) is
        // updated in place, never added twice.
        let mut present = false;
        for group in list.as_array_mut().into_iter().flatten() {
            for h in group["hooks"].as_array_mut().into_iter().flatten() {
                if h["command"].as_str().is_some_and(is_recall_hook) {
                    h["command"] = json!(command);
                    present = true;
                }
            }
        }
        if !present {
            if let Some(arr) = list.as_array_mut() {
                arr.push(
                    json!({"hooks": [{"type": "command", "command": command, "timeout": 10}]}),
                );
            }
        }
    }
    Ok(settings)
}

fn read_settings(path: &Path) -> Result<Value> {
    match std::fs::read_to_string(path) {
        Ok(t) if t.trim().is_empty() => Ok(json!({})),
        Ok(t) => serde_json::from_str(&t).with_context(|| {
            format!(
                "{} is not valid JSON; fix it or move it aside",
                path.display()
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(json!({})),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

pub fn run(ctx: &Ctx, a: InstallArgs) -> Result<u8> {
    if !a.claude_code {
        bail!("say which launcher to install for: --claude-code (Codex reads hooks from its own config; see README)");
    }
    let path = settings_path(ctx, &a)?;
    let before = read_settings(&path)?;
    let after = merge(before.clone(), &hook_command(ctx))?;
    let text = serde_json::to_string_pretty(&after)? + "\n";
    if a.print {
        out!("{text}");
        return Ok(0);
    }
    if after == before {
        outln!("recall hooks are already in {}", path.display());
        return Ok(0);
    }
    if path.exists() {
        let backup = path.with_extension(format!("json.bak-{}", ctx.now.as_second()));
        std::fs::copy(&path, &backup)
            .with_context(|| format!("cannot back up {}", path.display()))?;
        outln!("backed up {} to {}", path.display(), backup.display());
    }
    let dir = path.parent().context("settings path has no folder")?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    // settings.json is the launcher's file, not recall's memory: it keeps
    // its mode (0644 for a new one), not the 0600 of recall's own writes.
    let mode = std::fs::metadata(&path).map(|m| m.permissions());
    crate::store::atomic_write(&path, text.as_bytes())?;
    restore_mode(&path, mode.ok())?;
    outln!(
        "installed recall hooks ({}) in {}",
        EVENTS.join(", "),
        path.display()
    );
    Ok(0)
}

/// Whether a settings command is one of recall's Claude Code hooks.
fn is_recall_hook(cmd: &str) -> bool {
    cmd.starts_with("recall ") && cmd.ends_with(" hook claude-code")
}

/// The command the hooks run. A home other than the default (given with
/// `--home` or `RECALL_HOME`) is passed on, since the launcher runs the hook
/// without this shell's flags or, often, its environment.
fn hook_command(ctx: &Ctx) -> String {
    let default = crate::store::resolve_home(None, |k| {
        (k != "RECALL_HOME")
            .then(|| std::env::var(k).ok())
            .flatten()
    });
    match default {
        Ok(d) if d == ctx.home.root() => "recall hook claude-code".into(),
        _ => format!(
            "recall --home {} hook claude-code",
            shell_quote(&ctx.home.root().to_string_lossy())
        ),
    }
}

/// `s` as one POSIX shell word.
fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@".contains(c))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

fn restore_mode(path: &Path, before: Option<std::fs::Permissions>) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let perm = before.unwrap_or_else(|| std::fs::Permissions::from_mode(0o644));
        std::fs::set_permissions(path, perm)
            .with_context(|| format!("cannot set the mode of {}", path.display()))?;
    }
    #[cfg(not(unix))]
    let _ = (path, before);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_keeps_other_hooks_and_is_idempotent() -> Result<()> {
        let s = json!({"model": "x", "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "other"}]}]}});
        let once = merge(s, "recall hook claude-code")?;
        assert_eq!(once["model"], "x");
        assert_eq!(
            once["hooks"]["SessionStart"].as_array().map(Vec::len),
            Some(2)
        );
        assert_eq!(
            once["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"],
            "recall hook claude-code"
        );
        let twice = merge(once.clone(), "recall hook claude-code")?;
        assert_eq!(once, twice);
        // Installed again with another home: updated, not doubled.
        let moved = merge(once, "recall --home /h hook claude-code")?;
        assert_eq!(
            moved["hooks"]["SessionStart"].as_array().map(Vec::len),
            Some(2)
        );
        assert_eq!(
            moved["hooks"]["SessionStart"][1]["hooks"][0]["command"],
            "recall --home /h hook claude-code"
        );
        assert!(merge(json!([1]), "x").is_err());
        assert!(merge(json!({"hooks": 3}), "x").is_err());
        Ok(())
    }

    #[test]
    fn shell_quoting() {
        assert_eq!(shell_quote("/home/me/.recall"), "/home/me/.recall");
        assert_eq!(shell_quote("/tmp/my home"), "'/tmp/my home'");
        assert_eq!(shell_quote("/tmp/it's"), r"'/tmp/it'\''s'");
    }
}
