//! Credentials in HTTP headers and on command lines: the value of an
//! `Authorization: Bearer|Basic|Token` header (`auth-header`), the password
//! of `curl -u user:password` (`basic-auth`), and the passwords given to
//! `mysql -p<password>` (and `mysqldump`, `mysqladmin`, `mariadb`, ...),
//! `sshpass -p <password>` and `docker login -p <password>` (and
//! `--password`, `podman login`, `nerdctl login`) (`cli-password`). And
//! HTTP basic credentials outside a header (`the header is Basic
//! YWRtaW46…`), when the base64 after `Basic` decodes to `user:password`
//! (`basic-auth`).
//!
//! A detector of its own, not part of [`super::tokens`]: a header's value
//! may be a token of a known format (a JWT), which then keeps its own, more
//! specific kind when the spans merge.
//!
//! Precision policy: variables (`$TOKEN`), placeholders and well-known
//! defaults (`-proot`) are not reported. `mysql -p` takes its password glued
//! to the flag, so `mysql -p dbname` (a prompt, then a database) is not a
//! password; a pipe, `;` or `&` ends the command searched for the flag. A
//! quoted password is redacted inside its quotes, spaces included.

use std::sync::LazyLock;

use aho_corasick::AhoCorasick;
use regex::{Captures, Regex};

use super::urls::url_password_is_real;
use super::values::{has_digit, is_placeholder};
use super::*;

/// The value of a quoted or bare command-line argument, as three
/// alternative groups named `<name>_sq`, `<name>_dq` and `<name>`.
macro_rules! argument {
    ($name:literal) => {
        concat!(
            r"(?:'(?P<",
            $name,
            r"_sq>[^'\n]{1,200})'",
            r"|\x22(?P<",
            $name,
            r"_dq>[^\x22\n]{1,200})\x22",
            r"|(?P<",
            $name,
            r">[^\s\x22';|&]+))"
        )
    };
}

/// Every header and command rule, one alternation driven by the literals
/// `authorization`, `curl`, `mysql`/`mariadb`, `sshpass` and the container
/// tools' names.
static COMMANDS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i:authorization)[\x22']?[ \t]*[:=][ \t]*[\x22']?(?i:bearer|basic|token)[ \t]+(?P<bearer>[A-Za-z0-9._~+/=-]{16,})",
        r"|(?-u:\b)curl(?-u:\b)[^\n]{0,200}?[ \t](?:-u|--user)[ \t]+[\x22']?[^\s:\x22']+:(?P<curl>[^\s\x22']+)",
        r"|(?-u:\b)(?:mysql(?:dump|admin|import|check|show)?|mariadb(?:-dump|-admin)?)(?-u:\b)",
        r"[^\n|;&]{0,200}?[ \t]-p",
        argument!("mysql"),
        r"|(?-u:\b)sshpass(?-u:\b)[^\n|;&]{0,100}?[ \t]-p[ \t]*",
        argument!("sshpass"),
        r"|(?-u:\b)(?:docker|podman|nerdctl)[ \t]+login(?-u:\b)[^\n|;&]{0,200}?[ \t]",
        r"(?:-p[ \t]*|--password(?:[ \t]+|=))",
        argument!("docker"),
    ))
    .expect("command pattern is a valid constant regex")
});

/// The words every rule of [`COMMANDS`] starts from, in any case. Its
/// bounded repeats (`{0,200}` of any character but a line break, in
/// UTF-8) make it the costliest pattern recall compiles: 72 of the 103
/// million instructions a `recall index` of one small, unchanged
/// transcript took, to redact the transcript's path. Text without any of
/// these words (most paths, most prompts) cannot match, so it is not
/// compiled for them.
static TRIGGERS: LazyLock<AhoCorasick> = LazyLock::new(|| {
    AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .build([
            "authorization",
            "curl",
            "mysql",
            "mariadb",
            "sshpass",
            "docker",
            "podman",
            "nerdctl",
        ])
        .expect("the command words are valid constant patterns")
});

pub(super) fn detect_commands(text: &str, out: &mut Vec<Span>) {
    if !TRIGGERS.is_match(text) {
        return;
    }
    for caps in COMMANDS.captures_iter(text) {
        if let Some(span) = command_span(&caps) {
            out.push(span);
        }
    }
}

