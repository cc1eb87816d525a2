//! Shared helpers for the line-oriented transcript parsers (`claude_code`,
//! `codex`).
//!
//! This module owns three things:
//!
//! * **The line driver** ([`read_lines`]): splits the input on `\n` with
//!   `memchr`, checks UTF-8, decodes each line with `serde_json::from_str`
//!   into a caller-chosen borrowed struct, turns bad lines into [`Problem`]s
//!   and computes `consumed`. An unterminated final line that parses is
//!   consumed; one that does not (a transcript still being written) is left
//!   for the next run and reported as `truncated last line ...`.
//! * **Lenient field types** ([`LStr`], [`LBool`], [`LI64`], [`StrList`],
//!   [`ObjOr`], [`Content`]): custom `Deserialize` impls that read what they
//!   understand and skip anything else without failing the whole line, so a
//!   single oddly typed field never loses a message. Strings borrow from the
//!   input when they contain no escapes. Nothing here needs serde_json's
//!   `raw_value` feature, which the main crate does not enable.
//! * **Text helpers**: char-boundary-safe truncation, titles, RFC 3339
//!   timestamps, bounded compact JSON and error messages.
//!
//! Memory: a line is never copied as a whole; only the string fields a parser
//! keeps are materialised (once, and only when they contain escapes).

use std::borrow::Cow;
use std::fmt;
use std::io;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

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

/// Marker appended to text cut by [`truncate_chars`].
pub const ELLIPSIS: char = '…';

/// Collects [`Problem`]s up to [`MAX_PROBLEMS`], then counts the rest.
#[derive(Debug, Default)]
pub struct Problems {
    list: Vec<Problem>,
    suppressed: usize,
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

/// `s` cut to at most `cap` chars (on a char boundary) with [`ELLIPSIS`]
/// appended when something was cut.
pub fn truncate_chars(s: &str, cap: usize) -> Cow<'_, str> {
    match s.char_indices().nth(cap) {
        None => Cow::Borrowed(s),
        Some((i, _)) => {
            let mut out = String::with_capacity(i + ELLIPSIS.len_utf8());
            out.push_str(&s[..i]);
            out.push(ELLIPSIS);
            Cow::Owned(out)
        }
    }
}

/// A one-line title: whitespace runs collapsed, at most `cap` chars.
pub fn title(s: &str, cap: usize) -> String {
    let mut one_line = String::with_capacity(s.len().min(cap * 4));
    for word in s.split_whitespace() {
        if !one_line.is_empty() {
            one_line.push(' ');
        }
        one_line.push_str(word);
        if one_line.len() > cap * 4 {
            break;
        }
    }
    truncate_chars(&one_line, cap).into_owned()
}

/// RFC 3339 / ISO 8601 timestamp (with offset or `Z`) to unix seconds.
pub fn parse_ts(s: &str) -> Option<i64> {
    s.trim()
        .parse::<jiff::Timestamp>()
        .ok()
        .map(|t| t.as_second())
}

/// Compact one-line JSON of `value`, at most about `limit` bytes: the
/// serializer is stopped once the limit is reached, so a huge value is never
/// serialized in full.
pub fn compact_json<T: serde::Serialize + ?Sized>(value: &T, limit: usize) -> String {
    let mut w = BoundedWriter {
        buf: Vec::with_capacity(limit.min(4096)),
        limit,
    };
    let cut = serde_json::to_writer(&mut w, value).is_err();
    let valid = match std::str::from_utf8(&w.buf) {
        Ok(s) => s,
        Err(e) => std::str::from_utf8(&w.buf[..e.valid_up_to()]).unwrap_or_default(),
    };
    let mut out = valid.to_owned();
    if cut {
        out.push(ELLIPSIS);
    }
    out
}

struct BoundedWriter {
    buf: Vec<u8>,
    limit: usize,
}

