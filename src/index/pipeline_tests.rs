//! Tests of the pipeline on transcripts read in parts (issue 26 items 15
//! and 7): a file read in small segments indexes exactly as one read whole,
//! a run stopped between parts leaves a source the next run completes, and
//! another writer gets the write lock between parts.

use std::path::{Path, PathBuf};

use rusqlite::Connection;
use serde_json::{json, Value};
use synth::Rng;

use super::*;
use crate::error::Error;
use crate::ingest::discover::Input;
use crate::store::{Db, OpenMode};

/// Seeded draws (`synth::Rng`), so every run writes the same file.
trait Draws {
    fn chance(&mut self, percent: usize) -> bool;
    /// `min` to `min + spread - 1` words.
    fn text(&mut self, min: usize, spread: usize) -> String;
    fn words(&mut self, n: usize) -> String;
}

impl Draws for Rng {
    fn chance(&mut self, percent: usize) -> bool {
        self.usize(..100) < percent
    }

    fn text(&mut self, min: usize, spread: usize) -> String {
        let n = min + self.usize(..spread);
        self.words(n)
    }

    fn words(&mut self, n: usize) -> String {
        const W: [&str; 16] = [
            "parser", "segment", "writer", "flaky", "test", "cache", "lock", "index", "deploy",
            "branch", "memory", "token", "budget", "query", "rollback", "stream",
        ];
        let mut s = String::new();
        for i in 0..n {
            if i > 0 {
                s.push(if self.chance(8) { '\n' } else { ' ' });
            }
            s.push_str(W[self.usize(..W.len())]);
        }
        s
    }
}

/// A GitHub token, assembled so this file holds none.
fn token() -> String {
    format!("ghp_{}", "Xk9Qm2Zr7Lp4Wn8Vb3Hd6Jf1Tc5Ys0Ga7Ke2")
}

/// Writes a Claude Code transcript line by line, keeping the parent chain.
struct Claude {
    r: Rng,
    out: String,
    n: usize,
    last: Option<String>,
}

impl Claude {
    fn push(&mut self, mut v: Value, parent: Option<String>) -> String {
        self.n += 1;
        let uuid = format!("uuid-{}", self.n);
        let obj = v.as_object_mut().unwrap();
        obj.insert("uuid".into(), json!(uuid));
        obj.insert("parentUuid".into(), json!(parent));
        obj.insert("sessionId".into(), json!("sess-big"));
        obj.insert("cwd".into(), json!(format!("/repo/{}", self.n / 500)));
        obj.insert("gitBranch".into(), json!("main"));
        let secs = 1_750_000_000 + self.n as i64 * 7;
        let ts = jiff::Timestamp::from_second(secs).unwrap();
        obj.insert("timestamp".into(), json!(ts.to_string()));
        self.raw(&v.to_string());
        self.last = Some(uuid.clone());
        uuid
    }

    fn raw(&mut self, line: &str) {
        self.out.push_str(line);
        self.out.push('\n');
    }

    fn prompt(&mut self) {
        let text = self.r.text(3, 40);
        let content = if self.r.chance(50) {
            json!(text)
        } else {
            json!([{"type": "text", "text": text}])
        };
        let parent = self.last.clone();
        self.push(
            json!({"type": "user", "message": {"role": "user", "content": content}}),
            parent,
        );
    }

