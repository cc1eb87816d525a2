//! Tests of the Codex rollout parser: hand-written lines for each rule of
//! the module doc (what is indexed, calls and outputs, older formats, parts,
//! problems, sniffing).

use serde_json::json;

use super::*;
use crate::ingest::model::{Message, Role};
use crate::ingest::transcript::testing::{file, junk, texts};

const STEM: &str = "rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52";
const KEY: &str = "019b7f94-51b4-7593-922e-ba12b5b73b52";

fn line(kind: &str, payload: serde_json::Value) -> String {
    json!({"timestamp": "2026-05-12T10:00:00.000Z", "type": kind, "payload": payload}).to_string()
}

fn meta_line() -> String {
    line(
        "session_meta",
        json!({"id": "sess-1", "timestamp": "2026-05-12T09:59:55.000Z", "cwd": "/p",
               "git": {"branch": "main"}, "base_instructions": {"text": "long"}}),
    )
}

fn user_msg(t: &str) -> String {
    line(
        "event_msg",
        json!({"type": "user_message", "message": t, "images": []}),
    )
}

fn ri_msg(role: &str, t: &str) -> String {
    let kind = if role == "assistant" {
        "output_text"
    } else {
        "input_text"
    };
    line(
        "response_item",
        json!({"type": "message", "role": role, "content": [{"type": kind, "text": t}]}),
    )
}

fn agent_msg(t: &str) -> String {
    line("event_msg", json!({"type": "agent_message", "message": t}))
}

fn call(id: &str, name: &str, args: serde_json::Value) -> String {
    line(
        "response_item",
        json!({"type": "function_call", "name": name, "arguments": args.to_string(), "call_id": id}),
    )
}

fn output(id: &str, out: &str) -> String {
    line(
        "response_item",
        json!({"type": "function_call_output", "call_id": id, "output": out}),
    )
}

fn run(input: &str) -> ParsedSession {
    parse(input.as_bytes(), 1, STEM, &Options::default())
}

