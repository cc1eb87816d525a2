//! Validation of a record before it is written or indexed.

use super::model::Record;
use crate::error::{Error, Result};

/// The longest key, in characters.
pub const MAX_KEY_CHARS: usize = 255;

/// Configurable limits on records.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The longest body, in characters (default 2,000).
    pub max_body_chars: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_body_chars: 2000,
        }
    }
}

/// Check every field a file or a flag could get wrong. Returns the name of
/// the offending field with the message, so file errors can point at a line.
pub fn validate(r: &Record, limits: &Limits) -> Result<(), (&'static str, Error)> {
    let m = &r.meta;
    let key_chars = m.key.chars().count();
    if m.key.trim().is_empty() {
        return Err((
            "key",
            Error::invalid("the key is empty: give a key of 1 to 255 characters"),
        ));
    }
    if key_chars > MAX_KEY_CHARS {
        return Err((
            "key",
            Error::invalid(format!(
                "the key is {key_chars} characters long; the limit is {MAX_KEY_CHARS}: shorten it"
            )),
        ));
    }
    if m.key.contains(['\n', '\r']) {
        return Err(("key", Error::invalid("the key contains a line break")));
    }
    if let Some(c) = m.key.chars().find(|c| is_hidden_char(*c)) {
        return Err((
            "key",
            Error::invalid(format!(
                "the key contains the invisible character U+{:04X}: keys are shown in lists and prompts, so control and text-direction characters are not allowed; retype the key",
                u32::from(c)
            )),
        ));
    }
    if m.id.is_empty() || m.id.contains(['/', '\\', '\0']) || m.id.starts_with('.') {
        return Err((
            "id",
            Error::invalid(format!(
                "invalid id '{}': it names the file, so it must be non-empty and contain no slashes",
                m.id
            )),
        ));
    }
    for (field, words) in [("keywords", &m.keywords), ("aliases", &m.aliases)] {
        check_words(field, words).map_err(|e| (field, e))?;
    }
    if m.importance > 100 {
        return Err((
            "importance",
            Error::invalid(format!("importance {} is out of range 0-100", m.importance)),
        ));
    }
    if !(0.0..=1.0).contains(&m.confidence) {
        return Err((
            "confidence",
            Error::invalid(format!("confidence {} is out of range 0-1", m.confidence)),
        ));
    }
    validate_body(&r.body, limits).map_err(|e| ("body", e))
}

/// Characters that change how text around them is shown, or show as
/// nothing: controls (tab included) and the Unicode bidirectional
/// overrides, embeddings and isolates (a right-to-left override makes a key
/// read backwards), zero-width characters and the byte-order mark.
pub(crate) fn is_hidden_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}'
        )
}

/// The most keywords (and the most aliases) a record has.
pub const MAX_WORDS: usize = 32;
/// The longest keyword or alias, in characters.
pub const MAX_WORD_CHARS: usize = 100;

/// Keywords and aliases are short words that help a record be found: a
/// few, each on one line. Without a bound they were a way around the
/// body's (5,000 keywords made a 44 KB file).
fn check_words(field: &str, words: &[String]) -> Result<()> {
    if words.len() > MAX_WORDS {
        return Err(Error::invalid(format!(
            "{} {field}; the limit is {MAX_WORDS}: keep the few that help the record be found",
            words.len()
        )));
    }
    for w in words {
        let n = w.chars().count();
        if n > MAX_WORD_CHARS {
            return Err(Error::invalid(format!(
                "each of the {field} is at most {MAX_WORD_CHARS} characters; '{}…' is {n}",
                w.chars().take(40).collect::<String>()
            )));
        }
        if let Some(c) = w.chars().find(|c| c.is_control() || is_hidden_char(*c)) {
            return Err(Error::invalid(format!(
                "the {field} '{}' contains U+{:04X}: each is one line of visible text",
                w.escape_debug(),
                u32::from(c)
            )));
        }
    }
    Ok(())
}

/// The body must be non-empty and short.
pub(crate) fn validate_body(body: &str, limits: &Limits) -> Result<()> {
    if body.trim().is_empty() {
        return Err(Error::invalid(
            "the record text is empty: a record needs a fact as its body",
        ));
    }
    if let Some(c) = body
        .chars()
        .find(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
    {
        return Err(Error::invalid(format!(
            "the record text contains the control character U+{:04X}: record files are text that people read and agents are given, so control characters other than tabs and line breaks are not allowed; remove it",
            u32::from(c)
        )));
    }
    if let Some(line) = super::file::conflict_marker(body) {
        return Err(Error::invalid(format!(
            "line {line} of the record text is a git merge conflict marker (<<<<<<< … >>>>>>>), which recall reads as an unresolved merge and would skip: indent the marker lines, or describe them in words"
        )));
    }
    let n = body.chars().count();
    if n > limits.max_body_chars {
        return Err(Error::invalid(format!(
            "the record text is {n} characters long; the limit is {} (records are short facts: split it, or raise `max_body_chars` under `[records]` in config.toml)",
            limits.max_body_chars
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{Category, Record, Source};
    use crate::store::Scope;

    fn with_key(key: &str) -> Record {
        Record::new(
            key,
            Category::Decisions,
            Scope::Project,
            Source::Manual,
            "a fact",
            jiff::Timestamp::UNIX_EPOCH,
        )
    }

    /// Regression (issue probe: keys accepted control and right-to-left
    /// override characters).
    #[test]
    fn r_keys_with_control_or_direction_characters_are_refused() {
        for key in [
            "deploy\u{202E}gnp.exe",
            "a\u{0007}bell",
            "tab\there",
            "zero\u{200B}width",
        ] {
            let (field, e) = validate(&with_key(key), &Limits::default()).unwrap_err();
            assert_eq!(field, "key");
            assert!(e.to_string().contains("invisible character U+"), "{e}");
        }
        for key in ["deploy window", "déploiement", "部署", "use sqlx (v0.8)"] {
            assert!(
                validate(&with_key(key), &Limits::default()).is_ok(),
                "{key}"
            );
        }
    }
}
