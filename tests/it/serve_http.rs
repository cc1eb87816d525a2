//! `recall serve` over real loopback HTTP: every endpoint, the envelope,
//! every error status, upsert, ordering, one truth with the CLI, the Host
//! check, the token, the body limit and shutdown.

use crate::common::server::Server;
use crate::common::Env;
use serde_json::{json, Value};

/// A server over a home whose project `alpha` exists (one CLI record).
fn setup() -> (Env, Server) {
    let env = Env::new();
    env.add("decisions", "use-pnpm", "We use pnpm, never npm.");
    let server = Server::start(&env, &[]);
    (env, server)
}

fn ok(v: &Value) -> &Value {
    assert_eq!(v["success"], true, "{v}");
    assert!(v.get("error").is_none(), "{v}");
    &v["data"]
}

fn err(v: &Value) -> String {
    assert_eq!(v["success"], false, "{v}");
    assert!(v.get("data").is_none(), "{v}");
    v["error"].as_str().unwrap().to_string()
}

fn keys(v: &Value) -> Vec<String> {
    ok(v)
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["key"].as_str().unwrap().to_string())
        .collect()
}

const MEM: &str = "/api/projects/alpha/memories";

#[test]
fn health_and_projects() {
    let (env, s) = setup();
    let (code, v) = s.call("GET", "/healthz", None);
    assert_eq!(code, 200);
    assert_eq!(ok(&v)["status"], "ok");
    let (code, v) = s.call("GET", "/api/projects", None);
    assert_eq!(code, 200);
    let p = &ok(&v)[0];
    assert_eq!(p["name"], "alpha");
    assert_eq!(p["records"], 1);
    // A project answers to its id as well as its name.
    let id = p["id"].as_str().unwrap();
    let (code, v) = s.call("GET", &format!("/api/projects/{id}/memories"), None);
    assert_eq!(code, 200);
    assert_eq!(keys(&v), ["use-pnpm"]);
    drop(env);
}

#[test]
fn create_then_upsert_by_key_writes_the_file_the_cli_reads() {
    let (env, s) = setup();
    let body = json!({"key": "db", "value": "Use SQLite for the index.", "importance": 70});
    let (code, v) = s.call("POST", MEM, Some(&body));
    assert_eq!(code, 201, "{v}");
    let m = ok(&v);
    assert_eq!(m["source"], "manual");
    assert_eq!(m["category"], "decisions");
    let path = m["path"].as_str().unwrap().to_string();
    assert!(std::fs::read_to_string(&path)
        .unwrap()
        .contains("Use SQLite for the index."));
    // The same key again updates the same record (200, same id and file).
    let body = json!({"key": "db", "value": "Use bundled SQLite.", "category": "principles"});
    let (code, v) = s.call("POST", MEM, Some(&body));
    assert_eq!(code, 200, "{v}");
    assert_eq!(ok(&v)["id"], m["id"]);
    assert_eq!(ok(&v)["category"], "principles");
    // The CLI sees it at once.
    let got = env.run(&["record", "get", "db", "--format", "json"]);
    assert!(got.contains("Use bundled SQLite."), "{got}");
    // And the API sees a CLI write at once.
    env.run(&["record", "update", "db", "--text", "Use SQLite 3.50."]);
    let (_, v) = s.call("GET", MEM, None);
    let db = ok(&v)
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["key"] == "db")
        .unwrap()
        .clone();
    assert_eq!(db["value"], "Use SQLite 3.50.");
}

