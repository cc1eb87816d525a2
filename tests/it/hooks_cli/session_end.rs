//! The hooks that index: SessionEnd and Stop index the transcript silently
//! (in the background for a big one), wait for a short write lock, report a
//! missing transcript; PreCompact indexes and extracts the session.

use std::path::Path;

use super::{
    hook, in_project, ok, payload, populated, query_sessions, recall, run_hook, store_dir,
};
use crate::common::wait::{for_writer_waiting, until};
use crate::common::Env;
use serde_json::json;

fn cc_line(
    uuid: &str,
    parent: Option<&str>,
    role: &str,
    text: &str,
    cwd: &Path,
    ts: &str,
) -> String {
    let message = if role == "user" {
        json!({"role": "user", "content": text})
    } else {
        json!({"id": format!("msg_{uuid}"), "type": "message", "role": "assistant", "model": "claude-sonnet-4",
               "content": [{"type": "text", "text": text}]})
    };
    json!({
        "type": role, "uuid": uuid, "parentUuid": parent, "sessionId": "cc-sess-1",
        "timestamp": ts, "cwd": cwd, "version": "2.0.0", "gitBranch": "main",
        "isSidechain": false, "userType": "external", "message": message,
    })
    .to_string()
        + "\n"
}

/// A Claude Code transcript at `path` (session `cc-sess-1`, in `cwd`): one
/// question about `thing` and its answer.
fn importer_transcript(path: &Path, thing: &str, cwd: &Path) {
    std::fs::write(
        path,
        cc_line(
            "u1",
            None,
            "user",
            &format!("Why does the {thing} importer skip rows?"),
            cwd,
            "2020-10-01T10:00:00Z",
        ) + &cc_line(
            "a1",
            Some("u1"),
            "assistant",
            &format!("The {thing} importer treats a blank SKU as the end of the file."),
            cwd,
            "2020-10-01T10:00:05Z",
        ),
    )
    .unwrap();
}

#[test]
fn session_end_and_stop_index_the_transcript_silently() {
    let env = Env::new();
    let proj = populated(&env);
    // Claude Code: SessionEnd indexes the transcript.
    let t = env.tmp.path().join("cc-sess-1.jsonl");
    importer_transcript(&t, "pomegranate", &proj);
    assert!(query_sessions(&env, &proj, "pomegranate").is_empty());
    let p = payload(
        "SessionEnd",
        &proj,
        json!({"session_id": "cc-sess-1", "transcript_path": t, "reason": "exit"}),
    );
    let r = hook(&env, "claude-code", &p);
    assert_eq!((r.code, r.out.as_str()), (0, ""), "{r:?}");
    assert_eq!(query_sessions(&env, &proj, "pomegranate"), ["cc-sess-1"]);
    // Stop after more turns: only the new part is read, and found.
    let mut f = std::fs::OpenOptions::new().append(true).open(&t).unwrap();
    use std::io::Write as _;
    f.write_all(
        cc_line(
            "u2",
            Some("a1"),
            "user",
            "Now the persimmon exporter drops the header row.",
            &proj,
            "2020-10-01T10:05:00Z",
        )
        .as_bytes(),
    )
    .unwrap();
    drop(f);
    let p = payload(
        "Stop",
        &proj,
        json!({"session_id": "cc-sess-1", "transcript_path": t, "stop_hook_active": false}),
    );
    let r = hook(&env, "claude-code", &p);
    assert_eq!((r.code, r.out.as_str()), (0, ""), "{r:?}");
    assert_eq!(query_sessions(&env, &proj, "persimmon"), ["cc-sess-1"]);
    assert_eq!(query_sessions(&env, &proj, "pomegranate"), ["cc-sess-1"]);
    // The same Stop again changes nothing.
    let r = hook(&env, "claude-code", &p);
    assert_eq!((r.code, r.out.as_str()), (0, ""), "{r:?}");

    // Codex: a rollout file.
    let uuid = "0199aaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee";
    let rollout = env
        .tmp
        .path()
        .join(format!("rollout-2020-10-02T09-00-00-{uuid}.jsonl"));
    let lines = [
        json!({"timestamp": "2020-10-02T09:00:00.000Z", "type": "session_meta",
               "payload": {"id": uuid, "timestamp": "2020-10-02T09:00:00.000Z", "cwd": proj,
                           "originator": "codex_cli_rs", "cli_version": "0.40.0"}}),
        json!({"timestamp": "2020-10-02T09:00:01.000Z", "type": "event_msg",
               "payload": {"type": "user_message", "message": "the tangerine cache evicts hot keys too early", "images": []}}),
        json!({"timestamp": "2020-10-02T09:00:05.000Z", "type": "response_item",
               "payload": {"type": "message", "role": "assistant",
                           "content": [{"type": "output_text", "text": "The tangerine cache is an LRU of 128 entries; 4096 fixes the evictions."}]}}),
    ];
    let text: String = lines.iter().map(|l| l.to_string() + "\n").collect();
    std::fs::write(&rollout, text).unwrap();
    let p = payload(
        "Stop",
        &proj.join("src/api"),
        json!({"session_id": uuid, "transcript_path": rollout}),
    );
    let r = hook(&env, "codex", &p);
    assert_eq!((r.code, r.out.as_str()), (0, ""), "{r:?}");
    assert_eq!(query_sessions(&env, &proj, "tangerine"), [uuid]);
    // And the next session starts with it among the recent sessions.
    let ctx = hook(
        &env,
        "codex",
        &payload("SessionStart", &proj, json!({"source": "startup"})),
    )
    .context("SessionStart");
    assert!(ctx.contains(uuid), "{ctx}");
}

