//! Plain chat logs in Markdown or text.
//!
//! A message starts at a **role marker** and runs until the next one.
//! Markers (role words are case-insensitive; a marker must start the line):
//!
//! - a heading made of only a role word, with an optional trailing colon:
//!   `# User`, `## Assistant`, `### system:` (levels 1 to 6);
//! - a prefix: `User: text`, or bold `**User:** text` / `**User**: text`;
//!   the text after the prefix is the start of the message.
//!
//! Role words: `user` and `human` (user), `assistant` (assistant), `system`,
//! `tool`. Nothing else (`AI:`, speaker names) is a marker, which keeps
//! ordinary prose from being split. Markers inside fenced code blocks
//! (```` ``` ```` or `~~~`) are ignored.
//!
//! The session id is the file stem. The title is the first heading before
//! the first marker, when it is not itself a marker. Other text before the
//! first marker (a preamble such as "Exported from ...") is kept as a
//! `System` message, so it stays searchable; a file with no markers at all is
//! therefore one `System` message, reported as a problem (line 0).
//! Messages have no ids, names or timestamps; empty messages are dropped.
//! Invalid UTF-8 is replaced with U+FFFD. The whole input is consumed.

use super::model::{Message, ParsedSession, Problem, Role, SessionMeta};

/// Bumped whenever the output for the same input changes.
pub const PARSER_VERSION: u32 = 1;

/// Parses a chat log; `stem` (the file stem) is the session id.
pub fn parse(input: &[u8], stem: &str) -> ParsedSession {
    let text = String::from_utf8_lossy(input);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let (messages, title, any_marker) = split_messages(text);
    let mut problems = Vec::new();
    if !any_marker && !messages.is_empty() {
        problems.push(Problem {
            line: 0,
            message: "no role markers found; kept the whole text as one system message".into(),
        });
    }
    ParsedSession {
        meta: SessionMeta {
            id: stem.to_owned(),
            title,
            ..SessionMeta::default()
        },
        messages,
        problems,
        unknown_lines: 0,
        consumed: input.len(),
    }
}

/// Splits `text` at role markers: the messages, the title, and whether any
/// marker was found.
fn split_messages(text: &str) -> (Vec<Message>, Option<String>, bool) {
    let mut cur = Current::new(Role::System, false);
    let mut messages = Vec::new();
    let mut title = None;
    let mut fence = Fence::default();
    for line in text.lines() {
        if fence.update(line) {
            cur.push_line(line);
        } else if let Some((role, rest)) = marker(line) {
            cur.finish_into(&mut messages);
            cur = Current::new(role, true);
            cur.push_line(rest);
        } else if let Some(h) = title_candidate(line, &cur, title.is_some()) {
            title = Some(h.to_owned());
        } else {
            cur.push_line(line);
        }
    }
    let any_marker = cur.marked;
    cur.finish_into(&mut messages);
    (messages, title, any_marker)
}

/// True when `head` has role markers (outside code fences) for at least two
/// different roles, e.g. a `## User` and an `Assistant:`.
pub fn sniff(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    let mut fence = Fence::default();
    let mut first: Option<Role> = None;
    for line in text.lines() {
        if fence.update(line) {
            continue;
        }
        if let Some((role, _)) = marker(line) {
            match first {
                None => first = Some(role),
                Some(r) if r != role => return true,
                Some(_) => {}
            }
        }
    }
    false
}

/// The message being collected.
struct Current {
    role: Role,
    text: String,
    /// Started by a marker (false for the preamble).
    marked: bool,
}

impl Current {
    fn new(role: Role, marked: bool) -> Self {
        Current {
            role,
            text: String::new(),
            marked,
        }
    }

    fn push_line(&mut self, line: &str) {
        if !self.text.is_empty() || !line.trim().is_empty() {
            self.text.push_str(line);
            self.text.push('\n');
        }
    }

    fn finish_into(&mut self, messages: &mut Vec<Message>) {
        let text = std::mem::take(&mut self.text);
        let trimmed = text.trim_end();
        if trimmed.is_empty() {
            return;
        }
        messages.push(Message {
            id: None,
            role: self.role,
            name: None,
            text: trimmed.to_owned(),
            timestamp: None,
            is_error: false,
        });
    }
}

/// Tracks fenced code blocks.
#[derive(Default)]
struct Fence {
    open: Option<char>,
}

impl Fence {
    /// Updates the state for `line`; true when the line is a fence line or
    /// inside a fenced block (so it is never a marker).
    fn update(&mut self, line: &str) -> bool {
        let t = line.trim_start();
        let fence_char = if t.starts_with("```") {
            Some('`')
        } else if t.starts_with("~~~") {
            Some('~')
        } else {
            None
        };
        match (self.open, fence_char) {
            (None, Some(c)) => {
                self.open = Some(c);
                true
            }
            (Some(open), Some(c)) if open == c => {
                self.open = None;
                true
            }
            (open, _) => open.is_some(),
        }
    }
}

fn role_word(word: &str) -> Option<Role> {
    const WORDS: [(&str, Role); 5] = [
        ("user", Role::User),
        ("human", Role::User),
        ("assistant", Role::Assistant),
        ("system", Role::System),
        ("tool", Role::Tool),
    ];
    let word = word.trim();
    WORDS
        .iter()
        .find(|(w, _)| w.eq_ignore_ascii_case(word))
        .map(|&(_, r)| r)
}

