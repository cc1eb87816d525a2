//! Syncs nobody waits for: hooks never wait on a server that is down, a
//! SessionEnd hook shares the session in the background, and `sync
//! --watch` and `recall serve` keep syncing.

use std::process::Output;

use super::{joined, Host};
use crate::common::pg::Pg;
use crate::common::wait::eventually;
use crate::common::{assert_success, Env};
use serde_json::Value;

#[test]
fn hooks_never_wait_on_a_server_that_is_down() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    let (a, plain) = (Host::new(&env, "a"), Host::new(&env, "plain"));
    a.init(&pg);
    for h in [&a, &plain] {
        h.add("db", "The team database is PostgreSQL 15");
    }
    pg.stop();
    let payload = serde_json::json!({
        "hook_event_name": "UserPromptSubmit", "session_id": "s1",
        "prompt": "which team database do we use", "cwd": env.tmp.path(),
    });
    let start = serde_json::json!({"hook_event_name": "SessionStart", "session_id": "s1", "cwd": env.tmp.path()});
    let ids = regex::Regex::new(r"db-[0-9a-f]{6}").unwrap();
    for p in [&payload, &start] {
        let with = a
            .cmd()
            .args(["hook", "claude-code"])
            .write_stdin(p.to_string())
            .output()
            .unwrap();
        let without = plain
            .cmd()
            .args(["hook", "claude-code"])
            .write_stdin(p.to_string())
            .output()
            .unwrap();
        assert_eq!(with.status.code(), Some(0));
        // The same context, up to each home's record id and path.
        let norm = |o: &Output, h: &Host| {
            let s = String::from_utf8_lossy(&o.stdout).replace(&h.home.display().to_string(), "H");
            ids.replace_all(&s, "db-ID").into_owned()
        };
        assert!(!with.stdout.is_empty() || p == &start);
        assert_eq!(norm(&with, &a), norm(&without, &plain));
    }
}

#[test]
fn a_session_end_hook_shares_the_session_in_the_background() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    let [a, b] = joined(&env, &pg, ["a", "b"]);
    let transcript = env.tmp.path().join("t.jsonl");
    std::fs::write(
        &transcript,
        r#"{"role":"user","content":"why does the quokkaparser crash on empty input","session_id":"s9"}
{"role":"assistant","content":"The quokkaparser indexes past the end; guard the empty slice","session_id":"s9"}
"#,
    )
    .unwrap();
    let p = serde_json::json!({
        "hook_event_name": "SessionEnd", "session_id": "s9",
        "transcript_path": transcript, "cwd": env.tmp.path(),
    });
    let out = a
        .cmd()
        .args(["hook", "claude-code"])
        .write_stdin(p.to_string())
        .output()
        .unwrap();
    assert_success(&out);
    let found = eventually(20, || {
        b.sync();
        !b.hit_ids("quokkaparser").is_empty()
    });
    let log = std::fs::read_to_string(a.home.join("logs/sync.log")).unwrap_or_default()
        + &std::fs::read_to_string(a.home.join("logs/hooks.log")).unwrap_or_default();
    assert!(found, "the session never reached host b; logs: {log}");
    // Regression: the background sync a SessionEnd starts wrote its
    // failures to hooks.log; SessionStart's go to sync.log, as documented.
    pg.stop();
    let _ = std::fs::remove_file(a.home.join("logs/sync.log"));
    let out = a
        .cmd()
        .args(["hook", "claude-code"])
        .write_stdin(p.to_string())
        .output()
        .unwrap();
    assert_success(&out);
    let said =
        |name: &str| std::fs::read_to_string(a.home.join("logs").join(name)).unwrap_or_default();
    assert!(
        eventually(30, || said("sync.log").contains("recall sync (background)")),
        "sync.log: {}; hooks.log: {}",
        said("sync.log"),
        said("hooks.log")
    );
    assert!(
        !said("hooks.log").contains("recall sync (background)"),
        "{}",
        said("hooks.log")
    );
}

#[test]
fn watch_and_serve_keep_syncing() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    let [a, b, c] = joined(&env, &pg, ["a", "b", "c"]);
    // c syncs through `recall serve`, every second.
    let cfg = c.home.join("config.toml");
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push_str("interval_secs = 1\n");
    std::fs::write(&cfg, text).unwrap();
    let mut watch = b.std_cmd(&["sync", "--watch", "--interval", "0.2"]);
    let mut serve = c.std_cmd(&["serve", "--addr", "127.0.0.1:0"]);
    a.add("watched", "Near-real-time sharing works");
    a.sync();
    let got_b = eventually(15, || b.body("watched").is_some());
    let got_c = eventually(15, || c.body("watched").is_some());
    // The panel's API shows where the record came from.
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(serve.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let base = line
        .trim()
        .trim_start_matches("listening on ")
        .trim_end_matches('/')
        .to_string();
    let body: Value = ureq::get(&format!("{base}/api/projects/alpha/memories"))
        .call()
        .unwrap()
        .body_mut()
        .read_json()
        .unwrap();
    let host_a: Value =
        serde_json::from_slice(&std::fs::read(a.home.join("host.json")).unwrap()).unwrap();
    assert!(
        body.to_string()
            .contains(&format!("\"host\":{}", host_a["id"])),
        "{body}"
    );
    for child in [&mut watch, &mut serve] {
        let _ = child.kill();
        let _ = child.wait();
    }
    assert!(got_b, "sync --watch never pulled the record");
    // Regression: every round printed a line per scope, changed or not,
    // so the round that pulled was buried; idle rounds now say nothing.
    let mut said = String::new();
    std::io::Read::read_to_string(&mut watch.stdout.take().unwrap(), &mut said).unwrap();
    assert!(said.contains("pulled 1"), "{said}");
    assert!(!said.contains("pulled 0, pushed 0"), "{said}");
    assert!(got_c, "recall serve never pulled the record");
}
