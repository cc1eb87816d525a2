//! What extraction reports: a dry run that writes nothing, `--status` for
//! every session state, `record list --source auto`, the `MEMORY.md`-style
//! summary within its budget, why nothing was due, and an unknown session.

use super::{
    auto_keys, chat, env, extract_with, extractor, fact, indexed_session, list, outcome,
    sessions_dir, status, write_session, Fake,
};
use crate::common::{snapshot, Env};
use serde_json::json;

#[test]
fn dry_run_writes_nothing() {
    let env = env();
    indexed_session(&env, "s1");
    env.add("decisions", "manual", "Releases are cut on Tuesdays.");
    let fake = Fake::new(&env);
    fake.answer(vec![fact(
        "incidents",
        "Watcher race",
        "The flaky test raced the file watcher; tests now wait for its first event.",
        0.85,
    )]);
    let before = snapshot(&env.home());
    let r = fake.extract(&env, &["--dry-run"]);
    assert_eq!(r["dry_run"], true);
    assert_eq!(
        r["report"]["records"], 1,
        "reports what it would write: {r}"
    );
    assert_eq!(
        outcome(&r, "s1")["kept"],
        json!(["[project] incidents auto:watcher-race: The flaky test raced the file watcher; tests now wait for its first event."])
    );
    let after = snapshot(&env.home());
    let changed: Vec<_> = after
        .iter()
        .filter(|f| !before.contains(f))
        .map(|f| f.0.display().to_string())
        .collect();
    assert!(changed.is_empty(), "a dry run changed {changed:?}");
    assert_eq!(before.len(), after.len());
    assert!(auto_keys(&env).is_empty());
    assert_eq!(status(&env)["s1"]["state"], "pending");
    // And the real run afterwards still has everything to do.
    let r = fake.extract(&env, &[]);
    assert_eq!(r["report"]["records"], 1, "{r}");
}

/// Regression: a dry run did not see what it would have written for the
/// sessions before, so it listed a fact once per session where the real
/// run writes it once (and drops the repeats as duplicates).
#[test]
fn r_a_dry_run_previews_what_the_real_run_writes() {
    let env = env();
    for s in ["s1", "s2", "s3"] {
        indexed_session(&env, s);
    }
    let fake = Fake::new(&env);
    fake.answer(vec![fact(
        "incidents",
        "Watcher race",
        "The flaky test raced the file watcher; tests now wait for its first event.",
        0.85,
    )]);
    let dry = fake.extract(&env, &["--dry-run"]);
    let real = fake.extract(&env, &[]);
    assert_eq!(real["report"]["records"], 1, "{real}");
    assert_eq!(dry["report"]["records"], real["report"]["records"], "{dry}");
    let kept = |r: &serde_json::Value| -> Vec<usize> {
        ["s1", "s2", "s3"]
            .iter()
            .map(|s| outcome(r, s)["kept"].as_array().unwrap().len())
            .collect()
    };
    assert_eq!(kept(&dry), kept(&real));
}

