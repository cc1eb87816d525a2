//! The line driver of the line-oriented transcript parsers (`claude_code`,
//! `codex`, Gemini CLI's JSONL logs): [`read_lines`] splits the input on
//! `\n` with `memchr`, checks UTF-8, decodes each line with
//! `serde_json::from_str` into a caller-chosen borrowed struct, turns bad
//! lines into [`Problem`]s (at most [`MAX_PROBLEMS`] in detail) and
//! computes `consumed`. An unterminated final line that parses is
//! consumed; one that does not (a transcript still being written) is left
//! for the next run and reported as `truncated last line ...`.
//!
//! Memory: a line is never copied as a whole; only the string fields a
//! parser keeps are materialised (once, and only when they contain
//! escapes; see `lenient`).

use serde::de::IgnoredAny;
use serde::Deserialize;

use super::model::Problem;

/// Detailed problems kept per parse; later ones are only counted, so a
/// binary file cannot allocate millions of problem strings.
pub const MAX_PROBLEMS: usize = 1000;

/// The longest line a JSONL parser reads. A longer one (a pasted dump, a
/// runaway tool output) is reported and skipped rather than turned into
/// tens of thousands of passages.
pub const MAX_LINE_BYTES: usize = 16 << 20;

/// The problem to report for a line of `len` bytes, if it is too long.
pub fn line_too_long(len: usize) -> Option<String> {
    (len > MAX_LINE_BYTES).then(|| {
        format!(
            "line of {:.1} MB is over the {} MB limit; skipped",
            len as f64 / 1e6,
            MAX_LINE_BYTES >> 20
        )
    })
}

/// Collects [`Problem`]s up to [`MAX_PROBLEMS`], then counts the rest.
#[derive(Debug, Default)]
pub struct Problems {
    list: Vec<Problem>,
    suppressed: usize,
    unknown: usize,
}

impl Problems {
    /// Records a problem on 1-based `line`.
    pub fn push(&mut self, line: usize, message: impl Into<String>) {
        if self.list.len() < MAX_PROBLEMS {
            self.list.push(Problem {
                line,
                message: message.into(),
            });
        } else {
            self.suppressed += 1;
        }
    }

    /// Counts a line of a type the format does not read: launchers add
    /// line types often, and a new one is not a problem of the file.
    pub fn skip_unknown(&mut self) {
        self.unknown += 1;
    }

    /// Lines of types the format does not read, skipped so far.
    pub fn unknown(&self) -> usize {
        self.unknown
    }

    /// The recorded problems, plus one summary entry if some were suppressed.
    pub fn finish(mut self) -> Vec<Problem> {
        if self.suppressed > 0 {
            self.list.push(suppressed_entry(self.suppressed));
        }
        self.list
    }
}

/// The entry [`Problems::finish`] adds for `n` suppressed problems.
fn suppressed_entry(n: usize) -> Problem {
    Problem {
        line: 0,
        message: format!("{n} more problems not shown"),
    }
}

/// [`MAX_PROBLEMS`] kept over the parts of a file read in parts, as one
/// parse of the whole file keeps them: each part's problems go through
/// [`PartProblems::admit`], and the last part gets the summary entry.
#[derive(Debug, Default)]
pub struct PartProblems {
    kept: usize,
    suppressed: usize,
}

impl PartProblems {
    /// Keep what is left of the budget of one part's problems (as a
    /// parser returned them, summary entry included) and count the rest.
    pub fn admit(&mut self, list: &mut Vec<Problem>) {
        if let Some(i) = list.iter().position(|p| suppressed_count(p).is_some()) {
            self.suppressed += suppressed_count(&list.remove(i)).unwrap_or(0);
        }
        let room = MAX_PROBLEMS - self.kept;
        if list.len() > room {
            self.suppressed += list.len() - room;
            list.truncate(room);
        }
        self.kept += list.len();
    }

    /// The summary entry for the last part, if problems were suppressed.
    pub fn finish(&self) -> Option<Problem> {
        (self.suppressed > 0).then(|| suppressed_entry(self.suppressed))
    }
}

/// The count a summary entry of [`suppressed_entry`] states.
fn suppressed_count(p: &Problem) -> Option<usize> {
    let n = p
        .message
        .strip_suffix(" more problems not shown")?
        .parse()
        .ok()?;
    (p.line == 0 && *p == suppressed_entry(n)).then_some(n)
}

/// What one physical line decoded to.
enum Decoded<T> {
    Blank,
    Value(T),
    /// `syntax` is true when the bytes are not complete valid JSON (or not
    /// UTF-8): for an unterminated last line that means "still being written".
    Bad {
        message: String,
        syntax: bool,
    },
}

/// Walks the `\n`-terminated lines of `input`, decoding each into `T` and
/// calling `on_line(line_number, value, problems)`. Returns the number of bytes fully
/// consumed. Blank lines are skipped silently.
pub fn read_lines<'a, T, F>(
    input: &'a [u8],
    first_line: usize,
    problems: &mut Problems,
    mut on_line: F,
) -> usize
where
    T: Deserialize<'a>,
    F: FnMut(usize, T, &mut Problems),
{
    let mut pos = 0;
    let mut line = first_line;
    let mut consumed = 0;
    while pos < input.len() {
        let (end, next, complete) = match memchr::memchr(b'\n', &input[pos..]) {
            Some(i) => (pos + i, pos + i + 1, true),
            None => (input.len(), input.len(), false),
        };
        let mut raw = &input[pos..end];
        if pos == 0 && first_line <= 1 {
            raw = raw.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(raw);
        }
        if let Some(message) = line_too_long(raw.len()) {
            problems.push(line, message);
            if complete {
                consumed = next;
            }
            pos = next;
            line += 1;
            continue;
        }
        let used = match decode::<T>(raw) {
            Decoded::Blank => complete,
            Decoded::Value(v) => {
                on_line(line, v, problems);
                true
            }
            Decoded::Bad { message, syntax } => {
                report_bad(problems, line, message, syntax, complete, raw.len())
            }
        };
        if used {
            consumed = next;
        }
        pos = next;
        line += 1;
    }
    consumed
}

