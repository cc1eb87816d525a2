//! Reading an append-only transcript in bounded segments.
//!
//! A transcript can be hundreds of megabytes (issue 26 item 15: 268 MB of
//! memory for a 77 MB file read whole). [`Segments`] reads one from a byte
//! offset in segments of about [`IngestOptions::segment_bytes`] bytes, each
//! ending at a line boundary where the format allows a new part to start
//! (`Segments::end`), so parsing a segment as a continuation of the ones
//! before it gives what a whole read gives. It keeps a running blake3 hash
//! of the bytes consumed, so the hash of the prefix an append-only source
//! stores is never computed by reading the prefix again.
//!
//! Memory is at most two segments (when no line within one allows a cut)
//! plus one line: a line longer than a segment is read whole up to
//! [`MAX_LINE_BYTES`]; a longer one is streamed through the hash without
//! being held, and handed to the parser as a blank line
//! ([`Segment::too_long`] says so, for the caller to report it where the
//! parser would have).

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};

use super::detect::Format;
use super::lines::MAX_LINE_BYTES;
#[cfg(doc)]
use super::IngestOptions;
use super::{claude_code, codex};

/// The default segment size: how much of a transcript is read, parsed and
/// written at a time. Peak memory grows with it; throughput hardly (each
/// segment is one transaction of the writer).
pub const SEGMENT_BYTES: usize = 8 << 20;

/// How far a segment may grow to end where its format allows a part to
/// start, at least: tests use segments smaller than a line.
const MIN_HORIZON: usize = 1 << 20;

/// How much is read at a time while looking for the end of a long line.
const READ_STEP: usize = 1 << 20;

/// One segment: complete lines (the last segment may end with an
/// unfinished line), ready to parse.
#[derive(Debug)]
pub struct Segment<'a> {
    /// The bytes to parse. When `too_long` is set they start with a `\n`
    /// standing for that line (or are empty, when the file ends inside it).
    pub bytes: &'a [u8],
    /// The file ends with this segment.
    pub last: bool,
    /// The segment starts with a line of this many bytes (without its
    /// `\n`) that is over [`MAX_LINE_BYTES`]: skipped, never held whole,
    /// and handed to the parser as a blank line (or not at all, when the
    /// file ends inside it: it is then not consumed).
    pub too_long: Option<usize>,
}

/// A file read in segments from an offset, with the hash of what was
/// consumed.
#[derive(Debug)]
pub struct Segments {
    reader: io::Take<File>,
    /// How much of the file is read at most.
    size: u64,
    format: Format,
    max: usize,
    /// Bytes read and not yet consumed; `buf[0]` is at file offset `pos`,
    /// unless `stand_in`.
    buf: Vec<u8>,
    pos: u64,
    /// The hash of the file's bytes before `pos`.
    hasher: blake3::Hasher,
    /// `buf[0]` is a `\n` standing for a too-long line already hashed and
    /// skipped: consuming it moves nothing in the file.
    stand_in: bool,
    eof: bool,
}

impl Segments {
    /// Read `file` (at most its first `size` bytes) from its start, in
    /// segments of about `max` bytes cut where `format` allows.
    pub fn new(file: File, size: u64, format: Format, max: usize) -> Segments {
        Segments {
            reader: file.take(size),
            size,
            format,
            max: max.max(1),
            buf: Vec::new(),
            pos: 0,
            hasher: blake3::Hasher::new(),
            stand_in: false,
            eof: false,
        }
    }

    /// Skip the first `offset` bytes, hashing them: returns their hash
    /// (`None` when the file is shorter). Call before reading a segment;
    /// when the hash is not the one expected, [`Segments::rewind`].
    pub fn skip(&mut self, offset: u64) -> io::Result<Option<blake3::Hash>> {
        self.hasher.update_reader((&mut self.reader).take(offset))?;
        self.pos = self.hasher.count();
        Ok((self.pos == offset).then(|| self.hasher.finalize()))
    }

    /// Start again from the first byte.
    pub fn rewind(&mut self) -> io::Result<()> {
        self.reader.get_mut().seek(SeekFrom::Start(0))?;
        self.reader.set_limit(self.size);
        self.buf.clear();
        self.pos = 0;
        self.hasher = blake3::Hasher::new();
        self.stand_in = false;
        self.eof = false;
        Ok(())
    }

    /// The file offset after the bytes consumed so far.
    pub fn offset(&self) -> u64 {
        self.pos
    }

    /// How many bytes of the file were read so far (consumed or not).
    pub fn read(&self) -> u64 {
        self.size - self.reader.limit()
    }

