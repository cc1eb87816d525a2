//! Record files and the index kept in step: hand edits and new files are
//! picked up, a deleted index is rebuilt to the same results, malformed
//! frontmatter is reported and skipped, a hand-written secret is indexed
//! redacted, and temp files of killed writes are removed.

use crate::common::{contains_bytes, record_files, record_text, Env};

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
    let text = record_text(
        "dropped",
        "dropped in",
        "principles",
        "Never force-push to main.",
    );
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
    let v = env.run_json(&["reindex", "--json", "--full"]);
    assert_eq!(v["version"], 1);
    assert_eq!(v["summary"]["scanned"], 1);
    assert_eq!(v["summary"]["errors"].as_array().unwrap().len(), 0);
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
    // A writer that has created its file but not locked it yet (it locks
    // before it writes a byte, so the file is still empty).
    let young = folder.join(".recall-Young1.tmp");
    std::fs::write(&young, "").unwrap();
    std::fs::set_permissions(&young, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let v = env.run_json(&["reindex", "--json"]);
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

/// Regression (issue probe: a record written by hand or pulled with git went
/// into the index, query output and hook context with its secret): it is
/// indexed redacted, the sync warns, and `doctor` lists the file.
#[test]
fn r_a_hand_written_record_with_a_secret_is_indexed_redacted_and_listed() {
    let env = Env::new();
    env.add("decisions", "first", "First fact.");
    let dir = env.project_dir();
    let token = format!("ghp_{}", "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5");
    let text = record_text(
        "pulled",
        "ci token",
        "procedures",
        &format!("The CI deploy token is {token} for the release job."),
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
    assert!(!contains_bytes(&db, token.as_bytes()));
    let (code, report) = env.doctor();
    assert_eq!(code, Some(1), "{report}");
    assert!(
        report.contains("pulled.md holds a secret (github-token in the text)"),
        "{report}"
    );
}
