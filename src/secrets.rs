//! Secret detection and redaction for everything `recall` stores.
//!
//! This module owns the rules that decide what counts as a secret (API keys,
//! tokens, private keys, credentials in URLs and `.env`-style assignments) and
//! the two operations built on them: [`scan`] reports where secrets are, and
//! [`redact`] replaces each one with `[REDACTED:<kind>]`. Records that contain
//! a secret are refused, and every transcript chunk and extracted fact is
//! redacted before indexing, so the scan runs over gigabytes of text.
//!
//! Speed: clean text must cost about one pass. Four detectors run in turn,
//! each a regex whose search starts from literals (`AKIA`, `ghp_`, `eyJ`,
//! `-----BEGIN`, `://`, `token`, `Password`, ...), so the regex engine's SIMD
//! literal prefilter skips clean text and the precise checks only run near a
//! candidate. Assignments use an earliest-end search without capture groups
//! and are parsed by hand, since code mentions `token` and `password` often.
//! Every search is linear in the text (bounded windows, no re-scanning), and
//! [`redact`] hands clean text back borrowed.
//!
//! Kinds: `aws-access-key` (`AKIA`/`ASIA` ids), `aws-secret-key` (40-character
//! value assigned to `aws_secret_access_key` and its spellings),
//! `github-token` (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`),
//! `openai-key` (`sk-`, `sk-proj-`, `sk-svcacct-`, ...), `anthropic-key`
//! (`sk-ant-`), `slack-token` (`xox?-`, `xapp-`, webhook URLs), `stripe-key`
//! (`sk_`/`rk_` live and test, `whsec_`), `google-api-key` (`AIza`),
//! `npm-token` (`npm_`), `gitlab-token` (`glpat-` and the other `gl..-`
//! prefixes), `huggingface-token` (`hf_`), `azure-storage-key`
//! (`AccountKey=` in a connection string), `auth-header` (the value of an
//! `Authorization: Bearer|Basic|Token` header), `basic-auth` (the password of
//! `curl -u user:password`), `private-key` (PEM and PGP blocks), `jwt`,
//! `url-password` and `password-assignment` (keys such as `PGPASSWORD`
//! included).
//!
//! What gets redacted is the secret value only: for assignments and URL
//! passwords the value after `=`/`:` or between `:` and `@`; for Slack webhooks
//! the path after `/services/`; for private keys the whole block, BEGIN and
//! END lines included (up to the last line of key material when the END line
//! is missing). Overlapping detections merge into one finding that covers
//! them all and keeps the most specific kind (`TOKEN=ghp_...` is a
//! `github-token`).
//!
//! Precision policy (transcripts of coding agents are full of code that names
//! `password` and `token` variables, so false positives are costly):
//! - Stripe publishable keys (`pk_live_`, `pk_test_`) are public by design and
//!   are not reported; secret (`sk_`), restricted (`rk_`) and webhook signing
//!   (`whsec_`) keys are, in live and test mode alike.
//! - AWS's documented example credentials (ending in `EXAMPLE` / `EXAMPLEKEY`)
//!   are public and not reported.
//! - Assignments (`password-assignment`) need a key naming a secret
//!   (`password`, `pass`, `pwd`, `secret`, `token`, `api_key`, ...) whose last
//!   word is not metadata (`_file`, `_path`, `_url`, `_len`, `_type`, ...), and
//!   a value that looks like a credential: 6 characters to 1 KiB, no
//!   whitespace, a letter plus a digit or symbol, not a placeholder
//!   (`${X}`, `$X`, `<your-password>`, `changeme`, `example`, `xxx`, `***`,
//!   `...`, values naming `password`/`secret`/`token`/`test`/`fake`), not code
//!   (`read_password()`, `os.environ[...]`, `process.env.X`, `String`,
//!   `snake_case`/`SCREAMING_CASE` identifiers, `Type,` annotations, number
//!   literals such as `2048u32`), not a path or URL, and after `key:` not
//!   followed by more words (`secret: PKCS-12 bag with ...` is prose). Hence
//!   letters-only passwords such as `correcthorsebattery` and digits-only
//!   ones are deliberately not reported.
//! - URL passwords (`url-password`) need 4+ characters and skip placeholders
//!   and well-known defaults (`password`, `pass`, `postgres`, `guest`,
//!   `admin`, `root`, ...); a `:` inside the password ends the match (real
//!   URLs percent-encode it), so `cvs://:pserver:user@host` is not reported.
//! - A `-----BEGIN ... PRIVATE KEY-----` line is a key only when base64 key
//!   material follows it (a run of 40+ base64 characters), so PEM-parsing code
//!   that mentions the markers is not reported.

use std::borrow::Cow;
use std::cmp::Reverse;
use std::sync::LazyLock;

use regex::{Captures, Regex};

/// One secret found in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Stable kebab-case kind name, e.g. "aws-access-key".
    pub kind: &'static str,
    /// Byte range of the secret value in the scanned text (the part that gets redacted).
    pub start: usize,
    /// End (exclusive) of the byte range; see [`Finding::start`].
    pub end: usize,
    /// 1-based line of `start`.
    pub line: usize,
    /// 1-based column of `start`, counted in characters.
    pub column: usize,
}

impl Finding {
    /// Human-readable location, e.g. `"aws-access-key at line 3, column 14"`.
    pub fn describe(&self) -> String {
        format!(
            "{} at line {}, column {}",
            self.kind, self.line, self.column
        )
    }
}

/// Every secret in `text`, in order of position, non-overlapping.
pub fn scan(text: &str) -> Vec<Finding> {
    locate(text, &candidates(text, false))
}

/// `text` with every secret replaced by `[REDACTED:<kind>]`, plus the findings.
/// Returns Cow::Borrowed when nothing was found (the common case: no allocation).
pub fn redact(text: &str) -> (Cow<'_, str>, Vec<Finding>) {
    let findings = scan(text);
    if findings.is_empty() {
        return (Cow::Borrowed(text), findings);
    }
    (Cow::Owned(replace_spans(text, &findings)), findings)
}

/// Cheap check: does `text` contain anything that looks like a secret?
pub fn contains_secret(text: &str) -> bool {
    !candidates(text, true).is_empty()
}

// ---------------------------------------------------------------------------
// Kinds and ranking

const AWS_ACCESS_KEY: &str = "aws-access-key";
const AWS_SECRET_KEY: &str = "aws-secret-key";
const GITHUB_TOKEN: &str = "github-token";
const OPENAI_KEY: &str = "openai-key";
const ANTHROPIC_KEY: &str = "anthropic-key";
const SLACK_TOKEN: &str = "slack-token";
const STRIPE_KEY: &str = "stripe-key";
const GOOGLE_API_KEY: &str = "google-api-key";
const PRIVATE_KEY: &str = "private-key";
const JWT: &str = "jwt";
const URL_PASSWORD: &str = "url-password";
const PASSWORD_ASSIGNMENT: &str = "password-assignment";
const NPM_TOKEN: &str = "npm-token";
const GITLAB_TOKEN: &str = "gitlab-token";
const HUGGINGFACE_TOKEN: &str = "huggingface-token";
const AZURE_STORAGE_KEY: &str = "azure-storage-key";
const AUTH_HEADER: &str = "auth-header";
const BASIC_AUTH: &str = "basic-auth";

/// A candidate secret before overlap resolution and line/column lookup.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
    kind: &'static str,
}

