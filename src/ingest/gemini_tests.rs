//! Tests of the Gemini CLI parser: the real chats in
//! `testdata/gemini/entireio-cli/` (JSON documents Gemini CLI wrote) and
//! hand-written logs for what those do not show.

use std::path::PathBuf;

use super::*;

fn testdata(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/gemini")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn parsed(input: &[u8]) -> ParsedSession {
    parse(input, "stem", &Options::default()).unwrap_or_else(|p| panic!("{p:?}"))
}

/// Every text of the session, for "never stored" checks.
fn all_text(s: &ParsedSession) -> String {
    let mut out = format!("{:?}", s.meta);
    for m in &s.messages {
        out.push_str(&m.text);
        out.push('\n');
    }
    out
}

fn roles(s: &ParsedSession) -> Vec<Role> {
    s.messages.iter().map(|m| m.role).collect()
}

const REAL_SHORT: &str = "entireio-cli/session-2026-01-10T02-08-faff42ab.json";
const REAL_LONG: &str = "entireio-cli/session-2026-01-15T20-51-f7633853.json";
const LOG: &str = "session-2026-05-02T09-14-3f2a9c1e.jsonl";

#[test]
fn real_chat_reads_prompts_answers_and_tool_calls() {
    let s = parsed(&testdata(REAL_SHORT));
    assert!(s.problems.is_empty(), "{:?}", s.problems);
    assert_eq!(s.meta.id, "faff42ab-6ea5-4f78-b8c4-f7dd6272af08");
    assert_eq!(
        s.meta.title.as_deref(),
        Some("add new text to test-gemini.txt")
    );
    assert_eq!(
        s.meta.started_at,
        values::parse_ts("2026-01-10T02:08:26.108Z")
    );
    use Role::*;
    assert_eq!(
        roles(&s),
        [User, Assistant, User, Tool, Tool, Assistant],
        "{:#?}",
        s.messages
    );
    let read = &s.messages[3];
    assert_eq!(
        read.id.as_deref(),
        Some("read_file-1768010961326-7266fc4bc8133")
    );
    assert_eq!(read.name.as_deref(), Some("read_file"));
    assert_eq!(read.text, "[read_file] test-gemini.txt\nhello from gemini");
    assert!(!read.is_error);
    assert!(s.messages[4]
        .text
        .starts_with("[write_file] test-gemini.txt\nSuccessfully overwrote"));
    assert_eq!(s.consumed, testdata(REAL_SHORT).len());
}

#[test]
fn real_chat_never_stores_thoughts() {
    for name in [REAL_SHORT, REAL_LONG] {
        let text = all_text(&parsed(&testdata(name)));
        for thought in [
            "Appending Text Strategically",
            "I'm currently focused on determining the content",
            "Considering Color Documentation Format",
            "Reviewing File Creation",
        ] {
            assert!(!text.contains(thought), "{name}: {thought}");
        }
        // Nor the tool's long description, token counts or model.
        assert!(!text.contains("Reads and returns the content"), "{name}");
        assert!(!text.contains("gemini-2.5-flash"), "{name}");
    }
}

#[test]
fn real_chat_unwraps_shell_output_and_skips_info_notices() {
    let s = parsed(&testdata(REAL_LONG));
    assert!(s.problems.is_empty(), "{:?}", s.problems);
    let text = all_text(&s);
    assert!(
        !text.contains("update available"),
        "info notices are UI chrome"
    );
    let ls = s
        .messages
        .iter()
        .find(|m| m.text.starts_with("[exec] ls -l docs/blue.md"))
        .expect("the ls call");
    assert_eq!(
        ls.text,
        "[exec] ls -l docs/blue.md\n-rw-r--r--@ 1 peytonmontei  staff  309 Jan 15 12:51 docs/blue.md"
    );
    assert!(
        !text.contains("Process Group PGID"),
        "the shell frame is dropped"
    );
    let rm = s
        .messages
        .iter()
        .find(|m| m.text.starts_with("[exec] rm docs/blue.md"))
        .expect("the rm call");
    assert_eq!(rm.text, "[exec] rm docs/blue.md", "(empty) output");
    let users = s.messages.iter().filter(|m| m.role == Role::User).count();
    assert_eq!(users, 1, "{:#?}", s.messages);
}

