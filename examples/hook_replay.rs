//! Replay real prompts through the prompt hook, with the asking session
//! not indexed, and measure whether what it injects helps (issue 39 item 1).
//!
//! ```text
//! cargo build --release --bin recall --example hook_replay
//! target/release/examples/hook_replay [--data ../shared/data/agent-transcripts]
//!     [--labels testdata/hook-replay/labels.jsonl]
//!     [--swe ../shared/data/swe-sessions] [--swe-queries 200]
//!     [--recall-bin PATH] [--dump FILE] [--config TOML]
//! ```
//!
//! **Real transcripts, leave one session out.** Every Claude Code and Codex
//! transcript under `--data` is indexed into its project (`codemie-code`:
//! the Claude Code and Codex sessions of that repository; `marot-spotter`;
//! `daaain-claude-code-log`). Then, one session at a time (the session's
//! files, its subagents' and compaction files, and an earlier capture of
//! the same session, are taken out of the index with `index --prune`,
//! as they are in life: the past is indexed, the present is not), each
//! prompt the user typed is fed in order to `recall hook claude-code` as a
//! `UserPromptSubmit` of that session. Each prompt was labelled once, by
//! reading, with the other sessions that would help it (`--labels`; how
//! they were made is in `testdata/hook-replay/README.md`). The table gives
//! the share of injected characters that come from sessions labelled
//! helpful, the share of prompts labelled "nothing helps" that get
//! nothing, and the share of prompts with help whose helpful session was
//! injected.
//!
//! **swe-sessions, help exists and nothing relevant exists.** The set's
//! 500 agent sessions are indexed into a project; each of the first
//! `--swe-queries` tickets is a session of one prompt, the ticket's text,
//! asked twice: with its gold session in the index, and with the gold
//! session taken out (`index --prune`), where nothing in the index is
//! about the ticket. The table gives the share of tickets whose gold
//! session is injected, and, when nothing relevant exists, the share that
//! get nothing and the median and p90 tokens injected.
//!
//! `--dump FILE` writes every prompt with what it was given, to be read.

use std::collections::HashMap;
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
    /// Which sessions help which prompt, labelled by reading
    #[arg(long, default_value = "testdata/hook-replay/labels.jsonl")]
    labels: PathBuf,
    /// The swe-sessions set (`sessions.jsonl.gz`, `queries.jsonl`,
    /// `qrels.tsv`)
    #[arg(long, default_value = "../shared/data/swe-sessions")]
    swe: PathBuf,
    /// Tickets of swe-sessions to replay (0: skip the set)
    #[arg(long, default_value_t = 200)]
    swe_queries: usize,
    /// Skip the real transcripts
    #[arg(long)]
    no_real: bool,
    /// The recall binary [default: next to this executable]
    #[arg(long)]
    recall_bin: Option<PathBuf>,
    /// Write every prompt and what it was given to this file
    #[arg(long)]
    dump: Option<PathBuf>,
    /// `config.toml` lines for the replay's home (`[recall]` knobs, for
    /// one measurement)
    #[arg(long)]
    config: Option<String>,
}

/// The projects of the real transcripts: (project, folders under `--data`).
const PROJECTS: [(&str, &[&str]); 3] = [
    (
        "codemie-code",
        &["claude-code/codemie-code", "codex/codemie-code"],
    ),
    ("marot-spotter", &["claude-code/marot-spotter"]),
    (
        "daaain-claude-code-log",
        &["claude-code/daaain-claude-code-log"],
    ),
];

/// One transcript file of a project.
struct File {
    /// Relative to the project's copy.
    rel: PathBuf,
    /// The session it belongs to: the parent's id for a subagent's file.
    root: String,
    /// Whether the user typed its prompts (not a subagent's file).
    main: bool,
    prompts: Vec<String>,
}

/// A labelled prompt: the sessions that help it.
#[derive(serde::Deserialize)]
struct Label {
    session: String,
    prompt: String,
    helpful: Vec<String>,
}