/// Which kind wins when two candidates start at the same byte: lower is more specific.
fn rank(kind: &'static str) -> u8 {
    match kind {
        PRIVATE_KEY => 0,
        AWS_SECRET_KEY => 2,
        URL_PASSWORD | AUTH_HEADER | BASIC_AUTH => 3,
        PASSWORD_ASSIGNMENT => 4,
        _ => 1,
    }
}

type Detector = fn(&str, &mut Vec<Span>);

/// All detectors; each appends its candidates in any order.
const DETECTORS: [Detector; 5] = [
    detect_tokens,
    detect_headers,
    detect_private_keys,
    detect_url_passwords,
    detect_assignments,
];

/// Runs the detectors (stopping after the first hit when `first_only`) and
/// resolves overlaps.
fn candidates(text: &str, first_only: bool) -> Vec<Span> {
    let mut spans = Vec::new();
    for detect in DETECTORS {
        detect(text, &mut spans);
        if first_only && !spans.is_empty() {
            break;
        }
    }
    resolve_overlaps(spans)
}

/// Sorts by position and merges overlapping candidates, so every candidate's
/// bytes stay covered; a merged span keeps the kind of its earliest, most
/// specific member.
fn resolve_overlaps(mut spans: Vec<Span>) -> Vec<Span> {
    spans.sort_unstable_by_key(|s| (s.start, rank(s.kind), Reverse(s.end)));
    let mut kept: Vec<Span> = Vec::with_capacity(spans.len());
    for span in spans {
        match kept.last_mut() {
            Some(last) if span.start < last.end => last.end = last.end.max(span.end),
            _ => kept.push(span),
        }
    }
    kept
}

// ---------------------------------------------------------------------------
// Fixed-format tokens

/// One alternative of [`TOKENS`]: its capture group, kind and extra check.
struct TokenRule {
    group: &'static str,
    kind: &'static str,
    valid: fn(&str) -> bool,
}

const TOKEN_RULES: [TokenRule; 13] = [
    rule("aws", AWS_ACCESS_KEY, |v| !v.ends_with("EXAMPLE")),
    rule("github", GITHUB_TOKEN, |v| {
        !v.starts_with("github_pat_") || has_digit(v)
    }),
    rule("anthropic", ANTHROPIC_KEY, has_digit),
    rule("openai", OPENAI_KEY, |v| {
        !v.starts_with("sk-ant-") && has_digit(v) && has_mixed_case(v)
    }),
    rule("slack", SLACK_TOKEN, has_digit),
    rule("slack_hook", SLACK_TOKEN, |v| v.contains('/')),
    rule("stripe", STRIPE_KEY, |v| has_digit(v) || has_mixed_case(v)),
    rule("google", GOOGLE_API_KEY, |_| true),
    rule("jwt", JWT, |_| true),
    rule("npm", NPM_TOKEN, has_digit),
    rule("gitlab", GITLAB_TOKEN, has_digit),
    rule("hf", HUGGINGFACE_TOKEN, |v| {
        has_digit(v) && has_mixed_case(v)
    }),
    rule("azure", AZURE_STORAGE_KEY, has_digit),
];

const fn rule(group: &'static str, kind: &'static str, valid: fn(&str) -> bool) -> TokenRule {
    TokenRule { group, kind, valid }
}

/// One alternation over every fixed-format token; each alternative starts
/// with a literal, so the engine's literal prefilter drives the search.
static TOKENS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?-u:\b)(?P<aws>(?:AKIA|ASIA)[A-Z0-9]{16})(?-u:\b)",
        r"|(?-u:\b)(?P<github>gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})",
        r"|(?-u:\b)(?P<anthropic>sk-ant-[A-Za-z0-9_-]{32,})",
        r"|(?-u:\b)(?P<openai>sk-[A-Za-z0-9_-]{32,})",
        r"|(?-u:\b)(?P<slack>(?:xox[abposr]|xapp)-[A-Za-z0-9-]{10,})",
        r"|hooks\.slack\.com/(?:services|workflows|triggers)/(?P<slack_hook>[A-Za-z0-9_/-]{16,})",
        r"|(?-u:\b)(?P<stripe>[sr]k_(?:live|test)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9]{24,})",
        r"|(?-u:\b)(?P<google>AIza[A-Za-z0-9_-]{35})(?-u:\b)",
        r"|(?-u:\b)(?P<jwt>eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,})",
        r"|(?-u:\b)(?P<npm>npm_[A-Za-z0-9]{36})(?-u:\b)",
        r"|(?-u:\b)(?P<gitlab>gl(?:pat|dt|rt|ptt|cbt|oas)-[A-Za-z0-9_-]{20,})",
        r"|(?-u:\b)(?P<hf>hf_[A-Za-z0-9]{34,})(?-u:\b)",
        r"|AccountKey=(?P<azure>[A-Za-z0-9+/]{40,}={0,2})",
    ))
    .expect("token pattern is a valid constant regex")
});

fn detect_tokens(text: &str, out: &mut Vec<Span>) {
    for caps in TOKENS.captures_iter(text) {
        if let Some(span) = token_span(&caps) {
            out.push(span);
        }
    }
}

/// The span of whichever token alternative matched, if its check passes.
fn token_span(caps: &Captures<'_>) -> Option<Span> {
    TOKEN_RULES.iter().find_map(|rule| {
        let m = caps.name(rule.group)?;
        (rule.valid)(m.as_str()).then_some(Span {
            start: m.start(),
            end: m.end(),
            kind: rule.kind,
        })
    })
}

// ---------------------------------------------------------------------------
// Credentials in HTTP headers and command lines

/// `Authorization: Bearer|Basic|Token <value>` and `curl -u user:<password>`.
/// A detector of its own, not part of [`TOKENS`]: a header's value may be a
/// token of a known format (a JWT), which then keeps its own, more specific
/// kind when the spans merge.
static HEADERS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i:authorization)[\x22']?[ \t]*[:=][ \t]*[\x22']?(?i:bearer|basic|token)[ \t]+(?P<bearer>[A-Za-z0-9._~+/=-]{16,})",
        r"|(?-u:\b)curl(?-u:\b)[^\n]{0,200}?[ \t](?:-u|--user)[ \t]+[\x22']?[^\s:\x22']+:(?P<curl>[^\s\x22']+)",
    ))
    .expect("header pattern is a valid constant regex")
});

fn detect_headers(text: &str, out: &mut Vec<Span>) {
    for caps in HEADERS.captures_iter(text) {
        let found = match (caps.name("bearer"), caps.name("curl")) {
            (Some(v), _) if has_digit(v.as_str()) && !is_placeholder(v.as_str()) => {
                Some((v, AUTH_HEADER))
            }
            (_, Some(v)) if url_password_is_real(v.as_str()) && !v.as_str().starts_with('$') => {
                Some((v, BASIC_AUTH))
            }
            _ => None,
        };
        if let Some((m, kind)) = found {
            out.push(Span {
                start: m.start(),
                end: m.end(),
                kind,
            });
        }
    }
}

// ---------------------------------------------------------------------------
// Private key blocks

/// Longest private-key block searched for an END line or body (PGP keys run
/// to several KiB).
const MAX_KEY_BLOCK: usize = 64 * 1024;

/// Shortest run of base64 characters that counts as key material.
const MIN_KEY_MATERIAL: usize = 40;

static PEM_BEGIN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----")
        .expect("PEM BEGIN pattern is a valid constant regex")
});

static PEM_END: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----")
        .expect("PEM END pattern is a valid constant regex")
});