impl io::Write for BoundedWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let room = self.limit.saturating_sub(self.buf.len());
        if room == 0 {
            return Err(io::Error::other("limit reached"));
        }
        let n = data.len().min(room);
        self.buf.extend_from_slice(&data[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
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

/// Returns true for text that has no non-whitespace character.
pub fn is_blank(s: &str) -> bool {
    s.trim().is_empty()
}

// ---------------------------------------------------------------------------
// Lenient field types
// ---------------------------------------------------------------------------

/// Visitor methods that accept every non-string JSON value as `$junk`,
/// draining arrays and objects.
macro_rules! accept_non_strings_as {
    ($junk:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($junk)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($junk)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($junk)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($junk)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($junk)
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($junk)
        }
    };
}

/// Visitor methods that drain arrays and objects and return `$junk`.
macro_rules! accept_containers_as {
    ($junk:expr) => {
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok($junk)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok($junk)
        }
    };
}

/// Visitor methods that accept strings as `$junk`.
macro_rules! accept_strings_as {
    ($junk:expr) => {
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok($junk)
        }
    };
}

/// A string field that tolerates any JSON type: anything but a string reads
/// as `None`. Borrows from the input when the string has no escapes.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct LStr<'a>(pub Option<Cow<'a, str>>);

impl<'a> LStr<'a> {
    /// The string, if the field was a string.
    pub fn get(&self) -> Option<&str> {
        self.0.as_deref()
    }

    /// The string if it is present and not blank.
    pub fn non_blank(&self) -> Option<&str> {
        self.get().filter(|s| !is_blank(s))
    }
}

struct LStrVisitor;

impl<'de> Visitor<'de> for LStrVisitor {
    type Value = LStr<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(LStr(Some(Cow::Borrowed(v))))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(LStr(Some(Cow::Owned(v.to_owned()))))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(LStr(Some(Cow::Owned(v))))
    }

    accept_non_strings_as!(LStr(None));
    accept_containers_as!(LStr(None));
}

impl<'de: 'a, 'a> Deserialize<'de> for LStr<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LStrVisitor)
    }
}

/// A boolean field that reads `true` only from JSON `true`; any other value
/// (or absence) is `false`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct LBool(pub bool);

struct LBoolVisitor;

impl<'de> Visitor<'de> for LBoolVisitor {
    type Value = LBool;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(LBool(v))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(LBool(false))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(LBool(false))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(LBool(false))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(LBool(false))
    }
    accept_strings_as!(LBool(false));
    accept_containers_as!(LBool(false));
}

impl<'de> Deserialize<'de> for LBool {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LBoolVisitor)
    }
}

/// An integer field; anything that is not an integer fitting `i64` is `None`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct LI64(pub Option<i64>);

struct LI64Visitor;

impl<'de> Visitor<'de> for LI64Visitor {
    type Value = LI64;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(LI64(Some(v)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(LI64(i64::try_from(v).ok()))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(LI64(None))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(LI64(None))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(LI64(None))
    }
    accept_strings_as!(LI64(None));
    accept_containers_as!(LI64(None));
}

impl<'de> Deserialize<'de> for LI64 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LI64Visitor)
    }
}

/// A string or an array of strings (a command line): non-string elements and
/// other types are dropped.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct StrList<'a>(pub Vec<Cow<'a, str>>);

struct StrListVisitor;

impl<'de> Visitor<'de> for StrListVisitor {
    type Value = StrList<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(StrList(vec![Cow::Borrowed(v)]))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(StrList(vec![Cow::Owned(v.to_owned())]))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(LStr(s)) = seq.next_element::<LStr<'de>>()? {
            out.extend(s);
        }
        Ok(StrList(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(StrList::default())
    }

    accept_non_strings_as!(StrList::default());
}

impl<'de: 'a, 'a> Deserialize<'de> for StrList<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrListVisitor)
    }
}

/// A field expected to be a JSON object: `Obj(T)` when it is, otherwise
/// `NotObject` naming what was found (for a problem message).
#[derive(Debug, Clone, PartialEq)]
pub enum ObjOr<T> {
    /// The field was an object.
    Obj(T),
    /// The field was something else: "a string", "an array", "null", ...
    NotObject(&'static str),
}

impl<T> ObjOr<T> {
    /// The object, if it was one (by value).
    pub fn into_obj(self) -> Option<T> {
        match self {
            ObjOr::Obj(t) => Some(t),
            ObjOr::NotObject(_) => None,
        }
    }

