//! A home or a disk that refuses writes: a read-only home still answers
//! queries and hooks, a refused write names the index and the fix, and a
//! full disk answers from the index as it is.

use crate::common::{assert_success, set_back_before_session_work, user_version, Env};

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

/// An index from before `sessions.work` (schema 8) in a read-only home
/// cannot be upgraded: it is read as it is, instead of failing on the
/// missing column, and a session with a tool's output among its
/// candidates still counts as work (its hits get the `session_coverage`
/// lift). Where it can be written, the next read upgrades it and marks
/// the agent's session as work.
#[test]
fn an_index_from_before_session_work_is_read_as_it_is_in_a_read_only_home() {
    let env = Env::new();
    env.index_transcript(
        "work.jsonl",
        &[
            r#"{"role":"assistant","content":"look for the heron queue consumer"}"#,
            r#"{"role":"tool","content":"queue/heron.py:8: def drain(): slow heron queue"}"#,
        ],
    );
    let db = env.project_dir().join("index.db");
    set_back_before_session_work(&db);
    // Whether every hit has the lift only work sessions get.
    let as_work = |home: &std::path::Path| {
        let out = env
            .cmd_with(home, &env.project)
            .args(["query", "--format", "json", "--explain", "heron queue"])
            .output()
            .unwrap();
        assert_success(&out);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let hits = v["hits"].as_array().unwrap();
        assert!(!hits.is_empty(), "{v}");
        hits.iter().all(|h| {
            h["explain"]["lifts"]
                .as_array()
                .unwrap()
                .iter()
                .any(|l| l["name"] == "session_coverage")
        })
    };
    let ro = env.tmp.path().join("ro-home");
    if let Some(_mount) = ReadOnlyMount::new(&env.home(), &ro) {
        assert!(as_work(&ro));
        assert_eq!(user_version(&db), 8, "a read-only home is not upgraded");
    }
    assert!(as_work(&env.home()));
    assert_eq!(user_version(&db), recall::store::SCHEMA_VERSION);
    let work: i64 = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row("SELECT work FROM sessions", [], |r| r.get(0))
        .unwrap();
    assert_eq!(work, 1);
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
    let out = run_with_file_limit(&env, 2048, &["index", big.to_str().unwrap()], "");
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
    run_with_file_limit(env, 0, args, stdin)
}

/// `recall --home HOME --project alpha ARGS` under a file size limit of
/// `blocks` (`ulimit -f`, with SIGXFSZ ignored so that a write past it
/// fails with EFBIG instead of killing the process), given `stdin`.
#[cfg(unix)]
fn run_with_file_limit(env: &Env, blocks: u32, args: &[&str], stdin: &str) -> std::process::Output {
    use std::io::Write;
    let recall = assert_cmd::cargo::cargo_bin("recall");
    let mut child = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "trap '' XFSZ; ulimit -f {blocks}; exec \"$0\" \"$@\""
        ))
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
    let reader = env.open_index();
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

/// Every file under `home` whose mode lets others read it.
#[cfg(unix)]
fn readable_by_others(home: &std::path::Path) -> Vec<String> {
    use std::os::unix::fs::PermissionsExt;
    walkdir::WalkDir::new(home)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .filter(|e| e.metadata().unwrap().permissions().mode() & 0o077 != 0)
        .map(|e| e.path().display().to_string())
        .collect()
}

/// `doctor`'s findings: (problem, fix) pairs, in order.
fn findings(out: &str) -> Vec<(String, String)> {
    let lines: Vec<&str> = out.lines().collect();
    lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| {
            let what = l.strip_prefix("problem: ")?;
            let fix = lines.get(i + 1)?.trim_start().strip_prefix("fix: ")?;
            Some((what.to_string(), fix.to_string()))
        })
        .collect()
}

