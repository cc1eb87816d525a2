//! Format detection from content.
//!
//! [`detect`] looks at the first ~64 KB of a file and picks the parser.
//! Content decides; the path only matters for the plain-text ticket
//! fallback. Candidates are tried in this order, the first match wins:
//!
//! 1. Codex rollout JSONL (`{timestamp, type, payload}` lines),
//! 2. Gemini CLI chat (JSON or JSONL opening with `sessionId` and
//!    `projectHash`, [`gemini::sniff`]); before Claude Code, whose sniff a
//!    chat written on one line would also pass,
//! 3. Claude Code JSONL (`type` from Claude's set plus `sessionId`/`uuid`),
//! 4. neutral transcript ([`neutral::sniff`]),
//! 5. GitHub issue JSON ([`ticket::sniff_github`]),
//! 6. Markdown ticket with frontmatter ([`ticket::sniff_markdown`]),
//! 7. Markdown/text chat log ([`chatlog::sniff`]).
//!
//! JSON shapes come first because they are unambiguous; frontmatter comes
//! before chat markers because a ticket body may quote a conversation.
//! `kind_hint` drops the candidates of the other kind.
//!
//! Anything else is unrecognised (`None`, the caller reports
//! "unrecognised format; pass --format"), except that with
//! `kind_hint = Some(Kind::Ticket)` a text file (extension `.txt`, `.md`,
//! `.markdown`, `.text` or none) that does not start like JSON is a
//! plain-text ticket. Binary content (see `is_binary`) and blank content
//! are never recognised.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use super::{chatlog, gemini, neutral, ticket};

/// A source format, one per parser.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Claude Code session JSONL.
    ClaudeCode,
    /// Codex CLI rollout JSONL.
    Codex,
    /// A Gemini CLI chat (a JSON document or a JSONL log).
    Gemini,
    /// The neutral transcript format (JSONL or one JSON document).
    Neutral,
    /// A chat log in Markdown or plain text.
    Markdown,
    /// GitHub issue JSON from `gh issue view/list --json`.
    GithubTicket,
    /// A Markdown ticket with YAML frontmatter.
    MarkdownTicket,
    /// A plain-text ticket.
    TextTicket,
}

/// What a format produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A transcript: messages.
    Session,
    /// Tickets.
    Ticket,
}

impl Format {
    /// Whether files of this format are JSON (a document or one object a
    /// line), so a file that does not open with `{` or `[` is not one.
    pub fn is_json(self) -> bool {
        matches!(
            self,
            Format::ClaudeCode
                | Format::Codex
                | Format::Gemini
                | Format::Neutral
                | Format::GithubTicket
        )
    }

    /// Every format, in CLI help order.
    pub const ALL: [Format; 8] = [
        Format::ClaudeCode,
        Format::Codex,
        Format::Gemini,
        Format::Neutral,
        Format::Markdown,
        Format::GithubTicket,
        Format::MarkdownTicket,
        Format::TextTicket,
    ];

    /// Whether the format holds a session or tickets.
    pub fn kind(self) -> Kind {
        match self {
            Format::ClaudeCode
            | Format::Codex
            | Format::Gemini
            | Format::Neutral
            | Format::Markdown => Kind::Session,
            Format::GithubTicket | Format::MarkdownTicket | Format::TextTicket => Kind::Ticket,
        }
    }

    /// The CLI name (`--format` value): `claude-code`, `codex`, `gemini`, `neutral`,
    /// `markdown`, `github`, `ticket-markdown`, `ticket-text`.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::ClaudeCode => "claude-code",
            Format::Codex => "codex",
            Format::Gemini => "gemini",
            Format::Neutral => "neutral",
            Format::Markdown => "markdown",
            Format::GithubTicket => "github",
            Format::MarkdownTicket => "ticket-markdown",
            Format::TextTicket => "ticket-text",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Format {
    type Err = String;

    /// Parses a CLI name (case-insensitive); `text` is accepted for
    /// `ticket-text`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("text") {
            return Ok(Format::TextTicket);
        }
        Format::ALL
            .into_iter()
            .find(|f| f.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                let names: Vec<&str> = Format::ALL.iter().map(|f| f.as_str()).collect();
                format!(
                    "unknown format {s:?} (expected one of: {})",
                    names.join(", ")
                )
            })
    }
}

