//! Tool-noise reduction: shrinks the parts of tool output that cost index
//! space and never answer a search, before chunking.
//!
//! [`reduce`] applies, in order:
//!
//! 1. **Base64 blobs**: a run of base64 characters (`A-Z a-z 0-9 + /`, then
//!    up to two `=`) of at least 100 characters becomes
//!    `[base64 N bytes]`, N being the decoded size. Lines of at least 60
//!    such characters that follow each other (PEM, MIME) count as one run.
//!    A run is kept unless it mixes upper case, lower case and digits, as
//!    real base64 does: hex hashes (which people do search for) and long
//!    words stay.
//! 2. **Minified blobs**: a line over 500 characters of which fewer than 5%
//!    are spaces or tabs becomes `[minified N chars]`.
//! 3. **Path lists**: more than 20 consecutive lines that each look like a
//!    file path (one token of path characters containing `/` or `\`, or
//!    ending in an extension such as `.rs`) keep their first 10 lines,
//!    followed by `[... N more paths]`.
//! 4. **Truncation**: text longer than `cap_chars` characters keeps its
//!    first `cap_chars - cap_chars / 5` characters and its last
//!    `cap_chars / 5`, joined by a line `[... truncated N chars]` (N = the
//!    characters dropped). Cuts fall on char boundaries; the marker is not
//!    counted in `cap_chars`.
//!
//! Unchanged text is returned borrowed.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex};

/// Shortest base64 run that is collapsed.
const MIN_BASE64: usize = 100;
/// Lines longer than this (in chars) may be minified blobs.
const MINIFIED_LINE: usize = 500;
/// A path run longer than this is shortened...
const MIN_PATH_RUN: usize = 20;
/// ...to this many lines.
const KEEP_PATHS: usize = 10;

/// Single runs of 60+ base64 chars, continued over following lines of 60+.
static BASE64: LazyLock<Regex> = LazyLock::new(|| {
    let run = "[A-Za-z0-9+/]";
    let pattern = format!(
        r"(?mR){run}{{60,}}={{0,2}}(?:\r?\n{run}{{60,}}={{0,2}})*(?:\r?\n{run}+={{0,2}}$)?"
    );
    Regex::new(&pattern).expect("static regex")
});

/// Reduces tool noise in `text` and caps it at `cap_chars` characters (see
/// the module doc). Pass `usize::MAX` for no cap.
pub fn reduce(text: &str, cap_chars: usize) -> Cow<'_, str> {
    let mut out = Cow::Borrowed(text);
    for step in [collapse_base64, collapse_minified, collapse_path_lists] {
        if let Some(changed) = step(&out) {
            out = Cow::Owned(changed);
        }
    }
    if let Some(changed) = truncate(&out, cap_chars) {
        out = Cow::Owned(changed);
    }
    out
}

fn collapse_base64(text: &str) -> Option<String> {
    let mut changed = false;
    let out = BASE64.replace_all(text, |c: &Captures| {
        let blob = &c[0];
        let payload = blob
            .bytes()
            .filter(|b| !matches!(b, b'\n' | b'\r' | b'='))
            .count();
        if payload < MIN_BASE64 || !mixed_classes(blob) {
            return blob.to_owned();
        }
        changed = true;
        format!("[base64 {} bytes]", payload * 3 / 4)
    });
    changed.then(|| out.into_owned())
}

/// Upper case, lower case and digits all occur: true of any real base64
/// blob of 100+ chars, false of hex hashes and long words.
fn mixed_classes(s: &str) -> bool {
    let b = s.as_bytes();
    b.iter().any(u8::is_ascii_uppercase)
        && b.iter().any(u8::is_ascii_lowercase)
        && b.iter().any(u8::is_ascii_digit)
}

fn collapse_minified(text: &str) -> Option<String> {
    map_lines(text, |line| {
        if line.len() <= MINIFIED_LINE {
            return None;
        }
        let chars = line.chars().count();
        let spaces = line.bytes().filter(|b| matches!(b, b' ' | b'\t')).count();
        (chars > MINIFIED_LINE && spaces * 20 < chars).then(|| format!("[minified {chars} chars]"))
    })
}

/// Rebuilds `text` with each line (without its line break) replaced by
/// `f(line)` when that is `Some`; `None` when no line changed.
fn map_lines(text: &str, mut f: impl FnMut(&str) -> Option<String>) -> Option<String> {
    let mut out = String::new();
    let mut changed = false;
    let mut copied = 0;
    let mut pos = 0;
    for raw in text.split_inclusive('\n') {
        let line = raw.trim_end_matches(['\n', '\r']);
        if let Some(new) = f(line) {
            out.push_str(&text[copied..pos]);
            out.push_str(&new);
            copied = pos + line.len();
            changed = true;
        }
        pos += raw.len();
    }
    changed.then(|| {
        out.push_str(&text[copied..]);
        out
    })
}

