//! The integration tests, one binary: each module drives the real `recall`
//! binary (or, for `real_transcripts`, the parsers) for one area, with the
//! shared setup in `common`. One binary links tokio, axum and rmcp once,
//! where a binary per file linked them sixteen times.
//!
//! `cargo test --test it` runs them all; `cargo test --test it hooks_cli::`
//! one area.

mod common;

mod cli_docs;
mod compat;
mod demo_cli;
mod extract_cli;
mod extract_real;
mod hooks_cli;
mod hybrid_cli;
mod index_cli;
mod index_safety;
mod index_sessions;
mod launchers;
mod mcp_cli;
mod model_cli;
mod real_transcripts;
mod recall_cli;
mod records_cli;
mod release;
mod secrets_cli;
mod serve_browser;
mod serve_http;
mod sync_cli;