    /// The hash of the bytes consumed so far.
    pub fn hash(&self) -> blake3::Hash {
        self.hasher.finalize()
    }

    /// The next segment, or `None` at the end of the file. Call
    /// [`Segments::consume`] with what the parser consumed before asking
    /// for the next one. What a `last` segment leaves unconsumed (an
    /// unfinished line) is for the next run: stop there.
    pub fn next(&mut self) -> io::Result<Option<Segment<'_>>> {
        self.fill(self.max)?;
        if self.buf.is_empty() {
            return Ok(None);
        }
        let too_long = match self.stand_in {
            true => None,
            false => self.skip_long_line()?,
        };
        if self.buf.is_empty() {
            // The file ends inside a too-long line: nothing to parse.
            return Ok(Some(Segment {
                bytes: &[],
                last: true,
                too_long,
            }));
        }
        self.fill(self.max)?;
        let end = self.end()?;
        Ok(Some(Segment {
            bytes: &self.buf[..end],
            last: self.eof && end == self.buf.len(),
            too_long,
        }))
    }

    /// Mark the first `n` bytes of the segment last returned as consumed:
    /// they enter the hash and are not read again.
    pub fn consume(&mut self, n: usize) {
        let n = n.min(self.buf.len());
        let skip = usize::from(self.stand_in && n > 0);
        self.stand_in &= n == 0;
        self.hasher.update(&self.buf[skip..n]);
        self.pos += (n - skip) as u64;
        self.buf.drain(..n);
    }

    /// Read until the buffer holds `want` bytes or the file ends.
    fn fill(&mut self, want: usize) -> io::Result<()> {
        while !self.eof && self.buf.len() < want {
            let len = self.buf.len();
            // No more than the file has left (and at least one byte, so
            // the end of the file is seen).
            let step = (want - len).min(self.reader.limit().max(1) as usize);
            self.buf.resize(len + step, 0);
            let got = read_some(&mut self.reader, &mut self.buf[len..])?;
            self.buf.truncate(len + got);
            self.eof = got == 0;
        }
        Ok(())
    }

    /// When the buffer starts with a line over [`MAX_LINE_BYTES`], skip it
    /// and return its length. A line that ends before the file does is
    /// hashed, consumed and replaced by a stand-in `\n`; one the file ends
    /// inside is dropped unconsumed (the buffer is left empty).
    fn skip_long_line(&mut self) -> io::Result<Option<usize>> {
        self.fill(self.max.min(MAX_LINE_BYTES + 1))?;
        if memchr::memchr(b'\n', &self.buf).is_none() {
            self.fill(MAX_LINE_BYTES + 1)?;
        }
        let short = match memchr::memchr(b'\n', &self.buf) {
            Some(i) => i <= MAX_LINE_BYTES,
            None => self.buf.len() <= MAX_LINE_BYTES,
        };
        if short {
            return Ok(None);
        }
        let mut hasher = self.hasher.clone();
        let mut len = 0;
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.buf) {
                hasher.update(&self.buf[..=i]);
                self.hasher = hasher;
                self.pos += (len + i + 1) as u64;
                self.buf.drain(..i);
                // The line's `\n` stays, as the stand-in.
                self.stand_in = true;
                self.buf.shrink_to(self.max);
                return Ok(Some(len + i));
            }
            hasher.update(&self.buf);
            len += self.buf.len();
            self.buf.clear();
            self.fill(READ_STEP)?;
            if self.buf.is_empty() {
                return Ok(Some(len));
            }
        }
    }

    /// Where the segment in the buffer ends: the whole rest of the file
    /// when it fits; else the last line start where the format allows a
    /// part to start, from a quarter of a segment on, else anywhere in the
    /// buffer, else in a buffer grown a segment at a time up to two
    /// segments (or [`MIN_HORIZON`]); else (no such line that far) the
    /// last line end.
    fn end(&mut self) -> io::Result<usize> {
        if self.eof && self.buf.len() <= self.max {
            return Ok(self.buf.len());
        }
        let quarter = (self.max / 4).max(1);
        if let Some(cut) = self.allowed(quarter).or_else(|| self.allowed(1)) {
            return Ok(cut);
        }
        // Read on, a segment at a time, up to the horizon.
        let horizon = (2 * self.max).max(MIN_HORIZON);
        while self.format_cuts() && self.buf.len() < horizon {
            self.fill(self.buf.len() + self.max)?;
            if self.eof {
                return Ok(self.buf.len());
            }
            if let Some(cut) = self.allowed(1) {
                return Ok(cut);
            }
        }
        match memchr::memrchr(b'\n', &self.buf) {
            Some(i) if !(self.stand_in && i == 0) => Ok(i + 1),
            // Only the stand-in: what follows it is read next time (it may
            // be too long itself).
            Some(_) => Ok(1),
            None => self.line_end(),
        }
    }

    /// Whether the format allows a part to start only at some lines.
    fn format_cuts(&self) -> bool {
        matches!(self.format, Format::ClaudeCode | Format::Codex)
    }

    /// The last line start from `min` on where the format allows a part to
    /// start (any line, for a format without a rule).
    fn allowed(&self, min: usize) -> Option<usize> {
        let buf = &self.buf;
        match self.format {
            Format::ClaudeCode => cut_claude(buf, min),
            Format::Codex => cut_codex(buf, min),
            _ => memchr::memrchr(b'\n', buf)
                .map(|i| i + 1)
                .filter(|&c| c >= min && !(self.stand_in && c == 1)),
        }
    }

    /// The end of the line the buffer starts with, when the buffer holds
    /// no line end: read on until it ends (it is at most
    /// [`MAX_LINE_BYTES`], see [`Segments::skip_long_line`]) or the file
    /// does.
    fn line_end(&mut self) -> io::Result<usize> {
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.buf) {
                return Ok(i + 1);
            }
            if self.eof {
                return Ok(self.buf.len());
            }
            self.fill(self.buf.len() + READ_STEP)?;
        }
    }
}