/// What one prompt got.
#[derive(Default, Clone)]
struct Given {
    /// Characters injected, header included.
    chars: usize,
    /// Each item: its source (a session's root id, `record <id>` or
    /// `ticket <id>`) and its characters.
    items: Vec<(String, usize)>,
    text: String,
}

impl Given {
    fn tokens(&self) -> usize {
        self.chars.div_ceil(4)
    }
}

fn main() -> Result<()> {
    let o = Opts::parse();
    let bin = match &o.recall_bin {
        Some(b) => b.clone(),
        None => std::env::current_exe()?
            .parent()
            .and_then(Path::parent)
            .context("no folder above the example")?
            .join("recall"),
    };
    if !bin.exists() {
        bail!("no recall binary at {}: build it first", bin.display());
    }
    let tmp = tempfile::tempdir()?;
    let home = tmp.path().join("home");
    if let Some(c) = &o.config {
        std::fs::create_dir_all(&home)?;
        std::fs::write(home.join("config.toml"), c.replace("\\n", "\n"))?;
    }
    let mut dump = match &o.dump {
        Some(p) => Some(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("cannot write {}", p.display()))?,
        )),
        None => None,
    };
    if !o.no_real {
        real(&o, &bin, &home, tmp.path(), dump.as_mut())?;
    }
    if o.swe_queries > 0 {
        swe(&o, &bin, &home, tmp.path(), dump.as_mut())?;
    }
    Ok(())
}

type Dump<'a> = Option<&'a mut std::io::BufWriter<std::fs::File>>;

fn write_dump(dump: &mut Dump, head: &str, prompt: &str, given: &Given) -> Result<()> {
    if let Some(d) = dump.as_mut() {
        let cut: String = prompt.chars().take(600).collect();
        writeln!(
            d,
            "\n======== {head}\n--- prompt\n{cut}\n--- given ({} tokens)\n{}",
            given.tokens(),
            given.text
        )?;
    }
    Ok(())
}

/// The real transcripts, leave one session out.
fn real(o: &Opts, bin: &Path, home: &Path, tmp: &Path, mut dump: Dump) -> Result<()> {
    let labels: Vec<Label> = read_jsonl(&o.labels)?;
    let mut by_prompt: HashMap<(String, String), Vec<String>> = HashMap::new();
    for l in labels {
        by_prompt.insert((l.session, prefix(&l.prompt)), l.helpful);
    }
    let mut rows = Vec::new();
    let (mut unlabelled, mut labelled_used) = (0usize, 0usize);
    for (project, dirs) in PROJECTS {
        let root = tmp.join("real").join(project);
        let stash = tmp.join("stash").join(project);
        let mut files = Vec::new();
        for dir in dirs {
            let from = o.data.join(dir);
            if !from.is_dir() {
                bail!("no {} (see ../shared/data/README.md)", from.display());
            }
            let format = if dir.starts_with("codex") {
                Format::Codex
            } else {
                Format::ClaudeCode
            };
            let to = root.join(dir.split('/').next().unwrap_or(dir));
            for e in walkdir::WalkDir::new(&from).sort_by_file_name() {
                let e = e?;
                if !(e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "jsonl"))
                {
                    continue;
                }
                let rel_in = e.path().strip_prefix(&from)?;
                let dest = to.join(rel_in);
                std::fs::create_dir_all(dest.parent().context("no parent")?)?;
                std::fs::copy(e.path(), &dest)?;
                files.push(read_file(&root, &dest, format)?);
            }
        }
        index(bin, home, project, &root)?;
        // Sessions in file order; a session captured twice is replayed from
        // its longest capture.
        let mut sessions: Vec<String> = Vec::new();
        for f in &files {
            if f.main && !f.prompts.is_empty() && !sessions.contains(&f.root) {
                sessions.push(f.root.clone());
            }
        }
        for sid in sessions {
            let mine: Vec<&File> = files.iter().filter(|f| f.root == sid).collect();
            let asking = mine
                .iter()
                .filter(|f| f.main)
                .max_by_key(|f| f.prompts.len())
                .context("a session without its main file")?;
            for f in &mine {
                let (from, to) = (root.join(&f.rel), stash.join(&f.rel));
                std::fs::create_dir_all(to.parent().context("no parent")?)?;
                std::fs::rename(from, to)?;
            }
            index(bin, home, project, &root)?;
            // The launcher's own session id, as in life: the hook leaves out
            // what holds it.
            let hook_session = sid.clone();
            for (i, p) in asking.prompts.iter().enumerate() {
                let helpful = match by_prompt.get(&(sid.clone(), prefix(p))) {
                    Some(h) => {
                        labelled_used += 1;
                        Some(h.clone())
                    }
                    None => {
                        unlabelled += 1;
                        None
                    }
                };
                let given = hook(bin, home, project, &hook_session, p)?;
                let head = match &helpful {
                    Some(h) => format!("{project} session {sid} prompt {} helpful {h:?}", i + 1),
                    None => format!("{project} session {sid} prompt {} unlabelled", i + 1),
                };
                write_dump(&mut dump, &head, p, &given)?;
                rows.push((helpful, given));
            }
            for f in &mine {
                std::fs::rename(stash.join(&f.rel), root.join(&f.rel))?;
            }
            index(bin, home, project, &root)?;
        }
    }
    real_table(&rows, unlabelled, labelled_used);
    Ok(())
}