#[test]
fn session_end_waits_for_a_short_write_lock() {
    // Another recall process (a query's salience update, `record add`)
    // holds the write lock for a moment: the SessionEnd hook, well within
    // its deadline, must wait for it rather than fail.
    let env = Env::new();
    let proj = populated(&env);
    let db = store_dir(&env, &proj).join("index.db");
    let lock = rusqlite::Connection::open(&db).unwrap();
    lock.execute_batch("BEGIN IMMEDIATE; UPDATE chunks SET hits = hits + 1;")
        .unwrap();
    let t = env.tmp.path().join("cc-sess-2.jsonl");
    std::fs::write(
        &t,
        cc_line(
            "u1",
            None,
            "user",
            "The guava uploader times out on big files.",
            &proj,
            "2020-10-03T10:00:00Z",
        )
        .replace("cc-sess-1", "cc-sess-2"),
    )
    .unwrap();
    let p = payload(
        "SessionEnd",
        &proj,
        json!({"session_id": "cc-sess-2", "transcript_path": t}),
    );
    let mut c = recall(&env);
    c.args(["hook", "claude-code", "--deadline-ms", "8000"])
        .write_stdin(p.to_string());
    let child = std::thread::spawn(move || c.output().unwrap());
    // Released once the hook's `recall index` child waits for it, not
    // after a guess at how long the child takes to get there.
    for_writer_waiting(&db);
    lock.execute_batch("COMMIT").unwrap();
    let out = child.join().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(query_sessions(&env, &proj, "guava"), ["cc-sess-2"]);
}

#[test]
fn session_end_without_a_transcript_reports_on_stderr() {
    let env = Env::new();
    let proj = populated(&env);
    for extra in [
        json!({"transcript_path": null}),
        json!({"transcript_path": proj.join("missing.jsonl")}),
    ] {
        let mut p = payload("SessionEnd", &proj, extra);
        if p["transcript_path"].is_null() {
            p.as_object_mut().unwrap().remove("transcript_path");
        }
        let r = hook(&env, "claude-code", &p);
        assert_eq!((r.code, r.out.as_str()), (0, ""), "{r:?}");
        assert!(r.err.contains("recall"), "a message on stderr: {r:?}");
    }
}

