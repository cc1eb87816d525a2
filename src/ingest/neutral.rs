//! The neutral transcript format: the simplest way to give `recall` a
//! conversation written by any tool.
//!
//! # Line form (JSON Lines)
//!
//! UTF-8, one JSON object per line, one message per object:
//!
//! ```json
//! {"role": "user", "content": "why does test_reload flake?", "id": "m1", "timestamp": "2024-05-01T10:00:00Z"}
//! {"role": "assistant", "name": "claude", "content": "It races the file watcher.", "id": "m2"}
//! ```
//!
//! | key         | required | meaning |
//! |-------------|----------|---------|
//! | `role`      | yes      | `user`, `assistant`, `system` or `tool` (case-insensitive) |
//! | `content`   | yes      | a string, or a list of blocks: strings or objects with a string `text` (`{"type": "text", "text": "..."}`); blocks without text (images...) are ignored, texts are joined by a blank line |
//! | `name`      | no       | speaker name |
//! | `id`        | no       | native message id (string or number), kept for citations |
//! | `timestamp` | no       | see [`parse_time`]; or a unix number (seconds; values above 10^11 are milliseconds) |
//! | `is_error`  | no       | `true` marks a failed tool call or command |
//!
//! Unknown keys are ignored. Blank lines are skipped.
//!
//! An optional first line describes the session:
//! `{"session": {"id": "...", "title": "...", "started_at": "...", "cwd": "...", "git_branch": "..."}}`
//! (every key optional). Without it, or without its `id`, the session id is
//! the file stem. Without `started_at`, the session starts at the first
//! message timestamp. A `session` line anywhere else is a problem.
//!
//! # Document form
//!
//! The same content as one JSON document, usually pretty-printed:
//! `{"session": {...}, "messages": [{...}, ...]}`. It is recognised when the
//! first line is an object holding `"messages"`, or when the first line opens
//! an object it does not close (it ends with `{`, `[`, `,` or `:`).
//! Problems inside `messages` are reported with line 0 and the message index,
//! as `messages[3]: unknown role "bot"`.
//!
//! # Problems and incremental reads
//!
//! A line that is not valid JSON, not an object, has no `role`/`content`, or
//! an unknown role is reported as a [`Problem`] and skipped. A `timestamp`
//! that does not parse is reported, and the message is kept without it.
//! A final line without `'\n'` that does not parse is being written: it is
//! reported as `truncated last line: ...` and not counted in
//! [`ParsedSession::consumed`], so the next incremental run re-reads it. A
//! document that ends early is likewise not consumed (`truncated document`).

use serde_json::{Map, Value};

use super::model::{Message, ParsedSession, Problem, Role, SessionMeta};

/// Bumped whenever the output for the same input changes.
pub const PARSER_VERSION: u32 = 1;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Unix numbers above this are taken as milliseconds.
const MILLIS_THRESHOLD: f64 = 1e11;

/// Parses a neutral transcript.
///
/// `input` starts at 1-based line `first_line` of the file (1 for a whole
/// file; an incremental run passes the tail after the last consumed byte).
/// Only a read from line 1 can see the session line or the document form.
/// `stem` is the file stem, the fallback session id.
pub fn parse(input: &[u8], first_line: usize, stem: &str) -> ParsedSession {
    let first_line = first_line.max(1);
    let mut out = ParsedSession {
        meta: SessionMeta {
            id: stem.to_owned(),
            ..SessionMeta::default()
        },
        ..ParsedSession::default()
    };
    if first_line == 1 && is_document(input) {
        parse_document(input, &mut out);
    } else {
        parse_lines(input, first_line, &mut out);
    }
    if first_line == 1 && out.meta.started_at.is_none() {
        out.meta.started_at = out.messages.iter().find_map(|m| m.timestamp);
    }
    out
}

