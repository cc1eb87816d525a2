//! `.env`-style and code assignments: `KEY=value`, `"key": "value"`,
//! `key: value` (`password-assignment`), and AWS secret access keys assigned
//! to `aws_secret_access_key` and its spellings (`aws-secret-key`).
//!
//! Code mentions `token` and `password` often, so the search is an
//! earliest-end regex without capture groups, anchored on the key words'
//! literals, and the key around a hit and the value after it are parsed by
//! hand.
//!
//! Precision policy: the key must name a secret (`password`, `pass`, `pwd`,
//! `secret`, `token`, `api_key`, ..., `PGPASSWORD` included) and its last
//! word must not be metadata (`_file`, `_path`, `_url`, `_len`, `_type`,
//! ...); the value must look like a credential (see
//! [`super::values::value_looks_secret`]); and after `key:` no more words
//! may follow (`secret: PKCS-12 bag with ...` is prose).

use regex::Regex;
use std::sync::LazyLock;

use super::values::{
    has_mixed_case, is_identifier, is_passphrase, listed, literal_looks_secret, value_looks_secret,
};
use super::*;

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

pub(super) fn detect_assignments(text: &str, out: &mut Vec<Span>) {
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
    } else if (value_looks_secret(value) && key_names_secret(key))
        || (key_names_password(key) && words_password(text, key, start, sep_end, value))
    {
        PASSWORD_ASSIGNMENT
    } else {
        return None;
    };
    Some(Span { start, end, kind })
}

/// A password made only of letters, which [`value_looks_secret`] leaves
/// for want of a digit or symbol: a hyphenated passphrase anywhere, or any
/// long word written as a literal, quoted (`password = "correcthorse"`)
/// or in a shell or `.env` assignment (`PGPASSWORD=silverfoxjumps`). A
/// bare `password: word` stays code (`password: string`, a type).
fn words_password(text: &str, key: &str, start: usize, sep_end: usize, value: &str) -> bool {
    let bytes = text.as_bytes();
    let quoted = start > 0 && matches!(bytes[start - 1], b'"' | b'\'');
    let env = bytes[sep_end - 1] == b'='
        && start == sep_end
        && !key.bytes().any(|b| b.is_ascii_lowercase());
    is_passphrase(value) || ((quoted || env) && literal_looks_secret(value))
}

/// Does this key name a password (`DB_PASSWORD`, `pwd`, `passphrase`),
/// whose values people make of words, rather than a token or key, which
/// are random?
fn key_names_password(key: &str) -> bool {
    let words = key_words(key);
    let Some(last) = words.last() else {
        return false;
    };
    !listed(METADATA_WORDS, last)
        && words.iter().any(|w| {
            listed("password passwd passphrase pass pwd", w)
                || w.ends_with("password")
                || w.ends_with("passwd")
        })
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
        && has_mixed_case(value);
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

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;

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

    /// Regression (issue #26): AWS's documented example secret key is
    /// refused like the example access key.
    #[test]
    fn r26_aws_documented_example_secret_key_is_refused() {
        let secret = format!("{}/{}/{}", "wJalrXUtnFEMI", "K7MDENG", "bPxRfiCYEXAMPLEKEY");
        let ini = format!("aws_secret_access_key = {secret}");
        assert_single(&ini, AWS_SECRET_KEY, &secret);
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

    /// Regression (review, stop 62): passwords made of words were stored
    /// by `remember`, extraction and the index.
    #[test]
    fn r_passwords_made_of_words_are_secrets() {
        for (text, value) in [
            (
                "DB_PASSWORD=maple-river-stone-cloud",
                "maple-river-stone-cloud",
            ),
            ("PGPASSWORD=silverfoxjumps", "silverfoxjumps"),
            (
                "password=\"correct-horse-battery-staple\"",
                "correct-horse-battery-staple",
            ),
            ("db_password: 'silverfoxjumps'", "silverfoxjumps"),
            (
                "password: maple-river-stone-cloud",
                "maple-river-stone-cloud",
            ),
        ] {
            assert_single(text, PASSWORD_ASSIGNMENT, value);
        }
        // A word after a bare `password:` is a type or a name, and a
        // template or a variable is no value.
        for text in [
            "password: string",
            "password: Password",
            "PASSWORD=changeme",
            "PASSWORD=$DB_PASSWORD",
            "password = \"{{ vault_password }}\"",
            "PASSWORD_FILE=/run/secrets/db",
            "TOKEN=abcdefghijk",
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

    /// Regression (issue #37: a random value holding `pass`, `token`,
    /// `sample`, `test` or `xxx` was taken for a placeholder and stored by
    /// `record add`). A placeholder is made of such words; these are not.
    #[test]
    fn r37_random_values_holding_a_placeholder_word_are_secrets() {
        for (key, value) in [
            ("DB_PASSWORD", format!("Passw0rd!{}", 2024)),
            ("DB_PASSWORD", format!("Kq7v{}Z2mW9", "Token")),
            ("api_key", format!("Zq81{}R7tY3u", "sample")),
            ("SECRET", format!("9f{}k{}", "Test", mixed(20))),
            ("API_TOKEN", format!("{}AxXxG{}", upper(12), mixed(20))),
            ("password", format!("{}-pass{}", mixed(6), mixed(6))),
        ] {
            let text = format!("{key}={value}");
            assert_single(&text, PASSWORD_ASSIGNMENT, &value);
        }
    }

    /// Values made of placeholder words stay placeholders under the rule of
    /// issue #37.
    #[test]
    fn r37_values_made_of_placeholder_words_are_not_passwords() {
        for text in [
            "PASSWORD=testpassword123",
            "PASSWORD=Password-2024!",
            "TOKEN=your-api-key-here",
            "API_KEY=sample_key_1",
            "PASSWORD=Test1234!",
            "secret=mysecret123",
            "token=xxxx-xxxx-1234",
            "PASSWORD=CHANGE_ME_2",
            "api_key=YOUR_API_KEY",
            "password: <token>",
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

    /// Regression (issue probe: eight kinds were stored instead of redacted
    /// or refused; the others are in `tokens` and `commands`). Each secret is
    /// found, and only its value is redacted.
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

    /// Regression (issue #26's probe: a password ending in `!` was taken
    /// for a macro call such as `quote!` and stored as is).
    #[test]
    fn r26_password_ending_in_a_bang_is_redacted() {
        let v = format!("Zq{}!", mixed(12));
        assert_single(&format!("PGPASSWORD={v} psql"), PASSWORD_ASSIGNMENT, &v);
        assert_clean("let js_token = quote! { js };");
        assert_clean("token = format!(\"{x}\")");
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
}
