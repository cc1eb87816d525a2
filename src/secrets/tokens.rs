//! Fixed-format vendor tokens: API keys and access tokens whose prefix and
//! alphabet identify them (`AKIA...`, `ghp_...`, `sk-ant-...`, `xoxb-...`).
//!
//! Kinds: `aws-access-key` (`AKIA`/`ASIA` ids), `github-token` (`ghp_`,
//! `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`), `openai-key` (`sk-`,
//! `sk-proj-`, `sk-svcacct-`, ...), `anthropic-key` (`sk-ant-`),
//! `slack-token` (`xox?-`, `xapp-`, webhook URLs), `stripe-key` (`sk_`/`rk_`
//! live and test, `whsec_`), `google-api-key` (`AIza`), `jwt`, `npm-token`
//! (`npm_`), `gitlab-token` (`glpat-` and the other `gl..-` prefixes),
//! `huggingface-token` (`hf_`), `azure-storage-key` (`AccountKey=` in a
//! connection string), `pypi-token` (`pypi-AgE...` macaroons),
//! `twilio-key` (`SK` and 32 hex digits), `sendgrid-key` (`SG.x.y`),
//! `discord-token` (a base64 user id, a timestamp and an HMAC, dotted),
//! `shopify-token` (`shpat_`, `shpss_`, `shpca_`, `shppa_`), `mailgun-key`
//! (`key-` and 32 hex digits), `telegram-token` (a bot id, `:AA` and 33
//! more characters), `digitalocean-token` (`dop_v1_`, `doo_v1_`,
//! `dor_v1_`), `docker-hub-token` (`dckr_pat_`), `vault-token` (`hvs.`,
//! `hvb.`, `hvr.`), `google-oauth-secret` (`GOCSPX-`), `age-secret-key`
//! (`AGE-SECRET-KEY-1`), `databricks-token` (`dapi` and 32 hex digits),
//! `grafana-token` (`glsa_`, `glc_`), `linear-key` (`lin_api_`),
//! `postman-key` (`PMAK-`).
//!
//! Most are one alternation whose every branch starts with a literal, so
//! the regex engine's literal prefilter skips clean text (the vendors of
//! issue #37 are a second one: joined to the first they slowed it down).
//! Two have a regex of their own: a Telegram token starts with digits, which would defeat
//! that prefilter (its own regex is anchored on the inner `:AA`), and a
//! Discord token starts with one of a few dozen short letter prefixes,
//! which made the whole alternation about 40% slower when they joined it.
//! A branch's match is then checked (a digit, mixed case, ...) so that
//! identifiers which merely share a prefix are not reported.
//!
//! Precision policy: Stripe publishable keys (`pk_live_`, `pk_test_`) are
//! public by design and are not reported; secret (`sk_`), restricted (`rk_`)
//! and webhook signing (`whsec_`) keys are, in live and test mode alike.
//! AWS's documented example key (`AKIA...EXAMPLE`) is reported like any
//! other: it is public, but refusing it costs nothing, and a key that merely
//! ends in `EXAMPLE` may well be real. Hex keys (Twilio, Mailgun) need both
//! a digit and a letter, so a run of zeros is not a key. A token is not
//! required to hold a digit where its vendor's alphabet does not promise
//! one: Hugging Face tokens are letters (in both cases, as random letters
//! are), and a GitLab token of one unbroken run of letters is one too
//! (`glpat-tokens-expire-yearly` is prose). A Google key may end in `-` or
//! `_`, so its end is where the run of key characters ends, not a word
//! boundary (issue #37).

use std::sync::LazyLock;

use regex::{Captures, Regex};

use super::values::{has_digit, has_mixed_case, is_placeholder};
use super::*;

/// One alternative of [`TOKENS`]: its capture group, kind and extra check.
struct TokenRule {
    group: &'static str,
    kind: &'static str,
    valid: fn(&str) -> bool,
}

