//! Reindex, doctor, project identity and recall across scopes, end to end.

use crate::common::{assert_success, record_files, snapshot, Env};
use predicates::prelude::*;

#[test]
fn hand_edited_file_is_picked_up_by_reindex() {
    let env = Env::new();
    let id = env.add("decisions", "cache", "We cache with redis.");
    let file = &record_files(&env.home())[0];
    let text = std::fs::read_to_string(file)
        .unwrap()
        .replace("redis", "memcached");
    // Rewrite in place, keeping the folder's mtime: only reindex can see it.
    std::fs::write(file, text).unwrap();
    let out = env
        .cmd()
        .args(["reindex"])
        .assert()
        .success()
        .get_output()
        .stderr
        .clone();
    let summary = String::from_utf8(out).unwrap();
    assert!(summary.contains("updated 1"), "{summary}");
    assert_eq!(env.hit_ids("alpha", "memcached"), vec![id]);
    assert!(env.hit_ids("alpha", "redis").is_empty());
}

#[test]
fn new_file_dropped_in_is_noticed_without_reindex() {
    let env = Env::new();
    env.add("decisions", "first", "First fact.");
    let dir = env.project_dir();
    let text = "---\nid: dropped\nkey: dropped in\ncategory: principles\nscope: project\nsource: manual\ncreated: 2026-01-01T00:00:00Z\nupdated: 2026-01-01T00:00:00Z\n---\n\nNever force-push to main.\n";
    std::fs::create_dir_all(dir.join("records/principles")).unwrap();
    std::fs::write(dir.join("records/principles/dropped.md"), text).unwrap();
    assert_eq!(env.hit_ids("alpha", "force-push main"), vec!["dropped"]);
}

#[test]
fn deleting_the_index_and_reindexing_gives_the_same_results() {
    let env = Env::new();
    for (c, k, t) in [
        (
            "decisions",
            "pnpm",
            "We use pnpm workspaces for the monorepo.",
        ),
        (
            "procedures",
            "tests",
            "Run the tests with cargo nextest run --workspace.",
        ),
        (
            "incidents",
            "flaky",
            "The config loader test was flaky because of a shared temp dir.",
        ),
        (
            "principles",
            "no unwrap",
            "Never unwrap on user input in library code.",
        ),
    ] {
        env.add(c, k, t);
    }
    let queries = [
        "pnpm workspace",
        "flaky config test",
        "unwrap input",
        "cargo tests",
    ];
    // Scores carry a recency decay relative to the current second, so the
    // two runs are compared on everything but the score's last digits.
    let hits = |q: &str| -> Vec<serde_json::Value> {
        let mut v = env.query_json("alpha", q)["hits"]
            .as_array()
            .unwrap()
            .clone();
        for h in &mut v {
            let s = h["score"].as_f64().unwrap();
            h["score"] = serde_json::json!((s * 1e4).round() / 1e4);
        }
        v
    };
    let before: Vec<_> = queries.iter().map(|q| hits(q)).collect();
    let dir = env.project_dir();
    for f in ["index.db", "index.db-wal", "index.db-shm"] {
        let _ = std::fs::remove_file(dir.join(f));
    }
    env.run(&["reindex"]);
    let after: Vec<_> = queries.iter().map(|q| hits(q)).collect();
    assert_eq!(before, after);
    assert!(before.iter().all(|h| !h.is_empty()));
}

