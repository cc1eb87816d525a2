//! `recall hook claude-code|codex|gemini`: the launcher hooks.
//!
//! Reads the hook's JSON from stdin (`session_id`, `transcript_path`, `cwd`,
//! `hook_event_name`, plus `prompt` or `source`); the three launchers send
//! the same fields, under their own event names:
//! - `SessionStart`: the project's pinned and most important records, and
//!   what the last sessions were about;
//! - `UserPromptSubmit` (Gemini CLI: `BeforeAgent`): recall for the prompt;
//! - `SessionEnd` / `Stop` (Gemini CLI: `SessionEnd` / `AfterAgent`): index
//!   `transcript_path` incrementally, in a
//!   child process that outlives the hook when the transcript is too big
//!   for the deadline (and extract the session when
//!   `extract.on_session_end` is set);
//! - `PreCompact` (Gemini CLI: `PreCompress` from `/compress`): the same,
//!   then extract this session (write-then-compact: what matters is stored
//!   before the launcher's context drops messages). Gemini CLI's automatic
//!   `PreCompress` comes before every model call, compressing or not: it
//!   is answered at once, and SessionEnd indexes the chat, which keeps
//!   what a compression replaced.
//!
//! Output for the first two is
//! `{"hookSpecificOutput": {"hookEventName": ..., "additionalContext": ...}}`
//! with the context under 10,000 characters. The hook always exits 0: any
//! failure (missing home, locked or corrupt index, garbage on stdin) goes to
//! stderr and the agent runs without recalled context. Work that outlives
//! the deadline is abandoned and nothing is printed: for Gemini CLI, `{}`
//! is printed instead, as it shows a hook's stderr to the user when its
//! stdout is empty.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result};
use serde::Deserialize;
use serde_json::json;

use super::args::{GlobalArgs, HookArgs};
use super::context::Ctx;

/// Claude Code cuts additional context past this many characters.
pub const MAX_CONTEXT_CHARS: usize = 10_000;

/// The longest prompt the prompt hook recalls for, in characters: a long
/// ticket is a few thousand; past this a prompt is a pasted dump, whose
/// beginning says what is asked (a 10 MB prompt held whole took the hook
/// to 147 MB).
pub const MAX_PROMPT_CHARS: usize = 64 * 1024;

/// The largest hook payload read; a larger one adds no context.
const MAX_PAYLOAD_BYTES: u64 = 16 << 20;

/// The fields recall reads from a hook payload.
#[derive(Debug, Default, Deserialize)]
pub struct Payload {
    #[serde(default, deserialize_with = "id_text")]
    pub session_id: Option<String>,
    #[serde(default, deserialize_with = "non_empty_path")]
    pub transcript_path: Option<PathBuf>,
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    #[serde(default)]
    pub hook_event_name: String,
    #[serde(default)]
    pub prompt: Option<String>,
    #[serde(default)]
    pub source: Option<String>,
    /// PreCompact / PreCompress: `manual` (the user's `/compact`) or `auto`.
    #[serde(default)]
    pub trigger: Option<String>,
}

/// A session id as text, written as a string or a number: a launcher or a
/// wrapper that sends `"session_id": 42` still gets its prompt's context.
fn id_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Id {
        Text(String),
        Number(serde_json::Number),
    }
    Ok(Option::<Id>::deserialize(d)?.map(|id| match id {
        Id::Text(t) => t,
        Id::Number(n) => n.to_string(),
    }))
}

/// A path that is absent, `null` or `""` is no path (Gemini CLI sends `""`
/// when it records no chat).
fn non_empty_path<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<PathBuf>, D::Error> {
    let p: Option<PathBuf> = Option::deserialize(d)?;
    Ok(p.filter(|p| !p.as_os_str().is_empty()))
}

