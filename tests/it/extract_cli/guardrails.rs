//! Every guardrail between an extractor's facts and the records: short
//! sessions skipped, input capped, at most five facts, the confidence
//! floor, near-duplicates in a batch and against the store, slug keys,
//! updates in place, secrets, manual records never overwritten (a
//! hand-edited auto record included), and nothing new from an unchanged
//! session.

use super::{
    auto_keys, chat, env, fact, get, indexed_session, list, outcome, record_snapshot, sessions_dir,
    status, write_session, Fake,
};
use crate::common::{contains_bytes, record_files, snapshot};
use serde_json::{json, Value};

#[test]
fn short_transcript_is_skipped_with_a_reason_and_no_records() {
    let env = env();
    let fake = Fake::new(&env);
    fake.answer(vec![fact(
        "decisions",
        "fact of {{session}}",
        "The {{session}} session taught us to pin the toolchain version.",
        0.9,
    )]);
    // 199 characters of text in all: skipped. 200: extracted.
    write_session(
        &env,
        "short",
        "2020-03-01",
        &[("user", "u".repeat(100)), ("assistant", "a".repeat(99))],
    );
    write_session(
        &env,
        "enough",
        "2020-03-01",
        &[("user", "u".repeat(100)), ("assistant", "a".repeat(100))],
    );
    env.index(&sessions_dir(&env));
    let r = fake.extract(&env, &[]);
    let short = outcome(&r, "short");
    assert_eq!(short["state"], "skipped", "{r}");
    assert!(
        short["reason"].as_str().unwrap().contains("200"),
        "the reason says why: {short}"
    );
    assert_eq!(short["kept"], json!([]));
    assert_eq!(outcome(&r, "enough")["state"], "done", "{r}");
    let called: Vec<Value> = fake.calls().iter().map(|c| c["session"].clone()).collect();
    assert_eq!(
        called,
        [json!("enough")],
        "the extractor never sees 'short'"
    );
    assert_eq!(auto_keys(&env), ["auto:fact-of-enough"]);
    let st = status(&env);
    assert_eq!(st["short"]["state"], "skipped");
    assert!(st["short"]["reason"].as_str().unwrap().contains("200"));
}

#[test]
fn command_input_is_capped_at_12000_chars() {
    let env = env();
    let fake = Fake::new(&env);
    fake.answer(vec![]);
    let mut msgs = vec![(
        "user",
        "Please migrate the whole billing module to the new ledger API.".to_string(),
    )];
    for i in 0..40 {
        let role = if i % 2 == 0 { "assistant" } else { "user" };
        msgs.push((
            role,
            format!("step {i}: {}", "ledger entries balance out. ".repeat(60)),
        ));
    }
    let total: usize = msgs.iter().map(|(_, t)| t.chars().count()).sum();
    assert!(total > 60_000, "the session is long: {total}");
    write_session(&env, "long", "2020-03-01", &msgs);
    env.index(&sessions_dir(&env));
    fake.extract(&env, &[]);
    let calls = fake.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    let n = calls[0]["transcript_chars"].as_u64().unwrap();
    assert!(n <= 12_000, "transcript of {n} chars sent to the command");
    assert!(n >= 6_000, "the cap still sends a useful amount: {n}");
    let req = fake.request("long");
    let transcript = req["transcript"].as_str().unwrap();
    assert!(
        transcript.starts_with("user: Please migrate the whole billing module"),
        "the first request is kept: {}",
        &transcript[..80]
    );
    assert_eq!(req["max_facts"], 5);
    assert_eq!(req["session"]["id"], "long");
}

