//! Record commands end to end: the real binary on a temporary home.
//!
//! One file per concern: `commands` (add, get, update, list, delete,
//! edit, remember), `refusals` (secrets, bad input, the body cap), `flags`
//! (where global and query flags may go), `home` (the home folder: unwritable,
//! a file, private modes, throwaway), `store` (the index under the records:
//! repair, deletes, readers beside a writer) and `repository` (records kept
//! in the repository, skills written into it).

mod commands;
mod flags;
mod home;
mod refusals;
mod repository;
mod store;