fn collapse_path_lists(text: &str) -> Option<String> {
    let mut out = String::new();
    let mut copied = 0;
    let mut changed = false;
    let mut run = PathRun::default();
    let mut pos = 0;
    for line in text.split_inclusive('\n') {
        if looks_like_path(line.trim()) {
            run.add(pos, line.len());
        } else {
            changed |= run.flush(text, &mut out, &mut copied);
        }
        pos += line.len();
    }
    changed |= run.flush(text, &mut out, &mut copied);
    if !changed {
        return None;
    }
    out.push_str(&text[copied..]);
    Some(out)
}

/// The current run of path-like lines.
#[derive(Default)]
struct PathRun {
    lines: usize,
    /// Byte offset just after the last line kept.
    keep_end: usize,
    /// Byte offset just after the run.
    end: usize,
}

impl PathRun {
    fn add(&mut self, pos: usize, len: usize) {
        self.lines += 1;
        self.end = pos + len;
        if self.lines == KEEP_PATHS {
            self.keep_end = self.end;
        }
    }

    /// Writes a long run, shortened, into `out` and resets the run; true
    /// when the run was long.
    fn flush(&mut self, text: &str, out: &mut String, copied: &mut usize) -> bool {
        let long = self.lines > MIN_PATH_RUN;
        if long {
            out.push_str(&text[*copied..self.keep_end]);
            out.push_str(&format!("[... {} more paths]", self.lines - KEEP_PATHS));
            if text[..self.end].ends_with('\n') {
                out.push('\n');
            }
            *copied = self.end;
        }
        *self = PathRun::default();
        long
    }
}

fn looks_like_path(s: &str) -> bool {
    if s.is_empty() || s.len() > 300 {
        return false;
    }
    let path_chars = s.chars().all(|c| {
        c.is_alphanumeric() || matches!(c, '/' | '\\' | '.' | '_' | '-' | '~' | ':' | '@' | '+')
    });
    if !path_chars {
        return false;
    }
    if s.contains(['/', '\\']) {
        return true;
    }
    match s.rsplit_once('.') {
        Some((_, ext)) => {
            (1..=10).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
                && ext.chars().any(|c| c.is_ascii_alphabetic())
        }
        None => false,
    }
}

/// How far past its cap a text may run before it is cut: a marker saying
/// "truncated 1 chars" costs more than the character it saves.
fn slack(cap: usize) -> usize {
    (cap / 10).max(32)
}

/// How far a cut moves to land on whitespace instead of inside a word.
const WORD_REACH: usize = 40;

