//! `recall hook install --claude-code [--project|--user] [--print]
//! [--dry-run] [--allow-mcp]`, `--codex` and `--gemini`: merge recall's
//! hooks into Claude Code's `settings.json` and its MCP server into
//! `.mcp.json`, the hooks into Codex's `hooks.json` and the MCP server (and
//! the hooks' trust) into its `config.toml`, and both into Gemini CLI's
//! `settings.json`, keeping every other setting, hook and line, writing a
//! backup first; idempotent; `--dry-run` shows the diffs. Codex's part is
//! in `codex`, Gemini CLI's in `gemini`; what every launcher's install
//! shares (merging hooks, the changes and their backups, the hook command,
//! the backfill) is here.

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _, Result};
use serde_json::{json, Value};

use super::args::InstallArgs;
use super::context::Ctx;
use crate::ingest::discover::{
    claude_code_moved_away, claude_code_transcripts, codex_rollouts, default_claude_home,
    default_codex_home, default_gemini_home, gemini_chats, Input,
};
use crate::ingest::Kind;

mod codex;
mod gemini;
pub mod uninstall;

/// The events recall hooks into, and why.
const EVENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreCompact",
    "SessionEnd",
];

fn settings_path(ctx: &Ctx, user: bool) -> Result<PathBuf> {
    if user {
        let home = crate::store::user_home(super::context::env)
            .context("cannot find your home folder: set HOME")?;
        return Ok(home.join(".claude/settings.json"));
    }
    Ok(install_folder(ctx, ".claude/settings.json")?.join(".claude/settings.json"))
}

/// The folder a project install writes `file` (a launcher's project
/// settings) into: the checkout it runs in. A linked worktree is its main
/// checkout's project, one memory, but a launcher started in the worktree
/// reads the worktree's own settings, so the install writes those.
fn install_folder(ctx: &Ctx, file: &str) -> Result<PathBuf> {
    let project = ctx.project()?;
    let Some(root) = project.info.root else {
        let why = match ctx.project_name {
            Some(_) if super::context::env("RECALL_PROJECT").is_some() => {
                "RECALL_PROJECT names a project"
            }
            _ => "--project names a project",
        };
        bail!(
            "{why} ('{}') with no folder, and a project install writes <project folder>/{file}: unset it and run from the project's folder (or pass --cwd DIR), or pass --user",
            project.info.name
        );
    };
    let here = crate::store::checkout_top(&ctx.cwd)?;
    let folder =
        match ctx.project_name.is_none() && crate::store::checkout_roots(&root).contains(&here) {
            true => here,
            false => root,
        };
    not_the_home_folder(&folder)?;
    Ok(folder)
}

/// A project install run from the home folder (outside any repository, so
/// the folder is the project) would write the launcher's user settings,
/// which every project reads, while saying it installed into a project.
fn not_the_home_folder(root: &Path) -> Result<()> {
    let home = crate::store::user_home(super::context::env);
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    if home.is_some_and(|h| same(&h, root)) {
        bail!(
            "{} is your home folder, not a project: its project settings are the launcher's user settings, read in every project; run from the project's folder (or pass --cwd DIR), or pass --user to install for every project",
            root.display()
        );
    }
    Ok(())
}

/// `settings` with recall's hooks added; unchanged when they are present.
pub fn merge(settings: Value, command: &str) -> Result<Value> {
    let hook = json!({"type": "command", "command": command, "timeout": 10});
    merge_hooks(settings, EVENTS, hook, is_recall_hook)
}