#[test]
fn user_and_assistant_with_dedupe_and_skips() {
    let input = file(&[
        meta_line(),
        line("turn_context", json!({"cwd": "/p", "model": "gpt"})),
        line(
            "response_item",
            json!({"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "<permissions instructions>x"}]}),
        ),
        ri_msg(
            "user",
            "<environment_context>\n<cwd>/p</cwd>\n</environment_context>",
        ),
        ri_msg("user", "fix the bug"),
        user_msg("fix the bug"),
        user_msg("<environment_context>x</environment_context>"),
        line(
            "response_item",
            json!({"type": "reasoning", "summary": [], "content": null, "encrypted_content": "gAAAA"}),
        ),
        agent_msg("Looking."),
        ri_msg("assistant", "Looking."),
        agent_msg("Only in the event."),
        line("event_msg", json!({"type": "token_count", "info": null})),
        line("event_msg", json!({"type": "task_complete"})),
    ]);
    let p = run(&input);
    assert_eq!(
        texts(&p),
        vec![
            (Role::User, "fix the bug"),
            (Role::Assistant, "Looking."),
            (Role::Assistant, "Only in the event."),
        ]
    );
    assert_eq!(
        p.messages[0].id.as_deref(),
        Some(format!("{KEY}:6").as_str())
    );
    assert_eq!(p.meta.id, "sess-1");
    assert_eq!(p.meta.cwd.as_deref(), Some("/p"));
    assert_eq!(p.meta.git_branch.as_deref(), Some("main"));
    assert_eq!(p.meta.started_at, Some(1_778_579_995));
    assert_eq!(p.meta.title.as_deref(), Some("fix the bug"));
    assert!(p.problems.is_empty());
}

#[test]
fn calls_join_outputs_and_exit_codes() {
    let input = file(&[
        call("c1", "shell", json!({"command": ["bash", "-lc", "cargo test"], "workdir": "/p"})),
        output("c1", r#"{"output":"test result: ok","metadata":{"exit_code":0}}"#),
        call("c2", "exec_command", json!({"cmd": "cat missing"})),
        output("c2", "Chunk ID: ab\nWall time: 0.1 seconds\nProcess running with session ID 7\nOriginal token count: 0\nOutput:\n"),
        call("c3", "write_stdin", json!({"session_id": 7, "chars": ""})),
        output("c3", "Chunk ID: cd\nProcess exited with code 1\nOutput:\nno such file"),
        line("event_msg", json!({"type": "exec_command_end", "call_id": "c2", "command": ["/bin/zsh", "-lc", "cat missing"],
            "stdout": "", "stderr": "cat: missing: No such file", "aggregated_output": "cat: missing: No such file", "exit_code": 1})),
        call("c4", "update_plan", json!({"plan": [{"step": "a", "status": "done"}]})),
        output("c4", "Plan updated"),
    ]);
    let p = run(&input);
    assert_eq!(
        texts(&p),
        vec![
            (Role::Tool, "[exec] cargo test\ntest result: ok"),
            (Role::Tool, "[exec] cat missing\ncat: missing: No such file"),
            (
                Role::Tool,
                "[update_plan] {\"plan\":[{\"step\":\"a\",\"status\":\"done\"}]}\nPlan updated"
            ),
        ]
    );
    let errs: Vec<_> = p.messages.iter().map(|m| m.is_error).collect();
    assert_eq!(errs, vec![false, true, false]);
    assert_eq!(p.messages[1].id.as_deref(), Some("c2"));
    assert_eq!(p.messages[1].name.as_deref(), Some("exec_command"));
}

#[test]
fn unified_exec_output_header_gives_exit_code() {
    let input = file(&[
        call("c1", "exec_command", json!({"cmd": "false"})),
        output("c1", "Chunk ID: 1\nWall time: 0.0 seconds\nProcess exited with code 2\nOriginal token count: 1\nOutput:\nboom\n"),
    ]);
    let p = run(&input);
    assert_eq!(texts(&p), vec![(Role::Tool, "[exec] false\nboom")]);
    assert!(p.messages[0].is_error);
}

#[test]
fn output_truncated_and_errors_kept_longer() {
    let long = "o".repeat(1000);
    let input = file(&[
        call("ok", "shell", json!({"command": "yes"})),
        output("ok", &long),
        call("bad", "shell", json!({"command": "no"})),
        output(
            "bad",
            &format!(r#"{{"output":"{long}","metadata":{{"exit_code":3}}}}"#),
        ),
    ]);
    let p = parse(
        input.as_bytes(),
        1,
        STEM,
        &Options {
            tool_output_cap: 100,
        },
    );
    let n = |i: usize| p.messages[i].text.chars().count();
    assert_eq!(n(0), "[exec] yes\n".len() + 101);
    assert_eq!(n(1), "[exec] no\n".len() + 401);
    assert!(p.messages[1].is_error && !p.messages[0].is_error);
}

#[test]
fn apply_patch_is_compact() {
    let patch = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-x\n+y\n*** Add File: src/b.rs\n+z\n*** End Patch\n";
    let input = file(&[
        line(
            "response_item",
            json!({"type": "custom_tool_call", "status": "completed", "call_id": "p1", "name": "apply_patch", "input": patch}),
        ),
        line(
            "event_msg",
            json!({"type": "patch_apply_end", "call_id": "p1", "stdout": "", "stderr": "bad hunk", "success": false}),
        ),
        line(
            "response_item",
            json!({"type": "custom_tool_call_output", "call_id": "p1", "output": "{\"output\":\"error: bad hunk\",\"metadata\":{\"exit_code\":1}}"}),
        ),
    ]);
    let p = run(&input);
    assert_eq!(
        texts(&p),
        vec![(
            Role::Tool,
            "[apply_patch] src/a.rs, src/b.rs\nerror: bad hunk"
        )]
    );
    assert!(p.messages[0].is_error);
    assert!(!format!("{p:?}").contains("+y"));
}

#[test]
fn orphan_outputs_and_web_search() {
    let input = file(&[
        output("gone", "late output"),
        line(
            "event_msg",
            json!({"type": "exec_command_end", "call_id": "gone2", "command": ["ls"], "aggregated_output": "a b", "exit_code": 0}),
        ),
        line(
            "event_msg",
            json!({"type": "web_search_end", "call_id": "ws1", "query": "rust serde borrow"}),
        ),
        line(
            "response_item",
            json!({"type": "web_search_call", "status": "completed", "action": {"type": "search", "query": "rust serde borrow"}}),
        ),
        line("compacted", json!({"message": "Summary of earlier work"})),
    ]);
    let p = run(&input);
    assert_eq!(
        texts(&p),
        vec![
            (Role::Tool, "[tool output]\nlate output"),
            (Role::Tool, "[exec] ls\na b"),
            (Role::Tool, "[web_search] rust serde borrow"),
            (Role::System, "Summary of earlier work"),
        ]
    );
    assert_eq!(p.messages[0].id.as_deref(), Some("gone"));
}

#[test]
fn legacy_format_is_read() {
    let input = [
        r#"{"id":"old-1","timestamp":"2025-04-20T10:00:00.000Z","instructions":null,"git":{"branch":"dev"}}"#,
        r#"{"record_type":"state"}"#,
        r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"<user_instructions>be brief</user_instructions>"}]}"#,
        r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"list files"}]}"#,
        r#"{"type":"local_shell_call","call_id":"l1","status":"completed","action":{"type":"exec","command":["bash","-lc","ls"]}}"#,
        r#"{"type":"function_call_output","call_id":"l1","output":"{\"output\":\"a.rs\",\"metadata\":{\"exit_code\":0}}"}"#,
        r#"{"type":"message","role":"assistant","id":"msg_9","content":[{"type":"output_text","text":"One file."}]}"#,
        r#"{"type":"weird"}"#,
    ];
    let p = run(&file(&input.map(str::to_owned)));
    assert_eq!(
        texts(&p),
        vec![
            (Role::User, "list files"),
            (Role::Tool, "[exec] ls\na.rs"),
            (Role::Assistant, "One file.")
        ]
    );
    assert_eq!(p.messages[2].id.as_deref(), Some("msg_9"));
    assert_eq!(
        (p.meta.id.as_str(), p.meta.git_branch.as_deref()),
        ("old-1", Some("dev"))
    );
    assert_eq!(p.meta.started_at, Some(1_745_143_200));
    assert!(p.problems.is_empty(), "{:?}", p.problems);
    assert_eq!(p.unknown_lines, 1);
}

