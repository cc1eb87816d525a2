//! `recall mcp` as a child process, driven by a JSON-RPC client over its
//! stdio the way an agent launcher drives it: initialize, list the tools,
//! remember, recall, get, list, forget, read the resources, and every error
//! path (a missing argument, an unknown tool, a secret, bad values).

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use common::Env;
use serde_json::{json, Value};

struct Client {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Client {
    fn start(env: &Env) -> Client {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("recall"))
            .env_remove("RECALL_HOME")
            .env_remove("RECALL_PROJECT")
            .arg("--home")
            .arg(env.home())
            .args(["--project", &env.project, "mcp"])
            .current_dir(env.tmp.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
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
        writeln!(self.stdin, "{msg}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Send a request and read until its response (skipping notifications).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).unwrap();
            assert!(n > 0, "the server closed stdout while {method} was pending");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return v;
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
    assert!(common::record_files(&env.home()).is_empty());
    // A missing argument: a tool error naming it (the SDK's choice, so the
    // model can retry); an unknown tool: a JSON-RPC error.
    let (err, text) = c.call("remember", json!({}));
    assert!(err && text.contains("missing field `text`"), "{text}");
    let v = c.request("tools/call", json!({"name": "nosuch", "arguments": {}}));
    assert_eq!(v["error"]["code"], -32602, "{v}");
    // Bad values inside a call: tool errors.
    let (err, text) = c.call("recall", json!({"query": "x", "kinds": ["nonsense"]}));
    assert!(err && text.contains("unknown kind 'nonsense'"), "{text}");
    let (err, text) = c.call("get", json!({"id": "nosuch"}));
    assert!(
        err && text.contains("no record with id or key 'nosuch'"),
        "{text}"
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
    assert!(common::record_files(&env.home()).is_empty());
}
