//! Recall: a query in, ranked hits out, across the project and user scopes.
//! Returns plain data; `render` turns it into text.

mod hit;
pub mod sanitize;
mod search;
mod stopwords;

pub use hit::{Hit, HitKind, HitSource, HL_CLOSE, HL_OPEN};
pub use sanitize::{extract_terms, sanitize, Term, TermKind};
pub use search::{recall, Request, Response, Target};