#[test]
fn malformed_frontmatter_is_reported_with_path_line_and_skipped() {
    let env = Env::new();
    env.add("decisions", "good", "A good record about sqlite.");
    let dir = env.project_dir();
    let bad = dir.join("records/decisions/bad.md");
    let text = "---\nid: bad\nkey: bad\ncategory: [oops\n---\n\nsqlite body\n";
    std::fs::write(&bad, text).unwrap();
    let out = env
        .cmd()
        .args(["reindex", "--full"])
        .assert()
        .code(3)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8(out).unwrap();
    let needle = format!("{}:", bad.display());
    assert!(err.contains(&needle), "{err}");
    assert!(err.contains("errors 1"), "{err}");
    // The line points inside the frontmatter.
    let line: usize = err
        .split(&needle)
        .nth(1)
        .unwrap()
        .split(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((2..=5).contains(&line), "line {line}: {err}");
    assert_eq!(
        std::fs::read_to_string(&bad).unwrap(),
        text,
        "the bad file was touched"
    );
    assert_eq!(env.hit_ids("alpha", "sqlite").len(), 1);
}

#[test]
fn reindex_json_summary() {
    let env = Env::new();
    env.add("decisions", "a", "one");
    let v: serde_json::Value =
        serde_json::from_str(&env.run(&["reindex", "--json", "--full"])).unwrap();
    assert_eq!(v["version"], 1);
    assert_eq!(v["summary"]["scanned"], 1);
    assert_eq!(v["summary"]["errors"].as_array().unwrap().len(), 0);
}

#[test]
fn projects_never_see_each_others_records() {
    let env = Env::new();
    env.cmd_in("alpha")
        .args([
            "record",
            "add",
            "--category",
            "decisions",
            "--key",
            "a",
            "alpha uses postgres",
        ])
        .assert()
        .success();
    env.cmd_in("beta")
        .args([
            "record",
            "add",
            "--category",
            "decisions",
            "--key",
            "b",
            "beta uses mysql",
        ])
        .assert()
        .success();
    assert_eq!(env.hit_ids("alpha", "postgres mysql").len(), 1);
    assert_eq!(env.hit_ids("beta", "postgres mysql").len(), 1);
    assert!(env.hit_ids("beta", "postgres").is_empty());
    assert!(env.hit_ids("alpha", "mysql").is_empty());
}

#[test]
fn user_records_appear_in_every_project() {
    let env = Env::new();
    env.run(&[
        "record",
        "add",
        "--scope",
        "user",
        "--category",
        "preferences",
        "--key",
        "style",
        "I prefer small focused commits",
    ]);
    for p in ["alpha", "beta", "gamma"] {
        let v = env.query_json(p, "commits");
        assert_eq!(v["hits"][0]["scope"], "user", "{p}: {v}");
    }
}

#[test]
fn corrupt_index_suggests_reindex_full_which_repairs_it() {
    let env = Env::new();
    env.add("decisions", "k", "the durable fact about tokio");
    let dir = env.project_dir();
    for f in ["index.db-wal", "index.db-shm"] {
        let _ = std::fs::remove_file(dir.join(f));
    }
    std::fs::write(dir.join("index.db"), vec![7u8; 4096]).unwrap();
    let before = snapshot(&dir.join("records"));
    env.cmd()
        .args(["query", "tokio"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("recall reindex --full"));
    env.cmd()
        .args([
            "record",
            "add",
            "--category",
            "decisions",
            "--key",
            "x",
            "y",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("recall reindex --full"));
    assert_eq!(before, snapshot(&dir.join("records")));
    env.cmd()
        .args(["reindex", "--full"])
        .assert()
        .success()
        .stderr(predicate::str::contains("moved it aside"));
    assert_eq!(env.hit_ids("alpha", "tokio").len(), 1);
}

/// Issue 26 item 6: a zeroed page or flipped bytes deep inside the file
/// pass the open and fail the rebuild with "database disk image is
/// malformed"; `reindex --full` must still end with a working index built
/// from the record files, and say what it did.
#[test]
fn r26_reindex_full_recovers_an_index_damaged_inside() {
    for (damage, at) in [
        ("zeroed", 2.0 / 3.0),
        ("zeroed", 0.5),
        ("flipped", 0.75),
        ("flipped", 0.9),
    ] {
        let env = Env::new();
        for i in 0..60 {
            env.add(
                "decisions",
                &format!("k{i}"),
                &format!(
                    "fact {i} about tokio runtime number{i} {}",
                    "padding words ".repeat(40)
                ),
            );
        }
        let dir = env.project_dir();
        env.run(&["reindex"]);
        let db = dir.join("index.db");
        let mut bytes = std::fs::read(&db).unwrap();
        let pages = bytes.len() / 4096;
        assert!(pages > 16, "{pages}");
        let page = ((pages as f64 * at) as usize).max(2);
        let range = page * 4096..(page + 1) * 4096;
        match damage {
            "zeroed" => bytes[range].fill(0),
            _ => bytes[range].iter_mut().skip(8).for_each(|b| *b ^= 0x5a),
        }
        std::fs::write(&db, bytes).unwrap();
        let out = env.cmd().args(["reindex", "--full"]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "{damage} page {page} of {pages}: {err}"
        );
        assert_eq!(
            env.hit_ids("alpha", "number17").len(),
            1,
            "{damage} page {page}: {err}"
        );
        env.run(&["record", "list"]);
    }
}

#[test]
fn doctor_reports_drift_and_permissions_with_fixes() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    env.add("decisions", "k", "fact");
    env.cmd()
        .arg("doctor")
        .assert()
        .success()
        .stdout(predicate::str::contains("all checks passed"));
    let file = &record_files(&env.home())[0];
    std::fs::write(
        file,
        std::fs::read_to_string(file)
            .unwrap()
            .replace("fact", "changed fact"),
    )
    .unwrap();
    std::fs::set_permissions(env.home(), std::fs::Permissions::from_mode(0o755)).unwrap();
    env.cmd()
        .arg("doctor")
        .assert()
        .code(1)
        .stdout(predicate::str::contains("changed since indexing"))
        .stdout(predicate::str::contains("fix: run `recall reindex`"))
        .stdout(predicate::str::contains("chmod 700"));
}

#[test]
fn project_identity_from_git_toplevel() {
    let env = Env::new();
    let repo = env.tmp.path().join("work/app");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join("src/deep")).unwrap();
    let other = env.tmp.path().join("other/app");
    std::fs::create_dir_all(other.join(".git")).unwrap();
    let show = |cwd: &std::path::Path| -> serde_json::Value {
        let mut c = assert_cmd::Command::cargo_bin("recall").unwrap();
        c.env_remove("RECALL_PROJECT")
            .env_remove("RECALL_HOME")
            .arg("--home")
            .arg(env.home());
        let out = c
            .args(["project", "show", "--json", "--cwd"])
            .arg(cwd)
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let a = show(&repo.join("src/deep"));
    let b = show(&repo);
    let c = show(&other);
    assert_eq!(a["id"], b["id"]);
    assert_ne!(a["id"], c["id"], "two checkouts named app collided");
    assert!(a["id"].as_str().unwrap().starts_with("app-"));
    assert_eq!(a["name"], "app");
}

#[test]
fn project_list_prints_the_mapping() {
    let env = Env::new();
    env.cmd_in("alpha")
        .args([
            "record",
            "add",
            "--category",
            "decisions",
            "--key",
            "a",
            "x",
        ])
        .assert()
        .success();
    env.cmd_in("beta")
        .args([
            "record",
            "add",
            "--category",
            "decisions",
            "--key",
            "b",
            "y",
        ])
        .assert()
        .success();
    let out = env.run(&["project", "list"]);
    assert_eq!(out.lines().count(), 2);
    assert!(
        out.contains("\talpha\t") && out.contains("\tbeta\t"),
        "{out}"
    );
}

#[test]
fn bare_recall_equals_query_and_reads_stdin_or_file() {
    let env = Env::new();
    env.add("decisions", "k", "We deploy with terraform.");
    // Scores move with salience between runs; the hits must not.
    let ids = |out: String| -> Vec<String> {
        out.lines()
            .filter(|l| l.trim_start().starts_with('/'))
            .map(str::to_string)
            .collect()
    };
    let a = env.run(&["terraform", "deploy"]);
    let b = env.run(&["query", "terraform", "deploy"]);
    assert_eq!(ids(a.clone()), ids(b));
    assert!(a.contains("terraform"));
    let c = env
        .cmd()
        .args(["query", "--format", "json"])
        .write_stdin("how do we deploy?")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&c.stdout).contains("\"rank\": 1"));
    let qf = env.tmp.path().join("q.txt");
    std::fs::write(&qf, b"terraform \xff\xfe invalid utf8").unwrap();
    env.cmd()
        .args(["query", "--query-file"])
        .arg(&qf)
        .assert()
        .success();
}

