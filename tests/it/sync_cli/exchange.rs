//! What travels between hosts: records, sessions and tickets with their
//! provenance, edits in place, deletes, thousands of changes to an offline
//! host, concurrent writes of one key, a person's record kept from an
//! agent, clocks that disagree, clones of one repository, sessions kept
//! local.

use std::path::{Path, PathBuf};

use super::{demo, grep_tree, joined, member_url, Host, TEAM};
use crate::common::pg::Pg;
use crate::common::Env;
use serde_json::Value;

#[test]
fn two_hosts_share_records_sessions_and_tickets_with_provenance() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    let (a, b) = (Host::new(&env, "a"), Host::new(&env, "b"));
    a.init(&pg);
    a.add("db-choice", "We chose PostgreSQL 15 for the team database");
    a.run(&[
        "index",
        demo("sessions").to_str().unwrap(),
        demo("tickets").to_str().unwrap(),
    ]);
    let said = a.sync();
    assert!(said.contains("pushed 5"), "{said}");
    b.init(&pg);
    assert_eq!(
        b.body("db-choice").as_deref(),
        Some("We chose PostgreSQL 15 for the team database")
    );
    // The same query ranks the same hits on both hosts.
    let q = "flaky reload test retry";
    assert!(!a.hit_ids(q).is_empty());
    assert_eq!(a.hit_ids(q), b.hit_ids(q));
    // Provenance: the host it came from.
    let host_a: Value =
        serde_json::from_slice(&std::fs::read(a.home.join("host.json")).unwrap()).unwrap();
    let hits: Value = serde_json::from_str(&b.run(&["query", "--format", "json", q])).unwrap();
    let from = hits["hits"][0]["source"]["host"].as_str();
    assert_eq!(from, host_a["id"].as_str(), "{hits}");
    let rec = b.record_json("db-choice");
    assert!(
        rec.to_string().contains(host_a["id"].as_str().unwrap()),
        "{rec}"
    );
    let listed = b.run(&["record", "list", "--format", "json"]);
    assert!(
        listed.contains(&format!("\"host\": {}", host_a["id"])),
        "{listed}"
    );
    // And back: B's record reaches A.
    b.add("ci-runner", "CI runs on the self-hosted runner pool");
    b.sync();
    a.sync();
    assert_eq!(a.records(), b.records());
    // Regression: a pulled record B then edits is B's, here as on A; it
    // kept A's `origin.host` and credited A with B's text.
    b.add("db-choice", "We chose PostgreSQL 16 for the team database");
    let rec = b.record_json("db-choice");
    assert!(rec["origin"].is_null(), "{rec}");
    let hits: Value =
        serde_json::from_str(&b.run(&["query", "--format", "json", "PostgreSQL team database"]))
            .unwrap();
    assert!(hits["hits"][0]["source"]["host"].is_null(), "{hits}");
    b.sync();
    a.sync();
    let host_b: Value =
        serde_json::from_slice(&std::fs::read(b.home.join("host.json")).unwrap()).unwrap();
    assert_eq!(a.record_json("db-choice")["origin"]["host"], host_b["id"]);
    // A no-op sync sends and receives nothing.
    assert!(a.sync().contains("pulled 0, pushed 0"));
}

/// Found by the torture suite: a record file rewritten in place keeps its
/// folder's mtime, so the cheap check before a query missed it and the
/// change was never pushed.
#[test]
fn r_an_edit_in_place_is_pushed() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    let [a, b] = joined(&env, &pg, ["a", "b"]);
    a.add("cache", "The cache TTL is 60 seconds");
    a.sync();
    b.sync();
    let path = PathBuf::from(a.record_json("cache")["path"].as_str().unwrap());
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("60 seconds", "90 seconds");
    std::fs::write(&path, text).unwrap();
    a.sync();
    b.sync();
    assert_eq!(
        b.body("cache").as_deref(),
        Some("The cache TTL is 90 seconds")
    );
}