/// Run a hook. Returns 0 whatever happens.
///
/// The work runs on this thread and a watchdog thread keeps the deadline:
/// the allocations stay in the main heap, which on glibc grows by `brk`;
/// a second thread's heap grows and shrinks page by page with `mprotect`
/// (about 670 calls for a long ticket, a tenth of the hook's time).
#[tracing::instrument(level = "debug", name = "hook", skip_all, fields(launcher))]
pub fn run(global: &GlobalArgs, a: HookArgs, launcher: &'static str) -> u8 {
    let deadline = Duration::from_millis(a.deadline_ms.unwrap_or(2000));
    // A launcher recall itself runs (the `model` extractor) gets no
    // memory and is not indexed: its hooks do nothing.
    let (var, off) = crate::extract::model::HOOKS_OFF;
    if std::env::var(var).is_ok_and(|v| v == off) {
        print_answer(launcher, None);
        return 0;
    }
    let answered = Arc::new(AtomicBool::new(false));
    let watchdog = Arc::clone(&answered);
    // The process ends with this thread's answer; past the deadline, the
    // first to claim the answer prints, and the work is abandoned.
    std::thread::spawn(move || {
        std::thread::sleep(deadline);
        if !watchdog.swap(true, Ordering::SeqCst) {
            say!(
                "recall hook {launcher}: deadline of {} ms passed; no context added",
                deadline.as_millis()
            );
            print_answer(launcher, None);
            std::process::exit(0);
        }
    });
    let out = std::panic::catch_unwind(|| handle(global, launcher, deadline))
        .unwrap_or_else(|_| Err(anyhow::anyhow!("internal error (panic)")));
    if answered.swap(true, Ordering::SeqCst) {
        // The watchdog answered and is ending the process; should it not
        // (it cannot fail to now, but a hook must never hang), this does.
        std::thread::sleep(Duration::from_secs(1));
        std::process::exit(0);
    }
    let out = out.unwrap_or_else(|e| {
        say!("recall hook {launcher}: {e:#}");
        None
    });
    print_answer(launcher, out);
    0
}

/// The launcher whose hook this command line runs (`recall [options]
/// hook claude-code|codex|gemini ...`), read from the raw arguments, for
/// when they do not parse.
pub fn launched(args: impl IntoIterator<Item = std::ffi::OsString>) -> Option<&'static str> {
    let args: Vec<std::ffi::OsString> = args.into_iter().skip(1).collect();
    let at = args.iter().position(|a| a == "hook")?;
    ["claude-code", "codex", "gemini"]
        .into_iter()
        .find(|l| args.get(at + 1).is_some_and(|a| a == *l))
}

/// A hook whose arguments or variables do not parse (an option a newer
/// recall's settings pass, a typo in `RECALL_HOOK_DEADLINE_MS`): it adds
/// no context and still exits 0, since Claude Code reads exit 2 from a
/// prompt hook as "block this prompt". What is wrong goes to stderr.
pub fn unparsed(launcher: &'static str, error: &impl std::fmt::Display) -> u8 {
    let error = error.to_string();
    // clap's first line says what is wrong; the rest is usage.
    let what = error.lines().next().unwrap_or_default();
    let what = what.strip_prefix("error: ").unwrap_or(what);
    say!("recall hook {launcher}: no context added: {what} (`recall hook {launcher} --help`)");
    print_answer(launcher, None);
    0
}

/// Print a hook's answer. Gemini CLI reads stderr as a message for the
/// user when stdout is empty; an empty object says "nothing to add" and
/// keeps logs logs.
fn print_answer(launcher: &str, out: Option<String>) {
    use std::io::Write as _;
    let out = out.or_else(|| (launcher == "gemini").then(|| "{}".to_string()));
    if let Some(out) = out {
        // A launcher that closed the pipe gets nothing; still exit 0.
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{out}").and_then(|()| stdout.flush());
    }
}

fn read_payload() -> Result<Payload> {
    let mut bytes = Vec::new();
    let mut stdin = std::io::stdin().lock();
    (&mut stdin)
        .take(MAX_PAYLOAD_BYTES + 1)
        .read_to_end(&mut bytes)
        .context("cannot read stdin")?;
    if bytes.len() as u64 > MAX_PAYLOAD_BYTES {
        // Read the rest, so the launcher's write does not fail on a closed
        // pipe; what it holds is not parsed.
        let _ = std::io::copy(&mut stdin, &mut std::io::sink());
        anyhow::bail!(
            "the payload on stdin is over {} MiB (a pasted dump?); no context added",
            MAX_PAYLOAD_BYTES >> 20
        );
    }
    const NOT_A_PAYLOAD: &str = "stdin is not a hook payload (a JSON object with hook_event_name)";
    // serde reads a struct from a list too.
    if !bytes.trim_ascii_start().starts_with(b"{") {
        anyhow::bail!(NOT_A_PAYLOAD);
    }
    // A prompt holding half of a UTF-16 pair (an emoji cut short) is sent
    // as a lone `\ud83d`, which serde_json refuses: mend it, not lose the
    // whole payload.
    serde_json::from_slice(&crate::ingest::surrogate::mend(&bytes)).context(NOT_A_PAYLOAD)
}

