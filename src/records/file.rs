//! Reading and writing record files: `---`, YAML frontmatter, `---`, then the
//! fact as a Markdown body. Errors point at `path:line`.

use std::path::{Path, PathBuf};

use super::model::{Category, Frontmatter, Record};
use super::validate::{validate, Limits};
use crate::error::{Error, Result};
use crate::store::Scope;
use crate::store::ScopeDir;

/// `<scope>/records/<category>/<id>.md`
pub fn record_path(dir: &ScopeDir, category: Category, id: &str) -> PathBuf {
    dir.records_dir()
        .join(category.as_str())
        .join(format!("{id}.md"))
}

/// The frontmatter text, the body, and the 1-based file line where the YAML
/// starts; or what is wrong with the delimiters. A delimiter may have
/// spaces after it, and the frontmatter may end with YAML's `...`.
fn split(text: &str) -> std::result::Result<(&str, &str, usize), &'static str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
    if first.trim_end() != "---" {
        return Err("missing frontmatter: a record file starts with a line '---', then YAML, then a closing '---'");
    }
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if matches!(line.trim_end(), "---" | "...") {
            let yaml = &rest[..offset];
            let body = &rest[offset + line.len()..];
            return Ok((yaml, body, 2));
        }
        offset += line.len();
    }
    Err("the frontmatter is never closed: add a line '---' after its last field, then the record's text")
}

/// 1-based file line of the `field:` entry in the frontmatter, if present.
fn field_line(yaml: &str, field: &str, first: usize) -> usize {
    yaml.lines()
        .position(|l| {
            l.strip_prefix(field)
                .is_some_and(|r| r.trim_start().starts_with(':'))
        })
        .map(|i| first + i)
        .unwrap_or(first.saturating_sub(1).max(1))
}

/// The line (1-based) of the first git merge conflict marker in `text`:
/// a record pulled with a conflict is reported, never half-parsed.
/// (Both an opening and a closing marker: a line of `=` alone is a
/// Markdown heading underline.)
pub(super) fn conflict_marker(text: &str) -> Option<usize> {
    let marker = |l: &str, m: &str| l == m || l.strip_prefix(m).is_some_and(|r| r.starts_with(' '));
    let open = text.lines().position(|l| marker(l, "<<<<<<<"))?;
    text.lines()
        .skip(open)
        .any(|l| marker(l, ">>>>>>>"))
        .then_some(open + 1)
}

/// What a record file written by hand may leave out, read from where it
/// is: its id (the file's name), its category (its folder), its scope, and
/// when it was written (the file's time). Its key is then its id, and its
/// source `manual`.
#[derive(Debug, Clone)]
pub struct Place {
    pub id: String,
    pub category: Option<Category>,
    pub scope: Scope,
    pub written: jiff::Timestamp,
}