    /// The object, if it was one.
    pub fn as_obj(&self) -> Option<&T> {
        match self {
            ObjOr::Obj(t) => Some(t),
            ObjOr::NotObject(_) => None,
        }
    }
}

struct ObjOrVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjOrVisitor<T> {
    type Value = ObjOr<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        T::deserialize(de::value::MapAccessDeserializer::new(map)).map(ObjOr::Obj)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(ObjOr::NotObject("an array"))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(ObjOr::NotObject("a boolean"))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(ObjOr::NotObject("a number"))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(ObjOr::NotObject("a number"))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(ObjOr::NotObject("a number"))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(ObjOr::NotObject("null"))
    }
    accept_strings_as!(ObjOr::NotObject("a string"));
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ObjOr<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ObjOrVisitor(PhantomData))
    }
}

/// A list of objects that tolerates any JSON: elements that are not
/// objects are counted in `skipped` and dropped; anything but an array
/// reads as an empty list.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjList<T> {
    /// The elements that were objects, in order.
    pub items: Vec<T>,
    /// Elements that were not objects.
    pub skipped: usize,
}

impl<T> Default for ObjList<T> {
    fn default() -> Self {
        ObjList {
            items: Vec::new(),
            skipped: 0,
        }
    }
}

struct ObjListVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjListVisitor<T> {
    type Value = ObjList<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut list = ObjList::default();
        while let Some(item) = seq.next_element::<ObjOr<T>>()? {
            match item {
                ObjOr::Obj(t) => list.items.push(t),
                ObjOr::NotObject(_) => list.skipped += 1,
            }
        }
        Ok(list)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(ObjList::default())
    }

    accept_non_strings_as!(ObjList::default());
    accept_strings_as!(ObjList::default());
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ObjList<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ObjListVisitor(PhantomData))
    }
}

/// Message content: a plain string, a list of blocks `B` (each possibly not
/// an object), or something else (`Other`: null, number, object).
#[derive(Debug, Clone, PartialEq)]
pub enum Content<'a, B> {
    /// Plain string content.
    Text(Cow<'a, str>),
    /// A list of blocks, each an object or not.
    Blocks(Vec<ObjOr<B>>),
    /// Any other JSON value (object, number, null, ...).
    Other,
}

struct ContentVisitor<B>(PhantomData<B>);

impl<'de, B: Deserialize<'de>> Visitor<'de> for ContentVisitor<B> {
    type Value = Content<'de, B>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Content::Text(Cow::Borrowed(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Content::Text(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Content::Text(Cow::Owned(v)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(1));
        while let Some(b) = seq.next_element::<ObjOr<B>>()? {
            blocks.push(b);
        }
        Ok(Content::Blocks(blocks))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Content::Other)
    }

    accept_non_strings_as!(Content::Other);
}

impl<'de: 'a, 'a, B: Deserialize<'de>> Deserialize<'de> for Content<'a, B> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ContentVisitor(PhantomData))
    }
}

/// A `{type, text}` content block (Claude `text`, Codex `input_text` /
/// `output_text`).
#[derive(Debug, Default, Clone, PartialEq, serde::Deserialize)]
#[serde(default)]
pub struct TextPart<'a> {
    /// The block's `type`.
    #[serde(rename = "type", borrow)]
    pub kind: LStr<'a>,
    /// The block's `text`.
    #[serde(borrow)]
    pub text: LStr<'a>,
}