#[test]
fn three_hosts_writing_one_key_at_once_converge() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    let hosts = joined(&env, &pg, ["a", "b", "c"]);
    for round in 0..3 {
        for (i, h) in hosts.iter().enumerate() {
            h.add(
                "port",
                &format!("The API listens on port {}", 8000 + round * 10 + i),
            );
        }
        std::thread::scope(|s| {
            for h in &hosts {
                s.spawn(|| h.sync());
            }
        });
        // A second round delivers what raced past each host's pull.
        for h in &hosts {
            h.sync();
        }
        for h in &hosts {
            h.sync();
        }
        let values: Vec<_> = hosts.iter().map(|h| h.body("port")).collect();
        assert!(
            values.iter().all(|v| v == &values[0]),
            "round {round}: {values:?}"
        );
    }
    assert_eq!(
        pg.sql(
            "team",
            "SELECT count(*) FROM recall_entries WHERE key='port'"
        ),
        "1"
    );
}

#[test]
fn a_delete_travels_and_leaves_no_text_anywhere() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    let [a, b] = joined(&env, &pg, ["a", "b"]);
    let secret_ish = "zebra-quartz-7391 deploy note";
    a.add("doomed", secret_ish);
    a.sync();
    b.sync();
    assert!(b.body("doomed").is_some());
    a.run(&["record", "delete", "doomed"]);
    a.sync();
    b.sync();
    assert_eq!(b.body("doomed"), None);
    // Once every host has seen the tombstone, the next sync compacts it.
    a.sync();
    for h in [&a, &b] {
        assert_eq!(
            grep_tree(&h.home, "zebra-quartz-7391"),
            Vec::<PathBuf>::new()
        );
    }
    assert!(!pg.dump().contains("zebra-quartz-7391"));
    assert_eq!(
        pg.sql(
            "team",
            "SELECT count(*) FROM recall_entries WHERE key='doomed'"
        ),
        "0"
    );
}

#[test]
fn an_offline_host_catches_up_on_thousands_of_changes() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    let (a, b) = (Host::new(&env, "a"), Host::new(&env, "b"));
    a.init(&pg);
    // 1,500 records written as files (the Markdown is the truth) plus a
    // 600-message transcript.
    a.add("seed", "seed record");
    let dir = PathBuf::from(a.record_json("seed")["path"].as_str().unwrap())
        .parent()
        .unwrap()
        .to_path_buf();
    for i in 0..1500 {
        std::fs::write(
            dir.join(format!("bulk-{i}.md")),
            format!("---\nid: bulk-{i}\nkey: bulk-{i}\ncategory: decisions\nscope: project\nsource: manual\ncreated: 2026-01-01T00:00:00Z\nupdated: 2026-01-01T00:00:00Z\n---\n\nBulk fact number {i} about shard{i}\n"),
        )
        .unwrap();
    }
    let lines: Vec<String> = (0..600)
        .map(|i| {
            format!(
                r#"{{"role":"{}","content":"message {i} about widget{i}","session_id":"long"}}"#,
                if i % 2 == 0 { "user" } else { "assistant" }
            )
        })
        .collect();
    let path = env.tmp.path().join("long.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    a.run(&["index", path.to_str().unwrap()]);
    a.sync();
    b.init(&pg);
    assert_eq!(a.records(), b.records());
    assert_eq!(b.records().len(), 1501);
    assert_eq!(b.hit_ids("shard1234").len(), 1);
    assert!(!b.hit_ids("widget599").is_empty());
}

#[test]
fn an_agent_never_overwrites_what_a_person_wrote_on_another_host() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    let [a, b] = joined(&env, &pg, ["a", "b"]);
    a.add("deploy", "Deploys go through the release train on Tuesdays");
    b.run(&[
        "remember",
        "--key",
        "deploy",
        "--category",
        "decisions",
        "Deploy whenever CI is green",
    ]);
    // The agent's version reaches the server first.
    b.sync();
    a.sync();
    b.sync();
    for h in [&a, &b] {
        assert_eq!(
            h.body("deploy").as_deref(),
            Some("Deploys go through the release train on Tuesdays")
        );
        assert_eq!(h.record_json("deploy")["source"], "manual");
    }
}

