//! Consolidation: the `MEMORY.md`-style index of a project's memory that
//! `recall summary` prints. One line per record (key and a one-line hook),
//! in the order the caller gives (pinned, importance, recency), cut to a
//! token budget that the output never exceeds.

use std::fmt::Write as _;

use crate::index::Listed;
use crate::text::{estimate_tokens, shorten_at_word};

/// Characters of a record's first line kept as its hook.
const HOOK_CHARS: usize = 120;

/// One titled group of records, already sorted.
#[derive(Debug)]
pub struct Section<'a> {
    pub title: &'a str,
    pub records: Vec<Listed>,
}

/// The summary line of one record.
pub fn summary_line(r: &Listed) -> String {
    let first = r.text.lines().next().unwrap_or("").trim();
    let hook = shorten_at_word(first, HOOK_CHARS);
    let pin = if r.pinned { " (pinned)" } else { "" };
    format!("- **{}**{pin} [{}]: {hook}\n", r.key, r.category)
}

/// Render the summary of `name` within `max_tokens` (estimated as in
/// [`estimate_tokens`]).
///
/// Lines are taken in order while they fit; a section whose next line does
/// not fit stops there, and later sections may still add shorter lines.
/// When records exist but not one line fits, a note says how many there
/// are instead of pretending memory is empty; when even that does not fit,
/// the output is empty.
pub fn render_summary(name: &str, sections: &[Section], max_tokens: usize) -> String {
    let fits = |s: &str| estimate_tokens(s) <= max_tokens;
    let mut out = format!("# Memory of {name}\n");
    let total: usize = sections.iter().map(|s| s.records.len()).sum();
    if total == 0 {
        out.push_str("\n(no records yet)\n");
        return if fits(&out) { out } else { String::new() };
    }
    let mut shown = 0;
    for s in sections {
        let mut section = format!("\n## {}\n", s.title);
        let mut lines = 0;
        for r in &s.records {
            let line = summary_line(r);
            let candidate = format!("{out}{section}{line}");
            if !fits(&candidate) {
                break;
            }
            section.push_str(&line);
            lines += 1;
        }
        if lines > 0 {
            out.push_str(&section);
            shown += lines;
        }
    }
    if shown > 0 {
        return out;
    }
    let mut note = out.clone();
    let _ = write!(
        note,
        "\n({total} records; raise --max-tokens to list them)\n"
    );
    if fits(&note) {
        note
    } else if fits(&out) {
        out
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Scope;

    fn rec(key: &str, text: &str) -> Listed {
        Listed {
            id: key.replace(' ', "-"),
            key: key.into(),
            category: "decisions".into(),
            scope: Scope::Project,
            source: "manual".into(),
            status: "active".into(),
            pinned: false,
            importance: 50,
            updated: "2026-11-01T00:00:00Z".into(),
            path: String::new(),
            text: text.into(),
            host: None,
            expires: None,
            expired: false,
        }
    }

    fn sections(n: usize) -> Vec<Section<'static>> {
        let records = (0..n)
            .map(|i| rec(&format!("key {i}"), &format!("fact number {i}\nmore")))
            .collect();
        vec![Section {
            title: "Project",
            records,
        }]
    }

    #[test]
    fn never_exceeds_the_budget_and_grows_with_it() {
        let s = sections(20);
        let mut previous = 0;
        for budget in 0..400 {
            let out = render_summary("app", &s, budget);
            assert!(estimate_tokens(&out) <= budget, "{budget}: {out}");
            let lines = out.lines().filter(|l| l.starts_with("- **")).count();
            assert!(lines >= previous, "{budget}: fewer lines than before");
            previous = lines;
        }
        assert_eq!(previous, 20);
    }

    #[test]
    fn a_tiny_budget_never_claims_there_are_no_records() {
        let long = "a fact long enough that its summary line needs many tokens ".repeat(2);
        let s = vec![Section {
            title: "Project",
            records: (0..3).map(|i| rec(&format!("key {i}"), &long)).collect(),
        }];
        for budget in 0..40 {
            let out = render_summary("app", &s, budget);
            assert!(!out.contains("no records yet"), "{budget}: {out}");
            assert!(estimate_tokens(&out) <= budget, "{budget}: {out}");
        }
        let out = render_summary("app", &s, 20);
        assert!(out.contains("(3 records; raise --max-tokens"), "{out}");
    }

    #[test]
    fn empty_memory_says_so() {
        let out = render_summary("app", &sections(0), 100);
        assert_eq!(out, "# Memory of app\n\n(no records yet)\n");
    }

    /// Regression (issue 37 item 13: `summary` cut lines at 120 characters
    /// mid-word, with nothing to say so).
    #[test]
    fn r37_a_long_first_line_ends_at_a_word_with_an_ellipsis() {
        let long =
            "Deploys go through make ship-it from the release branch, after the changelog is \
                    updated and the staging smoke tests pass on every supported platform";
        let line = summary_line(&rec("deploys", long));
        assert!(line.ends_with(" smoke tests…\n"), "{line}");
    }

    #[test]
    fn a_line_is_the_key_and_the_first_line_of_the_text() {
        let mut r = rec("package manager", "We use pnpm.\nBecause of workspaces.");
        r.pinned = true;
        assert_eq!(
            summary_line(&r),
            "- **package manager** (pinned) [decisions]: We use pnpm.\n"
        );
    }
}
