//! A password stated in a sentence: `the staging password is Kq7vTz2mW9xR`,
//! `use the password hunter2hunter2XyZ9 for the admin account`, `password:
//! Kq7vTz2mW9xR for staging` (which `assignments.rs` leaves, as a sentence
//! goes on after it).
//!
//! And a token or key stated in a sentence (`the token is 3f9a…`, `the API
//! key for maps is 9f8e…`, `key=AbCdEf12…`), whose value must be long and
//! random (below).
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

use super::values::{has_digit, has_mixed_case, is_passphrase, value_looks_secret};
use super::{Span, AWS_SECRET_KEY, PASSWORD_IN_TEXT, TOKEN_IN_TEXT};

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

/// Where each value stated after `word` and its `link` starts, with the
/// text from there on: `(start, rest)`. The caller decides where the
/// value ends.
fn stated_values<'t>(
    text: &'t str,
    word: &'t Regex,
    link: &'t Regex,
) -> impl Iterator<Item = (usize, &'t str)> + 't {
    word.find_iter(text).filter_map(move |word| {
        let linked = link.find(&text[word.end()..])?;
        let start = word.end() + linked.end();
        Some((start, &text[start..]))
    })
}

pub(super) fn detect_prose_passwords(text: &str, out: &mut Vec<Span>) {
    for (start, value) in stated_values(text, &WORD, &LINK) {
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
        if !code && ((value_looks_secret(value) && made_up(value)) || is_passphrase(value)) {
            out.push(Span {
                start,
                end: start + value.len(),
                kind: PASSWORD_IN_TEXT,
            });
        }
    }
}

/// `token`, `key`, `API key`, `access token`, ... (and plurals): words a
/// credential is given after in prose. ASCII word boundaries: with
/// Unicode ones the regex leaves its DFA on any non-ASCII text, and
/// `key`, common in code, made indexing 35% more instructions
/// (callgrind, one 2.6 MB transcript); with these, 5%.
static TOKEN_WORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?-u:\b)(?:(?:api|access|auth|bearer|secret|private)[ _-]?)?(?:token|key)s?(?-u:\b)",
    )
    .expect("a valid constant regex")
});

/// Up to three words naming what the token is for (`for maps`, `of the CI
/// bot`), then `is`, `was`, `:` or `=`.
static TOKEN_LINK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"^(?:[ \t]+[A-Za-z][A-Za-z0-9_-]{0,24}){0,3}?(?:[ \t]+(?:is|was)[ \t]+|[ \t]*[:=][ \t]*)["'`]?"#,
    )
    .expect("a valid constant regex")
});

/// A token or key stated in a sentence. `token` and `key` name much else
/// in prose (`the key is the user id`, `a token is a word`), so the value
/// must be long and random as credentials are: at least
/// [`MIN_TOKEN_CHARS`], letters and digits, and mixed case or letters and
/// digits interleaved often (a hex secret); a word, an identifier, a path
/// or a UUID (an id, not a credential) is not one.
pub(super) fn detect_prose_tokens(text: &str, out: &mut Vec<Span>) {
    for (start, value) in stated_values(text, &TOKEN_WORD, &TOKEN_LINK) {
        // Looked at up to one byte past the longest: longer than a
        // credential is data (a blob, a dump).
        let len = value
            .char_indices()
            .find(|&(i, c)| {
                i > MAX_VALUE_BYTES
                    || c.is_whitespace()
                    || matches!(c, '"' | '\'' | '`' | ',' | ';' | ')')
            })
            .map_or(value.len(), |(i, _)| i);
        if len > MAX_VALUE_BYTES {
            continue;
        }
        let value = &value[..len];
        let value = value.trim_end_matches(['.', ':', '?', '!']);
        if random_enough(value) && value_looks_secret(value) {
            out.push(Span {
                start,
                end: start + value.len(),
                kind: TOKEN_IN_TEXT,
            });
        }
    }
}

