//! What the transcript parsers make of field values: char-boundary-safe
//! truncation, one-line titles, RFC 3339 timestamps and bounded compact
//! JSON.

use std::borrow::Cow;
use std::io;

/// Marker appended to text cut by [`ellipsize`].
pub const ELLIPSIS: char = '…';

/// `s` cut to at most `cap` chars (on a char boundary, as
/// [`crate::text::truncate_chars`] cuts) with [`ELLIPSIS`] appended when
/// something was cut, so a reader sees that it was.
pub fn ellipsize(s: &str, cap: usize) -> Cow<'_, str> {
    let cut = crate::text::truncate_chars(s, cap);
    if cut.len() == s.len() {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(cut.len() + ELLIPSIS.len_utf8());
    out.push_str(cut);
    out.push(ELLIPSIS);
    Cow::Owned(out)
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
    ellipsize(&one_line, cap).into_owned()
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

/// Returns true for text that has no non-whitespace character.
pub fn is_blank(s: &str) -> bool {
    s.trim().is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_helpers() {
        assert_eq!(ellipsize("héllo", 2), "hé…");
        assert_eq!(ellipsize("hé", 2), "hé");
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