#[test]
fn status_lists_every_session_state() {
    let env = env();
    write_session(&env, "good", "2020-03-01", &chat("alpha"));
    write_session(&env, "bad", "2020-03-02", &chat("bravo"));
    write_session(&env, "tiny", "2020-03-03", &[("user", "hi".into())]);
    write_session(&env, "untouched", "2020-03-04", &chat("charlie"));
    env.index(&sessions_dir(&env));
    let fake = Fake::new(&env);
    fake.answer(vec![fact(
        "incidents",
        "watcher race",
        "The flaky test raced the file watcher; tests now wait for its first event.",
        0.8,
    )]);
    fake.extract(&env, &["--session", "good"]);
    fake.extract(&env, &["--session", "tiny"]);
    let fail = extractor("fail.sh");
    extract_with(&env, &["--session", "bad", "--extractor-cmd", &fail], &[]);
    let st = status(&env);
    assert_eq!(st.len(), 4, "{st:?}");
    let state = |s: &str| st[s]["state"].as_str().unwrap().to_string();
    assert_eq!(
        [
            state("good"),
            state("bad"),
            state("tiny"),
            state("untouched")
        ],
        ["done", "failed", "skipped", "pending"]
    );
    assert_eq!(st["good"]["facts"], 1);
    assert!(st["good"]["reason"].is_null());
    assert!(st["bad"]["reason"]
        .as_str()
        .unwrap()
        .contains("exit status: 3"));
    assert!(st["tiny"]["reason"].as_str().unwrap().contains("200"));
    assert!(st["good"]["updated"].is_string());
    assert!(st["untouched"]["updated"].is_null());
    // The text form has one line per session.
    let text = env.run(&["extract", "--status"]);
    assert_eq!(text.lines().count(), 4, "{text}");
    assert!(
        text.lines().any(|l| l.starts_with("bad\tfailed\t")),
        "{text}"
    );
    // Each line ends with its transcript file: state is kept per file.
    assert!(
        text.lines()
            .any(|l| l.starts_with("bad\t") && l.contains("bad.jsonl")),
        "{text}"
    );
    assert!(st["bad"]["path"].as_str().unwrap().ends_with("bad.jsonl"));
}

#[test]
fn record_list_source_auto_lists_only_auto_records() {
    let env = env();
    indexed_session(&env, "s1");
    env.add("decisions", "manual-one", "Releases are cut on Tuesdays.");
    let fake = Fake::new(&env);
    fake.answer(vec![
        fact(
            "incidents",
            "watcher race",
            "The flaky test raced the file watcher.",
            0.8,
        ),
        fact(
            "procedures",
            "staging",
            "Deploys go through the staging cluster first.",
            0.7,
        ),
    ]);
    fake.extract(&env, &[]);
    let auto = list(&env, "auto");
    assert_eq!(auto.len(), 2, "{auto:?}");
    assert!(auto.iter().all(|r| r["source"] == "auto"));
    assert_eq!(auto_keys(&env), ["auto:staging", "auto:watcher-race"]);
    let manual = list(&env, "manual");
    assert_eq!(manual.len(), 1);
    assert_eq!(manual[0]["key"], "manual-one");
}

/// Records in both scopes for the summary tests.
fn summary_env() -> Env {
    let env = env();
    indexed_session(&env, "s1");
    let fake = Fake::new(&env);
    fake.answer(vec![
        fact(
            "incidents",
            "watcher race",
            "The flaky test raced the file watcher.",
            0.8,
        ),
        fact(
            "procedures",
            "staging",
            "Deploys go through the staging cluster first.",
            0.7,
        ),
    ]);
    fake.extract(&env, &[]);
    let topics = [
        "billing", "search", "auth", "exports", "payments", "mailer", "cache", "queue", "uploads",
        "reports", "metrics", "webhooks",
    ];
    for t in topics {
        env.add(
            "decisions",
            &format!("{t}-owner"),
            &format!("The {t} module is owned by the platform team; ask them before changing its public API."),
        );
    }
    env.add_user("preferences", "tone", "Keep answers short.");
    env
}

#[test]
fn summary_respects_max_tokens() {
    let env = summary_env();
    let full = env.run(&["summary"]);
    assert!(
        full.contains(
            "- **auto:watcher-race** [incidents]: The flaky test raced the file watcher."
        ),
        "{full}"
    );
    assert!(full.contains("## Preferences"), "{full}");
    let all_lines = full.lines().filter(|l| l.starts_with("- **")).count();
    assert_eq!(all_lines, 15, "{full}");
    let mut previous = 0;
    for budget in [40, 64, 100, 150, 250, 400, 1000] {
        let out = env.run(&["summary", "--max-tokens", &budget.to_string()]);
        let tokens = out.chars().count().div_ceil(4);
        assert!(
            tokens <= budget,
            "--max-tokens {budget}: {tokens} tokens:\n{out}"
        );
        let lines = out.lines().filter(|l| l.starts_with("- **")).count();
        assert!(lines >= previous, "a bigger budget never shows less");
        previous = lines;
        // Every line shown is a line of the full summary.
        for l in out.lines() {
            assert!(
                full.lines().any(|f| f == l),
                "{l:?} not in the full summary"
            );
        }
    }
    assert_eq!(previous, all_lines, "a large budget shows everything");
}

