//! recall: a full-text recall engine that gives AI coding agents a memory.
//!
//! Data flows through these modules (see `ARCHITECTURE.md`):
//! - [`records`]: Markdown record files, the source of truth;
//! - [`ingest`]: transcript and ticket parsers and the chunker;
//! - [`index`]: the single FTS5 writer;
//! - [`store`]: home, scopes, projects, the SQLite pool and migrations;
//! - [`recall`]: query, rank and merge;
//! - [`render`]: snippets, prompt and JSON output;
//! - [`semantic`]: embedding models for hybrid recall (opt-in);
//! - [`memory`]: the façade every front end (CLI, hooks, REST, MCP) calls;
//! - [`serve`]: the REST API and web panel (`recall serve`);
//! - [`mcp`]: the Model Context Protocol server on stdio (`recall mcp`);
//! - `cli`: the command line (the only module that knows clap).

pub mod cli;
pub mod config;
pub mod dedupe;
pub mod error;
pub mod extract;
pub mod index;
pub mod ingest;
pub mod mcp;
pub mod memory;
pub mod recall;
pub mod records;
pub mod render;
pub mod secrets;
pub mod semantic;
pub mod serve;
pub mod skills;
pub mod store;
pub mod sync;
pub mod text;
pub mod when;

pub use error::{Error, Result};
pub use memory::Memory;
