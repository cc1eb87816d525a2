//! `remember`: an agent stores one fact mid-session (the CLI's
//! `recall remember` and the MCP tool of the same name).
//!
//! Upsert by key, with the same validation and secret refusal as every
//! write. Without a category the builtin extraction rules classify the
//! text, falling back to `decisions`; without a key it is `agent:<slug>`
//! of the text, slugged after its secrets are redacted (a given key that
//! holds a secret is refused, or redacted with `--redact`). Records get
//! `source: agent`. An agent never overwrites
//! what a person wrote: a key held by a manual record is refused.

use jiff::Timestamp;

use crate::error::{Error, Result};
use crate::extract::guard::MAX_SLUG_CHARS;
use crate::index::{screen_key, Located, RecordStore, SecretPolicy};
use crate::records::{Category, Source};
use crate::store::Scope;

/// What to remember.
#[derive(Debug, Clone)]
pub struct Fact<'a> {
    pub text: &'a str,
    pub category: Option<Category>,
    pub key: Option<&'a str>,
    pub importance: Option<u8>,
    /// Refuse a secret, or store it redacted.
    pub secrets: SecretPolicy,
}

/// The key a fact gets without one: `agent:<slug of its text>`, the text's
/// secrets redacted before it is slugged.
pub fn agent_key(text: &str) -> String {
    let s = crate::secrets::redacted_slug(text, MAX_SLUG_CHARS);
    if s.is_empty() {
        "agent:untitled".into()
    } else {
        format!("agent:{s}")
    }
}

/// The category a fact gets without one, and the scope the rules suggest
/// (a preference is the user's; everything else the project's).
pub fn classify(text: &str) -> (Category, Scope) {
    crate::extract::rules::classify(text).unwrap_or((Category::Decisions, Scope::Project))
}

/// Store `fact` in `store` (upsert by key). Returns where it lives and
/// whether it was created.
pub fn remember(store: &mut RecordStore, fact: &Fact, now: Timestamp) -> Result<(Located, bool)> {
    let key = match fact.key {
        Some(k) => screen_key(k, fact.secrets)?.into_owned(),
        None => agent_key(fact.text),
    };
    let existing = store.find(&key)?;
    // An update without a category keeps the record's own (issue 26 item
    // 18); only a new record is classified.
    let category = fact
        .category
        .or_else(|| existing.is_none().then(|| classify(fact.text).0));
    if let Some(found) = existing {
        if found.record.meta.source == Source::Manual && found.record.meta.key == key {
            return Err(Error::invalid(format!(
                "the key '{key}' belongs to a record a person wrote ({}); an agent does not overwrite it: remember this under another key",
                found.path.display()
            )));
        }
    }
    store.upsert(
        &key,
        category,
        fact.text,
        |r| {
            r.meta.source = Source::Agent;
            if let Some(i) = fact.importance {
                r.meta.importance = i;
            }
        },
        fact.secrets,
        now,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification_and_keys() {
        assert_eq!(
            classify("I prefer short answers without emojis."),
            (Category::Preferences, Scope::User)
        );
        assert_eq!(classify("the sky is blue").0, Category::Decisions);
        assert_eq!(agent_key("Use pnpm, not npm!"), "agent:use-pnpm-not-npm");
        assert_eq!(agent_key("???"), "agent:untitled");
    }
}