fn detect_private_keys(text: &str, out: &mut Vec<Span>) {
    let mut begins = PEM_BEGIN.find_iter(text).peekable();
    while let Some(begin) = begins.next() {
        // Blocks do not nest: each block's search stops at the next BEGIN
        // line, so every byte is searched once.
        let next_begin = begins.peek().map_or(text.len(), |m| m.start());
        let cap = floor_char_boundary(text, begin.end().saturating_add(MAX_KEY_BLOCK));
        if let Some(end) = key_block_end(text, begin.end(), cap.min(next_begin)) {
            out.push(Span {
                start: begin.start(),
                end,
                kind: PRIVATE_KEY,
            });
        }
    }
}

/// End of the block whose BEGIN line ends at `body_start`: the END line if
/// one follows before `limit`, else the last line of contiguous key material
/// (truncated text). `None` when no key material follows the BEGIN line.
fn key_block_end(text: &str, body_start: usize, limit: usize) -> Option<usize> {
    let window = &text[body_start..limit];
    match PEM_END.find(window) {
        Some(end) if has_base64_run(&window[..end.start()]) => Some(body_start + end.end()),
        Some(_) => None,
        None => truncated_block_end(text, body_start, limit),
    }
}

/// End of the key material after a BEGIN line with no END line: optional
/// header lines (`Proc-Type: ...`) and blank lines, then base64 lines up to
/// the first short (final) line. Lines may be separated by real newlines or
/// by JSON-escaped `\n`.
fn truncated_block_end(text: &str, body_start: usize, limit: usize) -> Option<usize> {
    let mut pos = body_start;
    let mut end = None;
    while pos < limit {
        let (line_end, next) = next_line(text, pos, limit);
        let line = trim_line(&text[pos..line_end]);
        if is_base64_line(line) {
            end = Some(pos + line.len() + leading_blank_len(&text[pos..line_end]));
            if line.len() < 60 {
                break;
            }
        } else if end.is_some() || !(line.is_empty() || is_header_line(line)) {
            break;
        }
        pos = next;
    }
    end.filter(|&e| has_base64_run(&text[body_start..e]))
}

/// End of the line starting at `pos` and the start of the next one; a line
/// ends at `\n` or at a JSON-escaped `\n` (backslash, `n`).
fn next_line(text: &str, pos: usize, limit: usize) -> (usize, usize) {
    let bytes = text.as_bytes();
    let mut i = pos;
    while i < limit {
        match bytes[i] {
            b'\n' => return (i, i + 1),
            b'\\' if bytes.get(i + 1) == Some(&b'n') => return (i, i + 2),
            _ => i += 1,
        }
    }
    (limit, limit)
}

fn trim_line(line: &str) -> &str {
    let line = line.trim_matches([' ', '\t', '\r']);
    line.strip_suffix("\\r").unwrap_or(line)
}

fn leading_blank_len(line: &str) -> usize {
    line.len() - line.trim_start_matches([' ', '\t', '\r']).len()
}

fn is_base64_line(line: &str) -> bool {
    !line.is_empty() && line.bytes().all(is_base64_byte)
}

/// `Proc-Type: 4,ENCRYPTED`, `Version: GnuPG v2` and other armor headers.
fn is_header_line(line: &str) -> bool {
    line.split_once(": ").is_some_and(|(name, _)| {
        name.starts_with(|c: char| c.is_ascii_alphabetic())
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    })
}

fn has_base64_run(text: &str) -> bool {
    let mut run = 0;
    for b in text.bytes() {
        run = if is_base64_byte(b) && b != b'=' {
            run + 1
        } else {
            0
        };
        if run >= MIN_KEY_MATERIAL {
            return true;
        }
    }
    false
}

fn is_base64_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=')
}

// ---------------------------------------------------------------------------
// Passwords in URLs: scheme://user:password@host

static URL_PASSWORD_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"[A-Za-z][A-Za-z0-9+.-]*://",
        r#"[^\s:/?#@"'<>\[\]]*:(?P<password>[^\s:/?#@"'<>]+)@[A-Za-z0-9\[]"#,
    ))
    .expect("URL password pattern is a valid constant regex")
});

fn detect_url_passwords(text: &str, out: &mut Vec<Span>) {
    for caps in URL_PASSWORD_RE.captures_iter(text) {
        let Some(pw) = caps.name("password") else {
            continue;
        };
        if url_password_is_real(pw.as_str()) {
            out.push(Span {
                start: pw.start(),
                end: pw.end(),
                kind: URL_PASSWORD,
            });
        }
    }
}

/// Rejects placeholders, well-known defaults and port-like numbers.
fn url_password_is_real(pw: &str) -> bool {
    let port_like = pw.len() <= 5 && pw.bytes().all(|b| b.is_ascii_digit());
    pw.chars().count() >= 4 && !port_like && !is_placeholder(pw)
}

// ---------------------------------------------------------------------------
// `.env`-style and code assignments: KEY=value, "key": "value", key: value

/// Literal words a secret-naming key contains; they anchor the regex search.
const KEY_WORDS: &str = concat!(
    r"(?:[Pp]ass|PASS|[Pp]wd|PWD|[Ss]ecret|SECRET|[Tt]oken|TOKEN",
    r"|(?:[Aa]pi|API|[Aa]ccess|ACCESS|[Pp]rivate|PRIVATE|[Ee]ncryption|ENCRYPTION",
    r"|[Ss]igning|SIGNING|[Mm]aster|MASTER)[_-]?(?:[Kk]ey|KEY))",
);

/// A key word followed by the rest of the key and a separator. The search is
/// driven by the key words' literal prefilter and needs no capture groups;
/// the key around a hit and the value after it are parsed by hand, which is
/// far cheaper than a capturing regex on code-heavy text.
static KEY_ASSIGN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r#"{KEY_WORDS}[A-Za-z0-9_.-]*(?:\\?["'])?[ \t]*(?::=|=>|[:=])"#
    ))
    .expect("key assignment pattern is a valid constant regex")
});

fn detect_assignments(text: &str, out: &mut Vec<Span>) {
    let mut from = 0;
    // Earliest-end search: no reverse pass to find where the match starts.
    while let Some(sep_end) = KEY_ASSIGN.shortest_match_at(text, from) {
        let (span, examined, value_start) = assignment_at(text, sep_end);
        // After a secret, resume past it. After a rejected value, resume at
        // the value itself: it may hold the real assignment, as in
        // `aws-secret-key: aws_secret_access_key = <secret>`. A value is
        // examined for at most MAX_VALUE_BYTES, so the scan stays linear.
        from = match span {
            Some(_) => examined.max(sep_end),
            None => value_start.max(sep_end),
        };
        out.extend(span);
    }
}

/// The value assigned by the separator character just before `sep_end`,
/// when key and value look like an AWS secret key or another credential,
/// the end of the text examined for it, and where the value starts.
fn assignment_at(text: &str, sep_end: usize) -> (Option<Span>, usize, usize) {
    let bytes = text.as_bytes();
    let (key_start, key_end) = key_before(bytes, sep_end - 1);
    if text[..key_start].ends_with("//") {
        return (None, sep_end, sep_end); // `scheme://user:password@`: the URL detector's case
    }
    let Some(value_start) = after_separator(bytes, key_end) else {
        return (None, sep_end, sep_end);
    };
    let (start, end, examined) = value_range(text, value_start);
    let key = &text[key_start..key_end];
    (
        classify(text, key, start, end, sep_end),
        examined,
        value_start,
    )
}

