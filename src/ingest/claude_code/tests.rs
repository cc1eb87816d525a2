//! Tests of the Claude Code parser: hand-written lines for each rule of the
//! module doc (what is indexed, order, meta, parts, problems, sniffing).

use serde_json::Value;

use super::blocks::compact_tool_use;
use super::*;
use crate::ingest::model::{Message, Role};
use crate::ingest::transcript::testing::{file, junk, texts};
use crate::ingest::values;

const SID: &str = "s-1";

/// A user line with string content.
fn user(uuid: &str, parent: Option<&str>, text: &str) -> String {
    serde_json::json!({
        "type": "user", "uuid": uuid, "parentUuid": parent, "sessionId": SID,
        "timestamp": "2025-06-14T10:00:00Z", "cwd": "/repo", "gitBranch": "main",
        "message": {"role": "user", "content": text}
    })
    .to_string()
}

/// An assistant line with one content block.
fn assistant(uuid: &str, parent: Option<&str>, msg_id: &str, block: Value) -> String {
    serde_json::json!({
        "type": "assistant", "uuid": uuid, "parentUuid": parent, "sessionId": SID,
        "timestamp": "2025-06-14T10:00:05Z",
        "message": {"id": msg_id, "role": "assistant", "content": [block]}
    })
    .to_string()
}

fn tool_result(uuid: &str, parent: &str, content: Value, is_error: bool) -> String {
    serde_json::json!({
        "type": "user", "uuid": uuid, "parentUuid": parent, "sessionId": SID,
        "timestamp": "2025-06-14T10:00:06Z",
        "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": content, "is_error": is_error}
        ]}
    })
    .to_string()
}

fn text(t: &str) -> Value {
    serde_json::json!({"type": "text", "text": t})
}

fn tool_use(name: &str, input: Value) -> Value {
    serde_json::json!({"type": "tool_use", "id": "t1", "name": name, "input": input})
}

fn run(input: &str) -> ParsedSession {
    parse(input.as_bytes(), 1, "stem", &Options::default())
}

#[test]
fn joins_assistant_lines_sharing_message_id() {
    let input = file(&[
        user("u1", None, "run the tests"),
        assistant("a1", Some("u1"), "msg_1", text("Running them.")),
        assistant(
            "a2",
            Some("a1"),
            "msg_1",
            tool_use("Bash", serde_json::json!({"command": "cargo test --lib"})),
        ),
        assistant("a3", Some("a2"), "msg_2", text("Done.")),
    ]);
    let p = run(&input);
    assert_eq!(
        texts(&p),
        vec![
            (Role::User, "run the tests"),
            (
                Role::Assistant,
                "Running them.\n[tool Bash] cargo test --lib"
            ),
            (Role::Assistant, "Done."),
        ]
    );
    assert_eq!(p.messages[1].id.as_deref(), Some("a1"));
    assert_eq!(p.messages[2].id.as_deref(), Some("a3"));
    assert_eq!(p.messages[1].timestamp, Some(1_749_895_205));
    assert!(p.problems.is_empty());
    assert_eq!(p.consumed, input.len());
}

#[test]
fn thinking_is_never_stored() {
    let secret = "SECRET-CHAIN-OF-THOUGHT";
    let thinking = serde_json::json!({"type": "thinking", "thinking": secret, "signature": "x"});
    let input = file(&[
        user("u1", None, "hi"),
        assistant("a1", Some("u1"), "m1", thinking),
        assistant("a2", Some("a1"), "m1", text("Hello")),
        assistant(
            "a3",
            Some("a2"),
            "m2",
            serde_json::json!({"type": "redacted_thinking", "data": secret}),
        ),
    ]);
    let p = run(&input);
    assert_eq!(
        texts(&p),
        vec![(Role::User, "hi"), (Role::Assistant, "Hello")]
    );
    assert_eq!(p.messages[1].id.as_deref(), Some("a1"));
    assert!(!format!("{p:?}").contains(secret));
}