const TOKEN_RULES: [TokenRule; 28] = [
    rule("aws", AWS_ACCESS_KEY, |_| true),
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
    // The pattern takes the whole run of key characters: a key is exactly
    // 39 of them.
    rule("google", GOOGLE_API_KEY, |v| v.len() == 39),
    rule("jwt", JWT, |_| true),
    rule("npm", NPM_TOKEN, has_digit),
    rule("gitlab", GITLAB_TOKEN, |v| {
        let body = v.split_once('-').map_or(v, |(_, b)| b);
        has_digit(body) || has_mixed_case(body) || is_random_run(body)
    }),
    rule("hf", HUGGINGFACE_TOKEN, |v| {
        has_mixed_case(&v[3..]) && (has_digit(&v[3..]) || is_random_letters(&v[3..]))
    }),
    rule("azure", AZURE_STORAGE_KEY, has_digit),
    rule("pypi", PYPI_TOKEN, |_| true),
    rule("twilio", TWILIO_KEY, |v| is_random_hex(&v[2..])),
    rule("sendgrid", SENDGRID_KEY, |v| {
        has_digit(v) || has_mixed_case(v)
    }),
    rule("discord", DISCORD_TOKEN, |v| {
        has_digit(v) && has_mixed_case(v)
    }),
    rule("shopify", SHOPIFY_TOKEN, |v| is_random_hex(&v[6..])),
    rule("mailgun", MAILGUN_KEY, |v| is_random_hex(&v[4..])),
    rule("digitalocean", DIGITALOCEAN_TOKEN, |v| {
        is_random_hex(&v[7..])
    }),
    rule("docker_hub", DOCKER_HUB_TOKEN, |v| {
        has_digit(v) || has_mixed_case(v)
    }),
    rule("vault", VAULT_TOKEN, |v| {
        has_digit(&v[4..]) && has_mixed_case(&v[4..])
    }),
    rule("google_oauth", GOOGLE_OAUTH_SECRET, |v| {
        has_digit(&v[7..]) || has_mixed_case(&v[7..])
    }),
    rule("age", AGE_SECRET_KEY, |_| true),
    rule("databricks", DATABRICKS_TOKEN, |v| is_random_hex(&v[4..36])),
    rule("grafana", GRAFANA_TOKEN, |v| {
        has_digit(v) || has_mixed_case(v)
    }),
    rule("linear", LINEAR_KEY, |v| {
        has_digit(&v[8..]) || has_mixed_case(&v[8..])
    }),
    rule("postman", POSTMAN_KEY, |v| is_random_hex(&v[5..])),
];

/// Hex digits with at least one digit and one letter: a key, not a number
/// or a run of one character.
fn is_random_hex(v: &str) -> bool {
    has_digit(v) && v.bytes().any(|b| b.is_ascii_alphabetic())
}

/// Letters of both cases, each case at least a fifth of them, as random
/// letters have (a Hugging Face token); an identifier in camelCase has far
/// fewer capitals.
fn is_random_letters(v: &str) -> bool {
    let upper = v.bytes().filter(u8::is_ascii_uppercase).count();
    let lower = v.bytes().filter(u8::is_ascii_lowercase).count();
    upper * 5 >= v.len() && lower * 5 >= v.len()
}

/// One unbroken run of letters and digits, not words joined by `-` or `_`
/// and not one character repeated (`xxxx`): a token of one case.
fn is_random_run(v: &str) -> bool {
    !v.contains(['-', '_']) && !is_placeholder(v)
}

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
        r"|(?-u:\b)(?P<google>AIza[A-Za-z0-9_-]{35,})",
        r"|(?-u:\b)(?P<jwt>eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,})",
        r"|(?-u:\b)(?P<npm>npm_[A-Za-z0-9]{36})(?-u:\b)",
        r"|(?-u:\b)(?P<gitlab>gl(?:pat|dt|rt|ptt|cbt|oas)-[A-Za-z0-9_-]{20,})",
        r"|(?-u:\b)(?P<hf>hf_[A-Za-z0-9]{34,})(?-u:\b)",
        r"|AccountKey=(?P<azure>[A-Za-z0-9+/]{40,}={0,2})",
        r"|(?-u:\b)(?P<pypi>pypi-AgE[A-Za-z0-9_-]{50,})",
        r"|(?-u:\b)(?P<twilio>SK[0-9a-f]{32})(?-u:\b)",
        r"|(?-u:\b)(?P<sendgrid>SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})",
        r"|(?-u:\b)(?P<shopify>shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32})(?-u:\b)",
        r"|(?-u:\b)(?P<mailgun>key-[0-9a-f]{32})(?-u:\b)",
        r"|(?-u:\b)(?P<digitalocean>do[opr]_v1_[a-f0-9]{64})(?-u:\b)",
        r"|(?-u:\b)(?P<docker_hub>dckr_pat_[A-Za-z0-9_-]{27,})",
    ))
    .expect("token pattern is a valid constant regex")
});