/// A JSON document cut short (a copy taken mid-write, a disk that filled)
/// is an error naming where it stops; nothing of it is returned.
#[test]
fn a_truncated_document_is_an_error_naming_line_and_column() {
    let whole = testdata(REAL_SHORT);
    for cut in [1500, whole.len() - 3, 1] {
        let err = parse(&whole[..cut], "stem", &Options::default()).unwrap_err();
        assert!(err.line >= 1, "{err:?}");
        assert!(
            err.message.starts_with(&format!(
                "cannot parse the chat at line {}, column ",
                err.line
            )),
            "{err:?}"
        );
        assert!(err.message.contains("EOF while parsing"), "{err:?}");
    }
    let err = parse(b"\"a string\"", "stem", &Options::default()).unwrap_err();
    assert!(err.message.contains("invalid type"), "{err:?}");
    for other in [&b"{\n  \"foo\": 1\n}"[..], b"[1, 2]"] {
        let err = parse(other, "stem", &Options::default()).unwrap_err();
        assert!(err.message.contains("not a Gemini CLI chat"), "{err:?}");
    }
    // A log line of another shape is a problem of that line.
    let s = parsed(b"{\"foo\": 1}\n");
    assert!(s.messages.is_empty());
    assert!(s.problems[0]
        .message
        .starts_with("not a Gemini CLI chat record"));
}

#[test]
fn a_log_is_replayed_as_gemini_cli_replays_it() {
    let s = parsed(&testdata(LOG));
    assert!(s.problems.is_empty(), "{:?}", s.problems);
    assert_eq!(s.meta.id, "3f2a9c1e-7d41-4b8e-9c0a-5e6f7a8b9c0d");
    assert_eq!(
        s.meta.title.as_deref(),
        Some("Fix the fjord importer timeout on large CSV files"),
        "the $set summary is the title"
    );
    use Role::*;
    assert_eq!(
        roles(&s),
        [User, Assistant, Tool, Assistant, Tool, System],
        "{:#?}",
        s.messages
    );
    let text = all_text(&s);
    // The re-appended g-1 replaced its first copy, in place.
    assert_eq!(s.messages[1].id.as_deref(), Some("g-1"));
    assert_eq!(s.messages[1].text, "Let me run the importer tests first.");
    // Rewound: g-2 is gone.
    assert!(!text.contains("delete the whole data folder"), "{text}");
    // Thoughts, thought parts, injected context and commands are not there.
    for never in [
        "walrus",
        "narwhals",
        "session_context",
        "project memory says",
        "/memory add",
        "pelican",
    ] {
        assert!(!text.contains(never), "{never}: {text}");
    }
    let shell = &s.messages[2];
    assert!(shell.is_error, "exit code 101");
    assert_eq!(
        shell.text,
        "[exec] cargo test -p fjord importer\ntest importer::large_csv ... FAILED\nthread panicked: read timed out after 30s in BufReader::fill_buf"
    );
    assert_eq!(
        s.messages[4].text,
        "[replace] /work/fjord/src/importer.rs\nSuccessfully modified file: /work/fjord/src/importer.rs (1 replacements)."
    );
    assert!(s.messages[5].is_error && s.messages[5].text.contains("Quota exceeded"));
    assert_eq!(s.consumed, testdata(LOG).len());
}

fn log(lines: &[&str]) -> Vec<u8> {
    let mut out = lines.join("\n").into_bytes();
    out.push(b'\n');
    out
}

const META: &str = r#"{"sessionId":"s-1","projectHash":"h","startTime":"2026-05-02T09:00:00Z","lastUpdated":"2026-05-02T09:00:00Z"}"#;

fn user(id: &str, text: &str) -> String {
    serde_json::json!({"id": id, "timestamp": "2026-05-02T09:01:00Z", "type": "user", "content": [{"text": text}]}).to_string()
}