/// A content check: does this head look like the format?
type Sniffer = fn(&[u8]) -> bool;

/// Content checks in priority order (see the module doc).
const CANDIDATES: [(Format, Sniffer); 7] = [
    (Format::Codex, sniff_codex),
    (Format::Gemini, gemini::sniff),
    (Format::ClaudeCode, sniff_claude_code),
    (Format::Neutral, neutral::sniff),
    (Format::GithubTicket, ticket::sniff_github),
    (Format::MarkdownTicket, ticket::sniff_markdown),
    (Format::Markdown, chatlog::sniff),
];

/// Detects the format of a file from `head`, its first bytes (~64 KB).
/// `kind_hint` restricts the candidates to one kind. See the module doc.
pub fn detect(head: &[u8], path: &Path, kind_hint: Option<Kind>) -> Option<Format> {
    if head.trim_ascii().is_empty() || is_binary(head) {
        return None;
    }
    let allowed = |f: Format| kind_hint.is_none_or(|k| k == f.kind());
    CANDIDATES
        .iter()
        .find(|(f, sniff)| allowed(*f) && sniff(head))
        .map(|(f, _)| *f)
        .or_else(|| text_ticket(head, path, kind_hint))
}

/// The plain-text ticket fallback: only when asked for tickets.
fn text_ticket(head: &[u8], path: &Path, kind_hint: Option<Kind>) -> Option<Format> {
    const TEXT_EXTENSIONS: [&str; 4] = ["txt", "md", "markdown", "text"];
    let ext_ok = path
        .extension()
        .and_then(|e| e.to_str())
        .is_none_or(|e| TEXT_EXTENSIONS.iter().any(|t| t.eq_ignore_ascii_case(e)));
    let json_like = matches!(head.trim_ascii_start().first(), Some(b'{' | b'['));
    (kind_hint == Some(Kind::Ticket) && ext_ok && !json_like).then_some(Format::TextTicket)
}

/// Binary content: lines with NUL bytes outnumber the other non-blank
/// lines, or more than 10% of the bytes of those other lines are not valid
/// UTF-8. A few lines with NUL bytes in a text file are damage (a crash
/// left zeros in a transcript), reported and skipped line by line
/// (`ingest::nul`), not a reason to skip the file.
pub(crate) fn is_binary(head: &[u8]) -> bool {
    let (mut damaged, mut lines, mut bytes, mut invalid) = (0usize, 0usize, 0usize, 0usize);
    for line in head.split(|&b| b == b'\n') {
        if memchr::memchr(0, line).is_some() {
            damaged += 1;
        } else if !line.trim_ascii().is_empty() {
            lines += 1;
            bytes += line.len();
            invalid += line.utf8_chunks().map(|c| c.invalid().len()).sum::<usize>();
        }
    }
    damaged > lines || invalid * 10 > bytes
}

/// The first few non-blank lines of `head` (the last may be cut off).
fn first_lines(head: &[u8]) -> impl Iterator<Item = &[u8]> {
    head.split(|&b| b == b'\n')
        .map(<[u8]>::trim_ascii)
        .filter(|l| !l.is_empty())
        .take(5)
}

/// The values of every `"type": "<value>"` pair in a JSON line, found by
/// scanning (works on a line cut off by the end of `head`).
fn type_values(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    memchr::memmem::find_iter(line, b"\"type\"").filter_map(move |i| {
        let rest = line[i + 6..].trim_ascii_start().strip_prefix(b":")?;
        let rest = rest.trim_ascii_start().strip_prefix(b"\"")?;
        memchr::memchr(b'"', rest).map(|end| &rest[..end])
    })
}

fn contains(line: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(line, needle).is_some()
}

