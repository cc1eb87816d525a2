//! Replay real sessions through the prompt hook and measure what it
//! injects (issue 25 part 2).
//!
//! ```text
//! cargo build --release --bin recall --example hook_replay
//! target/release/examples/hook_replay [--data ../shared/data/agent-transcripts] [--recall-bin PATH]
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
    /// The recall binary [default: next to this executable]
    #[arg(long)]
    recall_bin: Option<PathBuf>,
}

/// One session to replay: its prompts in order.
struct Session {
    name: String,
    prompts: Vec<String>,
}

/// What one mode injected into one session.
#[derive(Default)]
struct Tally {
    tokens: usize,
    hits: usize,
    repeated: usize,
    chars: usize,
    tool_chars: usize,
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
        let out = recall(&bin, &home)
            .args(["index", "--format", format.as_str()])
            .arg(path)
            .output()?;
        if !matches!(out.status.code(), Some(0 | 3)) {
            bail!(
                "indexing {} failed: {}",
                path.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    let mut rows = Vec::new();
    for (mode, repeats) in [("before (hook_repeats = true)", true), ("after", false)] {
        std::fs::write(
            home.join("config.toml"),
            format!("[recall]\nhook_repeats = {repeats}\n"),
        )?;
        let mut per_session = Vec::new();
        for (i, s) in sessions.iter().enumerate() {
            let id = format!("replay-{repeats}-{i}-{}", s.name);
            per_session.push(replay(&bin, &home, tmp.path(), &id, &s.prompts)?);
        }
        rows.push((mode, per_session));
    }
    println!(
        "\n## Prompt hook replay: {} sessions, {prompts} prompts\n",
        sessions.len()
    );
    println!("| mode | tokens per session (mean) | tokens (total) | hits repeated in their session | tool output share of injected chars |");
    println!("|---|---:|---:|---:|---:|");
    let mut totals = Vec::new();
    for (mode, tallies) in &rows {
        let tokens: usize = tallies.iter().map(|t| t.tokens).sum();
        let hits: usize = tallies.iter().map(|t| t.hits).sum();
        let repeated: usize = tallies.iter().map(|t| t.repeated).sum();
        let chars: usize = tallies.iter().map(|t| t.chars).sum();
        let tool: usize = tallies.iter().map(|t| t.tool_chars).sum();
        println!(
            "| {mode} | {:.0} | {tokens} | {:.3} | {:.3} |",
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

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

fn recall(bin: &Path, home: &Path) -> Command {
    let mut c = Command::new(bin);
    c.arg("--home")
        .arg(home)
        .args(["--project", "replay"])
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
    Ok((!prompts.is_empty()).then_some(Session { name, prompts }))
}

/// Feed `prompts` to the hook as session `id`; what it injected.
fn replay(bin: &Path, home: &Path, cwd: &Path, id: &str, prompts: &[String]) -> Result<Tally> {
    let mut t = Tally::default();
    let mut seen = HashSet::new();
    for prompt in prompts {
        let payload = json!({
            "hook_event_name": "UserPromptSubmit",
            "session_id": id,
            "cwd": cwd,
            "prompt": prompt,
        });
        let mut child = recall(bin, home)
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
/// label to the next speaker label or item.
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