/// The complete lines of `buf`, from the last: (start, line).
fn lines_back(buf: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    let mut ends = memchr::memrchr_iter(b'\n', buf).peekable();
    std::iter::from_fn(move || {
        let end = ends.next()?;
        let start = ends.peek().map_or(0, |&p| p + 1);
        Some((start, &buf[start..end]))
    })
}

/// Claude Code: the last line start from `min` on before an assistant line
/// that starts a new response (see [`claude_code::Response`]).
fn cut_claude(buf: &[u8], min: usize) -> Option<usize> {
    // The nearest assistant line after the lines looked at so far.
    let mut later: Option<(usize, claude_code::Response)> = None;
    for (start, line) in lines_back(buf) {
        if memchr::memmem::find(line, b"assistant").is_none() {
            continue;
        }
        let Some(r) = claude_code::response_of(line) else {
            continue;
        };
        if let Some((s, l)) = &later {
            if !l.continues(&r) {
                return Some(*s);
            }
        }
        if start < min {
            return None;
        }
        later = Some((start, r));
    }
    // No assistant line before it in the buffer: nothing it joins.
    later.map(|(s, _)| s).filter(|&s| s > 0)
}

/// Codex: the last line start from `min` on at a `turn_context` or a
/// `reasoning` item (see [`codex::starts_step`]).
fn cut_codex(buf: &[u8], min: usize) -> Option<usize> {
    lines_back(buf)
        .take_while(|&(start, _)| start >= min)
        .filter(|&(start, line)| {
            start > 0
                && (memchr::memmem::find(line, b"reasoning").is_some()
                    || memchr::memmem::find(line, b"turn_context").is_some())
        })
        .find(|(_, line)| codex::starts_step(line))
        .map(|(start, _)| start)
}