#[test]
fn hostile_and_huge_queries_never_error() {
    let env = Env::new();
    env.add("decisions", "k", "plain fact about NEAR and OR");
    let huge = "lorem ipsum dolor ".repeat(6000);
    for q in [
        "\"unbalanced",
        "a AND OR NOT",
        "NEAR(x y, 2)",
        "col:val*",
        "^-( ) {}",
        "🦀🦀",
        huge.as_str(),
    ] {
        let code = env.cmd().args(["query", q]).output().unwrap().status.code();
        assert!(matches!(code, Some(0 | 1)), "{q:.40}: {code:?}");
    }
}

#[test]
fn no_hits_exits_1() {
    let env = Env::new();
    env.add("decisions", "k", "fact");
    env.cmd().args(["query", "zebra"]).assert().code(1);
}

#[test]
fn long_ticket_query_is_not_anded() {
    let env = Env::new();
    env.add(
        "incidents",
        "k",
        "The websocket reconnect loop leaked file descriptors.",
    );
    let ticket = "Users report that after a network blip the app stops receiving updates; \
        we suspect the websocket reconnect logic, maybe related to the proxy timeout settings \
        changed last sprint. Please investigate and add monitoring.";
    assert_eq!(env.hit_ids("alpha", ticket).len(), 1);
}

/// Regression: doctor said `recall reindex --full` for a damaged session
/// index, but `--full` only rebuilt the records' FTS table.
#[test]
fn r_reindex_full_rebuilds_a_damaged_session_index() {
    let env = Env::new();
    let t = env.tmp.path().join("s.jsonl");
    std::fs::write(
        &t,
        "{\"role\":\"user\",\"content\":\"the walrus loader crashed\"}\n\
         {\"role\":\"assistant\",\"content\":\"fixed the walrus loader\"}\n",
    )
    .unwrap();
    env.run(&["index", t.to_str().unwrap()]);
    let db = env.project_dir().join("index.db");
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute(
        "UPDATE chunks_fts_content SET c1 = 'unrelated words entirely' WHERE id = 1",
        [],
    )
    .unwrap();
    drop(c);
    let doctor = env.cmd().arg("doctor").output().unwrap();
    assert_eq!(doctor.status.code(), Some(1));
    let text = String::from_utf8_lossy(&doctor.stdout);
    assert!(
        text.contains("chunks_fts") && text.contains("index --full"),
        "{text}"
    );
    env.run(&["reindex", "--full"]);
    let doctor = env.cmd().arg("doctor").output().unwrap();
    assert_eq!(
        doctor.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&doctor.stdout)
    );
    // And indexing the source again brings its text back.
    env.run(&["index", "--full", t.to_str().unwrap()]);
    let v = env.query_json("alpha", "walrus loader");
    assert_eq!(v["hits"].as_array().unwrap().len(), 1, "{v}");
}

