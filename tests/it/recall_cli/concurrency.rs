//! Queries while an index job writes, and an index job that waits for
//! another writer instead of failing.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::time::{Duration, Instant};

use super::{hits, ids, index, msg, output_problems, query_json, session_line};
use crate::common::Env;
use serde_json::Value;

#[test]
fn queries_work_while_an_index_job_writes() {
    let env = Env::new();
    // The store exists before the writer starts (a record and a session).
    env.add(
        "decisions",
        "zebra crossings",
        "The zebra crossing service owns the loader.",
    );
    let seed = env.tmp.path().join("seed.jsonl");
    std::fs::write(
        &seed,
        session_line("seed", "seed")
            + &msg("s1", "user", "2020-01-01T00:00:00Z", "zebra loader topic1"),
    )
    .unwrap();
    index(&env, &[&seed]);
    let dir = env.tmp.path().join("many");
    std::fs::create_dir_all(&dir).unwrap();
    for f in 0..400 {
        let mut body = session_line(
            &format!("bulk-{f}"),
            &format!("bulk session {f} about the loader"),
        );
        for i in 0..60 {
            let text = format!(
                "message {i} of file {f} about topic{} and the zebra loader, with words w{f}x{i} v{i}y{f} and some padding to make the chunk realistic in size",
                i % 50
            );
            body += &msg(
                &format!("b{f}-{i}"),
                if i % 2 == 0 { "user" } else { "assistant" },
                "2020-02-01T00:00:00Z",
                &text,
            );
        }
        std::fs::write(dir.join(format!("bulk-{f:03}.jsonl")), body).unwrap();
    }
    let child = env
        .std_cmd()
        .args(["index", "--json"])
        .arg(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let child = std::sync::Mutex::new(child);
    let running = || child.lock().unwrap().try_wait().unwrap().is_none();
    let queries = [
        ("json", "zebra loader"),
        ("prompt", "topic17 w3x4"),
        ("json", "message of file about topic"),
        ("snippets", "\"zebra\" AND NOT loader*"),
        ("json", "bulk session 250"),
    ];
    // Two agents querying at once, as hooks of two sessions would.
    let start = Instant::now();
    let counts: Vec<(usize, usize)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..2)
            .map(|w| {
                let env = &env;
                let running = &running;
                s.spawn(move || {
                    let (mut during, mut total) = (0, 0);
                    loop {
                        let before = running();
                        let (fmt, q) = queries[(total + w) % queries.len()];
                        let out = env
                            .std_cmd()
                            .args(["query", "--format", "json", q])
                            .output()
                            .unwrap();
                        let code = out.status.code().unwrap();
                        assert!(
                            code == 0 || code == 1,
                            "query {q:?} during indexing exited {code}: {}",
                            String::from_utf8_lossy(&out.stderr)
                        );
                        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
                            panic!(
                                "query {q:?}: invalid JSON ({e}): {}",
                                String::from_utf8_lossy(&out.stdout)
                            )
                        });
                        let problems = output_problems(&v, &BTreeMap::new());
                        assert!(problems.is_empty(), "{problems:?}");
                        // The other formats too, while the writer runs.
                        let out = env
                            .std_cmd()
                            .args(["query", "--format", fmt, q])
                            .output()
                            .unwrap();
                        assert!(
                            out.status.code().unwrap() <= 1,
                            "{}",
                            String::from_utf8_lossy(&out.stderr)
                        );
                        let after = running();
                        total += 1;
                        during += usize::from(before && after);
                        if !after && total >= 3 {
                            return (during, total);
                        }
                        assert!(
                            start.elapsed() < Duration::from_secs(120),
                            "the index job did not finish in 120 s"
                        );
                    }
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let out = child.into_inner().unwrap().wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "the index job failed while queries ran: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["summary"]["indexed"], 400, "{s}");
    let during: usize = counts.iter().map(|c| c.0).sum();
    assert!(
        during >= 4,
        "only {during} queries ran while the index job was writing ({counts:?}); make the data set bigger"
    );
    // Everything is searchable afterwards.
    let (code, v) = query_json(&env, &["--kind", "session", "w399x59"]);
    assert_eq!(code, 0);
    assert_eq!(hits(&v)[0]["source"]["session_id"], "bulk-399");
}

#[test]
fn an_index_job_waits_for_another_writer_instead_of_failing() {
    // A query's salience update, `record add` or another index run holds
    // the write lock for a moment. The index job has a 5 s busy timeout,
    // so a lock released while it waits must only delay it.
    let env = Env::new();
    let seed = env.tmp.path().join("seed.jsonl");
    std::fs::write(
        &seed,
        session_line("seed", "seed")
            + &msg("s1", "user", "2020-01-01T00:00:00Z", "zebra loader topic1"),
    )
    .unwrap();
    index(&env, &[&seed]);
    let next = env.tmp.path().join("next.jsonl");
    std::fs::write(
        &next,
        session_line("next", "next")
            + &msg("n1", "user", "2020-01-02T00:00:00Z", "okapi enclosure gate"),
    )
    .unwrap();
    let db = env.project_dir().join("index.db");
    let lock = rusqlite::Connection::open(&db).unwrap();
    // What `record_hits` does after a query returned hits.
    lock.execute_batch("BEGIN IMMEDIATE; UPDATE chunks SET hits = hits + 1;")
        .unwrap();
    let child = env
        .std_cmd()
        .args(["index", "--json"])
        .arg(&next)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Released once the index job waits for it (a handshake, so a late
    // start cannot make the test pass without the job ever waiting).
    crate::common::wait::for_writer_waiting(&db);
    lock.execute_batch("COMMIT").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "index gave up although the lock was released while it waited: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (code, v) = query_json(&env, &["--kind", "session", "okapi"]);
    assert_eq!((code, ids(&v)), (0, vec!["next#0".to_string()]));
}
