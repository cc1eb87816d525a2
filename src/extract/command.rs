//! The `command` extractor: an external program (for example a wrapper
//! around an LLM command line) that reads a JSON request on stdin and writes
//! a JSON response on stdout.
//!
//! Request (version 1):
//! ```json
//! {"version": 1,
//!  "session": {"id": "...", "title": "...", "launcher": "claude-code", "cwd": "..."},
//!  "transcript": "user: ...\n\nassistant: ...",      // at most 12,000 characters
//!  "existing": ["text of a recent record", ...],      // do not repeat these
//!  "categories": ["decisions", "procedures", "principles", "incidents", "preferences"],
//!  "max_facts": 5}
//! ```
//! The transcript, the title and the folder are redacted as the index is
//! (`[REDACTED:<kind>]`): the request leaves the process.
//!
//! Response (`scope` is checked, and the fact filed by recall's own test;
//! see `fact`): `{"facts": [{"category": "decisions", "scope": "project|user",
//! "key": "short title", "text": "the fact", "confidence": 0.8,
//! "evidence": ["message id", ...]}]}`.
//!
//! The program runs under `sh -c` with a timeout, in a process group of
//! its own: a timeout ends the whole group (the program and what it
//! started, such as a model's CLI), and so does recall's end by Ctrl-C or
//! SIGTERM. What the program leaves running in the background when it
//! exits is ended too, since it would hold the output pipe open. A
//! timeout, a non-zero exit or unreadable output is an error for that
//! session only. What it
//! says back (its stderr, a rejected fact's key and reason) is stored and
//! shown, so it is redacted first.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt as _;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::rules::Candidate;
use crate::error::{Error, Result};
use crate::records::Category;
use crate::secrets;
use crate::store::Scope;

/// The request written to the program's stdin.
#[derive(Debug, Serialize)]
pub struct ExtractRequest<'a> {
    pub version: u32,
    pub session: SessionInfo<'a>,
    pub transcript: String,
    pub existing: &'a [String],
    pub categories: Vec<&'static str>,
    pub max_facts: usize,
}

/// Session details in a request.
#[derive(Debug, Serialize)]
pub struct SessionInfo<'a> {
    pub id: &'a str,
    pub title: Option<&'a str>,
    pub launcher: &'a str,
    pub cwd: Option<&'a str>,
}

#[derive(Debug, Deserialize)]
struct Response {
    /// Read one by one, so one malformed fact drops only itself.
    facts: Vec<serde_json::Value>,
}