#[test]
fn meta_and_injections_are_skipped() {
    let mut meta = user("u0", None, "<system-reminder>injected</system-reminder>");
    meta = meta.replacen("\"type\":\"user\"", "\"isMeta\":true,\"type\":\"user\"", 1);
    let input = file(&[
        meta,
        user("u1", None, "<local-command-caveat>Caveat: ...</local-command-caveat>"),
        user("u2", Some("u1"), "<command-name>/compact</command-name>\n<command-message>compact</command-message>\n<command-args>keep tests</command-args>"),
        user("u3", Some("u2"), "<local-command-stdout>Compacted</local-command-stdout>"),
        user("u4", Some("u3"), "[Request interrupted by user]"),
        user("u5", Some("u4"), "the real prompt"),
    ]);
    let p = run(&input);
    assert_eq!(
        texts(&p),
        vec![
            (Role::User, "/compact keep tests"),
            (Role::User, "the real prompt")
        ]
    );
    assert_eq!(p.meta.title.as_deref(), Some("the real prompt"));
}

#[test]
fn tool_use_compact_forms() {
    let cases = [
        (
            "Bash",
            serde_json::json!({"command": "cargo test --lib", "description": "d"}),
            "[tool Bash] cargo test --lib",
        ),
        (
            "Edit",
            serde_json::json!({"file_path": "src/main.rs", "old_string": "a", "new_string": "b"}),
            "[tool Edit] src/main.rs",
        ),
        (
            "Grep",
            serde_json::json!({"pattern": "fn main", "path": "src"}),
            "[tool Grep] fn main in src",
        ),
        (
            "Glob",
            serde_json::json!({"pattern": "**/*.rs"}),
            "[tool Glob] **/*.rs",
        ),
        (
            "Task",
            serde_json::json!({"subagent_type": "Explore", "description": "map repo", "prompt": "long"}),
            "[tool Task] Explore: map repo",
        ),
        (
            "TodoWrite",
            serde_json::json!({"todos": ["junk", {"content": "a"}, {"content": "b"}]}),
            "[tool TodoWrite] a; b",
        ),
        (
            "mcp__x__y",
            serde_json::json!({"q": 1}),
            "[tool mcp__x__y] {\"q\":1}",
        ),
        (
            "Bash",
            serde_json::json!({"cmd": 1}),
            "[tool Bash] {\"cmd\":1}",
        ),
    ];
    for (name, input, want) in cases {
        assert_eq!(compact_tool_use(name, Some(&input)), want);
    }
    let long = serde_json::json!({"blob": "x".repeat(10_000)});
    let got = compact_tool_use("Unknown", Some(&long));
    assert!(got.len() < 260 && got.ends_with(values::ELLIPSIS), "{got}");
}

#[test]
fn tool_results_truncated_errors_kept_longer() {
    let long = "y".repeat(500);
    let input = file(&[
        assistant(
            "a1",
            None,
            "m1",
            tool_use("Bash", serde_json::json!({"command": "ls"})),
        ),
        tool_result("r1", "a1", Value::String(long.clone()), false),
        tool_result(
            "r2",
            "r1",
            serde_json::json!([{"type": "text", "text": long}]),
            true,
        ),
        tool_result("r3", "r2", Value::String("   ".into()), false),
        tool_result("r4", "r3", Value::String(String::new()), true),
    ]);
    let opts = Options {
        tool_output_cap: 100,
    };
    let p = parse(input.as_bytes(), 1, "stem", &opts);
    let tools: Vec<_> = p.messages.iter().filter(|m| m.role == Role::Tool).collect();
    assert_eq!(tools.len(), 3);
    assert_eq!(tools[0].text.chars().count(), 101);
    assert!(!tools[0].is_error);
    assert_eq!(tools[1].text.chars().count(), 401);
    assert!(tools[1].is_error);
    assert_eq!(
        (tools[2].text.as_str(), tools[2].is_error),
        ("[tool error]", true)
    );
    assert_eq!(tools[0].id.as_deref(), Some("r1"));
}

