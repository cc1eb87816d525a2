//! The command line: the only module that knows clap. [`run`] parses
//! arguments, resolves the context and dispatches; it returns the exit code.

/// `println!` that returns the write error (a closed pipe above all)
/// instead of panicking; `main` turns a broken pipe into exit 0.
macro_rules! outln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout(), $($t)*)?;
    }};
}

/// A line on stderr that is dropped when stderr cannot take it (its
/// reader gone): `eprintln!` would panic there, so a hook would exit 101
/// (or, on its watchdog thread, never exit) and a watcher whose log pipe
/// closed would crash instead of syncing on.
macro_rules! say {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}

/// `print!` that returns the write error; see [`outln!`].
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout(), $($t)*)?;
    }};
}

mod args;
mod context;
mod demo;
mod docs;
mod doctor;
mod extract;
mod hook;
mod hook_install;
mod index;
mod mcp;
mod model;
mod project;
mod query;
mod record;
mod reindex;
mod serve;
mod skills;
mod sync;

pub use args::Cli;

use anyhow::Result;
use clap::Parser;

use args::Command;
use context::Ctx;

/// Exit codes: 0 success or hits, 1 no hits (or doctor found problems),
/// 2 error, 3 a batch finished but some files failed.
pub fn run() -> Result<u8> {
    let mut cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let asked = matches!(
                e.kind(),
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
            );
            match hook::launched(std::env::args_os()) {
                Some(launcher) if !asked => return Ok(hook::unparsed(launcher, &e.render())),
                _ => e.exit(),
            }
        }
    };
    // A hook never fails, whatever went wrong before it ran: Claude Code
    // reads exit 2 from a prompt hook as "block this prompt".
    let hook = match &cli.command {
        Some(Command::Hook(args::HookCmd::ClaudeCode(_))) => Some("claude-code"),
        Some(Command::Hook(args::HookCmd::Codex(_))) => Some("codex"),
        Some(Command::Hook(args::HookCmd::Gemini(_))) => Some("gemini"),
        _ => None,
    };
    // Removed when `run` returns, whatever the command did.
    let _ephemeral = match cli.global.ephemeral {
        true => {
            let dir = match tempfile::Builder::new()
                .prefix("recall-ephemeral-")
                .tempdir()
            {
                Ok(dir) => dir,
                Err(e) => {
                    let e = anyhow::Error::new(e)
                        .context("cannot create a temporary home for --ephemeral");
                    return match hook {
                        Some(launcher) => Ok(hook::unparsed(launcher, &format!("{e:#}"))),
                        None => Err(e),
                    };
                }
            };
            tracing::debug!("--ephemeral: home {}", dir.path().display());
            cli.global.home = Some(dir.path().to_path_buf());
            Some(dir)
        }
        false => None,
    };
    let misplaced = cli.query.flags_given();
    if let (Some(cmd), Some(flag)) = (&cli.command, misplaced.first()) {
        let name = command_name(cmd);
        let e = format!(
            "{flag} before the subcommand belongs to a bare query and would be ignored by `{name}`; \
             put it after the subcommand (`recall {name} ... {flag} ...`) if `{name}` takes it"
        );
        return match hook {
            Some(launcher) => Ok(hook::unparsed(launcher, &e)),
            None => Err(anyhow::anyhow!(e)),
        };
    }
    match cli.command {
        Some(Command::Demo(a)) => return demo::run(a),
        Some(Command::Completions(a)) => return docs::completions(a.shell),
        Some(Command::Man(a)) => return docs::man(a.out.as_deref()),
        // Hooks never fail: they resolve everything themselves.
        Some(Command::Hook(args::HookCmd::ClaudeCode(a))) => {
            return Ok(hook::run(&cli.global, a, "claude-code"))
        }
        Some(Command::Hook(args::HookCmd::Codex(a))) => {
            return Ok(hook::run(&cli.global, a, "codex"))
        }
        Some(Command::Hook(args::HookCmd::Gemini(a))) => {
            return Ok(hook::run(&cli.global, a, "gemini"))
        }
        _ => {}
    }
    if cli.global.ephemeral && matches!(cli.command, Some(Command::Hook(args::HookCmd::Install(_))))
    {
        anyhow::bail!(
            "--ephemeral makes a home that is deleted when this command ends: hooks installed with it would keep memory nowhere; install without it (or with --home DIR)"
        );
    }
    let ctx = context::open(&cli.global)?;
    // A project named with --project (or RECALL_PROJECT) that does not
    // exist yet: a command that creates it says so, since a typo would
    // otherwise file facts where nobody looks.
    let named_new = cli
        .global
        .project
        .as_deref()
        .filter(|n| !n.is_empty())
        .and_then(|_| ctx.project().ok())
        .filter(|p| !p.dir.root.exists());
    let code = dispatch(ctx, cli.command, cli.query);
    if let Some(p) = named_new.filter(|p| p.dir.root.exists()) {
        say!(
            "recall: created project '{}' ({}): no project of that name was in this home; `recall project list` lists them",
            p.info.name,
            p.dir.root.display()
        );
    }
    code
}

/// Run a command that needs the resolved context.
fn dispatch(ctx: Ctx, command: Option<Command>, bare: args::QueryArgs) -> Result<u8> {
    match command {
        None => query::run(&ctx, bare),
        Some(Command::Query(q)) => query::run(&ctx, q),
        Some(Command::Record(r)) => record::run(&ctx, r),
        Some(Command::Remember(a)) => record::remember(&ctx, a),
        Some(Command::Mcp) => mcp::run(ctx),
        Some(Command::Serve(a)) => serve::run(ctx, a),
        Some(Command::Sync(a)) => sync::run(&ctx, a),
        Some(Command::Skills(a)) => skills::run(&ctx, a),
        Some(Command::Model(m)) => model::run(&ctx, m),
        Some(Command::Index(a)) => index::run(&ctx, a),
        Some(Command::Reindex(a)) => reindex::run(&ctx, a),
        Some(Command::Doctor) => doctor::run(&ctx),
        Some(Command::Project(p)) => project::run(&ctx, p),
        Some(Command::Extract(a)) => extract::run(&ctx, a),
        Some(Command::Summary(a)) => extract::summary(&ctx, a),
        Some(Command::Hook(args::HookCmd::Install(a))) => hook_install::run(&ctx, a),
        Some(Command::Hook(args::HookCmd::Uninstall(a))) => hook_install::uninstall::run(&ctx, a),
        Some(Command::Demo(_) | Command::Hook(_) | Command::Completions(_) | Command::Man(_)) => {
            unreachable!("handled above")
        }
    }
}

/// The subcommand's name as typed.
fn command_name(c: &Command) -> &'static str {
    match c {
        Command::Query(_) => "query",
        Command::Record(_) => "record",
        Command::Index(_) => "index",
        Command::Reindex(_) => "reindex",
        Command::Doctor => "doctor",
        Command::Project(_) => "project",
        Command::Extract(_) => "extract",
        Command::Summary(_) => "summary",
        Command::Hook(_) => "hook",
        Command::Demo(_) => "demo",
        Command::Remember(_) => "remember",
        Command::Mcp => "mcp",
        Command::Serve(_) => "serve",
        Command::Sync(_) => "sync",
        Command::Skills(_) => "skills",
        Command::Model(_) => "model",
        Command::Completions(_) => "completions",
        Command::Man(_) => "man",
    }
}
