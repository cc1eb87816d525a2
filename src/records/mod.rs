//! Records: durable facts kept as Markdown files with YAML frontmatter. The
//! files are the source of truth; the FTS5 index is derived from them.

mod file;
mod model;
mod validate;

pub use file::{
    broken_claimant, claims, parse_record, parse_record_at, parse_record_file, record_path,
    render_record, Place,
};
pub use model::{Category, Frontmatter, Origin, Record, Source, Status, Temporal};
pub(crate) use validate::is_hidden_char;
pub use validate::{validate, Limits, MAX_KEY_CHARS};