#[test]
fn bad_lines_become_problems() {
    let mut input = file(&[user_msg("one")]).into_bytes();
    input.extend_from_slice(
        b"{\"timestamp\":\"x\",\"type\":\"event_msg\",\"payload\":\n[1]\n\xc3\x28\n",
    );
    input.extend_from_slice(b"{\"type\":\"foo\",\"payload\":{}}\n{\"type\":\"event_msg\",\"payload\":\"str\"}\n{\"a\":1}\n");
    input.extend_from_slice(file(&[user_msg("two")]).as_bytes());
    let p = parse(&input, 1, STEM, &Options::default());
    let got: Vec<(usize, &str)> = p
        .problems
        .iter()
        .map(|p| (p.line, p.message.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            (2, "invalid JSON: EOF while parsing a value at column 46"),
            (3, "not a JSON object (found an array)"),
            (4, "invalid UTF-8 at byte 0"),
            (6, "payload is a string, not an object"),
            (7, "missing \"type\" field"),
        ]
    );
    assert_eq!(texts(&p), vec![(Role::User, "one"), (Role::User, "two")]);
    // A type Codex added (`foo` here) is skipped and counted, not a problem.
    assert_eq!(p.unknown_lines, 1);
    assert_eq!(p.consumed, input.len());
}

