//! Shared setup for integration tests: a temporary home and a `recall`
//! command bound to it.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use tempfile::TempDir;

/// A temporary home with a default project name.
pub struct Env {
    pub tmp: TempDir,
    pub project: String,
}

impl Env {
    pub fn new() -> Env {
        Env {
            tmp: tempfile::tempdir().unwrap(),
            project: "alpha".into(),
        }
    }

    pub fn home(&self) -> PathBuf {
        self.tmp.path().join("home")
    }

    /// `recall --home H --project P ...` with a clean environment.
    pub fn cmd(&self) -> Command {
        self.cmd_in(&self.project)
    }

    /// The same, for another project.
    pub fn cmd_in(&self, project: &str) -> Command {
        self.cmd_with(&self.home(), project)
    }

    /// The same, with another home.
    pub fn cmd_with(&self, home: &Path, project: &str) -> Command {
        Command::from_std(self.std_cmd_with(home, project))
    }

    /// A `std::process::Command` with the same setup, for tests that need
    /// to spawn the binary and act while it runs.
    pub fn std_cmd(&self) -> std::process::Command {
        self.std_cmd_with(&self.home(), &self.project)
    }

    /// `recall --home HOME --project PROJECT` in the temporary folder, with
    /// none of the `RECALL_*` variables that would change what it does.
    fn std_cmd_with(&self, home: &Path, project: &str) -> std::process::Command {
        let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("recall"));
        c.env_remove("RECALL_HOME")
            .env_remove("RECALL_PROJECT")
            .env_remove("RECALL_LIMIT")
            .env_remove("RECALL_MAX_BODY_CHARS")
            .env("NO_COLOR", "1")
            .arg("--home")
            .arg(home)
            .arg("--project")
            .arg(project)
            .current_dir(self.tmp.path());
        c
    }

    /// Run and return stdout; panics with stderr when the exit code differs.
    pub fn run(&self, args: &[&str]) -> String {
        let out = self.cmd().args(args).output().unwrap();
        assert!(
            out.status.success(),
            "recall {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// The current project's store folder (`project show --json`).
    pub fn project_dir(&self) -> PathBuf {
        let v: serde_json::Value =
            serde_json::from_str(&self.run(&["project", "show", "--json"])).unwrap();
        PathBuf::from(v["dir"].as_str().unwrap())
    }

    /// `run` with its stdout read as JSON.
    pub fn run_json(&self, args: &[&str]) -> serde_json::Value {
        let out = self.run(args);
        serde_json::from_str(&out)
            .unwrap_or_else(|e| panic!("recall {args:?}: not JSON ({e}): {out}"))
    }

    /// Write the home's `config.toml`, creating the home if need be.
    pub fn write_config(&self, toml: &str) {
        std::fs::create_dir_all(self.home()).unwrap();
        std::fs::write(self.home().join("config.toml"), toml).unwrap();
    }

    /// A connection of the test's own to the project's `index.db`, to read
    /// or change it behind recall's back.
    pub fn open_index(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(self.project_dir().join("index.db")).unwrap()
    }

    /// `record add` and return the new id.
    pub fn add(&self, category: &str, key: &str, text: &str) -> String {
        let out = self.run(&["record", "add", "--category", category, "--key", key, text]);
        out.split_whitespace().nth(1).unwrap().to_string()
    }

    /// `record add --scope user` and return the new id.
    pub fn add_user(&self, category: &str, key: &str, text: &str) -> String {
        let out = self.run(&[
            "record",
            "add",
            "--scope",
            "user",
            "--category",
            category,
            "--key",
            key,
            text,
        ]);
        out.split_whitespace().nth(1).unwrap().to_string()
    }

    /// `recall index PATH` (a file or a folder); panics unless it exits 0.
    pub fn index(&self, path: &Path) {
        self.run(&["index", path.to_str().unwrap()]);
    }

    /// Write `lines` (neutral transcript JSON lines) to `name` in the temp
    /// folder and index it; returns the file's path.
    pub fn index_transcript(&self, name: &str, lines: &[&str]) -> PathBuf {
        let path = self.tmp.path().join(name);
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        self.index(&path);
        path
    }

    /// `doctor`: its exit code and stdout.
    pub fn doctor(&self) -> (Option<i32>, String) {
        let out = self.cmd().arg("doctor").output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    }

    /// `query --format json` parsed.
    pub fn query_json(&self, project: &str, q: &str) -> serde_json::Value {
        let out = self
            .cmd_in(project)
            .args(["query", "--format", "json", q])
            .output()
            .unwrap();
        assert!(
            out.status.code().unwrap() <= 1,
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// Ids of the hits of a JSON query.
    pub fn hit_ids(&self, project: &str, q: &str) -> Vec<String> {
        self.query_json(project, q)["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["id"].as_str().unwrap().to_string())
            .collect()
    }
}

/// Every file under `dir` with its contents, sorted: a snapshot of disk.
pub fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut v: Vec<_> = walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| (e.path().to_path_buf(), std::fs::read(e.path()).unwrap()))
        .collect();
    v.sort();
    v
}

/// The only record file of a category folder in a project.
pub fn record_files(home: &Path) -> Vec<PathBuf> {
    let mut v: Vec<_> = walkdir::WalkDir::new(home)
        .into_iter()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
        .map(|e| e.path().to_path_buf())
        .collect();
    v.sort();
    v
}

/// The file of a project record written by hand (`source: manual`, created
/// and updated at 2026-01-01), as a person or a `git pull` would leave it.
pub fn record_text(id: &str, key: &str, category: &str, body: &str) -> String {
    dated_record_text(id, key, category, "2026-01-01T00:00:00Z", body)
}

/// [`record_text`] created and updated at `at` (RFC 3339).
pub fn dated_record_text(id: &str, key: &str, category: &str, at: &str, body: &str) -> String {
    format!(
        "---\nid: {id}\nkey: {key}\ncategory: {category}\nscope: project\nsource: manual\n\
         created: {at}\nupdated: {at}\n---\n\n{body}\n"
    )
}

/// Whether `needle` occurs anywhere in `hay` (a secret or a deleted word
/// left in a file's bytes).
pub fn contains_bytes(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Panics with the command's stderr unless it exited 0.
pub fn assert_success(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The schema version (`PRAGMA user_version`) of the index at `db`.
pub fn user_version(db: &Path) -> i64 {
    rusqlite::Connection::open(db)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap()
}

/// Set the index at `db` back to schema 8, from before `sessions.work`
/// (and without what later schemas added: the vector tables of 10 and 11,
/// `sessions.did` of 12, the index of 14, the passages' roots of 15).
pub fn set_back_before_session_work(db: &Path) {
    rusqlite::Connection::open(db)
        .unwrap()
        .execute_batch(
            "DROP TABLE chunk_vectors; DROP TABLE record_vectors; DROP TABLE ticket_vectors;
             DELETE FROM meta WHERE key = 'index_uid' OR key LIKE 'vectors_epoch_%';
             DROP INDEX sessions_roots;
             DROP TABLE chunk_roots; DROP TABLE root_sessions;
             ALTER TABLE sessions DROP COLUMN did; ALTER TABLE sessions DROP COLUMN work;
             PRAGMA user_version = 8;",
        )
        .unwrap();
}

/// `<crate>/testdata/<sub>`: the fixed corpora, fixtures and fake
/// extractors the tests read.
pub fn testdata(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(sub)
}

/// The real agent transcripts (see [`shared_data`]).
pub fn agent_transcripts() -> Option<PathBuf> {
    shared_data("agent-transcripts")
}

/// `<crate>/../shared/data/<sub>` (or `$AGENT_TRANSCRIPTS_DIR` for the
/// agent transcripts), or `None` with "skipped" printed when it is missing
/// on this machine. With `RECALL_REQUIRE_SHARED=1` (CI) a missing folder
/// fails the test instead of skipping it.
pub fn shared_data(sub: &str) -> Option<PathBuf> {
    let path = match std::env::var_os("AGENT_TRANSCRIPTS_DIR") {
        Some(dir) if sub == "agent-transcripts" => PathBuf::from(dir),
        _ => Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/data")
            .join(sub),
    };
    if path.is_dir() {
        return Some(path);
    }
    let required = std::env::var("RECALL_REQUIRE_SHARED").is_ok_and(|v| v == "1");
    assert!(
        !required,
        "RECALL_REQUIRE_SHARED=1 but {} is missing: check out the shared data beside this repository",
        path.display()
    );
    eprintln!("skipped: ../shared/data not found ({})", path.display());
    None
}

pub mod pg;
pub mod server;
pub mod wait;

/// A record file written by hand that holds a GitHub token; the token.
pub fn hand_written_secret(env: &Env) -> String {
    let token = format!("ghp_{}", "Ab1cDefGhijKlmnOpqrStuvWxyz0123456789");
    let dir = env.project_dir().join("records/decisions");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("handsecret-abc123.md"),
        format!("---\nid: handsecret-abc123\nkey: handsecret\ncategory: decisions\nscope: project\nsource: manual\ncreated: 2026-01-01T00:00:00Z\nupdated: 2026-01-01T00:00:00Z\n---\n\nDeploy with token {token} on CI.\n"),
    )
    .unwrap();
    token
}
