//! Reindex, doctor, project identity and recall across scopes, end to end.
//!
//! One file per concern: `reindex` (record files and the index kept in
//! step), `repair` (damaged indexes, stale statistics, doctor), `sources`
//! (what `recall index` reads, refuses and reports), `unwritable` (a
//! read-only home, a refused write, a full disk), `projects` (project
//! identity and scopes) and `queries`.

mod projects;
mod queries;
mod reindex;
mod repair;
mod sources;
mod unwritable;
