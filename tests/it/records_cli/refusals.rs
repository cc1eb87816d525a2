//! What a record write refuses, leaving the disk as it was: a secret, bad
//! input of every field, a body over the configured cap.

use crate::common::{snapshot, Env};
use predicates::prelude::*;

#[test]
fn secret_is_refused_and_nothing_is_written() {
    let env = Env::new();
    let token = format!("ghp_{}", "a1B2".repeat(9));
    env.cmd()
        .args([
            "record",
            "add",
            "--category",
            "incidents",
            "--key",
            "leak",
            &format!("the token is {token}"),
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("github-token"))
        .stderr(predicate::str::contains("--redact"));
    assert!(!env.home().exists(), "a refused write created files");

    env.run(&[
        "record",
        "add",
        "--redact",
        "--category",
        "incidents",
        "--key",
        "leak",
        &format!("the token is {token}"),
    ]);
    let md = env.run(&["record", "get", "leak"]);
    assert!(md.contains("[REDACTED:github-token]"), "{md}");
    assert!(!md.contains(&token));
}

#[test]
fn bad_input_is_refused_and_leaves_disk_unchanged() {
    let env = Env::new();
    env.add("decisions", "existing", "Something true.");
    let before = snapshot(&env.home());
    let long_key = "k".repeat(256);
    let long_body = "x".repeat(2001);
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--category", "chores", "--key", "a", "t"],
            "unknown category 'chores'",
        ),
        (
            vec!["--category", "decisions", "--key", "", "t"],
            "the key is empty",
        ),
        (
            vec!["--category", "decisions", "--key", &long_key, "t"],
            "the limit is 255",
        ),
        (
            vec!["--category", "decisions", "--key", "big", &long_body],
            "the limit is 2000",
        ),
        (
            vec![
                "--category",
                "decisions",
                "--key",
                "imp",
                "--importance",
                "101",
                "t",
            ],
            "out of range",
        ),
        (
            vec!["--category", "decisions", "--key", "empty", "  "],
            "text is empty",
        ),
        (
            vec![
                "--category",
                "decisions",
                "--key",
                "s",
                "--scope",
                "team",
                "t",
            ],
            "unknown scope",
        ),
    ];
    for (args, msg) in cases {
        let mut full = vec!["record", "add"];
        full.extend(args.iter());
        env.cmd()
            .args(&full)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(msg));
        assert_eq!(before, snapshot(&env.home()), "disk changed after {args:?}");
    }
}

#[test]
fn body_cap_is_configurable() {
    let env = Env::new();
    std::fs::create_dir_all(env.home()).unwrap();
    std::fs::write(
        env.home().join("config.toml"),
        "[records]\nmax_body_chars = 10\n",
    )
    .unwrap();
    env.cmd()
        .args([
            "record",
            "add",
            "--category",
            "decisions",
            "--key",
            "k",
            "more than ten characters",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("the limit is 10"));
    env.cmd()
        .env("RECALL_MAX_BODY_CHARS", "100")
        .args([
            "record",
            "add",
            "--category",
            "decisions",
            "--key",
            "k",
            "more than ten characters",
        ])
        .assert()
        .success();
}

/// Regression (reviews, stop 59): what a write accepted, the reader then
/// refused or kept garbled. A text holding git conflict marker lines (a
/// procedure about resolving conflicts) was written, and the next rebuild
/// skipped it as an unresolved merge; a NUL byte went into the file as it
/// was; CRLF text kept its `\r` in what queries and hooks print; and a key
/// with a space at its end made a second record of one fact.
#[test]
fn r_a_write_refuses_what_the_reader_would_refuse_and_cleans_what_it_keeps() {
    let env = Env::new();
    let conflict = "Resolve a lock conflict like\n\n```\n<<<<<<< HEAD\nv = \"1\"\n=======\nv = \"2\"\n>>>>>>> main\n```\n";
    env.cmd()
        .args([
            "record",
            "add",
            "--category",
            "procedures",
            "--key",
            "lock",
            conflict,
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("merge conflict marker"))
        .stderr(predicate::str::contains("indent the marker lines"));
    env.cmd()
        .args([
            "record",
            "add",
            "--category",
            "decisions",
            "--key",
            "nul",
            "a\u{1}b",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("control character U+0001"));
    assert!(!env.home().exists(), "a refused write created files");
    // Indented, the same text is a record a rebuild keeps.
    let indented = conflict
        .replace("\n<", "\n    <")
        .replace("\n=", "\n    =")
        .replace("\n>", "\n    >");
    env.add("procedures", "lock", &indented);
    env.run(&["reindex", "--full"]);
    assert!(env
        .run(&["record", "get", "lock"])
        .contains("    <<<<<<< HEAD"));
    // CRLF in, LF out.
    env.add("decisions", "crlf", "Line one.\r\nLine two.");
    let v = env.query_json("alpha", "line two");
    assert!(v.to_string().contains("Line one.\\nLine two."), "{v}");
    assert!(!v.to_string().contains("\\r"), "{v}");
    // One key, whatever spaces it is given with.
    env.add("decisions", "package manager", "We use pnpm.");
    env.add("decisions", "package manager ", "We use pnpm 9.");
    let list = env.run(&["record", "list", "--format", "json"]);
    let keys: Vec<serde_json::Value> = serde_json::from_str::<serde_json::Value>(&list)
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["key"].clone())
        .collect();
    assert_eq!(
        keys.iter()
            .filter(|k| k.as_str().unwrap().starts_with("package manager"))
            .count(),
        1,
        "{list}"
    );
    assert!(env
        .run(&["record", "get", "package manager"])
        .contains("We use pnpm 9."));
}

/// Regression (review, stop 59): a record keyed with another record's id
/// was written, and then every command (`get`, `delete`, a PATCH through
/// the REST API) given that key reached the other record, since ids are
/// looked up first. And the same fact stated again rewrote its file with a
/// new `updated` (churn in a committed record, and a false recency).
#[test]
fn r_a_key_that_is_another_records_id_is_refused_and_a_restated_fact_changes_nothing() {
    let env = Env::new();
    let id = env.add("decisions", "deploy", "Deploys go through make ship-it.");
    env.cmd()
        .args([
            "record",
            "add",
            "--category",
            "decisions",
            "--key",
            &id,
            "Another fact.",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "the key '{id}' is the id of the record 'deploy'"
        )));
    let path = env.project_dir().join(format!("records/decisions/{id}.md"));
    let before = std::fs::read(&path).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    env.add("decisions", "deploy", "Deploys go through make ship-it.");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "restated, the file is as it was"
    );
    env.add(
        "decisions",
        "deploy",
        "Deploys go through make ship-it, from main.",
    );
    assert_ne!(std::fs::read(&path).unwrap(), before);
}
