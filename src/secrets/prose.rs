//! A password stated in a sentence: `the staging password is Kq7vTz2mW9xR`,
//! `use the password hunter2hunter2XyZ9 for the admin account`, `password:
//! Kq7vTz2mW9xR for staging` (which `assignments.rs` leaves, as a sentence
//! goes on after it).
//!
//! Precision policy: the word before the value is `password`, `passphrase`,
//! `passcode` or `passwd` (not `token` or `secret`, which prose uses for
//! much else), then at most a linking word (`is`, `was`, `to`, `set to`) or
//! `:`/`=`; the value must look like a credential as an assigned one must
//! ([`value_looks_secret`]: a placeholder, a word, a path or code is not)
//! and, since prose names hashes and schemes after the word
//! (`sha256-hashed`, `bcrypt2b`), be visibly made up: mixed case, a symbol,
//! or letters and digits interleaved (`p4ssw0rd`).

use std::sync::LazyLock;

use regex::Regex;

use super::values::{has_digit, has_mixed_case, value_looks_secret};
use super::{Span, PASSWORD_IN_TEXT};

/// The word a stated password follows; its literals anchor the search.
static WORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\bpass(?:word|phrase|code|wd)s?\b").expect("a valid constant regex")
});

/// The linking word or sign between the word and the value, with the
/// blanks around it: ` is `, `: `, ` set to `, or only a blank.
static LINK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^(?:[ \t]+(?:is|was|to|set[ \t]+to)[ \t]+|[ \t]*[:=][ \t]*|[ \t]+)["'`]?"#)
        .expect("a valid constant regex")
});

/// Longest value looked at.
const MAX_VALUE_BYTES: usize = 256;

pub(super) fn detect_prose_passwords(text: &str, out: &mut Vec<Span>) {
    for word in WORD.find_iter(text) {
        let rest = &text[word.end()..];
        let Some(link) = LINK.find(rest) else {
            continue;
        };
        let start = word.end() + link.end();
        let value = &text[start..];
        let len = value
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`'))
            .unwrap_or(value.len())
            .min(MAX_VALUE_BYTES);
        let Some(value) = value.get(..len) else {
            continue;
        };
        // The end of the sentence, or of a clause, is not the password's.
        let value = value.trim_end_matches(['.', ',', ';', ':', ')', '?']);
        // Brackets are code (`password = hash_v2(pw)`), not a password.
        let code = value.contains(['(', ')', '[', ']', '{', '}']);
        if !code && value_looks_secret(value) && made_up(value) {
            out.push(Span {
                start,
                end: start + value.len(),
                kind: PASSWORD_IN_TEXT,
            });
        }
    }
}

/// Is `value` visibly made up, not a word with a number in it: mixed case,
/// a symbol, or letters and digits interleaved (at least three changes
/// between the two, as in `p4ssw0rd`)?
fn made_up(value: &str) -> bool {
    let symbol = value
        .chars()
        .any(|c| !c.is_alphanumeric() && !matches!(c, '-' | '_' | '.'));
    let changes = value
        .as_bytes()
        .windows(2)
        .filter(|w| w[0].is_ascii_digit() != w[1].is_ascii_digit())
        .count();
    has_digit(value) && (has_mixed_case(value) || symbol || changes >= 3)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Vec<&str> {
        let mut spans = Vec::new();
        detect_prose_passwords(text, &mut spans);
        spans.iter().map(|s| &text[s.start..s.end]).collect()
    }

    /// Regression: a password in a sentence was stored by `remember`,
    /// `record add` and extraction, in the key and the file name too.
    #[test]
    fn r_a_password_stated_in_a_sentence_is_found() {
        for (text, want) in [
            ("The staging db password is Kq7vTz2mW9xR", "Kq7vTz2mW9xR"),
            (
                "We decided to use the password hunter2hunter2XyZ9 for the staging database.",
                "hunter2hunter2XyZ9",
            ),
            ("password: Kq7vTz2mW9xR for staging", "Kq7vTz2mW9xR"),
            ("Passphrase set to `Summer2024!` on the box.", "Summer2024!"),
            ("the wifi passcode was p4ssw0rd9, sadly", "p4ssw0rd9"),
        ] {
            assert_eq!(found(text), [want], "{text}");
        }
    }

    /// Prose about passwords names hashes, fields, placeholders and code
    /// after the word; none of them is one.
    #[test]
    fn prose_about_passwords_is_not_a_password() {
        for text in [
            "The password is sha256-hashed before it is stored.",
            "Passwords are hashed with bcrypt2b.",
            "password field (max 64 chars)",
            "the password is changeme123",
            "Set the password to ${DB_PASSWORD} in CI.",
            "password reset flow v2",
            "password: read from os.environ['DB_PASS']",
            "the password is stored in the vault",
            "use password_hash() from PHP 5.5",
            "password = hash_v2(pw)",
            "passwords older than 90 days expire",
        ] {
            assert!(found(text).is_empty(), "{text}: {:?}", found(text));
        }
    }
}
