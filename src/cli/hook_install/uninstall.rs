//! `recall hook uninstall --claude-code [--user] [--dry-run]`, `--codex`
//! and `--gemini`: what `hook install` merged in taken out again: every
//! hook that runs `recall … hook <launcher>` (one written by hand too), the
//! `recall` MCP server, its permission, and for Codex the hooks' trust,
//! with every other setting, hook and trust kept. A backup is written
//! first, as install does; a file nothing is left in is removed. The
//! memory itself is not touched.

use std::path::Path;

use anyhow::{bail, Context as _, Result};
use serde_json::Value;

use super::{
    can_write_all, codex, gemini, install_folder, is_recall_hook, read_json, settings_path,
    write_with_backup, Change, CLAUDE_ALLOW_MCP, EVENTS,
};
use crate::cli::args::UninstallArgs;
use crate::cli::context::Ctx;

pub fn run(ctx: &Ctx, a: UninstallArgs) -> Result<u8> {
    if !a.claude_code && !a.codex && !a.gemini {
        bail!("say which launcher to uninstall from: --claude-code, --codex, --gemini, or several");
    }
    // Each launcher on its own: one whose file cannot be edited (comments
    // in Gemini CLI's settings) does not keep the others installed.
    let mut changes = Vec::new();
    let mut failed = Vec::new();
    let mut each = |name: &str, found: Result<Vec<Change>>| match found {
        Ok(c) => changes.extend(c),
        Err(e) => failed.push(format!("{name}: {e:#}")),
    };
    if a.claude_code {
        each("Claude Code", claude_changes(ctx, a.user));
    }
    if a.gemini {
        each(
            "Gemini CLI",
            gemini::gemini_removal(ctx, a.user).map(|c| vec![c]),
        );
    }
    if a.codex {
        each(
            "Codex",
            crate::ingest::discover::default_codex_home(crate::cli::context::env)
                .context("cannot find ~/.codex; set CODEX_HOME")
                .and_then(|home| codex::codex_removals(&home)),
        );
    }
    if !a.dry_run {
        can_write_all(&changes)?;
    }
    for c in &changes {
        if !c.changed {
            outln!("nothing of recall in {}", c.path.display());
            continue;
        }
        if a.dry_run {
            let name = c.path.display().to_string();
            if c.gone {
                outln!("would remove {name}: nothing but recall's entries is in it");
            }
            let after = if c.gone { "" } else { c.after.as_str() };
            out!(
                "{}",
                similar::udiff::unified_diff(
                    similar::Algorithm::Myers,
                    c.before.as_deref().unwrap_or(""),
                    after,
                    3,
                    Some((&name, &name)),
                )
            );
            continue;
        }
        let linked = std::fs::symlink_metadata(&c.path).is_ok_and(|m| m.file_type().is_symlink());
        write_with_backup(ctx, c)?;
        match (c.gone, linked) {
            (true, false) => outln!("removed {} (nothing else was in it)", c.path.display()),
            (true, true) => outln!(
                "emptied {} (nothing else was in it; a link, so the file it points at is kept)",
                c.path.display()
            ),
            (false, _) => outln!("removed {} from {}", c.what, c.path.display()),
        }
    }
    if a.claude_code && a.user {
        say!(
            "recall: Claude Code keeps user-scope MCP servers in its own state file; `claude mcp remove --scope user recall` takes recall out of it"
        );
    }
    if !a.dry_run && changes.iter().any(|c| c.changed) {
        let home = std::path::absolute(ctx.home.root()).unwrap_or_else(|_| ctx.home.root().into());
        outln!(
            "the memory in {} is kept; `recall hook install` puts the hooks back",
            home.display()
        );
    }
    if !failed.is_empty() {
        for f in &failed {
            say!("recall: not uninstalled from {f}");
        }
        return Ok(2);
    }
    Ok(0)
}

/// Claude Code's files: the hooks (and, with `--user`, the permission) in
/// `settings.json`; for a project, the permission in `settings.local.json`
/// and the server in `.mcp.json` beside it.
fn claude_changes(ctx: &Ctx, user: bool) -> Result<Vec<Change>> {
    let path = settings_path(ctx, user)?;
    let hooks = format!("recall hooks ({})", EVENTS.join(", "));
    let permission = format!("permission for recall's MCP tools (\"{CLAUDE_ALLOW_MCP}\")");
    let mut out = vec![json_change(&path, &hooks, |v| {
        let events = events_of(&v);
        let events: Vec<&str> = events.iter().map(String::as_str).collect();
        let (v, _) = unmerge_hooks(v, &events, is_recall_hook)?;
        match user {
            true => Ok(disallow_claude_mcp(v)),
            false => Ok(v),
        }
    })?];
    if !user {
        let local = path.with_file_name("settings.local.json");
        out.push(json_change(&local, &permission, |v| {
            Ok(disallow_claude_mcp(v))
        })?);
        let root = install_folder(ctx, ".mcp.json")?;
        out.push(json_change(
            &root.join(".mcp.json"),
            "the recall MCP server",
            |v| Ok(without_mcp_server(v, "mcpServers")),
        )?);
    }
    Ok(out)
}

