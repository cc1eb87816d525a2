//! What `recall index` reads: devices and FIFOs refused, over-long and NUL
//! lines reported and skipped, binary files named, empty transcripts
//! skipped, `--full` rebuilding once, the configured niceness, kept term
//! counts equal to a recount, and a transcript larger than a segment
//! indexed in parts.

use crate::common::{assert_success, contains_bytes, Env};

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

/// Regression (stop 59's list, fixed in stop 60): in a folder `recall
/// index` walks, a FIFO or a link to nothing named like a transcript was
/// passed over without a word. Each is named with why it is not read; the
/// rest of the folder is indexed.
#[test]
fn r_a_walked_folders_fifo_or_broken_link_is_named() {
    let env = Env::new();
    let dir = env.tmp.path().join("walked");
    std::fs::create_dir_all(&dir).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(dir.join("pipe.jsonl"))
        .status()
        .unwrap();
    assert!(made.success());
    std::os::unix::fs::symlink(dir.join("nowhere.jsonl"), dir.join("gone.jsonl")).unwrap();
    std::fs::write(
        dir.join("ok.jsonl"),
        r#"{"role":"user","content":"the walrus importer works"}"#,
    )
    .unwrap();
    let out = env
        .cmd()
        .args(["index", "--json"])
        .arg(&dir)
        .timeout(std::time::Duration::from_secs(20))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("pipe.jsonl: not a regular file"),
        "{stderr}"
    );
    assert!(stderr.contains("gone.jsonl: cannot read"), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["summary"]["indexed"].as_u64(), Some(1), "{v}");
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
    let (s, stderr) = index_json(&env, &path);
    assert!(stderr.contains("big.jsonl:2: line of"), "{stderr}");
    assert!(stderr.contains("MB limit; skipped"), "{stderr}");
    assert_eq!(s["chunks"].as_u64(), Some(2), "{s}");
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
    env.index(&path);
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
    assert!(!contains_bytes(&bytes, b"quetzalfoo"));
    let v = env.query_json("alpha", "vault token");
    assert_eq!(v["hits"].as_array().unwrap().len(), 1, "{v}");
}

/// Regression (issue probe: an empty, just-created transcript counted as
/// failed and made the batch exit 3): it is skipped, and indexed once it
/// has content.
#[test]
fn r_an_empty_new_transcript_is_skipped_not_failed() {
    let env = Env::new();
    let path = env.tmp.path().join("new.jsonl");
    std::fs::write(&path, "").unwrap();
    let v = env.run_json(&["index", "--json", path.to_str().unwrap()]);
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
    let v = env.run_json(&["index", "--json", path.to_str().unwrap()]);
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
    env.write_config("[index]\nnice = 0\n");
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
        let c = env.open_index();
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
    index_json_with(env, path, &[])
}