/// Regression (issue probe: SessionEnd on a big transcript ran out of its
/// 2 s deadline, indexed nothing and said "no context added"): the hook
/// answers within its deadline and the indexing finishes in the background.
#[test]
fn r_session_end_on_a_big_transcript_finishes_in_the_background() {
    let env = Env::new();
    let proj = populated(&env);
    let t = env.tmp.path().join("cc-big.jsonl");
    let mut text = String::new();
    let filler = "the heron deploy pipeline retried the canary step ".repeat(40);
    for i in 0..4000 {
        let line = cc_line(
            &format!("u{i}"),
            (i > 0).then(|| format!("u{}", i - 1)).as_deref(),
            if i % 2 == 0 { "user" } else { "assistant" },
            &format!("{filler} step {i}"),
            &proj,
            "2020-10-03T10:00:00Z",
        );
        text.push_str(&line.replace("cc-sess-1", "cc-big"));
    }
    text.push_str(
        &cc_line(
            "zlast",
            Some("u3999"),
            "user",
            "The kingfisher cache warms up too slowly.",
            &proj,
            "2020-10-03T11:00:00Z",
        )
        .replace("cc-sess-1", "cc-big"),
    );
    std::fs::write(&t, text).unwrap();
    let p = payload(
        "SessionEnd",
        &proj,
        json!({"session_id": "cc-big", "transcript_path": t}),
    );
    let r = run_hook(
        recall(&env),
        "claude-code",
        p.to_string(),
        // Long enough to start the child on a loaded machine (50 ms failed
        // in CI while another job ran), far too short to index 8 MB.
        &["--deadline-ms", "400"],
    );
    // Answered at the deadline: the child's budget ran out, and the hook
    // said so and left it running.
    assert_eq!((r.code, r.out.as_str()), (0, ""), "{r:?}");
    assert!(r.err.contains("continues in the background"), "{r:?}");
    until(60, "the background index never finished", || {
        !query_sessions(&env, &proj, "kingfisher").is_empty()
    });
    assert_eq!(query_sessions(&env, &proj, "kingfisher"), ["cc-big"]);
}

/// Write-then-compact: a PreCompact payload (as Claude Code sends it, with
/// `trigger` and `custom_instructions`) indexes the transcript so far and
/// extracts this session at once, the idle rule notwithstanding; the hook
/// prints nothing and exits 0.
#[test]
fn pre_compact_indexes_and_extracts_this_session() {
    let env = Env::new();
    let proj = populated(&env);
    let t = env.tmp.path().join("cc-compact.jsonl");
    let now = jiff::Timestamp::now().to_string();
    let turns = [
        ("user", "Always use pnpm, not npm, in this repo."),
        ("assistant", "Noted: I switched the install instructions in the README to pnpm and removed package-lock.json."),
        ("user", "We decided to use SQLite with WAL for the job queue."),
        ("assistant", "I enabled WAL mode when the connection opens and added a busy timeout so concurrent readers do not fail."),
        ("user", "To run the tests, use `cargo test --all`."),
        ("assistant", "Ran `cargo test --all`: all 112 tests pass, including the new queue tests."),
    ];
    let mut text = String::new();
    for (i, (role, msg)) in turns.iter().enumerate() {
        let parent = (i > 0).then(|| format!("u{}", i - 1));
        text.push_str(
            &cc_line(&format!("u{i}"), parent.as_deref(), role, msg, &proj, &now)
                .replace("cc-sess-1", "cc-compact"),
        );
    }
    std::fs::write(&t, text).unwrap();
    // Regression (review, stop 62): a resumed session (`claude --resume`)
    // has a new id, and its transcript begins with the lines, and so is
    // indexed under the id, of the session it resumed; extracting it by
    // the payload's id failed ("no indexed session").
    let p = payload(
        "PreCompact",
        &proj,
        json!({"session_id": "cc-resumed", "transcript_path": t, "trigger": "auto", "custom_instructions": ""}),
    );
    let r = run_hook(
        recall(&env),
        "claude-code",
        p.to_string(),
        &["--deadline-ms", "8000"],
    );
    assert_eq!((r.code, r.out.as_str()), (0, ""), "{r:?}");
    assert!(r.err.is_empty(), "{r:?}");
    assert_eq!(query_sessions(&env, &proj, "pnpm"), ["cc-compact"]);
    let out = in_project(&env, &proj)
        .args(["record", "list", "--source", "auto", "--format", "json"])
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(
        listed.contains("pnpm"),
        "extracted before compaction: {listed}"
    );
}

