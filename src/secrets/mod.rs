//! Secret detection and redaction for everything `recall` stores.
//!
//! This module owns the rules that decide what counts as a secret (API keys,
//! tokens, private keys, credentials in URLs, command lines and `.env`-style
//! assignments) and the two operations built on them: [`scan`] reports where
//! secrets are, and [`redact`] replaces each one with `[REDACTED:<kind>]`.
//! Records that contain a secret are refused, and every transcript chunk and
//! extracted fact is redacted before indexing, so the scan runs over
//! gigabytes of text.
//!
//! The rules live in one file per family, each with its own precision
//! policy: fixed-format vendor tokens (`tokens.rs`), credentials in HTTP
//! headers and on command lines (`commands.rs`), credentials in the config
//! files that name them, `.netrc` and Docker's `config.json`
//! (`config_files.rs`), private key blocks (`private_keys.rs`), passwords
//! in URLs (`urls.rs`), `KEY=value` assignments (`assignments.rs`), a
//! password stated in a sentence (`prose.rs`), and the
//! value heuristics the password rules share (`values.rs`). This file runs
//! them and turns their spans into findings. Names built from text (slugs,
//! keys, ids, file names) go through [`redacted_slug`] and [`redact_id`]
//! (`names.rs`), which redact before they slug; the paths of files recall
//! stores and prints go through [`redact_path`], and [`find_path`] finds a
//! redacted path's file again (`paths.rs`).
//!
//! Speed: clean text must cost about one pass. The detectors run in turn,
//! each a regex whose search starts from literals (`AKIA`, `ghp_`, `eyJ`,
//! `-----BEGIN`, `://`, `token`, `Password`, ...), so the regex engine's SIMD
//! literal prefilter skips clean text and the precise checks only run near a
//! candidate. Every search is linear in the text (bounded windows, no
//! re-scanning), and [`redact`] hands clean text back borrowed.
//!
//! What gets redacted is the secret value only: for assignments and URL
//! passwords the value after `=`/`:` or between `:` and `@`; for Slack webhooks
//! the path after `/services/`; for private keys the whole block, BEGIN and
//! END lines included (up to the last line of key material when the END line
//! is missing). Overlapping detections merge into one finding that covers
//! them all and keeps the most specific kind (`TOKEN=ghp_...` is a
//! `github-token`).

mod assignments;
mod commands;
mod config_files;
mod names;
mod paths;
mod private_keys;
mod prose;
mod tokens;
mod urls;
mod values;

use std::borrow::Cow;
use std::cmp::Reverse;

pub use names::{redact_id, redacted_slug};
pub use paths::{find_path, redact_path};

use assignments::detect_assignments;
use commands::{detect_basic_credentials, detect_commands};
use config_files::detect_config_files;
use private_keys::detect_private_keys;
use prose::{detect_prose_aws_secrets, detect_prose_passwords, detect_prose_tokens};
use tokens::{detect_discord_tokens, detect_telegram_tokens, detect_tokens};
use urls::detect_url_passwords;

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
const PASSWORD_IN_TEXT: &str = "password-in-text";
const TOKEN_IN_TEXT: &str = "token-in-text";
const NPM_TOKEN: &str = "npm-token";
const GITLAB_TOKEN: &str = "gitlab-token";
const HUGGINGFACE_TOKEN: &str = "huggingface-token";
const AZURE_STORAGE_KEY: &str = "azure-storage-key";
const AUTH_HEADER: &str = "auth-header";
const BASIC_AUTH: &str = "basic-auth";
const PYPI_TOKEN: &str = "pypi-token";
const TWILIO_KEY: &str = "twilio-key";
const SENDGRID_KEY: &str = "sendgrid-key";
const DISCORD_TOKEN: &str = "discord-token";
const SHOPIFY_TOKEN: &str = "shopify-token";
const MAILGUN_KEY: &str = "mailgun-key";
const TELEGRAM_TOKEN: &str = "telegram-token";
const DIGITALOCEAN_TOKEN: &str = "digitalocean-token";
const DOCKER_HUB_TOKEN: &str = "docker-hub-token";
const CLI_PASSWORD: &str = "cli-password";
const DOCKER_AUTH: &str = "docker-auth";
const NETRC_PASSWORD: &str = "netrc-password";
const VAULT_TOKEN: &str = "vault-token";
const GOOGLE_OAUTH_SECRET: &str = "google-oauth-secret";
const AGE_SECRET_KEY: &str = "age-secret-key";
const DATABRICKS_TOKEN: &str = "databricks-token";
const GRAFANA_TOKEN: &str = "grafana-token";
const LINEAR_KEY: &str = "linear-key";
const POSTMAN_KEY: &str = "postman-key";
const SENTRY_DSN: &str = "sentry-dsn";

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
        URL_PASSWORD | AUTH_HEADER | BASIC_AUTH | CLI_PASSWORD | DOCKER_AUTH | NETRC_PASSWORD => 3,
        PASSWORD_ASSIGNMENT | PASSWORD_IN_TEXT | TOKEN_IN_TEXT => 4,
        _ => 1,
    }
}

