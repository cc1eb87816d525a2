//! Ticket parsing: Markdown with YAML frontmatter, GitHub issue JSON, and
//! plain text, behind one [`parse`].
//!
//! The form is chosen from the content (after an optional UTF-8 BOM and
//! leading whitespace):
//!
//! - **GitHub JSON** when it starts with `{`, or with `[` followed by `{` or
//!   `]`: one issue as printed by
//!   `gh issue view N --json number,title,body,labels,state,comments,createdAt,updatedAt`,
//!   or an array of them (`gh issue list --json ...`). The id is
//!   `#<number>`; status is `state` lowercased; labels are the `name`s of
//!   the label objects (plain strings are accepted too); comments become
//!   `"<author login>: <body>"` (just the body when there is no author).
//!   The REST API spellings `created_at`, `updated_at` and `user.login` are
//!   accepted as well. A missing `number` or `title` is an error.
//! - **Markdown with frontmatter** when the first non-blank line is `---`.
//!   The YAML block ends at a line `---` or `...`. Keys: `id`, `title`,
//!   `status`, `labels` (a list, or a comma-separated string; `tags` is used
//!   when `labels` is absent), `created`, `updated` (see
//!   [`super::neutral::parse_time`], or unix seconds). Unknown keys and
//!   non-scalar values are ignored; a date that does not parse is dropped
//!   (the ticket is kept). Missing `id`: the file stem. Missing `title`: the
//!   first `#` heading of the body, else its first non-empty line, else the
//!   id. The body is the Markdown after the frontmatter.
//! - **Plain text** otherwise: the id is the file stem, the title the first
//!   non-empty line (leading `#`s removed, so a Markdown file without
//!   frontmatter works too), the body the rest.
//!
//! Only a file that cannot be read as a ticket at all is an error: invalid
//! JSON, invalid or unterminated frontmatter, or an empty file. Its
//! [`Problem`] carries the 1-based line in the file (0 when not known).

use serde_json::Value as Json;
use serde_yaml_ng::{Mapping, Value as Yaml};

use super::chunk::split_text;
use super::model::{Problem, Ticket};
use super::neutral::parse_time;

/// Bumped whenever the output for the same input changes.
pub const PARSER_VERSION: u32 = 1;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Parses one ticket file; `stem` is the file stem (the fallback id).
pub fn parse(input: &[u8], stem: &str) -> Result<Vec<Ticket>, Problem> {
    let input = input.strip_prefix(BOM).unwrap_or(input);
    if looks_like_json(input) {
        return parse_github(input);
    }
    let text = String::from_utf8_lossy(input);
    if text.trim().is_empty() {
        return Err(problem(0, "empty ticket".into()));
    }
    if first_nonblank_line(&text).trim_end() == "---" {
        parse_markdown(&text, stem).map(|t| vec![t])
    } else {
        Ok(vec![parse_text(&text, stem)])
    }
}

/// True when `head` looks like GitHub issue JSON: an object or array that
/// has both `"number"` and `"title"` keys.
pub fn sniff_github(head: &[u8]) -> bool {
    let head = head.strip_prefix(BOM).unwrap_or(head);
    looks_like_json(head)
        && memchr::memmem::find(head, b"\"number\"").is_some()
        && memchr::memmem::find(head, b"\"title\"").is_some()
}

/// True when `head` starts with a `---` frontmatter block that has a
/// top-level `title:` or `status:` key before its closing line (or before
/// the end of `head`).
pub fn sniff_markdown(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head.strip_prefix(BOM).unwrap_or(head));
    let mut lines = text.lines().skip_while(|l| l.trim().is_empty());
    if lines.next().map(str::trim_end) != Some("---") {
        return false;
    }
    lines
        .take_while(|l| !matches!(l.trim_end(), "---" | "..."))
        .any(|l| l.starts_with("title:") || l.starts_with("status:"))
}