#[test]
fn truncated_last_line_and_incremental_tail() {
    let lines = [
        meta_line(),
        user_msg("first"),
        ri_msg("assistant", "reply"),
        call("c1", "shell", json!({"command": "ls"})),
        output("c1", "x"),
        user_msg("second"),
        ri_msg("assistant", "reply two"),
    ];
    let input = file(&lines);
    let full = run(&input);
    let split = file(&lines[..5]).len();
    let head = parse(&input.as_bytes()[..split], 1, STEM, &Options::default());
    let tail = parse(&input.as_bytes()[split..], 6, STEM, &Options::default());
    let union: Vec<Message> = head.messages.into_iter().chain(tail.messages).collect();
    assert_eq!(union, full.messages);
    assert_eq!(tail.meta.id, KEY);

    let cut = &input.as_bytes()[..split + 20];
    let p = parse(cut, 1, STEM, &Options::default());
    assert_eq!(p.consumed, split);
    assert_eq!(p.problems.len(), 1);
    assert_eq!(p.problems[0].line, 6);
    assert!(p.problems[0].message.starts_with("truncated last line"));
}

#[test]
fn steps_tell_where_a_part_may_start() {
    let reasoning = line(
        "response_item",
        serde_json::json!({"type": "reasoning", "summary": []}),
    );
    let turn = line("turn_context", serde_json::json!({"cwd": "/r"}));
    assert!(starts_step(reasoning.as_bytes()) && starts_step(turn.as_bytes()));
    assert!(!starts_step(user_msg("hi").as_bytes()));
    assert!(!starts_step(
        call("c1", "shell", serde_json::json!({})).as_bytes()
    ));
    assert!(!starts_step(b"{oops"));
}

/// A part after the first knows a `user_message` was read before it,
/// so its `response_item` user messages are dropped as in a whole read.
#[test]
fn parts_carry_the_user_event() {
    let lines = [
        user_msg("first"),
        ri_msg("user", "again, as a response item"),
    ];
    let input = file(&lines);
    let whole = run(&input);
    let split = file(&lines[..1]).len();
    let (mut carry, o) = (Carry::default(), Options::default());
    let head = parse_part(&input.as_bytes()[..split], 1, STEM, &o, &mut carry);
    let tail = parse_part(&input.as_bytes()[split..], 2, STEM, &o, &mut carry);
    let parts: Vec<Message> = head.messages.into_iter().chain(tail.messages).collect();
    assert_eq!(parts, whole.messages);
    assert_eq!(whole.messages.len(), 1);
}

/// Regression (review, stop 59): a run that stopped between the two lines
/// Codex writes for one prompt (`response_item` user, then `user_message`)
/// or one reply (`agent_message`, then `response_item`), as a hook's index
/// mid-turn does, made the next run's append store the second a second
/// time. The carry, kept in the source's state between runs, now tells the
/// append what to leave out: cut anywhere, two runs store each prompt and
/// reply once, as a whole read does.
#[test]
fn r_two_runs_cut_anywhere_store_each_message_once() {
    let lines = [
        meta_line(),
        ri_msg("user", "<environment_context>cwd</environment_context>"),
        ri_msg("user", "what is this repository about?"),
        user_msg("what is this repository about?"),
        line("turn_context", json!({"cwd": "/p"})),
        line("response_item", json!({"type": "reasoning"})),
        call("c1", "shell", json!({"command": ["ls"]})),
        output("c1", "README.md"),
        agent_msg("It is a CLI."),
        ri_msg("assistant", "It is a CLI."),
        user_msg("and its tests?"),
        ri_msg("user", "and its tests?"),
        line("turn_context", json!({"cwd": "/p"})),
        agent_msg("Run cargo test."),
        ri_msg("assistant", "Run cargo test."),
        user_msg("thanks"),
        line("turn_context", json!({"cwd": "/p"})),
        agent_msg("Done."),
        ri_msg("assistant", "Done."),
        user_msg("and again"),
        line("turn_context", json!({"cwd": "/p"})),
        agent_msg("Done."),
        ri_msg("assistant", "Done."),
    ];
    // Prompts and replies (a call cut from its output is stored as two
    // tool messages, a call and an orphan output, which repeats nothing).
    let roles_and_texts = |m: &[Message]| -> Vec<(Role, String)> {
        m.iter()
            .filter(|m| m.role != Role::Tool)
            .map(|m| (m.role, m.text.clone()))
            .collect()
    };
    let whole = roles_and_texts(&run(&file(&lines)).messages);
    assert_eq!(
        whole.iter().filter(|(_, t)| t == "Done.").count(),
        2,
        "{whole:?}"
    );
    let o = Options::default();
    for cut in 1..lines.len() {
        let mut carry = Carry::default();
        let head = parse_part(file(&lines[..cut]).as_bytes(), 1, STEM, &o, &mut carry);
        // Kept in the source's state between the runs.
        let kept = serde_json::to_string(&carry).unwrap();
        let mut carry: Carry = serde_json::from_str(&kept).unwrap();
        let tail = parse_part(
            file(&lines[cut..]).as_bytes(),
            cut + 1,
            STEM,
            &o,
            &mut carry,
        );
        let both: Vec<Message> = head.messages.into_iter().chain(tail.messages).collect();
        assert_eq!(roles_and_texts(&both), whole, "cut before line {}", cut + 1);
    }
}

