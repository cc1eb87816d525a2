//! Team memory end to end: several hosts (several homes on one machine)
//! syncing through a real PostgreSQL server the test starts itself.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::pg::{Pg, PASSWORD};
use crate::common::wait::eventually;
use crate::common::{assert_success, Env};
use serde_json::Value;

const TEAM: &str = "acme/app";

/// One host: its own home, one project shared as [`TEAM`].
struct Host<'a> {
    env: &'a Env,
    home: PathBuf,
    user: String,
}

impl<'a> Host<'a> {
    fn new(env: &'a Env, name: &str) -> Host<'a> {
        Host {
            env,
            home: env.tmp.path().join(name),
            user: "alice".into(),
        }
    }

    fn cmd(&self) -> assert_cmd::Command {
        let mut c = self.env.cmd_with(&self.home, &self.env.project);
        c.env("USER", &self.user)
            .env_remove("PGPASSWORD")
            .env_remove("RECALL_SYNC_URL")
            .env("PGPASSFILE", "/nonexistent");
        c
    }

    /// `recall ... args` started in the background, output captured.
    fn std_cmd(&self, args: &[&str]) -> std::process::Child {
        std::process::Command::new(assert_cmd::cargo::cargo_bin("recall"))
            .env_remove("RECALL_HOME")
            .env_remove("RECALL_PROJECT")
            .env_remove("PGPASSWORD")
            .env("USER", &self.user)
            .env("PGPASSFILE", "/nonexistent")
            .arg("--home")
            .arg(&self.home)
            .arg("--project")
            .arg(&self.env.project)
            .args(args)
            .current_dir(self.env.tmp.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    }

    fn out(&self, args: &[&str]) -> Output {
        self.cmd().args(args).output().unwrap()
    }

    fn run(&self, args: &[&str]) -> String {
        let out = self.out(args);
        assert!(
            out.status.success(),
            "{} {args:?}: {}",
            self.home.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    fn init(&self, pg: &Pg) {
        self.run(&["sync", "--init", &pg.url(), "--team", TEAM]);
    }

    fn sync(&self) -> String {
        self.run(&["sync"])
    }

    fn add(&self, key: &str, text: &str) {
        self.run(&[
            "record",
            "add",
            "--category",
            "decisions",
            "--key",
            key,
            text,
        ]);
    }

    /// The body of the record with `key`, if any.
    fn body(&self, key: &str) -> Option<String> {
        let out = self.out(&["record", "get", key, "--format", "json"]);
        if !out.status.success() {
            return None;
        }
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        Some(v["text"].as_str().unwrap().trim().to_string())
    }

    fn record_json(&self, key: &str) -> Value {
        serde_json::from_str(&self.run(&["record", "get", key, "--format", "json"])).unwrap()
    }

    fn hit_ids(&self, q: &str) -> Vec<String> {
        let out = self.out(&["query", "--format", "json", q]);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["id"].as_str().unwrap().to_string())
            .collect()
    }

    /// Keys and bodies of every project record, sorted.
    fn records(&self) -> Vec<(String, String)> {
        let v: Value =
            serde_json::from_str(&self.run(&["record", "list", "--format", "json"])).unwrap();
        let mut out: Vec<_> = v
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["scope"] == "project")
            .map(|r| {
                (
                    r["key"].as_str().unwrap().to_string(),
                    r["text"].as_str().unwrap().trim().to_string(),
                )
            })
            .collect();
        out.sort();
        out
    }
}

/// Hosts named `names`, each with its own home, all set up with
/// `sync --init` on `pg` and sharing [`TEAM`].
fn joined<'a, const N: usize>(env: &'a Env, pg: &Pg, names: [&str; N]) -> [Host<'a>; N] {
    names.map(|n| {
        let h = Host::new(env, n);
        h.init(pg);
        h
    })
}

fn demo(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/demo")
        .join(name)
}

/// Every byte under `dir` contains `needle`?
fn grep_tree(dir: &Path, needle: &str) -> Vec<PathBuf> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .filter(|e| {
            let bytes = std::fs::read(e.path()).unwrap_or_default();
            bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
        })
        .map(|e| e.path().to_path_buf())
        .collect()
}

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
fn errors_say_what_where_and_how_to_fix() {
    let env = Env::new();
    let a = Host::new(&env, "a");
    // No remote.
    let out = a.out(&["sync"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no sync remote is set") && err.contains("--init"),
        "{err}"
    );
    // Nothing listening.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://u:hunter2hunter2@127.0.0.1:{port}/team");
    let out = a.out(&["sync", "--init", &url]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("127.0.0.1:{port}")) && err.contains("PostgreSQL runs there"),
        "{err}"
    );
    assert!(!err.contains("hunter2"), "the password was printed: {err}");
    let Some(pg) = Pg::start() else { return };
    // Wrong password.
    let bad = pg.url().replace(PASSWORD, "wrong-password-1");
    let out = a.out(&["sync", "--init", &bad]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("credentials") && err.contains(".pgpass"),
        "{err}"
    );
    assert!(!err.contains("wrong-password-1"), "{err}");
    // A server newer than this binary.
    a.init(&pg);
    pg.sql("team", "INSERT INTO recall_schema(version) VALUES (99)");
    let out = a.out(&["sync"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        err.contains("schema 99") && err.contains("upgrade recall"),
        "{err}"
    );
    assert!(!err.contains(PASSWORD), "{err}");
}

#[test]
fn credentials_come_from_pgpass_or_the_environment_and_never_show() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    let a = Host::new(&env, "a");
    let url = pg.url_without_password("recall");
    // From PGPASSWORD.
    let out = a
        .cmd()
        .env("PGPASSWORD", PASSWORD)
        .args(["sync", "--init", &url, "--team", TEAM])
        .output()
        .unwrap();
    assert_success(&out);
    // From a password file.
    let pgpass = env.tmp.path().join("pgpass");
    std::fs::write(
        &pgpass,
        format!("127.0.0.1:{}:team:recall:{PASSWORD}\n", pg.port),
    )
    .unwrap();
    let out = a
        .cmd()
        .env("PGPASSFILE", &pgpass)
        .args(["sync", "--status"])
        .output()
        .unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{all}");
    assert!(all.contains("hosts seen:"), "{all}");
    assert!(!all.contains(PASSWORD));
    // A URL with the password in it is masked everywhere it is shown.
    let b = Host::new(&env, "b");
    b.init(&pg);
    let all = b.run(&["sync", "--status"]);
    assert!(all.contains("recall:***@127.0.0.1"), "{all}");
    assert!(!all.contains(PASSWORD), "{all}");
}