#[test]
fn a_clock_an_hour_ahead_does_not_win() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    let [a, b] = joined(&env, &pg, ["a", "b"]);
    // Host A's clock runs an hour ahead: its record says so.
    a.add("node", "We build with Node 18");
    let path = PathBuf::from(a.record_json("node")["path"].as_str().unwrap());
    let ahead = (jiff::Timestamp::now() + jiff::SignedDuration::from_hours(1)).to_string();
    let text = std::fs::read_to_string(&path).unwrap();
    let text: String = text
        .lines()
        .map(|l| {
            if l.starts_with("updated:") {
                format!("updated: {ahead}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&path, text + "\n").unwrap();
    a.sync();
    b.sync();
    // B writes later (by the server's order): B wins everywhere.
    b.add("node", "We build with Node 22");
    b.sync();
    a.sync();
    for h in [&a, &b] {
        assert_eq!(h.body("node").as_deref(), Some("We build with Node 22"));
    }
}

#[test]
fn clones_of_one_repository_are_one_project_and_the_user_scope_stays_personal() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    let mk_repo = |dir: &str, origin: &str| -> PathBuf {
        let p = env.tmp.path().join(dir);
        std::fs::create_dir_all(&p).unwrap();
        let git = |args: &[&str]| {
            assert!(std::process::Command::new("git")
                .arg("-C")
                .arg(&p)
                .args(args)
                .status()
                .unwrap()
                .success());
        };
        git(&["init", "-q"]);
        git(&["remote", "add", "origin", origin]);
        p
    };
    let r1 = mk_repo("laptop/src/app", "git@github.com:Acme/App.git");
    let r2 = mk_repo("desk/work/app-clone", "https://github.com/acme/app");
    let in_repo = |home: &str, repo: &Path, user: &str, args: &[&str]| -> String {
        let out = assert_cmd::Command::cargo_bin("recall")
            .unwrap()
            .env_remove("RECALL_HOME")
            .env_remove("RECALL_PROJECT")
            .env("USER", user)
            .env("PGPASSFILE", "/nonexistent")
            .arg("--home")
            .arg(env.tmp.path().join(home))
            .args(args)
            .current_dir(repo)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap() + &String::from_utf8_lossy(&out.stderr)
    };
    // The tables first (the owner), then each person with their own login.
    Host::new(&env, "owner").init(&pg);
    let alice = member_url(&pg, "alice", Some("alice"));
    let bob = member_url(&pg, "bob", Some("bob"));
    let said = in_repo("h1", &r1, "alice", &["sync", "--init", &alice]);
    assert!(said.contains("github.com/acme/app"), "{said}");
    in_repo(
        "h1",
        &r1,
        "alice",
        &[
            "record",
            "add",
            "--category",
            "procedures",
            "--key",
            "lint",
            "Run clippy with -D warnings",
        ],
    );
    in_repo(
        "h1",
        &r1,
        "alice",
        &[
            "record",
            "add",
            "--scope",
            "user",
            "--category",
            "preferences",
            "--key",
            "tone",
            "Answer tersely",
        ],
    );
    in_repo("h1", &r1, "alice", &["sync"]);
    // Alice's second host, another path, the other spelling of the remote.
    in_repo("h2", &r2, "alice", &["sync", "--init", &alice]);
    let listed = in_repo("h2", &r2, "alice", &["record", "list", "--format", "json"]);
    assert!(
        listed.contains("Run clippy") && listed.contains("Answer tersely"),
        "{listed}"
    );
    // Bob shares the project but not Alice's preferences.
    in_repo("h3", &r2, "bob", &["sync", "--init", &bob]);
    let listed = in_repo("h3", &r2, "bob", &["record", "list", "--format", "json"]);
    assert!(listed.contains("Run clippy"), "{listed}");
    assert!(!listed.contains("Answer tersely"), "{listed}");
}

#[test]
fn sessions_can_stay_local_while_records_are_shared() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    let (a, b) = (Host::new(&env, "a"), Host::new(&env, "b"));
    a.run(&["sync", "--init", &pg.url(), "--team", TEAM, "--no-sessions"]);
    a.add("kept", "Records always travel");
    a.run(&["index", demo("sessions").to_str().unwrap()]);
    a.sync();
    b.init(&pg);
    assert!(b.body("kept").is_some());
    assert!(b
        .hit_ids("flaky reload")
        .iter()
        .all(|id| !id.contains("flaky-reload")));
    let st = a.run(&["sync", "--status"]);
    assert!(st.contains("shares:     records, tickets"), "{st}");
}

/// A sync stopped after the server took its push and before this host
/// noted it must not send that version again on its next sync: by then
/// another host may have replaced it, and the older version would win.
#[test]
fn r_a_push_stopped_before_it_was_noted_is_not_sent_again() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    let [a, b] = joined(&env, &pg, ["a", "b"]);
    // Each host has pulled something, so neither is on its first sync
    // (which takes the server's version of every key).
    b.add("owner", "The platform team owns deploys");
    b.sync();
    a.sync();
    a.add("port", "The API listens on port 8080");
    let out = a
        .cmd()
        .env("FAILPOINTS", "sync-push-committed=panic")
        .args(["sync"])
        .output()
        .unwrap();
    assert!(
        !out.status.success(),
        "the fail point was not reached (a test build has fail points on)"
    );
    b.sync();
    assert_eq!(
        b.body("port").as_deref(),
        Some("The API listens on port 8080")
    );
    b.add("port", "The API listens on port 9090");
    b.sync();
    a.sync();
    b.sync();
    for h in [&a, &b] {
        assert_eq!(
            h.body("port").as_deref(),
            Some("The API listens on port 9090"),
            "{}",
            h.home.display()
        );
    }
}