impl Place {
    /// The place of the file at `path` (`<scope>/records/<category>/<id>.md`)
    /// in `scope`, written at `mtime_ns` (Unix nanoseconds).
    pub fn of(path: &Path, scope: Scope, mtime_ns: i64) -> Place {
        let name = |p: Option<&Path>| {
            p.and_then(Path::file_stem)
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        Place {
            id: name(Some(path)),
            category: name(path.parent()).parse().ok(),
            scope,
            written: jiff::Timestamp::from_nanosecond(i128::from(mtime_ns))
                .unwrap_or(jiff::Timestamp::UNIX_EPOCH),
        }
    }

    /// A flow-mapping frontmatter with the `lines` ([`Place::missing_lines`])
    /// in it, written as block YAML; as it was when either does not parse.
    fn merged_flow(&self, yaml: &str, lines: &str) -> String {
        use serde_yaml_ng::{Mapping, Value};
        let (Ok(Value::Mapping(mut m)), Ok(Value::Mapping(more))) = (
            serde_yaml_ng::from_str::<Value>(yaml),
            serde_yaml_ng::from_str::<Value>(lines),
        ) else {
            return yaml.to_string();
        };
        m.extend::<Mapping>(more);
        serde_yaml_ng::to_string(&m).unwrap_or_else(|_| yaml.to_string())
    }

    /// YAML lines for the fields `yaml` lacks, to go after it.
    fn missing_lines(&self, yaml: &str) -> String {
        let present: Vec<String> = match serde_yaml_ng::from_str::<serde_yaml_ng::Value>(yaml) {
            Ok(serde_yaml_ng::Value::Mapping(m)) => m
                .keys()
                .filter_map(|k| k.as_str().map(str::to_string))
                .collect(),
            Ok(serde_yaml_ng::Value::Null) => Vec::new(),
            // Not a mapping (or not YAML): the parse says what is wrong.
            _ => return String::new(),
        };
        let quoted = |v: &str| serde_yaml_ng::to_string(v).unwrap_or_default();
        let written = self.written.to_string();
        let mut fields = vec![
            ("id", self.id.clone()),
            ("key", self.id.clone()),
            ("scope", self.scope.as_str().to_string()),
            ("source", "manual".to_string()),
            ("created", written.clone()),
            ("updated", written),
        ];
        if let Some(c) = self.category {
            fields.push(("category", c.as_str().to_string()));
        }
        fields
            .into_iter()
            .filter(|(k, _)| !present.iter().any(|p| p == k))
            .map(|(k, v)| format!("{k}: {}", quoted(&v)))
            .collect()
    }
}

/// A record file of `dir` that claims `id_or_key` (see [`claims`]) and
/// does not parse, with why: a hand edit gone wrong, a pull that
/// conflicts. In each category's folder the file named after it is looked
/// at first; files `skip` names are not read.
pub fn broken_claimant(
    dir: &ScopeDir,
    limits: &Limits,
    id_or_key: &str,
    skip: impl Fn(&Path) -> bool,
) -> Option<(PathBuf, Error)> {
    Category::ALL.iter().find_map(|&c| {
        let named = record_path(dir, c, id_or_key);
        let others = std::fs::read_dir(dir.records_dir().join(c.as_str()))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| *p != named && p.extension().is_some_and(|x| x == "md"));
        std::iter::once(named.clone())
            .chain(others)
            .filter(|p| p.is_file() && !skip(p))
            .find_map(|p| {
                let bytes = std::fs::read(&p).ok()?;
                if !claims(&String::from_utf8_lossy(&bytes), &p, id_or_key) {
                    return None;
                }
                let e = match std::str::from_utf8(&bytes) {
                    Ok(text) => parse_record_file(text, &p, dir.scope, limits).err()?,
                    Err(_) => Error::invalid(format!("{}: not UTF-8 text", p.display())),
                };
                Some((p, e))
            })
    })
}

/// Whether the record file `path` holding `text` is named after
/// `id_or_key`, or its frontmatter's `id:` or `key:` line says it: read
/// from the lines alone, for a file that does not parse. Only lines
/// between the opening `---` and the closing one are frontmatter, and a
/// YAML comment after a value is not part of it.
pub fn claims(text: &str, path: &Path, id_or_key: &str) -> bool {
    let says = |line: &str, field: &str| {
        line.strip_prefix(field)
            .and_then(|r| r.trim_start().strip_prefix(':'))
            .map(|v| v.split(" #").next().unwrap_or(v))
            .is_some_and(|v| v.trim().trim_matches(['"', '\'']) == id_or_key)
    };
    let mut lines = text.trim_start_matches('\u{feff}').lines();
    let opened = lines.next().is_some_and(|l| l.trim_end() == "---");
    path.file_stem().is_some_and(|s| s == id_or_key)
        || (opened
            && lines
                .take_while(|l| l.trim_end() != "---")
                .any(|l| says(l, "id") || says(l, "key")))
}

/// Parse and validate a record file. `path` is used only in error messages.
pub fn parse_record(text: &str, path: &Path, limits: &Limits) -> Result<Record> {
    parse_record_at(text, path, limits, None)
}

