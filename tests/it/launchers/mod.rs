//! The real launchers, end to end: Claude Code, Codex and Gemini CLI (from
//! npm, pinned in `.ci/run`) run against a fake model server on loopback,
//! with recall installed the way each launcher expects (`recall hook
//! install`, or the plugin and extension in this repository). For each:
//! the hooks fire, the recalled record reaches the model's request,
//! recall's MCP tools are offered and a call round-trips, and the
//! transcript the launcher wrote is indexed after the session.
//!
//! The launchers are found in `RECALL_TEST_LAUNCHERS` (a folder holding
//! `node_modules/.bin`), else in `target/launchers`. Outside CI a test
//! whose launcher is missing skips and says how to install it; in CI (`CI`
//! or `RECALL_REQUIRE_SHARED` set) it fails.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

mod claude;
mod codex;
mod extract;
pub mod fake_model;
mod gemini;

/// The versions `.ci/run` installs (and this suite was written against).
pub const CLAUDE_CODE: &str = "@anthropic-ai/claude-code@2.1.197";
pub const CODEX: &str = "@openai/codex@0.171.0";
pub const GEMINI_CLI: &str = "@google/gemini-cli@0.61.0";

/// The record every launcher's first prompt should get.
pub const RECORD: &str = "Deploys go through make ship-it from the release branch.";

/// What the fake model does in a session: call recall's `recall`, then
/// its `remember`, then answer with `codeword` (a word only its answer
/// holds, to find the indexed transcript by).
pub fn two_tool_script(codeword: &str) -> fake_model::Script {
    fake_model::Script {
        tools: vec![
            (
                "recall".into(),
                serde_json::json!({"query": "how do we deploy"}),
            ),
            (
                "remember".into(),
                serde_json::json!({"text": "Release notes are drafted in docs/RELEASING.md before tagging.",
                       "category": "procedures"}),
            ),
        ],
        answer: format!("Done. The codeword is {codeword}."),
    }
}

/// The folder the launchers are installed in.
fn launchers_dir() -> PathBuf {
    std::env::var_os("RECALL_TEST_LAUNCHERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/launchers"))
}

/// The launcher `bin` (`claude`, `codex`, `gemini`), or `None` (the test
/// skips) when it is not installed outside CI.
pub fn launcher(bin: &str) -> Option<PathBuf> {
    let path = launchers_dir().join("node_modules/.bin").join(bin);
    // Installed and working (a package whose install step did not run
    // leaves a placeholder that is not a program).
    let runs = Command::new(&path)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if runs {
        return Some(path);
    }
    let how = format!(
        "bash scripts/install-launchers.sh {}",
        launchers_dir().display()
    );
    let ci =
        std::env::var_os("CI").is_some() || std::env::var_os("RECALL_REQUIRE_SHARED").is_some();
    assert!(!ci, "{bin} does not run at {}: {how}", path.display());
    eprintln!("skipped: {bin} is not installed (or does not run); `{how}` installs the launchers");
    None
}

/// One person's machine: a home folder (the launchers' settings and
/// transcripts), recall's home, and a project (a git checkout).
pub struct Machine {
    _tmp: tempfile::TempDir,
    pub home: PathBuf,
    pub recall_home: PathBuf,
    pub project: PathBuf,
}

impl Machine {
    pub fn new() -> Machine {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let home = root.join("home");
        let recall_home = root.join("recall-home");
        let project = root.join("work/shop");
        for d in [&home, &recall_home, &project] {
            std::fs::create_dir_all(d).unwrap();
        }
        let git = Command::new("git")
            .args(["init", "-q"])
            .current_dir(&project)
            .status();
        assert!(git.is_ok_and(|s| s.success()), "git init failed");
        Machine {
            _tmp: tmp,
            home,
            recall_home,
            project,
        }
    }

    /// PATH for the launcher and its hooks: recall (this build) first.
    fn path(&self, launcher: &Path) -> String {
        let recall = Path::new(env!("CARGO_BIN_EXE_recall")).parent().unwrap();
        let node = which("node").and_then(|n| n.parent().map(Path::to_path_buf));
        let mut parts = vec![
            recall.to_path_buf(),
            launcher.parent().unwrap().to_path_buf(),
        ];
        parts.extend(node);
        parts.extend(["/usr/local/bin", "/usr/bin", "/bin"].map(PathBuf::from));
        std::env::join_paths(parts).unwrap().into_string().unwrap()
    }

