//! The value heuristics the password rules share: is this a credential, or
//! a placeholder, a word, a number, a path, a URL or code?
//!
//! Precision policy: a value reported as a password has 6 characters to
//! 1 KiB, no whitespace, a letter plus a digit or symbol, and is not a
//! placeholder, not code (`read_password()`, `os.environ[...]`,
//! `process.env.X`, `String`, `snake_case`/`SCREAMING_CASE` identifiers,
//! `Type,` annotations, number literals such as `2048u32`), and not a path
//! or URL. Hence letters-only passwords such as `correcthorsebattery` and
//! digits-only ones are deliberately not reported.
//!
//! A placeholder is a value made of placeholder words: a template or
//! reference (`${X}`, `$X`, `<your-password>`, `{{ x }}`), a mask (`***`,
//! `...`, `xxxx`), a well-known default (`changeme`, `postgres`), a value
//! whose letters are placeholder words and digits alone (`your_token_here`,
//! `test1234`, `change_me_123`, `Password-2024`), or one whose first or
//! last part is a fixture's word (`fake-4f9a2`). A random string that
//! merely holds one of those words (`Kq7vTokenZ2mW9`, `Zq81sampleR7tY3u`,
//! `9fTestk2Lm...`, `Passw0rd!2024`) is not a placeholder (issue #37).

/// Shortest assigned value reported as a password.
const MIN_VALUE_CHARS: usize = 6;

/// Values that are placeholders or well-known defaults, compared lowercase
/// with surrounding punctuation trimmed (space-separated).
const PLACEHOLDER_VALUES: &str = "admin changeit default empty false guest hidden letmein \
    masked mysql nil none null optional postgres redis required root string true undefined unset \
    user username";

/// Words a placeholder is made of, lowercase (space-separated): a value
/// whose letters split into these words (digits and punctuation aside) is
/// a placeholder.
const PLACEHOLDER_WORDS: &str = "your yours my example examples sample samples placeholder \
    changeme redacted dummy fake test tests testing pass passwd password passwords passphrase \
    pwd secret secrets token tokens key keys api here value x xxx";

/// Words that mark a value as a fixture when its first or last part is
/// made of them (`fake-4f9a2`): fewer than [`PLACEHOLDER_WORDS`], since
/// `token-...` or `api-...` may well start a real credential.
const MARKER_WORDS: &str = "your example examples sample samples placeholder changeme redacted \
    dummy fake test tests testing x xxx";

/// Fragments of templates, variable references and masks, matched anywhere
/// in the value (space-separated).
const TEMPLATE_PARTS: &str = "*** ... ${ {{ }} %( $( <";

/// Leading characters of variable references, templates, code and YAML tags.
const PLACEHOLDER_STARTS: [char; 9] = ['$', '%', '<', '{', '&', '*', '!', '#', '@'];

/// Placeholder, template, mask, default or test value (`${X}`, `changeme`,
/// `xxx`, `postgres`, `fake-123`)? See the module comment.
pub(super) fn is_placeholder(v: &str) -> bool {
    let lower = v.to_ascii_lowercase();
    let word = lower.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    v.starts_with(PLACEHOLDER_STARTS)
        || listed(PLACEHOLDER_VALUES, word)
        || TEMPLATE_PARTS
            .split_ascii_whitespace()
            .any(|part| lower.contains(part))
        || distinct_chars(v) < 3
        || made_of(&alphanumerics(&lower), PLACEHOLDER_WORDS, 1)
        || marked(&lower)
}

/// The letters and digits of `v`, without the punctuation between them.
fn alphanumerics(v: &str) -> String {
    v.chars().filter(char::is_ascii_alphanumeric).collect()
}

/// Does the value start or end with a part made of [`MARKER_WORDS`]
/// (`fake-4f9a2`, `test_8c1e`, `9f2c-example`)? Only the first and last
/// parts count: a long value made of many parts (a path, a list of
/// tokens) will hold a short word such as `api` somewhere.
fn marked(lower: &str) -> bool {
    let mut parts = lower.split(|c: char| !c.is_ascii_alphanumeric());
    let first = parts.next().unwrap_or("");
    let last = parts.next_back().unwrap_or("");
    [first, last]
        .iter()
        .any(|part| made_of(part, MARKER_WORDS, 3))
}

