//! The builtin rule extractor end to end: preferences, decisions and
//! procedures from one session, with provenance, and no fact from a
//! question or a "don't worry".

use super::{env, extract_with, get, list, outcome, sessions_dir, write_session};
use serde_json::json;

#[test]
fn builtin_extractor_finds_preferences_decisions_and_procedures() {
    let env = env();
    let msgs: Vec<(&str, String)> = vec![
        ("user", "I prefer short answers without emojis.".into()),
        (
            "assistant",
            "Understood. I will keep my answers short and plain from here on.".into(),
        ),
        ("user", "Always use pnpm, not npm, in this repo.".into()),
        (
            "assistant",
            "Noted: I switched the install instructions in the README to pnpm and removed package-lock.json.".into(),
        ),
        (
            "user",
            "We decided to use SQLite with WAL. Should we move to Postgres later? Don't worry about the old migrations.".into(),
        ),
        (
            "assistant",
            "I enabled WAL mode when the connection opens and added a busy timeout so concurrent readers do not fail.".into(),
        ),
        ("user", "To run the tests, use `cargo test --all`.".into()),
        ("assistant", "Ran `cargo test --all`: all 112 tests pass.".into()),
    ];
    write_session(&env, "real", "2020-03-01", &msgs);
    env.index(&sessions_dir(&env));
    let r = extract_with(&env, &["--extractor", "builtin"], &[]);
    assert_eq!(outcome(&r, "real")["state"], "done", "{r}");
    let mut got: Vec<(String, String, String)> = list(&env, "auto")
        .iter()
        .map(|x| {
            (
                x["key"].as_str().unwrap().to_string(),
                x["category"].as_str().unwrap().to_string(),
                x["scope"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    got.sort();
    let want = |k: &str, c: &str, s: &str| (k.to_string(), c.to_string(), s.to_string());
    assert_eq!(
        got,
        [
            // A rule for the codebase, filed as `remember` files it
            // (review, stop 58: extraction said preferences).
            want(
                "auto:always-use-pnpm-not-npm-in-this-repo",
                "principles",
                "project"
            ),
            want(
                "auto:i-prefer-short-answers-without-emojis",
                "preferences",
                "user"
            ),
            want("auto:run-the-tests-cargo-test-all", "procedures", "project"),
            want(
                "auto:we-decided-to-use-sqlite-with-wal",
                "decisions",
                "project"
            ),
        ],
        "{r}"
    );
    let pnpm = get(&env, "auto:always-use-pnpm-not-npm-in-this-repo").unwrap();
    assert_eq!(pnpm["text"], "Always use pnpm, not npm, in this repo.");
    assert_eq!(pnpm["origin"]["extractor"], "builtin");
    assert_eq!(pnpm["origin"]["extractor_version"], "1");
    assert_eq!(pnpm["origin"]["session"], "real");
    assert_eq!(pnpm["origin"]["messages"], json!(["m2"]));
    let sqlite = get(&env, "auto:we-decided-to-use-sqlite-with-wal").unwrap();
    assert_eq!(sqlite["text"], "We decided to use SQLite with WAL.");
    assert!(sqlite["confidence"].as_f64().unwrap() >= 0.6);
    // Questions and "don't worry" are not facts.
    let all = list(&env, "auto")
        .iter()
        .map(|x| x["text"].to_string())
        .collect::<String>();
    assert!(
        !all.contains("Postgres") && !all.contains("migrations"),
        "{all}"
    );
}
