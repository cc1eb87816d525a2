//! Passwords in URLs (`url-password`): `scheme://user:password@host`.
//!
//! Only the password is redacted. Precision policy: it needs 4+ characters
//! and skips placeholders and well-known defaults (`password`, `pass`,
//! `postgres`, `guest`, `admin`, `root`, ...) and port-like numbers; a `:`
//! inside the password ends the match (real URLs percent-encode it), so
//! `cvs://:pserver:user@host` is not reported.

use std::sync::LazyLock;

use regex::Regex;

use super::values::is_placeholder;
use super::*;

static URL_PASSWORD_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"[A-Za-z][A-Za-z0-9+.-]*://",
        r#"[^\s:/?#@"'<>\[\]]*:(?P<password>[^\s:/?#@"'<>]+)@[A-Za-z0-9\[]"#,
    ))
    .expect("URL password pattern is a valid constant regex")
});

pub(super) fn detect_url_passwords(text: &str, out: &mut Vec<Span>) {
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
pub(super) fn url_password_is_real(pw: &str) -> bool {
    let port_like = pw.len() <= 5 && pw.bytes().all(|b| b.is_ascii_digit());
    pw.chars().count() >= 4 && !port_like && !is_placeholder(pw)
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
        ] {
            assert_clean(text);
        }
    }
}
