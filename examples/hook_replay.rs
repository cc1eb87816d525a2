//! Replay real sessions through the prompt hook and measure what it
//! injects (issue 25 part 2).
//!
//! ```text
//! cargo build --release --bin recall --example hook_replay
//! target/release/examples/hook_replay [--data ../shared/data/agent-transcripts]
//!     [--swe ../shared/data/swe-sessions] [--swe-queries 100] [--recall-bin PATH]
//! ```
//!
//! Every Claude Code and Codex transcript under `--data` is indexed into
//! one project of a temporary home. Then each session's user prompts are
//! fed, in order, to `recall hook claude-code` as `UserPromptSubmit`
//! payloads of that session, twice: once with `recall.hook_repeats = true`
//! (the hook as it was: every prompt gets its full context) and once with
//! the default (a session is not given a hit twice). For each mode the
//! table gives the tokens injected per session (estimated, characters / 4,
//! mean and total), the share of injected hits that the session had
//! already been given, and the share of injected characters that are raw
//! tool output (passage lines a `tool:` speaker wrote). Prompts are typed
//! prompts only: tool results and command wrappers (`<command-name>`) are
//! not prompts. A session's own transcript is in the index too (in real
//! use it would be indexed when it ends), so its own earlier messages can
//! come back: the replay measures repetition, not novelty.
//!
//! Then the same two modes on `swe-sessions`: its 500 agent sessions are
//! indexed into a second project, and each of the first `--swe-queries`
//! tickets is a session of two prompts, the ticket's title and then its
//! full text. These sessions hold mostly tool output, and each ticket has
//! one gold session (the one that worked on it): the table adds the share
//! of tickets whose gold session was injected, the help the tokens buy.

use std::collections::HashSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context as _, Result};
use clap::Parser;
use recall::ingest::model::Role;
use recall::ingest::prepare::parse_file;
use recall::ingest::{Format, IngestOptions};
use serde_json::{json, Value};

#[derive(Parser)]
struct Opts {
    /// The real transcripts: `claude-code/` and `codex/` below it
    #[arg(long, default_value = "../shared/data/agent-transcripts")]
    data: PathBuf,
    /// The swe-sessions set (`sessions.jsonl.gz`, `queries*.jsonl`,
    /// `qrels.tsv`)
    #[arg(long, default_value = "../shared/data/swe-sessions")]
    swe: PathBuf,
    /// Tickets of swe-sessions to replay (0: skip the set)
    #[arg(long, default_value_t = 100)]
    swe_queries: usize,
    /// The recall binary [default: next to this executable]
    #[arg(long)]
    recall_bin: Option<PathBuf>,
}

/// One session to replay: its prompts in order.
struct Session {
    name: String,
    prompts: Vec<String>,
    /// The session that holds the answer, where the set says so.
    gold: Option<String>,
}

/// What one mode injected into one session.
#[derive(Default)]
struct Tally {
    tokens: usize,
    hits: usize,
    repeated: usize,
    chars: usize,
    tool_chars: usize,
    /// Whether the gold session was among the injected hits.
    gold_given: bool,
}

fn main() -> Result<()> {
    let o = Opts::parse();
    let bin = match o.recall_bin {
        Some(b) => b,
        None => std::env::current_exe()?
            .parent()
            .and_then(Path::parent)
            .context("no folder above the example")?
            .join("recall"),
    };
    if !bin.exists() {
        bail!("no recall binary at {}: build it first", bin.display());
    }
    let files = transcripts(&o.data)?;
    let sessions: Vec<Session> = files
        .iter()
        .filter_map(|(path, format)| prompts(path, *format).transpose())
        .collect::<Result<_>>()?;
    let prompts: usize = sessions.iter().map(|s| s.prompts.len()).sum();
    eprintln!(
        "hook_replay: {} transcripts, {} sessions with prompts, {prompts} prompts",
        files.len(),
        sessions.len()
    );
    let tmp = tempfile::tempdir()?;
    let home = tmp.path().join("home");
    for (path, format) in &files {
        let out = recall(&bin, &home, "replay")
            .args(["index", "--format", format.as_str()])
            .arg(path)
            .output()?;
        check_indexed(&out, path)?;
    }
    let title = format!(
        "Prompt hook replay: {} sessions, {prompts} prompts",
        sessions.len()
    );
    table(
        &title,
        &modes(&bin, &home, tmp.path(), "replay", &sessions)?,
        false,
    )?;
    if o.swe_queries > 0 {
        let swe = swe_sessions(&o.swe, o.swe_queries, &tmp.path().join("swe"))?;
        let out = recall(&bin, &home, "swe")
            .args(["index", "--kind", "session"])
            .arg(tmp.path().join("swe"))
            .output()?;
        check_indexed(&out, &o.swe)?;
        let title = format!(
            "Prompt hook replay on swe-sessions: {} tickets (title, then full text)",
            swe.len()
        );
        table(&title, &modes(&bin, &home, tmp.path(), "swe", &swe)?, true)?;
    }
    Ok(())
}