#[test]
fn at_most_five_facts_per_session() {
    let env = env();
    indexed_session(&env, "s1");
    let fake = Fake::new(&env);
    let texts = [
        ("pnpm", "Install JavaScript packages with pnpm."),
        ("port", "The API server listens on port 8080 behind nginx."),
        (
            "utc",
            "Timestamps are stored in UTC and rendered in local time.",
        ),
        (
            "flags",
            "Feature flags live in LaunchDarkly, never in env files.",
        ),
        ("deploys", "Deploys go through the staging cluster first."),
        ("migrations", "Database migrations must be reversible."),
        ("logging", "Structured logging uses JSON lines on stderr."),
        (
            "retries",
            "HTTP clients retry idempotent calls three times.",
        ),
    ];
    let facts: Vec<Value> = texts
        .iter()
        .enumerate()
        .map(|(i, (k, t))| fact("decisions", k, t, 0.95 - 0.04 * i as f64))
        .collect();
    fake.answer(facts);
    let r = fake.extract(&env, &[]);
    assert_eq!(r["report"]["records"], 5, "{r}");
    // The five most confident are kept.
    assert_eq!(
        auto_keys(&env),
        [
            "auto:deploys",
            "auto:flags",
            "auto:pnpm",
            "auto:port",
            "auto:utc"
        ]
    );
    assert_eq!(record_files(&env.home()).len(), 5);
    let dropped = outcome(&r, "s1")["dropped"].as_array().unwrap().clone();
    assert_eq!(dropped.len(), 3, "{dropped:?}");
    assert!(dropped
        .iter()
        .all(|d| d.as_str().unwrap().contains("limit of 5")));
}

#[test]
fn facts_below_confidence_threshold_are_dropped() {
    let env = env();
    indexed_session(&env, "s1");
    let fake = Fake::new(&env);
    fake.answer(vec![
        fact(
            "decisions",
            "half sure",
            "Cache entries expire after ten minutes.",
            0.5,
        ),
        fact(
            "decisions",
            "almost",
            "Releases are tagged from the main branch only.",
            0.59,
        ),
        fact(
            "decisions",
            "sure enough",
            "Use pnpm workspaces for the monorepo.",
            0.6,
        ),
    ]);
    let r = fake.extract(&env, &[]);
    assert_eq!(auto_keys(&env), ["auto:sure-enough"], "{r}");
    let dropped = outcome(&r, "s1")["dropped"].to_string();
    assert!(dropped.contains("half sure: confidence 0.50"), "{dropped}");
    assert!(dropped.contains("almost: confidence 0.59"), "{dropped}");
    let rec = get(&env, "auto:sure-enough").unwrap();
    assert_eq!(rec["confidence"], 0.6);
}

#[test]
fn near_duplicate_facts_in_one_batch_become_one_record() {
    let env = env();
    indexed_session(&env, "s1");
    let fake = Fake::new(&env);
    fake.answer(vec![
        fact(
            "decisions",
            "sqlite wal",
            "We decided to use SQLite with WAL for the local cache.",
            0.7,
        ),
        fact(
            "decisions",
            "sqlite cache",
            "We decided to use SQLite with WAL for the local cache!",
            0.8,
        ),
        fact(
            "procedures",
            "staging",
            "Deploys go through the staging cluster first.",
            0.7,
        ),
    ]);
    let r = fake.extract(&env, &[]);
    // The more confident of the two near-identical facts wins.
    assert_eq!(
        auto_keys(&env),
        ["auto:sqlite-cache", "auto:staging"],
        "{r}"
    );
    assert_eq!(record_files(&env.home()).len(), 2);
    let dropped = outcome(&r, "s1")["dropped"].to_string();
    assert!(dropped.contains("duplicate of kept candidate"), "{dropped}");
}

#[test]
fn fact_near_duplicate_of_an_existing_record_is_not_stored() {
    let env = env();
    indexed_session(&env, "s1");
    env.add(
        "decisions",
        "sqlite",
        "We decided to use SQLite with WAL for the local cache.",
    );
    let fake = Fake::new(&env);
    fake.answer(vec![
        fact(
            "decisions",
            "sqlite cache",
            "we decided: use SQLite with WAL for local cache",
            0.9,
        ),
        fact(
            "procedures",
            "staging",
            "Deploys go through the staging cluster first.",
            0.7,
        ),
    ]);
    let r = fake.extract(&env, &[]);
    assert_eq!(auto_keys(&env), ["auto:staging"], "{r}");
    let dropped = outcome(&r, "s1")["dropped"].to_string();
    assert!(
        dropped.contains("duplicate of existing record"),
        "{dropped}"
    );
    // The extractor was told about the existing record, too.
    let existing = fake.request("s1")["existing"].to_string();
    assert!(existing.contains("SQLite with WAL"), "{existing}");
}