/// Regression (issue 35: after Gemini CLI compressed a chat, its `$set`
/// of the summary and the kept turns took every earlier turn out of the
/// index): the turns a compression replaces stay, before its list; a
/// turn it keeps is not doubled.
#[test]
fn set_messages_keeps_what_it_replaces_and_an_unknown_rewind_clears_all() {
    let compressed = serde_json::json!({"$set": {"messages": [
        {"id": "c-1", "type": "user", "content": "summary of the earlier turns"},
        {"id": "u-2", "type": "user", "content": [{"text": "second"}]}
    ]}})
    .to_string();
    let s = parsed(&log(&[
        META,
        &user("u-1", "first"),
        &user("u-2", "second"),
        &compressed,
        &user("u-3", "third"),
    ]));
    let texts: Vec<&str> = s.messages.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(
        texts,
        ["first", "summary of the earlier turns", "second", "third"]
    );
    let s = parsed(&log(&[
        META,
        &user("u-1", "first"),
        r#"{"$rewindTo":"nope"}"#,
        &user("u-3", "third"),
    ]));
    let texts: Vec<&str> = s.messages.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(texts, ["third"]);
    // A resumed session renamed by $set takes the new id.
    let s = parsed(&log(&[
        META,
        r#"{"$set":{"sessionId":"s-2"}}"#,
        &user("u-1", "x"),
    ]));
    assert_eq!(s.meta.id, "s-2");
}

