//! Failure modes: bad stdin, unknown events, a missing home or one that is
//! a file, a corrupt or locked index, a passed deadline. Each exits 0 with
//! valid or empty output and a message on stderr. And an index from an
//! older schema, read as it is.

use std::time::Duration;

use super::{
    hook, in_project, make_project, ok, payload, populated, recall, recall_with, run_hook,
    store_dir, LAUNCHERS,
};
use crate::common::wait::until;
use crate::common::{assert_success, set_back_before_session_work, testdata, user_version, Env};
use serde_json::json;

#[test]
fn bad_stdin_and_unknown_events_exit_0() {
    let env = Env::new();
    let proj = populated(&env);
    for launcher in LAUNCHERS {
        for stdin in [
            b"".to_vec(),
            b"   \n".to_vec(),
            b"not json at all {{".to_vec(),
            b"\xff\xfe\x00garbage".to_vec(),
            b"[1, 2, 3]".to_vec(),
            b"{\"hook_event_name\": 42}".to_vec(),
            b"{\"hook_event_name\": \"SessionStart\", \"cwd\": ".to_vec(),
        ] {
            let r = run_hook(recall(&env), launcher, stdin.clone(), &[]);
            assert_eq!((r.code, r.out.as_str()), (0, ""), "{stdin:?}: {r:?}");
            assert!(
                r.err.contains(&format!("recall hook {launcher}"))
                    && r.err.contains("hook payload"),
                "{stdin:?}: {r:?}"
            );
        }
        // Events recall does not handle are ignored.
        for event in ["PreToolUse", "Notification", "SubagentStop", ""] {
            let r = hook(
                &env,
                launcher,
                &payload(event, &proj, json!({"tool_name": "Bash"})),
            );
            assert_eq!((r.code, r.out.as_str()), (0, ""), "{event}: {r:?}");
        }
    }
}

#[test]
fn missing_home_exits_0_with_a_message() {
    let env = Env::new();
    let proj = make_project(&env, "shop");
    let home = env.tmp.path().join("no/such/home");
    for launcher in LAUNCHERS {
        for (event, extra) in [
            ("SessionStart", json!({"source": "startup"})),
            ("UserPromptSubmit", json!({"prompt": "redis pool"})),
        ] {
            let p = payload(event, &proj, extra);
            let r = run_hook(recall_with(&env, &home), launcher, p.to_string(), &[]);
            assert_eq!((r.code, r.out.as_str()), (0, ""), "{event}: {r:?}");
            // The module doc promises it: a missing home goes to stderr.
            assert!(
                r.err.contains(&format!("recall hook {launcher}")),
                "{event}: no message on stderr: {r:?}"
            );
        }
    }
    assert!(!home.exists(), "reading hooks never create the home");
    // SessionEnd creates it: the first session of a new user is indexed.
    let p = payload(
        "SessionEnd",
        &proj,
        json!({"transcript_path": testdata("recall").join("sessions/redis-hang.jsonl")}),
    );
    let r = run_hook(recall_with(&env, &home), "claude-code", p.to_string(), &[]);
    assert_eq!((r.code, r.out.as_str()), (0, ""), "{r:?}");
    let out = recall_with(&env, &home)
        .arg("--cwd")
        .arg(&proj)
        .args(["query", "--format", "json", "redis pool"])
        .output()
        .unwrap();
    assert_success(&out);
}

#[test]
fn home_that_is_a_file_exits_0_with_a_message() {
    let env = Env::new();
    let proj = make_project(&env, "shop");
    let home = env.tmp.path().join("home-file");
    std::fs::write(&home, "I am not a folder").unwrap();
    for launcher in LAUNCHERS {
        for (event, extra) in [
            ("SessionStart", json!({"source": "startup"})),
            ("UserPromptSubmit", json!({"prompt": "redis pool"})),
            (
                "SessionEnd",
                json!({"transcript_path": testdata("recall").join("sessions/redis-hang.jsonl")}),
            ),
        ] {
            let p = payload(event, &proj, extra);
            let r = run_hook(recall_with(&env, &home), launcher, p.to_string(), &[]);
            assert_eq!((r.code, r.out.as_str()), (0, ""), "{event}: {r:?}");
            assert!(r.err.contains("recall hook"), "{event}: {r:?}");
        }
    }
    assert_eq!(std::fs::read_to_string(&home).unwrap(), "I am not a folder");
}