    /// One API response: thinking, text, parallel tool calls (each result a
    /// child of its own call, as Claude Code writes them), sometimes a tool
    /// result between two lines of the response.
    fn response(&mut self, id: usize) -> bool {
        let msg = format!("msg-{id}");
        let line = |block: Value| json!({"type": "assistant", "message": {"id": msg, "role": "assistant", "content": [block]}});
        if self.r.chance(30) {
            let parent = self.last.clone();
            self.push(
                line(json!({"type": "thinking", "thinking": "never stored"})),
                parent,
            );
        }
        if self.r.chance(70) {
            let mut text = self.r.text(5, 120);
            if self.r.chance(5) {
                text.push_str(&format!(" export GITHUB_TOKEN={}", token()));
            }
            let parent = self.last.clone();
            self.push(line(json!({"type": "text", "text": text})), parent);
        }
        let calls = [0, 1, 1, 2, 3][self.r.usize(..5)];
        let mut made = Vec::new();
        for c in 0..calls {
            // Now and then a commit: what the session did (`sessions.did`)
            // must read the same in parts as whole.
            let cmd = if self.r.chance(10) {
                format!("git commit -m \"fix: {}\"", self.r.words(3))
            } else {
                format!("cargo test {} -- assistant", self.r.words(2))
            };
            let parent = self.last.clone();
            let uuid = self.push(
                line(json!({"type": "tool_use", "id": format!("t{id}-{c}"), "name": "Bash", "input": {"command": cmd}})),
                parent,
            );
            made.push(uuid);
        }
        for (c, call) in made.iter().enumerate() {
            if self.r.chance(10) {
                let parent = self.last.clone();
                self.push(
                    json!({"type": "progress", "data": {"type": "bash_progress"}}),
                    parent,
                );
            }
            let size = if self.r.chance(5) { 3000 } else { 40 };
            let out = self.r.text(1, size);
            let error = self.r.chance(10);
            self.push(
                json!({"type": "user", "message": {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": format!("t{id}-{c}"), "content": out, "is_error": error}
                ]}, "toolUseResult": {"stdout": out}}),
                Some(call.clone()),
            );
        }
        if calls > 0 && self.r.chance(20) {
            // Another line of the same response after a result.
            let parent = self.last.clone();
            self.push(
                line(json!({"type": "text", "text": "and one more thing"})),
                parent,
            );
        }
        calls == 0
    }

    fn transcript(seed: u64, bytes: usize, summary: bool) -> String {
        let mut g = Claude {
            r: Rng::with_seed(seed),
            out: String::new(),
            n: 0,
            last: None,
        };
        g.raw(r#"{"type":"file-history-snapshot","messageId":"x","snapshot":{}}"#);
        let (mut id, mut leaf, mut renamed) = (0, None, false);
        while g.out.len() < bytes {
            g.prompt();
            for _ in 0..6 {
                id += 1;
                if g.response(id) {
                    break;
                }
            }
            if g.r.chance(20) {
                let parent = g.last.clone();
                g.push(
                    json!({"type": "system", "subtype": "turn_duration"}),
                    parent,
                );
            }
            if leaf.is_none() && g.out.len() > bytes * 2 / 5 {
                leaf = g.last.clone();
                g.raw("{\"type\":\"user\",\"message\":\"not an object\"}");
                g.raw("{\"type\": \"user\", \"mess\0\0\0");
                g.raw("{this is not json");
            }
            if !renamed && g.out.len() > bytes * 3 / 5 {
                renamed = true;
                g.raw(r#"{"type":"custom-title","customTitle":"Streaming the big transcript","sessionId":"sess-big"}"#);
            }
        }
        if summary {
            let leaf = leaf.unwrap_or_default();
            g.raw(
                &json!({"type": "summary", "summary": "Segmented indexing", "leafUuid": leaf})
                    .to_string(),
            );
        }
        g.out
    }
}

/// A Codex rollout: turns of reasoning steps with parallel calls, outputs,
/// late `exec_command_end` events and duplicated assistant messages.
fn codex_rollout(seed: u64, bytes: usize) -> String {
    let mut r = Rng::with_seed(seed);
    let mut out = String::new();
    let line = |out: &mut String, kind: &str, payload: Value| {
        let v = json!({"timestamp": "2026-05-12T10:00:00.000Z", "type": kind, "payload": payload});
        out.push_str(&v.to_string());
        out.push('\n');
    };
    line(
        &mut out,
        "session_meta",
        json!({"id": "codex-big", "cwd": "/repo", "timestamp": "2026-05-12T10:00:00Z"}),
    );
    let mut call = 0;
    while out.len() < bytes {
        line(&mut out, "event_msg", json!({"type": "task_started"}));
        line(&mut out, "turn_context", json!({"cwd": "/repo"}));
        let prompt = r.text(3, 30);
        line(
            &mut out,
            "response_item",
            json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}),
        );
        line(
            &mut out,
            "event_msg",
            json!({"type": "user_message", "message": prompt}),
        );
        for _ in 0..1 + r.usize(..6) {
            line(
                &mut out,
                "response_item",
                json!({"type": "reasoning", "summary": []}),
            );
            if r.chance(40) {
                let text = r.text(5, 80);
                line(
                    &mut out,
                    "event_msg",
                    json!({"type": "agent_message", "message": text}),
                );
                line(
                    &mut out,
                    "response_item",
                    json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}),
                );
            }
            let ids: Vec<String> = (0..1 + r.usize(..3))
                .map(|_| {
                    call += 1;
                    format!("call-{call}")
                })
                .collect();
            for id in &ids {
                let args =
                    json!({"command": ["bash", "-lc", format!("rg {}", r.words(1))]}).to_string();
                line(
                    &mut out,
                    "response_item",
                    json!({"type": "function_call", "name": "shell", "call_id": id, "arguments": args}),
                );
            }
            for id in &ids {
                let spread = if r.chance(5) { 2000 } else { 60 };
                let body = r.text(1, spread);
                line(
                    &mut out,
                    "response_item",
                    json!({"type": "function_call_output", "call_id": id, "output": body}),
                );
            }
            for id in ids.iter().rev() {
                let body = r.text(1, 30);
                let code = i64::from(r.chance(10));
                line(
                    &mut out,
                    "event_msg",
                    json!({"type": "exec_command_end", "call_id": id, "aggregated_output": body, "exit_code": code}),
                );
            }
        }
        line(&mut out, "event_msg", json!({"type": "task_complete"}));
    }
    out
}