/// The change `edit` makes to the JSON file at `path` (none when it is
/// not there).
fn json_change(
    path: &Path,
    what: &str,
    edit: impl FnOnce(Value) -> Result<Value>,
) -> Result<Change> {
    let (raw, before) = read_json(path)?;
    let after = edit(before.clone()).with_context(|| format!("cannot edit {}", path.display()))?;
    removal(path, what, raw, &before, &after)
}

/// A [`Change`] from `before` to `after`: the file removed when nothing is
/// left in it.
pub(super) fn removal(
    path: &Path,
    what: &str,
    raw: Option<String>,
    before: &Value,
    after: &Value,
) -> Result<Change> {
    let changed = raw.is_some() && after != before;
    Ok(Change {
        path: path.to_path_buf(),
        before: raw,
        after: serde_json::to_string_pretty(after)? + "\n",
        changed,
        what: what.to_string(),
        gone: changed && after.as_object().is_some_and(serde_json::Map::is_empty),
    })
}

/// Every event `settings` has hooks for: recall's own hook may have been
/// added by hand under another (`Stop`), and is taken out there too.
pub(super) fn events_of(settings: &Value) -> Vec<String> {
    settings["hooks"]
        .as_object()
        .map(|h| h.keys().cloned().collect())
        .unwrap_or_default()
}

/// Where a handler of one event was, and where it is after an uninstall:
/// its group and its place in the group (`None`: it was recall's, and is
/// gone).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Moved {
    pub event: String,
    pub from: (usize, usize),
    pub to: Option<(usize, usize)>,
}

/// `settings` without the hooks `ours` recognises in `events`, and where
/// every handler of those events went. A group, an event's list or the
/// `hooks` object that only recall's hooks were in goes too; one that was
/// empty before stays as it was.
pub(super) fn unmerge_hooks(
    mut settings: Value,
    events: &[&str],
    ours: fn(&str) -> bool,
) -> Result<(Value, Vec<Moved>)> {
    let mut moves = Vec::new();
    let Some(obj) = settings.as_object_mut() else {
        bail!("it is not a JSON object");
    };
    let Some(hooks) = obj.get_mut("hooks") else {
        return Ok((settings, moves));
    };
    let hooks = hooks
        .as_object_mut()
        .context("\"hooks\" is not an object")?;
    let mut took_any = false;
    for event in events {
        let Some(list) = hooks.get_mut(*event) else {
            continue;
        };
        let list = list
            .as_array_mut()
            .with_context(|| format!("\"hooks.{event}\" is not a list"))?;
        let mut groups = Vec::new();
        let mut took_here = false;
        for (g, mut group) in std::mem::take(list).into_iter().enumerate() {
            let at = groups.len();
            let mut took = false;
            if let Some(handlers) = group.get_mut("hooks").and_then(Value::as_array_mut) {
                let mut kept = Vec::new();
                for (h, handler) in std::mem::take(handlers).into_iter().enumerate() {
                    let recall = handler["command"].as_str().is_some_and(ours);
                    moves.push(Moved {
                        event: (*event).to_string(),
                        from: (g, h),
                        to: (!recall).then_some((at, kept.len())),
                    });
                    match recall {
                        true => took = true,
                        false => kept.push(handler),
                    }
                }
                let empty = kept.is_empty();
                *handlers = kept;
                if took && empty {
                    took_here = true;
                    continue;
                }
            }
            took_here |= took;
            groups.push(group);
        }
        let empty = groups.is_empty();
        *list = groups;
        if took_here && empty {
            hooks.remove(*event);
        }
        took_any |= took_here;
    }
    if took_any && hooks.is_empty() {
        obj.remove("hooks");
    }
    Ok((settings, moves))
}

/// Claude Code `settings` without the `mcp__recall` permission rule; a
/// list or object only it was in goes too.
fn disallow_claude_mcp(mut settings: Value) -> Value {
    let Some(perms) = settings
        .get_mut("permissions")
        .and_then(Value::as_object_mut)
    else {
        return settings;
    };
    let Some(allow) = perms.get_mut("allow").and_then(Value::as_array_mut) else {
        return settings;
    };
    let before = allow.len();
    allow.retain(|r| r != CLAUDE_ALLOW_MCP);
    if allow.len() == before {
        return settings;
    }
    if allow.is_empty() {
        perms.remove("allow");
    }
    if perms.is_empty() {
        if let Some(o) = settings.as_object_mut() {
            o.remove("permissions");
        }
    }
    settings
}

/// Whether an MCP server entry (`command` and `args`) starts recall's
/// server: `recall … mcp`, recall by name or by path.
pub(super) fn runs_recall_mcp(command: Option<&str>, args: &[&str]) -> bool {
    command.is_some_and(|c| Path::new(c).file_name().is_some_and(|n| n == "recall"))
        && args.last() == Some(&"mcp")
}

