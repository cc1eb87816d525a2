//! What a front end asks a record write to be: a record to create or
//! update by key ([`NewRecord`]) or a partial update ([`Patch`]), the checks
//! of their fields, and the rule that a generated record's text is
//! read-only where the caller says so (the REST API), with the conflict
//! message a refused write gets. `records.rs` carries them out.

use jiff::Timestamp;

use crate::error::{Error, Result};
use crate::index::SecretPolicy;
use crate::records::{Category, Record, Source, Status};

/// A record to create, or to update when its key exists (upsert).
#[derive(Debug, Clone)]
pub struct NewRecord {
    pub key: String,
    pub text: String,
    /// `None`: an update keeps the record's category; a new record gets
    /// the one the builtin rules classify its text as.
    pub category: Option<Category>,
    pub pinned: Option<bool>,
    pub importance: Option<u8>,
    pub keywords: Option<Vec<String>>,
    /// Who writes it: `manual` (a person) or `agent`. `auto` is extraction's.
    pub source: Source,
    pub secrets: SecretPolicy,
    /// Refuse to change the text of a record a person did not write
    /// (`auto`, `agent`): the REST API's rule. The CLI lets a person take
    /// such a record over (it becomes `manual`).
    pub keep_generated: bool,
}

#[cfg(test)]
impl NewRecord {
    /// A decision a person writes, secrets refused: what most tests store.
    pub(crate) fn decision(key: &str, text: &str) -> NewRecord {
        NewRecord {
            key: key.into(),
            text: text.into(),
            category: Some(Category::Decisions),
            pinned: None,
            importance: None,
            keywords: None,
            source: Source::Manual,
            secrets: SecretPolicy::Refuse,
            keep_generated: false,
        }
    }
}

/// A partial update; `None` leaves a field as it is.
#[derive(Debug, Clone)]
pub struct Patch {
    pub text: Option<String>,
    pub category: Option<Category>,
    pub pinned: Option<bool>,
    pub importance: Option<u8>,
    pub keywords: Option<Vec<String>>,
    pub status: Option<Status>,
    pub secrets: SecretPolicy,
    /// See [`NewRecord::keep_generated`].
    pub keep_generated: bool,
}

impl Default for Patch {
    fn default() -> Self {
        Patch {
            text: None,
            category: None,
            pinned: None,
            importance: None,
            keywords: None,
            status: None,
            secrets: SecretPolicy::Refuse,
            keep_generated: false,
        }
    }
}

impl Patch {
    /// Apply the fields to `r` at `now`.
    /// Change `r` as asked; returns whether anything changed (`updated`
    /// moves only then: an empty patch changes nothing).
    pub(super) fn apply(self, r: &mut Record, now: Timestamp) -> Result<bool> {
        let before = r.clone();
        if let Some(t) = self.text {
            if t.trim() != r.body {
                refuse_generated(r, self.keep_generated)?;
                r.body = Record::clean_body(&t);
                r.mark_edited_by_hand();
            }
        }
        if let Some(c) = self.category {
            r.meta.category = c;
        }
        if let Some(p) = self.pinned {
            r.meta.pinned = p;
        }
        if let Some(i) = self.importance {
            check_importance(i)?;
            r.meta.importance = i;
        }
        if let Some(k) = self.keywords {
            r.meta.keywords = clean_keywords(k);
        }
        if let Some(s) = self.status {
            r.meta.status = s;
        }
        let changed = *r != before;
        if changed {
            r.meta.updated = now;
        }
        Ok(changed)
    }
}

pub(super) fn check_importance(i: u8) -> Result<()> {
    if i > 100 {
        return Err(Error::invalid(format!(
            "importance {i} is out of range 0-100"
        )));
    }
    Ok(())
}

pub(super) fn clean_keywords(k: Vec<String>) -> Vec<String> {
    k.into_iter()
        .map(|k| k.trim().to_string())
        .filter(|k| !k.is_empty())
        .collect()
}

/// Why a write of `source` may not change `existing`'s text.
pub(super) fn conflict(existing: &Record, source: Source) -> Error {
    match existing.meta.source {
        Source::Manual => Error::Conflict(format!(
            "record '{}' was written by a person; an {} write does not change its text: use another key",
            existing.meta.key,
            source.as_str()
        )),
        other => Error::Conflict(format!(
            "record '{}' is {}-captured and its text is read-only here; pin, unpin or delete it, or write a manual record under another key",
            existing.meta.key,
            other.as_str()
        )),
    }
}

/// A generated record's text is read-only where `keep` says so.
fn refuse_generated(r: &Record, keep: bool) -> Result<()> {
    if keep && r.meta.source != Source::Manual {
        return Err(Error::Conflict(format!(
            "record '{}' is {}-captured and its text is read-only here; pin, unpin or delete it, or write a manual record under another key",
            r.meta.key,
            r.meta.source.as_str()
        )));
    }
    Ok(())
}