/// A neutral transcript in the line form.
fn neutral_lines(seed: u64, bytes: usize) -> String {
    let mut r = Rng::with_seed(seed);
    let mut out =
        String::from("{\"session\": {\"id\": \"neutral-big\", \"title\": \"Neutral\"}}\n");
    let mut i = 0;
    while out.len() < bytes {
        i += 1;
        let role = ["user", "assistant", "tool"][r.usize(..3)];
        let text = r.text(1, 200);
        let v = json!({"role": role, "content": text, "id": format!("m{i}"), "timestamp": 1_750_000_000 + i});
        out.push_str(&v.to_string());
        out.push('\n');
    }
    out
}

/// Everything indexing leaves in a database, as text to compare.
fn dump(conn: &Connection) -> Vec<String> {
    let queries = [
        "SELECT c.seq, c.session_id, c.msg_first, c.msg_last, c.message_ids, c.spans, c.roles, c.speakers,
                c.first_ts, c.last_ts, c.launcher, c.cwd, c.git_branch, f.title, f.body, f.aux
         FROM chunks c JOIN chunks_fts f ON f.rowid = c.rowid ORDER BY c.source_id, c.seq",
        "SELECT kind, format, size, mtime, hash, parser_version, offset, messages, state FROM sources",
        "SELECT session_id, launcher, parent_id, title, cwd, git_branch, first_ts, last_ts, messages, work, did FROM sessions",
        "SELECT term, records, chunks, tickets FROM term_df WHERE chunks != 0 ORDER BY term",
        "SELECT tbl, docs FROM table_stats ORDER BY tbl",
    ];
    let mut rows = Vec::new();
    for q in queries {
        let mut st = conn.prepare(q).unwrap();
        let n = st.column_count();
        let mut it = st.query([]).unwrap();
        while let Some(r) = it.next().unwrap() {
            let cols: Vec<String> = (0..n)
                .map(|i| match r.get_ref(i).unwrap() {
                    rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                    v => format!("{v:?}"),
                })
                .collect();
            rows.push(cols.join(" | "));
        }
    }
    rows
}

