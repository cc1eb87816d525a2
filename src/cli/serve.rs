//! `recall serve`: the REST API and web panel (see [`crate::serve`]).

use std::io::Write as _;
use std::time::Duration;

use anyhow::Result;

use super::args::ServeArgs;
use super::context::Ctx;
use crate::serve::ServeOptions;

pub fn run(ctx: Ctx, a: ServeArgs) -> Result<u8> {
    let opts = ServeOptions {
        addr: a.addr,
        token: a.token,
        timeout: Duration::from_secs(a.timeout),
    };
    let home = ctx.home.root().display().to_string();
    crate::serve::run(ctx, opts, |bound| {
        // stdout carries the address (a script or test reads it, port 0
        // included); the rest goes to stderr.
        let mut out = std::io::stdout();
        let _ = writeln!(out, "listening on http://{bound}/");
        let _ = out.flush();
        eprintln!("recall serve: home {home}; Ctrl-C stops");
    })?;
    Ok(0)
}