#[test]
fn patch_pin_and_delete() {
    let (env, s) = setup();
    let (_, v) = s.call("POST", MEM, Some(&json!({"key": "k", "value": "first"})));
    let id = ok(&v)["id"].as_str().unwrap().to_string();
    let path = ok(&v)["path"].as_str().unwrap().to_string();
    let (code, v) = s.call(
        "PATCH",
        &format!("{MEM}/{id}"),
        Some(&json!({"value": "second", "importance": 90})),
    );
    assert_eq!(code, 200, "{v}");
    assert_eq!(ok(&v)["value"], "second");
    assert_eq!(ok(&v)["importance"], 90);
    assert!(std::fs::read_to_string(&path).unwrap().contains("second"));
    let (code, v) = s.call(
        "PATCH",
        &format!("{MEM}/k/pin"),
        Some(&json!({"pinned": true})),
    );
    assert_eq!(code, 200, "{v}");
    assert_eq!(ok(&v)["pinned"], true);
    assert!(std::fs::read_to_string(&path)
        .unwrap()
        .contains("pinned: true"));
    let (code, v) = s.call("DELETE", &format!("{MEM}/{id}"), None);
    assert_eq!(code, 200, "{v}");
    assert!(!std::path::Path::new(&path).exists());
    let out = env.cmd().args(["record", "get", "k"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn project_and_user_lists_have_their_orders() {
    let (env, s) = setup();
    // Each record is written by a server whose clock says one second
    // later than the one before (the index keeps whole seconds), all after
    // `use-pnpm`.
    let start = jiff::Timestamp::now() + jiff::SignedDuration::from_hours(1);
    for (i, (key, imp, pinned)) in [
        ("b", 50, false),
        ("a", 50, false),
        ("c", 90, false),
        ("z", 10, true),
    ]
    .into_iter()
    .enumerate()
    {
        let at = (start + jiff::SignedDuration::from_secs(i as i64)).to_string();
        let w = Server::start(&env, &["--at", &at]);
        let body = json!({"key": key, "value": format!("value {key}"), "importance": imp, "pinned": pinned});
        assert_eq!(w.call("POST", MEM, Some(&body)).0, 201);
        assert_eq!(w.call("POST", "/api/user/memories", Some(&body)).0, 201);
    }
    // Project: pinned, importance, most recently updated.
    assert_eq!(
        keys(&s.call("GET", MEM, None).1),
        ["z", "c", "a", "b", "use-pnpm"]
    );
    // User: pinned, importance, key.
    assert_eq!(
        keys(&s.call("GET", "/api/user/memories", None).1),
        ["z", "c", "a", "b"]
    );
}

#[test]
fn user_scope_endpoints() {
    let (_env, s) = setup();
    let body =
        json!({"key": "editor", "value": "I prefer vim keybindings.", "category": "preferences"});
    let (code, v) = s.call("POST", "/api/user/memories", Some(&body));
    assert_eq!(code, 201, "{v}");
    assert_eq!(ok(&v)["scope"], "user");
    let (code, v) = s.call(
        "PATCH",
        "/api/user/memories/editor/pin",
        Some(&json!({"pinned": true})),
    );
    assert_eq!(code, 200, "{v}");
    let (code, v) = s.call(
        "PATCH",
        "/api/user/memories/editor",
        Some(&json!({"value": "I prefer helix."})),
    );
    assert_eq!(code, 200, "{v}");
    let (code, _) = s.call("DELETE", "/api/user/memories/editor", None);
    assert_eq!(code, 200);
    assert_eq!(s.call("DELETE", "/api/user/memories/editor", None).0, 404);
}

#[test]
fn bad_writes_to_a_new_user_scope_leave_no_folder() {
    let (env, s) = setup();
    let user = env.home().join("user");
    assert!(!user.exists());
    let secret = format!("token ghp_{}", "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5");
    let bad = [
        json!({"key": "k", "value": "v", "category": "nonsense"}),
        json!({"key": "k", "value": "v", "importance": 101}),
        json!({"key": "k", "value": "v", "source": "robot"}),
        json!({"key": "", "value": "v"}),
        json!({"key": "k", "value": secret}),
    ];
    for body in bad {
        let (code, v) = s.call("POST", "/api/user/memories", Some(&body));
        assert_eq!(code, 400, "{body}: {v}");
        assert!(!user.exists(), "{body} created {}", user.display());
    }
    for (method, path, body) in [
        ("PATCH", "/api/user/memories/k", Some(json!({"value": "w"}))),
        (
            "PATCH",
            "/api/user/memories/k/pin",
            Some(json!({"pinned": true})),
        ),
        ("DELETE", "/api/user/memories/k", None),
    ] {
        let (code, v) = s.call(method, path, body.as_ref());
        assert_eq!(code, 404, "{method} {path}: {v}");
        assert!(!user.exists(), "{method} {path} created the user folder");
    }
    // A good write creates the scope.
    let good = json!({"key": "k", "value": "I prefer tabs."});
    assert_eq!(s.call("POST", "/api/user/memories", Some(&good)).0, 201);
    assert!(user.is_dir());
}

#[test]
fn recall_endpoint_in_every_format() {
    let (_env, s) = setup();
    s.call(
        "POST",
        MEM,
        Some(&json!({"key": "db", "value": "The index is SQLite FTS5 with bm25."})),
    );
    let (code, v) = s.call(
        "GET",
        "/api/projects/alpha/recall?q=sqlite+bm25&format=json&limit=3",
        None,
    );
    assert_eq!(code, 200, "{v}");
    let doc = ok(&v);
    assert_eq!(doc["version"], 2);
    assert_eq!(doc["hits"][0]["title"], "db");
    let (_, v) = s.call(
        "GET",
        "/api/projects/alpha/recall?q=sqlite+bm25&format=prompt",
        None,
    );
    assert!(
        ok(&v).as_str().unwrap().contains("## Recalled context"),
        "{v}"
    );
    let (_, v) = s.call(
        "GET",
        "/api/projects/alpha/recall?q=pnpm&format=snippets",
        None,
    );
    assert!(ok(&v).as_str().unwrap().contains("use-pnpm"), "{v}");
    let (code, v) = s.call(
        "GET",
        "/api/projects/alpha/recall?q=nothing+matches+xyzzy",
        None,
    );
    assert_eq!(code, 200);
    assert_eq!(ok(&v)["hits"].as_array().unwrap().len(), 0);
}

/// Issue 23 item 4: reads borrow pooled connections. `recall reindex
/// --full` moves a damaged index aside and builds a new one from the record
/// files; the server's next reads answer from the new index (the session
/// is gone until `recall index` runs again), not through a connection to
/// the old file.
#[test]
fn r23_a_read_after_reindex_full_sees_the_new_index() {
    let (env, s) = setup();
    env.index_transcript(
        "s.jsonl",
        &[r#"{"role":"user","content":"the heron queue drains slowly"}"#],
    );
    let hits = |q: &str| {
        let path = format!("/api/projects/alpha/recall?q={q}&format=json");
        let (code, v) = s.call("GET", &path, None);
        assert_eq!(code, 200, "{v}");
        ok(&v)["hits"].as_array().unwrap().len()
    };
    for _ in 0..2 {
        assert_eq!(hits("heron+queue"), 1);
    }
    let index = env.project_dir().join("index.db");
    let mut f = std::fs::OpenOptions::new().write(true).open(index).unwrap();
    std::io::Write::write_all(&mut f, b"not an index at all").unwrap();
    drop(f);
    env.run(&["reindex", "--full"]);
    for _ in 0..2 {
        assert_eq!(hits("heron+queue"), 0);
        assert_eq!(hits("pnpm"), 1);
    }
}

#[test]
fn bad_input_gets_400_with_what_to_fix() {
    let (_env, s) = setup();
    let cases: [(&str, &str, Value, &str); 7] = [
        (
            "POST",
            MEM,
            json!({"value": "no key"}),
            "missing field `key`",
        ),
        (
            "POST",
            MEM,
            json!({"key": "", "value": "v"}),
            "key is empty",
        ),
        (
            "POST",
            MEM,
            json!({"key": "k", "value": "v", "importance": 101}),
            "out of range 0-100",
        ),
        (
            "POST",
            MEM,
            json!({"key": "k", "value": "v", "category": "nope"}),
            "nope",
        ),
        (
            "POST",
            MEM,
            json!({"key": "k", "value": "v", "colour": "red"}),
            "unknown field `colour`",
        ),
        (
            "POST",
            MEM,
            json!({"key": "k", "value": "x".repeat(2001)}),
            "2000",
        ),
        (
            "POST",
            MEM,
            json!({"key": "k", "value": "ghp_0123456789abcdefghijklmnopqrstuvwxyz"}),
            "secret",
        ),
    ];
    for (m, p, body, want) in cases {
        let (code, v) = s.call(m, p, Some(&body));
        assert_eq!(code, 400, "{body}: {v}");
        let e = err(&v);
        assert!(e.contains(want), "{body}: {e}");
    }
    let (code, t) = s.raw("POST", MEM, Some("{not json".into()), "application/json");
    assert_eq!(code, 400);
    assert!(t.contains("invalid JSON body"), "{t}");
    // Regression (review, stop 57): an array body was refused with serde's
    // "expected struct Create with 7 elements", a name of ours.
    for body in ["[]", "[\"k\", \"v\"]", "\"text\""] {
        let (code, t) = s.raw("POST", MEM, Some(body.into()), "application/json");
        assert_eq!(code, 400, "{body}");
        assert!(
            t.contains("must be a JSON object") && !t.contains("struct"),
            "{body}: {t}"
        );
    }
    for q in [
        "/api/projects/alpha/recall",
        "/api/projects/alpha/recall?q=x&format=xml",
        "/api/projects/alpha/recall?q=x&limit=0",
    ] {
        let (code, v) = s.call("GET", q, None);
        assert_eq!(code, 400, "{q}");
        err(&v);
    }
    // No record file was written by any of them.
    let (_, v) = s.call("GET", MEM, None);
    assert_eq!(keys(&v), ["use-pnpm"]);
}

#[test]
fn unknown_project_record_and_route_get_404() {
    let (env, s) = setup();
    let (code, v) = s.call("GET", "/api/projects/nope/memories", None);
    assert_eq!(code, 404);
    assert!(err(&v).contains("no project 'nope'"));
    // Asking never creates the project.
    assert!(!env.home().join("projects").read_dir().unwrap().any(|e| {
        std::fs::read_to_string(e.unwrap().path().join("project.json"))
            .unwrap_or_default()
            .contains("\"nope\"")
    }));
    assert_eq!(
        s.call(
            "PATCH",
            &format!("{MEM}/missing"),
            Some(&json!({"value": "x"}))
        )
        .0,
        404
    );
    let (code, v) = s.call("DELETE", &format!("{MEM}/missing"), None);
    assert_eq!(code, 404);
    // Says how to list them over HTTP, not with a CLI command.
    let msg = err(&v);
    assert!(
        msg.contains("'missing'") && msg.contains("/memories") && !msg.contains("recall record"),
        "{msg}"
    );
    let (code, v) = s.call("GET", "/api/nothing", None);
    assert_eq!(code, 404);
    err(&v);
    let (code, t) = s.raw("PUT", MEM, Some("{}".into()), "application/json");
    assert_eq!(code, 405);
    assert!(t.contains("\"success\":false"), "{t}");
}

#[test]
fn generated_values_are_read_only_but_can_be_pinned_and_deleted() {
    let (_env, s) = setup();
    let body = json!({"key": "auto-1", "value": "Tests run with cargo nextest.", "source": "auto"});
    assert_eq!(s.call("POST", MEM, Some(&body)).0, 201);
    let (code, v) = s.call(
        "PATCH",
        &format!("{MEM}/auto-1"),
        Some(&json!({"value": "changed"})),
    );
    assert_eq!(code, 409, "{v}");
    assert!(err(&v).contains("read-only"), "{v}");
    let (code, _) = s.call(
        "POST",
        MEM,
        Some(&json!({"key": "auto-1", "value": "changed"})),
    );
    assert_eq!(code, 409);
    let (code, v) = s.call(
        "PATCH",
        &format!("{MEM}/auto-1/pin"),
        Some(&json!({"pinned": true})),
    );
    assert_eq!(code, 200, "{v}");
    assert_eq!(ok(&v)["source"], "auto");
    assert_eq!(ok(&v)["value"], "Tests run with cargo nextest.");
    assert_eq!(s.call("DELETE", &format!("{MEM}/auto-1"), None).0, 200);
}

#[test]
fn body_limit_and_content_type() {
    let (_env, s) = setup();
    let big = format!("{{\"key\":\"k\",\"value\":\"{}\"}}", "a".repeat(70 * 1024));
    let t = s.send_raw(
        "POST",
        MEM,
        &[("Content-Type", "application/json")],
        big.as_bytes(),
    );
    assert!(t.starts_with("HTTP/1.1 413"), "{t}");
    assert!(t.contains("\"success\":false"), "{t}");
    let (code, t) = s.raw(
        "POST",
        MEM,
        Some("key=k&value=v".into()),
        "application/x-www-form-urlencoded",
    );
    assert_eq!(code, 415, "{t}");
}

#[test]
fn a_foreign_host_is_refused() {
    let (_env, s) = setup();
    let port = s.port().to_string();
    let good = s.get_with_headers("/healthz", &[("Host", &format!("localhost:{port}"))]);
    assert!(good.starts_with("HTTP/1.1 200"), "{good}");
    for host in ["evil.example", "attacker.test:80", "127.0.0.1:1"] {
        let r = s.get_with_headers("/api/projects", &[("Host", host)]);
        assert!(r.starts_with("HTTP/1.1 421"), "{host}: {r}");
        assert!(r.contains("DNS rebinding"), "{r}");
    }
    // CORS stays off.
    let r = s.get_with_headers(
        "/api/projects",
        &[
            ("Host", &format!("127.0.0.1:{port}")),
            ("Origin", "http://evil.example"),
        ],
    );
    assert!(
        !r.to_ascii_lowercase()
            .contains("access-control-allow-origin"),
        "{r}"
    );
}

#[test]
fn the_token_guards_every_api_call() {
    let env = Env::new();
    env.add("decisions", "k", "v");
    let token = "0123456789abcdef0123456789abcdef";
    let s = Server::start(&env, &["--token", token]);
    assert_eq!(s.call("GET", "/api/projects", None).0, 200);
    let port = s.port().to_string();
    let host = format!("127.0.0.1:{port}");
    let none = s.get_with_headers("/api/projects", &[("Host", &host)]);
    assert!(none.starts_with("HTTP/1.1 401"), "{none}");
    let wrong = s.get_with_headers(
        "/api/projects",
        &[("Host", &host), ("Authorization", "Bearer nope")],
    );
    assert!(wrong.starts_with("HTTP/1.1 401"), "{wrong}");
    // The scheme name is case-insensitive (RFC 9110 11.1).
    let lower = format!("bearer {token}");
    let fine = s.get_with_headers(
        "/api/projects",
        &[("Host", &host), ("Authorization", &lower)],
    );
    assert!(fine.starts_with("HTTP/1.1 200"), "{fine}");
    // The panel itself loads without it (it asks for the token).
    let page = s.get_with_headers("/", &[("Host", &host)]);
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
}

#[test]
fn a_public_address_without_a_token_is_refused() {
    let env = Env::new();
    let out = env
        .cmd()
        .env_remove("RECALL_TOKEN")
        .args(["serve", "--addr", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("--token"), "{e}");
}

/// Regression (review, stop 59): `--addr localhost:7077` was refused as
/// "invalid socket address syntax", with no word of what to give.
#[test]
fn r_a_host_name_for_addr_is_refused_with_the_address_meant() {
    let env = Env::new();
    let out = env
        .cmd()
        .args(["serve", "--addr", "localhost:7077"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("such as 127.0.0.1:7077"), "{e}");
}

#[test]
fn sigterm_stops_cleanly() {
    let (_env, s) = setup();
    assert_eq!(s.call("GET", "/healthz", None).0, 200);
    let (code, stderr) = s.stop();
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn the_panel_is_served_with_a_strict_policy() {
    let (_env, s) = setup();
    let port = s.port().to_string();
    let host = format!("127.0.0.1:{port}");
    let page = s.get_with_headers("/", &[("Host", &host)]);
    assert!(
        page.contains("content-security-policy: default-src 'none'"),
        "{page}"
    );
    assert!(page.contains("<script src=\"/panel.js\""), "{page}");
    let js = s.get_with_headers("/panel.js", &[("Host", &host)]);
    assert!(js.contains("text/javascript"), "{js}");
    assert!(
        !js.contains("innerHTML"),
        "the panel must set text, not HTML"
    );
}

/// Review finding: `%2Fetc` as a project name reached `/etc/project.json`.
#[test]
fn r_a_project_name_with_a_slash_is_refused() {
    let (_env, s) = setup();
    for p in ["%2Fetc", "..%2F..%2Fetc", "a%2Fb"] {
        let (code, v) = s.call("GET", &format!("/api/projects/{p}/memories"), None);
        assert_eq!(code, 400, "{p}: {v}");
        assert!(
            err(&v).contains("cannot name a project: it contains a slash"),
            "{v}"
        );
    }
}

/// Review finding: a wrong method on the panel's routes got an empty 405,
/// and `/healthz` (open without a token) told anyone the home's path.
#[test]
fn r_every_answer_is_an_envelope_and_health_says_nothing_private() {
    let (env, s) = setup();
    let (code, t) = s.raw("POST", "/", Some("{}".into()), "application/json");
    assert_eq!(code, 405);
    assert!(t.contains("\"success\":false"), "{t}");
    let (_, v) = s.call("GET", "/healthz", None);
    assert!(!v.to_string().contains(env.home().to_str().unwrap()), "{v}");
}

/// Review finding: a path segment that is not UTF-8 got a plain-text 400.
#[test]
fn r_a_path_that_is_not_utf8_gets_an_envelope() {
    let (_env, s) = setup();
    for (method, path, body) in [
        ("GET", "/api/projects/%FF/memories", None),
        ("DELETE", "/api/user/memories/%C3%28", None),
        (
            "PATCH",
            "/api/projects/alpha/memories/%FF/pin",
            Some(r#"{"pinned":true}"#.to_string()),
        ),
    ] {
        let (code, t) = s.raw(method, path, body, "application/json");
        assert_eq!(code, 400, "{path}: {t}");
        let v: Value = serde_json::from_str(&t).unwrap_or_else(|e| panic!("{path}: {e}: {t}"));
        assert!(err(&v).contains("UTF-8"), "{path}: {v}");
    }
}

/// Review finding: a client that sends half a request kept a stopped
/// server alive forever; now requests in flight get a grace period.
#[test]
fn r_a_half_sent_request_does_not_keep_a_stopped_server_alive() {
    use std::io::Write as _;
    let (_env, mut s) = setup();
    // The server's open sockets: one more once it has accepted ours.
    let fds = format!("/proc/{}/fd", s.child.id());
    let sockets = || {
        std::fs::read_dir(&fds)
            .unwrap()
            .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
            .filter(|l| l.to_string_lossy().starts_with("socket:"))
            .count()
    };
    let before = sockets();
    let mut c = std::net::TcpStream::connect(("127.0.0.1", s.port())).unwrap();
    c.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n")
        .unwrap();
    crate::common::wait::until(30, "the server did not accept the connection", || {
        sockets() > before
    });
    // SAFETY: kill(2) on our own child has no memory effects.
    unsafe { libc::kill(s.child.id() as i32, libc::SIGTERM) };
    let mut status = None;
    crate::common::wait::until(30, "the server did not stop", || {
        status = s.child.try_wait().unwrap();
        status.is_some()
    });
    assert_eq!(status.unwrap().code(), Some(0));
    drop(c);
}

/// Regression (issue #26: ids and file names were built from keys before
/// redaction; several kinds went undetected). A key or value holding a
/// secret is refused with 400, the secret is not echoed, and nothing is
/// written.
#[test]
fn r26_a_key_or_value_holding_a_secret_is_refused_over_rest() {
    let (_env, s) = setup();
    let token = format!("shpat_{}", "3f9a0c7e1b5d28463f9a0c7e1b5d2846");
    for body in [
        json!({"key": format!("shop {token}"), "value": "The shop uses its admin API."}),
        json!({"key": "shop", "value": format!("The shop token is {token}.")}),
    ] {
        let (code, v) = s.call("POST", MEM, Some(&body));
        assert_eq!(code, 400, "{body}: {v}");
        let e = err(&v);
        assert!(e.contains("shopify-token"), "{e}");
        assert!(!v.to_string().contains(&token), "{v}");
    }
    let (_, v) = s.call("GET", MEM, None);
    assert_eq!(keys(&v), ["use-pnpm"]);
}

/// Regression (review, stop 62): the list redacted a secret in a record
/// file written by hand, and `GET …/memories/:id` served it in clear.
#[test]
fn r_one_record_is_served_with_a_hand_written_secret_redacted() {
    let (env, s) = setup();
    let token = crate::common::hand_written_secret(&env);
    for path in [format!("{MEM}/handsecret"), MEM.to_string()] {
        let (code, v) = s.call("GET", &path, None);
        assert_eq!(code, 200, "{v}");
        assert!(!v.to_string().contains(&token), "{path}: {v}");
        assert!(v.to_string().contains("[REDACTED"), "{path}: {v}");
    }
}

/// Regression (review, stop 62): a body whose string held a lone UTF-16
/// surrogate (an emoji cut in half, as `JSON.stringify` sends it) was
/// refused as "invalid JSON"; it is read as U+FFFD.
#[test]
fn r_a_lone_surrogate_in_a_body_is_mended() {
    let (_env, s) = setup();
    let (code, v) = s.raw(
        "POST",
        MEM,
        Some(r#"{"key": "emoji", "value": "Ship it \ud83d"}"#.into()),
        "application/json",
    );
    assert!(code == 200 || code == 201, "{code} {v}");
    let (_, v) = s.call("GET", &format!("{MEM}/emoji"), None);
    assert!(v.to_string().contains("Ship it \u{fffd}"), "{v}");
}

/// Regression (issue 26 item 11): a REST write that timed out answered
/// 503 "abandoned; try again" and then committed once the index was free,
/// so a client that retried got two writes and a lie. A write that times
/// out while it waits for the index is now cancelled before it changes
/// anything, and the answer says so.
#[test]
fn r26_a_write_that_times_out_is_never_committed_later() {
    let env = Env::new();
    env.add("decisions", "use-pnpm", "We use pnpm, never npm.");
    let s = Server::start(&env, &["--timeout", "1"]);
    // Another writer (`recall index`, say) holds the index's write lock.
    let mut holder = rusqlite::Connection::open(env.project_dir().join("index.db")).unwrap();
    let tx = holder
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .unwrap();
    let (code, v) = s.call(
        "POST",
        MEM,
        Some(&json!({"key": "late", "value": "Written after its 503?"})),
    );
    assert_eq!(code, 503, "{v}");
    let e = err(&v);
    assert!(e.contains("nothing was written"), "{e}");
    tx.rollback().unwrap();
    // The server runs one write at a time: this one starts after the
    // cancelled one has finished, whatever it did.
    let (code, v) = s.call(
        "POST",
        MEM,
        Some(&json!({"key": "retry", "value": "The retry is written once."})),
    );
    assert_eq!(code, 201, "{v}");
    let (_, v) = s.call("GET", MEM, None);
    assert_eq!(keys(&v), ["retry", "use-pnpm"], "{v}");
    let files = walkdir::WalkDir::new(env.project_dir().join("records"))
        .into_iter()
        .filter(|e| e.as_ref().unwrap().file_type().is_file())
        .count();
    assert_eq!(files, 2);
}

/// Issue 25 part 5, the API's half: one memory by id or key; an empty
/// PATCH changes nothing, not even `updated`; user-scope search; a
/// favicon; and a server bound to every address names ones a person can
/// open.
#[test]
fn one_memory_an_empty_patch_user_search_and_a_favicon() {
    let (env, s) = setup();
    let (code, v) = s.call("GET", &format!("{MEM}/use-pnpm"), None);
    assert_eq!(code, 200, "{v}");
    let m = ok(&v).clone();
    assert_eq!(m["value"], "We use pnpm, never npm.");
    let (code, v) = s.call("GET", &format!("{MEM}/{}", m["id"].as_str().unwrap()), None);
    assert_eq!((code, ok(&v)["key"].as_str()), (200, Some("use-pnpm")));
    let (code, v) = s.call("GET", &format!("{MEM}/no-such-key"), None);
    assert_eq!(code, 404, "{v}");

    let path = m["path"].as_str().unwrap();
    let before = std::fs::read(path).unwrap();
    let (code, v) = s.call("PATCH", &format!("{MEM}/use-pnpm"), Some(&json!({})));
    assert_eq!(code, 200, "{v}");
    assert_eq!(ok(&v)["updated"], m["updated"]);
    assert_eq!(
        std::fs::read(path).unwrap(),
        before,
        "an empty patch rewrote the file"
    );
    let same = json!({"value": "We use pnpm, never npm.", "importance": m["importance"]});
    s.call("PATCH", &format!("{MEM}/use-pnpm"), Some(&same));
    assert_eq!(
        std::fs::read(path).unwrap(),
        before,
        "a patch to the same values"
    );

    let body = json!({"key": "editor", "value": "I edit in Helix with the pnpm plugin."});
    assert_eq!(s.call("POST", "/api/user/memories", Some(&body)).0, 201);
    let (code, v) = s.call("GET", "/api/user/recall?q=pnpm", None);
    assert_eq!(code, 200, "{v}");
    let ids: Vec<&str> = ok(&v)["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["scope"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["user"], "the user scope alone: {v}");
    let (code, v) = s.call("GET", "/api/user/recall", None);
    assert_eq!(code, 400, "{v}");

    let (code, icon) = s.raw("GET", "/favicon.ico", None, "");
    assert_eq!(code, 200);
    assert!(icon.starts_with("<svg"), "{icon}");
    drop(env);
}

#[test]
fn a_server_on_every_address_names_addresses_a_person_can_open() {
    use std::io::BufRead as _;
    let env = Env::new();
    env.add("decisions", "k", "fact");
    let mut child = env
        .std_cmd()
        .args([
            "serve",
            "--addr",
            "0.0.0.0:0",
            "--token",
            "t0ken-for-the-test",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut first)
        .unwrap();
    let port = first
        .trim()
        .rsplit(':')
        .next()
        .unwrap()
        .trim_end_matches('/');
    let mut line = String::new();
    std::io::BufReader::new(child.stderr.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        line.contains(&format!("open http://127.0.0.1:{port}/ on this machine")),
        "{first} {line}"
    );
}

/// Review finding: once writes were no longer timed by the guard, a client
/// that sent a write's headers and then stalled held its connection
/// forever. The body is now read within the time limit: 408.
#[test]
fn r_a_stalled_write_body_gets_408() {
    use std::io::{Read as _, Write as _};
    let env = Env::new();
    env.add("decisions", "k", "fact");
    let s = Server::start(&env, &["--timeout", "1"]);
    let mut c = std::net::TcpStream::connect(("127.0.0.1", s.port())).unwrap();
    c.set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .unwrap();
    let head = format!(
        "POST /api/projects/alpha/memories HTTP/1.1\r\nHost: localhost:{}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"key\":",
        s.port()
    );
    c.write_all(head.as_bytes()).unwrap();
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&answer).contains("did not arrive") {
        let n = c.read(&mut buf).unwrap();
        assert!(
            n > 0,
            "closed without an answer: {}",
            String::from_utf8_lossy(&answer)
        );
        answer.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
}

/// Issue 37 item 12: the panel's input box cut a 256-character key to 255
/// without a word. The API, which the panel now sends the whole key to,
/// refuses it with its length and the limit, and writes nothing.
#[test]
fn r37_a_256_character_key_is_refused_with_its_length() {
    let (env, s) = setup();
    let before = crate::common::record_files(&env.home()).len();
    for path in ["/api/projects/alpha/memories", "/api/user/memories"] {
        let body = serde_json::json!({"key": "k".repeat(256), "value": "A fact."});
        let (code, v) = s.call("POST", path, Some(&body));
        assert_eq!(code, 400, "{path}: {v}");
        assert!(
            err(&v).contains("the key is 256 characters long; the limit is 255: shorten it"),
            "{v}"
        );
    }
    assert_eq!(crate::common::record_files(&env.home()).len(), before);
}

/// Stop 46: a misfiled memory moves between a project and the user's
/// memory over the API (as `recall record move`), keeping its id, key and
/// text; every wrong request says what to send instead.
#[test]
fn r46_a_memory_moves_between_a_project_and_the_users_memory() {
    let (env, s) = setup();
    let body = json!({"key": "editor", "value": "I edit in Helix.", "category": "preferences"});
    let (code, v) = s.call("POST", MEM, Some(&body));
    assert_eq!(code, 201, "{v}");
    let id = ok(&v)["id"].as_str().unwrap().to_string();
    let old = ok(&v)["path"].as_str().unwrap().to_string();
    let (code, v) = s.call(
        "POST",
        &format!("{MEM}/{id}/move"),
        Some(&json!({"to": "user"})),
    );
    assert_eq!(code, 200, "{v}");
    assert_eq!(ok(&v)["id"], id.as_str());
    assert_eq!(ok(&v)["scope"], "user");
    assert_eq!(ok(&v)["value"], "I edit in Helix.");
    assert!(
        !std::path::Path::new(&old).exists(),
        "the project's file is gone"
    );
    assert_eq!(keys(&s.call("GET", MEM, None).1), ["use-pnpm"]);
    assert_eq!(
        keys(&s.call("GET", "/api/user/memories", None).1),
        ["editor"]
    );
    // The CLI sees it where it went.
    let got = env.run(&["record", "get", "editor", "--format", "json"]);
    assert!(got.contains("\"scope\": \"user\""), "{got}");
    // And back, to a project named by its name or id.
    let user = format!("/api/user/memories/{id}/move");
    let (code, v) = s.call(
        "POST",
        &user,
        Some(&json!({"to": "project", "project": "alpha"})),
    );
    assert_eq!(code, 200, "{v}");
    assert_eq!(ok(&v)["scope"], "project");
    assert!(keys(&s.call("GET", "/api/user/memories", None).1).is_empty());
    // Wrong requests: where it is already, no project, an unknown one, a
    // target that is not a scope, a memory that is not there.
    for (path, body, status, says) in [
        (
            format!("{MEM}/{id}/move"),
            json!({"to": "project"}),
            400,
            "a project's already",
        ),
        (
            user.clone(),
            json!({"to": "project"}),
            400,
            "say which project",
        ),
        (
            user.clone(),
            json!({"to": "user"}),
            400,
            "in your own memory already",
        ),
        (
            "/api/user/memories/use-pnpm/move".to_string(),
            json!({"to": "project", "project": "nowhere"}),
            404,
            "nowhere",
        ),
        (
            format!("{MEM}/{id}/move"),
            json!({"to": "team"}),
            400,
            "must be \"user\"",
        ),
        (
            format!("{MEM}/{id}/move"),
            json!({"to": "user", "x": 1}),
            400,
            "unknown field",
        ),
        (
            format!("{MEM}/missing/move"),
            json!({"to": "user"}),
            404,
            "missing",
        ),
    ] {
        let (code, v) = s.call("POST", &path, Some(&body));
        let e = err(&v);
        assert_eq!(code, status, "{path} {body}: {e}");
        assert!(e.contains(says), "{path} {body}: {e}");
    }
}

/// Regression (review, stop 57): one project's damaged index made
/// `GET /api/projects` a 500, so the panel listed no project at all, and
/// stopped `reindex --all-projects` before the projects after it. Both go
/// on, naming the damaged project and its own fix.
#[test]
fn one_damaged_project_index_hides_no_other_project() {
    let env = Env::new();
    env.add("decisions", "use-pnpm", "We use pnpm, never npm.");
    env.cmd_in("beta")
        .args([
            "record",
            "add",
            "--category",
            "decisions",
            "--key",
            "k",
            "A beta fact.",
        ])
        .assert()
        .success();
    let shown = env
        .cmd_in("beta")
        .args(["project", "show", "--json"])
        .output()
        .unwrap();
    let beta: Value = serde_json::from_slice(&shown.stdout).unwrap();
    let beta_dir = std::path::PathBuf::from(beta["dir"].as_str().unwrap());
    std::fs::write(beta_dir.join("index.db"), vec![0x5a; 4096]).unwrap();
    for f in ["index.db-wal", "index.db-shm"] {
        let _ = std::fs::remove_file(beta_dir.join(f));
    }
    let s = Server::start(&env, &[]);
    let (code, v) = s.call("GET", "/api/projects", None);
    assert_eq!(code, 200, "{v}");
    let rows = ok(&v).as_array().unwrap();
    let by = |name: &str| rows.iter().find(|p| p["name"] == name).unwrap().clone();
    assert_eq!(by("alpha")["records"], 1, "{v}");
    assert!(by("beta")["records"].is_null(), "{v}");
    assert!(
        by("beta")["error"].as_str().unwrap().contains("corrupt"),
        "{v}"
    );
    drop(s);

    let out = env
        .cmd()
        .args(["reindex", "--all-projects"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    let id = beta_dir.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        err.contains(&format!("recall reindex --full --project {id}")),
        "{err}"
    );
    // The fix named works.
    env.cmd_in(&id)
        .args(["reindex", "--full"])
        .assert()
        .success();
}

/// Regression (review, stop 59): a body field of the wrong type was "invalid
/// type: integer `1`, expected a string", naming no field, in Rust's words
/// (`expected i64`); and keywords had no bound, a way around the value's
/// (5,000 of them made a 44 KB file) and into the file with line breaks.
#[test]
fn r_a_bad_field_is_named_and_keywords_are_bounded() {
    let (_env, server) = setup();
    for (body, want) in [
        (
            json!({"key": 1, "value": "b"}),
            "field `key`: invalid type: integer `1`, expected a string",
        ),
        (
            json!({"key": "k", "value": "b", "importance": 50.5}),
            "field `importance`",
        ),
        (
            json!({"key": "k", "value": "b", "keywords": "x"}),
            "field `keywords`: invalid type: string \"x\", expected a list",
        ),
    ] {
        let (status, v) = server.call("POST", MEM, Some(&body));
        assert_eq!(status, 400, "{v}");
        let e = err(&v);
        assert!(e.contains(want), "{body}: {e}");
        assert!(!e.contains("i64"), "{e}");
    }
    let many: Vec<String> = (0..33).map(|i| format!("kw{i}")).collect();
    for (keywords, want) in [
        (json!(many), "33 keywords; the limit is 32"),
        (json!(["a\nb"]), "contains U+000A"),
        (json!(["x".repeat(101)]), "at most 100 characters"),
    ] {
        let body = json!({"key": "kw", "value": "A fact.", "keywords": keywords});
        let (status, v) = server.call("POST", MEM, Some(&body));
        assert_eq!(status, 400, "{v}");
        assert!(err(&v).contains(want), "{v}");
    }
    let (status, v) = server.call("GET", &format!("{MEM}/kw"), None);
    assert_eq!(status, 404, "nothing was written: {v}");
}