fn real_table(rows: &[(Option<Vec<String>>, Given)], unlabelled: usize, labelled: usize) {
    let labelled_rows: Vec<(&Vec<String>, &Given)> = rows
        .iter()
        .filter_map(|(h, g)| h.as_ref().map(|h| (h, g)))
        .collect();
    let (mut helpful_chars, mut item_chars, mut all_chars) = (0usize, 0usize, 0usize);
    for (h, g) in &labelled_rows {
        all_chars += g.chars;
        for (source, n) in &g.items {
            item_chars += n;
            if h.contains(source) {
                helpful_chars += n;
            }
        }
    }
    let none: Vec<&Given> = labelled_rows
        .iter()
        .filter(|(h, _)| h.is_empty())
        .map(|(_, g)| *g)
        .collect();
    let some: Vec<(&Vec<String>, &Given)> = labelled_rows
        .iter()
        .filter(|(h, _)| !h.is_empty())
        .copied()
        .collect();
    let silent = none.iter().filter(|g| g.chars == 0).count();
    let reached = some
        .iter()
        .filter(|(h, g)| g.items.iter().any(|(s, _)| h.contains(s)))
        .count();
    let given = labelled_rows.iter().filter(|(_, g)| g.chars > 0).count();
    let mut none_tokens: Vec<usize> = none.iter().map(|g| g.tokens()).collect();
    println!(
        "\n## Prompt hook, real transcripts, leave one session out: {} prompts ({labelled} labelled, {unlabelled} unlabelled)\n",
        rows.len()
    );
    println!("| measure | value |");
    println!("|---|---:|");
    println!(
        "| prompts given something | {given} of {} |",
        labelled_rows.len()
    );
    println!(
        "| injected characters from sessions labelled helpful | {:.3} ({helpful_chars} of {all_chars}; of the hits' own characters {:.3}) |",
        ratio(helpful_chars, all_chars),
        ratio(helpful_chars, item_chars)
    );
    println!(
        "| \"nothing helps\" prompts given nothing | {:.3} ({silent} of {}) |",
        ratio(silent, none.len()),
        none.len()
    );
    tokens_row("\"nothing helps\" prompts, tokens", &mut none_tokens);
    println!(
        "| prompts with help given a helpful session | {:.3} ({reached} of {}) |",
        ratio(reached, some.len()),
        some.len()
    );
}