/// What a response held: the usable facts, and why the others were not.
#[derive(Debug, Default)]
pub struct Facts {
    pub candidates: Vec<Candidate>,
    /// `fact N (key): reason`, one per fact that could not be used.
    pub rejected: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct Fact {
    category: String,
    #[serde(default)]
    scope: Option<String>,
    key: String,
    text: String,
    confidence: f64,
    #[serde(default)]
    evidence: Vec<String>,
}

/// Run `cmd` on `req`; the facts it returns as candidates.
pub fn run(cmd: &str, req: &ExtractRequest, timeout: Duration) -> Result<Facts> {
    let input = serde_json::to_vec(req)?;
    let stdout = run_program(cmd, input, timeout, &mut Command::new("sh"))?;
    parse_response(&stdout)
}

/// Run `sh -c cmd` (set up further in `sh`: its folder, its environment)
/// with `input` on stdin, under `timeout`; its stdout. A timeout or a
/// non-zero exit is an error naming the extractor and quoting the end of
/// its stderr, redacted.
pub(super) fn run_program(
    cmd: &str,
    input: Vec<u8>,
    timeout: Duration,
    sh: &mut Command,
) -> Result<Vec<u8>> {
    end_with_recall();
    let mut child = sh
        .arg("-c")
        .arg(cmd)
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            Error::invalid(format!(
                "cannot start the extractor command `{}`: {e}",
                secrets::redact(cmd).0
            ))
        })?;
    // Write stdin from a thread so a program that does not read it cannot
    // block us; read stdout/stderr from threads so a full pipe cannot either.
    let mut stdin = child.stdin.take();
    let writer = std::thread::spawn(move || {
        if let Some(s) = stdin.as_mut() {
            let _ = s.write_all(&input);
        }
    });
    let mut out = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(o) = out.as_mut() {
            let _ = o.take(8 << 20).read_to_end(&mut buf);
        }
        buf
    });
    let mut err = child.stderr.take();
    let err_reader = std::thread::spawn(move || {
        let mut buf = String::new();
        if let Some(e) = err.as_mut() {
            let _ = e.take(64 << 10).read_to_string(&mut buf);
        }
        buf
    });
    let group = Group::of(&child);
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child
            .try_wait()
            .map_err(|e| Error::invalid(format!("extractor command: {e}")))?
        {
            break s;
        }
        if start.elapsed() > timeout {
            drop(group);
            let _ = child.wait();
            return Err(Error::invalid(format!(
                "the extractor command timed out after {}s",
                timeout.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // What it left running (`cmd &`) would hold stdout open for ever.
    drop(group);
    let _ = writer.join();
    let stdout = reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    if !status.success() {
        // Redacted before it is cut, so a cut cannot hide a secret's end
        // from the detector: the message is stored and shown by
        // `extract --status`.
        let (stderr, _) = secrets::redact(stderr.trim());
        let tail = crate::text::truncate_chars(&stderr, 300).to_string();
        return Err(Error::invalid(format!(
            "the extractor command failed ({status}): {tail}"
        )));
    }
    Ok(stdout)
}

/// The running extractor's process group, ended when dropped: on a
/// timeout, an error, or when the program has exited.
struct Group(libc::pid_t);

impl Group {
    fn of(child: &std::process::Child) -> Group {
        let group = child.id() as libc::pid_t;
        RUNNING.store(group, Ordering::SeqCst);
        Group(group)
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        end_group(self.0);
        RUNNING.store(0, Ordering::SeqCst);
    }
}

/// Kill every process of the extractor's group.
fn end_group(group: libc::pid_t) {
    // SAFETY: kill(2) with a negative pid signals a process group; no
    // memory is touched. A group already gone is ESRCH, which is fine.
    unsafe { libc::kill(-group, libc::SIGKILL) };
}

/// The process group of the extractor running now (0: none), for the
/// signal handler [`end_with_recall`] installs.
static RUNNING: AtomicI32 = AtomicI32::new(0);

/// Make Ctrl-C, SIGTERM and SIGHUP end the running extractor's group, then
/// recall as they would have (once per process). In a group of its own,
/// the extractor no longer gets the terminal's Ctrl-C itself.
fn end_with_recall() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // A signal this process was started ignoring (`nohup`, a
        // background job of a script) stays ignored.
        let ignored = |signal: libc::c_int| {
            // SAFETY: sigaction(2) with no new action only reads the
            // current one into `old`, a zeroed struct of the right type.
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                libc::sigaction(signal, std::ptr::null(), &mut old) == 0
                    && old.sa_sigaction == libc::SIG_IGN
            }
        };
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            if ignored(signal) {
                continue;
            }
            let action = move || {
                let group = RUNNING.load(Ordering::SeqCst);
                if group > 0 {
                    end_group(group);
                }
                let _ = signal_hook::low_level::emulate_default_handler(signal);
            };
            // SAFETY: the action only loads an atomic, calls kill(2) and
            // re-raises the signal with its default action, all
            // async-signal-safe (`emulate_default_handler` is made for
            // signal handlers).
            let _ = unsafe { signal_hook::low_level::register(signal, action) };
        }
    });
}