#[test]
fn messages_keep_file_order_whatever_the_parent_links() {
    let input = file(&[
        user("c", Some("p"), "child written first"),
        user("x", Some("missing"), "orphan"),
        user("p", None, "parent"),
        user("c2", Some("p"), "second child"),
        user("g", Some("c"), "grandchild"),
    ]);
    let p = run(&input);
    let ids: Vec<_> = p.messages.iter().filter_map(|m| m.id.as_deref()).collect();
    assert_eq!(ids, vec!["c", "x", "p", "c2", "g"]);
}

/// Regression: parallel tool calls are chained (`a1 <- a2`), and each
/// result is a child of its own call, so a depth-first walk put the
/// first call's result after everything that followed `a2`: the rest
/// of the session. The results now stay with their calls.
#[test]
fn parallel_tool_results_stay_with_their_calls() {
    let input = file(&[
        user("u1", None, "look at both files"),
        assistant(
            "a1",
            Some("u1"),
            "m1",
            tool_use("Read", serde_json::json!({"file_path": "a.rs"})),
        ),
        assistant(
            "a2",
            Some("a1"),
            "m1",
            tool_use("Read", serde_json::json!({"file_path": "b.rs"})),
        ),
        tool_result("r1", "a1", Value::String("fn a()".into()), false),
        tool_result("r2", "a2", Value::String("fn b()".into()), false),
        assistant("a3", Some("r2"), "m2", text("both read")),
        user("u2", Some("a3"), "thanks"),
    ]);
    let p = run(&input);
    assert_eq!(
        texts(&p),
        vec![
            (Role::User, "look at both files"),
            (Role::Assistant, "[tool Read] a.rs\n[tool Read] b.rs"),
            (Role::Tool, "fn a()"),
            (Role::Tool, "fn b()"),
            (Role::Assistant, "both read"),
            (Role::User, "thanks"),
        ]
    );
}

/// A file read in parts reads as the whole file: with the outlook of
/// the file, a summary resolves against a leaf in another part (before
/// or after it), and every part knows the title a `custom-title` gives,
/// wherever it is.
#[test]
fn parts_with_an_outlook_read_as_the_whole_file() {
    let lines = [
        r#"{"type":"summary","summary":"Forward leaf","leafUuid":"a1"}"#.to_owned(),
        user("u1", None, "first prompt"),
        assistant("a1", Some("u1"), "m1", text("answer")),
        r#"{"type":"summary","summary":"Parser fixes","leafUuid":"u1"}"#.to_owned(),
        r#"{"type":"custom-title","customTitle":"Renamed","sessionId":"s-1"}"#.to_owned(),
    ];
    let input = file(&lines);
    let whole = run(&input);
    let mut scan = OutlookScan::default();
    scan.titles(input.as_bytes());
    assert!(scan.needs_leaves());
    scan.leaves(input.as_bytes());
    let outlook = scan.finish();
    let o = Options::default();
    let split = file(&lines[..2]).len();
    let head = parse_part(&input.as_bytes()[..split], 1, "stem", &o, Some(&outlook));
    let tail = parse_part(&input.as_bytes()[split..], 3, "stem", &o, Some(&outlook));
    let parts: Vec<Message> = head.messages.into_iter().chain(tail.messages).collect();
    assert_eq!(parts, whole.messages);
    assert_eq!(whole.messages.len(), 4, "both summaries resolve");
    assert_eq!(whole.meta.title.as_deref(), Some("Renamed"));
    assert_eq!(head.meta.title, whole.meta.title);
    let plain = parse(&input.as_bytes()[..split], 1, "stem", &o);
    assert!(
        plain.messages.iter().all(|m| m.role != Role::System),
        "no outlook, no leaf"
    );
}

#[test]
fn responses_tell_where_a_part_may_start() {
    let a1 = assistant("a1", Some("u1"), "m1", text("x"));
    let a2 = assistant("a2", Some("a1"), "m1", text("y"));
    let a3 = assistant("a3", Some("a2"), "m2", text("z"));
    let r = |l: &str| response_of(l.as_bytes()).unwrap();
    assert!(r(&a2).continues(&r(&a1)));
    assert!(!r(&a3).continues(&r(&a2)));
    assert!(response_of(user("u1", None, "hi").as_bytes()).is_none());
    assert!(response_of(b"{not json").is_none());
    let bare = r#"{"type":"assistant","message":"odd"}"#;
    assert!(!r(bare).continues(&r(bare)), "no id: a response of its own");
}

