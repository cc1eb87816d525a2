//! The server end: errors that say what, where and how to fix, credentials
//! from `~/.pgpass` or the environment (never shown), TLS, a read-only role,
//! and PostgreSQL stopping mid-sync.

use super::{joined, member_url, reader_url, Host, TEAM};
use crate::common::pg::{Pg, PASSWORD};
use crate::common::{assert_success, Env};

/// Regressions of `sync --watch`: a missing or malformed url, which no
/// retry can fix, was printed every round forever; it is an error at
/// once. And a watcher whose stderr reader went away crashed (exit 101,
/// `eprintln!` panicking on the next failed round); it syncs on.
#[test]
fn a_watcher_stops_on_what_no_retry_fixes_and_outlives_its_log_pipe() {
    let env = Env::new();
    let a = Host::new(&env, "a");
    for url in [None, Some("mysql://x@127.0.0.1/team")] {
        let mut c = a.cmd();
        if let Some(u) = url {
            c.env("RECALL_SYNC_URL", u);
        }
        let out = c
            .args(["sync", "--watch", "--interval", "0.2"])
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{url:?}: {err}");
        assert!(
            err.contains("no sync remote is set") || err.contains("not a PostgreSQL URL"),
            "{err}"
        );
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://u@127.0.0.1:{port}/team");
    let args = ["sync", "--watch", "--interval", "0.2"];
    let mut watcher = a.std_cmd_env(&args, &[("RECALL_SYNC_URL", &url)]);
    drop(watcher.stderr.take());
    // Rounds fail (nothing listens) and are reported to a closed stderr.
    std::thread::sleep(std::time::Duration::from_secs(2));
    let ended = watcher.try_wait().unwrap();
    let _ = watcher.kill();
    let _ = watcher.wait();
    assert_eq!(ended, None, "the watcher stopped");
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
    // Sharing without a remote works, and says nothing is sent until one
    // is set.
    let out = a.out(&["sync", "--share", "--team", TEAM]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("sharing this project as team")
            && err.contains("nothing is sent yet")
            && err.contains("--init"),
        "{err}"
    );
    // Unsharing, and unsharing again, as JSON (regression: --json printed
    // text), and --status refuses --pull-only rather than ignore it.
    let json = |args: &[&str]| -> serde_json::Value {
        serde_json::from_slice(&a.out(args).stdout).unwrap()
    };
    let v = json(&["sync", "--unshare", "--json"]);
    assert_eq!(
        (v["unshared"].as_bool(), v["team"].as_str()),
        (Some(true), Some(TEAM)),
        "{v}"
    );
    let v = json(&["sync", "--unshare", "--json"]);
    assert_eq!(v["unshared"], false, "{v}");
    let out = a.out(&["sync", "--status", "--pull-only"]);
    assert_eq!(out.status.code(), Some(2));
    a.run(&["sync", "--share", "--team", TEAM]);
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
    // Regression: the fix named only `[sync] url` in config.toml, where
    // nothing was yet: the URL came from --init.
    assert!(
        err.contains("the URL given to `recall sync --init`"),
        "{err}"
    );
    assert!(!err.contains("hunter2"), "the password was printed: {err}");
    // Regression: a server that takes the connection and never answers (a
    // stopped postmaster, a proxy) held `sync` for good, whatever
    // connect_timeout_secs said; and a password given as `?password=` was
    // printed.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let held: Vec<_> = silent.incoming().collect();
        drop(held);
    });
    std::fs::create_dir_all(&a.home).unwrap();
    std::fs::write(
        a.home.join("config.toml"),
        "[sync]\nconnect_timeout_secs = 1\n",
    )
    .unwrap();
    let url = format!("postgres://u@127.0.0.1:{port}/team?password=hunter2hunter2");
    let out = a
        .cmd()
        .args(["sync", "--init", &url])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("did not answer within 2 s"), "{err}");
    assert!(!err.contains("hunter2"), "the password was printed: {err}");
    std::fs::remove_file(a.home.join("config.toml")).unwrap();
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