/// Handle one event; `Some(json)` is printed on stdout.
fn handle(global: &GlobalArgs, launcher: &str, deadline: Duration) -> Result<Option<String>> {
    let p = read_payload()?;
    let mut g = global.clone();
    if g.cwd.is_none() {
        g.cwd = p.cwd.clone();
    }
    let mut ctx = super::context::open(&g)?;
    let session = p.session_id.as_deref().filter(|s| !s.is_empty());
    // Only Claude Code's transcript begins with the session it resumed.
    let transcript = p
        .transcript_path
        .as_deref()
        .filter(|_| launcher == "claude-code");
    tracing::debug!(
        session = p.session_id.as_deref().unwrap_or("?"),
        source = p.source.as_deref().unwrap_or("-"),
        "{launcher} hook {}",
        p.hook_event_name
    );
    let context = match p.hook_event_name.as_str() {
        "SessionStart" => {
            start_background_sync(&ctx);
            if let Some(s) = session {
                // A compacted or cleared session starts over: what it was
                // given is no longer in front of the agent.
                let fresh = matches!(p.source.as_deref(), Some("compact" | "clear"));
                ctx.note_session(s, fresh, transcript);
            }
            let own = session.map(|s| ctx.indexed_as(s));
            let context = ctx.session_start(own.as_deref())?;
            if context.is_empty() {
                return Ok(no_memory_notice(&ctx, launcher)
                    .map(|m| json!({"systemMessage": m}).to_string()));
            }
            context
        }
        "UserPromptSubmit" | "BeforeAgent" => prompt(&ctx, &p, transcript)?,
        "PreCompress" if p.trigger.as_deref() != Some("manual") => {
            // Gemini CLI (0.61) fires PreCompress before every model call,
            // whether it then compresses or not, and the payload cannot
            // tell. Nothing is lost by waiting: its chat keeps what a
            // compression replaces, and recall reads it so (`ingest::
            // gemini`), so SessionEnd indexes it all. A turn pays nothing.
            tracing::debug!("gemini PreCompress (auto): left to SessionEnd");
            return Ok(None);
        }
        "SessionEnd" | "Stop" | "AfterAgent" | "PreCompact" | "PreCompress" => {
            // Before compaction discards messages, what matters in them is
            // stored: this session is extracted (whatever its idle time).
            // At the end of a session only when the config asks for it.
            let compacting = matches!(p.hook_event_name.as_str(), "PreCompact" | "PreCompress");
            if let Some(s) = session {
                // The folder may be gone (a worktree removed before the
                // session ended): its project was noted while it was not.
                if let Some(noted) = ctx.for_session(s) {
                    ctx = noted;
                }
                if compacting {
                    ctx.note_session(s, true, transcript);
                }
            }
            let extract = compacting
                || (p.hook_event_name == "SessionEnd" && ctx.config.extract.on_session_end);
            // Extracted by the id its transcript is indexed under (read
            // only when there is something to extract).
            let indexed = session.filter(|_| extract).map(|s| {
                transcript
                    .and_then(crate::ingest::claude_code::indexed_session_id)
                    .unwrap_or_else(|| s.to_string())
            });
            let session = indexed.as_deref();
            // Three quarters of the deadline, so the answer beats it.
            index_transcript(&ctx, &p, session, launcher, deadline * 3 / 4)?;
            return Ok(None);
        }
        other => {
            tracing::debug!("{launcher} hook event {other:?} ignored");
            return Ok(None);
        }
    };
    if context.trim().is_empty() {
        return Ok(None);
    }
    let context = cap_chars(&context, MAX_CONTEXT_CHARS);
    Ok(Some(
        json!({"hookSpecificOutput": {"hookEventName": p.hook_event_name, "additionalContext": context}})
            .to_string(),
    ))
}

/// Cut at the last line break that keeps the text under `max` characters.
fn cap_chars(s: &str, max: usize) -> String {
    if s.chars().count() < max {
        return s.to_string();
    }
    let cut = crate::text::truncate_chars(s, max - 1);
    cut[..cut.rfind('\n').unwrap_or(cut.len())].to_string()
}