/// Do the letters of `text` (lowercase), at least `min_letters` of them,
/// split into `words` (space-separated), with nothing else but digits
/// between them (`yourtokenhere`, `test1234`)?
fn made_of(text: &str, words: &str, min_letters: usize) -> bool {
    let letters = text.bytes().filter(u8::is_ascii_alphabetic).count();
    letters >= min_letters
        && text.bytes().all(|b| b.is_ascii_alphanumeric())
        && text
            .split(|c: char| c.is_ascii_digit())
            .all(|run| run.is_empty() || splits_into(run, words))
}

/// Can `run` be cut into `words` (`testpassword`: `test` and `password`)?
/// A word break by dynamic programming: `ok[i]` says whether the first
/// `i` bytes can.
fn splits_into(run: &str, words: &str) -> bool {
    let mut ok = vec![false; run.len() + 1];
    ok[0] = true;
    for end in 1..=run.len() {
        ok[end] = words.split_ascii_whitespace().any(|w| {
            end >= w.len()
                && ok[end - w.len()]
                && &run.as_bytes()[end - w.len()..end] == w.as_bytes()
        });
    }
    ok[run.len()]
}

/// Could this assigned value be a credential rather than a placeholder, a
/// word, a number, a path or a URL?
pub(super) fn value_looks_secret(v: &str) -> bool {
    // Cheap byte-level checks first: most candidates in code fail them.
    v.len() >= MIN_VALUE_CHARS
        && (has_digit(v) || v.chars().any(is_symbol))
        && v.contains(|c: char| c.is_alphabetic())
        && !v.contains(char::is_whitespace)
        && !v.starts_with(['/', '~', '.'])
        && !v.contains("://")
        && v.chars().count() >= MIN_VALUE_CHARS
        && distinct_chars(v) >= 4
        && !is_placeholder(v)
        && !is_code_identifier(v)
}

/// A password made of words, which [`value_looks_secret`] passes over
/// for want of a digit or a symbol: a passphrase of three or more words
/// joined by hyphens (`maple-river-stone-cloud`, diceware's form), which
/// neither code nor prose writes after a password's name.
pub(super) fn is_passphrase(v: &str) -> bool {
    let parts: Vec<&str> = v.split('-').collect();
    parts.len() >= 3
        && parts
            .iter()
            .all(|p| p.len() >= 3 && p.bytes().all(|b| b.is_ascii_alphabetic()))
        && !is_placeholder(v)
}

/// A value written as a literal (quoted, or in a shell or `.env`
/// assignment) that could be a password though it is only letters: long
/// enough, one word, not a placeholder, a path, a URL, a template, a
/// number or a dotted name (`PGPASSWORD=silverfoxjumps`,
/// `password = "correcthorse"`).
pub(super) fn literal_looks_secret(v: &str) -> bool {
    v.chars().count() >= MIN_WORD_PASSWORD_CHARS
        && !v.contains(char::is_whitespace)
        && !v.starts_with(['/', '~', '.', '$', '%'])
        && !v.contains("://")
        && distinct_chars(v) >= 4
        && !is_placeholder(v)
        && !is_number(v)
        && !(v.contains('.') && v.split('.').all(is_identifier))
}

/// The shortest literal password made of letters only that
/// [`literal_looks_secret`] takes: shorter words are names and values.
const MIN_WORD_PASSWORD_CHARS: usize = 8;

/// Code rather than a literal: `config.token`, `crate::auth::KEY`,
/// `token_v2`, `DB_PASS_2`, `quote!`, `0x8004400a`, `2048u32`.
fn is_code_identifier(v: &str) -> bool {
    let path = v.trim_end_matches([':', '.', '!']).replace("::", ".");
    let parts: Vec<&str> = path.split('.').collect();
    let all_idents = parts.iter().all(|p| is_identifier(p));
    let dotted = parts.len() > 1 && all_idents;
    let cased = !(v.contains(|c: char| c.is_ascii_lowercase())
        && v.contains(|c: char| c.is_ascii_uppercase()));
    // A macro name is snake_case (`quote!`); `Hunter2Xy!` is a password.
    let macro_or_snake = (v.ends_with('!') || v.contains('_')) && cased;
    dotted || (all_idents && macro_or_snake) || is_number(v)
}

