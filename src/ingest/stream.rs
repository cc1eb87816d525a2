//! One append-only transcript (Claude Code, Codex, neutral JSON Lines)
//! from its file to redacted chunks, in parts of bounded size.
//!
//! The file is read in [`Segments`] from where the last run stopped (its
//! stored prefix still hashing the same) or from the start. Each segment is
//! parsed as a continuation of the ones before it, chunked and redacted, and
//! handed on as one [`Prepared`] part: the first replaces the source's rows
//! (or appends, when the file grew since the last run), every later one
//! appends to them, and each carries the source state at its end (offset,
//! hash, line count, session id), so the writer can commit after any part
//! and a run killed between parts is continued by the next run's append.
//! Every appending part names the prefix it continues ([`Prefix`]), so the
//! writer never appends it to another.
//! Memory depends on the segment size, not on the file (issue 26 item 15).
//!
//! A run reads the same as one parse of the whole file would: segments are
//! cut where a format's messages cannot straddle the cut ([`Segments`]),
//! a Codex part knows whether a `user_message` came before it, and a Claude
//! Code part gets the [`claude_code::Outlook`] of the whole file from a
//! cheap first pass (only lines that name a title or a leaf are parsed): the
//! title a `custom-title` or a summary anywhere in the file gives (so the
//! first part stores the title a whole read gives, and nothing is retitled
//! later, which would rewrite every passage), and which summaries resolve.
//! An append to a source indexed by an earlier run keeps the stored title,
//! as before.

use std::fs::File;
use std::path::Path;

use super::claude_code;
use super::codex;
use super::detect::Format;
use super::lines::{line_too_long, PartProblems};
use super::model::{ParsedSession, Problem};
use super::neutral;
use super::nul::readable;
use super::prepare::{
    failed, finish_session, parser_version, redact_ids, Action, Continuation, IngestOptions, Job,
    Part, Prefix, Prepared,
};
use super::segment::Segments;

/// What the parser of a part gets from the rest of the file.
enum Carry {
    Claude(Option<claude_code::Outlook>),
    Codex(codex::Carry),
    Neutral,
}

impl Carry {
    /// Parse one part with the parser of its format.
    fn parse(
        &mut self,
        input: &[u8],
        first_line: usize,
        stem: &str,
        opts: &IngestOptions,
    ) -> ParsedSession {
        let o = opts.parser_options();
        match self {
            Carry::Claude(outlook) => {
                claude_code::parse_part(input, first_line, stem, &o, outlook.as_ref())
            }
            Carry::Codex(c) => codex::parse_part(input, first_line, stem, &o, c),
            Carry::Neutral => neutral::parse(input, first_line, stem),
        }
    }
}

/// The outlook of a whole Claude Code file: two passes over it in blocks
/// of about [`OUTLOOK_BLOCK`].
fn outlook(path: &Path, size: u64) -> std::io::Result<claude_code::Outlook> {
    let mut scan = claude_code::OutlookScan::default();
    each_block(path, size, &mut |b| scan.titles(b))?;
    if scan.needs_leaves() {
        each_block(path, size, &mut |b| scan.leaves(b))?;
    }
    Ok(scan.finish())
}

/// How much of a file the outlook pass holds at a time.
const OUTLOOK_BLOCK: usize = 1 << 20;

/// Hand the complete lines of the first `size` bytes of `path` to `f`, a
/// block at a time, with lines that hold NUL bytes blanked as the parser
/// reads them (a line too long to parse is handed on blank).
fn each_block(path: &Path, size: u64, f: &mut dyn FnMut(&[u8])) -> std::io::Result<()> {
    let mut blocks = Segments::new(File::open(path)?, size, Format::Neutral, OUTLOOK_BLOCK);
    while let Some(b) = blocks.next()? {
        let (n, last) = (b.bytes.len(), b.last);
        f(&readable(b.bytes, false, true).0);
        blocks.consume(n);
        if last {
            break;
        }
    }
    Ok(())
}

/// The state of one source read in parts.
struct Run<'a> {
    job: &'a Job,
    opts: &'a IngestOptions,
    format: Format,
    stem: String,
    carry: Carry,
    cont: Continuation,
    /// Messages stored before the next part.
    messages: usize,
    /// The source continues what a previous run stored.
    append: bool,
    problems: PartProblems,
    /// Problems handed on in earlier parts.
    shown: usize,
    part: usize,
    /// File bytes read and not yet counted in a part.
    unread: u64,
}

/// Prepare an append-only transcript in parts, handing each to `emit`,
/// which answers whether to go on (`false`: the writer stopped).
pub(super) fn prepare_stream(
    job: &Job,
    opts: &IngestOptions,
    format: Format,
    file: File,
    emit: &mut dyn FnMut(Prepared) -> bool,
) {
    let size = job.size.max(0) as u64;
    let mut segs = Segments::new(file, size, format, opts.segment_bytes);
    let (append, cont, messages) = match resume(job, format, &mut segs) {
        Ok(r) => r,
        Err(e) => {
            emit(failed(job, format!("cannot read: {e}")));
            return;
        }
    };
    let mut run = Run {
        job,
        opts,
        format,
        stem: job
            .path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        carry: match carry(job, format, opts, append, &cont) {
            Ok(c) => c,
            Err(e) => {
                emit(failed(job, format!("cannot read: {e}")));
                return;
            }
        },
        cont,
        messages,
        append,
        problems: PartProblems::default(),
        shown: 0,
        part: 0,
        unread: segs.offset(),
    };
    loop {
        let before = segs.offset();
        let from = Prefix {
            offset: before as i64,
            hash: segs.hash().to_hex().to_string(),
        };
        let seg = match segs.next() {
            Ok(seg) => seg,
            Err(e) => {
                let mut out = failed(job, format!("cannot read: {e}"));
                out.part.counts_as = Action::Failed;
                out.part.index = run.part;
                emit(out);
                return;
            }
        };
        // No bytes left (or none since the last run): one last, empty part
        // still records the file's size and time.
        let (bytes, last, too_long) = match &seg {
            Some(s) => (s.bytes, s.last, s.too_long),
            None => (&[][..], true, None),
        };
        let (mut out, consumed) = run.part_of(bytes, too_long);
        out.continues = (out.action == Action::Append).then_some(from);
        // What a parser leaves is an unfinished last line: for next time.
        let stop = last || consumed < bytes.len();
        segs.consume(consumed);
        run.finish_part(&mut out, &segs, before, (stop, last));
        if !emit(out) || stop {
            return;
        }
    }
}