/// [`parse_record_at`] of the file at `path` in `scope`, its place read
/// from the path and the file's time.
pub fn parse_record_file(text: &str, path: &Path, scope: Scope, limits: &Limits) -> Result<Record> {
    let mtime = std::fs::metadata(path).map_or(0, |m| crate::store::file_mtime_ns(&m));
    parse_record_at(text, path, limits, Some(&Place::of(path, scope, mtime)))
}

/// [`parse_record`] of a file at its place in a scope, which gives the
/// fields a person left out (see [`Place`]).
pub fn parse_record_at(
    text: &str,
    path: &Path,
    limits: &Limits,
    place: Option<&Place>,
) -> Result<Record> {
    let err = |line: usize, message: String| Error::Parse {
        path: path.to_path_buf(),
        line,
        message,
    };
    if let Some(line) = conflict_marker(text) {
        return Err(err(
            line,
            "merge conflict markers (<<<<<<<, =======, >>>>>>>): keep one version, remove the marker lines, then commit; the record is skipped until then".into(),
        ));
    }
    let (yaml, body, first) = split(text).map_err(|why| err(1, why.into()))?;
    // Added after the fields written, so errors keep their lines.
    let filled = place.map(|p| {
        let lines = p.missing_lines(yaml);
        match yaml.trim_start().starts_with('{') {
            // A flow mapping (`{importance: 80}`) takes no lines after it:
            // the fields go in as one more flow mapping's.
            true if !lines.is_empty() => p.merged_flow(yaml, &lines),
            _ if yaml.is_empty() || yaml.ends_with('\n') => format!("{yaml}{lines}"),
            _ => format!("{yaml}\n{lines}"),
        }
    });
    let written = yaml;
    let yaml = filled.as_deref().unwrap_or(yaml);
    let meta: Frontmatter = serde_yaml_ng::from_str(yaml).map_err(|e| {
        let line = e
            .location()
            .map(|l| first + l.line().saturating_sub(1))
            .unwrap_or(first);
        // The YAML error places itself within the frontmatter ("at line 1
        // column 5"); the file's line is ours, so say it once.
        let text = e.to_string();
        let text = text
            .rsplit_once(" at line ")
            .map_or(text.as_str(), |(m, _)| m);
        let column = e
            .location()
            .map(|l| format!(" (column {})", l.column()))
            .unwrap_or_default();
        // A file written by hand without one of the fields recall writes:
        // say which fields a record needs and where one is shown whole.
        let tab_indent = yaml.lines().any(|l| l.starts_with('\t'));
        let needs = if tab_indent && !text.contains("tab") {
            "; YAML indents with spaces, not tabs: replace the tab"
        } else if text.starts_with("missing field") {
            "; a record file needs `id`, `key`, `category`, `scope`, `source`, \
             `created` and `updated`, except those its place gives to one in its \
             category's folder (docs/output.md, \"Record files\"; `recall record add` \
             writes them all)"
        } else {
            ""
        };
        err(line, format!("invalid frontmatter: {text}{column}{needs}"))
    })?;
    let body_start = first + written.lines().count() + 1;
    let mut meta = meta;
    if let Some(p) = place {
        // The scope is where the file lives (a file moved by hand to the
        // other scope's folder is that scope's record), as every command
        // that finds it by its folder already takes it to be.
        meta.scope = p.scope;
    }
    let record = Record {
        meta,
        body: Record::clean_body(body),
    };
    validate(&record, limits).map_err(|(field, e)| {
        let line = if field == "body" {
            body_start
        } else {
            field_line(written, field, first)
        };
        err(line, e.to_string())
    })?;
    Ok(record)
}