/// The vendors added by issue #37, an alternation of their own: in
/// [`TOKENS`] they made a scan of the repository's own text about 10%
/// slower, on their own about 4%.
static MORE_TOKENS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?-u:\b)(?P<vault>hv[sbr]\.[A-Za-z0-9_-]{24,})",
        r"|(?-u:\b)(?P<google_oauth>GOCSPX-[A-Za-z0-9_-]{28,})",
        r"|(?-u:\b)(?P<age>AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58})(?-u:\b)",
        r"|(?-u:\b)(?P<databricks>dapi[a-f0-9]{32}(?:-[0-9]{1,3})?)(?-u:\b)",
        r"|(?-u:\b)(?P<grafana>glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2})",
        r"|(?-u:\b)(?P<linear>lin_api_[A-Za-z0-9]{40})(?-u:\b)",
        r"|(?-u:\b)(?P<postman>PMAK-[a-f0-9]{24}-[a-f0-9]{34})(?-u:\b)",
    ))
    .expect("token pattern is a valid constant regex")
});

pub(super) fn detect_tokens(text: &str, out: &mut Vec<Span>) {
    for re in [&*TOKENS, &*MORE_TOKENS] {
        for caps in re.captures_iter(text) {
            if let Some(span) = token_span(&caps) {
                out.push(span);
            }
        }
    }
}

/// A Discord bot token: its first part is the base64 of a decimal user id
/// (17 to 20 digits, 23 to 28 characters), so it starts with one of nine
/// pairs (`1` encodes as `MT`, `9` as `OT`), a letter for the second digit
/// and a character for the third; then a timestamp and an HMAC, dotted.
static DISCORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?-u:\b)(?:M[Tjz]|N[DTjz]|O[DT])[AEIMQUYcgk][w-z0-5][A-Za-z0-9]{19,24}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}")
        .expect("discord pattern is a valid constant regex")
});

pub(super) fn detect_discord_tokens(text: &str, out: &mut Vec<Span>) {
    for m in DISCORD.find_iter(text) {
        if has_digit(m.as_str()) && has_mixed_case(m.as_str()) {
            out.push(Span {
                start: m.start(),
                end: m.end(),
                kind: DISCORD_TOKEN,
            });
        }
    }
}

/// `<bot id>:AA<33 characters>`: a regex of its own (see the module
/// comment), whose search the engine anchors on the literal `:AA`.
static TELEGRAM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?-u:\b)[0-9]{8,10}:AA[A-Za-z0-9_-]{33}")
        .expect("telegram pattern is a valid constant regex")
});