#[test]
fn parent_cycles_do_not_hang_or_drop() {
    let input = file(&[
        user("a", Some("b"), "one"),
        user("b", Some("a"), "two"),
        user("s", Some("s"), "self"),
    ]);
    let p = run(&input);
    assert_eq!(p.messages.len(), 3);
}

#[test]
fn subagent_file_links_to_parent() {
    let line = serde_json::json!({
        "type": "user", "uuid": "u1", "parentUuid": null, "sessionId": "parent-sid",
        "isSidechain": true, "agentId": "a485154", "message": {"role": "user", "content": "Explore the repo"}
    });
    let p = run(&file(&[line.to_string()]));
    assert_eq!(p.meta.id, "parent-sid/agent-a485154");
    assert_eq!(p.meta.parent_id.as_deref(), Some("parent-sid"));
    let main = run(&file(&[user("u1", None, "hi")]));
    assert_eq!((main.meta.id.as_str(), main.meta.parent_id), (SID, None));
    assert_eq!(main.meta.cwd.as_deref(), Some("/repo"));
    assert_eq!(main.meta.git_branch.as_deref(), Some("main"));
    assert_eq!(main.meta.started_at, Some(1_749_895_200));
    assert_eq!(run("{\"type\":\"progress\"}\n").meta.id, "stem");
}

/// Issue 39 item 3: a compaction's transcript repeats its parent, which
/// holds its summary; it yields no messages, and keeps its meta.
#[test]
fn a_compaction_transcript_yields_no_messages() {
    let line = |uuid: &str, kind: &str, text: &str| {
        serde_json::json!({
            "type": kind, "uuid": uuid, "parentUuid": null, "sessionId": "parent-sid",
            "isSidechain": true, "agentId": "acompact-70d8e7",
            "message": {"role": kind, "content": text}
        })
        .to_string()
    };
    let p = run(&file(&[
        line(
            "u1",
            "user",
            "Your task is to create a detailed summary of the conversation so far",
        ),
        line(
            "a1",
            "assistant",
            "Summary: 1. Primary Request: wire the scroll handler",
        ),
    ]));
    assert!(p.messages.is_empty(), "{:?}", p.messages);
    assert_eq!(p.meta.id, "parent-sid/agent-acompact-70d8e7");
    assert_eq!(p.meta.parent_id.as_deref(), Some("parent-sid"));
    // Another sub-agent's work is its own.
    let explore = line("u1", "user", "Explore the repo").replace("acompact-70d8e7", "a485154");
    assert_eq!(run(&file(&[explore])).messages.len(), 1);
}

#[test]
fn compaction_summaries_are_kept() {
    let mut cs = user(
        "u2",
        Some("u1"),
        "This session is being continued. Summary: we fixed the parser.",
    );
    cs = cs.replacen(
        "\"type\":\"user\"",
        "\"isCompactSummary\":true,\"type\":\"user\"",
        1,
    );
    let input = file(&[
        r#"{"type":"summary","summary":"Other session title","leafUuid":"elsewhere"}"#.to_owned(),
        user("u1", None, "first prompt"),
        cs,
        r#"{"type":"summary","summary":"Parser fixes","leafUuid":"u2"}"#.to_owned(),
    ]);
    let p = run(&input);
    assert_eq!(
        texts(&p),
        vec![
            (Role::User, "first prompt"),
            (
                Role::System,
                "This session is being continued. Summary: we fixed the parser."
            ),
            (Role::System, "Parser fixes"),
        ]
    );
    assert_eq!(p.meta.title.as_deref(), Some("Parser fixes"));
}