/// Issue 36 item 7: a sync that withholds a record because it holds a
/// secret said "not sent" and exited 0, so a script never noticed. It
/// exits 3 (a batch finished, some items not done), names the file, and
/// sends the rest.
#[test]
fn r36_a_sync_that_withholds_a_record_exits_3() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    let [a, b] = joined(&env, &pg, ["a", "b"]);
    a.add("fine", "Nothing secret here");
    a.add("leaky", "The CI token is kept in the vault");
    let path = PathBuf::from(a.record_json("leaky")["path"].as_str().unwrap());
    let text = std::fs::read_to_string(&path).unwrap().replace(
        "kept in the vault",
        "ghp_Zq7mXw2Lk9Pt4Vb8Rn3Hy6Jc1Gd5Sf0Ae2Uo",
    );
    std::fs::write(&path, text).unwrap();
    let out = a.out(&["sync"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("not sent") && err.contains("leaky"), "{err}");
    b.sync();
    assert!(b.body("fine").is_some());
    assert_eq!(b.body("leaky"), None);
}

/// Issue 36 item 5: a person's record reached the server from host A, and
/// A went offline; an agent on host B, which had not pulled it yet,
/// remembered the same key and pushed, replacing the person's version on
/// the server, so every host that synced took the agent's text until A
/// came back. Now B takes the person's version and C never sees the
/// agent's.
#[test]
fn r36_an_agents_version_never_replaces_a_persons_with_the_persons_host_offline() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    let [a, b, c] = joined(&env, &pg, ["a", "b", "c"]);
    let person = "Deploys go through the release train on Tuesdays";
    a.add("deploy", person);
    a.sync();
    // A is offline from here.
    b.run(&[
        "remember",
        "--key",
        "deploy",
        "--category",
        "decisions",
        "Deploy whenever CI is green",
    ]);
    b.sync();
    c.sync();
    let on_server = pg.sql(
        "team",
        "SELECT body FROM recall_entries WHERE key = 'deploy'",
    );
    assert!(on_server.contains(person), "{on_server}");
    for h in [&b, &c] {
        assert_eq!(
            h.body("deploy").as_deref(),
            Some(person),
            "{}",
            h.home.display()
        );
        assert_eq!(h.record_json("deploy")["source"], "manual");
    }
    assert!(b.sync().contains("pushed 0"));
}

