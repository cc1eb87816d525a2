//! Parses every real transcript under `shared/data/agent-transcripts/` and
//! checks, per file, the number of messages per role against counts computed
//! independently by `tests/count_transcripts.py` (same documented rules, no shared code).
//!
//! The data folder defaults to `<crate>/../shared/data/agent-transcripts`;
//! set `AGENT_TRANSCRIPTS_DIR` to point elsewhere.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use recall::ingest::model::{ParsedSession, Role};
use recall::ingest::{claude_code, codex};

type Counts = BTreeMap<String, usize>;

/// Every `*.jsonl` under `dir` (LICENSE / README files are not JSONL).
fn jsonl_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            jsonl_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            out.push(path);
        }
    }
}

fn role_counts(p: &ParsedSession) -> Counts {
    let mut counts: Counts = ["user", "assistant", "tool", "system"]
        .iter()
        .map(|r| (r.to_string(), 0))
        .collect();
    for m in &p.messages {
        *counts.entry(m.role.as_str().to_owned()).or_default() += 1;
    }
    counts
}

fn python_counts(root: &Path) -> BTreeMap<String, Counts> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/count_transcripts.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(root)
        .output()
        .unwrap_or_else(|e| panic!("run python3 {}: {e}", script.display()));
    assert!(
        out.status.success(),
        "count.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("count.py output: {e}"))
}

fn parse_file(rel: &str, bytes: &[u8], stem: &str) -> ParsedSession {
    if rel.starts_with("claude-code") {
        assert!(
            claude_code::sniff(&bytes[..bytes.len().min(4096)]),
            "{rel}: claude sniff"
        );
        assert!(
            !codex::sniff(&bytes[..bytes.len().min(4096)]),
            "{rel}: codex sniff"
        );
        claude_code::parse(bytes, 1, stem, &claude_code::Options::default())
    } else {
        assert!(
            codex::sniff(&bytes[..bytes.len().min(4096)]),
            "{rel}: codex sniff"
        );
        assert!(
            !claude_code::sniff(&bytes[..bytes.len().min(4096)]),
            "{rel}: claude sniff"
        );
        codex::parse(bytes, 1, stem, &codex::Options::default())
    }
}

/// Structural checks that hold for every real file.
fn check_invariants(rel: &str, bytes: &[u8], p: &ParsedSession) {
    assert_eq!(p.consumed, bytes.len(), "{rel}: all lines are complete");
    assert!(!p.meta.id.is_empty(), "{rel}: session id");
    for m in &p.messages {
        assert!(!m.text.trim().is_empty(), "{rel}: blank message {:?}", m.id);
        if m.role == Role::Tool && !m.is_error {
            assert!(
                m.text.chars().count() <= 2000 + 600,
                "{rel}: tool text not capped"
            );
        }
    }
}

#[test]
fn every_real_transcript_matches_independent_counts() {
    let Some(root) = crate::common::agent_transcripts() else {
        return;
    };
    let mut files = Vec::new();
    jsonl_files(&root, &mut files);
    assert!(
        files.len() >= 40,
        "expected the full data set, found {}",
        files.len()
    );
    let expected = python_counts(&root);
    let mut mismatches = Vec::new();
    println!(
        "{:<95} {:>5} {:>5} {:>5} {:>4} {:>4}",
        "file", "user", "asst", "tool", "sys", "prob"
    );
    for path in &files {
        let rel = path
            .strip_prefix(&root)
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned();
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("read {rel}: {e}"));
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let parsed = parse_file(&rel, &bytes, &stem);
        check_invariants(&rel, &bytes, &parsed);
        let got = role_counts(&parsed);
        println!(
            "{:<95} {:>5} {:>5} {:>5} {:>4} {:>4}",
            rel,
            got["user"],
            got["assistant"],
            got["tool"],
            got["system"],
            parsed.problems.len()
        );
        if expected.get(&rel) != Some(&got) {
            mismatches.push(format!(
                "{rel}: rust {got:?} python {:?}",
                expected.get(&rel)
            ));
        }
    }
    assert_eq!(
        expected.len(),
        files.len(),
        "python saw a different file set"
    );
    assert!(
        mismatches.is_empty(),
        "count mismatches:\n{}",
        mismatches.join("\n")
    );
}

#[test]
fn edge_cases_file_reports_its_bad_lines() {
    let Some(root) = crate::common::agent_transcripts() else {
        return;
    };
    let path = root.join("claude-code/daaain-claude-code-log/edge_cases.jsonl");
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let p = claude_code::parse(&bytes, 1, "edge_cases", &claude_code::Options::default());
    let lines: Vec<usize> = p.problems.iter().map(|p| p.line).collect();
    assert_eq!(lines, vec![10, 11, 13, 14, 15, 16, 18], "{:#?}", p.problems);
    assert_eq!(p.meta.id, "edge_cases");
    assert!(p
        .meta
        .title
        .as_deref()
        .is_some_and(|t| t.starts_with("Tested various edge cases")));
    assert!(p
        .messages
        .iter()
        .any(|m| m.is_error && m.text.contains("Command not found")));
}

#[test]
fn subagent_files_link_to_their_session() {
    let Some(root) = crate::common::agent_transcripts() else {
        return;
    };
    let root = root.join("claude-code/marot-spotter/258c7280-ae70-4798-800f-63464d01a85d");
    let path = root.join("subagents/agent-a881341.jsonl");
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let p = claude_code::parse(&bytes, 1, "agent-a881341", &claude_code::Options::default());
    assert_eq!(
        p.meta.id,
        "258c7280-ae70-4798-800f-63464d01a85d/agent-a881341"
    );
    assert_eq!(
        p.meta.parent_id.as_deref(),
        Some("258c7280-ae70-4798-800f-63464d01a85d")
    );
}