/// Shortest token [`detect_prose_tokens`] takes.
const MIN_TOKEN_CHARS: usize = 20;

/// Long, of a credential's alphabet, with letters and digits, and mixed
/// case or at least six changes between letters and digits; not a UUID.
fn random_enough(value: &str) -> bool {
    let alphabet = value
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'+' | b'/' | b'='));
    let changes = value
        .as_bytes()
        .windows(2)
        .filter(|w| w[0].is_ascii_digit() != w[1].is_ascii_digit())
        .count();
    let uuid = value.len() == 36 && value.split('-').map(str::len).eq([8, 4, 4, 4, 12]);
    value.len() >= MIN_TOKEN_CHARS
        && alphabet
        && !uuid
        && has_digit(value)
        && value.bytes().any(|b| b.is_ascii_alphabetic())
        && (has_mixed_case(value) || changes >= 6)
}

/// `secret key`, `secret access key` or `secret`, before an AWS secret key
/// stated in a sentence (`AWS secret key: …`, `… and secret …`).
static SECRET_WORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\bsecret(?:[ _-]+access)?(?:[ _-]+key)?\b").expect("a valid constant regex")
});

/// An AWS access key id, after which its secret key is often given.
static ACCESS_KEY_ID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?-u:\b)(?:AKIA|ASIA)[A-Z0-9]{16}(?-u:\b)").expect("a valid constant regex")
});

/// How far after an access key id its secret key is looked for.
const PAIRED_WITHIN: usize = 120;

/// An AWS secret access key stated in a sentence rather than assigned
/// (`assignments.rs` has `aws_secret_access_key = …`): the 40 characters
/// of one after `secret key`, `secret access key` or `secret`, or within a
/// few words after an access key id (`deploy with AKIA… and wJalr…`).
///
/// Precision policy: exactly 40 characters of AWS's alphabet (letters,
/// digits, `/`, `+`) standing alone, with a digit and mixed case, as
/// every AWS secret key has and words, hashes and paths of that length
/// rarely all do.
pub(super) fn detect_prose_aws_secrets(text: &str, out: &mut Vec<Span>) {
    for (start, _) in stated_values(text, &SECRET_WORD, &LINK) {
        if let Some(end) = aws_secret_at(text, start) {
            out.push(Span {
                start,
                end,
                kind: AWS_SECRET_KEY,
            });
        }
    }
    for id in ACCESS_KEY_ID.find_iter(text) {
        let window = id.end()..(id.end() + PAIRED_WITHIN).min(text.len());
        let mut at = window.start;
        while at < window.end {
            if !text.is_char_boundary(at) {
                at += 1;
                continue;
            }
            let before = text.as_bytes().get(at.wrapping_sub(1)).copied();
            if !before.is_some_and(is_aws_secret_byte) {
                if let Some(end) = aws_secret_at(text, at) {
                    // Found after `secret` too, it is one secret.
                    if !out.iter().any(|s| s.start == at && s.end == end) {
                        out.push(Span {
                            start: at,
                            end,
                            kind: AWS_SECRET_KEY,
                        });
                    }
                    break;
                }
            }
            at += 1;
        }
    }
}

fn is_aws_secret_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'/' || b == b'+'
}

