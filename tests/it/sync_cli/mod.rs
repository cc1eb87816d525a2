//! Team memory end to end: several hosts (several homes on one machine)
//! syncing through a real PostgreSQL server the test starts itself.
//!
//! This file holds the hosts every part uses; the tests are in one file
//! per concern: `exchange` (what travels between hosts and how it
//! converges), `connection` (the server: errors, credentials, TLS, roles, a
//! server that stops) and `background` (syncs nobody waits for: hooks,
//! `--watch`, `recall serve`), `deletes` (tombstones reaching every host,
//! read-only ones included), `leftovers` (what a sync killed mid-pull
//! leaves on disk), `people` (each person's user scope bound to their
//! database login) and `roles` (the roles of docs/team-memory.md, run as
//! written).

mod background;
mod connection;
mod deletes;
mod exchange;
mod leftovers;
mod people;
mod roles;

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::pg::Pg;
use crate::common::Env;
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
        self.std_cmd_env(args, &[])
    }

    /// The same, with more variables set.
    fn std_cmd_env(&self, args: &[&str], vars: &[(&str, &str)]) -> std::process::Child {
        std::process::Command::new(assert_cmd::cargo::cargo_bin("recall"))
            .envs(vars.iter().copied())
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

    /// Give this home the host name `host` (`[sync] host`).
    fn set_name(&self, host: &str) {
        let cfg = self.home.join("config.toml");
        let text = std::fs::read_to_string(&cfg).unwrap_or_default();
        let kept: Vec<&str> = text.lines().filter(|l| !l.starts_with("host = ")).collect();
        let text = kept.join("\n") + "\n";
        let text = match text.contains("[sync]\n") {
            true => text.replace("[sync]\n", &format!("[sync]\nhost = \"{host}\"\n")),
            false => format!("{text}\n[sync]\nhost = \"{host}\"\n"),
        };
        std::fs::create_dir_all(&self.home).unwrap();
        std::fs::write(&cfg, text).unwrap();
    }

    /// The paths of the project's indexed sources, sorted: this host's
    /// own, and `sync://<host>:<path>` for those pulled from a teammate.
    fn source_paths(&self) -> Vec<String> {
        let show: Value = serde_json::from_str(&self.run(&["project", "show", "--json"])).unwrap();
        let db = Path::new(show["dir"].as_str().unwrap()).join("index.db");
        let conn = rusqlite::Connection::open(db).unwrap();
        let mut st = conn
            .prepare("SELECT path FROM sources ORDER BY path")
            .unwrap();
        let paths = st
            .query_map([], |r| r.get::<_, String>(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        paths
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

/// The URL of a read-only role (`recall_reader`, made on first use) that
/// may read every recall table and write none.
fn reader_url(pg: &Pg) -> String {
    let exists = pg.sql(
        "team",
        "SELECT count(*) FROM pg_roles WHERE rolname = 'recall_reader'",
    );
    if exists == "0" {
        pg.sql(
            "team",
            "CREATE ROLE recall_reader LOGIN PASSWORD 'reader-pw-123';
             GRANT CONNECT ON DATABASE team TO recall_reader;
             GRANT USAGE ON SCHEMA public TO recall_reader;
             GRANT SELECT ON ALL TABLES IN SCHEMA public TO recall_reader;",
        );
    }
    format!(
        "postgres://recall_reader:reader-pw-123@127.0.0.1:{}/team",
        pg.port
    )
}

/// The URL of the member login `login` (made on first use, with the
/// grants of docs/team-memory.md), mapped to the person `person` unless
/// `None`. The recall tables must exist.
fn member_url(pg: &Pg, login: &str, person: Option<&str>) -> String {
    let exists = pg.sql(
        "team",
        &format!("SELECT count(*) FROM pg_roles WHERE rolname = '{login}'"),
    );
    if exists == "0" {
        pg.sql(
            "team",
            &format!(
                "DO $$ BEGIN
                   IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'recall_member') THEN
                     CREATE ROLE recall_member NOLOGIN;
                     GRANT USAGE ON SCHEMA public TO recall_member;
                     GRANT SELECT, INSERT, UPDATE, DELETE ON recall_entries, recall_hosts TO recall_member;
                     GRANT SELECT, INSERT, UPDATE ON recall_horizons TO recall_member;
                     GRANT SELECT ON recall_schema TO recall_member;
                     GRANT USAGE ON SEQUENCE recall_order TO recall_member;
                   END IF;
                 END $$;
                 CREATE ROLE {login} LOGIN PASSWORD '{login}-pw-123' IN ROLE recall_member;"
            ),
        );
        if let Some(p) = person {
            pg.sql(
                "team",
                &format!("INSERT INTO recall_people(login, person) VALUES ('{login}', '{p}')"),
            );
        }
    }
    format!(
        "postgres://{login}:{login}-pw-123@127.0.0.1:{}/team",
        pg.port
    )
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