/// Issue 36 item 4: the docs tell CI to run `--init` with the read-only
/// role, and it exited 2 ("permission denied for table recall_hosts")
/// after pulling everything, which stops a `set -e` script. With the
/// schema current it now pulls only and exits 0; a plain `recall sync`
/// from the role still says it may not push.
#[test]
fn r36_init_by_a_read_only_role_pulls_only() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    let (a, ci) = (Host::new(&env, "a"), Host::new(&env, "ci"));
    a.init(&pg);
    a.add("style", "We format with rustfmt defaults");
    a.sync();
    let url = reader_url(&pg);
    let out = ci.out(&["sync", "--init", &url, "--team", TEAM]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("pull only"), "{err}");
    assert_eq!(
        ci.body("style").as_deref(),
        Some("We format with rustfmt defaults")
    );
    ci.add("local", "A note this runner keeps");
    let out = ci.out(&["sync"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("may not"), "{err}");
    assert!(ci.run(&["sync", "--pull-only"]).contains("pulled 0"));
    // A server older than this recall: the reader cannot upgrade it, and
    // says who can (regression, review of stop 60: a member was told it
    // was a read-only role, and a plain sync to run `--init` itself).
    pg.sql("team", "DELETE FROM recall_schema WHERE version > 1");
    let out = ci.out(&["sync", "--init", &url, "--team", TEAM]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("this login may not upgrade it")
            && err.contains("the role that owns the recall tables"),
        "{err}"
    );
    let out = ci.out(&["sync", "--pull-only"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the role that owns the recall tables"),
        "{err}"
    );
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
    let mut child = a.std_cmd(&["sync"]);
    // Stop the server once the sync talks to it (a backend of the team
    // database other than this query's), or at once if it already ended.
    let talking = "SELECT count(*) FROM pg_stat_activity \
                   WHERE datname = 'team' AND pid <> pg_backend_pid()";
    while child.try_wait().unwrap().is_none() && pg.sql("team", talking).trim() == "0" {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
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

/// A server an older recall created (schema version 1, before push
/// receipts): a plain sync says to run `--init`, which upgrades it in
/// place, and what the server held is still there.
#[test]
fn an_older_server_schema_is_upgraded_by_init_and_keeps_its_rows() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    let [a, b] = joined(&env, &pg, ["a", "b"]);
    a.add("port", "The API listens on port 8080");
    a.sync();
    down_to(&pg, 1);
    let out = b.out(&["sync"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("schema 1") && err.contains("recall sync --init"),
        "{err}"
    );
    b.init(&pg);
    assert_eq!(
        pg.sql("team", "SELECT max(version) FROM recall_schema"),
        "6"
    );
    b.sync();
    assert_eq!(
        b.body("port").as_deref(),
        Some("The API listens on port 8080")
    );
}

/// Upgrading a server from schema 2 (before the compaction horizon) is
/// still one `--init` by the owner: the roles that could read and write
/// the old tables can read and move the horizon, with no new grant, and a
/// reader that missed a delete before the upgrade drops it after.
#[test]
fn r36_an_upgraded_server_keeps_its_members_and_readers_syncing() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    let owner = Host::new(&env, "owner");
    owner.init(&pg);
    down_to(&pg, 2);
    // The grants of schema 2's docs, then the upgrade.
    pg.sql(
        "team",
        "CREATE ROLE member LOGIN PASSWORD 'member-pw-123';
         GRANT USAGE ON SCHEMA public TO member;
         GRANT SELECT, INSERT, UPDATE, DELETE ON recall_entries, recall_hosts TO member;
         GRANT SELECT ON recall_schema TO member;
         GRANT USAGE ON SEQUENCE recall_order TO member;
         CREATE ROLE reader LOGIN PASSWORD 'reader-pw-123';
         GRANT USAGE ON SCHEMA public TO reader;
         GRANT SELECT ON recall_schema, recall_entries, recall_hosts TO reader;",
    );
    owner.init(&pg);
    let url = |who: &str| format!("postgres://{who}:{who}-pw-123@127.0.0.1:{}/team", pg.port);
    let a = Host::new(&env, "a");
    a.run(&["sync", "--init", &url("member"), "--team", TEAM]);
    a.add("doomed", "The ibis-mauve-2290 flag goes soon");
    a.sync();
    let ci = Host::new(&env, "ci");
    ci.run(&["sync", "--init", &url("reader"), "--team", TEAM]);
    assert!(ci.body("doomed").is_some());
    // Schema 2 compacted the tombstone before the reader read it.
    a.run(&["record", "delete", "doomed"]);
    a.sync();
    pg.sql("team", "DELETE FROM recall_entries WHERE deleted");
    down_to(&pg, 2);
    owner.init(&pg);
    ci.run(&["sync", "--pull-only"]);
    assert_eq!(ci.body("doomed"), None);
    // The member may move the horizon when it compacts; the reader may not.
    assert_eq!(
        pg.sql(
            "team",
            "SELECT has_table_privilege('member', 'recall_horizons', 'INSERT')
                    AND has_table_privilege('member', 'recall_horizons', 'UPDATE'),
                    has_table_privilege('reader', 'recall_horizons', 'SELECT'),
                    has_table_privilege('reader', 'recall_horizons', 'INSERT')"
        ),
        "t|t|f"
    );
    a.add("later", "Written after the upgrade");
    a.sync();
    a.run(&["record", "delete", "later"]);
    a.sync();
    owner.sync();
    a.sync();
    assert_eq!(
        pg.sql("team", "SELECT count(*) FROM recall_entries WHERE deleted"),
        "0"
    );
}

/// Take the server back to the schema `version` an older recall made,
/// undoing each later migration, keeping the rows.
/// Regression (review, stop 62): a member's `--init` on a database with
/// no recall tables (the owner has not run it yet, or the URL names
/// another database) said a read-only role may pull but not push.
#[test]
fn r_a_members_init_before_the_owners_says_who_must_run_it() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    Host::new(&env, "owner").init(&pg);
    let url = member_url(&pg, "carol", Some("carol")).replace("/team", "/elsewhere");
    pg.sql("team", "CREATE DATABASE elsewhere");
    let out = Host::new(&env, "carol").out(&["sync", "--init", &url, "--team", TEAM]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("has no recall tables, and this login may not create them")
            && err.contains("owner role runs `recall sync --init` there first")
            && !err.contains("read-only"),
        "{err}"
    );
}

fn down_to(pg: &Pg, version: u32) {
    let undo = [
        (2, "ALTER TABLE recall_hosts DROP COLUMN push_token"),
        (3, "DROP TABLE recall_horizons"),
        (4, "ALTER TABLE recall_entries DROP COLUMN source"),
        (
            5,
            "DROP POLICY recall_teams ON recall_entries; DROP POLICY recall_own_scope ON recall_entries;
             DROP POLICY recall_teams ON recall_hosts; DROP POLICY recall_own_scope ON recall_hosts;
             ALTER TABLE recall_entries DISABLE ROW LEVEL SECURITY;
             ALTER TABLE recall_hosts DISABLE ROW LEVEL SECURITY;
             DROP FUNCTION recall_person(); DROP TABLE recall_people",
        ),
        (
            6,
            "DROP TRIGGER recall_sign ON recall_entries; DROP FUNCTION recall_sign()",
        ),
    ];
    let now: u32 = pg
        .sql("team", "SELECT max(version) FROM recall_schema")
        .parse()
        .unwrap();
    for (v, sql) in undo.iter().rev() {
        if *v > version && *v <= now {
            pg.sql("team", sql);
        }
    }
    pg.sql(
        "team",
        &format!("DELETE FROM recall_schema WHERE version > {version}"),
    );
}

/// Regression: a `recall sync` behind another (a background sync stuck on
/// a silent server) waited on the home's lock without a word.
#[cfg(target_os = "linux")]
#[test]
fn r_a_sync_behind_another_says_it_waits_and_for_whom() {
    let env = Env::new();
    let a = Host::new(&env, "a");
    std::fs::create_dir_all(&a.home).unwrap();
    let lock_path = a.home.join("sync.lock");
    std::fs::write(&lock_path, "4242").unwrap();
    let lock = std::fs::File::open(&lock_path).unwrap();
    lock.lock().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://u@127.0.0.1:{port}/team");
    let run = a.std_cmd_env(&["sync"], &[("RECALL_SYNC_URL", &url)]);
    crate::common::wait::for_wchan(run.id(), "locks_lock_inode_wait");
    lock.unlock().unwrap();
    let out = run.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("waiting for another `recall sync` of this home to end (process 4242 holds"),
        "{err}"
    );
}
