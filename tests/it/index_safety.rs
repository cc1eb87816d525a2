//! Indexing safety: secrets never reach the index or the output, and a
//! `kill -9` in the middle of a batch leaves a consistent index that the
//! next run completes.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::{assert_success, Env};
use rusqlite::Connection;

/// One planted secret of every kind the detector knows, built at runtime
/// so this file does not itself look like it holds secrets.
fn planted() -> Vec<(&'static str, String)> {
    let b64 = "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6QUJDREVGR0hJSg";
    vec![
        ("aws-access-key", format!("AKIA{}", "Q7RW3ZP5M2XK9TLB")),
        (
            "aws-secret-key",
            format!("aws_secret_access_key = {}", &format!("{b64}{b64}")[..40]),
        ),
        (
            "github-token",
            format!("ghp_{}", "a1B2c3D4".repeat(4) + "e5F6"),
        ),
        (
            "openai-key",
            format!("sk-proj-{}", "Ab3dEf6hIj9kLm2nOp5qRs8t".repeat(2)),
        ),
        (
            "anthropic-key",
            format!(
                "sk-ant-api03-{}",
                "xY7zW4vU1tS8rQ5pO2nM9lK6jI3hG0fE".repeat(3)
            ),
        ),
        (
            "slack-token",
            format!(
                "xoxb-{}-{}-{}",
                "123456789012", "1234567890123", "AbCdEfGhIjKlMnOpQrStUvWx"
            ),
        ),
        (
            "stripe-key",
            format!("sk_live_{}", "4eC39HqLyjWDarjtT1zdp7dc".repeat(2)),
        ),
        (
            "google-api-key",
            format!("AIza{}", "SyD4x8Jq2Lm7Np3Rt6Vw9Yz1Bc5Fh0Kg4Ms"),
        ),
        (
            "private-key",
            format!(
                "-----BEGIN RSA PRIVATE KEY-----\n{}\n{}\n-----END RSA PRIVATE KEY-----",
                b64, "MIIEowIBAAKCAQEA7bq8xk2Vn3YpQe5Rw8Tz1Lm4Nq7Js0Hd3Kf6Gb9Ca2Xe5Wr8Ut1Oy4Ip7"
            ),
        ),
        (
            "jwt",
            format!(
                "eyJhbGciOiJIUzI1NiJ9.{}.{}",
                "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ",
                "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
            ),
        ),
        (
            "url-password",
            "postgres://admin_user:Tr0ub4dor-And-3@db.internal:5432/app".to_string(),
        ),
        (
            "password-assignment",
            "DB_PASSWORD=q8#Vz2!kLm9Rw".to_string(),
        ),
    ]
}

/// The exact secret bytes the detector says must never be stored.
fn secret_values() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (kind, text) in planted() {
        let found = recall::secrets::scan(&text);
        assert!(
            !found.is_empty(),
            "the detector misses the planted {kind}: {text}"
        );
        for f in found {
            out.push((kind.to_string(), text[f.start..f.end].to_string()));
        }
    }
    out
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

fn write_corpus(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    // Secrets also sit in the session's cwd and branch and in speaker
    // names: every free-text field is redacted, not only message text.
    let all: Vec<String> = planted().into_iter().map(|(_, t)| t).collect();
    let mut neutral = serde_json::json!({"session": {"id": "leaky", "title": "deploy credentials",
        "cwd": format!("/srv/{}", all.join("/")), "git_branch": format!("fix/{}", all.join("-"))}})
    .to_string()
        + "\n";
    let mut md_ticket =
        String::from("---\nid: SEC-1\ntitle: rotate credentials\nstatus: open\n---\n\n");
    let mut issues = Vec::new();
    for (i, (kind, text)) in planted().iter().enumerate() {
        let content = format!("the {kind} for staging is {text} so deploy with it");
        neutral += &format!(
            "{{\"role\":\"user\",\"id\":\"m{i}\",\"name\":{},\"content\":{}}}\n",
            json_str(&format!("ops {text}")),
            json_str(&content)
        );
        md_ticket += &format!("Leaked {kind}: {text}\n\n");
        issues.push(serde_json::json!({"number": i + 1, "title": format!("leak {kind}"), "body": content,
            "labels": [], "state": "OPEN", "comments": [{"author": {"login": "ops"}, "body": text}]}));
    }
    std::fs::write(dir.join("leaky.jsonl"), neutral).unwrap();
    std::fs::write(dir.join("ticket.md"), md_ticket).unwrap();
    std::fs::write(
        dir.join("issues.json"),
        serde_json::to_string(&issues).unwrap(),
    )
    .unwrap();
    let mut cc = String::new();
    for (i, (_, text)) in planted().iter().enumerate() {
        cc += &serde_json::json!({"type": "assistant", "uuid": format!("a{i}"), "parentUuid": null,
            "sessionId": "cc-leak", "timestamp": "2026-01-01T00:00:00Z",
            "message": {"id": format!("msg{i}"), "role": "assistant", "content": [
                {"type": "text", "text": format!("I found {text} in the env file")}]}})
        .to_string();
        cc.push('\n');
    }
    std::fs::write(dir.join("claude.jsonl"), cc).unwrap();
}