#[test]
fn custom_title_wins_and_attachments_are_skipped() {
    let input = file(&[
        user("u1", None, "first prompt"),
        r#"{"type":"attachment","uuid":"x1","parentUuid":"u1"}"#.to_owned(),
        r#"{"type":"custom-title","customTitle":"  My   renamed\nsession ","sessionId":"s-1"}"#
            .to_owned(),
    ]);
    let p = run(&input);
    assert_eq!(p.meta.title.as_deref(), Some("My renamed session"));
    assert!(p.problems.is_empty(), "{:?}", p.problems);
    assert_eq!(p.messages.len(), 1);
}

#[test]
fn truncated_last_line_is_not_consumed() {
    let full = file(&[user("u1", None, "hi")]);
    let partial = &user("u2", Some("u1"), "still being wri")[..40];
    let input = format!("{full}{partial}");
    let p = run(&input);
    assert_eq!(p.consumed, full.len());
    assert_eq!(p.messages.len(), 1);
    assert_eq!(p.problems.len(), 1);
    assert_eq!(p.problems[0].line, 2);
    assert!(p.problems[0].message.starts_with("truncated last line"));
    let complete = format!("{full}{}", user("u2", Some("u1"), "done"));
    let p = run(&complete);
    assert_eq!((p.consumed, p.messages.len()), (complete.len(), 2));
    assert!(p.problems.is_empty());
}

#[test]
fn bad_lines_become_problems_and_parsing_continues() {
    let mut input = file(&[user("u1", None, "one")]).into_bytes();
    input.extend_from_slice(b"{\"type\": \"user\", oops\n\"massive error\"\n[1]\n");
    input.extend_from_slice(b"{\"type\":\"user\",\"uuid\":\"bad\xff\"}\n{\"silly\":\"this\"}\n");
    input.extend_from_slice(b"{\"type\":\"foo\"}\n{\"type\":\"user\",\"message\":\"error\"}\n");
    input.extend_from_slice(b"{\"type\":\"user\",\"message\":{\"content\":[\"wow\",{\"type\":\"text\",\"text\":\"kept\"}]}}\n");
    input.extend_from_slice(file(&[user("u9", None, "last")]).as_bytes());
    let p = parse(&input, 1, "stem", &Options::default());
    let got: Vec<(usize, &str)> = p
        .problems
        .iter()
        .map(|p| (p.line, p.message.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            (2, "invalid JSON: key must be a string at column 18"),
            (3, "not a JSON object (found a string)"),
            (4, "not a JSON object (found an array)"),
            (5, "invalid UTF-8 at byte 26"),
            (6, "missing \"type\" field"),
            (8, "message is a string, not an object"),
            (9, "1 content block(s) not an object (first is a string)"),
        ]
    );
    assert_eq!(
        texts(&p),
        vec![
            (Role::User, "one"),
            (Role::User, "kept"),
            (Role::User, "last")
        ]
    );
    // A type Claude Code added (`foo` here) is skipped and counted.
    assert_eq!(p.unknown_lines, 1);
    assert_eq!(p.consumed, input.len());
}