    /// A command run in the project with this machine's environment only.
    pub fn command(&self, program: &Path, launcher: &Path) -> Command {
        let mut c = Command::new(program);
        c.current_dir(&self.project)
            .env_clear()
            .env("HOME", &self.home)
            .env("RECALL_HOME", &self.recall_home)
            .env("PATH", self.path(launcher))
            .env("LANG", "C.UTF-8")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null());
        c
    }

    /// `recall ARGS` in the project; its stdout, after checking it
    /// succeeded.
    pub fn recall(&self, launcher: &Path, args: &[&str]) -> String {
        self.recall_exiting(launcher, args, &[0])
    }

    /// `recall ARGS` in the project; its stdout, after checking it exited
    /// with one of `codes` (`query` exits 1 when nothing was found).
    fn recall_exiting(&self, launcher: &Path, args: &[&str], codes: &[i32]) -> String {
        let out = self
            .command(Path::new(env!("CARGO_BIN_EXE_recall")), launcher)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.code().is_some_and(|c| codes.contains(&c)),
            "recall {args:?}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The project's memory starts with one decision.
    pub fn add_record(&self, launcher: &Path) {
        self.recall(
            launcher,
            &[
                "record",
                "add",
                "--category",
                "decisions",
                "--key",
                "deploy",
                RECORD,
            ],
        );
    }

    /// Waits (up to 30 s: the session-end hook may index in a child
    /// process) until `recall query WORD` finds a session; its hits. Until
    /// then the query finds nothing and exits 1 (a regression: CI failed
    /// when the child had not indexed the chat by the first query).
    pub fn wait_for_session_hit(&self, launcher: &Path, word: &str) -> Value {
        let start = Instant::now();
        loop {
            let out = self.recall_exiting(launcher, &["query", "--format", "json", word], &[0, 1]);
            let v: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
            let found = v["hits"]
                .as_array()
                .is_some_and(|h| h.iter().any(|h| h["kind"] == "session"));
            if found || start.elapsed() > Duration::from_secs(30) {
                return v;
            }
            std::thread::sleep(Duration::from_millis(300));
        }
    }

    /// The text of the records the agent wrote (frontmatter `source:
    /// agent`).
    pub fn agent_records(&self) -> Vec<String> {
        walkdir::WalkDir::new(&self.recall_home)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
            .filter_map(|e| std::fs::read_to_string(e.path()).ok())
            .filter(|t| t.lines().any(|l| l.trim() == "source: agent"))
            .collect()
    }
}

fn which(bin: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(bin))
        .find(|p| p.is_file())
}

/// Runs `c` to its end (at most `secs` seconds; a launcher that hangs is
/// killed and the test fails with what it printed).
pub fn run(c: &mut Command, secs: u64) -> Output {
    use std::io::Read;
    let mut child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Drain both pipes while waiting, so a chatty launcher never blocks.
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            buf
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{c:?} ran over {secs} s\nstdout: {}\nstderr: {}",
                String::from_utf8_lossy(&stdout.join().unwrap()),
                String::from_utf8_lossy(&stderr.join().unwrap())
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

/// Asserts `out` succeeded, showing what it printed when not.
pub fn assert_ran(what: &str, out: &Output) {
    assert!(
        out.status.success(),
        "{what} exited {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `.ci/run` installs, through the script, the versions this suite was
/// written against.
#[test]
fn ci_installs_the_launcher_versions_the_suite_names() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let ci = std::fs::read_to_string(root.join(".ci/run")).unwrap();
    assert!(
        ci.contains("bash scripts/install-launchers.sh \"$LAUNCHERS\""),
        "{ci}"
    );
    let script = std::fs::read_to_string(root.join("scripts/install-launchers.sh")).unwrap();
    let line = script
        .lines()
        .find(|l| l.starts_with("LAUNCHER_PKGS=("))
        .expect("the script names the launcher packages");
    for pkg in [CLAUDE_CODE, CODEX, GEMINI_CLI] {
        assert!(line.contains(pkg), "{pkg} not in {line}");
    }
}
