//! Ingest: turning transcripts and tickets into messages and chunks, ready
//! for the index writer. Parsers never touch SQL or the index.
//!
//! - format parsers: [`claude_code`], [`codex`], [`gemini`], [`neutral`], [`chatlog`],
//!   [`ticket`]; the skeleton the line-oriented transcript parsers share
//!   (`transcript`, over `lines`, `lenient` and `values`)
//! - [`detect`](mod@detect): choosing a parser from a file's content
//! - [`noise`] and [`chunk`]: tool-noise reduction and chunking
//! - [`prepare`](mod@prepare): one source from bytes to redacted chunks, incrementally;
//!   an append-only transcript in bounded parts (`stream`, `segment`)
//! - [`discover`]: finding sources on disk

pub mod chatlog;
pub mod chunk;
pub mod claude_code;
pub mod codex;
pub mod commits;
pub mod detect;
pub mod discover;
pub mod gemini;
pub(crate) mod lenient;
pub(crate) mod lines;
pub mod model;
pub mod neutral;
pub mod noise;
mod nul;
pub mod prepare;
pub mod recalled;
mod segment;
mod stream;
pub mod surrogate;
pub mod ticket;
pub(crate) mod transcript;
pub(crate) mod values;

pub use detect::{detect, Format, Kind};
pub use prepare::{
    current_parser_version, parse_file, prepare, source_key, Action, ChunkOut, Continuation,
    IngestOptions, Job, Part, Prefix, Prepared, SessionOut, SourceState, TicketOut,
};
pub use segment::SEGMENT_BYTES;
