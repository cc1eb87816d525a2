//! Passwords in URLs (`url-password`): `scheme://user:password@host`, and
//! the key of a Sentry DSN (`sentry-dsn`): `https://<key>@o1.ingest.sentry.io/2`,
//! its key 32 hex digits in the user part (older DSNs add `:<secret>`).
//!
//! Only the password, or the DSN's key (and secret), is redacted. A DSN's
//! key is reported when its host names Sentry or a project number follows
//! it (a self-hosted Sentry); its regex is its own, searched from the
//! literal `://`. Precision policy: it needs 4+ characters
//! and skips placeholders and well-known defaults (`password`, `pass`,
//! `postgres`, `guest`, `admin`, `root`, ...) and port-like numbers; a `:`
//! inside the password ends the match (real URLs percent-encode it), so
//! `cvs://:pserver:user@host` is not reported. A `/` does not: generated
//! passwords (base64) hold it, and a connection string is pasted as it
//! was typed, unencoded. What stands before the first `/` must then not be
//! a port, or the match is a host, its port and a path that holds an `@`
//! (`http://localhost:5173/@vite/client`).

use std::sync::LazyLock;

use regex::Regex;

use super::values::{has_digit, is_placeholder};
use super::*;

static URL_PASSWORD_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"[A-Za-z][A-Za-z0-9+.-]*://",
        r#"[^\s:/?#@"'<>\[\]]*:(?P<password>[^\s:?#@"'<>]+)@[A-Za-z0-9\[]"#,
    ))
    .expect("URL password pattern is a valid constant regex")
});

/// A DSN: 32 hex digits (and an optional `:secret`) as the user of a URL.
static DSN_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"://(?P<key>[0-9a-f]{32})(?::[0-9a-f]{32})?@",
        r"(?P<host>[A-Za-z0-9.-]+)(?::[0-9]{1,5})?(?P<project>/[0-9]+)?",
    ))
    .expect("DSN pattern is a valid constant regex")
});

pub(super) fn detect_url_passwords(text: &str, out: &mut Vec<Span>) {
    detect_dsns(text, out);
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

fn detect_dsns(text: &str, out: &mut Vec<Span>) {
    for caps in DSN_RE.captures_iter(text) {
        let (Some(key), Some(host)) = (caps.name("key"), caps.name("host")) else {
            continue;
        };
        let k = key.as_str();
        let random = has_digit(k) && k.bytes().any(|b| b.is_ascii_alphabetic());
        let sentry =
            host.as_str().to_ascii_lowercase().contains("sentry") || caps.name("project").is_some();
        if random && sentry {
            // The user part ends where `@` stands: after the key, or after
            // the key's secret.
            let end = host.start() - 1;
            out.push(Span {
                start: key.start(),
                end,
                kind: SENTRY_DSN,
            });
        }
    }
}

/// Rejects placeholders, well-known defaults and port-like numbers, and a
/// port followed by a path (`8080/users/` of `host:8080/users/@x`).
pub(super) fn url_password_is_real(pw: &str) -> bool {
    let port_like = |s: &str| s.len() <= 5 && s.bytes().all(|b| b.is_ascii_digit());
    let before_path = pw.split('/').next().unwrap_or_default();
    pw.chars().count() >= 4 && !port_like(before_path) && !is_placeholder(pw)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;

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
            // A port, then a path that holds an `@`.
            "http://localhost:5173/@vite/client",
            "see https://registry.example.org:8443/@scope/pkg@1.2.0 for it",
            "GET http://127.0.0.1:8000/api/users/ana@example.com",
            "https://user:your/password/here@host/db",
            "http://user:pass/word@example.com",
        ] {
            assert_clean(text);
        }
    }

    /// Regression: a password holding a `/` (a generated, base64 one, in
    /// a connection string pasted as typed) was stored as is, because the
    /// `/` ended the match.
    #[test]
    fn r50_a_password_with_a_slash_is_redacted() {
        let text = "Connect with postgres://admin:Kq7v/Tz2mW9x@db.internal:5432/app today";
        assert_single(text, URL_PASSWORD, "Kq7v/Tz2mW9x");
        assert_eq!(
            redact(text).0,
            "Connect with postgres://admin:[REDACTED:url-password]@db.internal:5432/app today"
        );
        let srv = "mongodb+srv://svc:q8L/2xZr+Tw9/Mv=@cluster0.ab1cd.mongodb.net/prod";
        assert_single(srv, URL_PASSWORD, "q8L/2xZr+Tw9/Mv=");
        assert!(contains_secret(srv));
    }

    /// Regression (issue #37: a Sentry DSN's key was stored as is). The
    /// key (and an old DSN's secret) is redacted, the host kept.
    #[test]
    fn r37_sentry_dsn_key_is_redacted() {
        let key = hex(32);
        let dsn = format!("SENTRY_DSN=https://{key}@o4505123.ingest.sentry.io/4505124");
        assert_single(&dsn, SENTRY_DSN, &key);
        assert_eq!(
            redact(&dsn).0,
            "SENTRY_DSN=https://[REDACTED:sentry-dsn]@o4505123.ingest.sentry.io/4505124"
        );
        let secret = hex(40)[8..].to_owned();
        let old = format!("dsn: https://{key}:{secret}@sentry.example.org/12");
        assert_single(&old, SENTRY_DSN, &format!("{key}:{secret}"));
        let hosted = format!("https://{key}@errors.example.org:9000/3");
        assert_single(&hosted, SENTRY_DSN, &key);
        for text in [
            format!("https://{key}@example.org/about"),
            format!("https://example.org/{key}@sentry.io"),
            format!("https://{}@o1.ingest.sentry.io/2", "0".repeat(32)),
            "https://public@sentry.io/1".to_owned(),
        ] {
            assert_clean(&text);
        }
    }
}
