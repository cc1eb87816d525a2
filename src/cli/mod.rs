//! The command line: the only module that knows clap. [`run`] parses
//! arguments, resolves the context and dispatches; it returns the exit code.

mod args;
mod context;
mod demo;
mod doctor;
mod index;
mod project;
mod query;
mod record;
mod reindex;

pub use args::Cli;

use anyhow::Result;
use clap::Parser;

use args::Command;
use context::Ctx;

/// Exit codes: 0 success or hits, 1 no hits (or doctor found problems),
/// 2 error, 3 a batch finished but some files failed.
pub fn run() -> Result<u8> {
    let cli = Cli::parse();
    if let Some(Command::Demo(a)) = cli.command {
        return demo::run(a);
    }
    let ctx = Ctx::new(&cli.global)?;
    match cli.command {
        None => query::run(&ctx, cli.query),
        Some(Command::Query(q)) => query::run(&ctx, q),
        Some(Command::Record(r)) => record::run(&ctx, r),
        Some(Command::Index(a)) => index::run(&ctx, a),
        Some(Command::Reindex(a)) => reindex::run(&ctx, a),
        Some(Command::Doctor) => doctor::run(&ctx),
        Some(Command::Project(p)) => project::run(&ctx, p),
        Some(Command::Demo(_)) => unreachable!("handled above"),
    }
}