/// [`index_json`] with more arguments before the path.
fn index_json_with(
    env: &Env,
    path: &std::path::Path,
    args: &[&str],
) -> (serde_json::Value, String) {
    let out = env
        .cmd()
        .args(["index", "--json"])
        .args(args)
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

/// Regression (stop 60): a transcript line holding half of a UTF-16 pair
/// (`"\ud83d"`: an emoji cut short, which JavaScript's `JSON.stringify`
/// writes as a lone escape) was refused by serde_json, so the message was
/// lost as a bad line. It is read with U+FFFD in place of the half, in a
/// streamed transcript and in a JSON document read whole; in a text file
/// the same six characters are text and stay.
#[test]
fn r_a_cut_emoji_keeps_its_message() {
    let env = Env::new();
    let dir = env.tmp.path().join("transcripts");
    std::fs::create_dir_all(&dir).unwrap();
    let cut = |t: String| t.replace("CUT", "\\ud83d");
    let mut claude = cut(claude_line("u1", "the heron ledger balances CUT"));
    claude += &claude_line("u2", "a second line");
    std::fs::write(dir.join("s1.jsonl"), claude).unwrap();
    let doc = serde_json::json!({"messages": [
        {"role": "user", "content": "the kestrel queue drains CUT"},
        {"role": "assistant", "content": "it drains nightly"},
    ]});
    std::fs::write(dir.join("doc.json"), cut(doc.to_string())).unwrap();
    std::fs::write(
        dir.join("chat.md"),
        "## User\nthe plover parser reads \\ud83d as text\n\n## Assistant\nit does\n",
    )
    .unwrap();
    let (s, stderr) = index_json(&env, &dir);
    assert_eq!(s["indexed"].as_u64(), Some(3), "{s} {stderr}");
    assert!(!stderr.contains("invalid JSON"), "{stderr}");
    for (q, want) in [
        ("heron ledger", "balances \u{fffd}"),
        ("kestrel queue", "drains \u{fffd}"),
        ("plover parser", "reads \\ud83d as text"),
    ] {
        let hits = env.query_json("alpha", q);
        let text = hits["hits"][0]["text"].as_str().unwrap_or_default();
        assert!(text.contains(want), "{q}: {hits}");
    }
}

/// Regression (issue 26 item 14): a file a folder walk skips is named in
/// the output with the reason, never skipped silently.
#[test]
fn r26_a_binary_file_in_a_folder_is_named_in_the_output() {
    let env = Env::new();
    let dir = env.tmp.path().join("transcripts");
    std::fs::create_dir_all(&dir).unwrap();
    let blob: Vec<u8> = {
        let mut rng = synth::Rng::with_seed(7);
        (0..8192).map(|_| rng.u8(..)).collect()
    };
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

/// Regression: `index --format claude-code DIR` read every file of the
/// folder as a transcript, so a LICENSE beside them became an empty
/// session and a problem per line (169 for the Apache license). A file
/// found in a folder that is not JSON is skipped and named; a file the
/// user names is still read as told.
#[test]
fn r_a_forced_format_skips_a_folders_file_that_is_not_json() {
    let env = Env::new();
    let dir = env.tmp.path().join("transcripts");
    std::fs::create_dir_all(&dir).unwrap();
    let license = dir.join("LICENSE.txt");
    std::fs::write(
        &license,
        "Apache License\nVersion 2.0, January 2004\n\n   TERMS AND CONDITIONS\n",
    )
    .unwrap();
    std::fs::write(dir.join("ok.jsonl"), claude_line("u1", "the osprey cache")).unwrap();
    let forced = ["--format", "claude-code"];
    let (s, stderr) = index_json_with(&env, &dir, &forced);
    assert_eq!(
        (
            s["indexed"].as_u64(),
            s["skipped"].as_u64(),
            s["problems"].as_u64()
        ),
        (Some(1), Some(1), Some(0)),
        "{s}\n{stderr}"
    );
    let line = stderr
        .lines()
        .find(|l| l.contains("LICENSE.txt"))
        .unwrap_or_else(|| panic!("LICENSE.txt not named: {stderr}"));
    assert!(line.contains("not JSON"), "{line}");
    // Named on the command line, it is read as claude-code, as asked, and
    // fails for giving nothing but problems.
    let (s, stderr) = index_json_with(&env, &license, &forced);
    assert_eq!(
        (s["skipped"].as_u64(), s["failed"].as_u64()),
        (Some(0), Some(1)),
        "{s}"
    );
    assert!(stderr.contains("read as --format claude-code"), "{stderr}");
}

/// Regression: a file read as a `--format` it is not in gave nothing but
/// problems and was stored as indexed, empty: later runs, with the right
/// format or none, found it "unchanged" and only `--full` read it again.
/// It now fails with why and what to pass, and is not stored; an explicit
/// `--format` or `--kind` other than what a file was read as reads it
/// again (a wrong one leaves what was indexed as it was).
#[test]
fn r_a_file_read_as_a_format_it_is_not_in_is_not_stored_as_indexed() {
    let env = Env::new();
    let chat = env.tmp.path().join("chat.md");
    std::fs::write(
        &chat,
        "## User\nThe empty config makes the osprey app panic on start.\n\n## Assistant\nA default config is now written when none exists.\n",
    )
    .unwrap();
    let counts = |s: &serde_json::Value| {
        ["indexed", "unchanged", "failed", "chunks", "tickets"].map(|k| s[k].as_u64().unwrap())
    };
    let (s, stderr) = index_json_with(&env, &chat, &["--format", "neutral"]);
    assert_eq!(counts(&s), [0, 0, 1, 0, 0], "{s}\n{stderr}");
    assert!(
        stderr.contains(
            "read as --format neutral, it gave no message and 4 problem(s) (line 1: invalid JSON"
        ) && stderr.contains("leave --format out to detect it"),
        "{stderr}"
    );
    // Detected, it is a Markdown chat.
    let (s, _) = index_json(&env, &chat);
    assert_eq!(counts(&s), [1, 0, 0, 2, 0], "{s}");
    assert_eq!(env.hit_ids(&env.project, "osprey panic").len(), 1);
    // Unchanged for a run that says nothing of its format.
    let (s, _) = index_json(&env, &chat);
    assert_eq!(counts(&s), [0, 1, 0, 0, 0], "{s}");
    // A wrong --format reads it again, fails, and keeps what was indexed.
    let (s, _) = index_json_with(&env, &chat, &["--format", "codex"]);
    assert_eq!(counts(&s), [0, 0, 1, 0, 0], "{s}");
    assert_eq!(env.hit_ids(&env.project, "osprey panic").len(), 1);
    // Another --kind reads it again as that kind.
    let (s, _) = index_json_with(&env, &chat, &["--kind", "ticket"]);
    assert_eq!(counts(&s), [1, 0, 0, 0, 1], "{s}");
    let (s, _) = index_json_with(&env, &chat, &["--kind", "ticket"]);
    assert_eq!(counts(&s), [0, 1, 0, 0, 0], "{s}");
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
    let db = env.open_index();
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
    // Regression: a file touched (a backup restored, an editor's save)
    // and not grown counted as "1 appended, 0 chunks".
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(60);
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(later)
        .unwrap();
    let touched = index();
    assert_eq!(
        (touched["unchanged"].as_u64(), touched["appended"].as_u64()),
        (Some(1), Some(0)),
        "{touched}"
    );
    assert_eq!(touched["bytes"].as_u64(), Some(0), "{touched}");
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

/// Regression (issue 35: Claude Code 2.1's `last-prompt` lines and Codex
/// 0.171's `world_state` and `token_usage_record` lines were reported as
/// problems on every session end and backfill, and the run exited 2): a
/// line of a type recall does not read is counted as skipped, and the run
/// succeeds with no problem.
#[test]
fn r_line_types_of_newer_launchers_are_skipped_not_problems() {
    let env = Env::new();
    let claude = env.tmp.path().join("claude.jsonl");
    std::fs::write(
        &claude,
        concat!(
            r#"{"type":"user","uuid":"u1","sessionId":"s1","cwd":"/p","message":{"role":"user","content":"the quokka deploy"}}"#,
            "\n",
            r#"{"type":"last-prompt","lastPrompt":"the quokka deploy","sessionId":"s1"}"#,
            "\n"
        ),
    )
    .unwrap();
    let codex = env
        .tmp
        .path()
        .join("rollout-2026-01-01T00-00-00-0199a000-0000-7000-8000-000000000001.jsonl");
    std::fs::write(
        &codex,
        concat!(
            r#"{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"c1","cwd":"/p"}}"#,
            "\n",
            r#"{"timestamp":"2026-01-01T00:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"the numbat release"}]}}"#,
            "\n",
            r#"{"timestamp":"2026-01-01T00:00:02Z","type":"world_state","payload":{"cwd":"/p"}}"#,
            "\n",
            r#"{"timestamp":"2026-01-01T00:00:03Z","type":"token_usage_record","payload":{"total":3}}"#,
            "\n"
        ),
    )
    .unwrap();
    let out = env
        .cmd()
        .args(["index", "--json"])
        .arg(&claude)
        .arg(&codex)
        .output()
        .unwrap();
    assert_success(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("unknown line type"), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &v["summary"];
    assert_eq!(
        (
            s["indexed"].as_u64(),
            s["problems"].as_u64(),
            s["unknown_lines"].as_u64()
        ),
        (Some(2), Some(0), Some(3)),
        "{v}"
    );
    assert!(!env.hit_ids("alpha", "quokka").is_empty());
    assert!(!env.hit_ids("alpha", "numbat").is_empty());
}

/// Regression (review, stop 57; data loss): a folder the walk could not
/// read was skipped without a word, and `index --prune` then deleted the
/// passages indexed from it, though its files were still there. The folder
/// is now a failure the run names (exit 3), and prune keeps what it cannot
/// tell is gone. Root reads every folder, so as root the runs are made as
/// `nobody` with `setpriv`.
#[cfg(unix)]
#[test]
fn r_an_unreadable_folder_is_reported_and_never_pruned() {
    use std::os::unix::fs::PermissionsExt;
    let t = tempfile::tempdir().unwrap();
    let (d, home) = (t.path().join("d"), t.path().join("home"));
    for (sub, word) in [("ok", "pelican"), ("locked", "narwhal")] {
        std::fs::create_dir_all(d.join(sub)).unwrap();
        let line =
            |role: &str, text: &str| serde_json::json!({"role": role, "content": text}).to_string();
        std::fs::write(
            d.join(sub).join("s.jsonl"),
            format!(
                "{}\n{}\n",
                line("user", &format!("how is the {word} migration going")),
                line("assistant", &format!("the {word} migration finished"))
            ),
        )
        .unwrap();
    }
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if root {
        for e in walkdir::WalkDir::new(t.path()) {
            std::os::unix::fs::chown(e.unwrap().path(), Some(65534), Some(65534)).unwrap();
        }
    }
    let recall = |args: &[&str]| {
        let mut c = if root {
            let mut c = std::process::Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(assert_cmd::cargo::cargo_bin("recall"));
            c
        } else {
            std::process::Command::new(assert_cmd::cargo::cargo_bin("recall"))
        };
        c.env_remove("RECALL_HOME")
            .env("HOME", t.path())
            .arg("--home")
            .arg(&home)
            .args(["--project", "np"])
            .args(args)
            .current_dir(t.path())
            .output()
            .unwrap()
    };
    let d_arg = d.to_str().unwrap();
    assert_success(&recall(&["index", d_arg]));
    std::fs::set_permissions(d.join("locked"), std::fs::Permissions::from_mode(0o000)).unwrap();
    for args in [vec!["index", d_arg], vec!["index", "--prune", d_arg]] {
        let out = recall(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
        assert!(
            err.contains("locked: cannot read the folder"),
            "{args:?}: {err}"
        );
    }
    let found = recall(&["query", "narwhal migration"]);
    assert_success(&found);
    std::fs::set_permissions(d.join("locked"), std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Regression (review, stop 57): a linked folder inside a folder given to
/// `index` was passed over without a word (links to folders are not
/// followed, so a loop cannot make the walk endless). It is named as
/// skipped, with how to index it; the same folder named on the command
/// line is indexed.
#[cfg(unix)]
#[test]
fn r_a_linked_folder_in_a_walk_is_named_as_skipped() {
    let env = Env::new();
    let elsewhere = env.tmp.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let line =
        |role: &str, text: &str| serde_json::json!({"role": role, "content": text}).to_string();
    std::fs::write(
        elsewhere.join("s.jsonl"),
        format!(
            "{}\n{}\n",
            line("user", "the quokka deploy"),
            line("assistant", "quokka deployed")
        ),
    )
    .unwrap();
    let walked = env.tmp.path().join("walked");
    std::fs::create_dir_all(&walked).unwrap();
    std::os::unix::fs::symlink(&elsewhere, walked.join("linked")).unwrap();
    let out = env.cmd().arg("index").arg(&walked).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("linked: skipped: a linked folder is not walked"),
        "{err}"
    );
    let out = env
        .cmd()
        .arg("index")
        .arg(walked.join("linked"))
        .output()
        .unwrap();
    assert_success(&out);
    assert_success(&env.cmd().args(["query", "quokka deploy"]).output().unwrap());
}

/// Regression (review, stop 57): a transcript emptied, or overwritten with
/// something that is not a transcript, was skipped and kept answering
/// queries with its old text, even after `--full --prune`. Its rows go;
/// the file, when it is a transcript again, is indexed again.
#[test]
fn r_a_transcript_emptied_or_replaced_loses_its_old_passages() {
    let env = Env::new();
    let folder = env.tmp.path().join("t");
    std::fs::create_dir_all(&folder).unwrap();
    let file = folder.join("s.jsonl");
    let line =
        |role: &str, text: &str| serde_json::json!({"role": role, "content": text}).to_string();
    let transcript = format!(
        "{}\n{}\n",
        line("user", "how did the wombat rollout go"),
        line("assistant", "the wombat rollout finished")
    );
    let found = |env: &Env| {
        env.cmd()
            .args(["query", "wombat rollout"])
            .output()
            .unwrap()
            .status
            .code()
    };
    for (replacement, args) in [
        ("", vec!["index"]),
        (
            "plain words only, no transcript\n",
            vec!["index", "--full", "--prune"],
        ),
    ] {
        std::fs::write(&file, &transcript).unwrap();
        assert_success(&env.cmd().arg("index").arg(&folder).output().unwrap());
        assert_eq!(found(&env), Some(0));
        std::fs::write(&file, replacement).unwrap();
        let out = env.cmd().args(&args).arg(&folder).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {err}");
        assert!(
            err.contains("s.jsonl: skipped:")
                && err.contains("what was indexed from it before is removed"),
            "{args:?}: {err}"
        );
        assert_eq!(found(&env), Some(1), "{args:?}: the old text still answers");
    }
}

/// Regression: two `recall index` runs of one project at once (a cron job
/// and a session's end) each parsed and wrote every changed file, the
/// second about ten times slower than alone. The second now waits for the
/// first, says so, and has nothing left to do.
#[cfg(target_os = "linux")]
#[test]
fn r_a_second_index_run_waits_for_the_first_and_redoes_nothing() {
    let env = Env::new();
    let corpus = crate::common::testdata("demo/sessions");
    let files = std::fs::read_dir(&corpus).unwrap().count() as u64;
    // The project exists, and this test holds its run lock: the runs
    // below start while another holds it.
    env.run(&["index", "--prune"]);
    let lock = std::fs::File::create(env.project_dir().join("index.lock")).unwrap();
    lock.lock().unwrap();
    let spawn = || {
        env.std_cmd()
            .args(["index", "--json", corpus.to_str().unwrap()])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let runs = [spawn(), spawn()];
    let lock_path = env.project_dir().join("index.lock");
    for r in &runs {
        crate::common::wait::for_open_file(r.id(), &lock_path);
    }
    lock.unlock().unwrap();
    let mut indexed = 0;
    let mut unchanged = 0;
    for r in runs {
        let out = r.wait_with_output().unwrap();
        assert_success(&out);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("waiting for another `recall index` of this project"),
            "{err}"
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        indexed += v["summary"]["indexed"].as_u64().unwrap();
        unchanged += v["summary"]["unchanged"].as_u64().unwrap();
    }
    // Each file indexed once, by whichever run went first.
    assert_eq!((indexed, unchanged), (files, files));
}

/// Regression: Ctrl-C ended `recall index` with nothing said, so a user
/// could not tell what was kept. It now stops at a commit, prints the
/// summary of what it did, says the rest is left, and exits 130; the next
/// run does only the rest.
#[cfg(target_os = "linux")]
#[test]
fn r_an_interrupted_index_says_what_it_kept_and_the_next_run_does_the_rest() {
    let env = Env::new();
    let corpus = env.tmp.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    let files = 40;
    for i in 0..files {
        let line = serde_json::json!({"role": "user", "id": "u-1",
            "content": format!("Session {i} talks about the harbour crane number {i}")});
        std::fs::write(corpus.join(format!("s{i:02}.jsonl")), format!("{line}\n")).unwrap();
    }
    // The index exists, and this test holds its write lock: the run's
    // writer waits for it with the first file in hand.
    env.run(&["index", "--prune"]);
    let db = env.project_dir().join("index.db");
    let mut mine = rusqlite::Connection::open(&db).unwrap();
    let held = mine
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .unwrap();
    let run = env
        .std_cmd()
        .args(["index", "--json", corpus.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    crate::common::wait::for_writer_waiting(&db);
    // Ctrl-C, then the lock let go.
    assert_eq!(unsafe { libc::kill(run.id() as i32, libc::SIGINT) }, 0);
    held.rollback().unwrap();
    let out = run.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("index: 40 files:"), "{err}");
    assert!(
        err.contains("index interrupted: what it wrote is kept")
            && err.contains("run the same command again"),
        "{err}"
    );
    let first: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let first = &first["summary"];
    assert_eq!(first["interrupted"], true, "{first}");
    let kept = first["indexed"].as_u64().unwrap();
    assert!((1..files).contains(&kept), "{first}");
    // What was kept is there; the next run does the rest, and only that.
    let stored: i64 = env
        .open_index()
        .query_row("SELECT count(*) FROM sources", [], |r| r.get(0))
        .unwrap();
    assert_eq!(stored as u64, kept);
    let out = env.run(&["index", "--json", corpus.to_str().unwrap()]);
    let next: serde_json::Value = serde_json::from_str(&out).unwrap();
    let next = &next["summary"];
    assert_eq!(
        (next["indexed"].as_u64(), next["unchanged"].as_u64()),
        (Some(files - kept), Some(kept)),
        "{next}"
    );
    assert_eq!(next["interrupted"], false, "{next}");
}

/// Regression: Ctrl-C (or SIGTERM) while a run waited for another run's
/// `index.lock` did nothing until the other run ended.
#[cfg(target_os = "linux")]
#[test]
fn r_a_run_waiting_for_another_stops_on_ctrl_c() {
    let env = Env::new();
    env.run(&["index", "--prune"]);
    let lock = std::fs::File::create(env.project_dir().join("index.lock")).unwrap();
    lock.lock().unwrap();
    let corpus = crate::common::testdata("demo/sessions");
    let run = env
        .std_cmd()
        .args(["index", "--json", corpus.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = run.id() as i32;
    // Stopped while this test holds the lock it waits for.
    crate::common::wait::for_open_file(run.id(), &env.project_dir().join("index.lock"));
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    // Before the fix it waited for the lock this test holds: a failure,
    // not a hang.
    let mut run = run;
    let ended = crate::common::wait::eventually(30, || run.try_wait().unwrap().is_some());
    if !ended {
        let _ = run.kill();
    }
    assert!(ended, "the run went on waiting after SIGTERM");
    let out = run.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("waiting for another `recall index`"), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["summary"]["indexed"], 0, "{v}");
    drop(lock);
}

/// Regression (review, stop 59): `index --prune FILE` of a transcript since
/// deleted removed what was indexed from it, as asked, and also counted it
/// as failed ("cannot read"), exiting 3. A file never indexed and gone is
/// still a failure.
#[test]
fn r_pruning_a_deleted_file_is_not_a_failure() {
    let env = Env::new();
    let dir = env.tmp.path().join("t");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("flaky-reload.jsonl");
    std::fs::copy(
        crate::common::testdata("demo/sessions/flaky-reload.jsonl"),
        &file,
    )
    .unwrap();
    env.index(&dir);
    std::fs::remove_file(&file).unwrap();
    let out = env
        .cmd()
        .current_dir(&dir)
        .args(["index", "--prune", "flaky-reload.jsonl"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(said.contains("1 removed, 0 failed"), "{said}");
    let out = env
        .cmd()
        .args(["index", "--prune"])
        .arg(dir.join("never-was.jsonl"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
}