#[test]
fn subagent_parent_from_source() {
    let input = file(&[line(
        "session_meta",
        json!({"id": "child", "source": {"subagent": {"thread_spawn": {"parent_thread_id": "parent", "depth": 1}}}}),
    )]);
    assert_eq!(run(&input).meta.parent_id.as_deref(), Some("parent"));
    let plain = file(&[line("session_meta", json!({"id": "x", "source": "cli"}))]);
    assert_eq!(run(&plain).meta.parent_id, None);
}

#[test]
fn stem_keys() {
    assert_eq!(stem_key(STEM), KEY);
    assert_eq!(stem_key("turn-1"), "turn-1");
    assert_eq!(stem_key("é".repeat(30).as_str()), "é".repeat(30));
}

#[test]
fn sniff_codex_lines() {
    assert!(sniff(meta_line().as_bytes()));
    assert!(sniff(
        br#"{"id":"x","timestamp":"2025-04-20T10:00:00Z","instructions":null}"#
    ));
    assert!(sniff(b"{\"timestamp\":\"2026-05-11T08:27:17.490Z\",\"type\":\"session_meta\",\"payload\":{\"id\":\"019e\",\"base_instructions\":{\"text\":\"You are"));
    assert!(!sniff(
        br#"{"type":"user","sessionId":"s","uuid":"u","message":{"content":"hi"}}"#
    ));
    assert!(!sniff(b"\x00\x01binary"));
}

#[test]
fn garbage_never_panics() {
    let junk = junk(0x2545_F491_4F6C_DD1D, b"{}[]\":,\n\\apyload0\xff");
    let p = parse(&junk, 1, "x", &Options::default());
    assert!(p.consumed <= junk.len());
}

/// Codex 0.171 writes `world_state` and `token_usage_record` lines, which
/// recall does not read: counted as skipped, not problems of the file.
#[test]
fn line_types_of_a_newer_codex_are_skipped_not_problems() {
    let input = file(&[
        user_msg("ship the release"),
        r#"{"timestamp":"2026-01-01T00:00:00Z","type":"world_state","payload":{"cwd":"/p"}}"#
            .into(),
        r#"{"timestamp":"2026-01-01T00:00:01Z","type":"token_usage_record","payload":{"total":3}}"#
            .into(),
        r#"{"type":"no_payload_kind"}"#.into(),
    ]);
    let p = parse(input.as_bytes(), 1, STEM, &Options::default());
    assert!(p.problems.is_empty(), "{:?}", p.problems);
    assert_eq!(p.unknown_lines, 3);
    assert_eq!(texts(&p), vec![(Role::User, "ship the release")]);
}