/// With a budget too small for even one record line, the summary must
/// still fit the budget and must not claim that there are no records.
#[test]
fn summary_too_small_for_any_record_stays_in_budget_and_does_not_claim_none() {
    let env = summary_env();
    for budget in [4, 20] {
        let out = env.run(&["summary", "--max-tokens", &budget.to_string()]);
        let tokens = out.chars().count().div_ceil(4);
        assert!(
            tokens <= budget,
            "--max-tokens {budget}: {tokens} tokens:\n{out}"
        );
        assert!(
            !out.contains("no records yet"),
            "--max-tokens {budget} with 15 records says there are none:\n{out}"
        );
    }
}

#[test]
fn summary_write_saves_memory_md() {
    let env = summary_env();
    let printed = env.run(&["summary", "--max-tokens", "200"]);
    let path = env.project_dir().join("MEMORY.md");
    assert!(!path.exists());
    let out = env.run(&["summary", "--max-tokens", "200", "--write"]);
    assert_eq!(out, "", "--write prints nothing on stdout");
    let saved = std::fs::read_to_string(&path).unwrap();
    assert_eq!(saved, printed);
    assert!(saved.starts_with("# Memory of alpha\n"), "{saved}");
    assert!(saved.chars().count().div_ceil(4) <= 200);
}