/// `--allow-mcp` for a project's Claude Code: the permission rule in
/// `settings.local.json` beside its `settings.json` (`settings`): a
/// permission is the person's, not the team's, and Claude Code ignores a
/// project `settings.json`'s allow rules until the folder is trusted.
/// (With `--user` the rule goes into the user's settings with the hooks.)
fn claude_permission(settings: &Path) -> Result<Change> {
    let path = settings.with_file_name("settings.local.json");
    let (raw, before) = read_json(&path)?;
    let after = allow_claude_mcp(before.clone())
        .with_context(|| format!("cannot merge into {}", path.display()))?;
    Ok(Change {
        changed: after != before,
        path,
        before: raw,
        after: serde_json::to_string_pretty(&after)? + "\n",
        what: format!("permission for recall's MCP tools (\"{CLAUDE_ALLOW_MCP}\")"),
        gone: false,
    })
}

/// The Claude Code permission rule for every tool of recall's MCP server
/// (and no other server's).
const CLAUDE_ALLOW_MCP: &str = "mcp__recall";

/// Claude Code `settings` whose `permissions.allow` lets recall's MCP
/// tools run without asking (`--allow-mcp`); every other rule kept.
fn allow_claude_mcp(mut settings: Value) -> Result<Value> {
    let allow = settings
        .as_object_mut()
        .context("it is not a JSON object")?
        .entry("permissions")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .context("\"permissions\" is not an object")?
        .entry("allow")
        .or_insert_with(|| json!([]))
        .as_array_mut()
        .context("\"permissions.allow\" is not a list")?;
    if !allow.iter().any(|r| r == CLAUDE_ALLOW_MCP) {
        allow.push(json!(CLAUDE_ALLOW_MCP));
    }
    Ok(settings)
}

/// `settings` with `hook` in each of `events`: a hook `ours` recognises
/// (from an earlier install, another home say) gets `hook`'s command in
/// place, never a second entry.
fn merge_hooks(
    mut settings: Value,
    events: &[&str],
    hook: Value,
    ours: fn(&str) -> bool,
) -> Result<Value> {
    if !settings.is_object() {
        bail!("it is not a JSON object");
    }
    let command = hook["command"].clone();
    // The launcher: the last word of the command install writes.
    let launcher = command
        .as_str()
        .and_then(|c| c.rsplit(' ').next())
        .unwrap_or_default()
        .to_string();
    let hooks = settings
        .as_object_mut()
        .map(|o| o.entry("hooks").or_insert_with(|| json!({})))
        .filter(|h| h.is_object())
        .context("\"hooks\" is not an object")?;
    for event in events {
        let list = hooks
            .as_object_mut()
            .map(|o| o.entry(*event).or_insert_with(|| json!([])))
            .filter(|l| l.is_array())
            .with_context(|| format!("\"hooks.{event}\" is not a list"))?;
        // A recall hook from an earlier install (another home, say) is
        // updated in place, never added twice.
        let mut present = false;
        for (i, group) in list.as_array_mut().into_iter().flatten().enumerate() {
            let group = group
                .as_object_mut()
                .with_context(|| format!("\"hooks.{event}[{i}]\" is not an object"))?;
            let Some(handlers) = group.get_mut("hooks") else {
                continue;
            };
            let handlers = handlers
                .as_array_mut()
                .with_context(|| format!("\"hooks.{event}[{i}].hooks\" is not a list"))?;
            for h in handlers {
                let Some(existing) = h.get("command").and_then(Value::as_str).filter(|c| ours(c))
                else {
                    continue;
                };
                if written_by_install(existing, &launcher) {
                    h["command"] = command.clone();
                }
                present = true;
            }
        }
        if !present {
            if let Some(arr) = list.as_array_mut() {
                arr.push(json!({"hooks": [hook.clone()]}));
            }
        }
    }
    Ok(settings)
}

/// One file the install changes.
struct Change {
    path: PathBuf,
    /// Its text now (`None`: the file does not exist).
    before: Option<String>,
    after: String,
    /// Whether `after` means something else than `before` (reformatting
    /// alone is not a change).
    changed: bool,
    /// What it installs, for the messages.
    what: String,
    /// The file is removed: nothing is left in it (an uninstall).
    gone: bool,
}