#[test]
fn auto_keys_are_normalised_slugs() {
    let env = env();
    indexed_session(&env, "s1");
    let fake = Fake::new(&env);
    fake.answer(vec![
        fact(
            "preferences",
            "Use PNPM, not npm!!",
            "Use pnpm, not npm, for installs.",
            0.8,
        ),
        fact(
            "procedures",
            "  --Run__the::tests--  ",
            "Run the tests with `cargo test --all`.",
            0.8,
        ),
    ]);
    fake.extract(&env, &[]);
    assert_eq!(
        auto_keys(&env),
        ["auto:run-the-tests", "auto:use-pnpm-not-npm"]
    );
    let rec = get(&env, "auto:use-pnpm-not-npm").expect("found by its slug key");
    assert_eq!(rec["text"], "Use pnpm, not npm, for installs.");
}

#[test]
fn changed_session_updates_the_auto_record_with_the_same_key() {
    let env = env();
    let mut msgs = chat("upsert");
    let path = write_session(&env, "s1", "2020-03-01", &msgs);
    env.index(&path);
    let fake = Fake::new(&env);
    let old = "Use pnpm, not npm, for installing packages.";
    let new = "Always install JavaScript dependencies with pnpm; CI rejects npm lockfiles.";
    fake.answer(vec![fact("preferences", "Use PNPM, not npm!!", old, 0.8)]);
    fake.extract(&env, &[]);
    let first = get(&env, "auto:use-pnpm-not-npm").unwrap();
    assert_eq!(first["text"], old);

    // The session goes on (still long idle), is re-indexed, and the
    // extractor now words the same fact differently.
    msgs.push((
        "user",
        "Also: CI now rejects npm lockfiles, so pnpm is mandatory.".into(),
    ));
    write_session(&env, "s1", "2020-03-01", &msgs);
    env.index(&path);
    fake.answer(vec![fact("preferences", "Use PNPM, not npm!!", new, 0.85)]);
    let r = fake.extract(&env, &[]);
    assert_eq!(outcome(&r, "s1")["state"], "done", "{r}");
    assert_eq!(
        fake.calls().len(),
        2,
        "the changed session was extracted again"
    );

    assert_eq!(auto_keys(&env), ["auto:use-pnpm-not-npm"]);
    let second = get(&env, "auto:use-pnpm-not-npm").unwrap();
    assert_eq!(second["text"], new);
    assert_eq!(
        second["id"], first["id"],
        "updated in place, not re-created"
    );
    assert_eq!(second["confidence"], 0.85);
    let files = record_files(&env.home());
    assert_eq!(files.len(), 1, "{files:?}");
    let body = std::fs::read_to_string(&files[0]).unwrap();
    assert!(body.contains(new) && !body.contains(old), "{body}");
}

#[test]
fn secrets_in_facts_are_never_stored() {
    let env = env();
    indexed_session(&env, "s1");
    let secret = format!("ghp_{}", "a1B2".repeat(9));
    let fake = Fake::new(&env);
    fake.answer(vec![
        fact(
            "procedures",
            "ci token",
            &format!("CI pushes releases with the token {secret} from the vault."),
            0.9,
        ),
        fact(
            "procedures",
            &format!("token {secret}"),
            "Release pushes authenticate with the GitHub token from the vault.",
            0.9,
        ),
        fact(
            "procedures",
            "staging",
            "Deploys go through the staging cluster first.",
            0.7,
        ),
    ]);
    let r = fake.extract(&env, &[]);
    assert_eq!(
        auto_keys(&env),
        ["auto:staging"],
        "only the clean fact is kept: {r}"
    );
    for (path, bytes) in snapshot(&env.home()) {
        assert!(
            !contains_bytes(&bytes, secret.as_bytes()),
            "the secret was stored in {}",
            path.display()
        );
    }
}