/// True when `head` (the first bytes of a file) looks like a neutral
/// transcript: a `session`/`messages` object, or a first line with a known
/// top-level `role` and a `content`. A first line cut off by the end of
/// `head` is accepted when its first key is `role`.
pub fn sniff(head: &[u8]) -> bool {
    let rest = skip_bom_ws(head);
    if !rest.starts_with(b"{") {
        return false;
    }
    let key = first_key(rest);
    if matches!(key, Some(b"session" | b"messages")) {
        return true;
    }
    // The first line that parses decides: a bad line (invalid JSON or
    // UTF-8) at the top must not hide a transcript; it is reported later
    // as a problem of its own line.
    let mut lines = rest
        .split(|&b| b == b'\n')
        .filter(|l| !l.trim_ascii().is_empty());
    let last = rest.last() != Some(&b'\n');
    let mut n = 0;
    while let Some(line) = lines.next() {
        n += 1;
        let complete = !(last && lines.clone().next().is_none());
        match serde_json::from_slice::<Value>(line) {
            Ok(Value::Object(obj)) => {
                let role = obj.get("role").and_then(Value::as_str);
                return role.and_then(parse_role).is_some() && obj.contains_key("content");
            }
            Ok(_) => return false,
            Err(_) if !complete => return n == 1 && key == Some(b"role"),
            Err(_) if n >= 5 => return false,
            Err(_) => {}
        }
    }
    false
}

/// Parses a timestamp string to unix seconds: RFC 3339
/// (`2024-05-01T10:00:00Z`, `2024-05-01T12:00:00+02:00`), a date-time
/// without offset (taken as UTC), a plain date (midnight UTC), or a string
/// of digits (unix seconds).
pub fn parse_time(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Ok(ts) = s.parse::<jiff::Timestamp>() {
        return Some(ts.as_second());
    }
    if let Ok(dt) = s.parse::<jiff::civil::DateTime>() {
        return utc_seconds(dt);
    }
    if let Ok(date) = s.parse::<jiff::civil::Date>() {
        return utc_seconds(date.to_datetime(jiff::civil::Time::midnight()));
    }
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s.parse::<i64>().ok();
    }
    None
}

fn utc_seconds(dt: jiff::civil::DateTime) -> Option<i64> {
    dt.to_zoned(jiff::tz::TimeZone::UTC)
        .ok()
        .map(|z| z.timestamp().as_second())
}

/// Reads a JSON timestamp (string or unix number) for key `key`.
fn json_time(v: &Value, key: &str) -> Result<i64, String> {
    match v {
        Value::String(s) => parse_time(s).ok_or_else(|| {
            format!("invalid {key:?} {s:?}: expected RFC 3339, a date or unix seconds")
        }),
        Value::Number(n) => {
            let secs = n.as_f64().unwrap_or(0.0);
            if secs.abs() > MILLIS_THRESHOLD {
                Ok((secs / 1000.0) as i64)
            } else {
                Ok(secs as i64)
            }
        }
        _ => Err(format!("{key:?} must be a string or a number")),
    }
}

fn skip_bom_ws(b: &[u8]) -> &[u8] {
    b.strip_prefix(BOM).unwrap_or(b).trim_ascii_start()
}

/// The first key of a JSON object starting at `obj[0] == b'{'`, without
/// unescaping (keys of interest have no escapes).
fn first_key(obj: &[u8]) -> Option<&[u8]> {
    let rest = obj.get(1..)?.trim_ascii_start().strip_prefix(b"\"")?;
    let end = memchr::memchr(b'"', rest)?;
    Some(&rest[..end])
}

fn parse_role(s: &str) -> Option<Role> {
    [Role::User, Role::Assistant, Role::System, Role::Tool]
        .into_iter()
        .find(|r| r.as_str().eq_ignore_ascii_case(s.trim()))
}

/// serde_json's message without its " at line L column C" suffix, which is
/// misleading for one line of a JSONL file.
fn json_error(e: &serde_json::Error) -> String {
    let full = e.to_string();
    let msg = full
        .rfind(" at line ")
        .map_or(full.as_str(), |i| &full[..i]);
    format!("{msg} at column {}", e.column())
}

/// Whether `input` (a file, or its head) is in the document form (see the
/// module doc), which is read whole: only the line form is read in parts.
pub fn is_document(input: &[u8]) -> bool {
    let rest = skip_bom_ws(input);
    if !rest.starts_with(b"{") {
        return false;
    }
    let line = memchr::memchr(b'\n', rest).map_or(rest, |i| &rest[..i]);
    match serde_json::from_slice::<Value>(line) {
        Ok(v) => v.get("messages").is_some(),
        Err(_) => matches!(
            line.trim_ascii_end().last(),
            Some(b'{' | b'[' | b',' | b':')
        ),
    }
}

fn parse_document(input: &[u8], out: &mut ParsedSession) {
    let doc = match serde_json::from_slice::<Value>(input.strip_prefix(BOM).unwrap_or(input)) {
        Ok(doc) => doc,
        Err(e) => {
            let truncated = e.is_eof();
            let kind = if truncated {
                "truncated document"
            } else {
                "invalid JSON"
            };
            out.problems
                .push(problem(e.line(), format!("{kind}: {}", json_error(&e))));
            out.consumed = if truncated { 0 } else { input.len() };
            return;
        }
    };
    out.consumed = input.len();
    if let Err(message) = apply_document(doc, out) {
        out.problems.push(problem(1, message));
    }
}

