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
//! Response: `{"facts": [{"category": "decisions", "scope": "project|user",
//! "key": "short title", "text": "the fact", "confidence": 0.8,
//! "evidence": ["message id", ...]}]}`.
//!
//! The program runs under `sh -c` with a timeout; a timeout, a non-zero
//! exit or unreadable output is an error for that session only.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::rules::Candidate;
use crate::error::{Error, Result};
use crate::records::Category;
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
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Error::invalid(format!("cannot start the extractor command `{cmd}`: {e}")))?;
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
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child
            .try_wait()
            .map_err(|e| Error::invalid(format!("extractor command: {e}")))?
        {
            break s;
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Error::invalid(format!(
                "the extractor command timed out after {}s",
                timeout.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let _ = writer.join();
    let stdout = reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    if !status.success() {
        let tail = crate::text::truncate_chars(stderr.trim(), 300).to_string();
        return Err(Error::invalid(format!(
            "the extractor command failed ({status}): {tail}"
        )));
    }
    parse_response(&stdout)
}

/// Turn the program's stdout into candidates. Output that is not a facts
/// response fails the session; a single fact with a bad category, scope or
/// missing field is only rejected, with its reason.
pub fn parse_response(stdout: &[u8]) -> Result<Facts> {
    let r: Response = serde_json::from_slice(stdout).map_err(|e| {
        Error::invalid(format!(
            "the extractor command printed something that is not a facts response: {e}"
        ))
    })?;
    let mut out = Facts::default();
    for (i, v) in r.facts.into_iter().enumerate() {
        let key = v["key"].as_str().unwrap_or("?").to_string();
        match fact(v) {
            Ok(c) => out.candidates.push(c),
            Err(e) => out.rejected.push(format!("fact {} ({key}): {e}", i + 1)),
        }
    }
    Ok(out)
}

fn fact(v: serde_json::Value) -> Result<Candidate> {
    let f: Fact = serde_json::from_value(v).map_err(|e| Error::invalid(e.to_string()))?;
    Ok(Candidate {
        category: f.category.parse::<Category>()?,
        scope: match f.scope.as_deref() {
            None => Scope::Project,
            Some(s) => s.parse()?,
        },
        key: f.key,
        text: f.text,
        confidence: f.confidence,
        evidence: f.evidence,
    })
}