/// The ticket's indexable text (body, then each comment as
/// `"<author>: <body>"`), split on paragraph boundaries into parts of about
/// `target_words` words (at most twice that; see [`split_text`]). Title and
/// labels are not included: the caller stores them with every part. Always
/// returns at least one part (an empty string for a ticket with no text).
pub fn split_long(t: &Ticket, target_words: usize) -> Vec<String> {
    let mut text =
        String::with_capacity(t.body.len() + t.comments.iter().map(String::len).sum::<usize>());
    for part in std::iter::once(&t.body).chain(&t.comments) {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(part);
    }
    let target = target_words.max(1);
    let parts: Vec<String> = split_text(&text, target, target.saturating_mul(2))
        .into_iter()
        .map(str::to_owned)
        .collect();
    if parts.is_empty() {
        // A ticket that is only a title (a one-line text file): the title
        // is its text, so a hit on it shows something.
        vec![t.title.trim().to_owned()]
    } else {
        parts
    }
}

fn problem(line: usize, message: String) -> Problem {
    Problem { line, message }
}

fn looks_like_json(b: &[u8]) -> bool {
    let b = b.trim_ascii_start();
    match b.first() {
        Some(b'{') => true,
        Some(b'[') => matches!(b[1..].trim_ascii_start().first(), Some(b'{' | b']')),
        _ => false,
    }
}

fn first_nonblank_line(text: &str) -> &str {
    text.lines().find(|l| !l.trim().is_empty()).unwrap_or("")
}

/// A heading's text without its `#`s, or `None` if `line` is not a heading.
fn heading_text(line: &str) -> Option<&str> {
    let rest = line.trim_start_matches('#');
    let level = line.len() - rest.len();
    if (1..=6).contains(&level) && (rest.is_empty() || rest.starts_with([' ', '\t'])) {
        Some(rest.trim().trim_end_matches('#').trim_end())
    } else {
        None
    }
}

// ---------------------------------------------------------------- GitHub

fn parse_github(input: &[u8]) -> Result<Vec<Ticket>, Problem> {
    let value: Json = serde_json::from_slice(input).map_err(|e| {
        let full = e.to_string();
        let msg = full
            .rfind(" at line ")
            .map_or(full.as_str(), |i| &full[..i]);
        problem(
            e.line(),
            format!("invalid JSON: {msg} at column {}", e.column()),
        )
    })?;
    match value {
        Json::Array(items) => items
            .into_iter()
            .enumerate()
            .map(|(i, item)| {
                github_issue(item).map_err(|m| problem(0, format!("issue [{i}]: {m}")))
            })
            .collect(),
        issue @ Json::Object(_) => github_issue(issue)
            .map(|t| vec![t])
            .map_err(|m| problem(0, m)),
        _ => Err(problem(
            0,
            "expected a GitHub issue object or an array of them".into(),
        )),
    }
}

