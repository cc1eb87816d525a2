//! Private key blocks (`private-key`): PEM (`RSA`, `EC`, `DSA`, `OPENSSH`,
//! `ENCRYPTED`, PKCS#8) and PGP armor.
//!
//! The whole block is redacted, BEGIN and END lines included; when the END
//! line is missing (truncated output), up to the last line of key material.
//! Lines may be separated by real newlines or JSON-escaped `\n`.
//!
//! Precision policy: a `-----BEGIN ... PRIVATE KEY-----` line is a key only
//! when base64 key material follows it (a run of 40+ base64 characters), so
//! PEM-parsing code that mentions the markers is not reported.

use std::sync::LazyLock;

use regex::Regex;

use super::*;

/// Longest private-key block searched for an END line or body (PGP keys run
/// to several KiB).
const MAX_KEY_BLOCK: usize = 64 * 1024;

/// Shortest run of base64 characters that counts as key material.
const MIN_KEY_MATERIAL: usize = 40;

static PEM_BEGIN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----")
        .expect("PEM BEGIN pattern is a valid constant regex")
});

static PEM_END: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----")
        .expect("PEM END pattern is a valid constant regex")
});

pub(super) fn detect_private_keys(text: &str, out: &mut Vec<Span>) {
    let mut begins = PEM_BEGIN.find_iter(text).peekable();
    while let Some(begin) = begins.next() {
        // Blocks do not nest: each block's search stops at the next BEGIN
        // line, so every byte is searched once.
        let next_begin = begins.peek().map_or(text.len(), |m| m.start());
        let cap = floor_char_boundary(text, begin.end().saturating_add(MAX_KEY_BLOCK));
        if let Some(end) = key_block_end(text, begin.end(), cap.min(next_begin)) {
            out.push(Span {
                start: begin.start(),
                end,
                kind: PRIVATE_KEY,
            });
        }
    }
}

/// End of the block whose BEGIN line ends at `body_start`: the END line if
/// one follows before `limit`, else the last line of contiguous key material
/// (truncated text). `None` when no key material follows the BEGIN line.
fn key_block_end(text: &str, body_start: usize, limit: usize) -> Option<usize> {
    let window = &text[body_start..limit];
    match PEM_END.find(window) {
        Some(end) if has_base64_run(&window[..end.start()]) => Some(body_start + end.end()),
        Some(_) => None,
        None => truncated_block_end(text, body_start, limit),
    }
}

/// End of the key material after a BEGIN line with no END line: optional
/// header lines (`Proc-Type: ...`) and blank lines, then base64 lines up to
/// the first short (final) line. Lines may be separated by real newlines or
/// by JSON-escaped `\n`.
fn truncated_block_end(text: &str, body_start: usize, limit: usize) -> Option<usize> {
    let mut pos = body_start;
    let mut end = None;
    while pos < limit {
        let (line_end, next) = next_line(text, pos, limit);
        let line = trim_line(&text[pos..line_end]);
        if is_base64_line(line) {
            end = Some(pos + line.len() + leading_blank_len(&text[pos..line_end]));
            if line.len() < 60 {
                break;
            }
        } else if end.is_some() || !(line.is_empty() || is_header_line(line)) {
            break;
        }
        pos = next;
    }
    end.filter(|&e| has_base64_run(&text[body_start..e]))
}

/// End of the line starting at `pos` and the start of the next one; a line
/// ends at `\n` or at a JSON-escaped `\n` (backslash, `n`).
fn next_line(text: &str, pos: usize, limit: usize) -> (usize, usize) {
    let bytes = text.as_bytes();
    let mut i = pos;
    while i < limit {
        match bytes[i] {
            b'\n' => return (i, i + 1),
            b'\\' if bytes.get(i + 1) == Some(&b'n') => return (i, i + 2),
            _ => i += 1,
        }
    }
    (limit, limit)
}

fn trim_line(line: &str) -> &str {
    let line = line.trim_matches([' ', '\t', '\r']);
    line.strip_suffix("\\r").unwrap_or(line)
}

fn leading_blank_len(line: &str) -> usize {
    line.len() - line.trim_start_matches([' ', '\t', '\r']).len()
}

fn is_base64_line(line: &str) -> bool {
    !line.is_empty() && line.bytes().all(is_base64_byte)
}

/// `Proc-Type: 4,ENCRYPTED`, `Version: GnuPG v2` and other armor headers.
fn is_header_line(line: &str) -> bool {
    line.split_once(": ").is_some_and(|(name, _)| {
        name.starts_with(|c: char| c.is_ascii_alphabetic())
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    })
}

fn has_base64_run(text: &str) -> bool {
    let mut run = 0;
    for b in text.bytes() {
        run = if is_base64_byte(b) && b != b'=' {
            run + 1
        } else {
            0
        };
        if run >= MIN_KEY_MATERIAL {
            return true;
        }
    }
    false
}

fn is_base64_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=')
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;

    #[test]
    fn private_key_blocks_of_every_flavour() {
        for label in ["RSA ", "EC ", "DSA ", "OPENSSH ", "ENCRYPTED ", ""] {
            let block = pem(label, 5);
            let text = format!("here:\n{block}\nthanks");
            assert_single(&text, PRIVATE_KEY, &block);
        }
    }

    #[test]
    fn pgp_private_key_block_with_armor_headers() {
        let label = format!("PGP {}", "PRIVATE KEY BLOCK");
        let body = format!(
            "Version: GnuPG v2\n\n{}\n{}\n={}",
            mixed(64),
            mixed(30),
            upper(4)
        );
        let block = format!("-----BEGIN {label}-----\n{body}\n-----END {label}-----");
        assert_single(&format!("{block}\n"), PRIVATE_KEY, &block);
    }

    #[test]
    fn truncated_private_key_is_redacted_to_the_end_of_its_material() {
        let label = format!("RSA {}", "PRIVATE KEY");
        let key = format!("-----BEGIN {label}-----\n{}\n{}", mixed(64), mixed(64));
        assert_single(&key, PRIVATE_KEY, &key);
        let partial = format!(
            "-----BEGIN {label}-----\n{}\n{}",
            mixed(64),
            &mixed(64)[..20]
        );
        let text = format!("{partial}\n... output truncated ...");
        assert_single(&text, PRIVATE_KEY, &partial);
    }

    #[test]
    fn json_escaped_private_key() {
        let label = format!("{}PRIVATE KEY", "");
        let body = format!("{}\\n{}", mixed(64), mixed(12));
        let block = format!("-----BEGIN {label}-----\\n{body}\\n-----END {label}-----");
        assert_single(&format!("{{\"key\":\"{block}\\n\"}}"), PRIVATE_KEY, &block);
    }

    #[test]
    fn truncated_key_followed_by_a_complete_key() {
        let label = format!("EC {}", "PRIVATE KEY");
        let truncated = format!("-----BEGIN {label}-----\n{}", mixed(64));
        let complete = pem("EC ", 2);
        let text = format!("{truncated}\n{complete}\n");
        let kinds: Vec<_> = found(&text);
        assert_eq!(
            kinds,
            vec![(PRIVATE_KEY, truncated), (PRIVATE_KEY, complete)]
        );
    }

    #[test]
    fn pem_parsing_code_is_not_a_private_key() {
        let label = format!("RSA {}", "PRIVATE KEY");
        let code = format!(
            "const BEGIN: &str = \"-----BEGIN {label}-----\";\n\
             const END: &str = \"-----END {label}-----\";\n\
             if line.starts_with(BEGIN) {{ in_key = true; }}\n"
        );
        assert_clean(&code);
    }
}
