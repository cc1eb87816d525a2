//! Preparing one source for the writer: read it, decide what changed since
//! the last run, parse, chunk and redact. Pure with respect to the index:
//! runs on rayon threads and hands [`Prepared`] parts to the single writer.
//!
//! Incremental rules, given the stored [`SourceState`]:
//! - same size, mtime and parser version: never read (decided before this
//!   step, on the stat alone);
//! - an append-only JSONL transcript (Claude Code, Codex, neutral lines)
//!   that grew and whose first `offset` bytes still hash the same: only the
//!   new lines are parsed ([`Action::Append`]);
//! - anything else (modified, truncated, another format, `--full`, a
//!   Gemini CLI chat, which Gemini CLI rewrites or rewinds): everything is
//!   parsed again and replaces the old rows ([`Action::Replace`]).
//!
//! An append-only transcript is read in bounded segments and handed on as
//! one part per segment, each a continuation of the one before
//! (`ingest::stream`): memory does not grow with the file. The other
//! formats (tickets, Markdown chat logs, a neutral JSON document, a Gemini
//! CLI chat) are read whole, as one part: they are parsed as one document.
//! One that does not parse as a whole (a Gemini chat cut short) fails with
//! the line and column, and its stored rows stay as they were.

use std::borrow::Cow;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::chunk::{chunk_messages, Chunk, ChunkOptions};
use super::detect::{detect, Format, Kind};
use super::model::{Launcher, ParsedSession, Problem, Role, SessionMeta, Ticket};
use super::nul::readable;
use super::segment::SEGMENT_BYTES;
use super::{chatlog, claude_code, codex, gemini, neutral, noise, ticket, transcript};
use crate::secrets;
use crate::text::aux_terms;

/// Bumped when chunking or redaction changes, so every source is redone
/// (3: one passage per message instead of overlapping multi-message chunks;
/// 4: the secret kinds of issue #26, so passages indexed before them lose
/// the secrets they hold; 5: the same for the kinds and values of issue
/// #37; 6: AWS secret keys and tokens stated in sentences, and messages a
/// lone UTF-16 surrogate lost; 7: passwords made of words).
pub const PIPELINE_VERSION: u32 = 7;

/// How much of a file is read to detect its format.
const HEAD_BYTES: usize = 64 * 1024;

/// What the index remembers about a source between runs.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceState {
    pub id: i64,
    /// As stored: redacted when the file's path holds a secret.
    pub path: String,
    pub format: String,
    pub size: i64,
    pub mtime: i64,
    pub hash: String,
    pub parser_version: i64,
    pub offset: i64,
    pub messages: i64,
    pub cont: Continuation,
}

/// Parser state kept in `sources.state` (JSON) for append-only files.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Continuation {
    /// Complete lines consumed so far.
    pub lines: usize,
    /// The session id the source's rows use.
    pub session_id: Option<String>,
    /// What a Codex rollout's parser leaves for the lines appended later.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codex: Option<super::codex::Carry>,
}

/// Options of the ingest step.
#[derive(Debug, Clone)]
pub struct IngestOptions {
    pub chunk: ChunkOptions,
    /// Cap on a tool result or command output, in characters.
    pub tool_output_cap: usize,
    /// Target size of a ticket part, in words.
    pub ticket_words: usize,
    /// Force a kind or a format instead of detecting it.
    pub kind: Option<Kind>,
    pub format: Option<Format>,
    /// How much of an append-only transcript is read, parsed and written
    /// at a time, in bytes (about; see `ingest::segment`). Not a setting:
    /// tests use small segments.
    pub segment_bytes: usize,
}

impl Default for IngestOptions {
    fn default() -> Self {
        IngestOptions {
            chunk: ChunkOptions::default(),
            tool_output_cap: 2000,
            ticket_words: 300,
            kind: None,
            format: None,
            segment_bytes: SEGMENT_BYTES,
        }
    }
}

impl IngestOptions {
    /// What the transcript parsers take of these options.
    pub(super) fn parser_options(&self) -> transcript::Options {
        transcript::Options {
            tool_output_cap: self.tool_output_cap,
        }
    }
}