/// `read` that retries on interruption.
fn read_some(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match r.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every segment of `text` read with `max`, consumed whole; returns
    /// the segments and checks the hash and offset after each.
    fn segments(text: &[u8], format: Format, max: usize) -> Vec<(Vec<u8>, Option<usize>)> {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("t.jsonl");
        std::fs::write(&path, text).unwrap();
        let file = File::open(&path).unwrap();
        let mut segs = Segments::new(file, text.len() as u64, format, max);
        let mut out = Vec::new();
        while let Some(s) = segs.next().unwrap() {
            let (bytes, last, long) = (s.bytes.to_vec(), s.last, s.too_long);
            let n = bytes.len();
            segs.consume(n);
            let at = segs.offset() as usize;
            assert_eq!(segs.hash(), blake3::hash(&text[..at]), "hash at {at}");
            out.push((bytes, long));
            if last {
                break;
            }
        }
        out
    }

    fn claude_line(kind: &str, id: &str, pad: usize) -> String {
        let text = "x".repeat(pad);
        format!("{{\"type\":\"{kind}\",\"message\":{{\"id\":\"{id}\",\"content\":\"{text}\"}}}}\n")
    }

    #[test]
    fn segments_cover_the_file_and_end_at_lines() {
        let text: String = (0..2000)
            .map(|i| {
                format!(
                    "{{\"role\":\"user\",\"content\":\"{}\"}}\n",
                    "w ".repeat(i % 50)
                )
            })
            .collect();
        let parts = segments(text.as_bytes(), Format::Neutral, 4096);
        assert!(parts.len() > 10, "{}", parts.len());
        let joined: Vec<u8> = parts.iter().flat_map(|(b, _)| b.clone()).collect();
        assert_eq!(joined, text.as_bytes());
        for (b, _) in &parts {
            assert!(b.len() <= 4096 && b.ends_with(b"\n"));
        }
    }

    /// A Claude Code segment never ends inside a response: the line after
    /// a cut starts a new one.
    #[test]
    fn claude_segments_end_before_a_new_response() {
        let mut text = String::new();
        for r in 0..300 {
            text.push_str(&claude_line("user", "", 10 + r % 7 * 30));
            for _ in 0..1 + r % 4 {
                text.push_str(&claude_line("assistant", &format!("m{r}"), 40 + r % 5 * 50));
            }
        }
        let parts = segments(text.as_bytes(), Format::ClaudeCode, 2048);
        assert!(parts.len() > 10);
        let mut prev: Option<String> = None;
        for (i, (b, _)) in parts.iter().enumerate() {
            let first = b.split(|&c| c == b'\n').next().unwrap();
            if i > 0 {
                let r = claude_code::response_of(first).expect("starts with an assistant line");
                let p = claude_code::response_of(prev.as_ref().unwrap().as_bytes()).unwrap();
                assert!(!r.continues(&p), "segment {i} continues the last response");
            }
            let last_assistant = b
                .split(|&c| c == b'\n')
                .rfind(|l| claude_code::response_of(l).is_some())
                .map(|l| String::from_utf8(l.to_vec()).unwrap());
            prev = last_assistant.or(prev);
        }
    }

    /// A line over [`MAX_LINE_BYTES`] is never held whole: it is hashed,
    /// skipped and handed on as a blank line, and a file that ends inside
    /// one leaves it unconsumed.
    #[test]
    fn a_line_too_long_to_read_is_skipped_and_hashed() {
        let long = "y".repeat(MAX_LINE_BYTES + 10);
        let text = format!("{{\"a\":1}}\n{long}\n{{\"b\":2}}\n");
        let parts = segments(text.as_bytes(), Format::Neutral, 1 << 20);
        let flagged: Vec<_> = parts.iter().filter_map(|(_, l)| *l).collect();
        assert_eq!(flagged, [MAX_LINE_BYTES + 10]);
        let joined: Vec<u8> = parts.iter().flat_map(|(b, _)| b.clone()).collect();
        assert_eq!(joined, b"{\"a\":1}\n\n{\"b\":2}\n");
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("t.jsonl");
        let cut = format!("{{\"a\":1}}\n{long}");
        std::fs::write(&path, &cut).unwrap();
        let mut segs = Segments::new(
            File::open(&path).unwrap(),
            cut.len() as u64,
            Format::Neutral,
            1 << 20,
        );
        let s = segs.next().unwrap().unwrap();
        assert_eq!(s.bytes, b"{\"a\":1}\n");
        segs.consume(8);
        let s = segs.next().unwrap().unwrap();
        assert_eq!(
            (s.bytes, s.last, s.too_long),
            (&b""[..], true, Some(long.len()))
        );
        segs.consume(0);
        assert_eq!(segs.offset(), 8, "the unfinished line is left for later");
        assert_eq!(segs.hash(), blake3::hash(b"{\"a\":1}\n"));
    }

    #[test]
    fn skip_checks_a_prefix_and_rewind_starts_again() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("t.jsonl");
        std::fs::write(&path, b"one\ntwo\nthree\n").unwrap();
        let mut segs = Segments::new(File::open(&path).unwrap(), 14, Format::Neutral, 64);
        assert_eq!(segs.skip(4).unwrap(), Some(blake3::hash(b"one\n")));
        assert_eq!(segs.next().unwrap().unwrap().bytes, b"two\nthree\n");
        segs.rewind().unwrap();
        assert_eq!(segs.next().unwrap().unwrap().bytes, b"one\ntwo\nthree\n");
        let mut short = Segments::new(File::open(&path).unwrap(), 14, Format::Neutral, 64);
        assert_eq!(short.skip(99).unwrap(), None, "the file is shorter");
    }
}
