//! Exit codes and hostile input: no hits exit 1 in every format and say
//! what was searched; no query, however broken, is an error.

use std::collections::BTreeMap;

use super::{corpus, fixture_message_order, hits, output_problems, query, query_json};
use crate::common::Env;
use serde_json::Value;

#[test]
fn no_hits_exit_1_in_every_format() {
    let env = corpus();
    for fmt in ["snippets", "prompt", "json"] {
        let (code, out, err) = query(&env, &["--format", fmt, "xylophone quagmire"]);
        assert_eq!(code, 1, "{fmt}: {err}");
        if fmt == "json" {
            let v: Value = serde_json::from_str(&out).unwrap();
            assert_eq!(hits(&v).len(), 0);
            assert!(output_problems(&v, &BTreeMap::new()).is_empty());
        } else {
            assert!(out.trim().is_empty(), "{fmt}: {out:?}");
        }
    }
    // Regression (issue probe: no hits printed nothing, so a mistyped
    // --home looked exactly like "no match"): stderr says what was searched.
    let (_, _, err) = query(&env, &["xylophone quagmire"]);
    assert!(err.contains("no hits in home"), "{err}");
    assert!(err.contains("project scope"), "{err}");
    assert!(err.contains(" records, "), "{err}");
    assert!(err.contains(" passages, "), "{err}");
    // Regression: an empty query said "no hits in home …", as if memory
    // held nothing. It exits 1 with no hits, as any query may, and says
    // the query was empty.
    for empty in [&[""][..], &["   "], &["--query-file", "/dev/null"]] {
        let (code, out, err) = query(&env, empty);
        assert_eq!((code, out.trim()), (1, ""), "{empty:?}: {err}");
        assert!(
            err.contains("empty query: nothing to search for"),
            "{empty:?}: {err}"
        );
        assert!(!err.contains("no hits in home"), "{empty:?}: {err}");
    }
    // A home that holds nothing yet: no hits, not an error, and it says so.
    let empty = Env::new();
    let (code, _, err) = query(&empty, &["redis"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(&format!("no hits in home {}", empty.home().display())),
        "{err}"
    );
    // Regression (issue probe: a --max-tokens below about 85 printed
    // nothing): it says that nothing fits, and what to do.
    let (code, out, err) = query(&env, &["--format", "prompt", "--max-tokens", "5", "redis"]);
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    assert!(err.contains("nothing fits in 5 tokens"), "{err}");
    assert!(err.contains("raise --max-tokens"), "{err}");
    // And hits give 0.
    assert_eq!(query(&env, &["redis"]).0, 0);
}

#[test]
fn hostile_queries_never_error() {
    let env = corpus();
    let long_words = "checkout redis pool ".repeat(5000);
    let junk: String = (0..100_000u32)
        .map(|i| char::from_u32(0x21 + (i * 7919) % 0x5e).unwrap())
        .collect();
    let mut queries: Vec<String> = [
        "\"",
        "\"\"\"",
        "\"redis",
        "a AND",
        "OR OR NOT",
        "NOT redis",
        "redis NOT pool",
        "NEAR(redis pool, 2)",
        "col:value",
        "records_fts:redis",
        "-x",
        "^start",
        "(((",
        ")",
        "*",
        "redis*",
        "{body}: x",
        "emoji 🦀 crab 🔥",
        "'; DROP TABLE records; --",
        "\\",
        "%_%",
        "..",
        "../../etc/passwd",
        "\u{202e}rtl\u{200b}zw",
        "ä ö ü ß ﬁ",
        "日本語のテスト",
        "E0502 std::io::Error src/a.rs HashMap parse_config_file",
        "--",
        "-",
        " ",
        "\t\n",
        "a",
        "the of and",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    queries.push(long_words);
    queries.push(junk);
    for q in &queries {
        let (code, v) = query_json(&env, &["--", q]);
        assert!(code <= 1, "{q:.40?}");
        let problems = output_problems(&v, &fixture_message_order());
        assert!(problems.is_empty(), "{q:.40?}: {problems:?}");
    }
    // Through stdin and a query file: bytes that are not UTF-8, NUL, empty.
    for bytes in [
        b"redis \xff\xfe pool \x00 checkout".to_vec(),
        b"\x00\x00\x00".to_vec(),
        Vec::new(),
        vec![0xC3; 1000],
        "NEAR(\"redis\" OR".as_bytes().to_vec(),
    ] {
        let out = env
            .cmd()
            .args(["query", "--format", "json"])
            .write_stdin(bytes.clone())
            .output()
            .unwrap();
        let code = out.status.code().unwrap();
        assert!(
            code <= 1,
            "stdin {bytes:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["version"], 2);
        let f = env.tmp.path().join("q.txt");
        std::fs::write(&f, &bytes).unwrap();
        let out = env
            .cmd()
            .args(["query", "--format", "prompt", "--query-file"])
            .arg(&f)
            .output()
            .unwrap();
        assert!(out.status.code().unwrap() <= 1, "query file {bytes:?}");
    }
    // The index is intact afterwards.
    assert_eq!(query(&env, &["redis pool"]).0, 0);
}

/// Regression (review, stop 57): a count too big for any number said "is
/// not a whole number", and one above the largest allowed said "use 1 or
/// more". Each says the range.
#[test]
fn counts_out_of_range_say_the_range() {
    let env = Env::new();
    for (given, says) in [
        (
            "18446744073709551615",
            "18446744073709551615 is out of range; use a whole number from 1 to 4294967295",
        ),
        (
            "4294967296",
            "4294967296 is out of range; use a whole number from 1 to 4294967295",
        ),
        (
            "0",
            "0 is out of range; use a whole number from 1 to 4294967295",
        ),
        (
            "ten",
            "'ten' is not a whole number; use a whole number from 1 to 4294967295",
        ),
    ] {
        let out = env
            .cmd()
            .args(["query", "--limit", given, "deploy"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{given}: {err}");
        assert!(err.contains(says), "{given}: {err}");
    }
}
