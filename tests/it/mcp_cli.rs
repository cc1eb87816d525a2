//! `recall mcp` as a child process, driven by a JSON-RPC client over its
//! stdio the way an agent launcher drives it: initialize, list the tools,
//! remember, recall, get, list, forget, read the resources, and every error
//! path (a missing argument, an unknown tool, a secret, bad values, a line
//! that is not JSON). The last test drives it with the official Python MCP
//! SDK as a second client (`tests/mcp_python_client.py`).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use crate::common::Env;
use serde_json::{json, Value};

struct Client {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

/// `recall mcp` for `env`, stdin and stdout piped, stderr to `stderr`.
fn spawn_server(env: &Env, stderr: Stdio) -> std::process::Child {
    Command::new(assert_cmd::cargo::cargo_bin("recall"))
        .env_remove("RECALL_HOME")
        .env_remove("RECALL_PROJECT")
        .env_remove("RECALL_LOG")
        .env_remove("RUST_LOG")
        .arg("--home")
        .arg(env.home())
        .args(["--project", &env.project, "mcp"])
        .current_dir(env.tmp.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .unwrap()
}

impl Client {
    fn start(env: &Env) -> Client {
        Client::start_with(env, Stdio::null())
    }

    /// [`Client::start`] with the server's stderr going to `stderr`; a
    /// piped one is dropped at once, closing the server's stderr.
    fn start_with(env: &Env, stderr: Stdio) -> Client {
        let mut child = spawn_server(env, stderr);
        drop(child.stderr.take());
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut c = Client {
            child,
            stdin,
            stdout,
            next: 1,
        };
        let init = c.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "recall-test", "version": "1"}}),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "recall", "{init}");
        assert!(
            init["result"]["capabilities"]["tools"].is_object(),
            "{init}"
        );
        c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        c
    }

    fn send(&mut self, msg: Value) {
        self.send_raw(msg.to_string().as_bytes());
    }

    /// Write one line as is: the bytes and a newline.
    fn send_raw(&mut self, line: &[u8]) {
        self.stdin.write_all(line).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next message the server writes.
    fn read(&mut self) -> Value {
        let mut line = String::new();
        let n = self.stdout.read_line(&mut line).unwrap();
        assert!(n > 0, "the server closed stdout");
        serde_json::from_str(&line).unwrap()
    }

    /// Send a request and read until its response (skipping notifications).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let v = self.read();
            if v["id"] == id {
                return v;
            }
        }
    }

    /// Send a request and return every message up to and including its
    /// response.
    fn request_seeing(&mut self, method: &str, params: Value) -> Vec<Value> {
        let id = self.next;
        self.next += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let mut seen = Vec::new();
        loop {
            let v = self.read();
            let done = v["id"] == id;
            seen.push(v);
            if done {
                return seen;
            }
        }
    }

    /// Call a tool: (is_error, text).
    fn call(&mut self, tool: &str, args: Value) -> (bool, String) {
        let v = self.request("tools/call", json!({"name": tool, "arguments": args}));
        let r = &v["result"];
        assert!(r.is_object(), "{tool}: {v}");
        (
            r["isError"].as_bool().unwrap_or(false),
            r["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        )
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn tools_store_and_find_memory_through_a_real_client() {
    let env = Env::new();
    env.add(
        "procedures",
        "tests",
        "Run cargo nextest run before pushing.",
    );
    let mut c = Client::start(&env);

    let tools = c.request("tools/list", json!({}));
    let mut names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["forget", "get", "list", "recall", "remember"]);
    for t in tools["result"]["tools"].as_array().unwrap() {
        assert!(t["description"].as_str().unwrap().len() > 40, "{t}");
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
        // What the server refuses, the schema says: no other argument.
        assert_eq!(t["inputSchema"]["additionalProperties"], false, "{t}");
        // Launchers decide what runs without asking from these: Codex runs
        // a read-only tool (or a closed-world, non-destructive one) in
        // `codex exec` with no approval configured.
        let a = &t["annotations"];
        let reads = matches!(t["name"].as_str(), Some("recall" | "get" | "list"));
        assert_eq!(a["readOnlyHint"].as_bool(), Some(reads), "{t}");
        assert_eq!(a["openWorldHint"].as_bool(), Some(false), "{t}");
        if t["name"] == "forget" {
            assert_eq!(a["destructiveHint"].as_bool(), Some(true), "{t}");
        }
    }

    let (err, text) = c.call(
        "remember",
        json!({"text": "We deploy only from the release branch, never from main."}),
    );
    assert!(!err, "{text}");
    assert!(
        text.starts_with("Remembered agent:we-deploy-only"),
        "{text}"
    );
    assert!(text.contains("decisions, project scope"), "{text}");

    // The new record is found at once, by the server and by the CLI.
    let (err, text) = c.call(
        "recall",
        json!({"query": "which branch do we deploy from?"}),
    );
    assert!(!err, "{text}");
    assert!(text.contains("release branch"), "{text}");
    let cli = env.run(&[
        "record",
        "get",
        "agent:we-deploy-only-from-the-release-branch-never-from-main",
    ]);
    assert!(cli.contains("source: agent"), "{cli}");

    let (_, listed) = c.call("list", json!({"category": "procedures"}));
    assert!(listed.contains("cargo nextest run"), "{listed}");
    let (_, got) = c.call("get", json!({"id": "tests"}));
    assert!(
        got.starts_with("---\n") && got.contains("cargo nextest"),
        "{got}"
    );

    // Forget archives: gone from recall, still on disk.
    let (err, text) = c.call(
        "forget",
        json!({"id": "agent:we-deploy-only-from-the-release-branch-never-from-main"}),
    );
    assert!(!err && text.starts_with("Forgot"), "{text}");
    // Regression (review, stop 62): what brings it back named only the
    // command line, which an agent on MCP alone cannot run.
    assert!(text.contains("remember with the key"), "{text}");
    let (_, text) = c.call(
        "recall",
        json!({"query": "which branch do we deploy from?"}),
    );
    assert!(!text.contains("release branch"), "{text}");
    let cli = env.run(&[
        "record",
        "get",
        "agent:we-deploy-only-from-the-release-branch-never-from-main",
    ]);
    assert!(cli.contains("status: archived"), "{cli}");

    // Resources.
    let res = c.request("resources/list", json!({}));
    assert_eq!(
        res["result"]["resources"][0]["uri"], "memory://summary",
        "{res}"
    );
    let summary = c.request("resources/read", json!({"uri": "memory://summary"}));
    let text = summary["result"]["contents"][0]["text"].as_str().unwrap();
    assert!(text.contains("cargo nextest"), "{summary}");
    let rec = c.request("resources/read", json!({"uri": "memory://records/tests"}));
    assert!(rec["result"]["contents"][0]["text"]
        .as_str()
        .unwrap()
        .contains("nextest"));
}

#[test]
fn errors_are_tool_errors_or_json_rpc_errors_never_a_crash() {
    let env = Env::new();
    let mut c = Client::start(&env);
    // A secret: a tool error the model can act on; nothing stored.
    let token = format!("ghp_{}", "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5");
    let (err, text) = c.call(
        "remember",
        json!({"text": format!("the CI token is {token}")}),
    );
    assert!(err, "{text}");
    assert!(text.contains("secret (github-token"), "{text}");
    assert!(text.contains("call remember again"), "{text}");
    assert!(!text.contains("--redact"), "{text}");
    assert!(crate::common::record_files(&env.home()).is_empty());
    // A missing argument: a tool error naming it (the SDK's choice, so the
    // model can retry); an unknown tool: a JSON-RPC error.
    let (err, text) = c.call("remember", json!({}));
    assert!(err && text.contains("missing field `text`"), "{text}");
    // Regression: an argument the tool does not take was ignored, so a
    // misspelt `scope` searched both scopes and said nothing.
    let (err, text) = c.call("recall", json!({"query": "x", "scopes": "user"}));
    assert!(err && text.contains("unknown field `scopes`"), "{text}");
    assert!(text.contains("`scope`"), "{text}");
    let v = c.request("tools/call", json!({"name": "nosuch", "arguments": {}}));
    assert_eq!(v["error"]["code"], -32602, "{v}");
    // Regression: params rmcp cannot read got -32601 "tools/call", as if
    // the method did not exist; they get -32602 saying what to send.
    let v = c.request("tools/call", json!({"name": "list", "arguments": "x"}));
    assert_eq!(v["error"]["code"], -32602, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("arguments must be an object"),
        "{v}"
    );
    // Regression: a message with an id and no method got -32600 without
    // its id, so the client could not tell which request failed.
    c.send(json!({"jsonrpc": "2.0", "id": "lost"}));
    let v = loop {
        let v = c.read();
        if v.get("id").is_some() {
            break v;
        }
    };
    assert_eq!(v["id"], "lost", "{v}");
    assert_eq!(v["error"]["code"], -32600, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no method"),
        "{v}"
    );
    let v = c.request("resources/read", json!({}));
    assert_eq!(v["error"]["code"], -32602, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("memory://summary"),
        "{v}"
    );
    // Bad values inside a call: tool errors.
    let (err, text) = c.call("recall", json!({"query": "x", "kinds": ["nonsense"]}));
    assert!(err && text.contains("unknown kind 'nonsense'"), "{text}");
    let (err, text) = c.call("get", json!({"id": "nosuch"}));
    assert!(
        err && text.contains("no record with id or key 'nosuch'"),
        "{text}"
    );
    // Told what this server offers, not a CLI command the model cannot run.
    assert!(
        text.contains("the list tool") && !text.contains("recall record"),
        "{text}"
    );
    // Regression (review, stop 62): the record resource's error named the
    // command line where the get tool names the list tool.
    let v = c.request(
        "resources/read",
        json!({"uri": "memory://records/no-such-record"}),
    );
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("the list tool") && !msg.contains("recall record"),
        "{v}"
    );
    let v = c.request("resources/read", json!({"uri": "memory://nope"}));
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown resource"),
        "{v}"
    );
    // And the server still answers.
    let (err, _) = c.call("list", json!({}));
    assert!(!err);
}

