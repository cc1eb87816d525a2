//! What a Codex tool call becomes: its state while its outputs and end
//! events arrive ([`CallState`]), its compact first line (`[exec] cmd`,
//! `[apply_patch] files`, `[write_stdin] ...`, `[name] args`), its output
//! unwrapped from the forms Codex has written, and its finished text and
//! error flag.

use std::borrow::Cow;

use serde::Deserialize;

use super::{Item, Options};
use crate::ingest::lenient::{LStr, ObjOr, StrList, LI64};
use crate::ingest::transcript::{ARGS_CAP, DETAIL_CAP};
use crate::ingest::values;

/// Join state of a tool call.
#[derive(Debug, Default)]
pub(super) struct CallState {
    pub(super) header: String,
    pub(super) output: Option<String>,
    pub(super) exit_code: Option<i64>,
    pub(super) patch_ok: Option<bool>,
    /// `exec_command_end` was seen: its output and exit code win.
    pub(super) from_end_event: bool,
}

/// The JSON `arguments` of a function call (only the fields we show).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Args<'a> {
    #[serde(borrow)]
    command: StrList<'a>,
    #[serde(borrow)]
    cmd: StrList<'a>,
    #[serde(borrow)]
    chars: LStr<'a>,
    session_id: LI64,
    #[serde(borrow)]
    input: LStr<'a>,
}

/// The JSON form of an older `function_call_output.output`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct JsonOutput<'a> {
    #[serde(borrow)]
    output: LStr<'a>,
    metadata: Option<ObjOr<OutputMeta>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct OutputMeta {
    exit_code: LI64,
}

/// The text and error flag of a finished call.
pub(super) fn finish_call(state: CallState, opts: &Options) -> (String, bool) {
    let is_error = state.exit_code.is_some_and(|c| c != 0) || state.patch_ok == Some(false);
    let cap = opts.output_cap(is_error);
    let mut text = state.header;
    if let Some(out) = state.output.as_deref().filter(|o| !o.is_empty()) {
        text.push('\n');
        text.push_str(&values::ellipsize(out, cap));
    }
    (text, is_error)
}

/// The whole command a shell call runs (`bash -lc X` is `X`), or `None`
/// for a call of another tool.
pub(super) fn shell_command(name: &str, p: &Item<'_>) -> Option<String> {
    if p.kind.get() == Some("local_shell_call") {
        let action = p.action.as_ref().and_then(ObjOr::as_obj)?;
        return Some(whole_command_line(&action.command.0));
    }
    if !matches!(
        name,
        "shell" | "exec_command" | "shell_command" | "container.exec"
    ) {
        return None;
    }
    let raw = p.arguments.get().or(p.input.get()).unwrap_or_default();
    let a: Args = serde_json::from_str(raw).ok()?;
    let argv = if a.command.0.is_empty() {
        &a.cmd.0
    } else {
        &a.command.0
    };
    Some(whole_command_line(argv))
}

/// The compact first line of a call, or `None` for a call that is dropped
/// (`write_stdin` polling with no input). `command` is the call's
/// [`shell_command`], which the caller has already read.
pub(super) fn call_header(name: &str, p: &Item<'_>, command: Option<&str>) -> Option<String> {
    let exec = |cmd: &str| format!("[exec] {}", values::ellipsize(cmd, DETAIL_CAP));
    if p.kind.get() == Some("local_shell_call") {
        return Some(exec(command.unwrap_or_default()));
    }
    if let Some(cmd) = command {
        return Some(exec(cmd).trim_end().to_owned());
    }
    let raw = p.arguments.get().or(p.input.get()).unwrap_or_default();
    let args: Option<Args> = serde_json::from_str(raw).ok();
    let header = match (name, &args) {
        ("write_stdin", Some(a)) => stdin_header(a)?,
        ("apply_patch", Some(a)) => patch_header(a.input.get().unwrap_or(raw)),
        ("apply_patch", None) => patch_header(raw),
        (_, Some(_)) => {
            let v: serde_json::Value = serde_json::from_str(raw).unwrap_or_default();
            format!("[{name}] {}", values::compact_json(&v, ARGS_CAP))
        }
        (_, None) => format!("[{name}] {}", values::ellipsize(raw.trim(), ARGS_CAP)),
    };
    Some(header.trim_end().to_owned())
}

/// `[write_stdin] session N "chars"`, or `None` for pure polling (no chars).
fn stdin_header(a: &Args<'_>) -> Option<String> {
    let chars = a.chars.get().filter(|c| !c.is_empty())?;
    let session = a.session_id.0.map(|s| format!(" session {s}"));
    Some(format!(
        "[write_stdin]{} {}",
        session.unwrap_or_default(),
        values::compact_json(chars, ARGS_CAP)
    ))
}

/// `[apply_patch] a, b` from the file headers of a patch.
fn patch_header(patch: &str) -> String {
    const MARKERS: [&str; 4] = [
        "*** Add File: ",
        "*** Update File: ",
        "*** Delete File: ",
        "*** Move to: ",
    ];
    let files: Vec<&str> = patch
        .lines()
        .filter_map(|l| MARKERS.iter().find_map(|m| l.strip_prefix(m)))
        .map(str::trim)
        .collect();
    let joined = values::ellipsize(&files.join(", "), DETAIL_CAP).into_owned();
    format!("[apply_patch] {joined}")
}

/// A command line for display: [`whole_command_line`], cut.
pub(super) fn command_line(argv: &[Cow<'_, str>]) -> String {
    values::ellipsize(&whole_command_line(argv), DETAIL_CAP).into_owned()
}

/// `bash -lc X` is `X`; other argv are joined with spaces.
fn whole_command_line(argv: &[Cow<'_, str>]) -> String {
    let shell_wrapped =
        argv.len() >= 3 && argv[0].ends_with("sh") && matches!(argv[1].as_ref(), "-lc" | "-c");
    let cmd = if shell_wrapped {
        argv[2..].join(" ")
    } else {
        argv.join(" ")
    };
    cmd.trim().to_owned()
}

/// Unwraps a `function_call_output`: the older JSON form
/// `{"output", "metadata": {"exit_code"}}` or the unified-exec text header
/// (`Chunk ID: ...\nProcess exited with code N\n...\nOutput:\n<body>`).
pub(super) fn unwrap_output(raw: &str) -> (Cow<'_, str>, Option<i64>) {
    if raw.trim_start().starts_with('{') {
        if let Ok(j) = serde_json::from_str::<JsonOutput>(raw) {
            if let Some(out) = j.output.0 {
                let exit = j
                    .metadata
                    .as_ref()
                    .and_then(ObjOr::as_obj)
                    .and_then(|m| m.exit_code.0);
                return (out, exit);
            }
        }
    }
    let headed = ["Chunk ID:", "Exit code:", "Wall time:"]
        .iter()
        .any(|h| raw.starts_with(h));
    if !headed {
        return (Cow::Borrowed(raw), None);
    }
    let (head, body) = match raw.find("\nOutput:\n") {
        Some(i) => (&raw[..i], &raw[i + "\nOutput:\n".len()..]),
        None => (raw, ""),
    };
    let exit = head.lines().find_map(|l| {
        l.strip_prefix("Process exited with code ")
            .or_else(|| l.strip_prefix("Exit code: "))
            .and_then(|c| c.trim().parse().ok())
    });
    (Cow::Borrowed(body), exit)
}