fn store_files(home: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(home)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .collect()
}

#[test]
fn no_byte_of_any_secret_reaches_the_index_or_the_output() {
    let env = Env::new();
    let corpus = env.tmp.path().join("corpus");
    write_corpus(&corpus);
    let out = env
        .cmd()
        .args(["index", "--json"])
        .arg(&corpus)
        .output()
        .unwrap();
    assert_success(&out);
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["summary"]["indexed"], 4, "{summary}");
    assert!(summary["summary"]["redactions"].as_u64().unwrap() >= 12 * 3);
    let mut outputs = Vec::new();
    for fmt in ["json", "prompt", "snippets"] {
        for q in [
            "staging deploy credentials",
            "leak rotate",
            "env file found",
            "postgres db internal",
        ] {
            let o = env
                .cmd()
                .args(["query", "--limit", "50", "--format", fmt, q])
                .output()
                .unwrap();
            outputs.push(String::from_utf8_lossy(&o.stdout).into_owned());
        }
    }
    assert!(
        outputs.iter().any(|o| o.contains("[REDACTED:")),
        "recall never showed the redacted text"
    );
    let files = store_files(&env.home());
    assert!(files.iter().any(|f| f.ends_with("index.db")));
    for (kind, value) in secret_values() {
        for f in &files {
            let bytes = std::fs::read(f).unwrap();
            let hit = bytes.windows(value.len()).any(|w| w == value.as_bytes());
            assert!(!hit, "{kind} found in {}", f.display());
        }
        for o in &outputs {
            assert!(!o.contains(&value), "{kind} in recall output");
        }
    }
}

/// `n` neutral transcripts of about `kb` kilobytes each.
fn big_corpus(dir: &Path, n: usize, kb: usize) {
    std::fs::create_dir_all(dir).unwrap();
    let words = [
        "loader", "config", "retry", "timeout", "socket", "parser", "render", "queue", "cache",
        "index",
    ];
    for f in 0..n {
        let mut file = std::io::BufWriter::new(
            std::fs::File::create(dir.join(format!("s{f:04}.jsonl"))).unwrap(),
        );
        writeln!(
            file,
            "{{\"session\":{{\"id\":\"s{f}\",\"title\":\"session {f}\"}}}}"
        )
        .unwrap();
        let mut size = 0;
        let mut i = 0;
        while size < kb * 1024 {
            let text: Vec<&str> = (0..60)
                .map(|k| words[(f * 7 + i * 3 + k) % words.len()])
                .collect();
            let line = format!(
                "{{\"role\":\"user\",\"id\":\"m{i}\",\"content\":\"{} {f} {i}\"}}\n",
                text.join(" ")
            );
            size += line.len();
            file.write_all(line.as_bytes()).unwrap();
            i += 1;
        }
    }
}

fn chunk_count(db: &Path) -> i64 {
    Connection::open(db)
        .unwrap()
        .query_row("SELECT count(*) FROM chunks", [], |r| r.get(0))
        .unwrap()
}

/// Sources committed so far, or 0 while the index does not exist yet or is
/// locked by the writer's commit.
fn committed_sources(db: &Path) -> i64 {
    let Ok(c) = Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY) else {
        return 0;
    };
    c.query_row("SELECT count(*) FROM sources", [], |r| r.get(0))
        .unwrap_or(0)
}