#[test]
fn manual_records_are_never_overwritten_or_deleted() {
    let env = env();
    indexed_session(&env, "s1");
    // Manual records that hold exactly the keys the extractor will produce,
    // in both scopes.
    env.add(
        "preferences",
        "auto:use-pnpm",
        "Yarn is fine for the docs site.",
    );
    env.add_user(
        "preferences",
        "auto:prefer-tabs",
        "Spaces everywhere, whatever the extractor thinks.",
    );
    let before = record_snapshot(&env);
    assert_eq!(before.len(), 2);
    let fake = Fake::new(&env);
    let mut tabs = fact(
        "preferences",
        "Prefer tabs",
        "I prefer tabs over spaces in every project.",
        0.9,
    );
    tabs["scope"] = json!("user");
    fake.answer(vec![
        fact(
            "preferences",
            "Use pnpm",
            "Use pnpm for every package install.",
            0.9,
        ),
        tabs,
    ]);
    let r = fake.extract(&env, &[]);
    assert_eq!(r["report"]["records"], 0, "{r}");
    let dropped = outcome(&r, "s1")["dropped"].to_string();
    assert_eq!(
        dropped.matches("a manual record has this key").count(),
        2,
        "{dropped}"
    );
    assert_eq!(before, record_snapshot(&env), "manual files untouched");
    assert!(auto_keys(&env).is_empty());
    assert_eq!(
        get(&env, "auto:use-pnpm").unwrap()["source"],
        "manual",
        "still the manual record"
    );
}

#[test]
fn second_run_over_unchanged_sessions_creates_nothing() {
    let env = env();
    write_session(&env, "s1", "2020-03-01", &chat("alpha"));
    write_session(&env, "s2", "2020-03-02", &chat("bravo"));
    env.index(&sessions_dir(&env));
    let fake = Fake::new(&env);
    fake.answer(vec![fact(
        "incidents",
        "{{session}} flake",
        "The {{session}} flake came from the file watcher racing the assertion.",
        0.8,
    )]);
    let r = fake.extract(&env, &[]);
    assert_eq!(r["report"]["records"], 2, "{r}");
    let records = record_snapshot(&env);
    let listed = list(&env, "auto");
    let states = status(&env);

    let r2 = fake.extract(&env, &[]);
    assert_eq!(r2["report"]["sessions"], 0, "{r2}");
    assert_eq!(r2["report"]["records"], 0, "{r2}");
    assert_eq!(fake.calls().len(), 2, "the extractor is not called again");
    assert_eq!(records, record_snapshot(&env));
    assert_eq!(listed, list(&env, "auto"));
    assert_eq!(states, status(&env));
}

/// Regression: a user who rewrote an extracted record's text with
/// `record update` lost it to the next extraction of the same fact, because
/// the record stayed `source: auto`.
#[test]
fn r_a_hand_edited_auto_record_is_manual_and_never_overwritten() {
    let env = env();
    indexed_session(&env, "s1");
    let fake = Fake::new(&env);
    fake.answer(vec![fact(
        "decisions",
        "Use pnpm",
        "Use pnpm for every package install.",
        0.9,
    )]);
    fake.extract(&env, &["--session", "s1"]);
    assert_eq!(get(&env, "auto:use-pnpm").unwrap()["source"], "auto");
    env.run(&[
        "record",
        "update",
        "auto:use-pnpm",
        "--text",
        "pnpm, except in the docs site, which uses npm.",
    ]);
    assert_eq!(get(&env, "auto:use-pnpm").unwrap()["source"], "manual");
    indexed_session(&env, "s2");
    let r = fake.extract(&env, &["--session", "s2"]);
    assert_eq!(r["report"]["records"], 0, "{r}");
    let rec = get(&env, "auto:use-pnpm").unwrap();
    assert_eq!(rec["source"], "manual");
    assert!(rec.to_string().contains("except in the docs site"), "{rec}");
}
