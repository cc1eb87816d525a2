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