/// Regression (issue #26: keys were built from text before redaction). A
/// key that holds a secret is refused like text that holds one, and a key
/// built from text never holds one: nothing is stored either way.
#[test]
fn r26_remember_refuses_a_key_holding_a_secret() {
    let env = Env::new();
    let mut c = Client::start(&env);
    let token = format!("SK{}", "3f9a0c7e1b5d28463f9a0c7e1b5d2846");
    let (err, text) = c.call(
        "remember",
        json!({"text": "Calls go through the Twilio API.", "key": format!("twilio {token}")}),
    );
    assert!(err, "{text}");
    assert!(text.contains("secret (twilio-key at key"), "{text}");
    assert!(!text.contains(&token), "{text}");
    let (err, text) = c.call(
        "remember",
        json!({"text": format!("Calls use the Twilio key {token}.")}),
    );
    assert!(err && text.contains("secret (twilio-key at text"), "{text}");
    assert!(crate::common::record_files(&env.home()).is_empty());
}

/// Regression (review, stop 62): a secret in a record file written by
/// hand is redacted in the index, lists and queries, but `get` and the
/// record's resource gave it to the agent in clear.
#[test]
fn r_get_and_the_resource_redact_a_hand_written_secret() {
    let env = env_with_three_procedures();
    let token = crate::common::hand_written_secret(&env);
    let mut c = Client::start(&env);
    let (err, text) = c.call("get", json!({"id": "handsecret"}));
    assert!(!err, "{text}");
    assert!(
        !text.contains(&token) && text.contains("[REDACTED"),
        "{text}"
    );
    let rec = c.request(
        "resources/read",
        json!({"uri": "memory://records/handsecret"}),
    );
    assert!(!rec.to_string().contains(&token), "{rec}");
    assert!(rec.to_string().contains("[REDACTED"), "{rec}");
}