/// `Basic` and a base64 word: HTTP basic credentials, if it decodes to
/// them.
static BASIC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i:(?-u:\b)basic)[ \t]+([A-Za-z0-9+/]{8,}={0,2})(?:[^A-Za-z0-9+/=]|$)")
        .expect("a valid constant regex")
});

/// HTTP basic credentials given anywhere (a header's are found by
/// [`detect_commands`]): the base64 after `Basic` that decodes to
/// `user:password`, both printable and without blanks, so a word after
/// "basic" in prose is not one.
pub(super) fn detect_basic_credentials(text: &str, out: &mut Vec<Span>) {
    use base64::Engine as _;
    for caps in BASIC.captures_iter(text) {
        let Some(m) = caps.get(1) else { continue };
        let Ok(decoded) = base64::engine::general_purpose::STANDARD.decode(m.as_str()) else {
            continue;
        };
        let credentials = std::str::from_utf8(&decoded)
            .ok()
            .and_then(|t| t.split_once(':'));
        let printable = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_graphic());
        if credentials.is_some_and(|(user, pass)| printable(user) && printable(pass)) {
            out.push(Span {
                start: m.start(),
                end: m.end(),
                kind: BASIC_AUTH,
            });
        }
    }
}

/// The credential of whichever rule matched, if it is not a variable or a
/// placeholder.
fn command_span(caps: &Captures<'_>) -> Option<Span> {
    let password = |v: &str| url_password_is_real(v) && !v.starts_with('$');
    let (m, kind) = if let Some(v) = caps.name("bearer") {
        let real = has_digit(v.as_str()) && !is_placeholder(v.as_str());
        (v, real.then_some(AUTH_HEADER)?)
    } else if let Some(v) = caps.name("curl") {
        (v, password(v.as_str()).then_some(BASIC_AUTH)?)
    } else {
        let v = [
            "mysql",
            "mysql_sq",
            "mysql_dq",
            "sshpass",
            "sshpass_sq",
            "sshpass_dq",
            "docker",
            "docker_sq",
            "docker_dq",
        ]
        .iter()
        .find_map(|g| caps.name(g))?;
        (v, password(v.as_str()).then_some(CLI_PASSWORD)?)
    };
    Some(Span {
        start: m.start(),
        end: m.end(),
        kind,
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;

    /// The trigger words stand in for the pattern only if every text the
    /// pattern matches holds one: each rule, in the cases it matches.
    #[test]
    fn every_text_the_commands_match_holds_a_trigger_word() {
        let t = mixed(24);
        let texts = [
            format!("AUTHORIZATION: Bearer {t}"),
            format!("authorization=token {t}"),
            format!("curl -s --user bob:{t} https://x"),
            format!("mysqldump -uroot -p{t} db"),
            format!("mariadb-admin -u a -p'{t}'"),
            format!("sshpass -p {t} ssh host"),
            format!("docker login -u me --password={t} registry"),
            format!("podman login -p {t} quay.io"),
            format!("nerdctl login -p \"{t}\" r"),
        ];
        for text in &texts {
            assert!(COMMANDS.is_match(text), "{text}");
            assert!(TRIGGERS.is_match(text), "{text}");
        }
        let quiet = format!("/home/me/.claude/projects/app/{t}.jsonl");
        assert!(!TRIGGERS.is_match(&quiet) && !COMMANDS.is_match(&quiet));
    }

    /// Regression (review, stop 60): basic credentials outside a header
    /// (`the header is Basic YWRtaW46…`) were stored; base64 that does not
    /// decode to `user:password` after "basic" is not one.
    #[test]
    fn r_basic_credentials_outside_a_header_are_found() {
        let (kinds, clean) =
            kinds_and_clean("Basic auth header is Basic YWRtaW46UzNjcjN0UGFzcw== for staging");
        assert_eq!(kinds, [BASIC_AUTH]);
        assert!(
            clean.contains("is Basic [REDACTED:basic-auth] for"),
            "{clean}"
        );
        for text in [
            "a basic understanding of the code",
            "basic SGVsbG8gd29ybGQ= is hello world",
            "Basic dXNlcjo= has an empty password",
        ] {
            assert!(kinds_and_clean(text).0.is_empty(), "{text}");
        }
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

    /// Regression (issue #26: `mysql -p<password>` was stored as is).
    #[test]
    fn r26_mysql_password_on_the_command_line_is_redacted() {
        let pw = format!("S{}", mixed(9));
        let bare = format!("mysql -h db -u app -p{pw} appdb");
        assert_single(&bare, CLI_PASSWORD, &pw);
        let quoted = format!("mysqldump -u app -p'{pw} x' app > dump.sql");
        assert_single(&quoted, CLI_PASSWORD, &format!("{pw} x"));
        let maria = format!("mariadb -uroot -p\"{pw}\" -e 'select 1'");
        assert_single(&maria, CLI_PASSWORD, &pw);
    }

    #[test]
    fn r26_mysql_without_a_password_is_clean() {
        for text in [
            "mysql -p",
            "mysql -u root -p appdb",
            "mysql -u root -p -h db appdb",
            "mysql -uroot -p$MYSQL_PWD app",
            "mysql -uroot -proot app",
            "mysql -P 3306 -h db --protocol=tcp",
            "mysql -e 'select 1' | perl -pe 's/a/b/'",
            "run mysql with -p to be asked for the password",
        ] {
            assert_clean(text);
        }
    }

    /// Regression (issue #37: a bearer token holding `test` or `xxx` in
    /// any case was taken for a placeholder).
    #[test]
    fn r37_bearer_tokens_holding_a_placeholder_word_are_redacted() {
        for t in [
            format!("9f{}k{}", "Test", mixed(26)),
            format!("{}AxXxG{}", upper(14), mixed(21)),
        ] {
            let text = format!("curl -H 'Authorization: Bearer {t}' https://api");
            assert_single(&text, AUTH_HEADER, &t);
        }
        for text in [
            "Authorization: Bearer your-token-here-1234",
            "Authorization: Bearer test_token_1234567890",
            "Authorization: Bearer <token-goes-here-1234>",
        ] {
            assert_clean(text);
        }
    }

    /// Regression (issue #37: `docker login -p <password>` was stored as
    /// is).
    #[test]
    fn r37_docker_login_password_is_redacted() {
        let pw = format!("S{}-x", mixed(11));
        for text in [
            format!("docker login -u deploy -p {pw} registry.example.org"),
            format!("docker login --username deploy --password={pw} r.example.org"),
            format!("docker login --password {pw} r.example.org"),
            format!("podman login -u deploy -p '{pw}' quay.io"),
            format!("nerdctl login -p\"{pw}\" r.example.org"),
        ] {
            assert_single(&text, CLI_PASSWORD, &pw);
        }
        for text in [
            "docker login -u deploy --password-stdin r.example.org",
            "echo \"$PW\" | docker login --username u --password-stdin",
            "docker login -u deploy -p $REGISTRY_PASSWORD r.example.org",
            "docker login -u deploy -p \"${REGISTRY_PASSWORD}\" r.example.org",
            "docker run -p 8080:80 nginx",
            "docker login r.example.org && docker run -p 8080:80 nginx",
            "docker login -p",
        ] {
            assert_clean(text);
        }
    }

    /// Regression (issue #26: `sshpass -p '<pw>'` was stored as is).
    #[test]
    fn r26_sshpass_password_is_redacted() {
        let pw = format!("S{}-x", mixed(9));
        let quoted = format!("sshpass -p '{pw}' ssh deploy@host");
        assert_single(&quoted, CLI_PASSWORD, &pw);
        let glued = format!("sshpass -p{pw} scp f host:/tmp");
        assert_single(&glued, CLI_PASSWORD, &pw);
    }

    #[test]
    fn r26_sshpass_without_a_password_is_clean() {
        for text in [
            "sshpass -p \"$SSHPASS\" ssh host",
            "sshpass -e ssh host",
            "sshpass -f ~/.pw ssh -p 2222 host",
            "sshpass -p password ssh host",
        ] {
            assert_clean(text);
        }
    }
}