/// The report as `index --json` prints it, without the time.
fn counts(r: &IndexReport) -> Value {
    let mut v = serde_json::to_value(r).unwrap();
    v.as_object_mut().unwrap().remove("elapsed_ms");
    v
}

/// A fresh index in `dir`.
fn open(dir: &Path) -> Db {
    Db::open(&dir.join("index.db"), OpenMode::ReadWrite).unwrap()
}

fn options(segment_bytes: usize) -> IngestOptions {
    IngestOptions {
        segment_bytes,
        ..IngestOptions::default()
    }
}

/// Index `file` into the index of `dir`, committing after every part;
/// returns the report and the lines shown to the user.
fn index<'w>(
    dir: &Path,
    file: &Path,
    segment_bytes: usize,
    watch: &'w mut Watch<'w>,
) -> Result<(IndexReport, Vec<String>)> {
    let mut db = open(dir);
    let mut lines = Vec::new();
    let run = RunOptions {
        now: 1_767_225_600,
        ..RunOptions::default()
    };
    let report = index_sources_with(
        db.writer()?,
        &[Input::explicit(file)],
        &options(segment_bytes),
        &run,
        &mut |l| lines.push(l),
        Writer {
            commit_every: std::time::Duration::ZERO,
            watch,
        },
    )?;
    Ok((report, lines))
}

/// Write `text` into `dir/name`.
fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Index `text` whole and in segments of each size: the same rows, the
/// same counts, the same lines shown.
fn same_in_parts(name: &str, text: &str, sizes: &[usize]) {
    let tmp = tempfile::tempdir().unwrap();
    let file = write(tmp.path(), name, text);
    let whole_dir = tmp.path().join("whole");
    let (whole, whole_lines) = index(&whole_dir, &file, usize::MAX, &mut |_| Ok(())).unwrap();
    let whole_rows = dump(open(&whole_dir).writer().unwrap());
    assert!(whole.chunks > 100, "{}", whole.summary());
    for &size in sizes {
        assert!(
            text.len() > 8 * size,
            "{name}: several segments of {size} bytes"
        );
        let dir = tmp.path().join(format!("parts-{size}"));
        let mut commits = 0;
        let (parts, lines) = index(&dir, &file, size, &mut |s| {
            commits += usize::from(s == Step::Committed);
            Ok(())
        })
        .unwrap();
        assert!(
            commits > 4,
            "{name}: one commit per part, {commits} for {size}"
        );
        let rows = dump(open(&dir).writer().unwrap());
        for (a, b) in rows.iter().zip(&whole_rows) {
            assert_eq!(a, b, "{name}: segments of {size}");
        }
        assert_eq!(
            rows.len(),
            whole_rows.len(),
            "{name}: rows, segments of {size}"
        );
        assert_eq!(
            counts(&parts),
            counts(&whole),
            "{name}: counts, segments of {size}"
        );
        assert_eq!(
            lines, whole_lines,
            "{name}: lines shown, segments of {size}"
        );
    }
}

/// Issue 26 item 15: a large Claude Code transcript (parallel tool calls,
/// responses spread over lines, a rename and a summary after the first
/// segments, damaged lines, a secret) read in segments indexes exactly as
/// the file read whole.
#[test]
fn r26_15_claude_transcript_in_parts_indexes_as_read_whole() {
    let text = Claude::transcript(7, 900_000, true);
    same_in_parts("big.jsonl", &text, &[4_000, 30_000, 100_000]);
}

