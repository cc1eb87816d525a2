//! Extract: distil finished sessions into a few durable records.
//!
//! sessions → extractor ([`rules`] built in, an external [`command`], or a
//! launcher's own model through its non-interactive mode, [`model`]) →
//! candidate facts → [`guard`] (size, confidence, secrets, near-duplicates,
//! the 5-fact cap) → records with `source: auto` and their provenance.
//! [`run`] owns selection, leases and per-session state; [`summary`] the
//! `MEMORY.md`-style index of what was kept.

pub mod command;
pub mod guard;
pub mod model;
pub mod rules;
pub mod run;
pub mod summary;