/// An index whose term statistics are missing (as after an upgrade, or
/// written by hand) still answers, is reported by doctor, and is repaired
/// by the next write job.
#[test]
fn stale_term_statistics_still_answer_and_are_repaired() {
    let env = Env::new();
    env.index_transcript(
        "s.jsonl",
        &[
            r#"{"role":"user","content":"the narwhal exporter stalls at midnight"}"#,
            r#"{"role":"assistant","content":"raise the narwhal exporter timeout"}"#,
        ],
    );
    let db = env.project_dir().join("index.db");
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute_batch("DELETE FROM table_stats; DELETE FROM term_df;")
        .unwrap();
    drop(c);
    let v = env.query_json("alpha", "narwhal exporter timeout");
    assert_eq!(v["hits"].as_array().unwrap().len(), 1, "{v}");
    let (code, text) = env.doctor();
    assert_eq!(code, Some(1));
    assert!(text.contains("term statistics of chunks_fts"), "{text}");
    env.run(&["reindex"]);
    let (code, text) = env.doctor();
    assert_eq!(code, Some(0), "{text}");
    let c = rusqlite::Connection::open(&db).unwrap();
    let df: i64 = c
        .query_row(
            "SELECT chunks FROM term_df WHERE term = 'narwhal'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(df, 2);
}

/// A query writes nothing to the index: salience goes to `hits.log`, which
/// the next write job folds in.
#[test]
fn a_query_leaves_the_index_untouched_and_salience_is_folded_later() {
    let env = Env::new();
    env.index_transcript(
        "s.jsonl",
        &[r#"{"role":"user","content":"the quokka cache evicts too early"}"#],
    );
    let dir = env.project_dir();
    let before = std::fs::read(dir.join("index.db")).unwrap();
    let wal = |d: &std::path::Path| {
        std::fs::metadata(d.join("index.db-wal"))
            .map(|m| m.len())
            .unwrap_or(0)
    };
    let wal_before = wal(&dir);
    // `--no-salience` notes nothing at all.
    let out = env.run(&["query", "--no-salience", "--format", "json", "quokka cache"]);
    assert!(out.contains("quokka"), "{out}");
    assert!(!dir.join("hits.log").exists());
    let v = env.query_json("alpha", "quokka cache");
    assert_eq!(v["hits"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(std::fs::read(dir.join("index.db")).unwrap(), before);
    assert_eq!(wal(&dir), wal_before, "no WAL frames written");
    let log = std::fs::read_to_string(dir.join("hits.log")).unwrap();
    assert_eq!(log.lines().count(), 1, "{log}");
    env.run(&["reindex"]);
    assert!(!dir.join("hits.log").exists());
    let c = rusqlite::Connection::open(dir.join("index.db")).unwrap();
    let hits: i64 = c
        .query_row("SELECT sum(hits) FROM chunks", [], |r| r.get(0))
        .unwrap();
    assert_eq!(hits, 1);
}

/// Regression: queries were cut to their first 64 terms in text order, so
/// 70 junk words followed by "deploy migration" found nothing.
#[test]
fn r_a_rare_word_after_many_junk_words_is_still_searched() {
    let env = Env::new();
    env.add(
        "procedures",
        "deploy",
        "Run the deploy migration before restarting the workers.",
    );
    let junk: Vec<String> = (0..70).map(|i| format!("junkword{i}")).collect();
    let q = format!("{} deploy migration", junk.join(" "));
    assert_eq!(env.hit_ids("alpha", &q).len(), 1);
}

/// Regression (issue probe: `kill -9` during `record add` left
/// `.recall-*.tmp` files that reindex never removed): a temporary file no
/// writer holds is removed by the next sync, and counted.
#[test]
fn r_reindex_removes_temp_files_left_by_killed_writes() {
    let env = Env::new();
    env.add("decisions", "use-sqlx", "Schema migrations run with sqlx.");
    let folder = env.project_dir().join("records").join("decisions");
    let orphan = folder.join(".recall-Zx81kq.tmp");
    std::fs::write(&orphan, "---\nid: half").unwrap();
    // A killed write's file is at least a minute old by the next run.
    age(&orphan, 120);
    // A writer that has created its file but not locked it yet.
    let young = folder.join(".recall-Young1.tmp");
    std::fs::write(&young, "---\nid: being written").unwrap();
    std::fs::set_permissions(&young, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let out = env.run(&["reindex", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["summary"]["temps_removed"], 1, "{v}");
    assert!(!orphan.exists());
    let left: Vec<_> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    // Issue 26 item 7: a live writer's file is never removed under it.
    assert!(young.exists(), "a write in progress lost its file");
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(left.iter().any(|f| f.ends_with(".md")));
    // Issue 26 item 9: doctor does not call a write in progress damage.
    let (_, said) = env.doctor();
    assert!(!said.contains("Young1"), "{said}");
    age(&young, 120);
    let (_, said) = env.doctor();
    assert!(
        said.contains("Young1") && said.contains("interrupted write"),
        "{said}"
    );
}

/// Set a file's mtime `secs` seconds into the past.
fn age(path: &std::path::Path, secs: u64) {
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(secs))
        .unwrap();
}

/// Regression (issue probe: `recall index /dev/zero`, or a FIFO, never
/// ended and grew without limit): a path that is not a regular file is a
/// failed source with a reason, and the batch goes on.
#[test]
fn r_devices_and_fifos_are_refused_not_read_forever() {
    let env = Env::new();
    let fifo = env.tmp.path().join("pipe.jsonl");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let good = env.tmp.path().join("ok.jsonl");
    std::fs::write(
        &good,
        r#"{"role":"user","content":"the walrus importer works"}"#,
    )
    .unwrap();
    let out = env
        .cmd()
        .args(["index", "--json", "/dev/zero"])
        .arg(&fifo)
        .arg(&good)
        .timeout(std::time::Duration::from_secs(20))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("/dev/zero: not a regular file"), "{stderr}");
    assert!(
        stderr.contains("pipe.jsonl: not a regular file"),
        "{stderr}"
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (
            v["summary"]["failed"].as_u64(),
            v["summary"]["indexed"].as_u64()
        ),
        (Some(2), Some(1)),
        "{v}"
    );
}

/// Regression (issue probe: a 50 MB transcript line became 87,382 chunks,
/// although README says such lines are skipped): a line over the limit is
/// reported as `path:line` and skipped; the lines around it are indexed.
#[test]
fn r_a_line_over_the_limit_is_reported_and_skipped() {
    let env = Env::new();
    let huge = format!(
        r#"{{"role":"assistant","content":"{}"}}"#,
        "lorem ".repeat((17 << 20) / 6)
    );
    assert!(huge.len() > 16 << 20);
    let path = env.tmp.path().join("big.jsonl");
    let lines = [
        r#"{"role":"user","content":"the pelican exporter stalls"}"#,
        huge.as_str(),
        r#"{"role":"assistant","content":"raise the pelican exporter timeout"}"#,
    ];
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let out = env
        .cmd()
        .args(["index", "--json"])
        .arg(&path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("big.jsonl:2: line of"), "{stderr}");
    assert!(stderr.contains("MB limit; skipped"), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["summary"]["chunks"].as_u64(), Some(2), "{v}");
    let hits = env.query_json("alpha", "pelican exporter");
    assert_eq!(hits["hits"].as_array().unwrap().len(), 1, "{hits}");
}

/// `index --full` replaces every source with one FTS rebuild instead of a
/// secure delete per row (issue probe: 16 s against 0.66 s fresh), and keeps
/// the guarantee: a word that left the files leaves no token and no byte,
/// and `secure-delete` is on again afterwards.
#[test]
fn r_index_full_rebuilds_once_and_leaves_no_deleted_words() {
    let env = Env::new();
    let path = env.tmp.path().join("s.jsonl");
    std::fs::write(
        &path,
        r#"{"role":"user","content":"the quetzalfoo password rotates weekly"}"#,
    )
    .unwrap();
    env.run(&["index", path.to_str().unwrap()]);
    std::fs::write(
        &path,
        r#"{"role":"user","content":"the vault token rotates weekly"}"#,
    )
    .unwrap();
    env.run(&["index", "--full", path.to_str().unwrap()]);
    let db = env.project_dir().join("index.db");
    let c = rusqlite::Connection::open(&db).unwrap();
    let vocab: i64 = c
        .query_row(
            "SELECT count(*) FROM chunks_vocab WHERE term = 'quetzalfoo'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(vocab, 0);
    for t in ["chunks_fts", "tickets_fts"] {
        let on: i64 = c
            .query_row(
                &format!("SELECT v FROM {t}_config WHERE k = 'secure-delete'"),
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(on, 1, "{t}");
    }
    drop(c);
    let bytes = std::fs::read(&db).unwrap();
    assert!(!bytes.windows(10).any(|w| w == b"quetzalfoo"));
    let v = env.query_json("alpha", "vault token");
    assert_eq!(v["hits"].as_array().unwrap().len(), 1, "{v}");
}

/// Regression (issue probe: a record written by hand or pulled with git went
/// into the index, query output and hook context with its secret): it is
/// indexed redacted, the sync warns, and `doctor` lists the file.
#[test]
fn r_a_hand_written_record_with_a_secret_is_indexed_redacted_and_listed() {
    let env = Env::new();
    env.add("decisions", "first", "First fact.");
    let dir = env.project_dir();
    let token = format!("ghp_{}", "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5");
    let text = format!(
        "---\nid: pulled\nkey: ci token\ncategory: procedures\nscope: project\nsource: manual\ncreated: 2026-01-01T00:00:00Z\nupdated: 2026-01-01T00:00:00Z\n---\n\nThe CI deploy token is {token} for the release job.\n"
    );
    std::fs::create_dir_all(dir.join("records/procedures")).unwrap();
    let file = dir.join("records/procedures/pulled.md");
    std::fs::write(&file, text).unwrap();
    let out = env
        .cmd()
        .args(["query", "--format", "json", "CI deploy token release job"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("[REDACTED:github-token]"), "{stdout}");
    assert!(!stdout.contains(&token), "{stdout}");
    assert!(
        stderr.contains("pulled.md: holds a secret (github-token"),
        "{stderr}"
    );
    let prompt = env.run(&["query", "--format", "prompt", "CI deploy token"]);
    assert!(!prompt.contains(&token), "{prompt}");
    let db = std::fs::read(dir.join("index.db")).unwrap();
    assert!(!db.windows(token.len()).any(|w| w == token.as_bytes()));
    let (code, report) = env.doctor();
    assert_eq!(code, Some(1), "{report}");
    assert!(
        report.contains("pulled.md holds a secret (github-token in the text)"),
        "{report}"
    );
}

/// A read-only bind mount of `src` at `dst`, unmounted on drop.
struct ReadOnlyMount(std::path::PathBuf);

impl ReadOnlyMount {
    /// `None` (with "skipped" printed) where bind mounts are not allowed
    /// (not root, or no CAP_SYS_ADMIN).
    fn new(src: &std::path::Path, dst: &std::path::Path) -> Option<ReadOnlyMount> {
        std::fs::create_dir_all(dst).unwrap();
        let run = |args: &[&str]| {
            std::process::Command::new("mount")
                .args(args)
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        let (s, d) = (src.to_str().unwrap(), dst.to_str().unwrap());
        if !run(&["--bind", s, d]) {
            eprintln!("skipped: cannot bind-mount (needs root)");
            return None;
        }
        let guard = ReadOnlyMount(dst.to_path_buf());
        assert!(run(&["-o", "remount,bind,ro", d]), "remount read-only");
        Some(guard)
    }
}

impl Drop for ReadOnlyMount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// Regression (issue probe: a read-only home broke every read command,
/// hooks included, with "attempt to write a readonly database" and no fix):
/// reads work, writes say what is wrong and what to do, doctor passes.
#[test]
fn r_a_read_only_home_still_answers_queries_and_hooks() {
    let env = Env::new();
    env.add("decisions", "use-sqlx", "Schema migrations run with sqlx.");
    env.index_transcript(
        "s.jsonl",
        &[r#"{"role":"user","content":"the heron queue drains slowly"}"#],
    );
    let ro = env.tmp.path().join("ro-home");
    let Some(_mount) = ReadOnlyMount::new(&env.home(), &ro) else {
        return;
    };
    let query = |q: &str| {
        env.cmd_with(&ro, &env.project)
            .args(["query", "--format", "json", q])
            .output()
            .unwrap()
    };
    let out = query("sqlx migrations");
    assert_success(&out);
    let out = query("heron queue");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["hits"].as_array().unwrap().len(), 1, "{v}");
    // A write fails with the reason and the fix, and nothing is written.
    let out = env
        .cmd_with(&ro, &env.project)
        .args([
            "record",
            "add",
            "--category",
            "decisions",
            "--key",
            "k2",
            "text",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("its folder is read-only"), "{stderr}");
    assert!(stderr.contains("--home or RECALL_HOME"), "{stderr}");
    let out = env
        .cmd_with(&ro, &env.project)
        .arg("doctor")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("is read-only: queries and hooks work"),
        "{text}"
    );
}

/// Regression (issue probe: an empty, just-created transcript counted as
/// failed and made the batch exit 3): it is skipped, and indexed once it
/// has content.
#[test]
fn r_an_empty_new_transcript_is_skipped_not_failed() {
    let env = Env::new();
    let path = env.tmp.path().join("new.jsonl");
    std::fs::write(&path, "").unwrap();
    let out = env.run(&["index", "--json", path.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (
            v["summary"]["failed"].as_u64(),
            v["summary"]["skipped"].as_u64()
        ),
        (Some(0), Some(1)),
        "{v}"
    );
    std::fs::write(
        &path,
        r#"{"role":"user","content":"the ibis cache warms up"}"#,
    )
    .unwrap();
    let out = env.run(&["index", "--json", path.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["summary"]["indexed"].as_u64(), Some(1), "{v}");
}

/// Batch jobs yield the CPU: `index` and `reindex` lower their priority to
/// `index.nice` (19 by default; in the torture suite's load test the hook
/// p99 was 8.0x alone without it, 3.0-3.1x at 10 and 2.0x at 19); 0 leaves
/// it alone.
#[test]
fn index_jobs_run_at_the_configured_niceness() {
    let env = Env::new();
    let path = env.tmp.path().join("s.jsonl");
    std::fs::write(&path, r#"{"role":"user","content":"the egret queue"}"#).unwrap();
    let run = |args: &[&str]| {
        let out = env
            .cmd()
            .env("RECALL_LOG", "debug")
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    assert!(run(&["index", path.to_str().unwrap()]).contains("running at nice 19"));
    assert!(run(&["reindex"]).contains("running at nice 19"));
    assert!(!run(&["query", "egret"]).contains("running at nice"));
    std::fs::write(env.home().join("config.toml"), "[index]\nnice = 0\n").unwrap();
    assert!(!run(&["index", "--full", path.to_str().unwrap()]).contains("running at nice"));
}

/// The term counts the indexer keeps as it writes (chunk counts made on the
/// preparing threads, the session title added by the writer, appended
/// transcripts, tickets) equal a recount from the stored rows, which is
/// what `index --full` ends with.
#[test]
fn kept_term_counts_equal_a_recount_after_index_and_append() {
    let env = Env::new();
    let corpus = env.tmp.path().join("corpus");
    let data = crate::common::testdata("");
    std::fs::create_dir_all(&corpus).unwrap();
    for dir in ["formats", "demo/sessions", "demo/tickets"] {
        for e in std::fs::read_dir(data.join(dir)).unwrap() {
            let p = e.unwrap().path();
            std::fs::copy(&p, corpus.join(p.file_name().unwrap())).unwrap();
        }
    }
    let dump = || -> Vec<(String, i64, i64, i64)> {
        let db = env.project_dir().join("index.db");
        let c = rusqlite::Connection::open(db).unwrap();
        let mut st = c
            .prepare(
                "SELECT term, records, chunks, tickets FROM term_df
                 UNION ALL SELECT '#' || tbl, docs, 0, 0 FROM table_stats ORDER BY 1",
            )
            .unwrap();
        let rows = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap();
        rows.map(Result::unwrap).collect()
    };
    let corpus_arg = corpus.to_str().unwrap();
    env.run(&["index", corpus_arg]);
    // A transcript grows: the new messages are appended under the title
    // stored for the session, and one of them repeats a title word.
    let grown = corpus.join("neutral.jsonl");
    let mut text = std::fs::read_to_string(&grown).unwrap();
    text.push_str(
        r#"{"role": "user", "id": "u-900", "content": "Reload is still Flaky: the ΣΊΣΥΦΟΣ watcher restarts"}"#,
    );
    text.push('\n');
    std::fs::write(&grown, text).unwrap();
    let out = env.run(&["index", "--json", corpus_arg]);
    assert!(out.contains(r#""appended":1"#), "{out}");
    let kept = dump();
    assert!(kept.iter().any(|r| r.0 == "flaky" && r.2 > 1), "{kept:?}");
    assert!(
        kept.iter().any(|r| r.0 == "#tickets" && r.1 > 0),
        "{kept:?}"
    );
    env.run(&["index", "--full", corpus_arg]);
    let recounted = dump();
    let differ: Vec<_> = kept
        .iter()
        .filter(|r| !recounted.contains(r))
        .chain(recounted.iter().filter(|r| !kept.contains(r)))
        .collect();
    assert!(differ.is_empty(), "kept vs recounted rows: {differ:?}");
}

/// Issue 26 item 16: `doctor`'s fix for a symlinked record file was
/// `chmod 600` on the link, which changes its target outside the home (here
/// a file standing in for /etc/passwd). It reports the link instead, and
/// checks `logs/` too.
#[test]
fn r26_doctor_never_points_a_chmod_outside_the_home() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    env.add("decisions", "k", "fact");
    let dir = env.project_dir();
    let outside = env.tmp.path().join("passwd");
    std::fs::write(&outside, "---\nid: x\nkey: x\ncategory: decisions\nscope: project\nsource: manual\ncreated: 2026-01-01T00:00:00Z\nupdated: 2026-01-01T00:00:00Z\n---\n\nlinked\n").unwrap();
    std::fs::set_permissions(&outside, std::fs::Permissions::from_mode(0o644)).unwrap();
    let link = dir.join("records/decisions/x.md");
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    let logs = env.home().join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::write(logs.join("hooks.log"), "x").unwrap();
    std::fs::set_permissions(
        logs.join("hooks.log"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    let (_, out) = env.doctor();
    assert!(out.contains("is a symbolic link to"), "{out}");
    assert!(
        !out.contains(&format!("chmod 600 {}", link.display())),
        "{out}"
    );
    assert!(
        out.contains(&format!("chmod 600 {}", logs.join("hooks.log").display())),
        "{out}"
    );
    assert_eq!(
        std::fs::metadata(&outside).unwrap().permissions().mode() & 0o777,
        0o644
    );
}

/// A Claude Code transcript line of session `cc-nul`.
fn claude_line(uuid: &str, text: &str) -> String {
    serde_json::json!({
        "type": "user", "uuid": uuid, "parentUuid": null, "sessionId": "cc-nul",
        "timestamp": "2026-01-01T00:00:00Z", "cwd": "/work/app",
        "message": {"role": "user", "content": text},
    })
    .to_string()
        + "\n"
}

/// `recall index --json PATH`: the summary and stderr.
fn index_json(env: &Env, path: &std::path::Path) -> (serde_json::Value, String) {
    let out = env
        .cmd()
        .args(["index", "--json"])
        .arg(path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stderr}"));
    (v["summary"].clone(), stderr)
}

/// Regression (issue 26 item 14): one line of NUL bytes near the start of
/// a transcript made the whole file "binary", and a folder walk skipped it
/// without a word (a real 3 MB Claude transcript lost 294 passages). The
/// line is reported as `path:line` and skipped; the rest is indexed.
#[test]
fn r26_a_nul_line_is_reported_and_the_rest_of_the_file_indexed() {
    let env = Env::new();
    let dir = env.tmp.path().join("transcripts");
    std::fs::create_dir_all(&dir).unwrap();
    let mut bytes = claude_line("u1", "the osprey cache warms up slowly").into_bytes();
    bytes.extend(vec![0u8; 4096]);
    bytes.push(b'\n');
    bytes.extend(b"\0\0\0\0");
    bytes.extend(claude_line("u2", "a line a crash cut in half").bytes());
    for i in 3..40 {
        bytes.extend(claude_line(&format!("u{i}"), &format!("osprey note number {i}")).bytes());
    }
    std::fs::write(dir.join("s1.jsonl"), &bytes).unwrap();
    let (s, stderr) = index_json(&env, &dir);
    assert_eq!(
        (s["indexed"].as_u64(), s["skipped"].as_u64()),
        (Some(1), Some(0)),
        "{s} {stderr}"
    );
    assert_eq!(s["chunks"].as_u64(), Some(38), "{s} {stderr}");
    for line in [2, 3] {
        let at = format!("s1.jsonl:{line}: NUL bytes");
        assert!(stderr.contains(&at), "{at}: {stderr}");
    }
    let hits = env.query_json("alpha", "osprey cache");
    assert!(!hits["hits"].as_array().unwrap().is_empty(), "{hits}");
}

/// Regression (issue 26 item 14): a file a folder walk skips is named in
/// the output with the reason, never skipped silently.
#[test]
fn r26_a_binary_file_in_a_folder_is_named_in_the_output() {
    let env = Env::new();
    let dir = env.tmp.path().join("transcripts");
    std::fs::create_dir_all(&dir).unwrap();
    let blob: Vec<u8> = (0..8192u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(dir.join("blob.jsonl"), &blob).unwrap();
    std::fs::write(dir.join("ok.jsonl"), claude_line("u1", "the osprey cache")).unwrap();
    let (s, stderr) = index_json(&env, &dir);
    assert_eq!(
        (s["indexed"].as_u64(), s["skipped"].as_u64()),
        (Some(1), Some(1)),
        "{s}"
    );
    let line = stderr
        .lines()
        .find(|l| l.contains("blob.jsonl"))
        .unwrap_or_else(|| panic!("blob.jsonl not named: {stderr}"));
    assert!(line.contains("binary"), "{line}");
}

/// Regression (issue 26 item 17): a zero-length `index.db` (a full disk
/// or a crash while it was created) gave "no such table: record_dirs ...
/// SQL logic error". It is a fresh index: queries rebuild it from the
/// record files; a hook reads nothing from it and still exits 0.
#[test]
fn r26_a_zero_length_index_is_a_fresh_one() {
    let env = Env::new();
    let id = env.add("decisions", "cache", "We cache sessions in walrusdb.");
    let db = env.project_dir().join("index.db");
    for f in ["index.db", "index.db-wal", "index.db-shm"] {
        let _ = std::fs::remove_file(env.project_dir().join(f));
    }
    std::fs::write(&db, b"").unwrap();
    let out = env.cmd().args(["query", "walrusdb"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    assert_eq!(env.hit_ids("alpha", "walrusdb"), vec![id]);
}

/// Regression (issue 26 item 17): a write the disk refuses printed
/// "sqlite: disk I/O error: disk I/O error: Error code 778: disk I/O
/// error", with no path and no fix. A file size limit (`ulimit -f`, with
/// SIGXFSZ ignored so the write fails with EFBIG) refuses writes the way
/// a failing disk does; SQLite answers SQLITE_IOERR_WRITE to it (a full
/// disk, ENOSPC, is SQLITE_FULL: see `store::db`'s unit test). One line
/// names the index and the fix.
#[cfg(unix)]
#[test]
fn r26_a_refused_write_names_the_index_and_the_fix() {
    let env = Env::new();
    env.add("decisions", "seed", "A first fact so the project exists.");
    let big = env.tmp.path().join("big.jsonl");
    let lines: String = (0..20_000)
        .map(|i| {
            let words: Vec<String> = (0..30).map(|j| format!("w{}", i * 7 + j)).collect();
            format!(
                "{{\"role\":\"user\",\"content\":\"message {i} {}\"}}\n",
                words.join(" ")
            )
        })
        .collect();
    std::fs::write(&big, lines).unwrap();
    let recall = assert_cmd::cargo::cargo_bin("recall");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 2048; exec \"$0\" \"$@\"")
        .arg(&recall)
        .arg("--home")
        .arg(env.home())
        .args(["--project", "alpha", "index"])
        .arg(&big)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let db = env.project_dir().join("index.db");
    let want = format!("cannot write {}: disk I/O error", db.display());
    assert!(stderr.contains(&want), "{want}: {stderr}");
    assert!(stderr.contains("--home"), "{stderr}");
    assert_eq!(stderr.matches("disk I/O error").count(), 1, "{stderr}");
}

/// `recall` run with every file write refused: a file size limit of 0
/// (`ulimit -f 0`, SIGXFSZ ignored) refuses each write the way a full
/// disk does, `-shm` creation included.
#[cfg(unix)]
fn run_refusing_writes(env: &Env, args: &[&str], stdin: &str) -> std::process::Output {
    use std::io::Write;
    let recall = assert_cmd::cargo::cargo_bin("recall");
    let mut child = std::process::Command::new("sh")
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 0; exec \"$0\" \"$@\"")
        .arg(&recall)
        .arg("--home")
        .arg(env.home())
        .args(["--project", "alpha"])
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("RECALL_HOME")
        .env_remove("RECALL_PROJECT")
        .current_dir(env.tmp.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// Regression (issue 26 item 8): on a full disk, a changed records folder
/// made `query` fail (exit 2) and the hook return no context: the read
/// path's record sync could not write, and neither could a new `-shm`.
/// Both now answer from the index as it is, and `query` says the change
/// was not seen.
#[cfg(unix)]
#[test]
fn r26_a_full_disk_still_answers_from_the_index_as_it_is() {
    let env = Env::new();
    let id = env.add("decisions", "cache", "We cache sessions in walrusdb.");
    let records = env.project_dir().join("records").join("decisions");
    for f in ["index.db-wal", "index.db-shm"] {
        assert!(
            !env.project_dir().join(f).exists(),
            "{f} left by a clean close"
        );
    }
    let first = std::fs::read_to_string(records.join(format!("{id}.md"))).unwrap();
    let late = first
        .replace(&id, "late-0a1b2c")
        .replace("key: cache", "key: late")
        .replace(
            "We cache sessions in walrusdb.",
            "The walrusdb port is 7411.",
        );
    std::fs::write(records.join("late-0a1b2c.md"), late).unwrap();

    let out = run_refusing_writes(&env, &["query", "--format", "json", "walrusdb"], "");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids: Vec<&str> = v["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec![id.as_str()], "the index as it is: {v}");
    assert!(stderr.contains("record files changed"), "{stderr}");

    let hook = serde_json::json!({
        "hook_event_name": "UserPromptSubmit",
        "session_id": "s1",
        "cwd": env.tmp.path(),
        "prompt": "where do we cache sessions? walrusdb",
    });
    let out = run_refusing_writes(&env, &["hook", "claude-code"], &hook.to_string());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout.contains("We cache sessions in walrusdb"), "{stdout}");

    // With the disk writable again, the next query sees the new file.
    assert_eq!(env.hit_ids("alpha", "7411").len(), 1);

    // Another reader keeps `-shm` open, so the read opens as usual and the
    // record sync is what the disk refuses: the answer is the same.
    let reader = rusqlite::Connection::open(env.project_dir().join("index.db")).unwrap();
    let n: i64 = reader
        .query_row("SELECT count(*) FROM records", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 2);
    let third = first
        .replace(&id, "third-0a1b2c")
        .replace("key: cache", "key: third")
        .replace(
            "We cache sessions in walrusdb.",
            "The walrusdb owner is Ada.",
        );
    std::fs::write(records.join("third-0a1b2c.md"), third).unwrap();
    let out = run_refusing_writes(&env, &["query", "--format", "json", "walrusdb"], "");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["hits"].as_array().unwrap().len(), 2, "{v}");
    assert!(
        stderr.contains("answering from the index as it is"),
        "{stderr}"
    );
}

/// Issue 26 item 9: `doctor` without `--project` checked the current
/// folder's project and said "all checks passed" about the whole home.
#[test]
fn r26_doctor_names_the_projects_it_did_not_check() {
    let env = Env::new();
    env.add("decisions", "k", "fact");
    env.cmd_in("beta")
        .args([
            "record",
            "add",
            "--category",
            "decisions",
            "--key",
            "b",
            "other fact",
        ])
        .assert()
        .success();
    let (_, out) = env.doctor();
    assert!(
        out.contains("not checked: 1 other project(s) of this home (beta)"),
        "{out}"
    );
}

/// One exchange of a generated Claude Code transcript: a prompt, an answer
/// with a tool call, and its result, whose `toolUseResult` (which the
/// parser skips) makes the file large cheaply. Three messages.
fn big_exchange(i: usize, word: &str) -> String {
    let filler = "lorem ipsum dolor sit amet ".repeat(400);
    let lines = [
        serde_json::json!({"type": "user", "uuid": format!("u{i}"), "sessionId": "big",
            "cwd": "/repo", "message": {"role": "user", "content": format!("question {i} about {word}")}}),
        serde_json::json!({"type": "assistant", "uuid": format!("a{i}"), "sessionId": "big",
            "message": {"id": format!("msg{i}"), "role": "assistant", "content": [
                {"type": "text", "text": format!("answer {i}: the parser reads it in parts")},
                {"type": "tool_use", "id": format!("t{i}"), "name": "Bash", "input": {"command": "cargo test"}}]}}),
        serde_json::json!({"type": "user", "uuid": format!("r{i}"), "sessionId": "big",
            "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": format!("t{i}"), "content": format!("ok {i}")}]},
            "toolUseResult": {"stdout": filler}}),
    ];
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// Issue 26 item 15: a transcript larger than a segment (8 MB) is read,
/// parsed and written in parts of bounded size: every message is indexed,
/// the first and the last can be found, the report is that of one file, a
/// second run finds it unchanged, and once it grows only the new lines are
/// read.
#[test]
fn r26_15_a_transcript_larger_than_a_segment_is_indexed_in_parts() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.jsonl");
    let mut text = String::new();
    let mut n = 0;
    while text.len() < 18_000_000 {
        let word = match n {
            0 => "aardvark",
            _ => "middle",
        };
        text.push_str(&big_exchange(n, word));
        n += 1;
    }
    text.push_str(&big_exchange(n, "zeppelin"));
    n += 1;
    std::fs::write(&path, &text).unwrap();
    let file = path.to_str().unwrap();
    let index = || -> serde_json::Value {
        let out = env.cmd().args(["index", "--json", file]).output().unwrap();
        assert_success(&out);
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()["summary"].clone()
    };
    let first = index();
    assert_eq!(
        (first["indexed"].as_u64(), first["chunks"].as_u64()),
        (Some(1), Some(3 * n as u64)),
        "{first}"
    );
    assert_eq!(first["problems"], 0, "{first}");
    assert_eq!(first["bytes"].as_u64(), Some(text.len() as u64));
    let db = rusqlite::Connection::open(env.project_dir().join("index.db")).unwrap();
    let state = |db: &rusqlite::Connection| -> (i64, i64, i64) {
        db.query_row(
            "SELECT s.size, s.offset, (SELECT messages FROM sessions) FROM sources s",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap()
    };
    let len = text.len() as i64;
    assert_eq!(state(&db), (len, len, 3 * n as i64));
    for word in ["aardvark", "zeppelin"] {
        assert!(!env.hit_ids("alpha", word).is_empty(), "{word}");
    }
    assert_eq!(index()["unchanged"], 1);
    let more = big_exchange(n, "xylophone");
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(&mut f, more.as_bytes()).unwrap();
    let grown = index();
    assert_eq!(
        (grown["appended"].as_u64(), grown["chunks"].as_u64()),
        (Some(1), Some(3)),
        "{grown}"
    );
    assert_eq!(grown["bytes"].as_u64(), Some(more.len() as u64));
    assert!(!env.hit_ids("alpha", "xylophone").is_empty());
}
