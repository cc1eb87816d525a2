//! Recall: a query in, ranked hits out, across the project and user scopes
//! and across records, session chunks and tickets. Returns plain data;
//! `render` turns it into text.
//!
//! Flow: [`sanitize`](mod@sanitize) (text → terms) → [`plan`] (terms weighted and
//! selected per table by document frequency) → `candidates` (bm25 per
//! table, session chunks cut to their best window by `passage`) → `rank`
//! (normalise, fuse, boost, merge, dedupe) → `stale` (newer facts above
//! the older ones they update) → [`Response`].

mod candidates;
mod context;
pub mod dense;
pub mod evidence;
mod filter;
mod hit;
mod passage;
mod period;
pub mod plan;
mod rank;
mod relative;
mod request;
mod salience;
pub mod sanitize;
mod search;
mod stale;
mod stopwords;
mod subject;
pub mod summary;
mod temporal;
pub mod tuning;

pub use dense::{DenseQuery, Rescue};
pub use hit::{Dense, Explain, Hit, HitKind, HitSource, Lift, HL_CLOSE, HL_OPEN};
pub(crate) use passage::Scorer;
pub use request::{Request, Response, Target, Touched, TOGETHER_CAP};
pub use salience::record_hits;
pub use sanitize::{extract_terms, sanitize, Term, TermKind};
pub use search::recall;
pub use stopwords::is_stopword;
pub use tuning::Tuning;