/// Issue 37 item 5: `reindex` on a disk that refuses writes created
/// `user/index.db` with 0 bytes and mode 0644 (every other file is 0600),
/// and `doctor` then listed eleven problems for it, one "sqlite: no such
/// table: records" with no path, each fixed by `recall reindex --full`.
/// The file is private, and doctor says one thing: it is empty, with the
/// fix that works (`recall reindex`, once the disk takes writes).
#[cfg(unix)]
#[test]
fn r37_a_refused_reindex_leaves_one_private_empty_index_and_one_finding() {
    let env = Env::new();
    env.add("decisions", "cache", "We cache sessions in walrusdb.");
    let user_db = env.home().join("user/index.db");
    assert!(!user_db.exists());
    let out = run_refusing_writes(&env, &["reindex"], "");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&user_db.display().to_string()), "{stderr}");
    assert_eq!(
        readable_by_others(&env.home()),
        Vec::<String>::new(),
        "every file 0600"
    );
    assert_eq!(std::fs::metadata(&user_db).unwrap().len(), 0);
    let (code, out) = env.doctor();
    assert_eq!(code, Some(1), "{out}");
    let found = findings(&out);
    assert_eq!(found.len(), 1, "{out}");
    let (what, fix) = &found[0];
    assert!(
        what.starts_with(&format!("{} is empty", user_db.display())),
        "{out}"
    );
    assert_eq!(fix, "run `recall reindex`", "{out}");
    env.run(&["reindex"]);
    let (code, out) = env.doctor();
    assert_eq!(code, Some(0), "{out}");
}

/// Issue 37 item 5: on a disk that refuses writes, `doctor` on a normal
/// index said "sqlite: disk I/O error", fix: run `recall reindex --full`
/// (which fails the same way). One finding names the index, and its fix is
/// the disk's.
#[cfg(unix)]
#[test]
fn r37_doctor_on_a_disk_that_refuses_writes_names_the_index_and_the_disk() {
    let env = Env::new();
    env.add("decisions", "cache", "We cache sessions in walrusdb.");
    let db = env.project_dir().join("index.db");
    assert!(!env.project_dir().join("index.db-shm").exists());
    let out = run_refusing_writes(&env, &["doctor"], "");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let found = findings(&text);
    assert_eq!(found.len(), 1, "{text}");
    let (what, fix) = &found[0];
    assert!(what.contains(&db.display().to_string()), "{text}");
    assert!(what.contains("refuses writes"), "{text}");
    assert!(!fix.contains("reindex"), "{text}");
    assert!(fix.contains("check that disk"), "{text}");
    let (code, out) = env.doctor();
    assert_eq!(code, Some(0), "{out}");
}

/// A 1 MB tmpfs at `dir`, unmounted on drop.
#[cfg(unix)]
struct SmallDisk(std::path::PathBuf);

#[cfg(unix)]
impl SmallDisk {
    /// `None` (with "skipped" printed) where mounting is not allowed.
    fn new(dir: &std::path::Path) -> Option<SmallDisk> {
        std::fs::create_dir_all(dir).unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m,mode=700", "tmpfs"])
            .arg(dir)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !mounted {
            eprintln!("skipped: cannot mount a tmpfs (needs root)");
            return None;
        }
        Some(SmallDisk(dir.to_path_buf()))
    }
}

#[cfg(unix)]
impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// Issue 37 item 5 on a real full disk (a 1 MB tmpfs, where this machine
/// lets a test mount one): `reindex` fails naming the file and the fix and
/// leaves every file private; `doctor` finds one problem per index, each
/// naming it, each fixed by freeing space first; once space is freed, the
/// fixes it printed repair the home.
#[cfg(unix)]
#[test]
fn r37_a_full_disk_gets_one_finding_per_index_whose_fix_frees_space_first() {
    let env = Env::new();
    let Some(_disk) = SmallDisk::new(&env.home()) else {
        return;
    };
    env.add("decisions", "cache", "We cache sessions in walrusdb.");
    let fill = env.home().join("fill");
    let _ = std::process::Command::new("dd")
        .args(["if=/dev/zero", "bs=4096"])
        .arg(format!("of={}", fill.display()))
        .stderr(std::process::Stdio::null())
        .status();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fill, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = env.cmd().arg("reindex").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no space left to write"), "{stderr}");
    assert_eq!(readable_by_others(&env.home()), Vec::<String>::new());
    let (code, out) = env.doctor();
    assert_eq!(code, Some(1), "{out}");
    let found = findings(&out);
    let indexes = [
        env.home().join("user/index.db"),
        env.project_dir().join("index.db"),
    ];
    assert_eq!(found.len(), 2, "{out}");
    for ((what, fix), db) in found.iter().zip(&indexes) {
        assert!(what.contains(&db.display().to_string()), "{out}");
        assert!(fix.starts_with("free space on that disk"), "{out}");
        assert!(!what.contains("sqlite:"), "{out}");
    }
    std::fs::remove_file(&fill).unwrap();
    env.run(&["reindex"]);
    let (code, out) = env.doctor();
    assert_eq!(code, Some(0), "{out}");
}