/// Issue 39: what a session did is the subjects of the commits its Bash
/// calls made, each once and in order, read whole or appended part by
/// part (`same_in_parts` compares `sessions.did` too).
#[test]
fn a_sessions_commits_are_what_it_did() {
    let text = Claude::transcript(7, 300_000, false);
    let mut want: Vec<String> = Vec::new();
    for line in text.lines().filter(|l| l.contains("git commit -m")) {
        let v: Value = serde_json::from_str(line).unwrap();
        let cmd = v["message"]["content"][0]["input"]["command"]
            .as_str()
            .unwrap();
        // The message's first line.
        let message = cmd.split('"').nth(1).unwrap();
        let subject = message.lines().next().unwrap().trim().to_string();
        if !want.contains(&subject) {
            want.push(subject);
        }
    }
    assert!(want.len() > 3, "the transcript commits: {want:?}");
    let tmp = tempfile::tempdir().unwrap();
    let file = write(tmp.path(), "s.jsonl", &text);
    for (name, size) in [("whole", usize::MAX), ("parts", 20_000)] {
        let dir = tmp.path().join(name);
        index(&dir, &file, size, &mut |_| Ok(())).unwrap();
        let mut db = open(&dir);
        let did: String = db
            .writer()
            .unwrap()
            .query_row("SELECT did FROM sessions", [], |r| r.get(0))
            .unwrap();
        assert_eq!(did, want.join("\n"), "{name}");
    }
}

/// The same for a Codex rollout and a neutral transcript.
#[test]
fn r26_15_codex_and_neutral_in_parts_index_as_read_whole() {
    same_in_parts(
        "rollout-big.jsonl",
        &codex_rollout(11, 600_000),
        &[5_000, 60_000],
    );
    same_in_parts(
        "neutral.jsonl",
        &neutral_lines(13, 400_000),
        &[3_000, 40_000],
    );
}

/// A line over the parser's limit is reported at its line and skipped,
/// read in parts as read whole (where it is never held in memory).
#[test]
fn r26_15_a_line_too_long_reads_the_same_in_parts() {
    let mut text = neutral_lines(17, 200_000);
    text.push_str(&"z".repeat(crate::ingest::lines::MAX_LINE_BYTES + 1));
    text.push('\n');
    text.push_str(&neutral_lines(19, 100_000));
    same_in_parts("long.jsonl", &text, &[20_000]);
}

/// An append to a source an earlier run indexed keeps the title stored
/// then: a `/rename` written later would have to rewrite the title of
/// every passage (an FTS5 update under `secure-delete`: about 1 ms a
/// passage). Only a run that reads the file from its start gives the title
/// the whole file gives.
#[test]
fn an_append_keeps_the_stored_title() {
    let tmp = tempfile::tempdir().unwrap();
    let mut text = Claude::transcript(3, 60_000, false);
    let file = write(tmp.path(), "s.jsonl", &text);
    let dir = tmp.path().join("grown");
    index(&dir, &file, 20_000, &mut |_| Ok(())).unwrap();
    let title = |dir: &Path| -> String {
        let mut db = open(dir);
        let c = db.writer().unwrap();
        c.query_row("SELECT title FROM sessions", [], |r| r.get(0))
            .unwrap()
    };
    let before = title(&dir);
    text.push_str(
        r#"{"type":"custom-title","customTitle":"Renamed later","sessionId":"sess-big"}"#,
    );
    text.push('\n');
    std::fs::write(&file, &text).unwrap();
    let (report, _) = index(&dir, &file, 20_000, &mut |_| Ok(())).unwrap();
    assert_eq!(report.appended, 1, "{}", report.summary());
    assert_eq!(title(&dir), before);
    let whole = tmp.path().join("whole");
    index(&whole, &file, usize::MAX, &mut |_| Ok(())).unwrap();
    assert_eq!(title(&whole), "Renamed later");
}