/// swe-sessions: each ticket with its gold session in the index, then
/// without it.
fn swe(o: &Opts, bin: &Path, home: &Path, tmp: &Path, mut dump: Dump) -> Result<()> {
    let dir = tmp.join("swe").join("sessions");
    let stash = tmp.join("swe").join("stash");
    std::fs::create_dir_all(&stash)?;
    let tickets = swe_tickets(&o.swe, o.swe_queries, &dir)?;
    index_kind(bin, home, "swe", &dir, &["--kind", "session"])?;
    let mut with = Vec::new();
    for (id, text, gold) in &tickets {
        let given = hook(bin, home, "swe", &format!("replay-with-{id}"), text)?;
        let got = given.items.iter().any(|(s, _)| s == gold);
        write_dump(
            &mut dump,
            &format!("swe {id} (gold {gold} in the index; injected: {got})"),
            text,
            &given,
        )?;
        with.push((got, given));
    }
    let mut without = Vec::new();
    for (id, text, gold) in &tickets {
        let file = format!("{gold}.json");
        std::fs::rename(dir.join(&file), stash.join(&file))?;
        index_kind(bin, home, "swe", &dir, &["--kind", "session"])?;
        let given = hook(bin, home, "swe", &format!("replay-without-{id}"), text)?;
        write_dump(
            &mut dump,
            &format!("swe {id} (gold {gold} taken out)"),
            text,
            &given,
        )?;
        without.push(given);
        std::fs::rename(stash.join(&file), dir.join(&file))?;
        index_kind(bin, home, "swe", &dir, &["--kind", "session"])?;
    }
    let n = tickets.len();
    let gold = with.iter().filter(|(g, _)| *g).count();
    let mut with_tokens: Vec<usize> = with.iter().map(|(_, g)| g.tokens()).collect();
    let silent = without.iter().filter(|g| g.chars == 0).count();
    let mut tokens: Vec<usize> = without.iter().map(Given::tokens).collect();
    println!("\n## Prompt hook on swe-sessions: {n} tickets, each asked with its gold session in the index and without it\n");
    println!("| measure | value |");
    println!("|---|---:|");
    println!(
        "| help exists: gold session injected | {gold} of {n} ({:.3}) |",
        ratio(gold, n)
    );
    tokens_row("help exists: tokens", &mut with_tokens);
    println!(
        "| nothing relevant exists: tickets given nothing | {silent} of {n} ({:.3}) |",
        ratio(silent, n)
    );
    tokens_row("nothing relevant exists: tokens", &mut tokens);
    Ok(())
}

/// The first `n` tickets of swe-sessions as (id, full text, gold session),
/// with every session of the set written to `out`, one neutral document a
/// file, for indexing.
fn swe_tickets(dir: &Path, n: usize, out: &Path) -> Result<Vec<(String, String, String)>> {
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
    let full: Vec<Value> = read_jsonl(&dir.join("queries.jsonl"))?;
    let qrels = std::fs::read_to_string(dir.join("qrels.tsv"))?;
    let gold: HashMap<&str, &str> = qrels
        .lines()
        .skip(1)
        .filter_map(|l| {
            let mut f = l.split('\t');
            Some((f.next()?, f.next()?))
        })
        .collect();
    full.iter()
        .take(n)
        .map(|q| {
            let id = q["id"].as_str().context("a query without an id")?;
            let text = q["text"].as_str().unwrap_or_default().to_string();
            let g = gold.get(id).with_context(|| format!("no gold for {id}"))?;
            Ok((id.to_string(), text, g.to_string()))
        })
        .collect()
}

fn read_jsonl<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>> {
    std::fs::read_to_string(path)
        .with_context(|| format!("cannot read {}", path.display()))?
        .lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l).with_context(|| format!("{}:{}", path.display(), i + 1))
        })
        .collect()
}