pub fn run(ctx: &Ctx, a: InstallArgs) -> Result<u8> {
    if !a.claude_code && !a.codex && !a.gemini {
        bail!("say which launcher to install for: --claude-code, --codex, --gemini, or several");
    }
    if a.print && a.claude_code && a.gemini {
        bail!("--print shows one settings file: pass --claude-code or --gemini with it, not both");
    }
    // Codex's install changes two files; printing one would write neither
    // and say nothing of the other.
    if a.print && a.codex {
        bail!("--print shows one settings file, and --codex changes two (hooks.json and config.toml): `recall hook install --codex --dry-run` shows both changes");
    }
    let mut changes = Vec::new();
    if a.claude_code {
        let path = settings_path(ctx, a.user)?;
        let (raw, before) = read_json(&path)?;
        let merged = || -> Result<Value> {
            let after = merge(before.clone(), &hook_command(ctx))?;
            match a.allow_mcp && a.user {
                true => allow_claude_mcp(after),
                false => Ok(after),
            }
        };
        let after = merged().with_context(|| format!("cannot merge into {}", path.display()))?;
        let text = serde_json::to_string_pretty(&after)? + "\n";
        if a.print {
            out!("{text}");
            return Ok(0);
        }
        changes.push(Change {
            path,
            before: raw,
            changed: after != before,
            after: text,
            what: format!("recall hooks ({})", EVENTS.join(", ")),
            gone: false,
        });
        if a.allow_mcp && !a.user {
            let local = claude_permission(&changes[changes.len() - 1].path)?;
            changes.push(local);
        }
        if a.user {
            say!(
                "recall: Claude Code keeps user-scope MCP servers in its own state file; add recall there with `claude mcp add --scope user recall -- {}`",
                mcp_args(ctx).join(" ")
            );
        } else {
            let path = install_folder(ctx, ".mcp.json")?.join(".mcp.json");
            let (raw, before) = read_json(&path)?;
            let after = merge_mcp_json(before.clone(), ctx)?;
            changes.push(Change {
                path,
                before: raw,
                changed: after != before,
                after: serde_json::to_string_pretty(&after)? + "\n",
                what: "the recall MCP server".into(),
                gone: false,
            });
        }
    }
    if a.gemini {
        let change = gemini::gemini_change(ctx, &a)?;
        if a.print {
            out!("{}", change.after);
            return Ok(0);
        }
        changes.push(change);
    }
    if a.codex {
        let home = crate::ingest::discover::default_codex_home(super::context::env)
            .context("cannot find ~/.codex; set CODEX_HOME")?;
        changes.extend(codex::codex_changes(ctx, &home, a.allow_mcp)?);
    }
    if !a.dry_run {
        can_write_all(&changes)?;
    }
    for c in changes {
        if !c.changed {
            outln!("{} already in {}", c.what, c.path.display());
            continue;
        }
        if a.dry_run {
            let name = c.path.display().to_string();
            out!(
                "{}",
                similar::udiff::unified_diff(
                    similar::Algorithm::Myers,
                    c.before.as_deref().unwrap_or(""),
                    &c.after,
                    3,
                    Some((&name, &name)),
                )
            );
            continue;
        }
        write_with_backup(ctx, &c)?;
        outln!("installed {} in {}", c.what, c.path.display());
    }
    if a.codex && !a.dry_run {
        outln!("Codex runs only hooks it trusts: their trust is recorded in config.toml ([hooks.state]); if `/hooks` in Codex lists them as untrusted or modified, trust them there");
    }
    if !a.allow_mcp && !a.dry_run {
        outln!("recall's MCP tools ask before each use; `--allow-mcp` lets them run without asking (non-interactive runs need it)");
    }
    if !a.no_backfill {
        backfill(ctx, &a)?;
    }
    Ok(0)
}