/// The same, when the agent's version reaches the server after the
/// person's without its host having pulled it (the person pushed while
/// B was between its pull and its push): the server keeps the person's
/// version, B takes it in the same sync, and no host ever receives the
/// agent's.
#[test]
fn r36_the_server_keeps_a_persons_version_over_an_agents_push() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    let [a, b, c] = joined(&env, &pg, ["a", "b", "c"]);
    let person = "The platform team owns the database";
    a.add("owner", person);
    b.run(&[
        "remember",
        "--key",
        "owner",
        "--category",
        "decisions",
        "Nobody owns the database",
    ]);
    // B pulls (nothing yet), then waits before it pushes.
    let slow = b.std_cmd_env(
        &["sync", "--json"],
        &[("FAILPOINTS", "sync-pulled=sleep(4000)")],
    );
    let pulled = "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'recall' \
                  AND state = 'idle' AND query LIKE '%recall_horizons%'";
    let t0 = std::time::Instant::now();
    while pg.sql("team", pulled) != "1" {
        assert!(
            t0.elapsed().as_secs() < 30,
            "host b never finished its pull"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    a.sync();
    let out = slow.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["scopes"][0]["yielded"], 1, "{report}");
    let on_server = pg.sql(
        "team",
        "SELECT body FROM recall_entries WHERE key = 'owner'",
    );
    assert!(on_server.contains(person), "{on_server}");
    c.sync();
    for h in [&b, &c] {
        assert_eq!(
            h.body("owner").as_deref(),
            Some(person),
            "{}",
            h.home.display()
        );
    }
}

/// Regression: one entry another host could not take (longer than its
/// own `records.max_body_chars`, or one that does not parse) stopped every
/// sync of that host, both ways, with the same error on each retry. It is
/// now passed over and named (exit 3), and everything else syncs.
#[test]
fn r_one_entry_a_host_cannot_take_never_stops_its_sync() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    let (a, b) = (Host::new(&env, "a"), Host::new(&env, "b"));
    a.init(&pg);
    let long = "Payments runbook: page the on-call first. ".repeat(100);
    let out = a
        .cmd()
        .env("RECALL_MAX_BODY_CHARS", "10000")
        .args([
            "record",
            "add",
            "--category",
            "procedures",
            "--key",
            "payments-runbook",
        ])
        .arg(&long)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    a.add("broken", "This one is damaged on the server");
    a.add("fine", "The release train leaves on Tuesdays");
    a.sync();
    pg.sql(
        "team",
        "UPDATE recall_entries SET body = 'no frontmatter at all' WHERE key = 'broken'",
    );
    let out = b.out(&["sync", "--init", &pg.url(), "--team", TEAM]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("sync: not taken:") && err.contains("broken"),
        "{err}"
    );
    assert!(err.contains("the limit is 2000"), "{err}");
    assert!(b.body("payments-runbook").is_none());
    assert!(b.body("fine").is_some());
    assert!(b.body("broken").is_none());
    // What B learns still goes out, and the next sync is clean.
    b.add("b-fact", "The staging database is rebuilt every night");
    let said = b.sync();
    assert!(said.contains("pushed 1"), "{said}");
    a.sync();
    assert!(a.body("b-fact").is_some());
    // Fixed where it was written, it arrives.
    a.add("broken", "This one is whole again");
    a.sync();
    b.sync();
    assert_eq!(b.body("broken").as_deref(), Some("This one is whole again"));
}