/// What the writer should do with a source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Replace every row of the source.
    Replace,
    /// Add the new messages after the stored ones.
    Append,
    /// Nothing could be indexed; `error` says why.
    Failed,
    /// A file found by walking a folder that is not a transcript or ticket.
    Skipped,
}

/// A chunk ready for the index: redacted text plus its `aux` column.
#[derive(Debug, Clone)]
pub struct ChunkOut {
    pub chunk: Chunk,
    pub aux: String,
}

/// The session part of a prepared transcript.
#[derive(Debug, Clone)]
pub struct SessionOut {
    pub meta: SessionMeta,
    pub launcher: Launcher,
    pub chunks: Vec<ChunkOut>,
    /// Messages parsed in this run.
    pub new_messages: usize,
}

/// A ticket ready for the index: redacted, split into parts.
#[derive(Debug, Clone)]
pub struct TicketOut {
    pub ticket: Ticket,
    /// (body, aux) of each part.
    pub parts: Vec<(String, String)>,
}

/// One source, prepared.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The path stored and shown ([`secrets::redact_path`] of the file's).
    pub path: String,
    pub action: Action,
    pub format: Option<Format>,
    pub size: i64,
    pub mtime: i64,
    /// Hash of the consumed prefix, and its length.
    pub hash: String,
    pub offset: i64,
    pub cont: Continuation,
    pub parser_version: i64,
    pub session: Option<SessionOut>,
    pub tickets: Vec<TicketOut>,
    pub problems: Vec<Problem>,
    /// Lines of types the parser does not read, skipped (not problems).
    pub unknown_lines: usize,
    pub error: Option<String>,
    /// Bytes parsed in this run.
    pub bytes: u64,
    /// Secrets replaced by `[REDACTED:<kind>]`.
    pub redactions: usize,
    /// Where this part sits in its source.
    pub part: Part,
    /// For an [`Action::Append`] part, the prefix of the file it continues:
    /// the writer appends it only to a source stored up to exactly that
    /// prefix, so two runs indexing one file at once never append a part
    /// twice, or to a prefix the other replaced (issue 37 item 4).
    pub continues: Option<Prefix>,
}

/// A prefix of a source file as the `sources` row stores it: its length in
/// bytes and the hash of those bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prefix {
    pub offset: i64,
    pub hash: String,
}

/// Where a prepared part sits in its source. A transcript read in segments
/// reaches the writer as several parts, each continuing the one before and
/// carrying the source state at its end; a source read whole is one part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part {
    /// 0 for the first part.
    pub index: usize,
    /// The source's last part: the one that counts it in the report.
    pub last: bool,
    /// What the source as a whole counts as: [`Action::Replace`] or
    /// [`Action::Append`] (the first part's action), or what it failed as.
    pub counts_as: Action,
    /// Problems the source's earlier parts reported.
    pub problems_before: usize,
    /// Bytes of the file this part read (a verified prefix included): the
    /// progress bar's step.
    pub read: u64,
}

impl Part {
    /// The one part of a source read whole.
    pub fn whole(counts_as: Action, read: u64) -> Part {
        Part {
            index: 0,
            last: true,
            counts_as,
            problems_before: 0,
            read,
        }
    }
}

/// A source to prepare: its path, stat and what was stored for it.
#[derive(Debug, Clone)]
pub struct Job {
    pub path: PathBuf,
    /// Named by the user: an unrecognised format is a failure, not a skip.
    pub explicit: bool,
    pub size: i64,
    pub mtime: i64,
    pub stored: Option<SourceState>,
}

pub(super) fn parser_version(f: Format) -> i64 {
    let v = match f {
        Format::ClaudeCode => claude_code::PARSER_VERSION,
        Format::Codex => codex::PARSER_VERSION,
        Format::Gemini => gemini::PARSER_VERSION,
        Format::Neutral => neutral::PARSER_VERSION,
        Format::Markdown => chatlog::PARSER_VERSION,
        Format::GithubTicket | Format::MarkdownTicket | Format::TextTicket => {
            ticket::PARSER_VERSION
        }
    };
    i64::from(v) * 1000 + i64::from(PIPELINE_VERSION)
}