/// Memory from the first session: offer to index this project's earlier
/// sessions of the launchers just installed, which would otherwise stay
/// unindexed until each one ended again.
fn backfill(ctx: &Ctx, a: &InstallArgs) -> Result<()> {
    let Some(project) = ctx.project().ok().filter(|p| p.info.root.is_some()) else {
        return Ok(());
    };
    let root = project.info.root.clone().unwrap_or_default();
    let roots = project.session_roots();
    let env = super::context::env;
    let mut found = Vec::new();
    let mut launchers = Vec::new();
    if a.claude_code {
        if let Some(home) = default_claude_home(env) {
            // Sessions from before a move are not taken without the user
            // saying the project moved: say where they are.
            for (old, n) in claude_code_moved_away(&home, &root) {
                outln!(
                    "{n} Claude Code transcript(s) were recorded in {}, a folder that no longer exists: if this project moved from there, `recall project move --from {}` makes them its own",
                    old.display(),
                    shell_quote(&old.to_string_lossy())
                );
            }
            let files: Vec<_> = roots
                .iter()
                .flat_map(|r| claude_code_transcripts(&home, r))
                .collect();
            launchers.push(format!("{} Claude Code", files.len()));
            found.extend(files);
        }
    }
    if a.codex {
        if let Some(home) = default_codex_home(env) {
            let files: Vec<_> = roots
                .iter()
                .flat_map(|r| codex_rollouts(&home, r))
                .collect();
            launchers.push(format!("{} Codex", files.len()));
            found.extend(files);
        }
    }
    if a.gemini {
        if let Some(home) = default_gemini_home(env) {
            let files: Vec<_> = roots.iter().flat_map(|r| gemini_chats(&home, r)).collect();
            launchers.push(format!("{} Gemini CLI", files.len()));
            found.extend(files);
        }
    }
    if found.is_empty() {
        outln!(
            "no earlier sessions of {} to index: memory fills as sessions end",
            root.display()
        );
        return Ok(());
    }
    // An install run again (or after `recall index`) offers only what is
    // not indexed as it is.
    let (found, indexed) = ctx.not_yet_indexed(found)?;
    if found.is_empty() {
        outln!(
            "the {indexed} earlier session file(s) of {} are indexed already",
            root.display()
        );
        return Ok(());
    }
    let already = match indexed {
        0 => String::new(),
        n => format!("; {n} more indexed already"),
    };
    let bytes: u64 = found
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    let what = format!(
        "{} earlier session file(s) of {} ({}; {:.1} MB{already})",
        found.len(),
        root.display(),
        launchers.join(", "),
        bytes as f64 / 1e6
    );
    let how = format!(
        "`recall index{}{}{}` indexes them",
        if a.claude_code { " --claude-code" } else { "" },
        if a.codex { " --codex" } else { "" },
        if a.gemini { " --gemini" } else { "" }
    );
    if a.dry_run {
        outln!("would offer to index {what}");
        return Ok(());
    }
    if !a.yes
        && !confirm(&format!(
            "Index {what} now, so the next session recalls them? [Y/n] "
        ))?
    {
        outln!("found {what}; not indexed: {how} (or install again with --yes)");
        return Ok(());
    }
    let inputs: Vec<Input> = found.into_iter().map(Input::found).collect();
    let run = crate::index::RunOptions {
        full: false,
        prune: false,
        progress: std::io::stderr().is_terminal(),
        now: ctx.now.as_second(),
        ..crate::index::RunOptions::default()
    };
    let report = ctx.index(&inputs, Some(Kind::Session), None, &run, &mut |line| {
        say!("recall: {line}")
    })?;
    outln!("{}", report.summary());
    offer_old_extraction(ctx)
}