#[test]
fn a_bad_line_is_a_problem_and_an_unfinished_last_line_waits() {
    let good = user("u-1", "keep me");
    let mut input = log(&[META, "{not json", r#"{"$set": 3}"#, r#"{"x": 1}"#, &good]);
    let complete = input.len();
    input.extend_from_slice(br#"{"id":"u-2","type":"user","content":"half"#);
    let s = parsed(&input);
    let lines: Vec<usize> = s.problems.iter().map(|p| p.line).collect();
    assert_eq!(lines, [2, 3, 4, 6], "{:?}", s.problems);
    assert!(
        s.problems[3].message.contains("truncated last line"),
        "{:?}",
        s.problems
    );
    assert_eq!(s.consumed, complete);
    assert_eq!(s.messages.len(), 1);
    assert_eq!(s.messages[0].text, "keep me");
}

#[test]
fn typed_text_is_preferred_and_tool_results_in_user_turns_skipped() {
    let typed = serde_json::json!({"id": "u-1", "type": "user",
        "content": [{"text": "explain @src/big.rs"}, {"text": "--- Content from referenced files ---\nfn huge() {}"}],
        "displayContent": [{"text": "explain @src/big.rs"}]})
    .to_string();
    let response = serde_json::json!({"id": "u-2", "type": "user",
        "content": [{"functionResponse": {"id": "c", "name": "read_file", "response": {"output": "tool text"}}}]})
    .to_string();
    let s = parsed(&log(&[
        META,
        &typed,
        &response,
        &user("u-3", "/home/me/app fails to start"),
    ]));
    let texts: Vec<&str> = s.messages.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(
        texts,
        ["explain @src/big.rs", "/home/me/app fails to start"]
    );
    for command in ["/chat save x", "/compress", "?", "  "] {
        assert!(!is_typed_prompt(command), "{command}");
    }
}

/// Gemini CLI records a prompt with a BeforeAgent hook's context appended
/// as a part: recall's own recalled memory must not come back as a prompt.
#[test]
fn injected_context_is_never_a_prompt() {
    let with_hook = serde_json::json!({"id": "u-1", "type": "user", "content": [
        {"text": "why is the pelican cache cold?"},
        {"text": "<hook_context>## Recalled context\n- the albatross queue</hook_context>"}
    ]})
    .to_string();
    let only_hook = serde_json::json!({"id": "u-2", "type": "user",
        "content": [{"text": "<hook_context>the albatross queue</hook_context>"}]})
    .to_string();
    let inline = serde_json::json!({"id": "u-3", "type": "user",
        "content": "<session_context>albatross env</session_context>\nand the heron? <hook_context>albatross"})
    .to_string();
    let s = parsed(&log(&[META, &with_hook, &only_hook, &inline]));
    let texts: Vec<&str> = s.messages.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(texts, ["why is the pelican cache cold?", "and the heron?"]);
    assert!(!all_text(&s).contains("albatross"));
}

#[test]
fn tool_calls_without_output_errors_and_odd_shapes() {
    let gemini = serde_json::json!({"id": "g-1", "type": "gemini", "content": {"text": "one part"},
        "toolCalls": [
            {"name": "web_fetch", "args": {"prompt": "summarise https://example.com"}, "status": "cancelled"},
            {"id": "t-2", "name": "read_file", "args": {"absolute_path": "/a/b.rs"},
             "result": [{"functionResponse": {"response": {"error": "File not found: /a/b.rs"}}}], "status": "error"},
            {"id": "t-3", "name": "list_directory", "args": {"dir_path": "src"}, "resultDisplay": "Listed 3 item(s)."},
            "not a call",
            {"id": "t-4", "name": "save_memory", "args": {}, "status": "error"}
        ]})
    .to_string();
    let s = parsed(&log(&[META, &gemini]));
    let texts: Vec<&str> = s.messages.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "one part",
            "[web_fetch] {\"prompt\":\"summarise https://example.com\"}\n[cancelled]",
            "[read_file] /a/b.rs\nFile not found: /a/b.rs",
            "[list_directory] src\nListed 3 item(s).",
            "[save_memory]\n[tool error]",
        ]
    );
    assert_eq!(
        s.messages[1].id.as_deref(),
        Some("g-1:1"),
        "an id from the message"
    );
    let errors: Vec<bool> = s.messages.iter().map(|m| m.is_error).collect();
    assert_eq!(errors, [false, false, true, false, true]);
}

#[test]
fn tool_output_is_capped_and_errors_keep_more() {
    let big = "x".repeat(50_000);
    let call = |status: &str| {
        serde_json::json!({"id": "g", "type": "gemini", "content": "", "toolCalls": [
            {"id": "t", "name": "read_file", "args": {"file_path": "a"}, "status": status,
             "result": [{"functionResponse": {"response": {"output": big}}}]}]})
        .to_string()
    };
    let opts = Options {
        tool_output_cap: 100,
    };
    let ok = parse(&log(&[META, &call("success")]), "s", &opts).unwrap();
    assert_eq!(
        ok.messages[0].text.chars().count(),
        "[read_file] a\n".len() + 101
    );
    let failed = parse(&log(&[META, &call("error")]), "s", &opts).unwrap();
    assert_eq!(
        failed.messages[0].text.chars().count(),
        "[read_file] a\n".len() + 401
    );
}

#[test]
fn sniff_tells_gemini_chats_from_other_transcripts() {
    assert!(sniff(&testdata(REAL_SHORT)));
    assert!(sniff(&testdata(LOG)));
    assert!(sniff(META.as_bytes()));
    assert!(sniff(
        br#"{"sessionId":"s","startTime":"2026-01-01T00:00:00Z","kind":"main"}"#
    ));
    let claude = r#"{"parentUuid":null,"sessionId":"4a2e","type":"user","message":{"role":"user","content":"hi"},"uuid":"7b3d","timestamp":"2024-05-01T10:00:00Z"}"#;
    let codex = r#"{"timestamp":"2024-05-01T10:00:00.000Z","type":"session_meta","payload":{"id":"0190","cwd":"/src"}}"#;
    for other in [
        claude,
        codex,
        "{\"role\":\"user\",\"content\":\"hi\"}",
        "sessionId projectHash",
        "",
    ] {
        assert!(!sniff(other.as_bytes()), "{other}");
    }
}

/// Random inputs built from chat fragments never panic the parser, and a
/// log never consumes more than it was given.
#[test]
fn nothing_panics_on_random_input() {
    const PIECES: [&str; 18] = [
        "{",
        "}",
        "[",
        "]",
        ",",
        "\n",
        "\"sessionId\":\"s\"",
        "\"id\":\"a\"",
        "\"type\":\"gemini\"",
        "\"type\":\"user\"",
        "\"content\":",
        "\"toolCalls\":",
        "\"$set\":",
        "\"$rewindTo\":\"a\"",
        "\"messages\":",
        "\"text\":\"t\"",
        "\"thought\":true",
        "\u{e9}",
    ];
    let mut rng = synth::Rng::with_seed(0x2545_f491_4f6c_dd1d);
    for _ in 0..3000 {
        let len = rng.usize(..48);
        let input: String = (0..len)
            .map(|_| PIECES[rng.usize(..PIECES.len())])
            .collect();
        if let Ok(s) = parse(input.as_bytes(), "f", &Options::default()) {
            assert!(s.consumed <= input.len());
        }
        let _ = sniff(input.as_bytes());
    }
}

/// Regression (issue 35): what recall's own `recall` tool returned
/// (Gemini CLI 0.61 names it `mcp_recall_recall`) is not indexed back as
/// the session's text; the call and other tools' output are kept.
#[test]
fn results_of_recalls_own_memory_tools_are_not_indexed() {
    let gemini = serde_json::json!({"id": "g-1", "type": "gemini", "content": "",
        "toolCalls": [
            {"id": "t-1", "name": "mcp_recall_recall", "args": {"query": "deploy"}, "status": "success",
             "result": [{"functionResponse": {"response": {"output": "## Recalled context\n- make ship-it"}}}]},
            {"id": "t-2", "name": "mcp_recall_remember", "args": {"text": "x"}, "status": "success",
             "result": [{"functionResponse": {"response": {"output": "Remembered x"}}}]}
        ]})
    .to_string();
    let s = parsed(&log(&[META, &gemini]));
    let texts: Vec<&str> = s.messages.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "[mcp_recall_recall] {\"query\":\"deploy\"}",
            "[mcp_recall_remember] {\"text\":\"x\"}\nRemembered x",
        ]
    );
}