/// A role marker on `line`: the role and the text after the marker.
fn marker(line: &str) -> Option<(Role, &str)> {
    if let Some(h) = heading(line) {
        return role_word(h.strip_suffix(':').unwrap_or(h)).map(|r| (r, ""));
    }
    if let Some(rest) = line.strip_prefix("**") {
        let (inner, after) = rest.split_once("**")?;
        let (word, after) = match inner.strip_suffix(':') {
            Some(word) => (word, after),
            None => (inner, after.strip_prefix(':')?),
        };
        return role_word(word).map(|r| (r, after.trim_start()));
    }
    let (word, rest) = line.split_once(':')?;
    if word.len() > 9 || word.starts_with(char::is_whitespace) {
        return None;
    }
    role_word(word).map(|r| (r, rest.trim_start()))
}

/// A Markdown heading's text (trimmed), or `None`.
fn heading(line: &str) -> Option<&str> {
    let rest = line.trim_start_matches('#');
    let level = line.len() - rest.len();
    if (1..=6).contains(&level) && (rest.is_empty() || rest.starts_with([' ', '\t'])) {
        Some(rest.trim())
    } else {
        None
    }
}

/// The session title: the first heading before the first marker.
fn title_candidate<'a>(line: &'a str, cur: &Current, have_title: bool) -> Option<&'a str> {
    if have_title || cur.marked {
        return None;
    }
    heading(line).filter(|h| !h.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roles(p: &ParsedSession) -> Vec<Role> {
        p.messages.iter().map(|m| m.role).collect()
    }

    #[test]
    fn heading_style() {
        let input = "# Fixing the flaky reload test\n\n## User\n\nWhy does `reload_picks_up_changes` fail?\n\n### ASSISTANT:\nThe watcher fires late.\n\n```text\nUser: this is inside a fence\n```\n\n# system\nbe brief\n## Tool\n";
        let p = parse(input.as_bytes(), "chat-1");
        assert_eq!(p.meta.id, "chat-1");
        assert_eq!(
            p.meta.title.as_deref(),
            Some("Fixing the flaky reload test")
        );
        assert_eq!(roles(&p), [Role::User, Role::Assistant, Role::System]);
        assert_eq!(
            p.messages[0].text,
            "Why does `reload_picks_up_changes` fail?"
        );
        assert!(p.messages[1]
            .text
            .ends_with("User: this is inside a fence\n```"));
        assert_eq!(p.consumed, input.len());
        assert!(p.problems.is_empty());
    }

    #[test]
    fn prefix_style_continues_until_next_prefix() {
        let input = "Exported 2024-05-01\r\nUser: the config loader\r\nignores XDG_CONFIG_HOME\r\n\r\nAssistant: Look at `Config::path`.\r\nIt hardcodes ~/.apprc.\r\nhuman: thanks\r\n**Tool:** cargo test ok\r\n**assistant**: done\r\n";
        let p = parse(input.as_bytes(), "s");
        assert_eq!(
            roles(&p),
            [
                Role::System,
                Role::User,
                Role::Assistant,
                Role::User,
                Role::Tool,
                Role::Assistant
            ]
        );
        assert_eq!(p.messages[0].text, "Exported 2024-05-01");
        assert_eq!(
            p.messages[1].text,
            "the config loader\nignores XDG_CONFIG_HOME"
        );
        assert_eq!(
            p.messages[2].text,
            "Look at `Config::path`.\nIt hardcodes ~/.apprc."
        );
        assert_eq!(p.messages[4].text, "cargo test ok");
        assert_eq!(p.messages[5].text, "done");
        assert_eq!(p.meta.title, None);
    }

    #[test]
    fn non_markers() {
        for line in [
            "Users: many",
            " User: indented",
            "AI: hello",
            "#User",
            "## User guide",
            "**User** said",
        ] {
            assert_eq!(marker(line), None, "{line}");
        }
        assert_eq!(marker("## user :"), Some((Role::User, "")));
        assert_eq!(marker("## user:"), Some((Role::User, "")));
        assert_eq!(marker("TOOL:ls"), Some((Role::Tool, "ls")));
    }

    #[test]
    fn no_markers_is_one_system_message() {
        let p = parse(b"just some notes\nabout nothing\n", "s");
        assert_eq!(roles(&p), [Role::System]);
        assert_eq!(p.problems.len(), 1);
        assert!(parse(b"", "s").messages.is_empty());
        assert!(parse(b"", "s").problems.is_empty());
        let p = parse(b"\xff\x00 junk\nUser: \xfe hi\n", "s");
        assert_eq!(p.messages.len(), 2);
    }

    #[test]
    fn sniff_needs_two_roles() {
        assert!(sniff(b"## User\nhi\n## Assistant\nhello\n"));
        assert!(sniff(b"User: hi\nAssistant: hello\n"));
        assert!(!sniff(b"User: reports a crash\nUser: again\n"));
        assert!(!sniff(b"```\nUser: a\nAssistant: b\n```\n"));
        assert!(!sniff(b"{\"role\":\"user\"}"));
    }
}