/// Regression: one scope that failed (here, an index damaged on this host)
/// stopped the run, so the scopes after it were never synced, and what the
/// ones before it did was not reported. Each scope now fails alone, named
/// (exit 2); and a team named like a person's scope (`user:…`) is refused
/// when shared, not at every push.
#[test]
fn r_one_scope_that_fails_does_not_stop_the_others() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    let a = Host::new(&env, "a");
    a.init(&pg);
    let beta = |args: &[&str]| {
        env.cmd_with(&a.home, "beta")
            .env("USER", &a.user)
            .env_remove("PGPASSWORD")
            .env_remove("RECALL_SYNC_URL")
            .env("PGPASSFILE", "/nonexistent")
            .args(args)
            .output()
            .unwrap()
    };
    assert!(beta(&["sync", "--share", "--team", "acme/other"])
        .status
        .success());
    let out = beta(&[
        "record",
        "add",
        "--category",
        "decisions",
        "--key",
        "b1",
        "Beta fact",
    ]);
    assert!(out.status.success());
    let show = beta(&["project", "show", "--json"]);
    let dir: serde_json::Value = serde_json::from_slice(&show.stdout).unwrap();
    std::fs::write(
        Path::new(dir["dir"].as_str().unwrap()).join("index.db"),
        "this is not a database",
    )
    .unwrap();
    a.add("a1", "Alpha fact");
    let out = a.out(&["sync"]);
    let err = String::from_utf8_lossy(&out.stderr);
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("sync: acme/other: not synced:"), "{err}");
    assert!(
        said.contains(&format!("{TEAM}: pulled 0, pushed 1")),
        "{said}"
    );
    assert_eq!(
        pg.sql(
            "team",
            "SELECT count(*) FROM recall_entries WHERE key = 'a1'"
        ),
        "1"
    );
    // Regression: `--this-project` in a project not shared said no project
    // was shared at all.
    let out = env
        .cmd_with(&a.home, "gamma")
        .env("USER", &a.user)
        .env("PGPASSFILE", "/nonexistent")
        .args(["sync", "--this-project"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("this project is not shared"), "{err}");
    let out = beta(&["sync", "--share", "--team", "user:bob"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("starts with `user:`"), "{err}");
}

/// Regression: two homes given one `[sync] host` name (a config shared
/// through dotfiles, a templated CI config) never pull each other's
/// changes, since a host never pulls what its own name pushed, and
/// nothing said so. A push now finds the other home's receipt under the
/// name and says what to do (exit 3), and `--status` keeps the warning;
/// a home that takes over a name no one else uses is not warned.
/// Regression (review, stop 60): a home that never synced, under the name
/// of the home it replaced (a reinstalled laptop, a config from dotfiles),
/// never pulled what that name had pushed, since a host skips its own
/// name's rows, and `--status` said it was up to date. Its first pull takes
/// its name's records too.
#[test]
fn r_a_reinstalled_home_under_its_old_name_gets_its_records() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    let [old] = joined(&env, &pg, ["old"]);
    old.set_name("laptop");
    old.add("o-1", "Releases are cut from the main branch");
    old.add("o-2", "The staging cluster runs in eu-west-1");
    old.sync();
    let new = Host::new(&env, "new");
    new.set_name("laptop");
    new.init(&pg);
    assert!(
        new.body("o-1").is_some() && new.body("o-2").is_some(),
        "the name's records were not pulled"
    );
    let status = new.run(&["sync", "--status"]);
    assert!(status.contains("to pull:    0"), "{status}");
}