impl<'a, B> Content<'a, B> {
    /// Joins the content into one string (borrowed for plain-string
    /// content) with `text_of` picking the text of
    /// each object block (non-objects are skipped; see
    /// [`Content::non_objects`]).
    pub fn join<'s>(
        &'s self,
        sep: &str,
        text_of: impl Fn(&'s B) -> Option<&'s str>,
    ) -> Cow<'s, str> {
        match self {
            Content::Text(t) => Cow::Borrowed(t.as_ref()),
            Content::Blocks(blocks) => {
                let mut out = String::new();
                for t in blocks.iter().filter_map(|b| b.as_obj().and_then(&text_of)) {
                    if !out.is_empty() {
                        out.push_str(sep);
                    }
                    out.push_str(t);
                }
                Cow::Owned(out)
            }
            Content::Other => Cow::Borrowed(""),
        }
    }

    /// How many blocks were not JSON objects, and the first one's kind.
    pub fn non_objects(&self) -> Option<(usize, &'static str)> {
        let Content::Blocks(blocks) = self else {
            return None;
        };
        let mut bad = blocks.iter().filter_map(|b| match b {
            ObjOr::NotObject(k) => Some(*k),
            ObjOr::Obj(_) => None,
        });
        let first = bad.next()?;
        Some((1 + bad.count(), first))
    }
}

/// The text of a [`TextPart`] whose type is `text`, `input_text` or
/// `output_text`.
pub fn text_part<'s>(p: &'s TextPart<'_>) -> Option<&'s str> {
    match p.kind.get() {
        Some("text" | "input_text" | "output_text") => p.text.get(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, serde::Deserialize)]
    #[serde(default)]
    struct Probe<'a> {
        #[serde(borrow)]
        s: LStr<'a>,
        b: LBool,
        n: LI64,
        #[serde(borrow)]
        l: StrList<'a>,
        #[serde(borrow)]
        o: Option<ObjOr<TextPart<'a>>>,
        #[serde(borrow)]
        c: Option<Content<'a, TextPart<'a>>>,
    }

    fn probe(json: &str) -> Probe<'_> {
        match serde_json::from_str(json) {
            Ok(p) => p,
            Err(e) => panic!("{json}: {e}"),
        }
    }

    #[test]
    fn lenient_fields_accept_any_type() {
        let p = probe(r#"{"s":[1,{"a":2}],"b":"yes","n":"3","l":{"x":1},"o":"str","c":5}"#);
        assert_eq!(p.s.get(), None);
        assert!(!p.b.0);
        assert_eq!(p.n.0, None);
        assert!(p.l.0.is_empty());
        assert_eq!(p.o, Some(ObjOr::NotObject("a string")));
        assert_eq!(p.c, Some(Content::Other));
    }

    #[test]
    fn lenient_fields_read_their_type_and_borrow() {
        let p = probe(
            r#"{"s":"plain","b":true,"n":-4,"l":["a",1,"b"],"o":{"type":"text","text":"t"},"c":["x",{"type":"text","text":"y\nz"}]}"#,
        );
        assert!(matches!(p.s.0, Some(Cow::Borrowed("plain"))));
        assert!(p.b.0);
        assert_eq!(p.n.0, Some(-4));
        assert_eq!(p.l.0, vec!["a", "b"]);
        assert_eq!(
            p.o.and_then(|o| o.as_obj().and_then(|t| t.text.0.clone())),
            Some("t".into())
        );
        let c = p.c.unwrap_or(Content::Other);
        assert_eq!(c.join("|", text_part), "y\nz");
        assert_eq!(c.non_objects(), Some((1, "a string")));
    }

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

    #[test]
    fn text_helpers() {
        assert_eq!(truncate_chars("héllo", 2), "hé…");
        assert_eq!(truncate_chars("hé", 2), "hé");
        assert_eq!(title("  a\n\n b  c ", 80), "a b c");
        assert_eq!(parse_ts("2025-06-14T11:00:00Z"), Some(1_749_898_800));
        assert_eq!(
            parse_ts("2025-06-14T11:00:00.123+01:00"),
            Some(1_749_895_200)
        );
        assert_eq!(parse_ts("yesterday"), None);
        let v = serde_json::json!({"k": "x".repeat(500)});
        let c = compact_json(&v, 50);
        assert!(c.starts_with("{\"k\":\"xxx") && c.ends_with(ELLIPSIS));
        assert!(c.len() <= 50 + ELLIPSIS.len_utf8());
        assert_eq!(compact_json(&serde_json::json!({"a": 1}), 50), "{\"a\":1}");
    }
}
