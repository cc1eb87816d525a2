//! The value heuristics the password rules share: is this a credential, or
//! a placeholder, a word, a number, a path, a URL or code?
//!
//! Precision policy: a value reported as a password has 6 characters to
//! 1 KiB, no whitespace, a letter plus a digit or symbol, and is not a
//! placeholder (`${X}`, `$X`, `<your-password>`, `changeme`, `example`,
//! `xxx`, `***`, `...`, values naming `password`/`secret`/`token`/`test`/
//! `fake`), not code (`read_password()`, `os.environ[...]`,
//! `process.env.X`, `String`, `snake_case`/`SCREAMING_CASE` identifiers,
//! `Type,` annotations, number literals such as `2048u32`), and not a path
//! or URL. Hence letters-only passwords such as `correcthorsebattery` and
//! digits-only ones are deliberately not reported.

/// Shortest assigned value reported as a password.
const MIN_VALUE_CHARS: usize = 6;

/// Values that are placeholders or well-known defaults, compared lowercase
/// with surrounding punctuation trimmed (space-separated).
const PLACEHOLDER_VALUES: &str = "admin changeit default empty false guest hidden letmein \
    masked mysql nil none null optional postgres redis required root string true undefined unset \
    user username";

/// Fragments that mark a value as a placeholder, template, mask or test
/// fixture, matched lowercase anywhere in the value (space-separated).
const PLACEHOLDER_PARTS: &str = "your example placeholder changeme change_me change-me \
    redacted dummy fake sample test pass secret token xxx *** ... ${ {{ }} %( $( <";

/// Leading characters of variable references, templates, code and YAML tags.
const PLACEHOLDER_STARTS: [char; 9] = ['$', '%', '<', '{', '&', '*', '!', '#', '@'];

/// Placeholder, template, mask, default or test value (`${X}`, `changeme`,
/// `xxx`, `postgres`, `fake-123`)?
pub(super) fn is_placeholder(v: &str) -> bool {
    let lower = v.to_ascii_lowercase();
    let word = lower.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    v.starts_with(PLACEHOLDER_STARTS)
        || listed(PLACEHOLDER_VALUES, word)
        || PLACEHOLDER_PARTS
            .split_ascii_whitespace()
            .any(|part| lower.contains(part))
        || distinct_chars(v) < 3
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