/// A chat Gemini CLI 0.61 wrote (against a fake model, in this
/// repository's launcher probe): five turns over four resumes, compressed
/// twice. Every turn's answer stays, though the later `$set`s list only
/// the summary and the turns each kept.
#[test]
fn a_resumed_and_compressed_chat_keeps_every_turn() {
    let s = parsed(&testdata(
        "session-2026-11-28T03-50-resumed-compressed.jsonl",
    ));
    let text = all_text(&s);
    for word in [
        "ALPHAWORD",
        "BRAVOWORD",
        "CHARLIEWORD",
        "DELTAWORD",
        "E answer",
    ] {
        assert!(text.contains(word), "{word} lost: {text}");
    }
    assert!(!text.contains("Recalled context"), "{text}");
    assert!(s.problems.is_empty(), "{:?}", s.problems);
}

/// Issue 39: the commits a chat's shell calls made are what the session
/// did; a call of another tool, or one a rewind took back, gives nothing.
#[test]
fn shell_commits_are_what_the_chat_did() {
    let call = |id: &str, name: &str, command: &str| {
        serde_json::json!({"id": id, "timestamp": "2026-05-02T09:02:00Z", "type": "gemini", "content": "ok",
            "toolCalls": [{"id": format!("c-{id}"), "name": name, "args": {"command": command}, "status": "success"}]})
        .to_string()
    };
    let input = log(&[
        META,
        &user("u-1", "fix the importer"),
        &call(
            "g-1",
            "run_shell_command",
            "git commit -am \"fix: stream the importer's rows\"",
        ),
        &call("g-2", "write_todos", "git commit -m 'not a shell call'"),
        &call(
            "g-3",
            "run_shell_command",
            "git commit -m \"wip: taken back\"",
        ),
        r#"{"$rewindTo":"g-3"}"#,
    ]);
    let s = parsed(&input);
    assert_eq!(
        s.meta.did,
        ["fix: stream the importer's rows"],
        "{:?}",
        s.problems
    );
}