#[test]
fn corrupt_index_exits_0_with_a_message() {
    let env = Env::new();
    let proj = populated(&env);
    let db = store_dir(&env, &proj).join("index.db");
    for ext in ["db-wal", "db-shm"] {
        let _ = std::fs::remove_file(db.with_extension(ext));
    }
    let garbage: Vec<u8> = {
        let mut rng = synth::Rng::with_seed(7);
        (0..64 * 1024).map(|_| rng.u8(..)).collect()
    };
    std::fs::write(&db, &garbage).unwrap();
    for launcher in LAUNCHERS {
        for (event, extra) in [
            ("SessionStart", json!({"source": "startup"})),
            ("UserPromptSubmit", json!({"prompt": "checkout redis pool"})),
            (
                "SessionEnd",
                json!({"transcript_path": testdata("recall").join("sessions/redis-hang.jsonl")}),
            ),
        ] {
            let p = payload(event, &proj, extra);
            // A deadline shorter than SQLite's 5 s busy timeout: a hook
            // that retried until a timeout would hit it, and say so.
            let r = run_hook(
                recall(&env),
                launcher,
                p.to_string(),
                &["--deadline-ms", "3000"],
            );
            assert_eq!((r.code, r.out.as_str()), (0, ""), "{event}: {r:?}");
            let head: String = r.err.chars().take(600).collect();
            assert!(
                r.err.contains("recall hook") && r.err.contains("index.db"),
                "{event}: the message names the file: {head}"
            );
            // Reported at once, in a line or two: not after retrying until
            // the deadline, not with a log line per retry.
            assert!(
                !r.err.contains("deadline of") && !r.err.contains("continues in the background"),
                "{event}: retried until the deadline: {head}"
            );
            assert!(
                r.err.len() < 2_000,
                "{event}: {} bytes on stderr: {head}",
                r.err.len()
            );
        }
    }
    assert_eq!(
        std::fs::read(&db).unwrap(),
        garbage,
        "the hook leaves it alone"
    );
}

#[test]
fn locked_index_exits_0_within_the_deadline() {
    let env = Env::new();
    let proj = populated(&env);
    let dir = store_dir(&env, &proj);
    let lock = rusqlite::Connection::open(dir.join("index.db")).unwrap();
    lock.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let deadline = ["--deadline-ms", "400"];
    // The deadline, when hit, is a line on stderr: the main thread's, or
    // the indexing child's budget (three quarters of it) running out.
    let hit = |err: &str| {
        err.contains("deadline of 400 ms passed") || err.contains("continues in the background")
    };
    for launcher in LAUNCHERS {
        // Reading needs no lock in WAL mode: output or nothing, on time.
        for (event, extra) in [
            ("SessionStart", json!({"source": "startup"})),
            ("UserPromptSubmit", json!({"prompt": "checkout redis pool"})),
        ] {
            let p = payload(event, &proj, extra);
            let r = run_hook(recall(&env), launcher, p.to_string(), &deadline);
            // Exit 0 with output or nothing (no hit is worth adding, or
            // the deadline passed, which it then says), never a hang.
            r.empty_or_valid(event);
        }
        // Indexing a new transcript needs the write lock: it cannot finish,
        // and says so on stderr, within the deadline.
        let fresh = env.tmp.path().join(format!("fresh-{launcher}.jsonl"));
        std::fs::copy(
            testdata("recall").join("sessions/release-push.jsonl"),
            &fresh,
        )
        .unwrap();
        let p = payload("SessionEnd", &proj, json!({ "transcript_path": fresh }));
        let r = run_hook(recall(&env), launcher, p.to_string(), &deadline);
        assert_eq!((r.code, r.out.as_str()), (0, ""), "{r:?}");
        assert!(
            r.err.contains(&format!("recall hook {launcher}: ")) && hit(&r.err),
            "the deadline was hit and said so: {r:?}"
        );
    }
    // A record changed on disk needs a sync (a write) before reading.
    std::fs::write(
        dir.join("records/decisions/new-while-locked.md"),
        "---\nid: new-while-locked\nkey: new while locked\ncategory: decisions\nscope: project\nsource: manual\ncreated: 2020-01-01T00:00:00Z\nupdated: 2020-01-01T00:00:00Z\n---\n\nWritten while the index was locked.\n",
    )
    .unwrap();
    let p = payload(
        "UserPromptSubmit",
        &proj,
        json!({"prompt": "checkout redis pool", "session_id": "a-new-session"}),
    );
    let r = run_hook(recall(&env), "claude-code", p.to_string(), &deadline);
    r.empty_or_valid("UserPromptSubmit");
    assert!(
        !r.out.is_empty() || r.err.contains("recall hook claude-code: "),
        "nothing printed must be explained on stderr: {r:?}"
    );
    lock.execute_batch("ROLLBACK").unwrap();
    // Unlocked, everything works again. The SessionEnd hooks above left
    // `recall index` children that take the write lock now, and a read
    // never waits for a writer (it answers from the index as it is), so
    // the record shows up once they are done: poll (this failed once in
    // CI when the first read raced those children).
    let p = payload(
        "UserPromptSubmit",
        &proj,
        json!({"prompt": "new while locked"}),
    );
    until(
        30,
        "the record written while locked was never found",
        || {
            let r = hook(&env, "claude-code", &p);
            r.empty_or_valid("UserPromptSubmit");
            !r.out.is_empty() && r.context("UserPromptSubmit").contains("new while locked")
        },
    );
}