/// After a backfill: `recall extract` takes sessions active in the last
/// `extract.max_age_days`, so sessions backfilled from before that would
/// be "nothing due": say how to distil them too.
fn offer_old_extraction(ctx: &Ctx) -> Result<()> {
    let Ok(status) = ctx.extract_status() else {
        return Ok(());
    };
    let max_age = ctx.config.extract.max_age_days;
    let now = ctx.now.as_second();
    let ages: Vec<f64> = status
        .iter()
        .filter(|s| s.state == "pending")
        .filter_map(|s| s.last_active)
        .map(|t| (now - t) as f64 / 86_400.0)
        .filter(|days| *days > max_age)
        .collect();
    if let Some(oldest) = ages.iter().copied().reduce(f64::max) {
        outln!(
            "{} of the sessions were last active over {max_age} days ago, which `recall extract` leaves out: `recall extract --since {}d` distils them into records too",
            ages.len(),
            oldest.ceil() as u64
        );
    }
    Ok(())
}

/// Ask `question` on the terminal: `true` for yes (the default), `false`
/// for no, or when there is no terminal to ask on (a script must pass
/// --yes to say yes).
fn confirm(question: &str) -> Result<bool> {
    if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
        return Ok(false);
    }
    eprint!("{question}");
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .context("cannot read the answer")?;
    let answer = line.trim().to_ascii_lowercase();
    Ok(!matches!(answer.as_str(), "n" | "no"))
}

/// Write a change: a timestamped backup of the old file first, the new
/// text atomically, and the file's own mode kept (these are the launcher's
/// files, not recall's memory: a new one is 0644, not 0600).
fn write_with_backup(ctx: &Ctx, c: &Change) -> Result<()> {
    // A settings file kept elsewhere and linked in (dotfiles) is written
    // where it lives: replacing the link would cut it off from its repo.
    let path = &match std::fs::symlink_metadata(&c.path) {
        Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(&c.path).with_context(|| {
            format!(
                "{} is a symbolic link to a file that cannot be read; fix or remove the link, then install again",
                c.path.display()
            )
        })?,
        _ => c.path.clone(),
    };
    if path.exists() {
        let ext = path
            .extension()
            .map_or(String::new(), |e| e.to_string_lossy().into_owned());
        // Never over another backup (an install and an uninstall in one
        // second): the first holds the file as it was before recall.
        let stamp = ctx.now.as_second();
        let backup = (0..)
            .map(|n| match n {
                0 => path.with_extension(format!("{ext}.bak-{stamp}")),
                n => path.with_extension(format!("{ext}.bak-{stamp}-{n}")),
            })
            .find(|b| !b.exists())
            .context("no free backup name")?;
        std::fs::copy(path, &backup)
            .with_context(|| format!("cannot back up {}", path.display()))?;
        outln!("backed up {} to {}", path.display(), backup.display());
    }
    // A file nothing is left in goes, unless it was reached through a link
    // (dotfiles): the linked file is the user's, and is emptied instead.
    if c.gone && *path == c.path {
        return std::fs::remove_file(path)
            .with_context(|| format!("cannot remove {}", path.display()));
    }
    let dir = path.parent().context("the path has no folder")?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mode = std::fs::metadata(path).map(|m| m.permissions());
    crate::store::atomic_write(path, c.after.as_bytes())?;
    restore_mode(path, mode.ok())
}