/// Kind of the assignment `key` = `text[start..end]`, if it is a secret.
fn classify(text: &str, key: &str, start: usize, end: usize, sep_end: usize) -> Option<Span> {
    let bytes = text.as_bytes();
    let value = &text[start..end];
    let colon = bytes[sep_end - 1] == b':' && bytes.get(sep_end) != Some(&b'=');
    let kind = if value.is_empty() || (colon && prose_follows(text, end)) {
        return None; // `secret: PKCS-12 bag with ...` is a sentence
    } else if is_aws_secret(key, value) {
        AWS_SECRET_KEY
    } else if value_looks_secret(value) && key_names_secret(key) {
        PASSWORD_ASSIGNMENT
    } else {
        return None;
    };
    Some(Span { start, end, kind })
}

/// Does a sentence go on after the value ending at `end`? A YAML-style
/// `key: value` followed by more words is prose, not a credential.
fn prose_follows(text: &str, end: usize) -> bool {
    let rest = text[end..].trim_start_matches('.');
    let words = rest.trim_start_matches([' ', '\t']);
    words.len() < rest.len() && words.starts_with(char::is_alphanumeric)
}

/// Byte range of the key before the separator at `sep`, skipping blanks and
/// the closing quote of a quoted key (`"password": ...`, `\"token\": ...`).
fn key_before(bytes: &[u8], sep: usize) -> (usize, usize) {
    let mut end = sep - count_back(bytes, sep, |b| b == b' ' || b == b'\t');
    if end > 0 && matches!(bytes[end - 1], b'"' | b'\'') {
        end -= 1;
        end -= count_back(bytes, end, |b| b == b'\\').min(1);
    }
    (end - count_back(bytes, end, is_key_byte), end)
}

/// How many bytes directly before `pos` satisfy `keep`.
fn count_back(bytes: &[u8], pos: usize, keep: impl Fn(u8) -> bool) -> usize {
    bytes[..pos].iter().rev().take_while(|&&b| keep(b)).count()
}

/// `aws_secret_access_key = <40 base64 characters>` and its spellings
/// (`AWS_SECRET_ACCESS_KEY`, `SecretAccessKey`, `aws_secret_key`).
fn is_aws_secret(key: &str, value: &str) -> bool {
    let looks_like_value = value.len() == 40
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'/' || b == b'+')
        && has_mixed_case(value)
        && !value.contains("EXAMPLE");
    looks_like_value && {
        let words = key_words(key);
        let has = |w: &str| words.iter().any(|x| x == w);
        has("secret") && has("key") && (has("aws") || has("access"))
    }
}

/// Index after `sep` in `key["']? sep ` where sep is `=`, `:`, `:=` or `=>`;
/// `None` for comparisons (`==`) and paths (`::`).
fn after_separator(bytes: &[u8], key_end: usize) -> Option<usize> {
    let mut pos = key_end;
    if bytes.get(pos) == Some(&b'\\') && matches!(bytes.get(pos + 1), Some(b'"' | b'\'')) {
        pos += 2;
    } else if matches!(bytes.get(pos), Some(b'"' | b'\'')) {
        pos += 1;
    }
    pos = skip_while(bytes, pos, |b| b == b' ' || b == b'\t');
    pos += match (bytes.get(pos), bytes.get(pos + 1)) {
        (Some(b':'), Some(b'=')) | (Some(b'='), Some(b'>')) => 2,
        (Some(b'='), Some(b'=')) | (Some(b':'), Some(b':')) => return None,
        (Some(b'=' | b':'), _) => 1,
        _ => return None,
    };
    Some(skip_while(bytes, pos, |b| b == b' ' || b == b'\t'))
}

/// Longest value examined; longer runs are data, not credentials, and the
/// cap keeps the work per key bounded.
const MAX_VALUE_BYTES: usize = 1024;

/// Range of the value at `start` and the end of the text examined: the inside
/// of a `"..."` (also JSON-escaped `\"...\"`) or `'...'` string on one line,
/// or a bare word. The range is empty when there is no usable value. Bare
/// words that are called, indexed or generic (`f(`, `x[`, `T<`), or
/// identifiers followed by code punctuation (`Colon2,`, `Flags = 1`), are
/// code, not values.
fn value_range(text: &str, start: usize) -> (usize, usize, usize) {
    let bytes = text.as_bytes();
    let limit = floor_char_boundary(text, start.saturating_add(MAX_VALUE_BYTES));
    match (bytes.get(start), bytes.get(start + 1)) {
        (Some(b'\\'), Some(b'"')) => quoted_range(bytes, start + 2, limit, b'"'),
        (Some(&q @ (b'"' | b'\'')), _) => quoted_range(bytes, start + 1, limit, q),
        _ => bare_range(text, start, limit),
    }
}

fn quoted_range(bytes: &[u8], start: usize, limit: usize, quote: u8) -> (usize, usize, usize) {
    let end = start
        + count_while(&bytes[start.min(limit)..limit], |b| {
            b != quote && b != b'\\' && b != b'\n'
        });
    let closed = match bytes.get(end) {
        Some(&b) if b == quote => end < limit,
        Some(b'\\') => bytes.get(end + 1) == Some(&quote),
        _ => false,
    };
    (start, if closed { end } else { start }, end)
}

fn bare_range(text: &str, start: usize, limit: usize) -> (usize, usize, usize) {
    let rest = &text[start..limit];
    let Some(len) = rest
        .find(ends_bare_value)
        .or((limit == text.len()).then_some(rest.len()))
    else {
        return (start, start, limit); // longer than any credential
    };
    let value = rest[..len].trim_end_matches('.');
    let after = &text[start + len..];
    let called = after.starts_with(['(', '[', '{', '<']);
    let typed = is_identifier(value)
        && after
            .trim_start_matches([' ', '\t'])
            .starts_with([',', ';', ')', '}', ']', '>', '=', '|', '&', '{']);
    let usable = !value.starts_with('=') && !called && !typed;
    (
        start,
        start + if usable { value.len() } else { 0 },
        start + len,
    )
}

fn ends_bare_value(c: char) -> bool {
    c.is_whitespace() || "\"'`,;&(){}[]<>\\".contains(c)
}

fn is_key_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

/// First index at or after `pos` whose byte fails `keep` (or the length).
fn skip_while(bytes: &[u8], pos: usize, keep: impl Fn(u8) -> bool) -> usize {
    pos + bytes.get(pos..).map_or(0, |rest| count_while(rest, keep))
}

/// Length of the prefix of `bytes` whose bytes satisfy `keep`.
fn count_while(bytes: &[u8], keep: impl Fn(u8) -> bool) -> usize {
    bytes.iter().take_while(|&&b| keep(b)).count()
}

/// Key words (lowercase) that name a secret on their own (space-separated).
const SECRET_WORDS: &str = "password passwd passphrase pass pwd secret token apikey secretkey";

/// Words that make a following `key` word a secret: `api_key`, `AccessKey`
/// (space-separated).
const KEY_QUALIFIERS: &str = "api access private secret encryption signing master";

/// Last key words that mark metadata about a secret rather than the secret
/// (space-separated).
const METADATA_WORDS: &str = "age algo algorithm arn at backend budget count date description \
    dir duration enabled encoding encryption endpoint env error expiration expires expiry field \
    file format hasher header help hint host id ids index kind label len length lifetime limit \
    manager max message method min mode name path pattern policy prefix prompt provider ref \
    reset rotation scheme scope size storage store strategy suffix time timeout ttl type uri url \
    validator validators";

