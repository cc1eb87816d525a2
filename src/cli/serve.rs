//! `recall serve`: the REST API and web panel (see [`crate::serve`]).

use std::io::Write as _;
use std::time::Duration;

use anyhow::Result;

use super::args::ServeArgs;
use super::context::Ctx;
use crate::serve::ServeOptions;
use crate::when::parse_when;

pub fn run(ctx: Ctx, a: ServeArgs) -> Result<u8> {
    let at =
        a.at.as_deref()
            .map(|w| parse_when(w, ctx.now))
            .transpose()?;
    let opts = ServeOptions {
        addr: a.addr,
        token: a.token,
        timeout: Duration::from_secs(a.timeout),
        at,
    };
    let home = ctx.home.root().display().to_string();
    if ctx.config.sync.url.is_some() {
        sync_every(
            ctx.clone(),
            Duration::from_secs_f64(ctx.config.sync.interval_secs),
        );
    }
    crate::serve::run(ctx, opts, |bound| {
        // stdout carries the address (a script or test reads it, port 0
        // included); the rest goes to stderr.
        let mut out = std::io::stdout();
        let _ = writeln!(out, "listening on http://{bound}/");
        let _ = out.flush();
        if bound.ip().is_unspecified() {
            // Nobody can open http://0.0.0.0/: name the addresses that work.
            let port = bound.port();
            let host = crate::sync::identity::machine_name();
            let other = match host.is_empty() {
                true => String::new(),
                false => format!(", or http://{host}:{port}/ from another machine"),
            };
            say!("recall serve: open http://127.0.0.1:{port}/ on this machine{other}");
        }
        say!("recall serve: home {home}; Ctrl-C stops");
    })?;
    Ok(0)
}

/// Team memory while serving: a plain thread (the PostgreSQL client runs
/// its own runtime, outside the server's) syncs every `every`. Requests
/// never wait on it; a failed round is logged and the next one retries.
fn sync_every(ctx: Ctx, every: Duration) {
    let spawned = std::thread::Builder::new()
        .name("recall-sync".into())
        .spawn(move || loop {
            let round = ctx.at(jiff::Timestamp::now());
            let opts = crate::memory::SyncOptions::default();
            match round.sync(&opts, false, &super::context::env) {
                Ok(Some(r)) => {
                    let (pulled, pushed) = r
                        .scopes
                        .iter()
                        .fold((0, 0), |(a, b), s| (a + s.pulled, b + s.pushed));
                    tracing::info!(pulled, pushed, "sync");
                }
                Ok(None) => tracing::debug!("sync: another sync is running"),
                Err(e) => tracing::warn!("sync: {e:#}"),
            }
            std::thread::sleep(every);
        });
    if let Err(e) = spawned {
        tracing::warn!("sync: cannot start the sync thread: {e}");
    }
}