#[test]
fn tls_require_and_verify_full_work_and_plain_is_refused() {
    let Some(pg) = Pg::start_tls() else { return };
    let env = Env::new();
    let a = Host::new(&env, "a");
    let base = pg.url().replace("127.0.0.1", "localhost");
    let out = a.out(&[
        "sync",
        "--init",
        &format!("{base}?sslmode=disable"),
        "--team",
        TEAM,
    ]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a plain connection must be refused"
    );
    a.run(&[
        "sync",
        "--init",
        &format!("{base}?sslmode=require"),
        "--team",
        TEAM,
    ]);
    let verify = format!(
        "{base}?sslmode=verify-full&sslrootcert={}",
        pg.ca().display()
    );
    a.run(&["sync", "--init", &verify, "--team", TEAM]);
    a.add("tls", "The team database only speaks TLS");
    assert!(a.sync().contains("pushed 1"));
    // verify-full against the public roots must fail: the CA is private.
    let out = a.out(&[
        "sync",
        "--init",
        &format!("{base}?sslmode=verify-full"),
        "--team",
        TEAM,
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("certificate") || err.contains("sslrootcert"),
        "{err}"
    );
}

#[test]
fn a_read_only_role_can_pull_but_not_push() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    let (a, ci) = (Host::new(&env, "a"), Host::new(&env, "ci"));
    a.init(&pg);
    a.add("style", "We format with rustfmt defaults");
    a.sync();
    // The read-only role of docs/team-memory.md.
    pg.sql(
        "team",
        "CREATE ROLE recall_reader LOGIN PASSWORD 'reader-pw-123';
         GRANT CONNECT ON DATABASE team TO recall_reader;
         GRANT USAGE ON SCHEMA public TO recall_reader;
         GRANT SELECT ON recall_schema, recall_entries, recall_hosts TO recall_reader;",
    );
    let url = format!(
        "postgres://recall_reader:reader-pw-123@127.0.0.1:{}/team",
        pg.port
    );
    let out = ci.out(&["sync", "--init", &url, "--team", TEAM]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("may not") || err.contains("permission"),
        "{err}"
    );
    ci.run(&["sync", "--pull-only"]);
    assert_eq!(
        ci.body("style").as_deref(),
        Some("We format with rustfmt defaults")
    );
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
    let said = in_repo("h1", &r1, "alice", &["sync", "--init", &pg.url()]);
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
    in_repo("h2", &r2, "alice", &["sync", "--init", &pg.url()]);
    let listed = in_repo("h2", &r2, "alice", &["record", "list", "--format", "json"]);
    assert!(
        listed.contains("Run clippy") && listed.contains("Answer tersely"),
        "{listed}"
    );
    // Bob shares the project but not Alice's preferences.
    in_repo("h3", &r2, "bob", &["sync", "--init", &pg.url()]);
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

#[test]
fn postgres_stopping_mid_sync_loses_nothing_and_the_next_sync_finishes() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    let [a, b] = joined(&env, &pg, ["a", "b"]);
    for i in 0..40 {
        let lines: Vec<String> = (0..200)
            .map(|j| format!(r#"{{"role":"user","content":"session {i} line {j} about gizmo{i}x{j} and more words to make it longer","session_id":"s{i}"}}"#))
            .collect();
        std::fs::write(
            env.tmp.path().join(format!("s{i}.jsonl")),
            lines.join("\n") + "\n",
        )
        .unwrap();
    }
    a.run(&[
        "index",
        env.tmp.path().to_str().unwrap(),
        "--kind",
        "session",
    ]);
    let child = a.std_cmd(&["sync"]);
    std::thread::sleep(std::time::Duration::from_millis(150));
    pg.stop();
    let out = child.wait_with_output().unwrap();
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("run `recall sync` again") || err.contains("PostgreSQL runs there"),
            "{err}"
        );
    }
    let out = a.out(&["sync"]);
    assert_eq!(out.status.code(), Some(2), "the server is down");
    pg.restart();
    a.sync();
    b.sync();
    for i in [0, 17, 39] {
        assert!(
            !b.hit_ids(&format!("gizmo{i}x199")).is_empty(),
            "session {i} missing on b"
        );
    }
    let n = pg.sql(
        "team",
        "SELECT count(*), count(DISTINCT key) FROM recall_entries",
    );
    let (all, distinct) = n.split_once('|').unwrap();
    assert_eq!(all, distinct, "duplicated rows");
}

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
    assert!(got_c, "recall serve never pulled the record");
}