/// Does this key name a secret (`DB_PASSWORD`, `apiKey`, `client-secret`)
/// rather than something about one (`PASSWORD_FILE`, `tokenizer`, `token_type`)?
fn key_names_secret(key: &str) -> bool {
    let words = key_words(key);
    let Some(last) = words.last() else {
        return false;
    };
    if listed(METADATA_WORDS, last) {
        return false;
    }
    words.iter().enumerate().any(|(i, word)| {
        listed(SECRET_WORDS, word)
            // Glued prefixes of environment variables: `PGPASSWORD`,
            // `MYSQL_PWD` is split already, `REDISPASSWORD`.
            || word.ends_with("password")
            || word.ends_with("passwd")
            || (word == "key" && i > 0 && listed(KEY_QUALIFIERS, &words[i - 1]))
    })
}

/// Lowercase words of an identifier, split at non-alphanumerics and camelCase
/// humps, trailing digits dropped: `dbPassword2` → `["db", "password"]`.
fn key_words(key: &str) -> Vec<String> {
    let chars: Vec<char> = key.chars().collect();
    let mut words = Vec::new();
    let mut word = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() || starts_hump(&chars, i) {
            push_word(&mut words, &mut word);
        }
        if c.is_ascii_alphanumeric() {
            word.push(c.to_ascii_lowercase());
        }
    }
    push_word(&mut words, &mut word);
    words
}

/// Is `chars[i]` the first letter of a camelCase hump (`dbPassword`, `APIKey`)?
fn starts_hump(chars: &[char], i: usize) -> bool {
    let c = chars[i];
    let prev = i.checked_sub(1).map(|j| chars[j]);
    let next = chars.get(i + 1);
    c.is_ascii_uppercase()
        && prev.is_some_and(|p| {
            p.is_ascii_lowercase()
                || p.is_ascii_digit()
                || (p.is_ascii_uppercase() && next.is_some_and(|n| n.is_ascii_lowercase()))
        })
}

fn push_word(words: &mut Vec<String>, word: &mut String) {
    let trimmed = word.trim_end_matches(|c: char| c.is_ascii_digit());
    if !trimmed.is_empty() {
        words.push(trimmed.to_owned());
    }
    word.clear();
}