/// Regression (issue probe: `extract --since 2020-01-01` still extracted
/// nothing from sessions older than `extract.max_age_days` and said only
/// "0 sessions"): nothing due says why, with counts and the fix, and
/// `--since` overrides the age limit.
#[test]
fn r_since_overrides_max_age_and_nothing_due_says_why() {
    let env = Env::new(); // default max_age_days: 30; the session is from 2020
    let p = write_session(&env, "old", "2020-03-01", &chat("parser"));
    env.index(&p);
    let out = env
        .cmd()
        .args(["extract", "--extractor", "builtin"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("0 sessions"), "{stderr}");
    assert!(
        stderr.contains("nothing due: 1 indexed sessions; 1 older than 30 days: pass --since or set extract.max_age_days"),
        "{stderr}"
    );
    let v = extract_with(
        &env,
        &["--extractor", "builtin", "--since", "2020-01-01"],
        &[],
    );
    assert_eq!(v["report"]["sessions"], 1, "{v}");
    // Run again: done and unchanged, and it says so.
    let out = env
        .cmd()
        .args(["extract", "--extractor", "builtin", "--since", "2020-01-01"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("1 already extracted and unchanged"),
        "{stderr}"
    );
}

/// Regression (issue probe: `extract --session <unknown id>` exited 0).
#[test]
fn r_extract_of_an_unknown_session_is_an_error() {
    let env = env();
    indexed_session(&env, "known");
    let out = env
        .cmd()
        .args(["extract", "--session", "nosuch"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("no indexed session with id 'nosuch'"),
        "{stderr}"
    );
    assert!(stderr.contains("recall extract --status"), "{stderr}");
}

/// Regression (review, stop 57): two files holding one session id (a
/// launcher's capture of a session, twice) were reported as the same id
/// twice, with different outcomes and nothing to tell them apart. Each
/// line names its file then; `--json` has the file on every outcome.
#[test]
fn one_session_id_in_two_files_is_told_apart_by_its_file() {
    let env = env();
    let first = write_session(&env, "twin", "2020-03-01", &chat("loader"));
    let second = sessions_dir(&env).join("twin-again.jsonl");
    std::fs::copy(&first, &second).unwrap();
    env.index(&first);
    env.index(&second);
    let v: serde_json::Value = serde_json::from_str(&env.run(&[
        "extract",
        "--json",
        "--dry-run",
        "--since",
        "2020-01-01",
    ]))
    .unwrap();
    let outcomes = v["report"]["outcomes"].as_array().unwrap();
    assert_eq!(outcomes.len(), 2, "{v}");
    for o in outcomes {
        assert!(o["source"].as_str().unwrap().ends_with(".jsonl"), "{o}");
    }
    let out = env.run(&["extract", "--since", "2020-01-01"]);
    let lines: Vec<&str> = out.lines().filter(|l| l.starts_with("twin")).collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("twin [") && l.contains("twin.jsonl]")),
        "{out}"
    );
    assert!(
        lines.iter().any(|l| l.contains("twin-again.jsonl]")),
        "{out}"
    );
}

/// Regression: `extract --status` said `done` for a session that grew
/// since it was extracted, while the next run took it again.
#[test]
fn r_status_says_a_session_changed_since_extraction_is_pending() {
    let env = env();
    let path = indexed_session(&env, "grown");
    extract_with(&env, &[], &[]);
    assert_eq!(status(&env)["grown"]["state"], "done");
    let line = json!({"role": "user", "content": "One more thing about the watcher.",
        "id": "m9", "timestamp": "2020-03-01T11:00:00Z"});
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(&format!("{line}\n"));
    std::fs::write(&path, text).unwrap();
    env.index(&path);
    let st = &status(&env)["grown"];
    assert_eq!(st["state"], "pending", "{st}");
    assert_eq!(st["reason"], "changed since it was extracted", "{st}");
    let r = extract_with(&env, &[], &[]);
    assert_eq!(r["report"]["sessions"], 1, "{r}");
    // Regression: `--session ID` of a session already done printed the
    // project's backlog, not a word about the session asked for.
    let out = env
        .cmd()
        .args(["extract", "--session", "grown"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("nothing due: session grown was extracted and has not changed since"),
        "{err}"
    );
}

/// Regression: deleting an extracted record said nothing, and the fact came
/// back with the session's next change. Delete now says so and names
/// archiving, and an archived extracted record stays archived when its
/// session gives the fact again (and only that fact).
#[test]
fn r_deleting_an_extracted_record_says_archive_keeps_it_out() {
    let env = env();
    let path = indexed_session(&env, "s1");
    let fake = Fake::new(&env);
    fake.answer(vec![fact(
        "incidents",
        "Watcher race",
        "The flaky test raced the file watcher; tests now wait for its first event.",
        0.85,
    )]);
    fake.extract(&env, &[]);
    let out = env
        .cmd()
        .args(["record", "delete", "auto:watcher-race"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("recall record archive auto:watcher-race"),
        "{err}"
    );
    // It comes back with the session's next change; archived, it stays out.
    let grow = |n: usize| {
        let line = json!({"role": "user", "content": format!("And another thing {n}."),
            "id": format!("x{n}"), "timestamp": "2020-03-01T11:00:00Z"});
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str(&format!("{line}\n"));
        std::fs::write(&path, text).unwrap();
        env.index(&path);
    };
    grow(1);
    fake.extract(&env, &[]);
    assert_eq!(auto_keys(&env), ["auto:watcher-race"]);
    env.run(&["record", "archive", "auto:watcher-race"]);
    grow(2);
    fake.extract(&env, &[]);
    let rec = env.run_json(&["record", "get", "auto:watcher-race", "--format", "json"]);
    assert_eq!(rec["status"], "archived", "{rec}");
    // Regression (review, stop 60): another fact under that key went into
    // the archived record, and so was never recalled. It is news: live.
    fake.answer(vec![fact(
        "incidents",
        "Watcher race",
        "Release notes are generated by git-cliff from the conventional commits.",
        0.85,
    )]);
    grow(3);
    let r = fake.extract(&env, &[]);
    let rec = env.run_json(&["record", "get", "auto:watcher-race", "--format", "json"]);
    assert_eq!(rec["status"], "active", "{rec}");
    // And the report says which fact the key's record held before (it
    // printed `+` as for a new record).
    let kept = outcome(&r, "s1")["kept"].to_string();
    assert!(
        kept.contains("(replaces: The flaky test raced the file watcher"),
        "{kept}"
    );
    let out = env.run(&["query", "git-cliff release notes"]);
    assert!(out.contains("auto:watcher-race"), "{out}");
}