/// Mirrors `codex::sniff`: one of the first lines is a JSON object with a
/// `payload` and a Codex rollout `type`.
fn sniff_codex(head: &[u8]) -> bool {
    const TYPES: [&[u8]; 5] = [
        b"session_meta",
        b"response_item",
        b"event_msg",
        b"turn_context",
        b"compacted",
    ];
    first_lines(head).any(|l| {
        l.starts_with(b"{")
            && contains(l, b"\"payload\"")
            && type_values(l).any(|t| TYPES.contains(&t))
    })
}

/// Mirrors `claude_code::sniff`: one of the first lines is a JSON object
/// with a Claude Code entry `type` and a `sessionId` or `uuid` (a `summary`
/// entry has a `leafUuid` instead).
fn sniff_claude_code(head: &[u8]) -> bool {
    const TYPES: [&[u8]; 7] = [
        b"user",
        b"assistant",
        b"summary",
        b"system",
        b"progress",
        b"file-history-snapshot",
        b"queue-operation",
    ];
    first_lines(head).any(|l| {
        let ids = contains(l, b"\"sessionId\"")
            || contains(l, b"\"uuid\"")
            || contains(l, b"\"leafUuid\"");
        l.starts_with(b"{") && ids && type_values(l).any(|t| TYPES.contains(&t))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn det(head: &str, hint: Option<Kind>) -> Option<Format> {
        detect(head.as_bytes(), Path::new("x.jsonl"), hint)
    }

    #[test]
    fn names_round_trip() {
        for f in Format::ALL {
            assert_eq!(f.as_str().parse::<Format>(), Ok(f));
            assert_eq!(f.to_string(), f.as_str());
        }
        assert_eq!("TEXT".parse::<Format>(), Ok(Format::TextTicket));
        assert_eq!(" GitHub ".parse::<Format>(), Ok(Format::GithubTicket));
        let err = "jira".parse::<Format>().unwrap_err();
        assert!(err.starts_with("unknown format \"jira\""), "{err}");
        assert_eq!(Format::Markdown.kind(), Kind::Session);
        assert_eq!(Format::MarkdownTicket.kind(), Kind::Ticket);
    }

    #[test]
    fn claude_code() {
        let summary = r#"{"type":"summary","summary":"Fix flaky test","leafUuid":"9f1c"}"#;
        let user = r#"{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/src","sessionId":"4a2e","version":"1.0.0","type":"user","message":{"role":"user","content":"hi"},"uuid":"7b3d","timestamp":"2024-05-01T10:00:00Z"}"#;
        let assistant = r#"{"parentUuid":"7b3d","sessionId":"4a2e","message":{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"ok"}]},"type":"assistant","uuid":"8c4e"}"#;
        assert_eq!(
            det(&format!("{summary}\n{user}\n"), None),
            Some(Format::ClaudeCode)
        );
        assert_eq!(
            det(&format!("{assistant}\n"), None),
            Some(Format::ClaudeCode)
        );
        // A first line cut off by the end of the head.
        let cut = user.find("\"message\"").unwrap_or(user.len());
        assert_eq!(det(&user[..cut], None), Some(Format::ClaudeCode));
        assert_eq!(det(user, Some(Kind::Ticket)), None);
    }

    #[test]
    fn codex() {
        let meta = r#"{"timestamp":"2024-05-01T10:00:00.000Z","type":"session_meta","payload":{"id":"0190","cwd":"/src"}}"#;
        let item = r#"{"timestamp":"2024-05-01T10:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}"#;
        assert_eq!(det(&format!("{meta}\n{item}\n"), None), Some(Format::Codex));
        assert_eq!(det(item, Some(Kind::Session)), Some(Format::Codex));
    }

    /// A Gemini CLI chat in both layouts, and one written on one line,
    /// which Claude Code's sniff would also take.
    #[test]
    fn gemini() {
        let doc =
            "{\n  \"sessionId\": \"faff42ab\",\n  \"projectHash\": \"7e89\",\n  \"messages\": [\n";
        assert_eq!(det(doc, None), Some(Format::Gemini));
        let log = r#"{"sessionId":"s","projectHash":"h","startTime":"2026-05-02T09:00:00Z"}"#;
        assert_eq!(det(log, Some(Kind::Session)), Some(Format::Gemini));
        let one_line = r#"{"sessionId":"s","projectHash":"h","messages":[{"id":"u","type":"user","content":"hi"}]}"#;
        assert_eq!(det(one_line, None), Some(Format::Gemini));
        assert_eq!(det(log, Some(Kind::Ticket)), None);
        assert_eq!("gemini".parse::<Format>(), Ok(Format::Gemini));
    }

    #[test]
    fn neutral_and_tickets() {
        assert_eq!(
            det("{\"role\":\"user\",\"content\":\"hi\"}\n", None),
            Some(Format::Neutral)
        );
        assert_eq!(
            det("{\n  \"session\": {\"id\": \"a\"},\n", None),
            Some(Format::Neutral)
        );
        assert_eq!(
            det(r#"{"number": 3, "title": "x", "body": ""}"#, None),
            Some(Format::GithubTicket)
        );
        assert_eq!(
            det(r#"{"number": 3, "title": "x"}"#, Some(Kind::Session)),
            None
        );
        assert_eq!(
            det("---\ntitle: Bug\n---\nUser: a\nAssistant: b\n", None),
            Some(Format::MarkdownTicket)
        );
        assert_eq!(
            det(
                "---\ntitle: Bug\n---\nUser: a\nAssistant: b\n",
                Some(Kind::Session)
            ),
            Some(Format::Markdown)
        );
        assert_eq!(
            det("## User\nhi\n\n## Assistant\nhello\n", None),
            Some(Format::Markdown)
        );
    }

    #[test]
    fn text_ticket_needs_ticket_hint_and_text_extension() {
        let text = "Reload test times out on Windows\n\nDetails.\n";
        assert_eq!(detect(text.as_bytes(), Path::new("a.txt"), None), None);
        assert_eq!(
            detect(text.as_bytes(), Path::new("a.txt"), Some(Kind::Session)),
            None
        );
        for p in ["a.txt", "b.MD", "NOTES"] {
            assert_eq!(
                detect(text.as_bytes(), Path::new(p), Some(Kind::Ticket)),
                Some(Format::TextTicket),
                "{p}"
            );
        }
        assert_eq!(
            detect(text.as_bytes(), Path::new("a.json"), Some(Kind::Ticket)),
            None
        );
        assert_eq!(
            detect(b"{\"a\": 1}", Path::new("a.txt"), Some(Kind::Ticket)),
            None
        );
    }

    #[test]
    fn binary_blank_and_unknown() {
        assert_eq!(
            detect(
                b"\x7fELF\x02\x01\x01\x00\x00",
                Path::new("a.md"),
                Some(Kind::Ticket)
            ),
            None
        );
        let latin1_heavy = [0xe9_u8; 64];
        assert_eq!(
            detect(&latin1_heavy, Path::new("a.txt"), Some(Kind::Ticket)),
            None
        );
        let mostly_text = format!("Caf{} au lait notes and more text here", '\u{e9}');
        let mut bytes = mostly_text.into_bytes();
        bytes.push(0xe9);
        assert_eq!(
            detect(&bytes, Path::new("a.txt"), Some(Kind::Ticket)),
            Some(Format::TextTicket)
        );
        assert_eq!(
            detect(b"  \n\n", Path::new("a.txt"), Some(Kind::Ticket)),
            None
        );
        assert_eq!(det("{\"foo\": 1}\n", None), None);
        assert_eq!(det("just prose\n", None), None);
    }

    /// Random inputs built from format fragments never panic any parser.
    #[test]
    fn nothing_panics_on_random_input() {
        const PIECES: [&[u8]; 16] = [
            b"{",
            b"}",
            b"[",
            b"]",
            b"\"role\":\"user\"",
            b"\"content\":",
            b"\"x\"",
            b",",
            b"\n",
            b"---\n",
            b"title: a\n",
            b"## User\n",
            b"Assistant: ",
            b"\xff\xfe",
            b"\xc3\xa9",
            b"\"number\":1",
        ];
        let mut rng = synth::Rng::with_seed(0x9e37_79b9_7f4a_7c15);
        for _ in 0..2000 {
            let len = rng.usize(..40);
            let input: Vec<u8> = (0..len)
                .flat_map(|_| PIECES[rng.usize(..PIECES.len())].to_vec())
                .collect();
            for hint in [None, Some(Kind::Session), Some(Kind::Ticket)] {
                let _ = detect(&input, Path::new("f.txt"), hint);
            }
            let p = neutral::parse(&input, 1, "f");
            assert!(p.consumed <= input.len());
            let _ = chatlog::parse(&input, "f");
            let _ = ticket::parse(&input, "f");
            let text = String::from_utf8_lossy(&input);
            let _ = super::super::noise::reduce(&text, rng.usize(..64));
        }
    }

    // ------------------------------------------------------------ fixtures

    const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/formats");

    /// Detects and parses a fixture; returns the format and the number of
    /// messages or tickets.
    fn load(name: &str, hint: Option<Kind>) -> (Format, usize) {
        let path = PathBuf::from(FIXTURES).join(name);
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let head = &bytes[..bytes.len().min(64 * 1024)];
        let format = detect(head, &path, hint).unwrap_or_else(|| panic!("{name}: not detected"));
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        let count = match format.kind() {
            Kind::Session => {
                let s = match format {
                    Format::Neutral => neutral::parse(&bytes, 1, stem),
                    Format::Markdown => chatlog::parse(&bytes, stem),
                    other => panic!("{name}: unexpected {other}"),
                };
                assert!(s.problems.is_empty(), "{name}: {:?}", s.problems);
                assert_eq!(s.consumed, bytes.len(), "{name}");
                s.messages.len()
            }
            Kind::Ticket => ticket::parse(&bytes, stem)
                .unwrap_or_else(|p| panic!("{name}: {p:?}"))
                .len(),
        };
        (format, count)
    }

    #[test]
    fn fixtures_detect_and_parse() {
        assert_eq!(load("neutral.jsonl", None), (Format::Neutral, 6));
        assert_eq!(load("neutral-doc.json", None), (Format::Neutral, 4));
        assert_eq!(load("chat.md", None), (Format::Markdown, 5));
        assert_eq!(load("chat.txt", None), (Format::Markdown, 4));
        assert_eq!(load("ticket.md", None), (Format::MarkdownTicket, 1));
        assert_eq!(
            load("issue.json", Some(Kind::Ticket)),
            (Format::GithubTicket, 1)
        );
        assert_eq!(load("issues.json", None), (Format::GithubTicket, 2));
        assert_eq!(
            load("ticket.txt", Some(Kind::Ticket)),
            (Format::TextTicket, 1)
        );
        assert_eq!(
            detect(b"Reload test times out", Path::new("ticket.txt"), None),
            None
        );
    }

    #[test]
    fn fixture_contents() {
        let bytes =
            std::fs::read(PathBuf::from(FIXTURES).join("neutral.jsonl")).expect("fixture file");
        let s = neutral::parse(&bytes, 1, "neutral");
        assert_eq!(s.meta.id, "flaky-reload-2024-05-01");
        assert_eq!(s.meta.git_branch.as_deref(), Some("fix/flaky-reload"));
        assert!(s.messages[2].is_error);
        let bytes = std::fs::read(PathBuf::from(FIXTURES).join("chat.md")).expect("fixture file");
        let s = chatlog::parse(&bytes, "chat");
        assert_eq!(
            s.meta.title.as_deref(),
            Some("Why does the config loader panic on an empty file?")
        );
        assert!(s.messages[1]
            .text
            .contains("User: (this line is log output"));
        let bytes =
            std::fs::read(PathBuf::from(FIXTURES).join("issue.json")).expect("fixture file");
        let t = ticket::parse(&bytes, "issue").unwrap_or_default();
        assert_eq!(
            (t[0].id.as_str(), t[0].status.as_deref()),
            ("#214", Some("open"))
        );
        assert_eq!(t[0].comments.len(), 2);
        let bytes = std::fs::read(PathBuf::from(FIXTURES).join("ticket.md")).expect("fixture file");
        let t = ticket::parse(&bytes, "ticket").unwrap_or_default();
        assert_eq!(t[0].labels, ["bug", "config", "linux"]);
    }
}