/// The carry of the first part. A Claude Code file read in more than one
/// part (or from where a run stopped) gets the outlook of the whole file;
/// one read in one part needs none: its parser sees all of it.
fn carry(
    job: &Job,
    format: Format,
    opts: &IngestOptions,
    append: bool,
    cont: &Continuation,
) -> std::io::Result<Carry> {
    Ok(match format {
        Format::ClaudeCode => {
            let size = job.size.max(0) as u64;
            let whole = !append && size <= opts.segment_bytes as u64;
            Carry::Claude(match whole {
                true => None,
                false => Some(outlook(&job.path, size)?),
            })
        }
        // An append continues the parser where the last run left it.
        Format::Codex => Carry::Codex(match append {
            true => cont.codex.clone().unwrap_or_default(),
            false => codex::Carry::default(),
        }),
        _ => Carry::Neutral,
    })
}

/// Where to start: after the stored prefix when it still hashes the same
/// (`(true, its continuation, its message count)`), else at the start.
fn resume(
    job: &Job,
    format: Format,
    segs: &mut Segments,
) -> std::io::Result<(bool, Continuation, usize)> {
    let version = parser_version(format);
    let stored = job.stored.as_ref().filter(|s| {
        s.format == format.as_str()
            && s.parser_version == version
            && s.offset > 0
            && s.offset <= job.size
    });
    if let Some(s) = stored {
        match segs.skip(s.offset as u64)? {
            Some(h) if h.to_hex().as_str() == s.hash => {
                return Ok((true, s.cont.clone(), s.messages.max(0) as usize));
            }
            _ => segs.rewind()?,
        }
    }
    Ok((false, Continuation::default(), 0))
}

impl Run<'_> {
    /// Parse, chunk and redact one segment; returns the part (without its
    /// source state) and how many bytes the parser consumed.
    fn part_of(&mut self, bytes: &[u8], too_long: Option<usize>) -> (Prepared, usize) {
        let first_line = self.cont.lines + 1;
        // Lines with NUL bytes are reported and read as blank, and lone
        // surrogates mended (every streamed format is JSON); offsets and
        // hashes stay those of the file.
        let (clean, damaged) = readable(bytes, false, true);
        let mut parsed = self.carry.parse(&clean, first_line, &self.stem, self.opts);
        let ids = redact_ids(&mut parsed);
        let consumed = parsed.consumed;
        if let Some(len) = too_long {
            let message = line_too_long(len).unwrap_or_default();
            parsed.problems.insert(
                0,
                Problem {
                    line: first_line,
                    message,
                },
            );
        }
        self.problems.admit(&mut parsed.problems);
        let mut out = failed(self.job, String::new());
        out.error = None;
        out.format = Some(self.format);
        out.parser_version = parser_version(self.format);
        out.action = if self.part == 0 && !self.append {
            Action::Replace
        } else {
            Action::Append
        };
        out.redactions = ids;
        let session_id = self
            .cont
            .session_id
            .clone()
            .or_else(|| Some(parsed.meta.id.clone()));
        let lines = memchr::memchr_iter(b'\n', &bytes[..consumed]).count();
        let new_messages = parsed.messages.len();
        finish_session(parsed, self.format, self.messages, self.opts, &mut out);
        self.messages += new_messages;
        self.cont.lines += lines;
        self.cont.session_id = session_id;
        if let Carry::Codex(c) = &self.carry {
            self.cont.codex = Some(c.clone());
        }
        out.problems.extend(damaged.into_iter().map(|mut p| {
            p.line += first_line - 1;
            p
        }));
        (out, consumed)
    }

    /// Give `out` the source state after the bytes consumed so far, and
    /// its place among the parts. `last`: no part follows; `at_end`: the
    /// file was read to its end.
    fn finish_part(
        &mut self,
        out: &mut Prepared,
        segs: &Segments,
        before: u64,
        (last, at_end): (bool, bool),
    ) {
        let offset = segs.offset();
        // The bytes this part covers; the last also those it left for the
        // next run (an unfinished line), as a whole read counts them.
        let bytes = if last { segs.read() } else { offset } - before;
        if last {
            out.problems.extend(self.problems.finish());
        }
        out.problems.sort_by_key(|p| p.line);
        out.cont = self.cont.clone();
        out.offset = offset as i64;
        out.hash = segs.hash().to_hex().to_string();
        // A part before the end stores the size it covers, not the
        // file's: the next run sees the file as changed and appends the
        // rest, should this run stop before it.
        out.size = if at_end { self.job.size } else { offset as i64 };
        out.bytes = bytes;
        out.part = Part {
            index: self.part,
            last,
            counts_as: if self.append {
                Action::Append
            } else {
                Action::Replace
            },
            problems_before: self.shown,
            read: bytes + std::mem::take(&mut self.unread),
        };
        self.shown += out.problems.len();
        self.part += 1;
    }
}