#[test]
fn kill_nine_mid_batch_leaves_a_consistent_index_and_the_next_run_completes() {
    let env = Env::new();
    let corpus = env.tmp.path().join("big");
    // More files than one batch holds (500 sources), so the writer commits
    // several times whatever the machine's speed.
    const FILES: i64 = 1_200;
    big_corpus(&corpus, FILES as usize, 8);
    let db = env.project_dir().join("index.db");
    // Kill as soon as the first batch is visible: some but not all sources
    // are committed. On a very fast machine the run may finish between the
    // poll and the kill, so try a few times.
    let mut killed_mid_batch = false;
    for _ in 0..5 {
        let _ = std::fs::remove_dir_all(env.home());
        let mut child = env
            .std_cmd()
            .arg("index")
            .arg(&corpus)
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while committed_sources(&db) == 0
            && child.try_wait().unwrap().is_none()
            && start.elapsed() < Duration::from_secs(120)
        {
            std::thread::sleep(Duration::from_millis(2));
        }
        child.kill().unwrap(); // SIGKILL on Unix
        child.wait().unwrap();
        if !db.exists() {
            continue;
        }
        let c = Connection::open(&db).unwrap();
        let ok: String = c
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(ok, "ok");
        for t in ["chunks_fts", "records_fts", "tickets_fts"] {
            c.execute(
                &format!("INSERT INTO {t}({t}) VALUES('integrity-check')"),
                [],
            )
            .unwrap();
        }
        let sources: i64 = c
            .query_row("SELECT count(*) FROM sources", [], |r| r.get(0))
            .unwrap();
        let orphans: i64 = c
            .query_row(
                "SELECT count(*) FROM chunks WHERE source_id NOT IN (SELECT id FROM sources)",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(orphans, 0);
        drop(c);
        if sources > 0 && sources < FILES {
            killed_mid_batch = true;
            break;
        }
    }
    assert!(
        killed_mid_batch,
        "never managed to kill the index mid-batch"
    );
    // The next run finishes the work and matches a clean run.
    let out = env
        .cmd()
        .args(["index", "--json"])
        .arg(&corpus)
        .output()
        .unwrap();
    assert_success(&out);
    let reference = Env::new();
    reference.cmd().arg("index").arg(&corpus).assert().success();
    assert_eq!(
        chunk_count(&db),
        chunk_count(&reference.project_dir().join("index.db"))
    );
    let c = Connection::open(&db).unwrap();
    let n: i64 = c
        .query_row("SELECT count(*) FROM sources", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, FILES);
    c.execute(
        "INSERT INTO chunks_fts(chunks_fts) VALUES('integrity-check')",
        [],
    )
    .unwrap();
}

/// Issue 37 item 4: two or three `recall index` runs on one project at
/// once, on a transcript over one segment (8 MB), failed one run with
/// "database is locked": one part is one transaction, which held the lock
/// past a waiting writer's five seconds. Writers wait their turn whatever
/// the file size: every run exits 0, and the index holds the transcript
/// once, as one run alone writes it.
#[test]
fn r37_concurrent_index_runs_on_a_large_transcript_all_succeed() {
    let env = Env::new();
    let transcript = env.tmp.path().join("big.jsonl");
    let bytes = synth::claude::generate_one(&transcript, 12 << 20, 37).unwrap();
    assert!(bytes > 8 << 20, "{bytes} bytes: more than one segment");
    let path = transcript.to_str().unwrap();
    // Three fresh runs, then three `--full` runs (one bulk rebuild each).
    for args in [vec!["index", path], vec!["index", "--full", path]] {
        let runs: Vec<_> = (0..3)
            .map(|_| {
                env.std_cmd()
                    .args(&args)
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for run in runs {
            let out = run.wait_with_output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success() && !stderr.contains("locked"),
                "recall {args:?}: exit {:?}: {stderr}",
                out.status.code()
            );
        }
    }
    let db = env.project_dir().join("index.db");
    let chunks = chunk_count(&db);
    let alone = Env::new();
    alone.run(&["index", path]);
    assert_eq!(chunks, chunk_count(&alone.project_dir().join("index.db")));
    assert_eq!(committed_sources(&db), 1);
}