/// Three procedures that all answer "before pushing".
fn env_with_three_procedures() -> Env {
    let env = Env::new();
    env.add("procedures", "tests", "Run cargo nextest before pushing.");
    env.add("procedures", "lint", "Run cargo clippy before pushing.");
    env.add("procedures", "fmt", "Run cargo fmt before pushing.");
    env
}

/// Regression (issue 25: the MCP Inspector CLI sends `limit=2` as `"2"`,
/// and such calls failed with "invalid type: string"). A number sent as a
/// string of digits and a list sent as one string are taken as meant, and
/// the tools' schemas say so.
#[test]
fn r25_numbers_and_lists_sent_as_strings_are_accepted() {
    let env = env_with_three_procedures();
    let mut c = Client::start(&env);

    let (err, text) = c.call("list", json!({"limit": "2"}));
    assert!(!err, "{text}");
    assert_eq!(text.lines().count(), 2, "{text}");
    let (err, text) = c.call("recall", json!({"query": "before pushing", "limit": "1"}));
    assert!(!err, "{text}");
    assert_eq!(text.matches("before pushing").count(), 1, "{text}");

    // One kind, several kinds with commas, or a JSON list in a string.
    for kinds in [
        "record",
        "session,record",
        "[\"record\"]",
        " record , ticket ",
    ] {
        let (err, text) = c.call("recall", json!({"query": "cargo nextest", "kinds": kinds}));
        assert!(!err && text.contains("nextest"), "{kinds}: {text}");
    }
    let (err, text) = c.call(
        "recall",
        json!({"query": "cargo nextest", "kinds": "session"}),
    );
    assert!(!err && text.starts_with("No memory matched"), "{text}");

    let (err, text) = c.call(
        "remember",
        json!({"text": "Releases are tagged by the release manager.", "importance": "80"}),
    );
    assert!(!err, "{text}");
    let cli = env.run(&[
        "record",
        "get",
        "agent:releases-are-tagged-by-the-release-manager",
    ]);
    assert!(cli.contains("importance: 80"), "{cli}");

    // The schemas are honest about it.
    let tools = c.request("tools/list", json!({}));
    let schema = |tool: &str, field: &str| -> Value {
        tools["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == tool)
            .unwrap()["inputSchema"]["properties"][field]
            .clone()
    };
    for (tool, field, kinds) in [
        ("recall", "limit", ["integer", "string"]),
        ("list", "limit", ["integer", "string"]),
        ("remember", "importance", ["integer", "string"]),
        ("recall", "kinds", ["array", "string"]),
    ] {
        let s = schema(tool, field);
        let types = s["type"].as_array().unwrap_or_else(|| panic!("{s}"));
        for k in kinds {
            assert!(types.contains(&json!(k)), "{tool}.{field}: {s}");
        }
    }
    let limit = schema("recall", "limit");
    assert_eq!(limit["minimum"], 1, "{limit}");
    assert_eq!(limit["maximum"], 200, "{limit}");
    assert_eq!(limit["pattern"], "^[0-9]+$", "{limit}");
}

/// Regression (issue 25). A value that is not a number, or out of range,
/// is refused with a message that names the field and the form to send.
#[test]
fn r25_a_number_that_is_not_one_is_refused_with_the_expected_form() {
    let env = Env::new();
    let mut c = Client::start(&env);
    for (tool, args, wanted) in [
        (
            "recall",
            json!({"query": "x", "limit": "two"}),
            "limit must be a whole number from 1 to 200",
        ),
        (
            "recall",
            json!({"query": "x", "limit": -3}),
            "limit must be a whole number from 1 to 200",
        ),
        (
            "recall",
            json!({"query": "x", "limit": 2.5}),
            "limit must be a whole number from 1 to 200",
        ),
        (
            "recall",
            json!({"query": "x", "limit": 201}),
            "limit must be a whole number from 1 to 200",
        ),
        (
            "list",
            json!({"limit": "lots"}),
            "limit must be a whole number from 1 to 1000",
        ),
        (
            "remember",
            json!({"text": "x y z", "importance": "high"}),
            "importance must be a whole number from 0 to 100",
        ),
        (
            "remember",
            json!({"text": "x y z", "importance": 101}),
            "importance must be a whole number from 0 to 100",
        ),
        (
            "recall",
            json!({"query": "x", "kinds": 5}),
            "kinds must be a list of strings",
        ),
    ] {
        let (err, text) = c.call(tool, args.clone());
        assert!(err, "{args}: {text}");
        assert!(text.contains(wanted), "{args}: {text}");
        assert!(
            text.contains("as a number or a string") || text.contains("separated by commas"),
            "{args}: {text}"
        );
    }
    assert!(crate::common::record_files(&env.home()).is_empty());
}

/// Regression (issue 25: an empty query answered "No memory matched" and
/// `limit: 0` was quietly taken as 1). Both are errors that say what to
/// send.
#[test]
fn r25_an_empty_query_and_a_zero_limit_say_what_to_send() {
    let env = env_with_three_procedures();
    let mut c = Client::start(&env);
    for query in ["", "   ", "\n\t"] {
        let (err, text) = c.call("recall", json!({"query": query}));
        assert!(err, "{query:?}: {text}");
        assert!(
            text.contains("the query is empty: send what to look for"),
            "{text}"
        );
    }
    let (err, text) = c.call("recall", json!({"query": "before pushing", "limit": 0}));
    assert!(
        err && text.contains("limit must be a whole number from 1 to 200"),
        "{text}"
    );
    let (err, text) = c.call("list", json!({"limit": "0"}));
    assert!(
        err && text.contains("limit must be a whole number from 1 to 1000"),
        "{text}"
    );
}

/// Regression (issue 25: "tool not found" did not say which tool). The
/// error names the tool asked for and the tools there are.
#[test]
fn r25_tool_not_found_names_the_tool() {
    let env = Env::new();
    let mut c = Client::start(&env);
    let v = c.request(
        "tools/call",
        json!({"name": "serach", "arguments": {"query": "x"}}),
    );
    assert_eq!(v["error"]["code"], -32602, "{v}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains("'serach'"), "{v}");
    assert!(
        message.contains("forget, get, list, recall, remember"),
        "{v}"
    );
}

/// Regression (issue 25: `memory://records/package%20manager` looked for a
/// record whose key was `package%20manager`). A record URI is
/// percent-decoded.
#[test]
fn r25_a_record_uri_is_percent_decoded() {
    let env = Env::new();
    env.add(
        "decisions",
        "package manager",
        "We use pnpm, never npm or yarn.",
    );
    let mut c = Client::start(&env);
    let uri = "memory://records/package%20manager";
    let v = c.request("resources/read", json!({"uri": uri}));
    let content = &v["result"]["contents"][0];
    assert!(
        content["text"]
            .as_str()
            .unwrap_or_default()
            .contains("pnpm"),
        "{v}"
    );
    assert_eq!(content["uri"], uri, "{v}");
    // The plain spelling still works; a broken escape is a clear error.
    let v = c.request(
        "resources/read",
        json!({"uri": "memory://records/package manager"}),
    );
    assert!(
        v["result"]["contents"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("pnpm"),
        "{v}"
    );
    let v = c.request("resources/read", json!({"uri": "memory://records/%FF"}));
    let message = v["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("not UTF-8"), "{v}");
}

/// Regression (issue 25: the list said `text/markdown`, a read said
/// nothing). A resource's mimeType is the same in the list (or its
/// template) and on read.
#[test]
fn r25_a_resource_has_the_same_mime_type_listed_and_read() {
    let env = Env::new();
    env.add("decisions", "pnpm", "We use pnpm, never npm or yarn.");
    let mut c = Client::start(&env);
    let listed = c.request("resources/list", json!({}));
    let summary = &listed["result"]["resources"][0];
    let read = c.request("resources/read", json!({"uri": summary["uri"]}));
    assert_eq!(summary["mimeType"], "text/markdown", "{listed}");
    assert_eq!(
        read["result"]["contents"][0]["mimeType"], summary["mimeType"],
        "{read}"
    );

    let templates = c.request("resources/templates/list", json!({}));
    let record = &templates["result"]["resourceTemplates"][0];
    assert_eq!(
        record["uriTemplate"], "memory://records/{id}",
        "{templates}"
    );
    assert_eq!(record["mimeType"], "text/markdown", "{templates}");
    let read = c.request("resources/read", json!({"uri": "memory://records/pnpm"}));
    assert_eq!(
        read["result"]["contents"][0]["mimeType"], record["mimeType"],
        "{read}"
    );
}

/// Regression (issue 25: a line that is not JSON got no answer at all, so
/// a client waited forever). It gets a JSON-RPC parse error (-32700) with
/// no id, and the server goes on answering.
#[test]
fn r25_a_line_that_is_not_json_gets_a_parse_error() {
    let env = Env::new();
    let mut c = Client::start(&env);
    let bad: [&[u8]; 3] = [
        b"this is not json",
        b"{\"jsonrpc\": \"2.0\", \"id\": 99, \"method\": \"ping\"",
        b"\xff\xfe{}",
    ];
    for line in bad {
        c.send_raw(line);
        // The answer to the bad line comes before the ping's, or at the
        // latest before a second ping's: never wait for it unbounded.
        let mut seen = c.request_seeing("ping", json!({}));
        if !seen.iter().any(|v| v["error"]["code"] == -32700) {
            seen.extend(c.request_seeing("ping", json!({})));
        }
        let errors: Vec<_> = seen
            .iter()
            .filter(|v| v["error"]["code"] == -32700)
            .collect();
        let shown = String::from_utf8_lossy(line);
        assert_eq!(errors.len(), 1, "{shown}: {seen:?}");
        let e = errors[0];
        assert!(e["id"].is_null(), "{e}");
        let message = e["error"]["message"].as_str().unwrap();
        assert!(message.contains("not JSON"), "{e}");
        assert!(message.contains("one JSON-RPC message per line"), "{e}");
        assert!(seen.last().unwrap()["result"].is_object(), "{seen:?}");
    }
    let (err, _) = c.call("list", json!({}));
    assert!(!err);
}

/// Regression (issue 25, and issue 26 item 19). Forgetting a record that
/// is already archived says so and changes nothing.
#[test]
fn r25_forget_on_an_archived_record_says_it_was_already_archived() {
    let env = Env::new();
    env.add("decisions", "pnpm", "We use pnpm, never npm or yarn.");
    let mut c = Client::start(&env);
    let (err, text) = c.call("forget", json!({"id": "pnpm"}));
    assert!(!err && text.starts_with("Forgot pnpm"), "{text}");
    let before = crate::common::snapshot(&env.home().join("projects"));
    let (err, text) = c.call("forget", json!({"id": "pnpm"}));
    assert!(!err, "{text}");
    assert!(text.starts_with("pnpm was already archived"), "{text}");
    assert!(text.contains("nothing changed"), "{text}");
    assert_eq!(
        crate::common::snapshot(&env.home().join("projects")),
        before
    );
}

/// The official Python MCP SDK (PyPI `mcp`) as a second client:
/// `tests/mcp_python_client.py` lists the tools and resources and calls
/// remember, recall, get and forget. Without the SDK this test says it
/// skipped, except in CI (`CI` or `RECALL_REQUIRE_SHARED` set), where
/// `.ci/run` installs it and a missing SDK is a failure.
#[test]
fn python_sdk_client_drives_the_server() {
    let python = std::env::var("RECALL_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let has_sdk = Command::new(&python)
        .args(["-c", "import mcp"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_sdk {
        let ci =
            std::env::var_os("CI").is_some() || std::env::var_os("RECALL_REQUIRE_SHARED").is_some();
        assert!(
            !ci,
            "`{python} -c 'import mcp'` failed: the Python MCP SDK is missing; .ci/run installs it (python3 -m pip install 'mcp>=1.26,<3'), or set RECALL_TEST_PYTHON to a Python that has it"
        );
        eprintln!(
            "skipped: the Python MCP SDK is not installed for {python} (python3 -m pip install 'mcp>=1.26,<3', or set RECALL_TEST_PYTHON)"
        );
        return;
    }
    let env = Env::new();
    env.add("procedures", "tests", "Run cargo nextest before pushing.");
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_python_client.py");
    let out = Command::new(&python)
        .arg(script)
        .arg(assert_cmd::cargo::cargo_bin("recall"))
        .arg(env.home())
        .arg(&env.project)
        .current_dir(env.tmp.path())
        .env_remove("RECALL_HOME")
        .env_remove("RECALL_PROJECT")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the Python client failed:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("python mcp client: ok"),
        "{stdout}\n{stderr}"
    );
    // What it remembered is on disk, where the CLI finds it.
    let cli = env.run(&["record", "get", "python-client"]);
    assert!(cli.contains("status: archived"), "{cli}");
}

/// Regression (issue 37 item 8: `recall mcp` wrote a WARN line to stderr
/// for every bad request, 86 KB for 3,000 lines, and a client that never
/// read stderr stalled the server once the pipe was full): the default
/// log to a stderr that is not a terminal stops at 16 KiB, so 3,000 bad
/// bad requests are all answered while stderr is never read.
#[test]
fn r37_a_client_that_never_reads_stderr_does_not_stall_the_server() {
    use std::io::{BufRead, Write};
    let env = Env::new();
    let mut child = spawn_server(&env, Stdio::piped());
    let mut stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "recall-test", "version": "1"}}});
    let writer = std::thread::spawn(move || {
        writeln!(stdin, "{init}").unwrap();
        writeln!(
            stdin,
            "{}",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )
        .unwrap();
        // Each is answered with an error, which the SDK also logs.
        for i in 0..3000 {
            let bad = json!({"jsonrpc": "2.0", "id": 100 + i, "method": "resources/read",
                             "params": {"uri": format!("memory://nope/{i}")}});
            writeln!(stdin, "{bad}").unwrap();
        }
        writeln!(
            stdin,
            "{}",
            json!({"jsonrpc": "2.0", "id": 7, "method": "ping"})
        )
        .unwrap();
        stdin
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let mut answered = false;
    while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(line) if line.contains("\"id\":7") => {
                answered = true;
                break;
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    drop(writer.join());
    assert!(answered, "the server stalled on its own stderr");
}

/// Regression: with its stderr closed by the client, the server never
/// answered a request whose error rmcp logs first (an unknown tool, an
/// unknown resource): the log line's write failed, tracing reported that
/// with a panicking `eprintln!`, and the panic ended the handler. Every
/// request is answered; a watchdog turns a hang into a failure.
#[test]
fn a_closed_stderr_never_swallows_an_answer() {
    let env = Env::new();
    let mut c = Client::start_with(&env, Stdio::piped());
    let pid = c.child.id();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watch = done.clone();
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(60));
        if !watch.load(std::sync::atomic::Ordering::SeqCst) {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
    });
    let bad_tool = c.request("tools/call", json!({"name": "serach", "arguments": {}}));
    assert!(
        bad_tool["error"]["message"]
            .as_str()
            .unwrap()
            .contains("serach"),
        "{bad_tool}"
    );
    let bad_uri = c.request("resources/read", json!({"uri": "memory://nope"}));
    assert!(
        bad_uri["error"]["message"]
            .as_str()
            .unwrap()
            .contains("memory://nope"),
        "{bad_uri}"
    );
    let ping = c.request("ping", json!({}));
    assert!(ping["result"].is_object(), "{ping}");
    done.store(true, std::sync::atomic::Ordering::SeqCst);
}