/// Integer and float literals, with optional type suffix (`2048u32`, `1.5f64`,
/// `100_000`), and hex literals that fit in 64 bits (`0x8004400a`).
fn is_number(v: &str) -> bool {
    if let Some(digits) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        return digits.len() <= 16 && digits.bytes().all(|b| b.is_ascii_hexdigit() || b == b'_');
    }
    let body = NUMBER_SUFFIXES
        .split_ascii_whitespace()
        .find_map(|suffix| v.strip_suffix(suffix))
        .unwrap_or(v);
    body.starts_with(|c: char| c.is_ascii_digit())
        && body
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'_' | b'.' | b'e' | b'E'))
}

/// Type suffixes of number literals in Rust and C, longest first.
const NUMBER_SUFFIXES: &str =
    "usize isize u128 i128 u64 i64 u32 i32 u16 i16 f32 f64 u8 i8 ULL UL LL L U f";

/// Is `word` one of the space-separated words of `list`?
pub(super) fn listed(list: &str, word: &str) -> bool {
    list.split_ascii_whitespace().any(|w| w == word)
}

pub(super) fn is_identifier(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Punctuation other than the separators identifiers and paths use.
fn is_symbol(c: char) -> bool {
    !c.is_alphanumeric() && !matches!(c, '_' | '-' | '.' | ':' | '/')
}

pub(super) fn has_digit(v: &str) -> bool {
    v.bytes().any(|b| b.is_ascii_digit())
}

pub(super) fn has_mixed_case(v: &str) -> bool {
    v.bytes().any(|b| b.is_ascii_lowercase()) && v.bytes().any(|b| b.is_ascii_uppercase())
}

/// Number of distinct characters, counting at most up to 4.
fn distinct_chars(v: &str) -> usize {
    let mut seen: Vec<char> = Vec::with_capacity(4);
    for c in v.chars() {
        if !seen.contains(&c) {
            seen.push(c);
            if seen.len() == 4 {
                break;
            }
        }
    }
    seen.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression (review, stop 62): passwords made of words were stored.
    #[test]
    fn r_passwords_made_of_words() {
        for v in ["maple-river-stone-cloud", "orange-tractor-velvet-lamp"] {
            assert!(is_passphrase(v), "{v}");
        }
        for v in ["read-only", "x-y-z", "your-password-here", "a-b"] {
            assert!(!is_passphrase(v), "{v}");
        }
        for v in [
            "silverfoxjumps",
            "correct-horse-battery-staple",
            "maplerivercloud",
        ] {
            assert!(literal_looks_secret(v), "{v}");
        }
        for v in [
            "changeme",
            "password",
            "$DB_PASSWORD",
            "config.db.password",
            "12345678",
            "short",
            "<secret>",
            "/run/secrets/pw",
        ] {
            assert!(!literal_looks_secret(v), "{v}");
        }
    }

    /// Regression (issue #37: any value containing `xxx`, `test`, `token`,
    /// `pass` or `sample` was a placeholder). A placeholder is made of
    /// such words; a random string holding one is not.
    #[test]
    fn r37_a_placeholder_is_made_of_placeholder_words() {
        for v in [
            "changeme",
            "change_me_123",
            "your_token_here",
            "example123",
            "test1234",
            "fake-4f9a2",
            "testpassword123",
            "Password-2024!",
            "xxxxxxxxxxxx",
            "XXXX-XXXX-1234",
            "${DB_PASSWORD}",
            "{{ vault_db_password }}",
            "********",
            "postgres",
        ] {
            assert!(is_placeholder(v), "{v} is a placeholder");
        }
        let random = ["Passw0rd!2024", "Kq7vTokenZ2mW9", "Zq81sampleR7tY3u"];
        for v in random {
            assert!(!is_placeholder(v), "{v} is not a placeholder");
        }
        // A bearer token holding `Test`, another holding `xXx`.
        assert!(!is_placeholder(&format!("9f{}k2LmQ8rZ1vB7nX4", "Test")));
        assert!(!is_placeholder(&format!("CNJZXUYCRJm5F{}GVJNEL4w", "xXx")));
    }
}
