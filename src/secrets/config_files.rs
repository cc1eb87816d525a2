//! Credentials in the config files whose format names them: the `auth`
//! entry of Docker's `config.json` (`docker-auth`, the base64 of
//! `user:password`), and the `password` of a `.netrc` entry
//! (`netrc-password`: `machine <host> login <user> password <pw>`, on one
//! line or several).
//!
//! Neither has a separator a `KEY=value` rule would see (`.netrc` fields
//! are separated by blanks), and `auth` alone does not name a secret in
//! code, so each has a rule tied to its file's shape. Lines may be
//! separated by real newlines or by JSON-escaped `\n` (a transcript quoting
//! the file).
//!
//! Precision policy: a Docker `auth` value is base64 of 12+ characters in
//! whole 4-character groups (Docker pads it), with a digit or mixed case. A
//! `.netrc` password needs the `machine <host>` (or `default`) that opens
//! its entry; with a `login` or `account` field between them it is reported
//! like a URL password (4+ characters, no placeholder or well-known
//! default), without one it must also look like a credential (a letter plus
//! a digit or symbol), so prose such as "the build machine with password
//! authentication" is not reported.

use std::sync::LazyLock;

use regex::Regex;

use super::urls::url_password_is_real;
use super::values::{has_digit, has_mixed_case, value_looks_secret};
use super::*;

/// Docker's `"auth": "<base64>"` (also JSON-escaped) and `.netrc` entries.
static CONFIG_FILES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r#"\\?"auth\\?"[ \t]*:[ \t]*\\?"(?P<docker>[A-Za-z0-9+/]{12,}={0,2})\\?""#,
        r"|(?-u:\b)(?:machine[ \t]+[^\s\\]+|default)",
        r"(?P<fields>(?:(?:\s|\\n)+(?:login|account|port)[ \t]+[^\s\\]+)*)",
        r"(?:\s|\\n)+password[ \t]+(?P<netrc>[^\s\\]+)",
    ))
    .expect("config file pattern is a valid constant regex")
});

pub(super) fn detect_config_files(text: &str, out: &mut Vec<Span>) {
    for caps in CONFIG_FILES.captures_iter(text) {
        let found = if let Some(v) = caps.name("docker") {
            docker_auth_is_real(v.as_str()).then_some((v, DOCKER_AUTH))
        } else if let Some(v) = caps.name("netrc") {
            let labelled = caps.name("fields").is_some_and(|f| !f.is_empty());
            let pw = v.as_str();
            let real = url_password_is_real(pw) && (labelled || value_looks_secret(pw));
            real.then_some((v, NETRC_PASSWORD))
        } else {
            None
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

/// Padded base64 (whole 4-character groups) with a digit or mixed case.
fn docker_auth_is_real(v: &str) -> bool {
    v.len().is_multiple_of(4) && (has_digit(v) || has_mixed_case(v))
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;

    /// Regression (issue #26: a Docker config's `auth` was stored as is).
    #[test]
    fn r26_docker_config_auth_is_redacted() {
        let auth = format!("{}==", mixed(22));
        let config = format!(
            "{{\n  \"auths\": {{\n    \"registry.example.org\": {{\n      \"auth\": \"{auth}\"\n    }}\n  }}\n}}"
        );
        assert_single(&config, DOCKER_AUTH, &auth);
        let escaped = format!("{{\\\"auths\\\":{{\\\"r.io\\\":{{\\\"auth\\\":\\\"{auth}\\\"}}}}}}");
        assert_single(&escaped, DOCKER_AUTH, &auth);
    }

    #[test]
    fn r26_docker_auth_lookalikes_are_clean() {
        for text in [
            "\"auth\": \"basic\"",
            "\"auth\": \"${DOCKER_AUTH}\"",
            "\"auth\": {\"type\": \"oauth2\"}",
            "\"auth\": \"none\"",
            "\"auth\": \"bearer-token-from-env\"",
            "\"auth\": \"enabledforall\"",
        ] {
            assert_clean(text);
        }
    }

    /// Regression (issue #26: a `.netrc` password was stored as is).
    #[test]
    fn r26_netrc_password_is_redacted() {
        let pw = format!("Q{}", mixed(11));
        let lines = format!("machine api.example.org\n  login deploy\n  password {pw}\n");
        assert_single(&lines, NETRC_PASSWORD, &pw);
        let one = format!("machine git.example.org login me password {pw}");
        assert_single(&one, NETRC_PASSWORD, &pw);
        let escaped = format!("\"machine h.example.org\\nlogin me\\npassword {pw}\\n\"");
        assert_single(&escaped, NETRC_PASSWORD, &pw);
        // A letters-only password with a login field is still a password.
        let plain = "machine ftp.example.org login anna password correcthorsebattery";
        assert_single(plain, NETRC_PASSWORD, "correcthorsebattery");
        let default = format!("default login anonymous password {pw}");
        assert_single(&default, NETRC_PASSWORD, &pw);
    }

    #[test]
    fn r26_password_as_a_word_is_not_a_netrc_password() {
        for text in [
            "Enter the password when prompted.",
            "the build machine with password authentication",
            "machine learning password strength model",
            "the default password policy applies",
            "machine api.example.org login deploy password $NETRC_PASSWORD",
            "machine api.example.org login deploy password <your-password>",
            "password hunter2 was in the old notes",
        ] {
            assert_clean(text);
        }
    }
}