/// A session is an agent's work once any of its messages is a tool's
/// output: a chat stays a chat, and one whose appended part runs a tool
/// becomes work, as the file read whole is.
#[test]
fn a_session_with_a_tools_output_is_work_even_when_appended() {
    let tmp = tempfile::tempdir().unwrap();
    let line = |role: &str, id: &str, text: &str| {
        format!("{}\n", json!({"role": role, "content": text, "id": id}))
    };
    let mut text = String::from("{\"session\": {\"id\": \"s-1\"}}\n");
    text.push_str(&line(
        "user",
        "m1",
        "why does the parser drop the last line",
    ));
    text.push_str(&line("assistant", "m2", "it stops at the final newline"));
    let file = write(tmp.path(), "s.jsonl", &text);
    let dir = tmp.path().join("grown");
    let work = |dir: &Path| -> i64 {
        let mut db = open(dir);
        let c = db.writer().unwrap();
        c.query_row("SELECT work FROM sessions", [], |r| r.get(0))
            .unwrap()
    };
    index(&dir, &file, usize::MAX, &mut |_| Ok(())).unwrap();
    assert_eq!(work(&dir), 0, "a chat");
    text.push_str(&line("tool", "m3", "src/parse.rs:41: fn last_line"));
    text.push_str(&line("assistant", "m4", "the loop ends one line early"));
    std::fs::write(&file, &text).unwrap();
    let (report, _) = index(&dir, &file, usize::MAX, &mut |_| Ok(())).unwrap();
    assert_eq!(report.appended, 1, "{}", report.summary());
    assert_eq!(work(&dir), 1, "the appended part ran a tool");
    // A later part without tool output leaves it work.
    text.push_str(&line("assistant", "m5", "fixed and tested"));
    std::fs::write(&file, &text).unwrap();
    index(&dir, &file, usize::MAX, &mut |_| Ok(())).unwrap();
    assert_eq!(work(&dir), 1);
    let whole = tmp.path().join("whole");
    index(&whole, &file, usize::MAX, &mut |_| Ok(())).unwrap();
    assert_eq!(work(&whole), 1);
}

/// A source's stored state: (size, offset, messages), and its passages.
fn state(dir: &Path) -> (i64, i64, i64, i64) {
    let mut db = open(dir);
    let c = db.writer().unwrap();
    c.query_row(
        "SELECT s.size, s.offset, s.messages, (SELECT count(DISTINCT msg_first) FROM chunks) FROM sources s",
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )
    .unwrap()
}

/// A run stopped while writing a part (a kill, a full disk) keeps the parts
/// committed before it: a consistent source, covering a prefix of the file,
/// that the next run completes by appending, to the rows one whole run
/// writes.
#[test]
fn r26_15_a_run_stopped_between_parts_is_completed_by_the_next() {
    let tmp = tempfile::tempdir().unwrap();
    let text = Claude::transcript(21, 300_000, true);
    let file = write(tmp.path(), "big.jsonl", &text);
    let whole_dir = tmp.path().join("whole");
    index(&whole_dir, &file, usize::MAX, &mut |_| Ok(())).unwrap();
    let dir = tmp.path().join("parts");
    let mut written = 0;
    let stopped = index(&dir, &file, 20_000, &mut |s| {
        written += usize::from(s == Step::Written);
        match written {
            4 => Err(Error::invalid("stopped while writing part 4")),
            _ => Ok(()),
        }
    });
    assert!(stopped.is_err());
    let (size, offset, messages, passages) = state(&dir);
    assert!(
        offset > 0 && offset < text.len() as i64,
        "three parts: {offset}"
    );
    assert_eq!(size, offset, "a partial source never looks unchanged");
    assert_eq!(
        messages, passages,
        "the rows of the parts committed, no more"
    );
    let (report, _) = index(&dir, &file, 20_000, &mut |_| Ok(())).unwrap();
    assert_eq!(
        (report.appended, report.indexed),
        (1, 0),
        "{}",
        report.summary()
    );
    assert_eq!(
        dump(open(&dir).writer().unwrap()),
        dump(open(&whole_dir).writer().unwrap())
    );
    let (again, _) = index(&dir, &file, 20_000, &mut |_| Ok(())).unwrap();
    assert_eq!(again.unchanged, 1, "{}", again.summary());
}

