//! The skeleton the line-oriented transcript parsers share: Claude Code
//! ([`super::claude_code`]) and Codex ([`super::codex`]) are each a lenient
//! line struct and a builder that takes the decoded lines in file order;
//! Gemini CLI's chats ([`super::gemini`]) take the same options and caps.
//!
//! - [`parse`] runs a format's [`Transcript`] over the lines of its input
//!   (`lines::read_lines`: UTF-8, JSON, bad lines as problems, what was
//!   consumed) and returns the [`ParsedSession`];
//! - [`sniff`] decides a format from the first line of a file's head, as
//!   the format's [`FirstLine`] judges it;
//! - [`unknown_type`] is the problem of a line whose `type` the format does
//!   not know;
//! - [`Options`] and the caps bound what a session keeps of tool output,
//!   tool calls and titles.

use serde::Deserialize;

use super::lines::{self, Problems};
use super::model::{Message, ParsedSession, SessionMeta};

/// Error outputs keep this many times [`Options::tool_output_cap`].
pub const ERROR_CAP_FACTOR: usize = 4;

/// Longest session title, in chars.
pub const TITLE_CAP: usize = 80;

/// Longest detail on a tool call's first line (a command, a path, a
/// query), in chars.
pub const DETAIL_CAP: usize = 500;

/// Longest compact JSON of the arguments of a tool shown without a detail
/// of its own.
pub const ARGS_CAP: usize = 200;

/// Parser settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Tool outputs are cut to this many chars (errors:
    /// [`ERROR_CAP_FACTOR`]× as many).
    pub tool_output_cap: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            tool_output_cap: 2000,
        }
    }
}

impl Options {
    /// How many chars of a tool's output are kept: more for an error.
    pub fn output_cap(&self, is_error: bool) -> usize {
        if is_error {
            self.tool_output_cap.saturating_mul(ERROR_CAP_FACTOR)
        } else {
            self.tool_output_cap
        }
    }
}

/// A format's reading of a transcript: it takes each decoded line in file
/// order and, at the end, gives the session's meta and messages.
pub trait Transcript<'a> {
    /// One line as the format's lenient struct decodes it, borrowing from
    /// the input.
    type Line: Deserialize<'a>;

    /// Take line `n` (1-based in the file), reporting what it cannot use.
    fn line(&mut self, n: usize, line: Self::Line, problems: &mut Problems);

    /// The session meta and the messages of the lines taken.
    fn finish(self) -> (SessionMeta, Vec<Message>);
}

/// Runs `transcript` over the lines of `input`, whose first line is line
/// `first_line` of the file: the session it reads, the problems of the
/// lines it could not use, and how many bytes were consumed (an
/// unterminated last line that does not parse is left for the next run).
pub fn parse<'a, T: Transcript<'a>>(
    input: &'a [u8],
    first_line: usize,
    mut transcript: T,
) -> ParsedSession {
    let mut problems = Problems::default();
    let consumed = lines::read_lines::<T::Line, _>(input, first_line, &mut problems, |n, l, p| {
        transcript.line(n, l, p)
    });
    let (meta, messages) = transcript.finish();
    ParsedSession {
        meta,
        messages,
        unknown_lines: problems.unknown(),
        problems: problems.finish(),
        consumed,
    }
}

/// What a format's first line looks like, for [`sniff`].
pub trait FirstLine<'a>: Deserialize<'a> {
    /// Whether a first line that decoded is one of the format's.
    fn is_format(&self) -> bool;

    /// Whether a first line cut by the end of the head (or whose JSON ends
    /// early) is one of the format's, judged by its bytes.
    fn cut_is_format(line: &[u8]) -> bool;
}

/// Cheap content sniff on the first few KB of a file: whether its first
/// non-blank line is a JSON object of the format `L` describes.
pub fn sniff<'a, L: FirstLine<'a>>(head: &'a [u8]) -> bool {
    let Some((line, complete)) = lines::first_line(head) else {
        return false;
    };
    if !line.starts_with(b"{") {
        return false;
    }
    match serde_json::from_slice::<L>(line) {
        Ok(l) => l.is_format(),
        Err(e) if e.is_eof() || !complete => L::cut_is_format(line),
        Err(_) => false,
    }
}

/// Whether `line` holds `key` anywhere (for judging a cut first line).
pub fn has(line: &[u8], key: &[u8]) -> bool {
    memchr::memmem::find(line, key).is_some()
}

/// Line `n`, whose `type` (`kind`) the format does not know, is counted as
/// skipped (launchers add line types with new versions: Claude Code's
/// `last-prompt`, Codex's `world_state`); a line without a `type` is a
/// problem.
pub fn unknown_type(n: usize, kind: Option<&str>, problems: &mut Problems) {
    match kind {
        Some(other) => {
            tracing::debug!(line = n, kind = other, "line of an unknown type skipped");
            problems.skip_unknown();
        }
        None => problems.push(n, "missing \"type\" field"),
    }
}

/// Helpers the parsers' tests share.
#[cfg(test)]
pub(super) mod testing {
    use super::super::model::{ParsedSession, Role};

    /// `lines` as a file: each ended by `\n`.
    pub fn file(lines: &[String]) -> String {
        let mut s = lines.join("\n");
        s.push('\n');
        s
    }

    /// The role and text of each message.
    pub fn texts(p: &ParsedSession) -> Vec<(Role, &str)> {
        p.messages
            .iter()
            .map(|m| (m.role, m.text.as_str()))
            .collect()
    }

    /// 64 KiB of bytes drawn from `alphabet`, seeded.
    pub fn junk(seed: u64, alphabet: &[u8]) -> Vec<u8> {
        let mut rng = synth::Rng::with_seed(seed);
        (0..64 * 1024)
            .map(|_| alphabet[rng.usize(..alphabet.len())])
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_keep_more_output() {
        let o = Options {
            tool_output_cap: 10,
        };
        assert_eq!((o.output_cap(false), o.output_cap(true)), (10, 40));
        let huge = Options {
            tool_output_cap: usize::MAX,
        };
        assert_eq!(huge.output_cap(true), usize::MAX);
    }
}