fn github_issue(v: Json) -> Result<Ticket, String> {
    let Json::Object(obj) = v else {
        return Err("expected a JSON object".into());
    };
    let number = match obj.get("number") {
        Some(n) => n.as_u64().ok_or(r#""number" must be a positive integer"#)?,
        None => return Err(r#"missing "number""#.into()),
    };
    let title = match obj.get("title") {
        Some(Json::String(s)) => s.trim().to_owned(),
        Some(_) => return Err(r#""title" must be a string"#.into()),
        None => return Err(r#"missing "title""#.into()),
    };
    let str_of = |key: &str| obj.get(key).and_then(Json::as_str);
    let time_of = |a: &str, b: &str| str_of(a).or_else(|| str_of(b)).and_then(parse_time);
    Ok(Ticket {
        id: format!("#{number}"),
        title,
        status: str_of("state").map(str::to_lowercase),
        labels: github_labels(obj.get("labels")),
        created: time_of("createdAt", "created_at"),
        updated: time_of("updatedAt", "updated_at"),
        body: str_of("body").unwrap_or_default().trim().to_owned(),
        comments: github_comments(obj.get("comments")),
    })
}

fn github_labels(v: Option<&Json>) -> Vec<String> {
    let Some(Json::Array(items)) = v else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|l| match l {
            Json::String(s) => Some(s.as_str()),
            Json::Object(o) => o.get("name").and_then(Json::as_str),
            _ => None,
        })
        .map(str::to_owned)
        .collect()
}

fn github_comments(v: Option<&Json>) -> Vec<String> {
    let Some(Json::Array(items)) = v else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(items.len());
    for c in items {
        let body = c
            .get("body")
            .and_then(Json::as_str)
            .unwrap_or_default()
            .trim();
        if body.is_empty() {
            continue;
        }
        let author = ["author", "user"]
            .iter()
            .find_map(|k| c.get(k)?.get("login")?.as_str())
            .filter(|a| !a.is_empty());
        out.push(match author {
            Some(a) => format!("{a}: {body}"),
            None => body.to_owned(),
        });
    }
    out
}

// ---------------------------------------------------------------- Markdown

/// The frontmatter split out of a Markdown ticket.
struct Frontmatter<'a> {
    yaml: &'a str,
    /// 1-based file line of the first YAML line.
    first_line: usize,
    body: &'a str,
}

fn split_frontmatter(text: &str) -> Result<Frontmatter<'_>, Problem> {
    let mut pos = 0;
    let mut line_no = 0;
    let mut open: Option<(usize, usize)> = None; // (yaml start byte, its line)
    for line in text.split_inclusive('\n') {
        line_no += 1;
        let end = pos + line.len();
        let bare = line.trim_end();
        match open {
            None if bare.trim_start().is_empty() => {}
            None => open = Some((end, line_no + 1)),
            Some((start, first_line)) if matches!(bare, "---" | "...") => {
                return Ok(Frontmatter {
                    yaml: &text[start..pos],
                    first_line,
                    body: &text[end..],
                });
            }
            Some(_) => {}
        }
        pos = end;
    }
    let line = open.map_or(1, |(_, l)| l - 1);
    Err(problem(
        line,
        r#"unterminated frontmatter: no closing "---" line"#.into(),
    ))
}

fn parse_yaml(fm: &Frontmatter) -> Result<Mapping, Problem> {
    match serde_yaml_ng::from_str::<Yaml>(fm.yaml) {
        Ok(Yaml::Mapping(m)) => Ok(m),
        Ok(Yaml::Null) => Ok(Mapping::new()),
        Ok(_) => Err(problem(
            fm.first_line,
            "frontmatter must be a mapping of keys".into(),
        )),
        Err(e) => {
            let line = e
                .location()
                .map_or(fm.first_line, |l| fm.first_line + l.line().max(1) - 1);
            let full = e.to_string();
            let msg = full.find(" at line ").map_or(full.as_str(), |i| &full[..i]);
            Err(problem(line, format!("invalid frontmatter: {msg}")))
        }
    }
}

fn parse_markdown(text: &str, stem: &str) -> Result<Ticket, Problem> {
    let fm = split_frontmatter(text)?;
    let map = parse_yaml(&fm)?;
    let body = fm.body.trim();
    let id = yaml_str(&map, "id").unwrap_or_else(|| stem.to_owned());
    let title = yaml_str(&map, "title")
        .or_else(|| {
            body.lines()
                .find_map(heading_text)
                .filter(|h| !h.is_empty())
                .map(str::to_owned)
        })
        .or_else(|| Some(first_nonblank_line(body).trim().to_owned()).filter(|l| !l.is_empty()))
        .unwrap_or_else(|| id.clone());
    let labels = match map.get("labels") {
        Some(v) => yaml_labels(v),
        None => map.get("tags").map(yaml_labels).unwrap_or_default(),
    };
    Ok(Ticket {
        id,
        title,
        status: yaml_str(&map, "status"),
        labels,
        created: yaml_time(&map, "created"),
        updated: yaml_time(&map, "updated"),
        body: body.to_owned(),
        comments: Vec::new(),
    })
}

fn yaml_scalar(v: &Yaml) -> Option<String> {
    let s = match v {
        Yaml::String(s) => s.trim().to_owned(),
        Yaml::Number(n) => n.to_string(),
        Yaml::Bool(b) => b.to_string(),
        _ => return None,
    };
    Some(s).filter(|s| !s.is_empty())
}

fn yaml_str(map: &Mapping, key: &str) -> Option<String> {
    map.get(key).and_then(yaml_scalar)
}

fn yaml_labels(v: &Yaml) -> Vec<String> {
    match v {
        Yaml::Sequence(items) => items.iter().filter_map(yaml_scalar).collect(),
        Yaml::String(s) => s
            .split(',')
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect(),
        other => yaml_scalar(other).into_iter().collect(),
    }
}

fn yaml_time(map: &Mapping, key: &str) -> Option<i64> {
    match map.get(key)? {
        Yaml::Number(n) => n.as_i64(),
        Yaml::String(s) => parse_time(s),
        _ => None,
    }
}

// ---------------------------------------------------------------- Plain text

fn parse_text(text: &str, stem: &str) -> Ticket {
    let text = text.trim();
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
    let first = first.trim();
    Ticket {
        id: stem.to_owned(),
        title: heading_text(first).unwrap_or(first).to_owned(),
        body: rest.trim().to_owned(),
        ..Ticket::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(input: &str) -> Ticket {
        let mut v = parse(input.as_bytes(), "T-7").unwrap_or_else(|p| panic!("{p:?}"));
        assert_eq!(v.len(), 1);
        v.remove(0)
    }

    #[test]
    fn markdown_with_list_labels() {
        let t = one("---\nid: CFG-12\ntitle: Config loader ignores XDG_CONFIG_HOME\nstatus: open\nlabels: [bug, config]\ncreated: 2024-05-01\nupdated: 2024-05-02T09:30:00Z\n---\n\nThe loader only reads ~/.apprc.\n");
        assert_eq!(t.id, "CFG-12");
        assert_eq!(t.title, "Config loader ignores XDG_CONFIG_HOME");
        assert_eq!(t.status.as_deref(), Some("open"));
        assert_eq!(t.labels, ["bug", "config"]);
        assert_eq!(t.created, Some(1_714_521_600));
        assert_eq!(t.updated, Some(1_714_642_200));
        assert_eq!(t.body, "The loader only reads ~/.apprc.");
    }

    #[test]
    fn markdown_string_labels_and_fallbacks() {
        let t = one("---\nstatus: closed\nlabels: \"flaky, ci ,\"\ncreated: someday\n---\n# Retry the socket test\n\nIt fails 1 in 20.\n");
        assert_eq!(t.id, "T-7");
        assert_eq!(t.title, "Retry the socket test");
        assert_eq!(t.labels, ["flaky", "ci"]);
        assert_eq!(t.created, None);
        assert!(t.body.starts_with("# Retry"));
        let t = one("---\ntags:\n  - perf\n---\nSlow startup\nmore\n");
        assert_eq!(t.title, "Slow startup");
        assert_eq!(t.labels, ["perf"]);
        let t = one("---\n---\n");
        assert_eq!(t.title, "T-7");
    }

    #[test]
    fn malformed_frontmatter_reports_file_line() {
        let input = "---\nid: A-1\ntitle: ok\nlabels: [bug\nstatus: open\n---\nbody\n";
        let p = parse(input.as_bytes(), "s").unwrap_err();
        assert!(
            p.message.starts_with("invalid frontmatter: "),
            "{}",
            p.message
        );
        // libyaml notices the unclosed list on the next key's line.
        assert_eq!(p.line, 5);
        let p = parse(b"---\nid: A-1\n  title: x\n---\n", "s").unwrap_err();
        assert_eq!(p.line, 3, "{}", p.message);
        let p = parse(b"\n---\nid: 1\n: : :\n\tbad\n---\n", "s").unwrap_err();
        assert_eq!(p.line, 4, "{p:?}");
        let p = parse(b"---\ntitle: x\n", "s").unwrap_err();
        assert_eq!(p.line, 1);
        assert!(p.message.starts_with("unterminated frontmatter"));
        let p = parse(b"---\n- a\n- b\n---\n", "s").unwrap_err();
        assert_eq!(
            (p.line, p.message.as_str()),
            (2, "frontmatter must be a mapping of keys")
        );
    }

    #[test]
    fn github_single_issue() {
        let input = r#"{"number": 412, "title": "Flaky test: watcher_reload", "state": "OPEN",
            "body": "Fails on CI about once a day.", "createdAt": "2024-05-01T10:00:00Z",
            "updatedAt": "2024-05-03T10:00:00Z",
            "labels": [{"id": "LA_1", "name": "flaky-test", "color": "d73a4a"}, {"name": "ci"}],
            "comments": [{"author": {"login": "mara"}, "body": "Seen again on #410.", "createdAt": "2024-05-02T08:00:00Z"},
                         {"author": {}, "body": "anonymous"}, {"body": "  "}]}"#;
        let t = one(input);
        assert_eq!(t.id, "#412");
        assert_eq!(t.status.as_deref(), Some("open"));
        assert_eq!(t.labels, ["flaky-test", "ci"]);
        assert_eq!(t.created, Some(1_714_557_600));
        assert_eq!(t.updated, Some(1_714_730_400));
        assert_eq!(t.comments, ["mara: Seen again on #410.", "anonymous"]);
    }

    #[test]
    fn github_array_and_errors() {
        let v = parse(br#"[{"number":1,"title":"a","body":null},{"number":2,"title":"b","user":{"login":"x"}}]"#, "s").unwrap_or_default();
        assert_eq!(
            v.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(),
            ["#1", "#2"]
        );
        assert_eq!(v[0].body, "");
        assert!(parse(b"[]", "s").unwrap_or_default().is_empty());
        let p = parse(br#"[{"number":1,"title":"a"},{"title":"b"}]"#, "s").unwrap_err();
        assert_eq!(p.message, r#"issue [1]: missing "number""#);
        let p = parse(b"{\n\"number\": 1,\n\"title\": }", "s").unwrap_err();
        assert_eq!(p.line, 3);
        assert!(p.message.starts_with("invalid JSON: "));
    }

    #[test]
    fn plain_text() {
        let t = one("\n\n  Tests hang when HOME is unset  \n\nSteps:\n1. unset HOME\n");
        assert_eq!(t.id, "T-7");
        assert_eq!(t.title, "Tests hang when HOME is unset");
        assert_eq!(t.body, "Steps:\n1. unset HOME");
        assert_eq!(one("# Heading title\nbody").title, "Heading title");
        assert_eq!(one("[bug] crash on start").title, "[bug] crash on start");
        assert_eq!(parse(b" \n", "s").unwrap_err().message, "empty ticket");
        let t = parse(b"\xff\xfe bytes", "s").unwrap_or_default();
        assert_eq!(t[0].title, "\u{fffd}\u{fffd} bytes");
    }

    #[test]
    fn sniffers() {
        assert!(sniff_github(br#"{"number": 1, "title": "x"}"#));
        assert!(sniff_github(
            b"[\n  {\n    \"body\": \"x\",\n    \"number\": 3,\n    \"title\": \"t\""
        ));
        assert!(!sniff_github(br#"{"role": "user", "content": "x"}"#));
        assert!(!sniff_github(b"[bug] number title"));
        assert!(sniff_markdown(b"---\nid: 3\ntitle: x\n---\n"));
        assert!(sniff_markdown(b"\xEF\xBB\xBF---\r\nstatus: open\r\n"));
        assert!(!sniff_markdown(
            b"---\nlayout: post\n---\ntitle: not frontmatter\n"
        ));
        assert!(!sniff_markdown(b"# title: x\n"));
        assert!(sniff_markdown(b"\n\n---\ntitle: x\n"));
        assert!(!sniff_markdown(b"  ---\ntitle: x\n"));
    }

    #[test]
    fn split_long_parts() {
        let para = |tag: &str| {
            (0..40)
                .map(|i| format!("{tag}{i}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let t = Ticket {
            body: format!("{}\n\n{}", para("a"), para("b")),
            comments: vec![format!("mara: {}", para("c"))],
            ..Ticket::default()
        };
        let parts = split_long(&t, 100);
        assert_eq!(parts.len(), 2);
        assert!(parts[0].starts_with("a0 ") && parts[0].ends_with("b39"));
        assert!(parts[1].starts_with("mara: c0"));
        assert_eq!(split_long(&Ticket::default(), 100), [""]);
    }

    /// Regression (issue probe: a one-line plain-text ticket got an empty
    /// text and snippet).
    #[test]
    fn r_a_title_only_ticket_has_its_title_as_text() {
        let t = one("Fix the login redirect loop on Safari\n");
        assert_eq!(t.title, "Fix the login redirect loop on Safari");
        assert_eq!(
            split_long(&t, 300),
            ["Fix the login redirect loop on Safari"]
        );
    }
}