pub(super) fn detect_telegram_tokens(text: &str, out: &mut Vec<Span>) {
    for m in TELEGRAM.find_iter(text) {
        // The pattern ends in 33 ASCII characters.
        let tail = &m.as_str()[m.as_str().len() - 33..];
        if has_digit(tail) || has_mixed_case(tail) {
            out.push(Span {
                start: m.start(),
                end: m.end(),
                kind: TELEGRAM_TOKEN,
            });
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

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;

    #[test]
    fn aws_access_key_in_prose() {
        let key = aws_key();
        assert_single(&format!("the key {key} leaked"), AWS_ACCESS_KEY, &key);
        let temporary = format!("ASIA{}", upper(16));
        assert_single(&format!("id={temporary}"), AWS_ACCESS_KEY, &temporary);
    }

    /// Regression (issue #26: AWS's documented example key was accepted,
    /// while the README said AWS keys are refused). It is refused too.
    #[test]
    fn r26_aws_documented_example_key_is_refused() {
        let key = format!("AKIA{}EXAMPLE", "IOSFODNN7");
        assert_single(&format!("aws_access_key_id = {key}"), AWS_ACCESS_KEY, &key);
    }

    /// A Discord bot token: the base64 of a decimal user id, a timestamp
    /// and an HMAC.
    fn discord() -> String {
        format!(
            "{}{}.{}.{}",
            "MTIz",
            "NDU2Nzg5MDEyMzQ1Njc4",
            "GhIjKl",
            mixed(38)
        )
    }

    /// Regression (issue #26: these tokens were stored as is in every
    /// channel). Each is found whole, with its own kind, in prose and as
    /// the value of an assignment.
    #[test]
    fn r26_vendor_tokens_are_detected() {
        let cases = [
            (format!("pypi-AgEIcHlwaS5vcmc{}", mixed(60)), PYPI_TOKEN),
            (format!("SK{}", hex(32)), TWILIO_KEY),
            (format!("SG.{}.{}", mixed(22), mixed(43)), SENDGRID_KEY),
            (discord(), DISCORD_TOKEN),
            (format!("shpat_{}", hex(32)), SHOPIFY_TOKEN),
            (format!("shpss_{}", hex(32)), SHOPIFY_TOKEN),
            (format!("shpca_{}", hex(32)), SHOPIFY_TOKEN),
            (format!("shppa_{}", hex(32)), SHOPIFY_TOKEN),
            (format!("key-{}", hex(32)), MAILGUN_KEY),
            (format!("123456789:AA{}", mixed(33)), TELEGRAM_TOKEN),
            (format!("dop_v1_{}", hex(64)), DIGITALOCEAN_TOKEN),
            (format!("doo_v1_{}", hex(64)), DIGITALOCEAN_TOKEN),
            (format!("dor_v1_{}", hex(64)), DIGITALOCEAN_TOKEN),
            (format!("dckr_pat_{}", mixed(27)), DOCKER_HUB_TOKEN),
            // GitLab tokens need not hold a digit.
            (format!("glpat-{}", letters(20)), GITLAB_TOKEN),
        ];
        for (token, kind) in cases {
            assert_single(&format!("use {token} here"), kind, &token);
            assert_single(&format!("TOKEN=\"{token}\""), kind, &token);
        }
    }

    #[test]
    fn r26_vendor_token_lookalikes_are_clean() {
        let zeros = format!("SK{}", "0".repeat(32));
        for text in [
            "the key-value store keeps key-value pairs",
            "SKU, SKIP, TASK1234 and SK-1234 are not keys",
            &zeros,
            "pypi-AgE alone, and pypi-packages",
            "shpat_ and dop_v1_ and dckr_pat_ are prefixes",
            "SG.x.y and SG.short.parts",
            "at 12:30, or 123456789:AAbc",
            "Math.floor(x).toFixed(2) and MyClass.method.call()",
            "glpat-tokens-expire-yearly-here",
            "NDU2Nzg5MDEyMzQ1Njc4 alone",
        ] {
            assert_clean(text);
        }
    }

    /// An age secret key's 58 characters, from its bech32 alphabet.
    fn age_key() -> String {
        const BECH32: &[u8] = b"QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L";
        let body: String = (0..58)
            .map(|i| char::from(BECH32[(i * 7 + 3) % BECH32.len()]))
            .collect();
        format!("AGE-SECRET-KEY-1{body}")
    }

    /// Regression (issue #37: a Hugging Face token of letters only, a
    /// Google key ending in `-` or `_` and a GitLab token of lowercase
    /// letters were stored by `record add`, and seven vendors' tokens were
    /// not known at all). Each is found whole, in prose and assigned.
    #[test]
    fn r37_tokens_the_scanner_skipped_are_found() {
        let cases = [
            (format!("hf_{}", letters(34)), HUGGINGFACE_TOKEN),
            (format!("AIza{}-2-", mixed(32)), GOOGLE_API_KEY),
            (format!("AIza{}_", mixed(34)), GOOGLE_API_KEY),
            (format!("glpat-{}", "abcdefghijklmnopqrst"), GITLAB_TOKEN),
            (format!("hvs.{}", mixed(24)), VAULT_TOKEN),
            (format!("hvs.CAESI{}", mixed(86)), VAULT_TOKEN),
            (format!("hvb.AAAAAQ{}", mixed(130)), VAULT_TOKEN),
            (format!("GOCSPX-{}", mixed(28)), GOOGLE_OAUTH_SECRET),
            (age_key(), AGE_SECRET_KEY),
            (format!("dapi{}", hex(32)), DATABRICKS_TOKEN),
            (format!("dapi{}-2", hex(32)), DATABRICKS_TOKEN),
            (format!("glsa_{}_{}", mixed(32), hex(8)), GRAFANA_TOKEN),
            (format!("glc_{}=", mixed(80)), GRAFANA_TOKEN),
            (format!("lin_api_{}", mixed(40)), LINEAR_KEY),
            (format!("PMAK-{}-{}", hex(24), hex(34)), POSTMAN_KEY),
        ];
        for (token, kind) in cases {
            assert_single(&format!("use {token} here"), kind, &token);
            assert_single(&format!("TOKEN=\"{token}\""), kind, &token);
            assert_single(&format!("export VAULT_TOKEN={token}"), kind, &token);
        }
    }

    #[test]
    fn r37_lookalikes_of_the_new_tokens_are_clean() {
        for text in [
            "model = hf_loadPretrainedTokenizerFromHubCacheDir(path)",
            "hf_hub_download_with_retries_and_cache_dir_option",
            "the glpat-xxxxxxxxxxxxxxxxxxxx placeholder",
            "hvs.getHeightForLayoutAndStyleSheet(x)",
            "hvs. alone, GOCSPX- alone, AGE-SECRET-KEY-1 alone, PMAK- alone",
            "dapiCallHandlerRegistry and dapi_version",
            "lin_api_version_header is set",
            "glsa_ and glc_ are prefixes",
        ] {
            assert_clean(text);
        }
        // A run of key characters longer than a Google key is not one.
        assert_clean(&format!("AIza{}", mixed(40)));
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