#[test]
fn a_passed_deadline_exits_0_with_nothing_or_valid_output() {
    let env = Env::new();
    let proj = populated(&env);
    // A bigger store, so the work takes a while.
    let many = env.tmp.path().join("many");
    std::fs::create_dir_all(&many).unwrap();
    for f in 0..30 {
        let mut body =
            json!({"session": {"id": format!("bulk-{f}"), "title": "bulk"}}).to_string() + "\n";
        for i in 0..40 {
            body += &(json!({"role": "user", "id": format!("{f}-{i}"),
                "content": format!("checkout redis pool message {i} in file {f} with filler words w{f}x{i}")})
            .to_string()
                + "\n");
        }
        std::fs::write(many.join(format!("b{f}.jsonl")), body).unwrap();
    }
    ok(in_project(&env, &proj).arg("index").arg(&many));
    for launcher in LAUNCHERS {
        for ms in ["1", "0"] {
            for (event, extra) in [
                ("SessionStart", json!({"source": "startup"})),
                (
                    "UserPromptSubmit",
                    json!({"prompt": "checkout redis pool exhausted"}),
                ),
            ] {
                let p = payload(event, &proj, extra);
                let r = run_hook(
                    recall(&env),
                    launcher,
                    p.to_string(),
                    &["--deadline-ms", ms],
                );
                r.empty_or_valid(event);
                if r.out.is_empty() {
                    assert!(r.err.contains("deadline"), "{r:?}");
                }
            }
        }
    }
    // The environment variable sets the deadline too.
    let p = payload(
        "UserPromptSubmit",
        &proj,
        json!({"prompt": "checkout redis pool"}),
    );
    let mut c = recall(&env);
    c.env("RECALL_HOOK_DEADLINE_MS", "1");
    let r = run_hook(c, "claude-code", p.to_string(), &[]);
    r.empty_or_valid("UserPromptSubmit");
}

/// An index from before `sessions.work` (schema 8) is read as it is by
/// the prompt hook, which never upgrades (a migration could outlast its
/// deadline): the past session is still recalled, instead of the hook
/// failing on the missing column, and the index stays at schema 8 until a
/// command upgrades it.
#[test]
fn the_prompt_hook_reads_an_index_from_before_session_work_as_it_is() {
    let env = Env::new();
    let proj = populated(&env);
    let db = store_dir(&env, &proj).join("index.db");
    set_back_before_session_work(&db);
    let p = payload(
        "UserPromptSubmit",
        &proj,
        json!({"prompt": "checkout requests time out again - is the redis pool exhausted?"}),
    );
    let r = hook(&env, "claude-code", &p);
    let ctx = r.context("UserPromptSubmit");
    assert!(
        ctx.contains("_source: session sess-redis-hang messages "),
        "{r:?}"
    );
    assert_eq!(user_version(&db), 8);
    ok(in_project(&env, &proj).args(["query", "redis pool"]));
    assert_eq!(user_version(&db), recall::store::SCHEMA_VERSION);
}

