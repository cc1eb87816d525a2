//! Lone UTF-16 surrogates in JSON text.
//!
//! JavaScript strings are UTF-16 and may hold half of a pair: an emoji cut
//! by a `slice`, a paste that ended mid-character. `JSON.stringify` writes
//! such a half as an escape (`"\ud83d"`), so Claude Code and Gemini CLI can
//! write one into a transcript line or a hook payload. That is valid JSON,
//! but not a Unicode string, and serde_json refuses the whole value ("lone
//! leading surrogate in hex escape"): one cut emoji lost a message, or a
//! hook's whole payload. [`mend`] rewrites each lone half as `\ufffd`, the
//! replacement character, as a lossy UTF-8 decode would. The escape keeps
//! its six bytes, so byte offsets, line numbers and the file's hashes stay
//! those of the file.

use std::borrow::Cow;

/// `input` with every lone surrogate escape (`\uD800` to `\uDFFF` not part
/// of a high-low pair) replaced by `\ufffd`. Borrows `input` when it holds
/// none, which two SIMD searches tell for almost every input.
pub fn mend(input: &[u8]) -> Cow<'_, [u8]> {
    if !may_hold_surrogate(input) {
        return Cow::Borrowed(input);
    }
    let mut out: Option<Vec<u8>> = None;
    let mut at = 0;
    // Every backslash of valid JSON starts an escape inside a string; the
    // scan steps over whole escapes, so `\\ud800` (a backslash, then
    // text) is never read as one.
    while let Some(i) = memchr::memchr(b'\\', &input[at..]).map(|i| at + i) {
        let Some(unit) = unit_at(input, i) else {
            at = i + 2;
            continue;
        };
        at = i + 6;
        if !(0xD800..=0xDFFF).contains(&unit) {
            continue;
        }
        let paired = unit <= 0xDBFF
            && unit_at(input, i + 6).is_some_and(|low| (0xDC00..=0xDFFF).contains(&low));
        if paired {
            at = i + 12;
            continue;
        }
        out.get_or_insert_with(|| input.to_vec())[i..i + 6].copy_from_slice(b"\\ufffd");
    }
    out.map_or(Cow::Borrowed(input), Cow::Owned)
}

/// The same for a [`Cow`] already made by an earlier pass.
pub fn mend_cow(input: Cow<'_, [u8]>) -> Cow<'_, [u8]> {
    match input {
        Cow::Borrowed(b) => mend(b),
        Cow::Owned(o) => match mend(&o) {
            Cow::Borrowed(_) => Cow::Owned(o),
            Cow::Owned(m) => Cow::Owned(m),
        },
    }
}

/// Whether `input` holds `\uD8`..`\uDF` in either case: the start of a
/// surrogate escape (or of text that looks like one).
fn may_hold_surrogate(input: &[u8]) -> bool {
    let follows = |needle: &[u8]| {
        memchr::memmem::find_iter(input, needle).any(|i| {
            input
                .get(i + 3)
                .is_some_and(|b| b"89abcdefABCDEF".contains(b))
        })
    };
    follows(b"\\ud") || follows(b"\\uD")
}

/// The code unit of the `\uXXXX` escape at `i`, if one is there.
fn unit_at(input: &[u8], i: usize) -> Option<u32> {
    let esc = input.get(i..i + 6)?;
    if esc[0] != b'\\' || esc[1] != b'u' {
        return None;
    }
    let hex = std::str::from_utf8(&esc[2..]).ok()?;
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(hex, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(input: &str) -> String {
        let mended = mend(input.as_bytes());
        assert_eq!(mended.len(), input.len(), "offsets move");
        String::from_utf8(mended.into_owned()).unwrap()
    }

    #[test]
    fn a_lone_half_becomes_the_replacement_character() {
        // A high half at the end, a high half before text, a low half alone,
        // two highs in a row, upper case.
        let input = r#"{"a":"cut \ud83d","b":"\uD83Dx","c":"\udc00","d":"\ud83d\ud83d\ude00"}"#;
        let out = text(input);
        assert_eq!(
            out,
            r#"{"a":"cut \ufffd","b":"\ufffdx","c":"\ufffd","d":"\ufffd\ud83d\ude00"}"#
        );
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["a"], "cut \u{fffd}");
        assert_eq!(v["d"], "\u{fffd}😀");
        assert!(serde_json::from_str::<serde_json::Value>(input).is_err());
    }

    #[test]
    fn pairs_escaped_backslashes_and_other_escapes_are_kept() {
        for input in [
            r#"{"ok":"\ud83d\ude00 and \u00e9"}"#,
            r#"{"text":"a path C:\\ud800 is text, not an escape"}"#,
            r#"{"text":"\\\ud83d\ude00 \n \" \\"}"#,
            r#"{"cut":"\ud8"}"#,
            "no json at all \\",
        ] {
            assert!(
                matches!(mend(input.as_bytes()), Cow::Borrowed(_)),
                "{input}"
            );
        }
        // An escaped backslash, then a real lone escape.
        assert_eq!(text(r#""\\\ud800""#), r#""\\\ufffd""#);
    }

    #[test]
    fn an_owned_input_stays_owned() {
        let owned = Cow::Owned(br#""\ud800""#.to_vec());
        assert_eq!(&mend_cow(owned)[..], br#""\ufffd""#);
        let clean: Cow<'_, [u8]> = Cow::Owned(b"{}".to_vec());
        assert!(matches!(mend_cow(clean), Cow::Owned(_)));
    }
}