/// The prompt's context, without what this session was already given;
/// the tokens injected go to `<home>/logs/hooks.log`.
fn prompt(ctx: &Ctx, p: &Payload, transcript: Option<&Path>) -> Result<String> {
    let text = p.prompt.as_deref().unwrap_or_default();
    // Gemini CLI's prompt carries the context hooks already gave it (as
    // `<hook_context>`): recall what the person typed, not what it said.
    let text = crate::ingest::gemini::without_injected(text);
    let text = crate::text::truncate_chars(text.as_ref(), MAX_PROMPT_CHARS);
    if text.trim().is_empty() {
        return Ok(String::new());
    }
    ctx.require_home()?;
    let session = p.session_id.as_deref();
    let got = ctx.prompt_context_in(text, session, transcript)?;
    if let Some(s) = session {
        log_tokens(ctx, s, &got);
    }
    Ok(got.text)
}

/// One line per prompt in `<home>/logs/hooks.log`: the tokens injected,
/// the session's total, the repeats left out and the hits below the
/// relevance bar (the session is named by
/// a hash, as in its state file). Best effort.
fn log_tokens(ctx: &Ctx, session: &str, got: &crate::memory::PromptContext) {
    use std::io::Write as _;
    let logs = ctx.home.root().join("logs");
    let hash = blake3::hash(session.as_bytes()).to_hex();
    let line = format!(
        "{} prompt session={} injected_tokens={} session_tokens={} repeats_left_out={} below_bar={}\n",
        ctx.now,
        &hash[..12],
        got.tokens,
        got.session_tokens,
        got.repeats_left_out,
        got.below_bar
    );
    let written = crate::store::create_private_dir(&logs)
        .map_err(anyhow::Error::from)
        .and_then(|()| open_log(&logs.join("hooks.log")))
        .and_then(|mut f| Ok(f.write_all(line.as_bytes())?));
    if let Err(e) = written {
        tracing::debug!("hook tokens not logged: {e}");
    }
}

/// The one line a session of a project with no memory yet shows its user,
/// once per project (a marker in `<home>/notices/` remembers it was said):
/// better than injecting nothing, silently, session after session.
fn no_memory_notice(ctx: &Ctx, launcher: &str) -> Option<String> {
    let project = ctx.project().ok()?;
    let marker = ctx
        .home
        .root()
        .join("notices")
        .join(format!("no-memory-{}", project.info.id));
    if marker.exists() {
        return None;
    }
    let said = crate::store::create_private_dir(marker.parent()?)
        .and_then(|()| crate::store::atomic_write(&marker, b""));
    if let Err(e) = said {
        tracing::debug!("no-memory notice not remembered: {e}");
        return None;
    }
    let flag = match launcher {
        "codex" => "--codex",
        "gemini" => "--gemini",
        _ => "--claude-code",
    };
    Some(format!(
        "recall: no memory for {} yet; it fills as sessions end (`recall index {flag}` adds this project's earlier sessions now)",
        project.info.name
    ))
}

/// Whether this home syncs the current project (or the user scope): only
/// the config and `project.json` are read, never the network.
fn sync_wanted(ctx: &Ctx) -> bool {
    ctx.config.sync.url.is_some()
        && (ctx.config.sync.user_scope || ctx.project().is_ok_and(|p| crate::memory::is_shared(&p)))
}

/// The least time between two background syncs started by SessionStart.
const SYNC_SPACING: Duration = Duration::from_secs(5);

/// Start `recall sync --background` detached, logging to
/// `<home>/logs/sync.log`, and return at once: the hook's answer never
/// waits on the network, and a server that is down only shows in the log.
fn start_background_sync(ctx: &Ctx) {
    if !sync_wanted(ctx) {
        return;
    }
    let started = (|| -> Result<()> {
        let logs = ctx.home.root().join("logs");
        // At most one start per few seconds: sessions that start together
        // (a launcher opening several agents) share one sync.
        let stamp = logs.join("sync.started");
        let recent = std::fs::metadata(&stamp)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age < SYNC_SPACING);
        if recent {
            return Ok(());
        }
        crate::store::create_private_dir(&logs)?;
        std::fs::write(&stamp, b"")?;
        let log = open_log(&logs.join("sync.log"))?;
        let mut cmd = std::process::Command::new(std::env::current_exe()?);
        cmd.arg("--home")
            .arg(ctx.home.root())
            .args(["sync", "--background"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(log);
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        cmd.spawn().context("cannot start `recall sync`")?;
        Ok(())
    })();
    if let Err(e) = started {
        tracing::warn!("background sync not started: {e:#}");
    }
}

/// Open a log file for appending, private to the user.
fn open_log(path: &std::path::Path) -> Result<std::fs::File> {
    crate::store::private_file()
        .append(true)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))
}