/// Issue 26 item 7: a record written while a large transcript is being
/// indexed does not wait for the whole file. The writer stops after its
/// first part's commit until the record is written; the record's
/// connection does not wait for a lock at all, so it fails at once if the
/// index still held it.
#[test]
fn r26_7_a_record_write_gets_in_between_parts() {
    use crate::index::{RecordStore, SecretPolicy};
    use crate::store::{Scope, ScopeDir};
    let tmp = tempfile::tempdir().unwrap();
    let text = Claude::transcript(5, 200_000, false);
    let file = write(tmp.path(), "big.jsonl", &text);
    let dir = ScopeDir {
        scope: Scope::Project,
        root: tmp.path().join("scope"),
    };
    let mut other = Db::open(&dir.index_path(), OpenMode::ReadWrite).unwrap();
    let (go, wait) = std::sync::mpsc::channel::<()>();
    let (done, finished) = std::sync::mpsc::channel::<i64>();
    let recorder = std::thread::spawn(move || {
        wait.recv().unwrap();
        let conn = other.writer().unwrap();
        conn.busy_timeout(std::time::Duration::ZERO).unwrap();
        let mut store = RecordStore {
            dir: &dir,
            conn,
            limits: crate::records::Limits::default(),
            gate: None,
        };
        let now = jiff::Timestamp::from_second(1_767_225_600).unwrap();
        store
            .upsert(
                "use-segments",
                None,
                "Index big transcripts in parts.",
                |_| {},
                SecretPolicy::Refuse,
                now,
            )
            .unwrap();
        let offset: i64 = store
            .conn
            .query_row("SELECT offset FROM sources", [], |r| r.get(0))
            .unwrap();
        done.send(offset).unwrap();
    });
    let mut first = true;
    let (report, _) = index(&tmp.path().join("scope"), &file, 20_000, &mut |s| {
        if s == Step::Committed && std::mem::take(&mut first) {
            go.send(()).unwrap();
            let offset = finished.recv().unwrap();
            assert!(
                offset < text.len() as i64,
                "written while the file was half indexed"
            );
        }
        Ok(())
    })
    .unwrap();
    recorder.join().unwrap();
    assert_eq!(report.indexed, 1, "{}", report.summary());
    let mut db = open(&tmp.path().join("scope"));
    let keys: i64 = db
        .writer()
        .unwrap()
        .query_row(
            "SELECT count(*) FROM records WHERE key='use-segments'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(keys, 1);
}

/// Issue 37 item 4: two runs indexing one file at once stored some of its
/// passages twice: each appended its parts to whatever was stored. Here
/// one run stops after its first part while another indexes the whole
/// file; the first run's later parts continue a prefix no longer stored,
/// so they are not appended again, and the rows are those one run writes.
#[test]
fn r37_a_part_another_run_wrote_is_not_appended_twice() {
    let tmp = tempfile::tempdir().unwrap();
    let text = neutral_lines(37, 200_000);
    let file = write(tmp.path(), "big.jsonl", &text);
    let whole_dir = tmp.path().join("whole");
    index(&whole_dir, &file, usize::MAX, &mut |_| Ok(())).unwrap();
    let dir = tmp.path().join("both");
    let mut first = true;
    let (first_run, _) = index(&dir, &file, 20_000, &mut |s| {
        if s == Step::Committed && std::mem::take(&mut first) {
            let (other, _) = index(&dir, &file, 20_000, &mut |_| Ok(())).unwrap();
            assert_eq!(other.appended, 1, "{}", other.summary());
        }
        Ok(())
    })
    .unwrap();
    assert_eq!(first_run.indexed, 1, "{}", first_run.summary());
    assert_eq!(
        dump(open(&dir).writer().unwrap()),
        dump(open(&whole_dir).writer().unwrap())
    );
}
