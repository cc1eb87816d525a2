//! `recall completions SHELL` and `recall man`: generated from the clap
//! definitions, so they never drift from the real flags.

use std::path::Path;

use anyhow::{Context as _, Result};
use clap::CommandFactory;

use super::args::Cli;

/// Print the completion script for `shell` on stdout.
pub fn completions(shell: clap_complete::Shell) -> Result<u8> {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "recall", &mut out);
    out!("{}", String::from_utf8_lossy(&out));
    Ok(0)
}

/// Print `recall.1` on stdout, or write it and one page per subcommand into
/// `dir`.
pub fn man(dir: Option<&Path>) -> Result<u8> {
    // Without clap's `help` subcommand: `generate_to` writes no page for it,
    // so `recall.1` must not list one (`recall help X` is `recall X --help`).
    let cmd = Cli::command().disable_help_subcommand(true);
    match dir {
        None => {
            let mut out = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut out)?;
            out!("{}", String::from_utf8_lossy(&out));
        }
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            clap_mangen::generate_to(cmd, dir)
                .with_context(|| format!("cannot write man pages into {}", dir.display()))?;
            say!("wrote man pages into {}", dir.display());
        }
    }
    Ok(0)
}