/// Arguments or variables a hook does not take (a typo in
/// `RECALL_HOOK_DEADLINE_MS`, an option of a newer recall's settings)
/// exit 0 with no context and say what is wrong on stderr: Claude Code
/// reads exit 2 from a prompt hook as "block this prompt". Everything else
/// still refuses them with exit 2, and `--help` is still help.
#[test]
fn hook_arguments_that_do_not_parse_exit_0_with_a_message() {
    let env = Env::new();
    let proj = populated(&env);
    let prompt = payload(
        "UserPromptSubmit",
        &proj,
        json!({"prompt": "checkout requests time out again - is the redis pool exhausted?"}),
    );
    for launcher in LAUNCHERS.into_iter().chain(["gemini"]) {
        let mut bad_var = recall(&env);
        bad_var.env("RECALL_HOOK_DEADLINE_MS", "2s");
        let r = run_hook(bad_var, launcher, prompt.to_string(), &[]);
        let nothing = if launcher == "gemini" { "{}\n" } else { "" };
        assert_eq!((r.code, r.out.as_str()), (0, nothing), "{r:?}");
        assert!(
            r.err.contains(&format!(
                "recall hook {launcher}: no context added: invalid value '2s'"
            )),
            "{r:?}"
        );
        let r = run_hook(
            recall(&env),
            launcher,
            prompt.to_string(),
            &["--newer-option"],
        );
        assert_eq!((r.code, r.out.as_str()), (0, nothing), "{r:?}");
        assert!(
            r.err.contains("unexpected argument '--newer-option'"),
            "{r:?}"
        );
    }
    // The same prompt with the arguments right gets its context.
    let r = run_hook(recall(&env), "claude-code", prompt.to_string(), &[]);
    assert!(r.context("UserPromptSubmit").contains("redis"), "{r:?}");
    let out = recall(&env)
        .args(["hook", "install", "--newer-option"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = recall(&env)
        .args(["hook", "claude-code", "--help"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Usage: recall hook claude-code"));
}

/// Regression (review, stop 59): a query flag given before `hook` (a
/// launcher's command line edited by hand: `recall --limit 5 hook …`) made
/// the hook exit 2, which Claude Code reads as "block this prompt", and an
/// `--ephemeral` home that could not be made did the same. And with stderr
/// a pipe whose reader had gone, the hook's first message panicked: exit
/// 101 on an error, and past the deadline a process that never ended.
#[test]
fn r_nothing_before_the_hook_or_on_its_stderr_makes_it_fail_or_hang() {
    let env = Env::new();
    let proj = populated(&env);
    let prompt = payload(
        "UserPromptSubmit",
        &proj,
        json!({"prompt": "checkout requests time out again - is the redis pool exhausted?"}),
    );
    for launcher in LAUNCHERS.into_iter().chain(["gemini"]) {
        let nothing = if launcher == "gemini" { "{}\n" } else { "" };
        let mut c = recall(&env);
        c.args(["--limit", "5"]);
        let r = run_hook(c, launcher, prompt.to_string(), &[]);
        assert_eq!((r.code, r.out.as_str()), (0, nothing), "{r:?}");
        assert!(r.err.contains("--limit before the subcommand"), "{r:?}");
        let mut c = recall(&env);
        c.arg("--ephemeral")
            .env("TMPDIR", env.tmp.path().join("nowhere"));
        let r = run_hook(c, launcher, prompt.to_string(), &[]);
        assert_eq!((r.code, r.out.as_str()), (0, nothing), "{r:?}");
        assert!(r.err.contains("--ephemeral"), "{r:?}");
    }
    // stderr closed by its reader: an error to report (not a payload), and
    // a deadline passed (stdin left open).
    let closed_stderr = |stdin: Option<&str>| {
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("recall"))
            .env_remove("RECALL_HOME")
            .env_remove("RECALL_HOOK_DEADLINE_MS")
            .arg("--home")
            .arg(env.home())
            .args(["hook", "gemini", "--deadline-ms", "300"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stderr.take());
        let mut held = child.stdin.take().unwrap();
        if let Some(text) = stdin {
            use std::io::Write as _;
            held.write_all(text.as_bytes()).unwrap();
            drop(held);
        } else {
            std::mem::forget(held);
        }
        let start = std::time::Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break Some(s);
            }
            if start.elapsed() > Duration::from_secs(30) {
                child.kill().unwrap();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut out = String::new();
        std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut out).unwrap();
        (status.and_then(|s| s.code()), out)
    };
    assert_eq!(
        closed_stderr(Some("not a payload")),
        (Some(0), "{}\n".into())
    );
    assert_eq!(closed_stderr(None), (Some(0), "{}\n".into()));
}