/// Render a record as file text. `parse_record(render_record(r)) == r` for
/// any valid record.
pub fn render_record(r: &Record) -> Result<String> {
    let yaml = serde_yaml_ng::to_string(&r.meta)
        .map_err(|e| Error::invalid(format!("cannot encode frontmatter: {e}")))?;
    Ok(format!("---\n{yaml}---\n\n{}\n", r.body.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression (review, stop 61): a key after which YAML has a comment
    /// was not found in a broken file, and a body line that looks like
    /// `key: …` was taken for frontmatter when no blank line followed the
    /// closing `---`.
    #[test]
    fn r_claims_reads_only_the_frontmatter_and_drops_comments() {
        let p = Path::new("/r/decisions/x-1.md");
        let text = "---\nkey: cache # the cache key\nimportance: lots\n---\nkey: bodykey\n";
        assert!(claims(text, p, "cache"));
        assert!(!claims(text, p, "bodykey"));
        assert!(claims(&format!("\u{feff}{text}"), p, "cache"));
        assert!(claims("no frontmatter", p, "x-1"));
        assert!(!claims("key: cache\n", p, "cache"));
    }

    /// Issue 25 part 3: a record with merge conflict markers (a `git pull`
    /// of records kept in the repository) is an error that says what to do
    /// at the marker's line, never a half-parsed record. A lone `=======`
    /// (a Markdown heading underline) is no conflict.
    #[test]
    fn merge_conflict_markers_are_reported_with_the_fix() {
        let text = "---\nid: a-1\nkey: a\ncategory: decisions\nscope: project\nsource: manual\ncreated: 2024-01-01T00:00:00Z\nupdated: 2024-01-01T00:00:00Z\n---\n\n<<<<<<< HEAD\nWe use pnpm.\n=======\nWe use yarn.\n>>>>>>> origin/main\n";
        let err = parse_record(text, Path::new("a.md"), &Limits::default()).unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("a.md:11: merge conflict markers"), "{msg}");
        assert!(msg.contains("remove the marker lines"), "{msg}");
        let heading = text
            .replace("<<<<<<< HEAD\n", "Title\n")
            .replace(">>>>>>> origin/main\n", "");
        assert!(parse_record(&heading, Path::new("a.md"), &Limits::default()).is_ok());
    }
    use crate::records::{Source, Status};
    use crate::store::Scope;
    use proptest::prelude::*;

    /// Regression (review, stop 57): a file written by hand with
    /// `created: 2026-11-01` was refused ("failed to find time
    /// component"), though a date is accepted everywhere else (`--since`).
    /// A date, or a time without an offset, is read as UTC; anything else
    /// says what is wanted.
    #[test]
    fn a_hand_written_date_is_a_time_at_midnight_utc() {
        let file = |created: &str| {
            format!("---\nid: a-1\nkey: a\ncategory: decisions\nscope: project\nsource: manual\ncreated: {created}\nupdated: 2026-11-02T10:00:00\nexpires: 2027-01-01\n---\n\nWe use pnpm.\n")
        };
        let r = parse_record(&file("2026-11-01"), Path::new("a.md"), &Limits::default()).unwrap();
        assert_eq!(r.meta.created.to_string(), "2026-11-01T00:00:00Z");
        assert_eq!(r.meta.updated.to_string(), "2026-11-02T10:00:00Z");
        assert_eq!(r.meta.expires.unwrap().to_string(), "2027-01-01T00:00:00Z");
        let r = parse_record(
            &file("2026-11-01T09:30:00+02:00"),
            Path::new("a.md"),
            &Limits::default(),
        )
        .unwrap();
        assert_eq!(r.meta.created.to_string(), "2026-11-01T07:30:00Z");
        let e = parse_record(&file("last tuesday"), Path::new("a.md"), &Limits::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("a date such as 2026-11-01"), "{e}");
    }

    /// A hand-written file's place gives what it leaves out, after block
    /// or flow frontmatter alike (regression, review of stop 60: a flow
    /// mapping, `{importance: 80}`, took no lines after it and was refused
    /// as "missing field `id`").
    #[test]
    fn r_a_place_fills_block_and_flow_frontmatter() {
        let place = Place {
            id: "pnpm".into(),
            category: Some(Category::Decisions),
            scope: Scope::Project,
            written: "2026-11-01T00:00:00Z".parse().unwrap(),
        };
        for yaml in [
            "importance: 80\n",
            "{importance: 80}\n",
            "{ importance: 80 }",
        ] {
            let text = format!("---\n{yaml}\n---\n\nWe use pnpm.\n");
            let r = parse_record_at(
                &text,
                Path::new("pnpm.md"),
                &Limits::default(),
                Some(&place),
            )
            .unwrap_or_else(|e| panic!("{yaml:?}: {e}"));
            assert_eq!(
                (r.meta.id.as_str(), r.meta.key.as_str(), r.meta.importance),
                ("pnpm", "pnpm", 80),
                "{yaml:?}"
            );
            assert_eq!(r.meta.category, Category::Decisions);
            assert_eq!(r.meta.created.to_string(), "2026-11-01T00:00:00Z");
        }
    }

    /// Regression (review, stop 59): frontmatter as people type it by hand
    /// was refused, or refused with the wrong reason: `pinned: yes` (YAML
    /// 1.1's spelling) skipped the record, a delimiter with a space after
    /// it was "missing frontmatter", as was one never closed, and a tab
    /// was "a character that cannot start any token".
    #[test]
    fn r_frontmatter_as_people_type_it() {
        let file = |open: &str, pinned: &str, close: &str| {
            format!("{open}\nid: a-1\nkey: a\ncategory: decisions\nscope: project\nsource: manual\ncreated: 2026-11-01\nupdated: 2026-11-01\npinned: {pinned}\n{close}\n\nWe use pnpm.\n")
        };
        let parse = |t: &str| parse_record(t, Path::new("a.md"), &Limits::default());
        for (pinned, want) in [
            ("yes", true),
            ("On", true),
            ("no", false),
            ("true", true),
            ("false", false),
        ] {
            assert_eq!(
                parse(&file("---", pinned, "---")).unwrap().meta.pinned,
                want,
                "{pinned}"
            );
        }
        let e = parse(&file("---", "maybe", "---")).unwrap_err().to_string();
        assert!(e.contains("expected true or false"), "{e}");
        assert!(parse(&file("--- ", "yes", "---  ")).is_ok());
        assert!(parse(&file("---", "yes", "...")).is_ok());
        let e = parse(&file("---", "yes", "")).unwrap_err().to_string();
        assert!(e.contains("the frontmatter is never closed"), "{e}");
        let e = parse(&file("---", "yes", "---").replace("key: a", "\tkey: a"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("tab"), "{e}");
        let e = parse(&file("---", "yes", "---").replace("key: a", "key: a\naliases:\n\t- b"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("tab"), "{e}");
    }

    fn sample() -> Record {
        let now: jiff::Timestamp = "2026-01-02T03:04:05Z".parse().unwrap();
        let mut r = Record::new(
            "use pnpm",
            Category::Decisions,
            Scope::Project,
            Source::Manual,
            "We use pnpm, not npm.",
            now,
        );
        r.meta.keywords = vec!["pnpm".into(), "node".into()];
        r
    }

    #[test]
    fn round_trip() -> Result<()> {
        let r = sample();
        let text = render_record(&r)?;
        assert!(text.starts_with("---\nid: use-pnpm-"));
        let back = parse_record(&text, Path::new("x.md"), &Limits::default())?;
        assert_eq!(back, r);
        Ok(())
    }

    #[test]
    fn unknown_keys_survive() -> Result<()> {
        let text =
            render_record(&sample())?.replacen("---\n", "---\nreviewer: ana\nx_tags: [1, 2]\n", 1);
        let r = parse_record(&text, Path::new("x.md"), &Limits::default())?;
        let again = render_record(&r)?;
        assert!(again.contains("reviewer: ana"), "{again}");
        assert!(again.contains("x_tags"), "{again}");
        Ok(())
    }

    #[test]
    fn errors_point_at_lines() {
        let lim = Limits::default();
        let p = Path::new("records/decisions/a.md");
        let e = parse_record("no frontmatter", p, &lim).unwrap_err();
        assert_eq!(
            e.to_string().split(": ").next(),
            Some("records/decisions/a.md:1")
        );

        let bad_yaml = "---\nid: a\nkey: [unclosed\n---\nbody\n";
        let e = parse_record(bad_yaml, p, &lim).unwrap_err();
        assert!(
            matches!(e, Error::Parse { line, .. } if (2..=4).contains(&line)),
            "{e}"
        );

        let good = render_record(&sample()).unwrap();
        let empty_key = good.replace("key: use pnpm", "key: ''");
        let e = parse_record(&empty_key, p, &lim).unwrap_err();
        assert!(matches!(e, Error::Parse { line: 3, .. }), "{e}");

        let bad_cat = good.replace("category: decisions", "category: chores");
        let e = parse_record(&bad_cat, p, &lim).unwrap_err();
        assert!(e.to_string().contains("category"), "{e}");
    }

    /// Regression: a wrong importance or confidence said "expected u8" or
    /// "expected f64"; it says what a person writes there.
    #[test]
    fn a_wrong_number_says_what_to_write() {
        let lim = Limits::default();
        let p = Path::new("records/decisions/a.md");
        let good = render_record(&sample()).unwrap();
        assert!(
            good.contains("importance: 50\n") && good.contains("confidence: 1.0\n"),
            "{good}"
        );
        for (from, to, want) in [
            ("importance: 50", "importance: [oops", ""),
            (
                "importance: 50",
                "importance: high",
                "a whole number from 0 to 100",
            ),
            (
                "importance: 50",
                "importance: 300",
                "a whole number from 0 to 100",
            ),
            (
                "importance: 50",
                "importance: -1",
                "a whole number from 0 to 100",
            ),
            ("importance: 50", "importance: 101", "out of range 0-100"),
            (
                "confidence: 1.0",
                "confidence: sure",
                "a number from 0 to 1",
            ),
            ("confidence: 1.0", "confidence: 2", "out of range 0-1"),
        ] {
            let e = parse_record(&good.replace(from, to), p, &lim)
                .unwrap_err()
                .to_string();
            assert!(
                e.contains(want) && !e.contains("expected u8") && !e.contains("f64"),
                "{to}: {e}"
            );
        }
        let fine = good
            .replace("importance: 50", "importance: 7")
            .replace("confidence: 1.0", "confidence: 1");
        let r = parse_record(&fine, p, &lim).unwrap();
        assert_eq!((r.meta.importance, r.meta.confidence), (7, 1.0));
    }

    #[test]
    fn archived_and_expired_records_are_not_live() {
        let mut r = sample();
        let now = r.meta.created;
        assert!(r.is_live(now));
        r.meta.expires = Some(now);
        assert!(!r.is_live(now));
        r.meta.expires = None;
        r.meta.status = Status::Archived;
        assert!(!r.is_live(now));
    }

    fn key_strategy() -> impl Strategy<Value = String> {
        // Printable characters: keys refuse controls and invisible ones.
        "\\PC{1,80}".prop_filter("non-blank", |k| !k.trim().is_empty())
    }

    proptest! {
        #[test]
        fn frontmatter_round_trips(
            key in key_strategy(),
            body in "\\PC{1,400}".prop_filter("non-blank", |b| !b.trim().is_empty()),
            importance in 0u8..=100,
            pinned: bool,
            keywords in proptest::collection::vec("\\PC{0,20}", 0..4),
            conf in 0.0f64..=1.0,
        ) {
            let mut r = sample();
            r.meta.key = key;
            r.body = body.trim().to_string();
            r.meta.importance = importance;
            r.meta.pinned = pinned;
            r.meta.keywords = keywords;
            r.meta.confidence = conf;
            let text = render_record(&r).unwrap();
            let back = parse_record(&text, Path::new("p.md"), &Limits { max_body_chars: 10_000 }).unwrap();
            prop_assert_eq!(back, r);
        }
    }
}