/// Every file the changes touch can be written, checked before any is: a
/// Codex install that wrote hooks.json and then could not write
/// config.toml left hooks Codex skips without a word. A file made
/// read-only (by its owner, or a home manager's link into a read-only
/// store) is refused, not replaced.
fn can_write_all(changes: &[Change]) -> Result<()> {
    for c in changes.iter().filter(|c| c.changed) {
        let target = std::fs::canonicalize(&c.path).unwrap_or_else(|_| c.path.clone());
        if let Ok(m) = std::fs::metadata(&target) {
            if m.permissions().readonly() {
                bail!(
                    "{} is read-only, so nothing was installed: make it writable (`chmod u+w {}`), or add what `--dry-run` shows by hand",
                    target.display(),
                    shell_quote(&target.to_string_lossy())
                );
            }
        }
        // The new text is written beside the file, then renamed over it.
        let mut dir = target.parent();
        while let Some(d) = dir.filter(|d| !d.exists()) {
            dir = d.parent();
        }
        let Some(dir) = dir else { continue };
        let c_dir = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes())?;
        // SAFETY: access(2) reads a NUL-terminated path and nothing else.
        if unsafe { libc::access(c_dir.as_ptr(), libc::W_OK) } != 0 {
            bail!(
                "cannot write in {} ({}), where {} is: nothing was installed; fix the folder's permissions, or add what `--dry-run` shows by hand",
                dir.display(),
                std::io::Error::last_os_error(),
                c.path.display()
            );
        }
    }
    Ok(())
}

fn read_text(path: &Path) -> Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// A JSON settings file: its text, and its value (`{}` when absent or
/// blank).
fn read_json(path: &Path) -> Result<(Option<String>, Value)> {
    let raw = read_text(path)?;
    // A byte order mark (some Windows editors write one) is not JSON.
    let value = match raw.as_deref().map(|t| t.trim_start_matches('\u{feff}')) {
        None => json!({}),
        Some(t) if t.trim().is_empty() => json!({}),
        Some(t) => serde_json::from_str(t).with_context(|| {
            format!(
                "{} is not valid JSON; fix it or move it aside",
                path.display()
            )
        })?,
    };
    Ok((raw, value))
}

/// The arguments that start the MCP server (a non-default home included).
fn mcp_args(ctx: &Ctx) -> Vec<String> {
    let mut args = vec!["recall".to_string()];
    if let Some(home) = non_default_home(ctx) {
        args.push("--home".into());
        args.push(home);
    }
    args.push("mcp".into());
    args
}

/// `.mcp.json` with `mcpServers.recall` set, everything else kept.
fn merge_mcp_json(mut v: Value, ctx: &Ctx) -> Result<Value> {
    let servers = v
        .as_object_mut()
        .context(".mcp.json is not a JSON object")?
        .entry("mcpServers")
        .or_insert_with(|| json!({}));
    let servers = servers
        .as_object_mut()
        .context("\"mcpServers\" in .mcp.json is not an object")?;
    not_another_json_server(servers.get("recall"), ".mcp.json", "mcpServers")?;
    let args = mcp_args(ctx);
    servers.insert(
        "recall".into(),
        json!({"type": "stdio", "command": args[0], "args": args[1..]}),
    );
    Ok(v)
}

/// An MCP server already named `recall` in `file` (under `table`) that
/// runs something else than `recall mcp` (`command` and `args`, or a
/// `url`) is another program's: install would replace it, and a later
/// uninstall remove it. Refused, with what to do.
fn not_another_server(
    command: Option<&str>,
    args: &[&str],
    url: Option<&str>,
    file: &str,
    table: &str,
) -> Result<()> {
    let runs = match (command, url) {
        (None, None) => return Ok(()),
        (Some(c), _) if uninstall::runs_recall_mcp(Some(c), args) => return Ok(()),
        (Some(c), _) => format!(
            "runs `{}`",
            [c].iter()
                .chain(args)
                .copied()
                .collect::<Vec<_>>()
                .join(" ")
        ),
        (None, Some(url)) => format!("is at {url}"),
    };
    bail!(
        "{file} already has an MCP server named \"recall\" ({table}.recall) that {runs}, not `recall mcp`: rename or remove that entry, then install again (recall's tools are reached under that name)"
    )
}

/// [`not_another_server`] for a JSON settings file's entry.
fn not_another_json_server(server: Option<&Value>, file: &str, table: &str) -> Result<()> {
    let Some(server) = server else {
        return Ok(());
    };
    let text_of = |key: &str| server.get(key).and_then(Value::as_str);
    let url = text_of("url").or_else(|| text_of("httpUrl"));
    not_another_server(text_of("command"), &json_args(server), url, file, table)
}