/// `settings` without `<servers>.recall` when it starts recall's server
/// (a server of another program named "recall" stays); a `<servers>`
/// object only it was in goes too.
pub(super) fn without_mcp_server(mut settings: Value, servers: &str) -> Value {
    let Some(list) = settings.get_mut(servers).and_then(Value::as_object_mut) else {
        return settings;
    };
    let ours = list
        .get("recall")
        .is_some_and(|s| runs_recall_mcp(s["command"].as_str(), &super::json_args(s)));
    if !ours {
        return settings;
    }
    list.remove("recall");
    if list.is_empty() {
        if let Some(o) = settings.as_object_mut() {
            o.remove(servers);
        }
    }
    settings
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// What install merges in, uninstall takes out, and nothing else: the
    /// user's own hooks in the same events stay where they were, and each
    /// handler's new place is known (Codex's trust is keyed by it).
    #[test]
    fn unmerge_takes_out_only_recalls_hooks() -> Result<()> {
        let other = json!({"type": "command", "command": "lint"});
        let before = json!({
            "model": "x",
            "hooks": {
                "SessionStart": [{"hooks": [other.clone()]}],
                "Stop": [{"hooks": [{"type": "command", "command": "recall hook claude-code"}]}],
                "PreCompact": []
            }
        });
        let installed = super::super::merge(before.clone(), "recall hook claude-code")?;
        // Another hook added after recall's, in its own group and in
        // recall's group.
        let mut edited = installed.clone();
        edited["hooks"]["SessionStart"]
            .as_array_mut()
            .unwrap()
            .push(json!({"hooks": [other.clone()]}));
        edited["hooks"]["SessionEnd"][0]["hooks"]
            .as_array_mut()
            .unwrap()
            .push(other.clone());
        let (after, moves) = unmerge_hooks(edited, EVENTS, is_recall_hook)?;
        assert_eq!(after["model"], "x");
        assert_eq!(
            after["hooks"]["SessionStart"],
            json!([{"hooks": [other.clone()]}, {"hooks": [other.clone()]}])
        );
        assert_eq!(after["hooks"]["SessionEnd"], json!([{"hooks": [other]}]));
        // An event only recall is in goes; an event uninstall was not
        // asked about is not looked at.
        assert!(after["hooks"].get("UserPromptSubmit").is_none(), "{after}");
        assert!(after["hooks"].get("PreCompact").is_none(), "{after}");
        assert_eq!(after["hooks"]["Stop"], before["hooks"]["Stop"]);
        // What recall is not in stays as it is, empty lists and groups too.
        let bare = json!({"hooks": {"PreCompact": [], "SessionEnd": [{"hooks": []}]}});
        assert_eq!(unmerge_hooks(bare.clone(), EVENTS, is_recall_hook)?.0, bare);
        let at = |event: &str, from| {
            moves
                .iter()
                .find(|m| m.event == event && m.from == from)
                .map(|m| m.to)
        };
        assert_eq!(at("SessionStart", (0, 0)), Some(Some((0, 0))));
        assert_eq!(at("SessionStart", (1, 0)), Some(None));
        assert_eq!(at("SessionStart", (2, 0)), Some(Some((1, 0))));
        assert_eq!(at("SessionEnd", (0, 0)), Some(None));
        assert_eq!(at("SessionEnd", (0, 1)), Some(Some((0, 0))));
        // Installed into nothing, uninstalled to nothing.
        let (none, _) = unmerge_hooks(
            super::super::merge(json!({}), "recall hook claude-code")?,
            EVENTS,
            is_recall_hook,
        )?;
        assert_eq!(none, json!({}));
        assert!(unmerge_hooks(json!({"hooks": []}), EVENTS, is_recall_hook).is_err());
        Ok(())
    }

    #[test]
    fn only_recalls_server_and_permission_go() {
        let s = json!({"mcpServers": {
            "recall": {"type": "stdio", "command": "recall", "args": ["--home", "/h", "mcp"]},
            "github": {"command": "gh"}}});
        assert_eq!(
            without_mcp_server(s, "mcpServers"),
            json!({"mcpServers": {"github": {"command": "gh"}}})
        );
        let theirs =
            json!({"mcpServers": {"recall": {"command": "npx", "args": ["recall-notes"]}}});
        assert_eq!(without_mcp_server(theirs.clone(), "mcpServers"), theirs);
        let p = json!({"permissions": {"allow": ["mcp__recall"]}, "x": 1});
        assert_eq!(disallow_claude_mcp(p), json!({"x": 1}));
        let p = json!({"permissions": {"allow": ["Bash(ls)", "mcp__recall"], "deny": []}});
        assert_eq!(
            disallow_claude_mcp(p),
            json!({"permissions": {"allow": ["Bash(ls)"], "deny": []}})
        );
    }
}