type Detector = fn(&str, &mut Vec<Span>);

/// All detectors; each appends its candidates in any order.
const DETECTORS: [Detector; 12] = [
    detect_tokens,
    detect_discord_tokens,
    detect_telegram_tokens,
    detect_commands,
    detect_basic_credentials,
    detect_config_files,
    detect_private_keys,
    detect_url_passwords,
    detect_assignments,
    detect_prose_passwords,
    detect_prose_aws_secrets,
    detect_prose_tokens,
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
mod test_support {
    //! Fake secrets are assembled at run time from pieces, so no file of this
    //! module holds anything that looks like a real credential to other
    //! scanners. Shared by the tests of every rule file.

    use super::*;

    /// Deterministic letters and digits in mixed case, free of the vowels that
    /// would spell placeholder words (`test`, `token`, `example`, ...).
    pub(super) fn mixed(n: usize) -> String {
        const ALPHABET: &[u8] = b"a7Kq2Zm9Xc4Rt1Vb8Np3Ls6Hd0Wf5Jg";
        (0..n)
            .map(|i| char::from(ALPHABET[(i * 7 + 3) % ALPHABET.len()]))
            .collect()
    }

    /// Deterministic letters only, in mixed case (no digit).
    pub(super) fn letters(n: usize) -> String {
        const ALPHABET: &[u8] = b"KqZmXcRtVbNpLsHdWfJgaBkC";
        (0..n)
            .map(|i| char::from(ALPHABET[(i * 5 + 1) % ALPHABET.len()]))
            .collect()
    }

    /// Deterministic lowercase hex digits, letters and digits mixed.
    pub(super) fn hex(n: usize) -> String {
        const ALPHABET: &[u8] = b"3f9a0c7e1b5d2846";
        (0..n)
            .map(|i| char::from(ALPHABET[(i * 3 + 2) % ALPHABET.len()]))
            .collect()
    }

    pub(super) fn upper(n: usize) -> String {
        mixed(n).to_ascii_uppercase()
    }

    pub(super) fn aws_key() -> String {
        format!("AKIA{}", upper(16))
    }

    pub(super) fn github() -> String {
        format!("ghp_{}", mixed(36))
    }

    pub(super) fn jwt() -> String {
        format!("eyJhbGciOiJIUzI1NiJ9.eyJ{}.{}", mixed(20), mixed(43))
    }

    pub(super) fn pem(label: &str, body_lines: usize) -> String {
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
    pub(super) fn found(text: &str) -> Vec<(&'static str, String)> {
        scan(text)
            .into_iter()
            .map(|f| (f.kind, text[f.start..f.end].to_owned()))
            .collect()
    }

    pub(super) fn assert_single(text: &str, kind: &str, value: &str) {
        assert_eq!(found(text), vec![(kind, value.to_owned())], "in {text:?}");
    }

    pub(super) fn assert_clean(text: &str) {
        assert_eq!(found(text), vec![], "in {text:?}");
        assert!(!contains_secret(text), "contains_secret in {text:?}");
    }

    /// The kinds of `text`'s findings and the redacted text.
    pub(super) fn kinds_and_clean(text: &str) -> (Vec<&'static str>, String) {
        let (clean, f) = redact(text);
        (f.iter().map(|x| x.kind).collect(), clean.into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::*;
    use super::*;
    use proptest::prelude::*;

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
            format!("mysql -u app -p{} db", mixed(10)),
            format!("machine h.example.org login u password {}", mixed(12)),
            format!("{}:AA{}", "123456789", mixed(33)),
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
}