/// The `args` of an MCP server entry in a JSON settings file.
fn json_args(server: &Value) -> Vec<&str> {
    server
        .get("args")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// Whether a settings command is one of recall's Claude Code hooks.
fn is_recall_hook(cmd: &str) -> bool {
    runs_recall_hook(cmd, "claude-code")
}

/// Whether a launcher's hook command runs `recall … hook <launcher>`: recall
/// by name or by path (`/usr/local/bin/recall`), after variables
/// (`RECALL_LOG=debug recall …`) or `env`.
fn runs_recall_hook(cmd: &str, launcher: &str) -> bool {
    let mut words = cmd
        .split_whitespace()
        .skip_while(|w| *w == "env" || (w.contains('=') && !w.starts_with('-')));
    // By name, or by a path, quoted or not (`"$HOME/.cargo/bin/recall"`).
    let recall = words.next().is_some_and(|p| {
        let p = p.trim_matches(|c| c == '"' || c == '\'');
        Path::new(p).file_name().is_some_and(|n| n == "recall")
    });
    // The command itself, before any redirection or `|| true` after it.
    let rest: Vec<&str> = words
        .take_while(|w| {
            !matches!(*w, "||" | "&&" | "|" | ";" | "&")
                && !w.starts_with('>')
                && !w.starts_with("2>")
                && !w.starts_with("1>")
                && !w.starts_with("&>")
        })
        .collect();
    // `hook <launcher>`, options after it or not (`--deadline-ms 5000`).
    recall && rest.windows(2).any(|w| w == ["hook", launcher])
}

/// Whether an existing recall hook command is exactly a form install
/// writes (`recall hook <launcher>` or `recall --home H hook <launcher>`),
/// which it updates in place. One written by hand (by path, with variables,
/// with `--project` or `--deadline-ms`) is kept as written.
fn written_by_install(cmd: &str, launcher: &str) -> bool {
    let tail = format!("hook {launcher}");
    let Some(rest) = cmd.strip_prefix("recall ") else {
        return false;
    };
    if rest == tail {
        return true;
    }
    // The home as `shell_quote` writes it: one plain word, or one quoted.
    let home = rest
        .strip_prefix("--home ")
        .and_then(|r| r.strip_suffix(&format!(" {tail}")));
    home.is_some_and(|h| {
        let plain = !h.is_empty()
            && h.chars()
                .all(|c| c.is_ascii_alphanumeric() || "/._-+:@".contains(c));
        let quoted = h.len() >= 2 && h.starts_with('\'') && h.ends_with('\'');
        plain || quoted
    })
}

/// The command the hooks run. A home other than the default (given with
/// `--home` or `RECALL_HOME`) is passed on, since the launcher runs the hook
/// without this shell's flags or, often, its environment.
fn hook_command(ctx: &Ctx) -> String {
    launcher_hook_command(ctx, "claude-code")
}

fn launcher_hook_command(ctx: &Ctx, launcher: &str) -> String {
    match non_default_home(ctx) {
        None => format!("recall hook {launcher}"),
        Some(home) => format!("recall --home {} hook {launcher}", shell_quote(&home)),
    }
}

/// The home, when it is not the one recall finds by itself.
fn non_default_home(ctx: &Ctx) -> Option<String> {
    let default = crate::store::resolve_home(None, |k| {
        (k != "RECALL_HOME")
            .then(|| super::context::env(k))
            .flatten()
    });
    match default {
        Ok(d) if d == ctx.home.root() => None,
        // The launcher runs the hook in whatever folder it is in: a
        // relative home would be a new one in each project.
        _ => Some(
            std::path::absolute(ctx.home.root())
                .unwrap_or_else(|_| ctx.home.root().to_path_buf())
                .to_string_lossy()
                .into_owned(),
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