#[test]
fn r_two_homes_of_one_host_name_are_told() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    let [a, b, c] = joined(&env, &pg, ["a", "b", "c"]);
    a.set_name("dev");
    b.set_name("dev");
    a.add("a-1", "Releases are cut from the main branch");
    a.sync();
    a.add("a-2", "The staging cluster runs in eu-west-1");
    a.sync();
    // B's first push finds A's receipt, but B has none of its own yet: it
    // may be a home that replaced A's, so nothing is said.
    b.add("b-1", "Feature flags live in LaunchDarkly");
    let out = b.out(&["sync"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A's next push finds B's receipt over its own.
    a.add("a-3", "Database migrations run before the deploy");
    let out = a.out(&["sync"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("another home pushed as host 'dev'") && err.contains("[sync] host"),
        "{err}"
    );
    // What they each missed is the warning's reason.
    assert!(a.body("b-1").is_none());
    let status = a.run(&["sync", "--status"]);
    assert!(
        status.contains("warning:    another home pushed under this host's name"),
        "{status}"
    );
    let json: Value = serde_json::from_str(&a.run(&["sync", "--status", "--json"])).unwrap();
    assert!(json[0]["name_shared_seen"].is_string(), "{json}");
    // C, under its own name, is not warned and gets everything.
    c.add("c-1", "On-call rotates on Mondays");
    let out = c.out(&["sync"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(c.body("a-3").is_some() && c.body("b-1").is_some());
    // Renamed, A syncs cleanly: the warning was about the old name.
    a.set_name("dev-a");
    a.add("a-4", "Logs are kept for 30 days");
    let out = a.out(&["sync"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status = a.run(&["sync", "--status"]);
    assert!(!status.contains("warning:"), "{status}");
}

/// Regression (review, stop 62): a home renamed (`[sync] host`) pushed
/// every session again under its new name and left the old name's copies
/// on the server, so every teammate held each session twice, the renamed
/// home pulled its own sessions back as a teammate's, and the old name's
/// progress row held back every tombstone for good.
#[test]
fn r_a_renamed_host_moves_its_sessions_to_its_new_name() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    let [a, b] = joined(&env, &pg, ["a", "b"]);
    a.set_name("laptop");
    a.run(&["index", demo("sessions").to_str().unwrap()]);
    a.sync();
    b.sync();
    let pulled = |h: &Host, host: &str| {
        h.source_paths()
            .into_iter()
            .filter(|p| p.starts_with(&format!("sync://{host}:")))
            .count()
    };
    let sessions = pulled(&b, "laptop");
    assert!(sessions > 0);
    a.set_name("laptop-2026");
    a.run(&["index", demo("sessions").to_str().unwrap()]);
    a.sync();
    b.sync();
    assert_eq!(pulled(&b, "laptop"), 0, "{:?}", b.source_paths());
    assert_eq!(pulled(&b, "laptop-2026"), sessions);
    assert!(
        a.source_paths().iter().all(|p| !p.starts_with("sync://")),
        "{:?}",
        a.source_paths()
    );
    let live = pg.sql(
        "team",
        "SELECT count(*) FROM recall_entries WHERE kind='source' AND NOT deleted AND host <> 'laptop-2026'",
    );
    assert_eq!(live.trim(), "0");
    let hosts = pg.sql(
        "team",
        "SELECT string_agg(host, ',' ORDER BY host) FROM recall_hosts",
    );
    assert!(!hosts.split(',').any(|h| h == "laptop"), "{hosts}");
    // Nothing is left to push or pull.
    assert!(a.sync().contains("pulled 0, pushed 0"));
}

/// Regression (review, stop 62): a home given a teammate's host name (a
/// config shared through dotfiles) withdrew from the server every session
/// it had pulled from that teammate, taking them from every host.
#[test]
fn r_a_home_given_a_teammates_name_never_withdraws_the_teammates_sessions() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    let [a, b, c] = joined(&env, &pg, ["a", "b", "c"]);
    a.set_name("laptop");
    b.set_name("bobbox");
    c.set_name("desk");
    a.run(&["index", demo("sessions").to_str().unwrap()]);
    a.sync();
    b.sync();
    c.sync();
    let from_laptop = |h: &Host| {
        h.source_paths()
            .into_iter()
            .filter(|p| p.starts_with("sync://laptop:"))
            .count()
    };
    let sessions = from_laptop(&b);
    assert!(sessions > 0 && from_laptop(&c) == sessions);
    c.set_name("laptop");
    c.out(&["sync"]);
    b.sync();
    assert_eq!(from_laptop(&b), sessions, "{:?}", b.source_paths());
    let withdrawn = pg.sql(
        "team",
        "SELECT count(*) FROM recall_entries WHERE kind='source' AND deleted",
    );
    assert_eq!(withdrawn.trim(), "0");
}

/// Regression (review, stop 62): `record move --to user` of a shared
/// project's record took it out of every teammate's memory at the next
/// sync, and nothing said so. The move now says what the sync will do.
#[test]
fn r_moving_a_shared_record_to_the_user_scope_says_it_leaves_the_team() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    let [a, b] = joined(&env, &pg, ["a", "b"]);
    a.add("editor", "Use helix for quick edits");
    a.sync();
    b.sync();
    assert!(b.body("editor").is_some());
    let out = a.out(&["record", "move", "editor", "--to", "user"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("is shared: the next sync takes 'editor' out of every teammate's memory"),
        "{err}"
    );
    a.sync();
    b.sync();
    assert_eq!(b.body("editor"), None);
    let out = a.out(&["record", "move", "editor", "--to", "project"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the next sync gives 'editor' to every teammate"),
        "{err}"
    );
}
