//! `recall serve`: a local REST API and a web memory panel over the
//! [`Memory`] façade.
//!
//! tokio and axum start only here, so the one-shot paths (`query`, hooks)
//! never pay for them. The server binds to loopback by default; any other
//! address needs a bearer token. Every response is the envelope
//! `{"success": true, "data": …}` or `{"success": false, "error": "…"}`.
//! Record writes go through the façade, so a record written here is the
//! same Markdown file the CLI writes, with the same validation and secret
//! refusal. Writes are serialised inside the process and run on tokio's
//! blocking pool; SQLite's busy timeout orders them against other
//! processes. Reads borrow pooled read-only connections (see
//! [`Memory::with_read_pools`]), so they never wait for a writer.

mod api;
mod envelope;
mod guard;
mod panel;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::error::{Error, Result};
use crate::Memory;

/// How long requests in flight may run after SIGINT or SIGTERM.
const GRACE: Duration = Duration::from_secs(10);

/// The largest request body, in bytes (larger gets 413).
pub const BODY_LIMIT: usize = 64 * 1024;

/// How to serve.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub addr: SocketAddr,
    /// Bearer token every `/api` call must carry; required off loopback.
    pub token: Option<String>,
    /// A request taking longer gets 503.
    pub timeout: Duration,
    /// Every request's time instead of the clock's (`recall serve --at`),
    /// so tests and evaluations see the times they set; `None` serves at
    /// the current time, read per request.
    pub at: Option<jiff::Timestamp>,
}

/// Shared by every request.
struct State {
    memory: Memory,
    /// One record write at a time in this process.
    writes: Mutex<()>,
    token: Option<String>,
    loopback: bool,
    port: u16,
    timeout: Duration,
    at: Option<jiff::Timestamp>,
}

impl State {
    /// The time a request runs at: the clock's, unless `--at` fixed it.
    fn now(&self) -> jiff::Timestamp {
        self.at.unwrap_or_else(jiff::Timestamp::now)
    }
}

type Shared = Arc<State>;

/// Check the options: a non-loopback address needs a token.
pub fn check(opts: &ServeOptions) -> Result<()> {
    if !opts.addr.ip().is_loopback() && opts.token.as_deref().is_none_or(str::is_empty) {
        return Err(Error::invalid(format!(
            "refusing to serve on {} without a token: anyone on the network could read and change memory; pass --token T (or set RECALL_TOKEN), or bind to 127.0.0.1",
            opts.addr
        )));
    }
    if opts.token.as_deref().is_some_and(|t| t.trim().len() < 16) {
        return Err(Error::invalid(
            "the token is shorter than 16 characters; use a long random one, e.g. `openssl rand -hex 32`",
        ));
    }
    Ok(())
}

/// Serve until SIGINT or SIGTERM. `ready` is called with the bound address
/// once the server accepts connections (port 0 picks a free port).
pub fn run(memory: Memory, opts: ServeOptions, ready: impl FnOnce(SocketAddr)) -> Result<()> {
    check(&opts)?;
    // Concurrent reads borrow pooled read-only connections, and the
    // hook's one-shot processes embed with this process's model.
    let memory = memory.with_read_pools();
    let _lending = memory.lend_model();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("cannot start the server runtime for", "recall serve", e))?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(opts.addr)
            .await
            .map_err(|e| Error::io("cannot listen on", opts.addr.to_string(), e))?;
        let bound = listener
            .local_addr()
            .map_err(|e| Error::io("cannot read the address of", opts.addr.to_string(), e))?;
        let state = Arc::new(State {
            memory,
            writes: Mutex::new(()),
            token: opts.token.filter(|t| !t.is_empty()),
            loopback: bound.ip().is_loopback(),
            port: bound.port(),
            timeout: opts.timeout,
            at: opts.at,
        });
        let app = api::router(state.clone())
            .merge(panel::router())
            .fallback(api::not_found)
            .method_not_allowed_fallback(api::not_allowed)
            .layer(axum::middleware::from_fn_with_state(
                state.clone(),
                guard::guard,
            ));
        ready(bound);
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let graceful = axum::serve(listener, app).with_graceful_shutdown(async move {
            shutdown_signal().await;
            let _ = stop_tx.send(true);
        });
        // A connection that never finishes its request (or a client that
        // never reads) must not keep a stopped server alive: after the
        // signal, requests in flight get GRACE to finish.
        let deadline = async move {
            let mut rx = stop_rx;
            while !*rx.borrow() {
                if rx.changed().await.is_err() {
                    std::future::pending::<()>().await;
                }
            }
            tokio::time::sleep(GRACE).await;
            tracing::warn!("connections still open {} s after the stop signal; closing them", GRACE.as_secs());
        };
        tokio::select! {
            r = graceful => r.map_err(|e| Error::io("the server stopped on", bound.to_string(), e))?,
            _ = deadline => {},
        }
        // In-flight requests have finished: their writes are whole.
        drop(state.writes.lock());
        Ok(())
    })
}

/// Resolves on SIGINT (Ctrl-C) or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("shutting down: finishing requests in flight");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(addr: &str, token: Option<&str>) -> ServeOptions {
        ServeOptions {
            addr: addr.parse().unwrap(),
            token: token.map(str::to_string),
            timeout: Duration::from_secs(30),
            at: None,
        }
    }

    #[test]
    fn a_public_address_needs_a_token() {
        assert!(check(&opts("127.0.0.1:0", None)).is_ok());
        assert!(check(&opts("[::1]:0", None)).is_ok());
        let err = check(&opts("0.0.0.0:7077", None)).unwrap_err().to_string();
        assert!(err.contains("--token"), "{err}");
        assert!(check(&opts("0.0.0.0:7077", Some(""))).is_err());
        assert!(check(&opts("0.0.0.0:7077", Some("0123456789abcdef0123"))).is_ok());
    }

    #[test]
    fn a_short_token_is_refused() {
        let err = check(&opts("127.0.0.1:0", Some("short")))
            .unwrap_err()
            .to_string();
        assert!(err.contains("16 characters"), "{err}");
    }
}