/// Regression (review, stop 59): the payload's `transcript_path` reached
/// the child `recall index` as it was, so `--prune` ran as an option (and
/// dropped a session whose file was gone) and a folder (`/etc`) was walked;
/// and the child ran in the hook's folder, so a hook started in a folder
/// since removed indexed nothing. Now only a file is indexed, a relative
/// path is the session folder's, and the child runs from the home.
#[test]
fn r_session_end_indexes_one_file_whatever_the_payload_and_folder() {
    let env = Env::new();
    let proj = populated(&env);
    // A session whose file is gone: `index --prune` would drop it.
    let fig = env.tmp.path().join("fig.jsonl");
    std::fs::write(
        &fig,
        cc_line(
            "u8",
            None,
            "user",
            "The fig importer needs a retry",
            &proj,
            "2020-10-01T10:00:00Z",
        ),
    )
    .unwrap();
    ok(in_project(&env, &proj).arg("index").arg(&fig));
    std::fs::remove_file(&fig).unwrap();
    assert!(!query_sessions(&env, &proj, "fig importer").is_empty());
    for path in ["--prune", "--help"] {
        let r = hook(
            &env,
            "claude-code",
            &payload("SessionEnd", &proj, json!({"transcript_path": path})),
        );
        assert_eq!((r.code, r.out.as_str()), (0, ""), "{r:?}");
        assert!(r.err.contains("is not a file; nothing indexed"), "{r:?}");
    }
    let folder = env.tmp.path().join("transcripts");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("other.jsonl"),
        cc_line(
            "u9",
            None,
            "user",
            "The quince exporter drops rows",
            &proj,
            "2020-10-01T10:00:00Z",
        ),
    )
    .unwrap();
    let r = hook(
        &env,
        "claude-code",
        &payload("SessionEnd", &proj, json!({"transcript_path": folder})),
    );
    assert!(r.err.contains("is not a file"), "{r:?}");
    assert!(query_sessions(&env, &proj, "quince").is_empty());
    // Nothing was pruned.
    assert!(!query_sessions(&env, &proj, "fig importer").is_empty());
    // Relative to the session's folder, from a hook whose folder is gone.
    std::fs::rename(folder.join("other.jsonl"), proj.join("quince.jsonl")).unwrap();
    let gone = env.tmp.path().join("gone");
    std::fs::create_dir_all(&gone).unwrap();
    let mut c = assert_cmd::Command::new("sh");
    c.arg("-c")
        .arg(r#"cd "$1" && rmdir "$1" && h="$2" && shift 2 && exec "$0" --home "$h" "$@""#)
        .arg(assert_cmd::cargo::cargo_bin("recall"))
        .arg(&gone)
        .arg(env.home())
        .env_remove("RECALL_HOME")
        .env_remove("RECALL_HOOK_DEADLINE_MS");
    let p = payload(
        "SessionEnd",
        &proj,
        json!({"transcript_path": "quince.jsonl"}),
    );
    let r = run_hook(c, "claude-code", p.to_string(), &[]);
    assert_eq!(
        (r.code, r.out.as_str(), r.err.as_str()),
        (0, "", ""),
        "{r:?}"
    );
    assert!(!query_sessions(&env, &proj, "quince").is_empty());
}

/// Regression (review, stop 62): a session run in a git worktree removed
/// before it ended (merge, `git worktree remove`, exit: the usual end of a
/// parallel agent's run) was never indexed: SessionEnd could not resolve
/// the folder, and no later backfill finds a worktree that is gone. Its
/// project is noted at SessionStart, while the folder exists.
#[test]
fn r_a_session_in_a_worktree_removed_before_its_end_is_indexed() {
    let env = Env::new();
    let (main, wt) = super::with_worktree(&env);
    let wt = std::fs::canonicalize(wt).unwrap();
    // Hooks installed: the home is there.
    std::fs::create_dir_all(env.home()).unwrap();
    let session = json!({"session_id": "cc-sess-1"});
    let started = hook(&env, "claude-code", &payload("SessionStart", &wt, session));
    assert_eq!(started.code, 0, "{started:?}");
    let t = env.tmp.path().join("cc-sess-1.jsonl");
    importer_transcript(&t, "quince", &wt);
    super::git(&main, &["worktree", "remove", "../wt"]);
    assert!(!wt.exists());
    let p = payload(
        "SessionEnd",
        &wt,
        json!({"session_id": "cc-sess-1", "transcript_path": t, "reason": "exit"}),
    );
    let r = hook(&env, "claude-code", &p);
    assert_eq!(
        (r.code, r.out.as_str(), r.err.as_str()),
        (0, "", ""),
        "{r:?}"
    );
    let main = std::fs::canonicalize(&main).unwrap();
    assert_eq!(query_sessions(&env, &main, "quince"), ["cc-sess-1"]);
}