/// What a line joins on across lines, if anything: a Claude assistant
/// `message.id`, a Codex `call_id`, or a Codex assistant text (the
/// agent_message dedupe). Test helper: the parser never builds a `Value`.
fn join_key(line: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(line).ok()?;
    if v["type"] == "assistant" {
        return v["message"]["id"].as_str().map(|s| format!("id:{s}"));
    }
    let p = &v["payload"];
    if let Some(call) = p["call_id"].as_str() {
        return Some(format!("call:{call}"));
    }
    let text = match p["type"].as_str() {
        Some("agent_message") => p["message"].as_str()?.trim().to_owned(),
        Some("message") if p["role"] == "assistant" => {
            p["content"][0]["text"].as_str()?.trim().to_owned()
        }
        _ => return None,
    };
    Some(format!("text:{text}"))
}

/// The first line boundary at or after `from` with no [`join_key`] on
/// both sides.
fn clean_boundary(bytes: &[u8], from: usize) -> usize {
    let starts: Vec<usize> = std::iter::once(0)
        .chain(
            bytes
                .iter()
                .enumerate()
                .filter(|(_, &b)| b == b'\n')
                .map(|(i, _)| i + 1),
        )
        .filter(|&s| s < bytes.len())
        .collect();
    let lines: Vec<&[u8]> = starts
        .iter()
        .map(|&s| {
            let end = bytes[s..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(bytes.len(), |e| s + e);
            &bytes[s..end]
        })
        .collect();
    let ids: Vec<Option<String>> = lines.iter().map(|l| join_key(l)).collect();
    (1..lines.len())
        .filter(|&k| starts[k] >= from)
        .find(|&k| {
            let head: std::collections::HashSet<_> = ids[..k].iter().flatten().collect();
            ids[k..].iter().flatten().all(|id| !head.contains(id))
        })
        .map_or(bytes.len(), |k| starts[k])
}

#[test]
fn incremental_parse_of_real_files_equals_full_parse() {
    let Some(root) = crate::common::agent_transcripts() else {
        return;
    };
    for (rel, is_claude) in [
        ("claude-code/codemie-code/session-9eda1058.jsonl", true),
        ("claude-code/marot-spotter/tool_heavy.jsonl", true),
        ("codex/codemie-code/rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl", false),
    ] {
        let bytes = std::fs::read(root.join(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"));
        let parse = |input: &[u8], first_line: usize| {
            if is_claude {
                claude_code::parse(input, first_line, "stem", &claude_code::Options::default())
            } else {
                codex::parse(input, first_line, "stem", &codex::Options::default())
            }
        };
        let full = parse(&bytes, 1);
        // A cut in the middle of a line: the partial line is left unconsumed.
        let half = bytes.len() / 2;
        let cut = parse(&bytes[..half], 1);
        assert!(cut.consumed < half, "{rel}");
        assert!(cut.problems.last().is_some_and(|p| p.message.starts_with("truncated last line")));
        // Head up to a line boundary no message.id crosses, then the tail.
        let split = clean_boundary(&bytes, cut.consumed);
        assert!(split < bytes.len(), "{rel}: no clean boundary");
        let head = parse(&bytes[..split], 1);
        let first_tail_line = 1 + bytes[..split].iter().filter(|&&b| b == b'\n').count();
        let tail = parse(&bytes[split..], first_tail_line);
        assert_eq!(head.consumed + tail.consumed, bytes.len(), "{rel}");
        assert!(!head.messages.is_empty() && !tail.messages.is_empty(), "{rel}");
        let key = |m: &recall::ingest::model::Message| (m.id.clone(), m.text.clone());
        let mut union: Vec<_> = head.messages.iter().chain(&tail.messages).cloned().collect();
        let mut want = full.messages.clone();
        union.sort_by_key(key);
        want.sort_by_key(key);
        assert_eq!(union, want, "{rel}");
    }
}

#[test]
fn mutated_real_files_never_panic() {
    let Some(root) = crate::common::agent_transcripts() else {
        return;
    };
    // Seeded: every run makes the same mutations.
    let mut r = synth::Rng::with_seed(0x5DEE_CE66_D1CE_4E5B);
    for rel in [
        "claude-code/marot-spotter/short.jsonl",
        "claude-code/daaain-claude-code-log/edge_cases.jsonl",
        "codex/codemie-code/turn-spawn-skill.jsonl",
        "codex/codemie-code/rollout-2026-01-02T19-00-00-019b7f95-0000-7000-0000-000000000001.jsonl",
    ] {
        let original = std::fs::read(root.join(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"));
        for _ in 0..300 {
            let mut bytes = original.clone();
            for _ in 0..1 + r.usize(..8) {
                let at = r.usize(..bytes.len().max(1));
                match r.u8(..4) {
                    0 => bytes[at] = r.u8(..),
                    1 => bytes.insert(at, b"\n{}[]\",:\\"[r.usize(..9)]),
                    2 => drop(bytes.remove(at)),
                    _ => bytes.truncate(at),
                }
                if bytes.is_empty() {
                    break;
                }
            }
            let c = claude_code::parse(&bytes, 1, "m", &claude_code::Options::default());
            let x = codex::parse(&bytes, 1, "m", &codex::Options::default());
            assert!(c.consumed <= bytes.len() && x.consumed <= bytes.len());
            let _ = (claude_code::sniff(&bytes), codex::sniff(&bytes));
        }
    }
}