fn check_indexed(out: &std::process::Output, path: &Path) -> Result<()> {
    if !matches!(out.status.code(), Some(0 | 3)) {
        bail!(
            "indexing {} failed: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(())
}

/// Replay every session in both modes: (mode, one tally per session).
fn modes(
    bin: &Path,
    home: &Path,
    cwd: &Path,
    project: &str,
    sessions: &[Session],
) -> Result<Vec<(&'static str, Vec<Tally>)>> {
    let mut rows = Vec::new();
    for (mode, repeats) in [("before (hook_repeats = true)", true), ("after", false)] {
        std::fs::write(
            home.join("config.toml"),
            format!("[recall]\nhook_repeats = {repeats}\n"),
        )?;
        let mut per_session = Vec::new();
        for (i, s) in sessions.iter().enumerate() {
            let id = format!("replay-{repeats}-{i}-{}", s.name);
            per_session.push(replay(bin, home, cwd, project, &id, s)?);
        }
        rows.push((mode, per_session));
    }
    Ok(rows)
}

fn table(title: &str, rows: &[(&str, Vec<Tally>)], gold: bool) -> Result<()> {
    println!("\n## {title}\n");
    let gold_head = if gold { " gold session injected |" } else { "" };
    let gold_rule = if gold { "---:|" } else { "" };
    println!("| mode | tokens per session (mean) | tokens (total) | hits repeated in their session | tool output share of injected chars |{gold_head}");
    println!("|---|---:|---:|---:|---:|{gold_rule}");
    let mut totals = Vec::new();
    for (mode, tallies) in rows {
        let tokens: usize = tallies.iter().map(|t| t.tokens).sum();
        let hits: usize = tallies.iter().map(|t| t.hits).sum();
        let repeated: usize = tallies.iter().map(|t| t.repeated).sum();
        let chars: usize = tallies.iter().map(|t| t.chars).sum();
        let tool: usize = tallies.iter().map(|t| t.tool_chars).sum();
        let given = tallies.iter().filter(|t| t.gold_given).count();
        let gold_cell = if gold {
            format!(" {:.3} |", ratio(given, tallies.len()))
        } else {
            String::new()
        };
        println!(
            "| {mode} | {:.0} | {tokens} | {:.3} | {:.3} |{gold_cell}",
            tokens as f64 / tallies.len().max(1) as f64,
            ratio(repeated, hits),
            ratio(tool, chars)
        );
        totals.push(tokens);
    }
    println!(
        "\nafter / before, tokens: {:.2}x",
        totals[1] as f64 / totals[0].max(1) as f64
    );
    Ok(())
}

/// The first `n` tickets of swe-sessions as replay sessions (title, then
/// full text), with every session of the set written to `out`, one
/// neutral document a file, for indexing.
fn swe_sessions(dir: &Path, n: usize, out: &Path) -> Result<Vec<Session>> {
    let unpacked = Command::new("gzip")
        .arg("-dc")
        .arg(dir.join("sessions.jsonl.gz"))
        .output()
        .context("cannot run `gzip -dc`")?;
    if !unpacked.status.success() {
        bail!("cannot unpack {}/sessions.jsonl.gz", dir.display());
    }
    std::fs::create_dir_all(out)?;
    for line in String::from_utf8_lossy(&unpacked.stdout).lines() {
        let v: Value = serde_json::from_str(line)?;
        let id = v["session"]["id"]
            .as_str()
            .context("a session without an id")?;
        std::fs::write(out.join(format!("{id}.json")), line)?;
    }
    let read = |name: &str| -> Result<Vec<Value>> {
        let path = dir.join(name);
        std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?
            .lines()
            .map(|l| Ok(serde_json::from_str(l)?))
            .collect()
    };
    let titles = read("queries_title.jsonl")?;
    let full = read("queries.jsonl")?;
    let qrels = std::fs::read_to_string(dir.join("qrels.tsv"))?;
    let gold: std::collections::HashMap<&str, &str> = qrels
        .lines()
        .skip(1)
        .filter_map(|l| {
            let mut f = l.split('\t');
            Some((f.next()?, f.next()?))
        })
        .collect();
    let text_of = |id: &str| {
        full.iter()
            .find(|q| q["id"] == id)
            .and_then(|q| q["text"].as_str())
            .map(str::to_string)
    };
    titles
        .iter()
        .take(n)
        .map(|q| {
            let id = q["id"].as_str().context("a query without an id")?;
            let title = q["text"].as_str().unwrap_or_default().to_string();
            let text = text_of(id).with_context(|| format!("no full text for {id}"))?;
            Ok(Session {
                name: id.to_string(),
                prompts: vec![title, text],
                gold: gold.get(id).map(|g| g.to_string()),
            })
        })
        .collect()
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

fn recall(bin: &Path, home: &Path, project: &str) -> Command {
    let mut c = Command::new(bin);
    c.arg("--home")
        .arg(home)
        .args(["--project", project])
        .env_remove("RECALL_HOME")
        .env_remove("RECALL_PROJECT")
        .env("NO_COLOR", "1");
    c
}

/// Every `*.jsonl` under `data/claude-code` and `data/codex`, sorted.
fn transcripts(data: &Path) -> Result<Vec<(PathBuf, Format)>> {
    let mut out = Vec::new();
    for (sub, format) in [
        ("claude-code", Format::ClaudeCode),
        ("codex", Format::Codex),
    ] {
        let dir = data.join(sub);
        if !dir.is_dir() {
            bail!("no {} (see ../shared/data/README.md)", dir.display());
        }
        for e in walkdir::WalkDir::new(&dir).sort_by_file_name() {
            let e = e?;
            if e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "jsonl") {
                out.push((e.path().to_path_buf(), format));
            }
        }
    }
    Ok(out)
}

/// The typed prompts of one transcript, in order; `None` when it has none.
fn prompts(path: &Path, format: Format) -> Result<Option<Session>> {
    let parsed = parse_file(path, format, &IngestOptions::default())
        .with_context(|| format!("cannot read {}", path.display()))?;
    let prompts: Vec<String> = parsed
        .messages
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.text.trim().to_string())
        .filter(|t| t.chars().count() >= 8 && !t.starts_with('<'))
        .collect();
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok((!prompts.is_empty()).then_some(Session {
        name,
        prompts,
        gold: None,
    }))
}

/// Feed `prompts` to the hook as session `id`; what it injected.
fn replay(
    bin: &Path,
    home: &Path,
    cwd: &Path,
    project: &str,
    id: &str,
    session: &Session,
) -> Result<Tally> {
    let mut t = Tally::default();
    let mut seen = HashSet::new();
    for prompt in &session.prompts {
        let payload = json!({
            "hook_event_name": "UserPromptSubmit",
            "session_id": id,
            "cwd": cwd,
            "prompt": prompt,
        });
        let mut child = recall(bin, home, project)
            .args(["hook", "claude-code"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        child
            .stdin
            .take()
            .context("no stdin")?
            .write_all(payload.to_string().as_bytes())?;
        let out = child.wait_with_output()?;
        let text = String::from_utf8_lossy(&out.stdout);
        let Ok(v) = serde_json::from_str::<Value>(text.trim()) else {
            continue;
        };
        let ctx = v["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap_or_default();
        t.chars += ctx.chars().count();
        t.tokens += ctx.chars().count().div_ceil(4);
        for line in ctx.lines() {
            if let Some(source) = line.trim().strip_prefix("_source: ") {
                t.hits += 1;
                if let Some(g) = &session.gold {
                    t.gold_given |= source.starts_with(&format!("session {g} "));
                }
                if !seen.insert(source.to_string()) {
                    t.repeated += 1;
                }
            }
        }
        t.tool_chars += tool_chars(ctx);
    }
    Ok(t)
}

/// Characters of `ctx` that are tool output: from a `tool: ` speaker
/// label, or from the line after a Codex or Gemini CLI call, to the next
/// speaker label or item.
fn tool_chars(ctx: &str) -> usize {
    let mut n = 0;
    let mut in_tool = false;
    for line in ctx.lines() {
        let l = line.trim_start_matches(['-', ' ']);
        let speaker = ["user: ", "assistant: ", "system: ", "tool: "]
            .iter()
            .find(|s| l.starts_with(**s) || l.contains(&format!(": {s}")));
        if let Some(s) = speaker {
            in_tool = *s == "tool: ";
        }
        // A Codex or Gemini CLI tool turn: `<tool name>: [<kind>] <call>`;
        // the call is what the assistant did, the lines after it output.
        let turn = l.rsplit_once("**: ").map_or(l, |(_, t)| t);
        if speaker.is_none() && is_call(turn) {
            in_tool = true;
            continue;
        }
        if line.trim_start().starts_with("_source: ")
            || line.starts_with("- **") && speaker.is_none()
        {
            in_tool = false;
        }
        if in_tool {
            n += line.chars().count() + 1;
        }
    }
    n
}

/// `<name>: [<kind>] …`, the first line of a tool turn labelled with the
/// tool's name (see `render::prompt`).
fn is_call(line: &str) -> bool {
    line.split_once(": ").is_some_and(|(label, rest)| {
        let rest = rest.strip_prefix("… ").unwrap_or(rest);
        !label.is_empty()
            && !label.contains(char::is_whitespace)
            && rest.starts_with('[')
            && rest.contains(']')
    })
}
