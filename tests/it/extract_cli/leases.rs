//! Leases: concurrent runs never process a session twice, a session another
//! run finished is not claimed again, stale leases expire (at once when
//! their process is gone), a crashed retry is retried, and concurrent runs
//! that propose one new key make one record.

use std::collections::BTreeMap;
use std::process::{Child, Stdio};

use super::{
    auto_keys, chat, env, extract_with, extractor, fact, indexed_session, outcome, sessions_dir,
    status, unix_now, write_session, Fake,
};
use crate::common::wait::until;
use crate::common::{assert_success, record_files, Env};
use rusqlite::Connection;
use serde_json::{json, Value};

/// `recall extract --json ARGS` as a background process.
fn spawn_extract(env: &Env, args: &[&str], vars: &[(String, String)]) -> Child {
    let mut c = env.std_cmd();
    c.arg("extract")
        .arg("--json")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in vars {
        c.env(k, v);
    }
    c.spawn().unwrap()
}

fn finish(child: Child) -> Value {
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "extract failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn calls_per_session(fake: &Fake) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for c in fake.calls() {
        *m.entry(c["session"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    m
}

#[test]
fn concurrent_runs_never_process_a_session_twice() {
    let env = env();
    for i in 0..20 {
        write_session(
            &env,
            &format!("s{i:02}"),
            &format!("2020-03-{:02}", i + 1),
            &chat(&format!("topic{i}")),
        );
    }
    env.index(&sessions_dir(&env));
    let fake = Fake::new(&env);
    fake.answer(vec![]);
    let mut vars = fake.vars();
    vars.push(("FAKE_EXTRACT_SLEEP_MS".into(), "100".into()));
    let cmd = extractor("facts.py");
    let args = ["--extractor-cmd", cmd.as_str()];
    let a = spawn_extract(&env, &args, &vars);
    let b = spawn_extract(&env, &args, &vars);
    let (ra, rb) = (finish(a), finish(b));
    let calls = calls_per_session(&fake);
    assert_eq!(calls.len(), 20, "every session processed: {calls:?}");
    let twice: Vec<_> = calls.iter().filter(|(_, n)| **n != 1).collect();
    assert!(twice.is_empty(), "processed more than once: {twice:?}");
    let done = ra["report"]["done"].as_u64().unwrap() + rb["report"]["done"].as_u64().unwrap();
    assert_eq!(done, 20, "{ra}\n{rb}");
    assert!(status(&env).values().all(|s| s["state"] == "done"));
}

/// Deterministic version of the race above: run A holds `s1` (the newest
/// session) while run B, started meanwhile, extracts `s2`; when A then
/// reaches `s2`, it must see that `s2` is already done.
#[test]
fn session_finished_by_another_run_is_not_claimed_again() {
    let env = env();
    write_session(&env, "s1", "2020-03-02", &chat("alpha"));
    write_session(&env, "s2", "2020-03-01", &chat("bravo"));
    env.index(&sessions_dir(&env));
    let fake = Fake::new(&env);
    fake.answer(vec![]);
    let gate = env.tmp.path().join("gate");
    let mut vars = fake.vars();
    vars.push(("FAKE_EXTRACT_GATE".into(), gate.display().to_string()));
    vars.push(("FAKE_EXTRACT_GATE_SESSION".into(), "s1".into()));
    let cmd = extractor("facts.py");
    let args = ["--extractor-cmd", cmd.as_str()];
    let a = spawn_extract(&env, &args, &vars);
    until(20, "run A never started s1", || {
        calls_per_session(&fake).contains_key("s1")
    });
    let rb = extract_with(&env, &args, &vars);
    assert_eq!(rb["report"]["sessions"], 1, "B skips the leased s1: {rb}");
    assert_eq!(outcome(&rb, "s2")["state"], "done");
    std::fs::write(&gate, "").unwrap();
    let ra = finish(a);
    let calls = calls_per_session(&fake);
    assert_eq!(
        calls.get("s2"),
        Some(&1),
        "s2 was extracted by both runs: {calls:?}\nA: {ra}"
    );
}

fn source_id(db: &Connection, session: &str) -> i64 {
    db.query_row(
        "SELECT source_id FROM sessions WHERE session_id = ?1",
        [session],
        |r| r.get(0),
    )
    .unwrap()
}

#[test]
fn stale_lease_expires_and_live_lease_is_respected() {
    let env = env();
    write_session(&env, "crashed", "2020-03-01", &chat("alpha"));
    write_session(&env, "busy", "2020-03-02", &chat("bravo"));
    env.index(&sessions_dir(&env));
    let db = env.open_index();
    let now = unix_now();
    // A run that crashed ten minutes ago, and one still running.
    for (session, owner, until) in [
        ("crashed", "dead-run", now - 60),
        ("busy", "live-run", now + 3600),
    ] {
        db.execute(
            "INSERT INTO extractions(source_id, session_id, state, lease_owner, lease_until, attempts, updated)
             VALUES (?1, ?2, 'pending', ?3, ?4, 1, ?5)",
            rusqlite::params![source_id(&db, session), session, owner, until, now - 600],
        )
        .unwrap();
    }
    drop(db);
    let fake = Fake::new(&env);
    fake.answer(vec![]);
    let r = fake.extract(&env, &[]);
    let calls: Vec<_> = fake.calls().iter().map(|c| c["session"].clone()).collect();
    assert_eq!(calls, [json!("crashed")], "{r}");
    let st = status(&env);
    assert_eq!(st["crashed"]["state"], "done");
    assert_eq!(st["busy"]["state"], "pending");
}

/// A run that crashed while retrying a failed session leaves a `pending`
/// row with the session's current hash; once its lease expires the session
/// must be tried again, not stay `pending` forever.
#[test]
fn crashed_retry_of_a_failed_session_is_retried_after_its_lease_expires() {
    let env = env();
    indexed_session(&env, "s1");
    let fail = extractor("fail.sh");
    extract_with(&env, &["--extractor-cmd", &fail], &[]);
    assert_eq!(status(&env)["s1"]["state"], "failed");
    // What `claim` leaves behind when the retry's process dies.
    let db = env.open_index();
    db.execute(
        "UPDATE extractions SET state='pending', lease_owner='dead-run', lease_until=?1,
             attempts = attempts + 1 WHERE session_id = 's1'",
        [unix_now() - 60],
    )
    .unwrap();
    drop(db);
    let fake = Fake::new(&env);
    fake.answer(vec![fact(
        "incidents",
        "watcher race",
        "The flaky test raced the file watcher; tests now wait for its first event.",
        0.8,
    )]);
    let r = fake.extract(&env, &[]);
    assert_eq!(fake.calls().len(), 1, "s1 is retried: {r}");
    assert_eq!(status(&env)["s1"]["state"], "done");
    assert_eq!(auto_keys(&env), ["auto:watcher-race"]);
}

/// Extract runs of different sessions that propose the same fact at the
/// same time make one record, not one file each: the check for an
/// existing key and the write happen under the scope's records lock.
#[test]
fn r_concurrent_extracts_of_one_new_key_make_one_record() {
    let env = env();
    let sessions: Vec<String> = (0..6).map(|i| format!("par{i}")).collect();
    for s in &sessions {
        indexed_session(&env, s);
    }
    let fake = Fake::new(&env);
    fake.answer(vec![fact(
        "principles",
        "shared rule",
        "Every flaky test gets a tracking issue before it is retried.",
        0.9,
    )]);
    let cmd = extractor("facts.py");
    let children: Vec<_> = sessions
        .iter()
        .map(|s| {
            let mut c = env.std_cmd();
            c.args(["extract", "--json", "--extractor-cmd", &cmd, "--session", s])
                .envs(fake.vars())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped());
            c.spawn().unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert_success(&out);
    }
    assert_eq!(auto_keys(&env), ["auto:shared-rule"]);
    assert_eq!(record_files(&env.home()).len(), 1);
}

/// Issue 26 item 10: a killed `extract` left its session "being extracted
/// by another run" for ten minutes. A lease whose owner process is gone is
/// taken over at once, and the re-run equals a clean run.
#[test]
fn r26_a_killed_runs_lease_is_taken_over_at_once() {
    let env = env();
    indexed_session(&env, "s1");
    // What `claim` leaves when its process is killed: a live lease held by
    // a pid that no longer exists.
    let mut dead = std::process::Command::new("true").spawn().unwrap();
    let pid = dead.id();
    dead.wait().unwrap();
    let db = env.open_index();
    db.execute(
        "INSERT INTO extractions(source_id, session_id, state, lease_owner, lease_until, attempts, updated)
         SELECT source_id, session_id, 'pending', ?1, ?2, 1, ?3 FROM sessions WHERE session_id = 's1'",
        rusqlite::params![format!("{pid}-1"), unix_now() + 600, unix_now()],
    )
    .unwrap();
    drop(db);
    let fake = Fake::new(&env);
    fake.answer(vec![fact(
        "incidents",
        "watcher race",
        "The flaky test raced the file watcher; tests now wait for its first event.",
        0.8,
    )]);
    let r = fake.extract(&env, &[]);
    assert_eq!(fake.calls().len(), 1, "s1 is extracted at once: {r}");
    assert_eq!(status(&env)["s1"]["state"], "done");
    assert_eq!(auto_keys(&env), ["auto:watcher-race"]);
}

/// Regression: a session that failed three times was never taken again,
/// not even by `--session ID`, and "nothing due" counted it as "already
/// extracted". Now the runs say how many gave out and why, status says it
/// will not be tried again, and `--session` tries it.
#[test]
fn r_a_session_that_failed_three_times_is_named_and_taken_by_session() {
    let env = env();
    indexed_session(&env, "s1");
    let fail = extractor("fail.sh");
    for _ in 0..3 {
        let r = extract_with(&env, &["--extractor-cmd", &fail], &[]);
        assert_eq!(r["report"]["failed"], 1, "{r}");
    }
    let out = env
        .cmd()
        .args(["extract", "--extractor-cmd", &fail])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("1 failed 3 times and unchanged since") && !err.contains("already extracted"),
        "{err}"
    );
    let st = &status(&env)["s1"];
    assert_eq!(st["state"], "failed");
    assert!(
        st["reason"]
            .as_str()
            .unwrap()
            .contains("tried 3 times, no run takes it again until it changes or `recall extract --session s1`"),
        "{st}"
    );
    let fake = Fake::new(&env);
    fake.answer(vec![fact(
        "incidents",
        "watcher race",
        "The flaky test raced the file watcher; tests now wait for its first event.",
        0.8,
    )]);
    fake.extract(&env, &["--session", "s1"]);
    assert_eq!(fake.calls().len(), 1);
    assert_eq!(status(&env)["s1"]["state"], "done");
    assert_eq!(auto_keys(&env), ["auto:watcher-race"]);
}
