//! Credentials in HTTP headers and on command lines: the value of an
//! `Authorization: Bearer|Basic|Token` header (`auth-header`) and the
//! password of `curl -u user:password` (`basic-auth`).
//!
//! A detector of its own, not part of [`super::tokens`]: a header's value
//! may be a token of a known format (a JWT), which then keeps its own, more
//! specific kind when the spans merge. Variables (`$TOKEN`) and
//! placeholders are not reported.

use std::sync::LazyLock;

use regex::Regex;

use super::urls::url_password_is_real;
use super::values::{has_digit, is_placeholder};
use super::*;

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

pub(super) fn detect_headers(text: &str, out: &mut Vec<Span>) {
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

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;

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
}