/// Reads the session and messages of a parsed document into `out`.
fn apply_document(doc: Value, out: &mut ParsedSession) -> Result<(), String> {
    let Value::Object(mut doc) = doc else {
        return Err("expected a JSON object".into());
    };
    if let Some(session) = doc.remove("session") {
        if let Err(message) = apply_session(session, &mut out.meta, &mut out.problems, 1) {
            out.problems.push(problem(1, message));
        }
    }
    let items = match doc.remove("messages") {
        Some(Value::Array(items)) => items,
        Some(_) => return Err(r#""messages" must be a list"#.into()),
        None => return Err(r#"missing "messages""#.into()),
    };
    for (i, item) in items.into_iter().enumerate() {
        let mut warnings = Vec::new();
        match message_from(item, &mut warnings) {
            Ok(m) => out.messages.push(m),
            Err(e) => warnings.push(e),
        }
        for w in warnings {
            out.problems.push(problem(0, format!("messages[{i}]: {w}")));
        }
    }
    Ok(())
}

fn problem(line: usize, message: String) -> Problem {
    Problem { line, message }
}

fn parse_lines(input: &[u8], first_line: usize, out: &mut ParsedSession) {
    let mut pos = 0;
    let mut line_no = first_line;
    let mut seen_object = false;
    while pos < input.len() {
        let (line, next, complete) = match memchr::memchr(b'\n', &input[pos..]) {
            Some(i) => (&input[pos..pos + i], pos + i + 1, true),
            None => (&input[pos..], input.len(), false),
        };
        if let Some(message) = super::lines::line_too_long(line.len()) {
            out.problems.push(problem(line_no, message));
            if complete {
                out.consumed = next;
            }
            pos = next;
            line_no += 1;
            continue;
        }
        if !complete {
            if let Err(e) = check_json(line) {
                let message = format!("truncated last line: invalid JSON: {}", json_error(&e));
                out.problems.push(problem(line_no, message));
                return;
            }
        }
        let allow_session = first_line == 1 && !seen_object;
        match parse_line(line, allow_session, line_no, out) {
            Ok(blank) => seen_object |= !blank,
            Err(message) => {
                seen_object = true;
                out.problems.push(problem(line_no, message));
            }
        }
        out.consumed = next;
        pos = next;
        line_no += 1;
    }
}

/// Whether a blank or complete JSON value (a final line without `'\n'`
/// that fails this is still being written).
fn check_json(line: &[u8]) -> Result<(), serde_json::Error> {
    let line = line.strip_prefix(BOM).unwrap_or(line).trim_ascii();
    if line.is_empty() {
        return Ok(());
    }
    serde_json::from_slice::<serde::de::IgnoredAny>(line).map(|_| ())
}

/// Parses one line into `out`. `Ok(true)` for a blank line.
fn parse_line(
    line: &[u8],
    allow_session: bool,
    line_no: usize,
    out: &mut ParsedSession,
) -> Result<bool, String> {
    let line = line.strip_prefix(BOM).unwrap_or(line).trim_ascii();
    if line.is_empty() {
        return Ok(true);
    }
    let value = serde_json::from_slice::<Value>(line)
        .map_err(|e| format!("invalid JSON: {}", json_error(&e)))?;
    let Value::Object(mut obj) = value else {
        return Err("expected a JSON object".into());
    };
    if !obj.contains_key("role") {
        if let Some(session) = obj.remove("session") {
            if !allow_session {
                return Err(r#"a "session" line is only allowed as the first line"#.into());
            }
            apply_session(session, &mut out.meta, &mut out.problems, line_no)?;
            return Ok(false);
        }
    }
    let mut warnings = Vec::new();
    let message = message_from(Value::Object(obj), &mut warnings)?;
    out.messages.push(message);
    out.problems
        .extend(warnings.into_iter().map(|w| problem(line_no, w)));
    Ok(false)
}

/// Copies the session header into `meta`; a bad `started_at` is a problem
/// at `line_no`, the rest of the header is still used.
fn apply_session(
    session: Value,
    meta: &mut SessionMeta,
    problems: &mut Vec<Problem>,
    line_no: usize,
) -> Result<(), String> {
    let Value::Object(mut s) = session else {
        return Err(r#""session" must be an object"#.into());
    };
    if let Some(id) = scalar_string(s.remove("id")) {
        meta.id = id;
    }
    meta.title = string_field(&mut s, "title").or(meta.title.take());
    meta.cwd = string_field(&mut s, "cwd").or(meta.cwd.take());
    meta.git_branch = string_field(&mut s, "git_branch").or(meta.git_branch.take());
    match s.get("started_at") {
        None | Some(Value::Null) => {}
        Some(v) => match json_time(v, "started_at") {
            Ok(t) => meta.started_at = Some(t),
            Err(e) => problems.push(problem(line_no, e)),
        },
    }
    Ok(())
}

/// A non-empty string value, taken out of `obj`.
fn string_field(obj: &mut Map<String, Value>, key: &str) -> Option<String> {
    match obj.remove(key) {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s),
        _ => None,
    }
}

/// A non-empty string or a number, as a string.
fn scalar_string(v: Option<Value>) -> Option<String> {
    match v? {
        Value::String(s) if !s.trim().is_empty() => Some(s),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Builds a message from one JSON object. Fatal problems are `Err`;
/// recoverable ones (a bad timestamp) are pushed to `warnings`.
fn message_from(v: Value, warnings: &mut Vec<String>) -> Result<Message, String> {
    let Value::Object(mut obj) = v else {
        return Err("expected a JSON object".into());
    };
    let role = match obj.get("role") {
        Some(Value::String(s)) => parse_role(s).ok_or_else(|| {
            format!("unknown role {s:?} (expected user, assistant, system or tool)")
        })?,
        Some(_) => return Err(r#""role" must be a string"#.into()),
        None => return Err(r#"missing "role""#.into()),
    };
    let text = content_text(obj.remove("content"))?;
    let timestamp = match obj.get("timestamp") {
        None | Some(Value::Null) => None,
        Some(t) => json_time(t, "timestamp").map_err(|e| warnings.push(e)).ok(),
    };
    Ok(Message {
        id: scalar_string(obj.remove("id")),
        role,
        name: string_field(&mut obj, "name"),
        text,
        timestamp,
        is_error: obj
            .get("is_error")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    })
}

fn content_text(content: Option<Value>) -> Result<String, String> {
    match content {
        None | Some(Value::Null) => Err(r#"missing "content""#.into()),
        Some(Value::String(s)) => Ok(s),
        Some(Value::Array(blocks)) => Ok(join_blocks(&blocks)),
        Some(block @ Value::Object(_)) => Ok(join_blocks(std::slice::from_ref(&block))),
        Some(_) => Err(r#""content" must be a string or a list of text blocks"#.into()),
    }
}

fn join_blocks(blocks: &[Value]) -> String {
    let mut out = String::new();
    for text in blocks.iter().filter_map(block_text) {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(text);
    }
    out
}

fn block_text(block: &Value) -> Option<&str> {
    match block {
        Value::String(s) => Some(s),
        Value::Object(o) => o.get("text").and_then(Value::as_str),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(s: &str) -> ParsedSession {
        parse(s.as_bytes(), 1, "stem")
    }

    #[test]
    fn lines_without_session_use_stem() {
        let input = concat!(
            r#"{"role":"user","content":"hi","id":"m1","timestamp":"2024-05-01T10:00:00Z"}"#,
            "\n",
            r#"{"role":"Assistant","name":"claude","content":"hello","id":7}"#,
            "\n"
        );
        let p = parse_str(input);
        assert_eq!(p.meta.id, "stem");
        assert_eq!(p.meta.started_at, Some(1_714_557_600));
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        assert_eq!(p.messages.len(), 2);
        assert_eq!(p.messages[0].id.as_deref(), Some("m1"));
        assert_eq!(p.messages[0].timestamp, Some(1_714_557_600));
        assert_eq!(p.messages[1].role, Role::Assistant);
        assert_eq!(p.messages[1].name.as_deref(), Some("claude"));
        assert_eq!(p.messages[1].id.as_deref(), Some("7"));
        assert_eq!(p.consumed, input.len());
    }

    #[test]
    fn session_line_sets_meta() {
        let p = parse_str(concat!(
            r#"{"session":{"id":"s-42","title":"Flaky test","started_at":"2024-05-01","cwd":"/src/app","git_branch":"main"}}"#,
            "\n\n",
            r#"{"role":"user","content":"go","timestamp":1714557600}"#,
            "\n"
        ));
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        assert_eq!(p.meta.id, "s-42");
        assert_eq!(p.meta.title.as_deref(), Some("Flaky test"));
        assert_eq!(p.meta.cwd.as_deref(), Some("/src/app"));
        assert_eq!(p.meta.git_branch.as_deref(), Some("main"));
        assert_eq!(p.meta.started_at, Some(1_714_521_600));
        assert_eq!(p.messages[0].timestamp, Some(1_714_557_600));
    }

    #[test]
    fn session_line_later_is_a_problem() {
        let p = parse_str("{\"role\":\"user\",\"content\":\"a\"}\n{\"session\":{\"id\":\"x\"}}\n");
        assert_eq!(p.meta.id, "stem");
        assert_eq!(p.problems.len(), 1);
        assert_eq!(p.problems[0].line, 2);
        assert!(p.problems[0].message.contains("first line"));
    }

    #[test]
    fn bad_lines_are_reported_and_skipped() {
        let input = concat!(
            "{\"role\":\"user\",\"content\":\"one\"}\n",
            "{\"role\":\"bot\",\"content\":\"x\"}\n",
            "not json\n",
            "[1,2]\n",
            "{\"role\":\"user\"}\n",
            "{\"content\":\"x\"}\n",
            "{\"role\":\"user\",\"content\":42}\n",
            "{\"role\":\"tool\",\"content\":\"two\"}\n",
        );
        let p = parse_str(input);
        assert_eq!(p.messages.len(), 2);
        assert_eq!(p.messages[1].role, Role::Tool);
        let lines: Vec<usize> = p.problems.iter().map(|x| x.line).collect();
        assert_eq!(lines, [2, 3, 4, 5, 6, 7]);
        assert!(p.problems[0].message.starts_with("unknown role \"bot\""));
        assert!(p.problems[1].message.starts_with("invalid JSON: "));
        assert_eq!(p.problems[2].message, "expected a JSON object");
        assert_eq!(p.problems[3].message, r#"missing "content""#);
        assert_eq!(p.problems[4].message, r#"missing "role""#);
        assert_eq!(p.consumed, input.len());
    }

    #[test]
    fn bad_timestamp_keeps_message() {
        let p = parse_str("{\"role\":\"user\",\"content\":\"a\",\"timestamp\":\"yesterday\"}\n");
        assert_eq!(p.messages.len(), 1);
        assert_eq!(p.messages[0].timestamp, None);
        assert_eq!(p.problems.len(), 1);
        assert!(p.problems[0].message.starts_with("invalid \"timestamp\""));
    }

    #[test]
    fn truncated_last_line_is_not_consumed() {
        let good = "{\"role\":\"user\",\"content\":\"a\"}\n";
        let input = format!("{good}{{\"role\":\"assistant\",\"cont");
        let p = parse_str(&input);
        assert_eq!(p.messages.len(), 1);
        assert_eq!(p.consumed, good.len());
        assert_eq!(p.problems.len(), 1);
        assert_eq!(p.problems[0].line, 2);
        assert!(p.problems[0].message.starts_with("truncated last line"));
    }

    #[test]
    fn bad_but_complete_last_line_is_consumed() {
        let input = "{\"role\":\"bot\",\"content\":\"x\"}";
        let p = parse_str(input);
        assert_eq!(p.consumed, input.len());
        assert!(p.problems[0].message.starts_with("unknown role"));
    }

    #[test]
    fn complete_last_line_without_newline_is_consumed() {
        let input =
            "{\"role\":\"user\",\"content\":\"a\"}\r\n{\"role\":\"user\",\"content\":\"b\"}";
        let p = parse_str(input);
        assert_eq!(p.messages.len(), 2);
        assert_eq!(p.consumed, input.len());
    }

    #[test]
    fn incremental_read_numbers_lines_from_first_line() {
        let p = parse(b"{\"session\":{\"id\":\"x\"}}\nnope\n", 10, "stem");
        assert_eq!(p.meta.id, "stem");
        assert_eq!(p.problems[0].line, 10);
        assert_eq!(p.problems[1].line, 11);
    }

    #[test]
    fn content_blocks_are_joined() {
        let p = parse_str(
            r#"{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"image"},"b"],"is_error":true}"#,
        );
        assert_eq!(p.messages[0].text, "a\n\nb");
        assert!(p.messages[0].is_error);
    }

    #[test]
    fn document_form() {
        let doc = r#"{
  "session": {"id": "doc-1", "title": "Config loader"},
  "messages": [
    {"role": "user", "content": "load fails", "id": "u1", "timestamp": "2024-05-01T10:00:00+02:00"},
    {"role": "wizard", "content": "x"},
    {"role": "assistant", "content": [{"type": "text", "text": "fixed"}], "id": "a1"}
  ]
}
"#;
        let p = parse_str(doc);
        assert_eq!(p.meta.id, "doc-1");
        assert_eq!(p.meta.title.as_deref(), Some("Config loader"));
        assert_eq!(p.messages.len(), 2);
        assert_eq!(p.messages[0].timestamp, Some(1_714_550_400));
        assert_eq!(p.messages[1].id.as_deref(), Some("a1"));
        assert_eq!(p.problems.len(), 1);
        assert!(p.problems[0]
            .message
            .starts_with("messages[1]: unknown role"));
        assert_eq!(p.consumed, doc.len());
    }

    #[test]
    fn one_line_document_and_truncated_document() {
        let p = parse_str(r#"{"messages":[{"role":"user","content":"x"}]}"#);
        assert_eq!(p.messages.len(), 1);
        let p = parse_str("{\n  \"messages\": [\n    {\"role\": \"user\",");
        assert_eq!(p.consumed, 0);
        assert!(p.problems[0].message.starts_with("truncated document"));
    }

    #[test]
    fn garbage_never_panics() {
        for input in [
            &b""[..],
            b"\n\n",
            b"\xff\xfe\x00\x01binary\n",
            b"{\"role\":\"user\",\"content\":\"\xff\"}\n",
            b"{",
            b"{\n",
            b"\xEF\xBB\xBF{\"role\":\"user\",\"content\":\"bom\"}\n",
        ] {
            let p = parse(input, 1, "s");
            assert!(p.consumed <= input.len());
        }
        let p = parse(
            b"\xEF\xBB\xBF{\"role\":\"user\",\"content\":\"bom\"}\n",
            1,
            "s",
        );
        assert_eq!(p.messages.len(), 1);
        let huge = format!(
            "{{\"role\":\"user\",\"content\":\"{}\"}}\n",
            "x".repeat(1 << 20)
        );
        assert_eq!(parse_str(&huge).messages[0].text.len(), 1 << 20);
    }

    #[test]
    fn sniff_cases() {
        assert!(sniff(b"{\"role\":\"user\",\"content\":\"x\"}\n"));
        assert!(sniff(b"{\"session\":{\"id\":\"a\"}}\n"));
        assert!(sniff(b"\xEF\xBB\xBF{\n  \"session\": {"));
        assert!(sniff(b"{\"role\":\"user\",\"content\":\"cut off"));
        assert!(!sniff(
            b"{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"x\"}}\n"
        ));
        assert!(!sniff(b"{\"role\":\"robot\",\"content\":\"x\"}\n"));
        assert!(!sniff(b"## User\nhello"));
        assert!(!sniff(b""));
    }

    /// Regression: a neutral file whose first line had invalid UTF-8 was
    /// not recognised at all: skipped in a folder, "binary" when named.
    #[test]
    fn r_a_bad_first_line_does_not_hide_the_transcript() {
        let file = b"{\"role\":\"user\",\"content\":\"caf\xe9 \xff\"}\n\
{\"role\":\"assistant\",\"content\":\"the rest is fine\"}\n\
{\"role\":\"user\",\"content\":\"and so is this, which is long enough to outweigh two bad bytes\"}\n";
        assert!(sniff(file));
        assert!(!crate::ingest::detect::is_binary(file));
        // Five unparseable lines in a row are not a neutral transcript.
        assert!(!sniff(
            b"{x\n{x\n{x\n{x\n{x\n{\"role\":\"user\",\"content\":\"x\"}\n"
        ));
    }

    #[test]
    fn time_formats() {
        assert_eq!(parse_time("2024-05-01T10:00:00Z"), Some(1_714_557_600));
        assert_eq!(parse_time("2024-05-01T12:00:00+02:00"), Some(1_714_557_600));
        assert_eq!(parse_time("2024-05-01T10:00:00"), Some(1_714_557_600));
        assert_eq!(parse_time("2024-05-01 10:00:00"), Some(1_714_557_600));
        assert_eq!(parse_time("2024-05-01"), Some(1_714_521_600));
        assert_eq!(parse_time("1714557600"), Some(1_714_557_600));
        assert_eq!(parse_time("soon"), None);
        assert_eq!(
            json_time(&Value::from(1_714_557_600_000_i64), "t"),
            Ok(1_714_557_600)
        );
    }
}