/// Index the session's transcript in a child `recall index` process. A
/// small transcript is done within `budget` and the hook reports its
/// outcome; a big one (a long session is tens of megabytes) keeps indexing
/// in the background after the hook has answered, in a process group of
/// its own so the launcher's clean-up does not kill it, logging to
/// `<home>/logs/hooks.log`. A killed run loses nothing: the next `index`
/// finishes it.
fn index_transcript(
    ctx: &Ctx,
    p: &Payload,
    extract: Option<&str>,
    launcher: &str,
    budget: Duration,
) -> Result<()> {
    let Some(path) = &p.transcript_path else {
        anyhow::bail!("the payload has no transcript_path to index");
    };
    // A relative path is the launcher's, from the session's folder; and
    // whatever the payload says, what is handed on is one file, never a
    // folder to walk or an option of `index` (`--prune`).
    let path = match (path.is_relative(), &p.cwd) {
        (true, Some(cwd)) => cwd.join(path),
        _ => path.clone(),
    };
    let path = &std::path::absolute(&path)
        .with_context(|| format!("cannot resolve the transcript path {}", path.display()))?;
    if !path.is_file() {
        anyhow::bail!(
            "the payload's transcript_path {} is not a file; nothing indexed",
            path.display()
        );
    }
    ctx.ensure_scope(crate::store::Scope::Project)?;
    let project = ctx.project()?.info.id;
    let logs = ctx.home.root().join("logs");
    crate::store::create_private_dir(&logs)?;
    let log_path = logs.join("hooks.log");
    let log = open_log(&log_path)?;
    let logged_before = log.metadata().map(|m| m.len()).unwrap_or(0);
    let exe = std::env::current_exe().context("cannot find the recall binary")?;
    // `index`, then (for a compaction) `extract --session`, as one child;
    // the arguments travel as positional parameters, never pasted into the
    // script.
    let mut script = match extract {
        None => r#""$0" --home "$1" --project "$2" index --kind session -- "$3""#,
        Some(_) => concat!(
            r#""$0" --home "$1" --project "$2" index --kind session -- "$3" && "#,
            r#""$0" --home "$1" --project "$2" extract --session "$4""#
        ),
    }
    .to_string();
    // Team memory: share what this session added once it is indexed. The
    // sync is a background job of the detached child: the hook waits for
    // the index step at most, never for the network.
    if sync_wanted(ctx) {
        // Its output goes where SessionStart's syncs log, not hooks.log.
        script.push_str(
            r#" && { "$0" --home "$1" sync --background </dev/null >/dev/null 2>>"$1/logs/sync.log" & }"#,
        );
    }
    // Every path it is given is absolute: it runs from the home, so a
    // hook started in a folder since removed still indexes.
    let home = std::path::absolute(ctx.home.root()).context("cannot resolve the home")?;
    let mut cmd = std::process::Command::new("sh");
    cmd.current_dir(&home)
        .arg("-c")
        .arg(script)
        .arg(exe)
        .arg(&home)
        .arg(&project)
        .arg(path)
        .arg(extract.unwrap_or_default())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(log);
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd.spawn().context("cannot start `recall index`")?;
    let pid = child.id();
    // Waited for on a thread of its own, so the hook answers as soon as the
    // child ends (polling every 10 ms added 5 ms on average to every
    // session's end). Past the budget the thread is left waiting; it ends
    // with the hook's process, the child keeps running.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let Ok(status) = rx.recv_timeout(budget) else {
        say!(
            "recall hook {launcher}: indexing {} continues in the background (pid {pid}; log {})",
            path.display(),
            log_path.display()
        );
        return Ok(());
    };
    let status = status.context("cannot wait for `recall index`")?;
    if !status.success() {
        // What the child said, minus its summary line.
        let said = std::fs::read(&log_path).unwrap_or_default();
        let said = String::from_utf8_lossy(&said[(logged_before as usize).min(said.len())..])
            .lines()
            .filter(|l| !l.starts_with("index: ") && !l.starts_with("extract: "))
            .collect::<Vec<_>>()
            .join("; ");
        let what = match extract {
            None => "indexing",
            Some(_) => "indexing or extracting",
        };
        anyhow::bail!(
            "{what} {} failed ({status}): {said} (log: {})",
            path.display(),
            log_path.display()
        );
    }
    Ok(())
}