/// The parser version a stored source must match to be skipped.
pub fn current_parser_version(format: &str) -> Option<i64> {
    format.parse::<Format>().ok().map(parser_version)
}

fn is_append_only(f: Format) -> bool {
    matches!(f, Format::ClaudeCode | Format::Codex | Format::Neutral)
}

pub(super) fn failed(job: &Job, msg: String) -> Prepared {
    Prepared {
        // What is stored and shown: a path holding a secret is redacted.
        path: secrets::redact_path(&job.path.to_string_lossy()).into_owned(),
        action: Action::Failed,
        format: None,
        size: job.size,
        mtime: job.mtime,
        hash: String::new(),
        offset: 0,
        cont: Continuation::default(),
        parser_version: 0,
        session: None,
        tickets: vec![],
        problems: vec![],
        unknown_lines: 0,
        error: Some(msg),
        bytes: 0,
        redactions: 0,
        part: Part::whole(Action::Failed, job.size.max(0) as u64),
        continues: None,
    }
}

/// Why a source is not indexed: [`Action::Skipped`] or [`Action::Failed`],
/// and the reason shown for it.
type NotIndexed = (Action, &'static str);

/// The format of a source: forced by the options, else detected from its
/// head with the lines that hold NUL bytes blanked. A file the user named
/// fails when it has none; one found in a folder is skipped (and named in
/// the output all the same). `blank`: the file holds only whitespace.
fn choose_format(
    job: &Job,
    head: &[u8],
    blank: bool,
    opts: &IngestOptions,
) -> Result<Format, NotIndexed> {
    // A file just created by a launcher that has not written yet: nothing
    // to index, and nothing wrong; the next run looks again.
    if blank {
        return Err((Action::Skipped, "empty file, nothing to index yet"));
    }
    let outcome = if job.explicit {
        Action::Failed
    } else {
        Action::Skipped
    };
    let head = &head[..head.len().min(HEAD_BYTES)];
    if let Some(f) = opts.format {
        // A file the user named is read as told. One found in a folder
        // (a LICENSE or a README beside the transcripts) is read as a JSON
        // format only when it is JSON: else it would be one empty session
        // and a problem per line.
        if !job.explicit && f.is_json() {
            if super::detect::is_binary(head) {
                return Err((outcome, "binary file, not a transcript or ticket"));
            }
            let text = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
            let first = text.iter().find(|b| !b.is_ascii_whitespace());
            if !matches!(first, Some(b'{' | b'[')) {
                return Err((outcome, "not JSON, so not a file of the --format given"));
            }
        }
        return Ok(f);
    }
    if super::detect::is_binary(head) {
        return Err((outcome, "binary file, not a transcript or ticket"));
    }
    let (head, _) = readable(head, true, true);
    // What a file the user named lacks, by the kind asked for: never the
    // flag they already gave.
    let why = match opts.kind {
        None => "unrecognised format: pass --format claude-code|codex|gemini|neutral|markdown|github|ticket-markdown|ticket-text, or --kind session|ticket",
        Some(Kind::Session) => "not a transcript recall recognises (Claude Code, Codex or Gemini CLI files, neutral JSONL, or a chat log with turns of two roles, such as `## User` and `Assistant:`): pass --format to read it as one",
        Some(Kind::Ticket) => "not a ticket recall recognises (GitHub issue JSON, or Markdown or text in a file named .md, .markdown, .txt, .text or with no extension): pass --format github|ticket-markdown|ticket-text",
    };
    detect(&head, &job.path, opts.kind).ok_or(match outcome {
        Action::Failed => (outcome, why),
        _ => (outcome, "not a transcript or ticket"),
    })
}

/// Read, parse, chunk and redact one source, handing each part to `emit`
/// (one part unless an append-only transcript is read in segments), which
/// answers whether to go on (`false`: the writer stopped).
///
/// A file read whole for the first time as a `--format` the user gave
/// that yields nothing but problems in its first part fails, so that it is
/// not stored as indexed (see `not_that_format`).
#[tracing::instrument(level = "trace", skip_all, fields(path = %job.path.display()))]
pub fn prepare(job: &Job, opts: &IngestOptions, emit: &mut dyn FnMut(Prepared) -> bool) {
    let Some(format) = opts.format else {
        return prepare_as_found(job, opts, emit);
    };
    let mut first = true;
    let mut checked = |p: Prepared| {
        if std::mem::take(&mut first) {
            if let Some(why) = not_that_format(&p, format) {
                emit(failed(job, why));
                return false;
            }
        }
        emit(p)
    };
    prepare_as_found(job, opts, &mut checked)
}

/// Why the first part `p` of a source read from its start as `format`
/// (given with `--format`) says the file is not one: problems, and no
/// message or ticket. Without this such a file would be stored as an
/// empty source, "unchanged" to every later run until `--full`.
fn not_that_format(p: &Prepared, format: Format) -> Option<String> {
    let fresh = p.part.index == 0 && p.action == Action::Replace;
    let messages = p.session.as_ref().map_or(0, |s| s.new_messages);
    if !fresh || p.problems.is_empty() || messages > 0 || !p.tickets.is_empty() {
        return None;
    }
    let what = match format.kind() {
        Kind::Session => "no message",
        Kind::Ticket => "no ticket",
    };
    let first = &p.problems[0];
    Some(format!(
        "read as --format {format}, it gave {what} and {} problem(s) (line {}: {}): pass the format it is in, or leave --format out to detect it",
        p.problems.len(),
        first.line,
        first.message
    ))
}

/// [`prepare`] in the format given or detected, unchecked.
fn prepare_as_found(job: &Job, opts: &IngestOptions, emit: &mut dyn FnMut(Prepared) -> bool) {
    let read = |e: std::io::Error| failed(job, format!("cannot read: {e}"));
    let mut file = match File::open(&job.path) {
        Ok(f) => f,
        Err(e) => {
            emit(read(e));
            return;
        }
    };
    let mut head = Vec::new();
    let blank = match read_head(&mut file, &mut head) {
        Ok(b) => b,
        Err(e) => {
            emit(read(e));
            return;
        }
    };
    let format = match choose_format(job, &head, blank, opts) {
        Ok(f) => f,
        Err((action, why)) => {
            let mut out = failed(job, why.into());
            out.action = action;
            out.part.counts_as = action;
            emit(out);
            return;
        }
    };
    let in_parts =
        is_append_only(format) && !(format == Format::Neutral && neutral::is_document(&head));
    // From the start again: the head was read, and maybe more of a file
    // that starts with blank lines.
    if let Err(e) = file.seek(SeekFrom::Start(0)) {
        emit(read(e));
        return;
    }
    if in_parts {
        super::stream::prepare_stream(job, opts, format, file, emit);
        return;
    }
    let mut bytes = Vec::new();
    if let Err(e) = file.read_to_end(&mut bytes) {
        emit(read(e));
        return;
    }
    emit(prepare_whole(job, &bytes, format, opts));
}

/// Read the head of a file (what detection looks at) into `head`; returns
/// whether the whole file is whitespace (read on, without keeping it, when
/// the head is).
fn read_head(file: &mut File, head: &mut Vec<u8>) -> std::io::Result<bool> {
    file.by_ref().take(HEAD_BYTES as u64).read_to_end(head)?;
    if !head.iter().all(u8::is_ascii_whitespace) {
        return Ok(false);
    }
    let mut block = vec![0; 64 * 1024];
    loop {
        match file.read(&mut block)? {
            0 => return Ok(true),
            n if !block[..n].iter().all(u8::is_ascii_whitespace) => return Ok(false),
            _ => {}
        }
    }
}

/// A source read whole (tickets, chat logs, a neutral document): parsed in
/// one piece, replacing what was stored.
fn prepare_whole(job: &Job, bytes: &[u8], format: Format, opts: &IngestOptions) -> Prepared {
    // Lines with NUL bytes are reported and read as blank, and a JSON
    // file's lone surrogates mended; offsets and hashes stay those of the
    // file.
    let (clean, damaged) = readable(bytes, true, format.is_json());
    let stem = job
        .path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut out = failed(job, String::new());
    out.error = None;
    out.format = Some(format);
    out.parser_version = parser_version(format);
    match format.kind() {
        Kind::Ticket => prepare_tickets(bytes, &clean, &stem, opts, &mut out),
        Kind::Session => {
            let (parsed, ids) = match parse_session(format, &clean, 1, &stem, opts) {
                Ok(p) => p,
                Err(mut p) => {
                    // Nothing of a document that does not parse is written:
                    // the source keeps its stored rows and state.
                    out.action = Action::Failed;
                    out.redactions = redact_in_place(&mut p.message);
                    out.error = Some(p.message);
                    out.part = Part::whole(Action::Failed, bytes.len() as u64);
                    return out;
                }
            };
            let consumed = parsed.consumed;
            out.action = Action::Replace;
            out.cont = Continuation {
                lines: count_lines(&bytes[..consumed]),
                session_id: Some(parsed.meta.id.clone()),
                codex: None,
            };
            out.offset = consumed as i64;
            out.hash = blake3::hash(&bytes[..consumed]).to_hex().to_string();
            out.bytes = bytes.len() as u64;
            out.redactions = ids;
            finish_session(parsed, format, 0, opts, &mut out);
        }
    }
    out.problems.extend(damaged);
    out.problems.sort_by_key(|p| p.line);
    out.part = Part::whole(out.action, bytes.len() as u64);
    out
}

fn count_lines(b: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', b).count()
}

/// Parse a whole transcript file with the parser of `format` (for the
/// extract step, which needs messages rather than chunks). A document that
/// does not parse is an [`std::io::ErrorKind::InvalidData`] error.
pub fn parse_file(
    path: &Path,
    format: Format,
    opts: &IngestOptions,
) -> std::io::Result<ParsedSession> {
    let bytes = std::fs::read(path)?;
    let (clean, _) = readable(&bytes, true, format.is_json());
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    parse_session(format, &clean, 1, &stem, opts)
        .map(|(parsed, _)| parsed)
        .map_err(|p| std::io::Error::new(std::io::ErrorKind::InvalidData, p.message))
}

/// Parse with the parser of `f`, then replace the ids that hold a secret;
/// returns the session and how many ids were replaced, or why a document
/// read whole does not parse (its problem's message is not redacted yet).
fn parse_session(
    f: Format,
    input: &[u8],
    first_line: usize,
    stem: &str,
    opts: &IngestOptions,
) -> Result<(ParsedSession, usize), Problem> {
    let mut parsed = parse_with(f, input, first_line, stem, opts)?;
    let ids = redact_ids(&mut parsed);
    Ok((parsed, ids))
}

fn parse_with(
    f: Format,
    input: &[u8],
    first_line: usize,
    stem: &str,
    opts: &IngestOptions,
) -> Result<ParsedSession, Problem> {
    let o = opts.parser_options();
    if f == Format::Gemini {
        return gemini::parse(input, stem, &o);
    }
    Ok(match f {
        Format::ClaudeCode => claude_code::parse(input, first_line, stem, &o),
        Format::Codex => codex::parse(input, first_line, stem, &o),
        Format::Neutral => neutral::parse(input, first_line, stem),
        _ => chatlog::parse(input, stem),
    })
}

fn launcher(f: Format) -> Launcher {
    match f {
        Format::ClaudeCode => Launcher::ClaudeCode,
        Format::Codex => Launcher::Codex,
        Format::Gemini => Launcher::Gemini,
        Format::Neutral => Launcher::Neutral,
        _ => Launcher::Markdown,
    }
}

/// Replace every id of `p` that holds a secret (the session's, its
/// parent's, each message's) with [`secrets::redact_id`]'s stand-in;
/// returns how many were replaced. Ids are not redacted to a mark like
/// text: they key incremental indexing and citations, so each needs a
/// stable name of its own, and the index and extraction see the same one.
pub(super) fn redact_ids(p: &mut ParsedSession) -> usize {
    let meta = &mut p.meta;
    let ids = std::iter::once(&mut meta.id)
        .chain(meta.parent_id.as_mut())
        .chain(p.messages.iter_mut().filter_map(|m| m.id.as_mut()));
    ids.map(redact_id_in_place).sum()
}

/// Replace `id` by its stand-in when it holds a secret; 1 if it did.
fn redact_id_in_place(id: &mut String) -> usize {
    match secrets::redact_id(id) {
        Cow::Owned(clean) => {
            *id = clean;
            1
        }
        Cow::Borrowed(_) => 0,
    }
}

/// Redact `s` in place; returns how many secrets were replaced.
pub fn redact_in_place(s: &mut String) -> usize {
    let (clean, found) = secrets::redact(s);
    if found.is_empty() {
        return 0;
    }
    *s = clean.into_owned();
    found.len()
}

pub(super) fn finish_session(
    mut parsed: ParsedSession,
    f: Format,
    base: usize,
    opts: &IngestOptions,
    out: &mut Prepared,
) {
    // Tool noise (base64, minified blobs, long path lists, huge outputs)
    // must not drown the conversation; errors keep a larger budget.
    for m in &mut parsed.messages {
        let cap = match (m.role, m.is_error) {
            (Role::Tool, true) => opts.tool_output_cap.saturating_mul(4),
            (Role::Tool, false) => opts.tool_output_cap,
            _ => usize::MAX,
        };
        if let Cow::Owned(reduced) = noise::reduce(&m.text, cap) {
            m.text = reduced;
        }
    }
    // Every free-text field that reaches the index is redacted, not only
    // the message text: a token can sit in a speaker name, a title, a cwd or
    // a branch name. Ids were given stand-ins by `parse_session`, and
    // problems, which quote the input, are printed: both are redacted too.
    let mut redactions = out.redactions;
    let meta = &mut parsed.meta;
    for field in [&mut meta.title, &mut meta.cwd, &mut meta.git_branch] {
        if let Some(t) = field.as_mut() {
            redactions += redact_in_place(t);
        }
    }
    for subject in &mut meta.did {
        redactions += redact_in_place(subject);
    }
    // A message's text is redacted before it is cut into passages: each
    // passage's spans are byte offsets into its text, which a redaction
    // made afterwards would move (the hits of one message then failed to
    // merge, and showed it twice), and a secret cut between two passages
    // is whole here.
    for m in &mut parsed.messages {
        if let Some(n) = m.name.as_mut() {
            redactions += redact_in_place(n);
        }
        redactions += redact_in_place(&mut m.text);
    }
    // Passages are cut from the redacted text (and labelled with the
    // redacted names): scanning them again would find nothing new.
    let chunks = chunk_messages(&parsed.messages, base, &opts.chunk)
        .into_iter()
        .map(|chunk| {
            let aux = aux_terms(&chunk.text);
            ChunkOut { chunk, aux }
        })
        .collect();
    for p in &mut parsed.problems {
        redactions += redact_in_place(&mut p.message);
    }
    out.redactions = redactions;
    out.problems = std::mem::take(&mut parsed.problems);
    out.unknown_lines = parsed.unknown_lines;
    out.session = Some(SessionOut {
        new_messages: parsed.messages.len(),
        meta: parsed.meta,
        launcher: launcher(f),
        chunks,
    });
}

/// Tickets of a file: `bytes` as read (for the hash), `clean` with the
/// lines that hold NUL bytes blanked (to parse).
fn prepare_tickets(
    bytes: &[u8],
    clean: &[u8],
    stem: &str,
    opts: &IngestOptions,
    out: &mut Prepared,
) {
    out.action = Action::Replace;
    out.offset = bytes.len() as i64;
    out.hash = blake3::hash(bytes).to_hex().to_string();
    out.bytes = bytes.len() as u64;
    let tickets = match ticket::parse(clean, stem) {
        Ok(t) => t,
        Err(mut p) => {
            out.action = Action::Failed;
            out.redactions = redact_in_place(&mut p.message);
            out.error = Some(if p.line > 0 {
                format!("line {}: {}", p.line, p.message)
            } else {
                p.message
            });
            return;
        }
    };
    let mut redactions = 0;
    for mut t in tickets {
        redactions += redact_id_in_place(&mut t.id);
        redactions += redact_in_place(&mut t.title);
        for l in &mut t.labels {
            redactions += redact_in_place(l);
        }
        let parts = ticket::split_long(&t, opts.ticket_words)
            .into_iter()
            .map(|mut body| {
                redactions += redact_in_place(&mut body);
                let aux = aux_terms(&format!("{} {body}", t.title));
                (body, aux)
            })
            .collect();
        // The full body and comments live only in the parts, redacted.
        t.body.clear();
        t.comments.clear();
        out.tickets.push(TicketOut { ticket: t, parts });
    }
    out.redactions = redactions;
}

/// Canonical string form of a source path: the file's real path, which
/// `sources.path` stores as [`secrets::redact_path`] gives it (the path
/// itself unless it holds a secret).
pub fn source_key(path: &Path) -> String {
    // A file gone (named to `--prune` it) is keyed by its folder's real
    // path, as it was while it was there.
    let gone = || {
        let name = path.file_name()?;
        let folder = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        std::fs::canonicalize(folder).ok().map(|f| f.join(name))
    };
    std::fs::canonicalize(path)
        .ok()
        .or_else(gone)
        .unwrap_or_else(|| path.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GitHub token, assembled so this file holds none.
    fn token() -> String {
        format!("ghp_{}", "Xk9Qm2Zr7Lp4Wn8Vb3Hd6Jf1Tc5Ys0Ga7Ke2")
    }

    /// `prepare` on a file holding `text`.
    fn prepared(dir: &Path, name: &str, text: &str) -> Prepared {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let job = Job {
            path,
            explicit: true,
            size: text.len() as i64,
            mtime: 0,
            stored: None,
        };
        let mut parts = Vec::new();
        prepare(&job, &IngestOptions::default(), &mut |p| {
            parts.push(p);
            true
        });
        assert_eq!(parts.len(), 1, "a small file is one part");
        parts.pop().unwrap()
    }

    /// Everything a prepared source hands the index writer, as text.
    fn stored(p: &Prepared) -> String {
        format!("{:?} {:?} {:?}", p.session, p.tickets, p.problems)
    }

    /// Regression (issue #26: a neutral transcript's session id and message
    /// ids holding a secret were stored and printed as is). Each gets a
    /// stable stand-in, the same on every run, and the count says so.
    #[test]
    fn r26_session_and_message_ids_holding_a_secret_are_replaced() {
        let tmp = tempfile::tempdir().unwrap();
        let t = token();
        let text = format!(
            "{{\"session\": {{\"id\": \"s-{t}\"}}}}\n\
             {{\"role\": \"user\", \"content\": \"deploy the app\", \"id\": \"m-{t}\"}}\n\
             {{\"role\": \"assistant\", \"content\": \"done\", \"id\": \"m2\"}}\n"
        );
        let p = prepared(tmp.path(), "s.jsonl", &text);
        assert!(p.error.is_none(), "{:?}", p.error);
        let all = stored(&p);
        assert!(!all.contains(&t) && !all.contains(&t[4..]), "{all}");
        let session = p.session.as_ref().unwrap();
        assert!(session.meta.id.starts_with("s-redacted-github-token-"));
        let ids = &session.chunks[0].chunk.message_ids;
        assert!(ids[0].starts_with("m-redacted-github-token-"), "{ids:?}");
        assert_eq!(session.chunks[1].chunk.message_ids, ["m2"]);
        assert_eq!(p.redactions, 2);
        let again = prepared(tmp.path(), "s.jsonl", &text);
        assert_eq!(again.session.unwrap().meta.id, session.meta.id, "stable");
        assert_eq!(p.cont.session_id.as_deref(), Some(session.meta.id.as_str()));
    }

    /// A Gemini CLI chat goes through the same redaction as the other
    /// transcripts: its session id, title, prompt and tool output; a chat
    /// cut short is a failure that hands the writer nothing.
    #[test]
    fn gemini_chats_are_redacted_and_a_cut_one_fails_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let t = token();
        let chat = serde_json::to_string_pretty(&serde_json::json!({
            "sessionId": format!("s-{t}"),
            "projectHash": "7e89",
            "startTime": "2026-01-10T02:08:26.108Z",
            "summary": format!("rotate {t}"),
            "messages": [
                {"id": "u1", "type": "user", "content": format!("push with {t}")},
                {"id": "g1", "type": "gemini", "content": "", "toolCalls": [{
                    "id": "c1", "name": "run_shell_command", "args": {"command": "env"},
                    "result": [{"functionResponse": {"response": {"output": format!("Output: GITHUB_TOKEN={t}\nExit Code: 0")}}}],
                    "status": "success"}],
                 "thoughts": [{"subject": "s", "description": format!("thinking about {t}")}]}
            ]
        }))
        .unwrap();
        let p = prepared(tmp.path(), "session-2026-01-10T02-08-s.json", &chat);
        assert_eq!(p.format, Some(Format::Gemini));
        assert_eq!(p.action, Action::Replace, "{:?}", p.error);
        let all = stored(&p);
        assert!(!all.contains(&t[4..]), "{all}");
        assert!(!all.contains("thinking about"), "{all}");
        let session = p.session.as_ref().unwrap();
        assert!(session.meta.id.starts_with("s-redacted-github-token-"));
        assert_eq!(session.launcher, Launcher::Gemini);
        assert!(p.redactions >= 4, "{}", p.redactions);
        let cut = prepared(tmp.path(), "session-cut.json", &chat[..chat.len() / 2]);
        assert_eq!(cut.action, Action::Failed);
        assert!(cut.session.is_none() && cut.problems.is_empty());
        let error = cut.error.unwrap_or_default();
        assert!(
            error.starts_with("cannot parse the chat at line "),
            "{error}"
        );
        assert!(!error.contains(&t[4..]), "{error}");
    }

    /// A file read whole whose head is blank is read from its first byte
    /// (the blank head was read to tell an empty file).
    #[test]
    fn a_blank_head_is_read_again() {
        let tmp = tempfile::tempdir().unwrap();
        let mut text = "\n".repeat(HEAD_BYTES + 10);
        text.push_str("## User\n\nwhere is the cache?\n\n## Assistant\n\nin redis\n");
        let path = tmp.path().join("chat.md");
        std::fs::write(&path, &text).unwrap();
        let job = Job {
            path,
            explicit: true,
            size: text.len() as i64,
            mtime: 0,
            stored: None,
        };
        let opts = IngestOptions {
            format: Some(Format::Markdown),
            ..IngestOptions::default()
        };
        let mut parts = Vec::new();
        prepare(&job, &opts, &mut |p| {
            parts.push(p);
            true
        });
        assert_eq!(parts[0].offset, text.len() as i64, "{:?}", parts[0].error);
        assert_eq!(
            parts[0].hash,
            blake3::hash(text.as_bytes()).to_hex().as_str()
        );
        assert_eq!(parts[0].session.as_ref().unwrap().new_messages, 2);
    }

    /// The same for a ticket's id, and a problem that quotes the input.
    #[test]
    fn r26_ticket_ids_and_problems_holding_a_secret_are_redacted() {
        let tmp = tempfile::tempdir().unwrap();
        let t = token();
        let ticket = format!("---\nid: T-{t}\ntitle: Rotate\n---\n\nRotate the deploy key.\n");
        let p = prepared(tmp.path(), "T-1.md", &ticket);
        let all = stored(&p);
        assert!(!p.tickets.is_empty() && !all.contains(&t[4..]), "{all}");
        let lines = format!(
            "{{\"role\": \"user\", \"content\": \"hi\"}}\n{{\"role\": \"{t}\", \"content\": \"x\"}}\n"
        );
        let p = prepared(tmp.path(), "p.jsonl", &lines);
        assert_eq!(p.problems.len(), 1, "{:?}", p.problems);
        assert!(!stored(&p).contains(&t[4..]), "{:?}", p.problems);
    }
}