/// Records a bad line; returns whether it counts as consumed. An
/// unterminated last line that is not complete JSON is left unconsumed and
/// reported as `truncated last line ...`.
fn report_bad(
    problems: &mut Problems,
    line: usize,
    message: String,
    syntax: bool,
    complete: bool,
    len: usize,
) -> bool {
    if complete || !syntax {
        problems.push(line, message);
        return true;
    }
    problems.push(
        line,
        format!("truncated last line ({len} bytes, not consumed): {message}"),
    );
    false
}

fn decode<'a, T: Deserialize<'a>>(raw: &'a [u8]) -> Decoded<T> {
    let text = match std::str::from_utf8(raw) {
        Ok(t) => t,
        Err(e) => {
            return Decoded::Bad {
                message: format!("invalid UTF-8 at byte {}", e.valid_up_to()),
                syntax: true,
            }
        }
    };
    let start = text.trim_start();
    if start.is_empty() {
        return Decoded::Blank;
    }
    if !start.starts_with('{') {
        return match serde_json::from_str::<IgnoredAny>(text) {
            Ok(_) => Decoded::Bad {
                message: format!("not a JSON object (found {})", json_kind(start)),
                syntax: false,
            },
            Err(e) => bad_json(&e),
        };
    }
    match serde_json::from_str::<T>(text) {
        Ok(v) => Decoded::Value(v),
        Err(e) => bad_json(&e),
    }
}

fn bad_json<T>(e: &serde_json::Error) -> Decoded<T> {
    Decoded::Bad {
        message: json_error(e),
        syntax: !e.is_data(),
    }
}

/// The JSON kind a value starting with `s` has (for problem messages).
fn json_kind(s: &str) -> &'static str {
    match s.as_bytes().first() {
        Some(b'"') => "a string",
        Some(b'[') => "an array",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    }
}

/// A problem message for a serde_json error, without serde's redundant
/// "at line 1" (every input here is one line): `invalid JSON: expected value
/// at column 1`, or `unexpected shape: ...` for valid JSON of the wrong shape.
pub fn json_error(e: &serde_json::Error) -> String {
    let full = e.to_string();
    let msg = full
        .rsplit_once(" at line ")
        .map_or(full.as_str(), |(m, _)| m);
    if e.is_data() {
        format!("unexpected shape: {msg} at column {}", e.column())
    } else {
        format!("invalid JSON: {msg} at column {}", e.column())
    }
}

/// The first non-blank line of `head` (trimmed) and whether it is complete.
pub fn first_line(head: &[u8]) -> Option<(&[u8], bool)> {
    let mut rest = head;
    while !rest.is_empty() {
        let (line, next, complete) = match memchr::memchr(b'\n', rest) {
            Some(i) => (&rest[..i], &rest[i + 1..], true),
            None => (rest, &rest[rest.len()..], false),
        };
        let line = line
            .strip_prefix(b"\xEF\xBB\xBF")
            .unwrap_or(line)
            .trim_ascii();
        if !line.is_empty() {
            return Some((line, complete));
        }
        rest = next;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::lenient::TextPart;

    fn run(input: &[u8]) -> (Vec<(usize, String)>, Vec<Problem>, usize) {
        let mut problems = Problems::default();
        let mut seen = Vec::new();
        let consumed = read_lines::<TextPart, _>(input, 10, &mut problems, |line, v, _| {
            seen.push((line, v.text.get().unwrap_or_default().to_owned()));
        });
        (seen, problems.finish(), consumed)
    }

    #[test]
    fn driver_reports_bad_lines_and_keeps_going() {
        let input = b"{\"text\":\"a\"}\n\noops\n42\n\xff\xfe\n{\"text\":\"b\"}\n{\"text\":";
        let (seen, problems, consumed) = run(input);
        assert_eq!(seen, vec![(10, "a".into()), (15, "b".into())]);
        let msgs: Vec<_> = problems
            .iter()
            .map(|p| (p.line, p.message.as_str()))
            .collect();
        assert_eq!(msgs[0], (12, "invalid JSON: expected value at column 1"));
        assert_eq!(msgs[1], (13, "not a JSON object (found a number)"));
        assert_eq!(msgs[2], (14, "invalid UTF-8 at byte 0"));
        assert_eq!(msgs[3].0, 16);
        assert!(msgs[3].1.starts_with("truncated last line"));
        assert_eq!(consumed, input.len() - b"{\"text\":".len());
    }

    #[test]
    fn driver_consumes_complete_unterminated_line() {
        let (seen, problems, consumed) = run(b"{\"text\":\"a\"}");
        assert_eq!(seen.len(), 1);
        assert!(problems.is_empty());
        assert_eq!(consumed, 12);
    }
}
