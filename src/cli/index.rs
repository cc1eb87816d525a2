//! `recall index`: chunk transcripts and tickets into the project's index.

use anyhow::{bail, Context as _, Result};

use super::args::{IndexArgs, KindArg};
use super::context::Ctx;
use super::reindex::PARTIAL;
use crate::index::{IndexReport, RunOptions};
use crate::ingest::discover::{
    claude_code_transcripts, claude_project_dir_name, codex_rollouts, default_claude_home,
    default_codex_home, default_gemini_home, expand, gemini_chats, Input,
};
use crate::ingest::{Format, Kind};

/// The files named by the flags.
fn sources(ctx: &Ctx, a: &IndexArgs) -> Result<Vec<Input>> {
    let mut inputs = a.paths.clone();
    if let Some(s) = &a.session {
        inputs.push(s.clone());
    }
    let mut files = if inputs.is_empty() {
        vec![]
    } else {
        expand(&inputs)?
    };
    if a.claude_code || a.codex || a.gemini {
        let project = ctx.project()?;
        let Some(root) = project.info.root.clone() else {
            bail!("--claude-code, --codex and --gemini need a project tied to a folder: run from the project or pass --cwd DIR");
        };
        // Sessions run in the project's linked worktrees, and in the
        // folders it moved from, are the project's.
        let roots = project.session_roots();
        if a.claude_code {
            let home = given_home("--claude-home", a.claude_home.as_deref())?
                .or_else(|| default_claude_home(super::context::env))
                .context("cannot find ~/.claude; pass --claude-home")?;
            let found: Vec<_> = roots
                .iter()
                .flat_map(|r| claude_code_transcripts(&home, r))
                .collect();
            if found.is_empty() {
                say!(
                    "recall: no Claude Code transcripts of {} in {} (its folder for this project); run Claude Code in the project first, or pass --claude-home",
                    root.display(),
                    home.join("projects").join(claude_project_dir_name(&root)).display()
                );
            }
            files.extend(found.into_iter().map(Input::found));
        }
        if a.codex {
            let home = given_home("--codex-home", a.codex_home.as_deref())?
                .or_else(|| default_codex_home(super::context::env))
                .context("cannot find ~/.codex; pass --codex-home")?;
            let found: Vec<_> = roots
                .iter()
                .flat_map(|r| codex_rollouts(&home, r))
                .collect();
            if found.is_empty() {
                say!(
                    "recall: no Codex rollouts with a cwd in {} under {}; run Codex in the project first, or pass --codex-home",
                    root.display(),
                    home.join("sessions").display()
                );
            }
            files.extend(found.into_iter().map(Input::found));
        }
        if a.gemini {
            let home = given_home("--gemini-home", a.gemini_home.as_deref())?
                .or_else(|| default_gemini_home(super::context::env))
                .context("cannot find ~/.gemini; pass --gemini-home")?;
            let found: Vec<_> = roots.iter().flat_map(|r| gemini_chats(&home, r)).collect();
            if found.is_empty() {
                say!(
                    "recall: no Gemini CLI chats of {} under {}; run Gemini CLI in the project first, or pass --gemini-home",
                    root.display(),
                    home.join("tmp").display()
                );
            }
            files.extend(found.into_iter().map(Input::found));
        }
    }
    let launchers = a.claude_code || a.codex || a.gemini;
    if files.is_empty() && inputs.is_empty() && !launchers && !a.prune {
        bail!("nothing to index: pass PATH..., --session FILE, --claude-code, --codex or --gemini");
    }
    files.sort();
    files.dedup_by(|a, b| a.path == b.path);
    Ok(files)
}

/// A launcher's home the user named: a folder that is not there is an
/// error, not "no transcripts" (a typo in a cron job would index nothing,
/// with exit 0, forever).
fn given_home(flag: &str, dir: Option<&std::path::Path>) -> Result<Option<std::path::PathBuf>> {
    match dir {
        Some(d) if !d.is_dir() => bail!("{flag} {}: no such folder", d.display()),
        d => Ok(d.map(std::path::Path::to_path_buf)),
    }
}

pub fn run(ctx: &Ctx, a: IndexArgs) -> Result<u8> {
    super::context::be_nice(&ctx.config);
    let format = a
        .format
        .as_deref()
        .map(str::parse::<Format>)
        .transpose()
        .map_err(anyhow::Error::msg)?;
    let kind = a.kind.map(|k| match k {
        KindArg::Session => Kind::Session,
        KindArg::Ticket => Kind::Ticket,
    });
    if let (Some(f), Some(k)) = (format, kind) {
        if f.kind() != k {
            bail!(
                "--format {f} is not a {} format",
                if k == Kind::Session {
                    "session"
                } else {
                    "ticket"
                }
            );
        }
    }
    let files = sources(ctx, &a)?;
    let run = RunOptions {
        full: a.full,
        prune: a.prune,
        progress: !a.json,
        now: ctx.now.as_second(),
        embedder: None,
        stop: stop_on_signals()?,
    };
    let report = ctx.index(&files, kind, format, &run, &mut |line| {
        say!("recall: {line}")
    })?;
    print_report(&report, a.json)?;
    if report.interrupted {
        // With --full the files not yet read again look unchanged to a
        // plain run; and --prune did not prune: the same command finishes.
        say!(
            "recall: index interrupted: what it wrote is kept (the counts above); run the same command again to do the rest{}",
            match (a.full, a.prune) {
                (true, _) => " (with --full it reads every file again)",
                (false, true) => " (and prune)",
                _ => "",
            }
        );
        return Ok(INTERRUPTED);
    }
    Ok(if report.has_failures() { PARTIAL } else { 0 })
}

/// The exit status of a run stopped by Ctrl-C (128 + SIGINT, as a shell
/// reports a process the signal ended).
const INTERRUPTED: u8 = 130;

/// A flag Ctrl-C and SIGTERM set, for the run to stop at its next commit
/// and say what it kept. A second signal, once the flag is set, ends the
/// process at once, as it would have without a handler: nothing is lost
/// either way, each commit being a point the next run continues from.
fn stop_on_signals() -> Result<std::sync::Arc<std::sync::atomic::AtomicBool>> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let stop = std::sync::Arc::default();
    for signal in [SIGINT, SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(
            signal,
            i32::from(INTERRUPTED),
            std::sync::Arc::clone(&stop),
        )
        .and_then(|_| signal_hook::flag::register(signal, std::sync::Arc::clone(&stop)))
        .context("cannot handle Ctrl-C")?;
    }
    Ok(stop)
}

fn print_report(r: &IndexReport, json: bool) -> Result<()> {
    if json {
        outln!("{}", serde_json::json!({"version": 1, "summary": r}));
    }
    say!("{}", r.summary());
    Ok(())
}