/// `text` cut to about `cap` characters: the first four fifths and the last
/// fifth, each cut at whitespace when there is some nearby, with a marker
/// giving the number of characters left out. `None` when the text is
/// within `cap` plus a little slack.
fn truncate(text: &str, cap: usize) -> Option<String> {
    if text.len() <= cap.saturating_add(slack(cap)) {
        return None;
    }
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let total = chars.len();
    if total <= cap.saturating_add(slack(cap)) {
        return None;
    }
    let tail = cap / 5;
    let head = cap - tail;
    // Back to the start of the word the cut would split.
    let mut h = head;
    while h > 0 && head - h < WORD_REACH && !chars[h].1.is_whitespace() {
        h -= 1;
    }
    if h == 0 || !chars[h].1.is_whitespace() {
        h = head;
    }
    // Forward past the word the tail would start inside.
    let mut t = total - tail;
    if tail > 0 {
        let start = t;
        while t < total && t - start < WORD_REACH && !chars[t - 1].1.is_whitespace() {
            t += 1;
        }
        if t == total || !chars[t - 1].1.is_whitespace() {
            t = start;
        }
    } else {
        t = total;
    }
    let head_end = chars.get(h).map_or(text.len(), |(i, _)| *i);
    let tail_start = chars.get(t).map_or(text.len(), |(i, _)| *i);
    let mut out = String::with_capacity(head_end + (text.len() - tail_start) + 32);
    out.push_str(text[..head_end].trim_end());
    out.push_str(&format!("\n[... truncated {} chars]", t - h));
    if t < total {
        out.push('\n');
        out.push_str(text[tail_start..].trim_start());
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const B64_CHARS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

    fn b64(n: usize) -> String {
        B64_CHARS.chars().cycle().take(n).collect()
    }

    #[test]
    fn unchanged_text_is_borrowed() {
        let text = "running 3 tests\ntest a ... ok\nsrc/lib.rs\n";
        assert!(matches!(reduce(text, 1000), Cow::Borrowed(_)));
        assert!(matches!(reduce("", 0), Cow::Borrowed(_)));
    }

    #[test]
    fn base64_single_run() {
        let text = format!("img: data:image/png;base64,{}== end", b64(120));
        assert_eq!(
            reduce(&text, usize::MAX),
            "img: data:image/png;base64,[base64 90 bytes] end"
        );
        // Short runs, hex and single-class runs are kept.
        let short = format!("key {} ok", b64(90));
        assert_eq!(reduce(&short, usize::MAX), short);
        let hex = "0123456789abcdef".repeat(8);
        assert_eq!(reduce(&hex, usize::MAX), hex);
        let word = "abcdefghij".repeat(12);
        assert_eq!(reduce(&word, usize::MAX), word);
    }

    #[test]
    fn base64_wrapped_lines() {
        let pem = format!(
            "-----BEGIN CERT-----\r\n{}\r\n{}\r\n{}=\r\n-----END CERT-----\r\n",
            b64(64),
            b64(64),
            b64(20)
        );
        let out = reduce(&pem, usize::MAX);
        assert_eq!(
            out,
            "-----BEGIN CERT-----\r\n[base64 111 bytes]\r\n-----END CERT-----\r\n"
        );
    }

    #[test]
    fn minified_lines() {
        let js = format!("a\n{}\nb", "function(a){return a+1};".repeat(30));
        assert_eq!(reduce(&js, usize::MAX), "a\n[minified 720 chars]\nb");
        let prose = "the quick brown fox jumps ".repeat(30);
        assert_eq!(reduce(&prose, usize::MAX), prose);
    }

    #[test]
    fn path_lists() {
        let paths: Vec<String> = (0..25).map(|i| format!("src/mod_{i}/file.rs")).collect();
        let text = format!("$ find src\n{}\ndone\n", paths.join("\n"));
        let out = reduce(&text, usize::MAX);
        let expected = format!(
            "$ find src\n{}\n[... 15 more paths]\ndone\n",
            paths[..10].join("\n")
        );
        assert_eq!(out, expected);
        // Exactly 20 lines are kept, and a run at the very end is handled.
        let twenty = paths[..20].join("\n");
        assert_eq!(reduce(&twenty, usize::MAX), twenty);
        let names: Vec<String> = (0..21).map(|i| format!("file{i}.txt")).collect();
        let joined = names.join("\n");
        let out = reduce(&joined, usize::MAX);
        assert!(out.ends_with("file9.txt\n[... 11 more paths]"), "{out}");
    }

    #[test]
    fn path_like() {
        for p in ["src/lib.rs", "C:\\x\\y", "./a", "Cargo.toml", ".gitignore"] {
            assert!(looks_like_path(p), "{p}");
        }
        for p in ["ok.", "1.5", "hello world.rs", "", "done"] {
            assert!(!looks_like_path(p), "{p}");
        }
    }

    #[test]
    fn exact_truncation() {
        // No whitespace to land on: the cut is exact.
        let text = "abcdefghij".repeat(10);
        let out = reduce(&text, 50);
        assert_eq!(
            out,
            format!("{}\n[... truncated 50 chars]\n{}", &text[..40], &text[90..])
        );
        assert_eq!(reduce(&text, 100), text);
    }

    /// Regression (issue probe: snippets showed "[... truncated 1 chars]"
    /// and words cut in half): a text just over the cap is kept whole, and
    /// cuts land between words.
    #[test]
    fn r_truncation_keeps_words_whole_and_skips_tiny_cuts() {
        let text = "x".repeat(201);
        assert_eq!(reduce(&text, 200), text, "one char over: kept");
        let words: String = (0..200).map(|i| format!("word{i:03} ")).collect();
        let out = reduce(words.trim_end(), 500);
        let (head, rest) = out.split_once("\n[... truncated ").unwrap();
        let (count, tail) = rest.split_once(" chars]\n").unwrap();
        assert!(head.ends_with(|c: char| c.is_ascii_digit()), "{head}");
        assert!(
            head.rsplit(' ').next().unwrap().len() == 7,
            "whole word: {head}"
        );
        assert!(tail.starts_with("word"), "{tail}");
        let removed: usize = count.parse().unwrap();
        assert_eq!(
            head.chars().count() + removed + tail.chars().count(),
            words.trim_end().chars().count(),
            "the count is what was left out"
        );
    }

    #[test]
    fn truncation_respects_char_boundaries() {
        let text = "é".repeat(100);
        assert!(matches!(reduce(&text, 100), Cow::Borrowed(_)));
        let out = reduce(&text, 10);
        assert_eq!(
            out,
            format!(
                "{}\n[... truncated 90 chars]\n{}",
                "é".repeat(8),
                "é".repeat(2)
            )
        );
    }
}