/// Claude Code 2.1 writes `last-prompt` lines, which recall does not read:
/// they are counted as skipped, never reported as problems of the file.
#[test]
fn a_line_type_of_a_newer_claude_code_is_skipped_not_a_problem() {
    let mut lines = vec![user("u1", None, "deploy the docs")];
    lines.push(r#"{"type":"last-prompt","lastPrompt":"deploy the docs","sessionId":"s"}"#.into());
    let p = run(&file(&lines));
    assert!(p.problems.is_empty(), "{:?}", p.problems);
    assert_eq!(p.unknown_lines, 1);
    assert_eq!(texts(&p), vec![(Role::User, "deploy the docs")]);
}

#[test]
fn incremental_tail_parse_matches_full_parse() {
    let lines = [
        user("u1", None, "first"),
        assistant("a1", Some("u1"), "m1", text("answer one")),
        tool_result("r1", "a1", Value::String("out".into()), false),
        user("u2", Some("r1"), "second"),
        assistant("a2", Some("u2"), "m2", text("answer two")),
        user("u3", Some("a2"), "third"),
    ];
    let input = file(&lines);
    let full = run(&input);
    let split = file(&lines[..3]).len();
    let head = parse(&input.as_bytes()[..split], 1, "stem", &Options::default());
    let tail = parse(&input.as_bytes()[split..], 4, "stem", &Options::default());
    assert_eq!(head.consumed, split);
    assert_eq!(head.consumed + tail.consumed, input.len());
    let union: Vec<Message> = head.messages.into_iter().chain(tail.messages).collect();
    assert_eq!(union, full.messages);
    let bad = parse(b"{\"nope\":1}\n", 41, "stem", &Options::default());
    assert_eq!(bad.problems[0].line, 41);
}

#[test]
fn mixed_text_and_tool_result_line() {
    let line = serde_json::json!({
        "type": "user", "uuid": "u1", "message": {"content": [
            {"type": "tool_result", "content": "ok"},
            {"type": "image", "source": {}},
            {"type": "text", "text": "also do this"}
        ]}
    });
    let p = run(&file(&[line.to_string()]));
    assert_eq!(
        texts(&p),
        vec![(Role::Tool, "ok"), (Role::User, "also do this")]
    );
    assert_eq!(p.messages[1].id.as_deref(), Some("u1:text"));
}

#[test]
fn garbage_never_panics() {
    let junk = junk(0x9E37_79B9_7F4A_7C15, b"{}[]\":,\n\\ax0\xff");
    let p = parse(&junk, 1, "stem", &Options::default());
    assert!(p.consumed <= junk.len());
    assert!(!sniff(&junk[..4096]));
}

#[test]
fn huge_line_is_truncated() {
    let big = "z".repeat(5_000_000);
    let input = file(&[
        assistant(
            "a1",
            None,
            "m1",
            tool_use("Bash", serde_json::json!({"command": "cat big"})),
        ),
        tool_result("r1", "a1", Value::String(big), false),
    ]);
    let p = run(&input);
    assert_eq!(p.messages[1].text.chars().count(), 2001);
}

#[test]
fn sniff_claude_lines() {
    assert!(sniff(user("u", None, "hi").as_bytes()));
    assert!(sniff(
        b"\n{\"type\":\"summary\",\"summary\":\"t\",\"leafUuid\":\"x\"}\n"
    ));
    assert!(sniff(
        b"{\"parentUuid\":null,\"isSidechain\":false,\"userType\":\"external\",\"cwd\":\"/x"
    ));
    assert!(!sniff(
        b"{\"timestamp\":\"2026\",\"type\":\"session_meta\",\"payload\":{\"id\":\"x\"}}\n"
    ));
    assert!(!sniff(b"hello world\n"));
    assert!(!sniff(b""));
}

/// Regression (issue 35: recall's MCP `recall` results were indexed back as
/// the session's text, so recalled memory came back later as if it were
/// evidence): the result of a call to one of recall's own memory tools is
/// left out; the call, and other tools' results, are kept.
#[test]
fn results_of_recalls_own_memory_tools_are_not_indexed() {
    let recalled = "## Recalled context\n- Deploys go through make ship-it";
    let input = file(&[
        user("u1", None, "how do we deploy?"),
        assistant(
            "a1",
            Some("u1"),
            "m1",
            tool_use(
                "mcp__recall__recall",
                serde_json::json!({"query": "deploy"}),
            ),
        ),
        tool_result("r1", "a1", Value::String(recalled.into()), false),
        assistant(
            "a2",
            Some("r1"),
            "m2",
            serde_json::json!({"type": "tool_use", "id": "t2", "name": "mcp__recall__remember", "input": {"text": "x"}}),
        ),
        serde_json::json!({
            "type": "user", "uuid": "r2", "parentUuid": "a2", "sessionId": SID,
            "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t2", "content": "Remembered deploy"}
            ]}
        })
        .to_string(),
    ]);
    let p = run(&input);
    let all: Vec<&str> = texts(&p).into_iter().map(|(_, t)| t).collect();
    assert!(
        !all.iter().any(|t| t.contains("Recalled context")),
        "{all:?}"
    );
    assert!(
        all.iter()
            .any(|t| t.starts_with("[tool mcp__recall__recall]")),
        "{all:?}"
    );
    assert!(all.contains(&"Remembered deploy"), "{all:?}");
}