/// The end of an AWS secret key starting at `start`, if one does.
fn aws_secret_at(text: &str, start: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let len = bytes[start..]
        .iter()
        .take_while(|b| is_aws_secret_byte(**b))
        .count();
    let value = &text[start..start + len];
    (len == 40 && has_digit(value) && has_mixed_case(value)).then_some(start + len)
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

    /// What `detect` finds in `text`.
    fn found_by(detect: fn(&str, &mut Vec<Span>), text: &str) -> Vec<&str> {
        let mut spans = Vec::new();
        detect(text, &mut spans);
        spans.iter().map(|s| &text[s.start..s.end]).collect()
    }

    fn found(text: &str) -> Vec<&str> {
        found_by(detect_prose_passwords, text)
    }

    fn aws(text: &str) -> Vec<&str> {
        found_by(detect_prose_aws_secrets, text)
    }

    /// Regression (review, stop 59): an AWS secret key given in a sentence
    /// (`AWS secret key: …`, or after its access key id) was stored and
    /// shown as it was; only assignments were found.
    /// Regression (review, stop 62): a passphrase stated in a sentence.
    #[test]
    fn r_a_passphrase_stated_in_a_sentence_is_a_secret() {
        let text = "The staging root password is orange-tractor-velvet-lamp.";
        crate::secrets::test_support::assert_single(
            text,
            PASSWORD_IN_TEXT,
            "orange-tractor-velvet-lamp",
        );
        crate::secrets::test_support::assert_clean("The password is read-only for guests.");
    }

    #[test]
    fn r_an_aws_secret_key_stated_in_a_sentence_is_found() {
        let key = "Kq7vTz2mW9xYpL3nR8sB4dF6gH1jK0lQ5wE2rT7b";
        let example = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
        for text in [
            format!("AWS secret key: {key} probe"),
            format!("the secret access key is {key}."),
            format!("please deploy with AKIAIOSFODNN7EXAMPLE and secret {example}"),
            format!("creds AKIAQWERTYUIOPASDFGH / {key}"),
        ] {
            let want = if text.contains(example) { example } else { key };
            assert_eq!(aws(&text), [want], "{text}");
        }
        // Forty characters that are not one: a hash (no mixed case), a
        // path, a longer token, and words after "secret".
        for text in [
            "secret key: 3f786850e387550fdab836ed7e6dc881de23001b".to_string(),
            "the secret is in src/secrets/prose.rs and friends".to_string(),
            format!("secret {key}X"),
            "AKIAIOSFODNN7EXAMPLE is the documented example id".to_string(),
        ] {
            assert!(aws(&text).is_empty(), "{text}");
        }
    }

    fn tokens(text: &str) -> Vec<&str> {
        found_by(detect_prose_tokens, text)
    }

    /// Regression (review, stop 60): a token or key given in a sentence was
    /// stored by `remember`: only assignments of one and known prefixes
    /// (`ghp_`, `sk-`) were found.
    #[test]
    fn r_a_token_stated_in_a_sentence_is_found() {
        let hex = "3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a";
        for (text, want) in [
            (format!("The token is {hex} for the CI"), hex),
            (
                "The API key for maps is 9f8e7d6c5b4a39281706f5e4d3c2b1a0".into(),
                "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
            ),
            (
                "key=AbCdEf123456GhIjKl7890MnOpQr".into(),
                "AbCdEf123456GhIjKl7890MnOpQr",
            ),
            (
                "our access token: `xK9mP2qR7sT4vW8yZ3aB6cD1`.".into(),
                "xK9mP2qR7sT4vW8yZ3aB6cD1",
            ),
        ] {
            assert_eq!(tokens(&text), [want], "{text}");
        }
    }

    /// Prose about tokens and keys names ids, words, code and hashes of
    /// their content; none is a credential.
    #[test]
    fn prose_about_tokens_is_not_a_token() {
        for text in [
            "the key is the user id",
            "The session key is 7f9c2e1a-4b8d-4c3e-9a1f-0d2b3c4d5e6f here",
            "the token is stored in ~/.config/gh/hosts.yml",
            "the cache key is computed from the lockfile",
            "the primary key is user_id_2024",
            "a token is a word, and the key is `HashMap<String, Vec<u8>>`",
            "key: src/secrets/prose.rs",
            "the key is 20240101",
            "the token count is 12345678901234567890",
            "key is deadbeefdeadbeefdeadbeef",
        ] {
            assert!(tokens(text).is_empty(), "{text}: {:?}", tokens(text));
        }
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