// ---------------------------------------------------------------------------
// Value heuristics

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
fn is_placeholder(v: &str) -> bool {
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
fn value_looks_secret(v: &str) -> bool {
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
    let macro_or_snake = v.ends_with('!') || (v.contains('_') && cased);
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
fn listed(list: &str, word: &str) -> bool {
    list.split_ascii_whitespace().any(|w| w == word)
}

fn is_identifier(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Punctuation other than the separators identifiers and paths use.
fn is_symbol(c: char) -> bool {
    !c.is_alphanumeric() && !matches!(c, '_' | '-' | '.' | ':' | '/')
}

fn has_digit(v: &str) -> bool {
    v.bytes().any(|b| b.is_ascii_digit())
}

fn has_mixed_case(v: &str) -> bool {
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

// ---------------------------------------------------------------------------
// Positions and replacement

/// Turns resolved spans into findings with 1-based line and character column,
/// walking the text once.
fn locate(text: &str, spans: &[Span]) -> Vec<Finding> {
    let bytes = text.as_bytes();
    let (mut pos, mut line, mut column) = (0, 1, 1);
    let mut findings = Vec::with_capacity(spans.len());
    for span in spans {
        for &b in &bytes[pos..span.start] {
            if b == b'\n' {
                line += 1;
                column = 1;
            } else if b & 0xC0 != 0x80 {
                column += 1;
            }
        }
        pos = span.start;
        findings.push(Finding {
            kind: span.kind,
            start: span.start,
            end: span.end,
            line,
            column,
        });
    }
    findings
}

/// `text` with each finding's range replaced by `[REDACTED:<kind>]`.
fn replace_spans(text: &str, findings: &[Finding]) -> String {
    let mut out = String::with_capacity(text.len() + 24 * findings.len());
    let mut last = 0;
    for f in findings {
        out.push_str(&text[last..f.start]);
        out.push_str("[REDACTED:");
        out.push_str(f.kind);
        out.push(']');
        last = f.end;
    }
    out.push_str(&text[last..]);
    out
}

/// Largest char boundary of `text` at or below `index`.
fn floor_char_boundary(text: &str, index: usize) -> usize {
    let mut i = index.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    //! Fake secrets are assembled at run time from pieces, so this file never
    //! holds anything that looks like a real credential to other scanners.

    use super::*;
    use proptest::prelude::*;

    /// Deterministic letters and digits in mixed case, free of the vowels that
    /// would spell placeholder words (`test`, `token`, `example`, ...).
    fn mixed(n: usize) -> String {
        const ALPHABET: &[u8] = b"a7Kq2Zm9Xc4Rt1Vb8Np3Ls6Hd0Wf5Jg";
        (0..n)
            .map(|i| char::from(ALPHABET[(i * 7 + 3) % ALPHABET.len()]))
            .collect()
    }

    fn upper(n: usize) -> String {
        mixed(n).to_ascii_uppercase()
    }

    fn aws_key() -> String {
        format!("AKIA{}", upper(16))
    }

    fn github() -> String {
        format!("ghp_{}", mixed(36))
    }

    fn jwt() -> String {
        format!("eyJhbGciOiJIUzI1NiJ9.eyJ{}.{}", mixed(20), mixed(43))
    }

    fn pem(label: &str, body_lines: usize) -> String {
        let body: Vec<String> = (0..body_lines)
            .map(|i| mixed(64 + i)[i..].to_owned())
            .collect();
        let label = format!("{label}PRIVATE KEY");
        format!(
            "-----BEGIN {label}-----\n{}\n-----END {label}-----",
            body.join("\n")
        )
    }

    /// Kinds and secret values found in `text`.
    fn found(text: &str) -> Vec<(&'static str, String)> {
        scan(text)
            .into_iter()
            .map(|f| (f.kind, text[f.start..f.end].to_owned()))
            .collect()
    }

    fn assert_single(text: &str, kind: &str, value: &str) {
        assert_eq!(found(text), vec![(kind, value.to_owned())], "in {text:?}");
    }

    fn assert_clean(text: &str) {
        assert_eq!(found(text), vec![], "in {text:?}");
        assert!(!contains_secret(text), "contains_secret in {text:?}");
    }

    #[test]
    fn aws_access_key_in_prose() {
        let key = aws_key();
        assert_single(&format!("the key {key} leaked"), AWS_ACCESS_KEY, &key);
        let temporary = format!("ASIA{}", upper(16));
        assert_single(&format!("id={temporary}"), AWS_ACCESS_KEY, &temporary);
    }

    #[test]
    fn aws_documented_example_key_is_not_reported() {
        assert_clean(&format!("AKIA{}EXAMPLE", "IOSFODNN7"));
    }

    /// Regression: a rejected assignment (`aws-secret-key: aws_secret...`)
    /// used to swallow the real one inside its value.
    #[test]
    fn r_assignment_inside_a_rejected_value_is_found() {
        let secret = format!("{}{}", "Zm9vYmFyYmF6cXV4MTIz", "NDU2Nzg5MGFiY2RlZmdo");
        let text = format!("Leaked aws-secret-key: aws_secret_access_key = {secret}\n");
        assert_single(&text, AWS_SECRET_KEY, &secret);
        let pw = format!("password: DB_PASSWORD={}", "q8#Vz2!kLm9Rw");
        assert_eq!(scan(&pw).len(), 1, "{pw}");
    }

    #[test]
    fn aws_secret_key_redacts_only_the_value() {
        let secret = format!("{}/{}+{}", mixed(20), upper(9), mixed(9));
        let ini = format!("[default]\naws_secret_access_key = {secret}\n");
        assert_single(&ini, AWS_SECRET_KEY, &secret);
        let env = format!("export AWS_SECRET_ACCESS_KEY=\"{secret}\"");
        assert_single(&env, AWS_SECRET_KEY, &secret);
        let json = format!("{{\"SecretAccessKey\": \"{secret}\"}}");
        assert_single(&json, AWS_SECRET_KEY, &secret);
    }

    #[test]
    fn github_tokens() {
        let classic = github();
        assert_single(&format!("GH: {classic}"), GITHUB_TOKEN, &classic);
        let server = format!("ghs_{}", mixed(36));
        assert_single(&server, GITHUB_TOKEN, &server);
        let fine = format!("github_pat_{}_{}", mixed(22), mixed(59));
        assert_single(&format!("token {fine} here"), GITHUB_TOKEN, &fine);
    }

    #[test]
    fn openai_keys() {
        let legacy = format!("sk-{}", mixed(48));
        assert_single(&format!("OPENAI {legacy}"), OPENAI_KEY, &legacy);
        let project = format!("sk-proj-{}_{}-{}", mixed(60), mixed(40), mixed(50));
        assert_single(&project, OPENAI_KEY, &project);
        let service = format!("sk-svcacct-{}", mixed(80));
        assert_single(&service, OPENAI_KEY, &service);
    }

    #[test]
    fn anthropic_key_is_not_an_openai_key() {
        let key = format!("sk-ant-api03-{}-{}AA", mixed(50), mixed(43));
        assert_single(&format!("key: {key}"), ANTHROPIC_KEY, &key);
    }

    #[test]
    fn slack_tokens_and_webhooks() {
        let bot = format!("xoxb-{}-{}-{}", "2345678901", "3456789012345", mixed(24));
        assert_single(&format!("SLACK {bot}"), SLACK_TOKEN, &bot);
        let path = format!("T{}/B{}/{}", upper(8), upper(10), mixed(24));
        let hook = format!("post to https://hooks.slack.com/services/{path} now");
        assert_single(&hook, SLACK_TOKEN, &path);
    }

    #[test]
    fn stripe_secret_keys_but_not_publishable_keys() {
        for prefix in ["sk_live_", "rk_live_", "sk_test_"] {
            let key = format!("{prefix}{}", mixed(24));
            assert_single(&format!("stripe {key}"), STRIPE_KEY, &key);
        }
        assert_clean(&format!("Stripe.setKey('{}{}')", "pk_live_", mixed(24)));
    }

    #[test]
    fn google_api_key() {
        let key = format!("AIza{}-{}", mixed(20), mixed(14));
        assert_single(&format!("maps?key={key}&v=3"), GOOGLE_API_KEY, &key);
    }

    #[test]
    fn jwt_bearer_token() {
        let token = jwt();
        assert_single(&format!("Authorization: Bearer {token}"), JWT, &token);
    }

    #[test]
    fn token_lookalikes_are_clean() {
        for text in [
            "ghp_short and gho_",
            "github_pat_expiration_notification_days_setting_for_organisation",
            "cargo add sk-learn-style-package-name-that-is-very-long",
            "the task-force-for-the-migration-of-legacy-services met",
            "sk_test_connection_pool is a helper",
            "xoxb-not-a-token",
            "eyJ alone, or eyJhbGciOi.only-two",
            "AKIA and ASIA are prefixes; AKIAshort",
        ] {
            assert_clean(text);
        }
    }

    #[test]
    fn private_key_blocks_of_every_flavour() {
        for label in ["RSA ", "EC ", "DSA ", "OPENSSH ", "ENCRYPTED ", ""] {
            let block = pem(label, 5);
            let text = format!("here:\n{block}\nthanks");
            assert_single(&text, PRIVATE_KEY, &block);
        }
    }

    #[test]
    fn pgp_private_key_block_with_armor_headers() {
        let label = format!("PGP {}", "PRIVATE KEY BLOCK");
        let body = format!(
            "Version: GnuPG v2\n\n{}\n{}\n={}",
            mixed(64),
            mixed(30),
            upper(4)
        );
        let block = format!("-----BEGIN {label}-----\n{body}\n-----END {label}-----");
        assert_single(&format!("{block}\n"), PRIVATE_KEY, &block);
    }

    #[test]
    fn truncated_private_key_is_redacted_to_the_end_of_its_material() {
        let label = format!("RSA {}", "PRIVATE KEY");
        let key = format!("-----BEGIN {label}-----\n{}\n{}", mixed(64), mixed(64));
        assert_single(&key, PRIVATE_KEY, &key);
        let partial = format!(
            "-----BEGIN {label}-----\n{}\n{}",
            mixed(64),
            &mixed(64)[..20]
        );
        let text = format!("{partial}\n... output truncated ...");
        assert_single(&text, PRIVATE_KEY, &partial);
    }

    #[test]
    fn json_escaped_private_key() {
        let label = format!("{}PRIVATE KEY", "");
        let body = format!("{}\\n{}", mixed(64), mixed(12));
        let block = format!("-----BEGIN {label}-----\\n{body}\\n-----END {label}-----");
        assert_single(&format!("{{\"key\":\"{block}\\n\"}}"), PRIVATE_KEY, &block);
    }

    #[test]
    fn truncated_key_followed_by_a_complete_key() {
        let label = format!("EC {}", "PRIVATE KEY");
        let truncated = format!("-----BEGIN {label}-----\n{}", mixed(64));
        let complete = pem("EC ", 2);
        let text = format!("{truncated}\n{complete}\n");
        let kinds: Vec<_> = found(&text);
        assert_eq!(
            kinds,
            vec![(PRIVATE_KEY, truncated), (PRIVATE_KEY, complete)]
        );
    }

    #[test]
    fn pem_parsing_code_is_not_a_private_key() {
        let label = format!("RSA {}", "PRIVATE KEY");
        let code = format!(
            "const BEGIN: &str = \"-----BEGIN {label}-----\";\n\
             const END: &str = \"-----END {label}-----\";\n\
             if line.starts_with(BEGIN) {{ in_key = true; }}\n"
        );
        assert_clean(&code);
    }

    #[test]
    fn url_password_only_the_password_is_redacted() {
        let text = "DATABASE_URL=postgres://app:Sx9-kL2vQ@db.internal:5432/recall";
        assert_single(text, URL_PASSWORD, "Sx9-kL2vQ");
        assert_single("redis://:h8Rt2xQw@cache:6379", URL_PASSWORD, "h8Rt2xQw");
    }

    #[test]
    fn urls_without_passwords_are_clean() {
        for text in [
            "https://user@github.com/org/repo",
            "http://localhost:8080/health",
            "http://[::1]:8080/",
            "postgres://user:password@localhost/db",
            "postgres://postgres:postgres@localhost:5432/db",
            "amqp://guest:guest@localhost",
            "https://user:${TOKEN}@host/path",
            "git@github.com:org/repo.git",
            "cvs://:pserver:anoncvs@sources.example.org:/cvs/src",
            "new URL('https://abc:xyz@example.com')",
        ] {
            assert_clean(text);
        }
    }

    #[test]
    fn env_and_config_assignments() {
        let cases = [
            ("PASSWORD=hunter2-Xy", "hunter2-Xy"),
            ("DB_PASSWORD=Qm9w4TzL", "Qm9w4TzL"),
            ("export API_SECRET=\"abc123XYZ\"", "abc123XYZ"),
            (
                "SECRET_KEY='django-insecure-8f#2kq!'",
                "django-insecure-8f#2kq!",
            ),
            ("TOKEN=Xa8Kq2Zm9Xc4", "Xa8Kq2Zm9Xc4"),
            ("api_key: c4Rt1Vb8Np3L", "c4Rt1Vb8Np3L"),
            ("{\"password\": \"Tr0ub4dor&3\"}", "Tr0ub4dor&3"),
            ("{\\\"db_pass\\\":\\\"Tr0ub4dor&3\\\"}", "Tr0ub4dor&3"),
            ("  clientSecret := \"Zx81_Lq0-w\"", "Zx81_Lq0-w"),
            (
                "curl 'https://api.example.org/v1?x=1&access_token=Hq7Wn2Lp9Zr4'",
                "Hq7Wn2Lp9Zr4",
            ),
            ("$ mysql --password=S3cure!pw db", "S3cure!pw"),
            ("x-api-key: Lp9Zr4Hq7Wn2", "Lp9Zr4Hq7Wn2"),
        ];
        for (text, value) in cases {
            assert_single(text, PASSWORD_ASSIGNMENT, value);
        }
    }

    #[test]
    fn placeholders_and_references_are_not_passwords() {
        for text in [
            "PASSWORD=",
            "PASSWORD=\"\"",
            "DB_PASSWORD=${DB_PASSWORD}",
            "PASSWORD=$PASSWORD",
            "password: <your-password>",
            "PASSWORD=changeme",
            "PASSWORD=change_me_123",
            "API_KEY=xxx",
            "API_KEY=xxxxxxxxxxxx",
            "PASSWORD=********",
            "password = \"...\"",
            "TOKEN=your_token_here",
            "password: example123",
            "token: ${{ secrets.GITHUB_TOKEN }}",
            "password: \"{{ vault_db_password }}\"",
            "password = '%(db_password)s'",
            "PASSWORD=test1234",
            "token=fake-4f9a2",
        ] {
            assert_clean(text);
        }
    }

    #[test]
    fn code_mentioning_passwords_is_not_a_password() {
        for text in [
            "const password = process.env.PASSWORD;",
            "password = os.environ[\"PASSWORD\"]",
            "pub password: String,",
            "token: Option<Token>,",
            "fn login(password: &str) -> bool",
            "let password = read_password();",
            "if password == \"\" { return; }",
            "if (token != null) {}",
            "let token = Token::new(kind);",
            "password = hash_v2(pw)",
            "secret_key = os.urandom(24)",
            "api_key=settings.OPENAI_API_KEY,",
            "api_key = \"OPENAI_API_KEY\"",
            "token = token_v2",
            "password: z.string().min(8)",
            "use crate::auth::token::Claims;",
            "password_hash: String,",
            "let secret: [u8; 32] = rng.gen();",
        ] {
            assert_clean(text);
        }
    }

    #[test]
    fn type_annotations_and_number_constants_are_code() {
        for text in [
            "    colon2_token: Colon2,",
            "    Token: ULONG64,",
            "pub const TOKEN_READ: TOKEN_ACCESS_MASK = 131080u32;",
            "pub const PrivateKeyAttestMask: X509KeyFlag = 12288i32;",
            "WBEMMOF_E_UNRECOGNIZED_TOKEN = 0x8004400a,",
            "let js_token = quote! { js };",
            "fn f(token: Foo2) {}",
            "token: super::super::Win32::Foundation::HANDLE",
        ] {
            assert_clean(text);
        }
    }

    #[test]
    fn prose_after_a_colon_is_not_a_value() {
        assert_clean("@BAG_SECRET: PKCS-12 bag with secret PKCS-9 keys.");
        assert_clean("Token: abc123 was rotated yesterday");
        assert_single(
            "api_key: c4Rt1Vb8Np3L  # prod",
            PASSWORD_ASSIGNMENT,
            "c4Rt1Vb8Np3L",
        );
        let header = "curl -H \"X-Api-Key: Lp9Zr4Hq7Wn2\" https://api.example.org";
        assert_single(header, PASSWORD_ASSIGNMENT, "Lp9Zr4Hq7Wn2");
        assert_single(
            "PASSWORD=Qm9w4TzL ./run.sh",
            PASSWORD_ASSIGNMENT,
            "Qm9w4TzL",
        );
    }

    #[test]
    fn metadata_about_secrets_is_not_a_secret() {
        for text in [
            "max_tokens=4096",
            "{\"input_tokens\": 1234, \"output_tokens\": 56}",
            "TOKEN_TTL=3600",
            "PASSWORD_FILE=/run/secrets/db_password",
            "token_type = \"bearer\"",
            "tokenizer: GPT2Tokenizer",
            "secretName: prod-db-v2",
            "password: \"Enter your password\"",
            "TOKEN_URL=https://oauth2.example.org/token",
            "PWD=/home/dev/recall",
            "compass_heading = 270deg",
        ] {
            assert_clean(text);
        }
    }

    #[test]
    fn values_longer_than_a_credential_are_data() {
        assert_clean(&format!("TOKEN={}", mixed(MAX_VALUE_BYTES + 10)));
        assert_clean(&"password=".repeat(10_000));
        assert_clean(&"token: x, ".repeat(10_000));
    }

    #[test]
    fn redact_replaces_each_secret_with_its_kind() {
        let text = format!("key {} and DB_PASSWORD=Qm9w4TzL\n", aws_key());
        let (out, findings) = redact(&text);
        assert_eq!(
            out,
            "key [REDACTED:aws-access-key] and DB_PASSWORD=[REDACTED:password-assignment]\n"
        );
        assert_eq!(findings.len(), 2);
    }

    #[test]
    fn redact_exact_outputs_for_value_only_kinds() {
        let url = "git clone https://deploy:Sx9-kL2vQ@git.example.org/r.git";
        assert_eq!(
            redact(url).0,
            "git clone https://deploy:[REDACTED:url-password]@git.example.org/r.git"
        );
        let quoted = "export API_SECRET=\"abc123XYZ\" # prod";
        assert_eq!(
            redact(quoted).0,
            "export API_SECRET=\"[REDACTED:password-assignment]\" # prod"
        );
        let block = format!("before\n{}\nafter", pem("", 3));
        assert_eq!(redact(&block).0, "before\n[REDACTED:private-key]\nafter");
    }

    #[test]
    fn clean_text_is_borrowed_not_copied() {
        let text = "Refactor the tokenizer; the password prompt comes next.";
        let (out, findings) = redact(text);
        assert!(matches!(out, Cow::Borrowed(_)));
        assert!(findings.is_empty());
    }

    #[test]
    fn empty_text() {
        assert_eq!(redact("").0, "");
        assert!(scan("").is_empty());
        assert!(!contains_secret(""));
    }

    #[test]
    fn line_and_column_count_characters() {
        let key = aws_key();
        let text = format!("first line\nsecond\n  ünïcødé 🎉 {key}\n");
        let findings = scan(&text);
        assert_eq!(findings.len(), 1);
        assert_eq!((findings[0].line, findings[0].column), (3, 13));
        assert_eq!(
            findings[0].describe(),
            "aws-access-key at line 3, column 13"
        );
        assert_eq!(&text[findings[0].start..findings[0].end], key);
    }

    #[test]
    fn several_secrets_come_back_in_order() {
        let text = format!(
            "{}\nAuthorization: Bearer {}\nPASSWORD=hunter2-Xy\n{}",
            github(),
            jwt(),
            aws_key()
        );
        let kinds: Vec<_> = scan(&text).iter().map(|f| (f.kind, f.line)).collect();
        assert_eq!(
            kinds,
            vec![
                (GITHUB_TOKEN, 1),
                (JWT, 2),
                (PASSWORD_ASSIGNMENT, 3),
                (AWS_ACCESS_KEY, 4)
            ]
        );
    }

    #[test]
    fn overlapping_detections_become_one_specific_finding() {
        let token = github();
        assert_single(&format!("GITHUB_TOKEN={token}"), GITHUB_TOKEN, &token);
        let url = format!("https://x-access-token:{token}@github.com/org/repo");
        assert_single(&url, GITHUB_TOKEN, &token);
        let quoted = format!("TOKEN=\"{token}\"");
        assert_eq!(redact(&quoted).0, "TOKEN=\"[REDACTED:github-token]\"");
    }

    #[test]
    fn contains_secret_agrees_with_scan() {
        assert!(contains_secret(&format!("x {} y", github())));
        assert!(contains_secret("PASSWORD=hunter2-Xy"));
        assert!(!contains_secret("let password = read_password();"));
    }

    #[test]
    fn multibyte_text_around_near_matches_does_not_panic() {
        let label = format!("{}PRIVATE KEY", "");
        for text in [
            "🔑=hunter22🎉".to_owned(),
            "пароль: PASSWORD=пароль123€".to_owned(),
            format!("-----BEGIN {label}-----\n{}é", mixed(70)),
            format!("-----BEGIN {label}-----\\n{}🎉\\n", mixed(41)),
            "AKIAÄÖÜ sk-ant-🎉 ghp_日本 eyJ🎉.x.y https://ü:ö@ä".to_owned(),
            "token=\"unterminated é".to_owned(),
            "password:".to_owned(),
            "=:\"'\\".to_owned(),
        ] {
            let (out, findings) = redact(&text);
            for f in &findings {
                assert!(text.is_char_boundary(f.start) && text.is_char_boundary(f.end));
            }
            assert!(out.len() <= text.len() + 40 * findings.len());
        }
    }

    /// Secret samples that are each detected wherever they stand on a line.
    fn samples() -> Vec<String> {
        vec![
            aws_key(),
            github(),
            jwt(),
            format!("sk-ant-api03-{}", mixed(60)),
            format!("xoxp-{}-{}", "2345678901", mixed(20)),
            "PASSWORD=hunter2-Xy".to_owned(),
            "postgres://app:Sx9-kL2vQ@db/x".to_owned(),
            pem("RSA ", 2),
            "let password = read_password();".to_owned(),
            "https://user@host:8080".to_owned(),
        ]
    }

    fn piece() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<String>(),
            "[a-zA-Z0-9 =:\"'_./@\\\\-]{0,40}",
            prop::sample::select(samples()),
        ]
    }

    proptest! {
        #[test]
        fn redact_never_panics_and_removes_every_value(
            pieces in prop::collection::vec(piece(), 0..8)
        ) {
            let text = pieces.join("\n");
            let (out, findings) = redact(&text);
            let mut last_end = 0;
            for f in &findings {
                prop_assert!(last_end <= f.start && f.start < f.end && f.end <= text.len());
                prop_assert!(text.is_char_boundary(f.start) && text.is_char_boundary(f.end));
                prop_assert!(!out.contains(&text[f.start..f.end]));
                last_end = f.end;
            }
            prop_assert_eq!(findings.is_empty(), matches!(out, Cow::Borrowed(_)));
            prop_assert_eq!(contains_secret(&text), !findings.is_empty());
        }
    }

    /// The kinds of `text`'s findings and the redacted text.
    fn kinds_and_clean(text: &str) -> (Vec<&'static str>, String) {
        let (clean, f) = redact(text);
        (f.iter().map(|x| x.kind).collect(), clean.into_owned())
    }

    /// Regressions (issue probe: these eight were stored instead of redacted
    /// or refused). Each secret is found, and only its value is redacted.
    #[test]
    fn r_pgpassword_is_redacted() {
        let v = format!("Xk9#{}", mixed(12));
        let (kinds, clean) = kinds_and_clean(&format!("PGPASSWORD={v} psql -h db"));
        assert_eq!(kinds, [PASSWORD_ASSIGNMENT]);
        assert_eq!(
            clean,
            "PGPASSWORD=[REDACTED:password-assignment] psql -h db"
        );
    }

    #[test]
    fn r_django_secret_key_with_symbols_is_redacted() {
        let (kinds, clean) = kinds_and_clean(&format!(
            "SECRET_KEY='django-insecure-8f#2kq!{}'",
            mixed(20)
        ));
        assert_eq!(kinds, [PASSWORD_ASSIGNMENT]);
        assert!(!clean.contains("django-insecure"), "{clean}");
    }

    #[test]
    fn r_authorization_bearer_header_is_redacted() {
        let t = mixed(40);
        let (kinds, clean) = kinds_and_clean(&format!(
            "curl -H \"Authorization: Bearer {t}\" https://api"
        ));
        assert_eq!(kinds, [AUTH_HEADER]);
        assert!(clean.contains("Bearer [REDACTED:auth-header]"), "{clean}");
        // A variable is not a secret.
        assert!(
            kinds_and_clean("Authorization: Bearer $API_TOKEN_VALUE_FROM_ENV")
                .0
                .is_empty()
        );
    }

    #[test]
    fn r_curl_user_password_is_redacted() {
        let (kinds, clean) = kinds_and_clean(&format!(
            "curl -u admin:{} https://api.example.com",
            mixed(12)
        ));
        assert_eq!(kinds, [BASIC_AUTH]);
        assert!(
            clean.contains("-u admin:[REDACTED:basic-auth] https"),
            "{clean}"
        );
        assert!(kinds_and_clean("curl -u $USER:$PASS https://x")
            .0
            .is_empty());
    }

    #[test]
    fn r_npm_token_is_redacted() {
        assert_eq!(
            kinds_and_clean(&format!(
                "//registry.npmjs.org/:_authToken=npm_{}",
                mixed(36)
            ))
            .0
            .len(),
            1
        );
        assert_eq!(
            kinds_and_clean(&format!("token npm_{}", mixed(36))).0,
            [NPM_TOKEN]
        );
        assert!(kinds_and_clean("npm_config_cache is set").0.is_empty());
    }

    #[test]
    fn r_azure_account_key_is_redacted() {
        let key = format!("{}{}==", mixed(40), upper(44));
        let conn = format!("DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={key};EndpointSuffix=core.windows.net");
        let (kinds, clean) = kinds_and_clean(&conn);
        assert_eq!(kinds, [AZURE_STORAGE_KEY]);
        assert!(
            clean.contains("AccountKey=[REDACTED:azure-storage-key];EndpointSuffix"),
            "{clean}"
        );
        assert!(kinds_and_clean("AccountKey=<your key here>").0.is_empty());
    }

    #[test]
    fn r_gitlab_token_is_redacted() {
        assert_eq!(
            kinds_and_clean(&format!("export GL=glpat-{}", mixed(20))).0,
            [GITLAB_TOKEN]
        );
        assert!(kinds_and_clean("glpat- tokens expire yearly").0.is_empty());
    }

    #[test]
    fn r_huggingface_token_is_redacted() {
        assert_eq!(
            kinds_and_clean(&format!("login with hf_{}", mixed(34))).0,
            [HUGGINGFACE_TOKEN]
        );
        assert!(
            kinds_and_clean("call hf_hub_download_with_retries_and_cache_dir_option() here")
                .0
                .is_empty()
        );
    }
}
