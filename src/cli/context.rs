//! Stage two of argument handling: flags, environment and config meet in
//! one [`Memory`](crate::Memory) (the library façade every command runs on).

use anyhow::{Context as _, Result};

use super::args::GlobalArgs;
use crate::config::Config;
use crate::store::Scope;

/// What every command runs on: the library façade.
pub use crate::memory::Memory as Ctx;

/// Resolve the home, project and configuration from flags and environment.
pub fn open(g: &GlobalArgs) -> Result<Ctx> {
    let cwd = match &g.cwd {
        Some(c) => c.clone(),
        None => std::env::current_dir().context("cannot read the current folder")?,
    };
    Ok(Ctx::open(g.home.clone(), g.project.clone(), cwd, env)?)
}

/// The process environment, as the lookup the library takes: the edge is
/// the only place that reads it.
pub fn env(k: &str) -> Option<String> {
    std::env::var(k).ok()
}

/// Lower this process's CPU priority to `index.nice` (Unix), before any
/// worker thread starts (they inherit it): a batch job then yields the CPU
/// to the hooks and queries that an agent is waiting on. Best effort.
pub fn be_nice(config: &Config) {
    let nice = i32::from(config.index.nice);
    #[cfg(unix)]
    if nice > 0 {
        // SAFETY: setpriority has no memory effects; `0` is this process.
        let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) };
        if rc == 0 {
            tracing::debug!("batch job: running at nice {nice}");
        } else {
            tracing::debug!(
                "setpriority({nice}) failed: {}",
                std::io::Error::last_os_error()
            );
        }
    }
    #[cfg(not(unix))]
    let _ = nice;
}

/// Parse a `--scope` value.
pub fn parse_scope(s: &str) -> Result<Scope> {
    Ok(s.parse::<Scope>()?)
}