/// Turn the program's stdout into candidates. Output that is not a facts
/// response fails the session; a single fact with a bad category, scope or
/// missing field is only rejected, with its reason.
pub fn parse_response(stdout: &[u8]) -> Result<Facts> {
    let r: Response = serde_json::from_slice(stdout).map_err(|e| {
        Error::invalid(format!(
            "the extractor command printed something that is not a facts response: {}",
            secrets::redact(&e.to_string()).0
        ))
    })?;
    let mut out = Facts::default();
    for (i, v) in r.facts.into_iter().enumerate() {
        let key = v["key"].as_str().unwrap_or("?").to_string();
        match fact(v) {
            Ok(c) => out.candidates.push(c),
            // The key and the error (which may quote a value) are shown.
            Err(e) => {
                let why = format!("fact {} ({key}): {e}", i + 1);
                out.rejected.push(secrets::redact(&why).0.into_owned());
            }
        }
    }
    Ok(out)
}

/// One fact of the response. Its scope is recall's to decide, by the test
/// the builtin rules and `remember` use: a preference about the person is
/// the user's, every other fact the project's. The extractor's `scope` is
/// checked but not trusted, so a model that files a codebase rule as the
/// user's does not put it in every project (nor a person's taste in the
/// team's).
fn fact(v: serde_json::Value) -> Result<Candidate> {
    let f: Fact = serde_json::from_value(v).map_err(|e| Error::invalid(e.to_string()))?;
    if let Some(s) = f.scope.as_deref() {
        s.parse::<Scope>()?;
    }
    let category = f.category.parse::<Category>()?;
    Ok(Candidate {
        category,
        scope: match category {
            Category::Preferences => crate::memory::scope_of(&f.text),
            _ => Scope::Project,
        },
        key: f.key,
        text: f.text,
        confidence: f.confidence,
        evidence: f.evidence,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GitHub token, assembled so this file holds none.
    fn token() -> String {
        format!("ghp_{}", "Xk9Qm2Zr7Lp4Wn8Vb3Hd6Jf1Tc5Ys0Ga7Ke2")
    }

    fn request() -> ExtractRequest<'static> {
        ExtractRequest {
            version: 1,
            session: SessionInfo {
                id: "s1",
                title: None,
                launcher: "neutral",
                cwd: None,
            },
            transcript: "user: hi".into(),
            existing: &[],
            categories: vec!["decisions"],
            max_facts: 5,
        }
    }

    /// Regression (issue #26: the extractor command's stderr was stored
    /// unredacted and shown by `extract --status`). It is redacted, and
    /// before it is cut, so a cut cannot hide a secret from the detector.
    #[test]
    fn r26_extractor_stderr_is_redacted() {
        let t = token();
        let pad = "x".repeat(280);
        let cmd = format!("echo '{pad} login failed with {t}' >&2; exit 3");
        let err = run(&cmd, &request(), Duration::from_secs(20)).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("the extractor command failed"), "{msg}");
        assert!(!msg.contains(&t[..12]), "{msg}");
        let short = format!("echo 'login failed with {t}' >&2; exit 3");
        let msg = run(&short, &request(), Duration::from_secs(20))
            .unwrap_err()
            .to_string();
        assert!(
            msg.ends_with("login failed with [REDACTED:github-token]"),
            "{msg}"
        );
    }

    /// Regression (issue #26: a rejected fact's key, and the error that may
    /// quote a value, were shown as is).
    #[test]
    fn r26_a_rejected_facts_key_and_values_are_redacted() -> Result<()> {
        let t = token();
        let out = serde_json::json!({"facts": [
            {"category": "nope", "key": format!("token {t}"), "text": "x", "confidence": 0.9},
            {"category": "decisions", "key": "k", "text": "x", "confidence": t},
        ]});
        let facts = parse_response(out.to_string().as_bytes())?;
        assert_eq!(facts.rejected.len(), 2, "{:?}", facts.rejected);
        for r in &facts.rejected {
            assert!(!r.contains(&t[4..]) && r.contains("[REDACTED:"), "{r}");
        }
        let err = parse_response(format!("{{\"facts\": \"{t}\"}}").as_bytes()).unwrap_err();
        assert!(!err.to_string().contains(&t[4..]), "{err}");
        Ok(())
    }
}
