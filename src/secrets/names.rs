//! Names built from text that may hold a secret: the slugs that become
//! record keys, ids and file names, and ids that come from outside
//! (transcript session and message ids, extractor evidence).
//!
//! A slug lowercases its text and turns punctuation into dashes, which
//! hides a secret from the detector (`ghp_AbC...` becomes `ghp-abc...`),
//! so [`redacted_slug`] redacts the text first and slugs the result, then
//! scans the slug as well in case slugging made something look like a
//! secret. An id is a key of its own (incremental indexing, citations), so
//! [`redact_id`] replaces one that holds a secret by a stable name: the same
//! id always gives the same name, and two ids give two names.

use std::borrow::Cow;

use super::{contains_secret, redact};
use crate::text::slug;

/// Hex digits of the hash that keeps redacted ids apart.
const ID_HASH_CHARS: usize = 12;

/// The slug of `text` (see [`crate::text::slug`]) with every secret
/// redacted before slugging: `Deploy with ghp_...` gives
/// `deploy-with-redacted-github-token`. Empty when nothing alphanumeric is
/// left, or when the slug itself still looks like a secret.
pub fn redacted_slug(text: &str, max: usize) -> String {
    let s = slug(&redact(text).0, max);
    if !contains_secret(&s) {
        return s;
    }
    let again = slug(&redact(&s).0, max);
    if contains_secret(&again) {
        String::new()
    } else {
        again
    }
}

/// `id` unchanged when it holds no secret; otherwise a stable stand-in: the
/// [`redacted_slug`] of the id and a hash of the whole id, as in
/// `session-redacted-github-token-3fa9c0d1e2b4`.
pub fn redact_id(id: &str) -> Cow<'_, str> {
    if !contains_secret(id) {
        return Cow::Borrowed(id);
    }
    let hash = blake3::hash(id.as_bytes()).to_hex();
    let hash = &hash[..ID_HASH_CHARS];
    let name = redacted_slug(id, 48);
    Cow::Owned(if name.is_empty() {
        format!("redacted-{hash}")
    } else {
        format!("{name}-{hash}")
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;

    /// Regression (issue #26: `remember --redact` built its key from the
    /// text before redaction, so the key held the token, lowercased).
    #[test]
    fn r26_slug_is_built_from_redacted_text() {
        let token = github();
        let s = redacted_slug(&format!("Deploy with GH_TOKEN={token} today"), 60);
        assert_eq!(s, "deploy-with-gh-token-redacted-github-token-today");
        assert!(!s.contains(&token.to_lowercase()[4..]), "{s}");
        assert_eq!(redacted_slug("Use pnpm, not npm!", 60), "use-pnpm-not-npm");
    }

    #[test]
    fn r26_a_slug_never_holds_a_secret() {
        for text in [
            format!("token {}", github()),
            format!("{} leaked", aws_key()),
            format!("machine h.example.org login u password {}", mixed(12)),
            format!("mysql -u app -p{} db", mixed(10)),
        ] {
            let s = redacted_slug(&text, 200);
            assert!(!contains_secret(&s), "{s}");
            assert!(s.contains("redacted"), "{s}");
        }
    }

    /// Regression (issue #26: a transcript's session or message id holding
    /// a secret was stored and printed as is).
    #[test]
    fn r26_ids_holding_a_secret_get_a_stable_clean_name() {
        assert!(matches!(redact_id("m-42"), Cow::Borrowed("m-42")));
        let a = format!("session-{}", github());
        let b = format!("session-{}", aws_key());
        let (ra, rb) = (redact_id(&a), redact_id(&b));
        assert!(ra.starts_with("session-redacted-github-token-"), "{ra}");
        assert_eq!(ra, redact_id(&a), "stable");
        assert_ne!(ra, rb, "distinct");
        for r in [&ra, &rb] {
            assert!(!contains_secret(r), "{r}");
            assert!(!r.to_lowercase().contains(&mixed(16).to_lowercase()), "{r}");
        }
    }
}