/// How a prompt is matched to its label: its first 100 characters, trimmed.
fn prefix(prompt: &str) -> String {
    prompt
        .trim()
        .chars()
        .take(100)
        .collect::<String>()
        .trim()
        .to_string()
}

/// A table row of the median and p90 of `tokens`.
fn tokens_row(label: &str, tokens: &mut [usize]) {
    println!(
        "| {label} median / p90 | {} / {} |",
        quantile(tokens, 0.5),
        quantile(tokens, 0.9)
    );
}

fn quantile(v: &mut [usize], q: f64) -> usize {
    if v.is_empty() {
        return 0;
    }
    v.sort_unstable();
    let i = ((v.len() - 1) as f64 * q).round() as usize;
    v[i]
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

/// Index a project's copy of the real transcripts, dropping what was taken
/// out of it.
fn index(bin: &Path, home: &Path, project: &str, root: &Path) -> Result<()> {
    for (sub, format) in [("claude-code", "claude-code"), ("codex", "codex")] {
        let dir = root.join(sub);
        if dir.is_dir() {
            index_kind(bin, home, project, &dir, &["--format", format])?;
        }
    }
    Ok(())
}

fn index_kind(bin: &Path, home: &Path, project: &str, dir: &Path, how: &[&str]) -> Result<()> {
    let out = recall(bin, home, project)
        .arg("index")
        .args(how)
        .arg("--prune")
        .arg(dir)
        .output()?;
    if !matches!(out.status.code(), Some(0 | 3)) {
        bail!(
            "indexing {} failed: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(())
}

/// A transcript: its session and the prompts the user typed in it.
fn read_file(root: &Path, path: &Path, format: Format) -> Result<File> {
    let parsed = parse_file(path, format, &IngestOptions::default())
        .with_context(|| format!("cannot read {}", path.display()))?;
    let main = parsed.meta.parent_id.is_none();
    let prompts: Vec<String> = parsed
        .messages
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.text.trim().to_string())
        .filter(|t| typed(t))
        .collect();
    Ok(File {
        rel: path.strip_prefix(root)?.to_path_buf(),
        root: parsed.meta.parent_id.unwrap_or(parsed.meta.id),
        main,
        prompts,
    })
}

/// Whether a user message is a prompt the user typed: not a command
/// wrapper or injected context (`<command-name>`, `<environment_context>`),
/// not a launcher's note that the user interrupted.
fn typed(text: &str) -> bool {
    text.chars().count() >= 8 && !text.starts_with('<') && !text.starts_with("[Request interrupted")
}

/// Feed `prompt` to the hook as session `id`; what it injected.
fn hook(bin: &Path, home: &Path, project: &str, id: &str, prompt: &str) -> Result<Given> {
    let payload = json!({
        "hook_event_name": "UserPromptSubmit",
        "session_id": id,
        "cwd": home,
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
        return Ok(Given::default());
    };
    let ctx = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    Ok(Given {
        chars: ctx.chars().count(),
        items: items(&ctx),
        text: ctx,
    })
}

/// The items of an injected context: each `- **title**` block with the
/// session (its root id), record or ticket its `_source:` line names, and
/// its characters.
fn items(ctx: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut chars = 0usize;
    let mut open = false;
    for line in ctx.lines() {
        if line.starts_with("- **") {
            open = true;
            chars = 0;
        }
        if !open {
            continue;
        }
        chars += line.chars().count() + 1;
        if let Some(source) = line
            .trim()
            .strip_prefix("_source: ")
            .map(|s| s.trim_end_matches('_'))
        {
            let who = match source.strip_prefix("session ") {
                Some(rest) => {
                    let id = rest.split(' ').next().unwrap_or(rest);
                    id.split("/agent-").next().unwrap_or(id).to_string()
                }
                None => source.to_string(),
            };
            out.push((who, chars));
            open = false;
        }
    }
    out
}
