//! Lines with NUL bytes: damage inside a text file, not a binary file.
//!
//! A crash or a full disk can leave a run of zero bytes in a transcript
//! (the file grew, its data never reached the disk). Such a line is not a
//! message, but the lines around it are: the line is reported as a problem
//! at its `path:line` and blanked, so every parser skips it as a blank
//! line and indexes the rest (issue 26 item 14: one NUL line near the
//! start made a whole 3 MB transcript "binary"). Blanking keeps every byte
//! offset and line number, so incremental reads and problem lines stay
//! exact. Whether a whole file is binary is decided by
//! [`detect::is_binary`](super::detect::is_binary).

use std::borrow::Cow;

use super::model::Problem;

/// `input` as the parsers read it: [`blank_nul_lines`], then, for JSON,
/// lone UTF-16 surrogate escapes mended
/// ([`surrogate::mend`](super::surrogate::mend); in a text file `\ud800`
/// is text). Both keep every byte offset.
pub fn readable(input: &[u8], tail: bool, json: bool) -> (Cow<'_, [u8]>, Vec<Problem>) {
    let (clean, problems) = blank_nul_lines(input, tail);
    if !json {
        return (clean, problems);
    }
    (super::surrogate::mend_cow(clean), problems)
}

/// The problem reported for a line with NUL bytes.
pub const NUL_LINE: &str =
    "NUL bytes in the line (left by a crash or a full disk); skipped, the rest of the file is indexed";

/// `input` with every line that holds a NUL byte turned into spaces, and
/// one problem per such line (1-based line numbers of `input`). The last
/// line, when it has no `\n`, is left alone unless `tail`: an append-only
/// transcript's parser reports an unfinished last line itself and reads it
/// again next time. Borrows `input` when it has no NUL byte.
pub fn blank_nul_lines(input: &[u8], tail: bool) -> (Cow<'_, [u8]>, Vec<Problem>) {
    if memchr::memchr(0, input).is_none() {
        return (Cow::Borrowed(input), vec![]);
    }
    let mut out = input.to_vec();
    let mut problems = Vec::new();
    let (mut start, mut line) = (0, 1);
    while start < out.len() {
        let (end, complete) = match memchr::memchr(b'\n', &out[start..]) {
            Some(i) => (start + i, true),
            None => (out.len(), false),
        };
        let text = &mut out[start..end];
        if (complete || tail) && memchr::memchr(0, text).is_some() {
            text.fill(b' ');
            problems.push(Problem {
                line,
                message: NUL_LINE.into(),
            });
        }
        start = end + 1;
        line += 1;
    }
    (Cow::Owned(out), problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nul_lines_are_blanked_in_place_and_reported() {
        let input = b"{\"a\":1}\n\0\0\0\n\0\0{\"b\":2}\n{\"c\":3}\n\0\0";
        let (out, problems) = blank_nul_lines(input, false);
        assert_eq!(out.len(), input.len());
        assert_eq!(&out[..], b"{\"a\":1}\n   \n         \n{\"c\":3}\n\0\0");
        let lines: Vec<usize> = problems.iter().map(|p| p.line).collect();
        assert_eq!(lines, [2, 3]);
        let (out, problems) = blank_nul_lines(input, true);
        assert!(out.ends_with(b"\n  "));
        assert_eq!(problems.len(), 3);
    }

    #[test]
    fn clean_input_is_borrowed() {
        let (out, problems) = blank_nul_lines(b"a\nb\n", true);
        assert!(matches!(out, Cow::Borrowed(_)));
        assert!(problems.is_empty());
    }
}
