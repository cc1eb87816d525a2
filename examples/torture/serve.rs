//! A `recall serve` child for the scenarios that talk HTTP (kill -9 and
//! secrets).

use std::path::Path;
use std::process::Stdio;

use anyhow::{Context, Result};

use crate::World;

/// `recall serve` on a free loopback port: the child and its base URL, or
/// `None` (the child reaped) when it did not start.
pub fn start_serve(w: &World, home: &Path) -> Result<Option<(std::process::Child, String)>> {
    use std::io::BufRead as _;
    let mut child = w
        .cmd(home)
        .args(["serve", "--addr", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.as_mut().context("no stdout")?).read_line(&mut line)?;
    match line.trim().strip_prefix("listening on ") {
        Some(url) => Ok(Some((child, url.trim_end_matches('/').to_string()))),
        None => {
            child.kill()?;
            child.wait()?;
            Ok(None)
        }
    }
}

/// An HTTP client that returns error statuses instead of failing on them.
pub fn http_agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}