/// Regression (issue 35): Codex 0.171 calls an MCP tool by its server's
/// namespace and its name; what recall's own `recall` tool returned was
/// indexed back as the session's text. It is left out (the call is kept,
/// named as Claude Code names it); another tool's output is kept.
#[test]
fn results_of_recalls_own_memory_tools_are_not_indexed() {
    let mcp = |id: &str, ns: &str, name: &str| {
        line(
            "response_item",
            json!({"type": "function_call", "namespace": ns, "name": name,
                   "arguments": "{\"query\":\"deploy\"}", "call_id": id}),
        )
    };
    let rich = |id: &str, text: &str| {
        line(
            "response_item",
            json!({"type": "function_call_output", "call_id": id, "output": [
                {"type": "input_text", "text": "Wall time: 0.0046 seconds\nOutput:"},
                {"type": "input_text", "text": text}
            ]}),
        )
    };
    let input = file(&[
        meta_line(),
        ri_msg("user", "how do we deploy?"),
        mcp("c1", "mcp__recall", "recall"),
        rich(
            "c1",
            "## Recalled context\n- Deploys go through make ship-it",
        ),
        mcp("c2", "mcp__docs", "search"),
        rich("c2", "the docs say ship-it"),
    ]);
    let p = run(&input);
    let all: Vec<&str> = texts(&p).into_iter().map(|(_, t)| t).collect();
    assert!(
        !all.iter().any(|t| t.contains("Recalled context")),
        "{all:?}"
    );
    assert!(
        all.iter().any(|t| t.starts_with("[mcp__recall__recall]")),
        "{all:?}"
    );
    assert!(
        all.iter()
            .any(|t| t.starts_with("[mcp__docs__search]") && t.contains("the docs say ship-it")),
        "{all:?}"
    );
}

/// Issue 39: the commits a rollout's shell calls made are what the
/// session did, whichever shell tool ran them; other calls give nothing.
#[test]
fn shell_commits_are_what_the_session_did() {
    let input = file(&[
        user_msg("Work on ticket 12"),
        call(
            "c1",
            "shell",
            json!({"command": ["bash", "-lc", "git add -A && git commit -m 'fix: parse dates'"]}),
        ),
        output(
            "c1",
            r#"{"output":"[main 1a2b] fix: parse dates","metadata":{"exit_code":0}}"#,
        ),
        call(
            "c2",
            "exec_command",
            json!({"cmd": "git commit -m \"docs: the date format\n\nLonger.\""}),
        ),
        output("c2", "Chunk ID: ab\nProcess exited with code 0\nOutput:\n"),
        call(
            "c3",
            "update_plan",
            json!({"plan": [{"step": "git commit -m 'no'", "status": "done"}]}),
        ),
        output("c3", "Plan updated"),
    ]);
    let p = run(&input);
    assert_eq!(
        p.meta.did,
        vec!["fix: parse dates", "docs: the date format"]
    );
    assert_eq!(p.meta.title.as_deref(), Some("Work on ticket 12"));
}

/// A prompt from the Codex app or IDE extension lists the files the user
/// mentioned, then the request under its own heading: the session is
/// titled by the request. Without the heading, the prompt is the title.
#[test]
fn the_title_is_the_request_under_codex_apps_heading() {
    let prompt = "\n# Files mentioned by the user:\n\n## Demo Prep.vtt: /Users/u/Downloads/Demo Prep.vtt\n\n## My request for Codex:\nsummarise the action items of the demo\n";
    let p = run(&file(&[user_msg(prompt)]));
    assert_eq!(
        p.meta.title.as_deref(),
        Some("summarise the action items of the demo")
    );
    assert!(
        p.messages[0].text.contains("Demo Prep.vtt"),
        "the message keeps the files"
    );
    let plain = run(&file(&[user_msg(
        "## My request for Codex: inline, not a heading",
    )]));
    assert_eq!(
        plain.meta.title.as_deref(),
        Some("## My request for Codex: inline, not a heading")
    );
}
