//! Incident rules: a failed build or test run with a recognisable error
//! line, told with the cause the assistant stated before the next run and
//! whether a later run passed; and the bullets of a compaction summary's
//! `Errors and fixes` section. Two incidents of one session that tell the
//! same story are one.

use std::sync::LazyLock;

use regex::Regex;

use super::candidate::{as_fact, candidate, cut_text, ids, index_ids, title, Candidate};
use super::commands::{command_kind, Outcome, Run};
use super::sentences::{content_words, sentences, usable};
use super::{re, MAX_SUMMARY_INCIDENTS, MAX_TEXT_CHARS};
use crate::ingest::model::{Message, Role};
use crate::records::Category;
use crate::store::Scope;

/// How far (in messages) a failed command looks for its next run.
const INCIDENT_HORIZON: usize = 80;
/// Longest error line quoted in an incident, in characters.
const MAX_ERROR_CHARS: usize = 160;

/// Template words of command incidents; ignored when comparing incidents.
const INCIDENT_TEMPLATE: [&str; 5] = ["failed", "passed", "after", "fix", "fixed"];

/// Two incidents of one session telling the same story (a summary bullet
/// and the raw failure): half of the smaller content-word set is shared.
pub(super) fn same_incident(a: &Candidate, b: &Candidate) -> bool {
    if a.category != Category::Incidents || b.category != Category::Incidents {
        return false;
    }
    let strip = |c: &Candidate| {
        // Skip the "`program`" that opens a command incident.
        let body = match c.text.strip_prefix('`').and_then(|t| t.split_once('`')) {
            Some((_, rest)) => rest,
            None => c.text.as_str(),
        };
        let mut w = content_words(body);
        w.retain(|x| !INCIDENT_TEMPLATE.contains(&x.as_str()));
        w
    };
    let (wa, wb) = (strip(a), strip(b));
    let smaller = wa.len().min(wb.len());
    smaller > 0 && wa.intersection(&wb).count() * 2 >= smaller
}

static ERROR_LINE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:error|exception|failed|failure|fatal|panicked|undefined|cannot|could not|couldn't|not found|no such|requires|missing)\b",
    )
});
static ASSERTION: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)\bassert(?:ion)?\b|\bexpected\b.*\b(?:got|received|but was)\b|^left\b")
});
static STRONG_ERROR_LINE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^(?:\*\* \(|error(?:\[\w+\])?:|[\w.]*(?:Error|Exception)\b|fatal:|thread '.*' panicked)")
});
static NOT_ERROR_LINE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)^exit code \d+$|\b0 (?:failures|failed)\b|^warning\b|^running\b|^compiling\b")
});

/// The line of `output` that best states the error (an exception or
/// `error:` line first, else any error word), cleaned and capped.
fn error_line(output: &str) -> Option<String> {
    let candidates = || {
        output.lines().map(str::trim).filter(|l| {
            ERROR_LINE.is_match(l) && !NOT_ERROR_LINE.is_match(l) && l.chars().count() >= 8
        })
    };
    let line = candidates()
        .find(|l| STRONG_ERROR_LINE.is_match(l))
        .or_else(|| candidates().next())?;
    let clean = line
        .trim_start_matches(['*', '-', '>', '×', '✗', ' '])
        .trim();
    Some(cut_text(clean, MAX_ERROR_CHARS))
}

static STRONG_CAUSE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:because|caused by|root cause|the (?:problem|issue|cause|culprit|bug) (?:is|was)|fixed by|the fix (?:is|was)|this happens when|turns out)\b",
    )
});
static MEDIUM_CAUSE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:needs?|requires?|required|missing|isn't configured|is not configured|not configured|can't|cannot|doesn't support|does not support|must|expects?)\b",
    )
});
static NARRATION: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:let me|let's|now\b|i'll|i will|i need to (?:check|look|see|run|read)|next|first|then|ok\b|okay|good|great|perfect|all |done|still)",
    )
});
static DELIBERATE_FAILURE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:confirm|verify|ensure|make sure|check|see)\b[^.]{0,40}\bfails?\b|\bexpected to fail\b|\bshould fail\b|\bred phase\b|\bfailing (?:test|expectation)\b",
    )
});

/// An assistant sentence stating why a command failed or how it was fixed.
#[derive(Debug, Clone)]
struct Cause {
    text: String,
    /// Index of the message it is in.
    at: usize,
    /// An explicit cue (`because`, `caused by`, ...) rather than `needs`.
    strong: bool,
}

/// The first assistant sentence in `messages[from..to]` stating a cause or
/// fix (a strong cue wins over an earlier medium one).
fn explanation(messages: &[Message], from: usize, to: usize) -> Option<Cause> {
    let mut medium = None;
    for (i, m) in messages.iter().enumerate().take(to).skip(from) {
        if m.role != Role::Assistant {
            continue;
        }
        for s in sentences(&m.text)
            .iter()
            .filter(|s| usable(s) && !NARRATION.is_match(&s.text))
        {
            if STRONG_CAUSE.is_match(&s.text) {
                return Some(Cause {
                    text: s.text.clone(),
                    at: i,
                    strong: true,
                });
            }
            if medium.is_none() && MEDIUM_CAUSE.is_match(&s.text) {
                medium = Some(Cause {
                    text: s.text.clone(),
                    at: i,
                    strong: false,
                });
            }
        }
    }
    medium
}

/// Failed build/test commands with a stated cause and/or a later success.
pub(super) fn command_incidents(messages: &[Message], runs: &[Run]) -> Vec<Candidate> {
    let mut out = Vec::new();
    for (n, r) in runs.iter().enumerate() {
        if r.outcome != Outcome::Failed || command_kind(&r.cmd).is_none() || deliberate(messages, r)
        {
            continue;
        }
        let Some(err) = error_line(&messages[r.result].text) else {
            continue;
        };
        let later: Vec<&Run> = runs[n + 1..]
            .iter()
            .filter(|l| l.cmd == r.cmd && l.call <= r.result + INCIDENT_HORIZON)
            .collect();
        let next_call = later
            .first()
            .map_or(messages.len().min(r.result + INCIDENT_HORIZON), |l| l.call);
        let fixed = later.iter().find(|l| l.outcome == Outcome::Passed);
        let why = explanation(messages, r.result + 1, next_call);
        if let Some(c) = incident(messages, r, &err, why, fixed.copied()) {
            out.push(c);
        }
    }
    out
}

/// Whether the assistant said the failure was intended (TDD).
fn deliberate(messages: &[Message], r: &Run) -> bool {
    let from = r.call.saturating_sub(1);
    messages[from..=r.call]
        .iter()
        .any(|m| m.role == Role::Assistant && DELIBERATE_FAILURE.is_match(&m.text))
}

/// What an incident key names: a specific error line, else the stated cause.
fn incident_subject<'a>(err: &'a str, why: Option<&'a Cause>) -> &'a str {
    match why {
        Some(c) if !STRONG_ERROR_LINE.is_match(err) => c.text.as_str(),
        _ => err,
    }
}

/// Confidence of a command incident, `None` when there is nothing to tell.
fn incident_confidence(err: &str, why: Option<&Cause>, fixed: bool) -> Option<f64> {
    let base = match (why.map(|c| c.strong), fixed) {
        (Some(true), true) => 0.75,
        (Some(false), true) => 0.7,
        (Some(true), false) => 0.65,
        (Some(false), false) => 0.6,
        (None, true) => 0.55,
        (None, false) => return None,
    };
    // A failed assertion is usually a bug in code just written, not a
    // lasting lesson about the project or its tools.
    Some(if ASSERTION.is_match(err) {
        base - 0.2
    } else {
        base
    })
}

fn incident(
    messages: &[Message],
    r: &Run,
    err: &str,
    why: Option<Cause>,
    fixed: Option<&Run>,
) -> Option<Candidate> {
    let confidence = incident_confidence(err, why.as_ref(), fixed.is_some())?;
    let program = r
        .cmd
        .split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ");
    let err_text = err.trim_end_matches('.');
    let mut text = format!("`{program}` failed with \"{err_text}\".");
    let mut evidence = vec![r.call, r.result];
    if let Some(c) = &why {
        text.push(' ');
        text.push_str(&as_fact(&c.text));
        evidence.push(c.at);
    }
    if let Some(f) = fixed {
        text.push_str(" It passed after the fix.");
        evidence.push(f.result);
    }
    let subject = incident_subject(err_text, why.as_ref());
    Some(Candidate {
        category: Category::Incidents,
        scope: Scope::Project,
        key: title(&format!("{program}: {subject}")),
        text: cut_text(&text, MAX_TEXT_CHARS),
        confidence,
        evidence: index_ids(messages, &evidence),
    })
}

// ---------------------------------------------------------------------------
// Compaction summaries

static ERRORS_HEADING: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?im)^\s*(?:\d+\.|#+)\s*\**errors? and fix(?:es)?\**:?\**\s*$"));
static NEXT_HEADING: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*(?:\d+\.|#+)\s+\S"));
static BULLET: LazyLock<Regex> =
    LazyLock::new(|| re(r"^\s{0,4}[-*]\s+\*\*(?P<title>[^*]{4,120})\*\*\s*(?P<rest>[^\n]*)$"));
static ONE_OFF: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:unused|renam\w*|typo|expected during|current|unresolved|not real errors|nesting depth|cyclomatic|complexity|line \d+|undefined function|undefined variable|credo|warnings?)\b",
    )
});
/// A title that narrates the agent's own slip (`Added X before Y`).
static AGENT_ACTION: LazyLock<Regex> = LazyLock::new(|| re(r"^[A-Z]?[a-z]+ed\b"));
/// `gqc.4:` / `PROJ-12:` ticket references before a bullet title.
static TICKET_PREFIX: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(?:[A-Za-z]+-)?[A-Za-z0-9]+[.-]\d+:\s*"));
static FIX_CUE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:fixed|resolved|added|changed|used|using|rewrote|switched|replaced|ran|moved|configured|instead)\b",
    )
});

/// One incident per useful bullet of an `Errors and fixes` summary section.
pub(super) fn summary_incidents(m: &Message) -> Vec<Candidate> {
    let Some(head) = ERRORS_HEADING.find(&m.text) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for line in m.text[head.end()..].lines() {
        if NEXT_HEADING.is_match(line) {
            break;
        }
        if let Some(c) = BULLET.captures(line).and_then(|b| summary_bullet(&b)) {
            out.push(Candidate {
                evidence: ids(&[m]),
                ..c
            });
        }
    }
    out.sort_by(|a, b| b.confidence.total_cmp(&a.confidence));
    out.truncate(MAX_SUMMARY_INCIDENTS);
    out
}

fn summary_bullet(b: &regex::Captures<'_>) -> Option<Candidate> {
    let raw_title = b.name("title")?.as_str().trim().trim_end_matches(':');
    let t = TICKET_PREFIX.replace(raw_title, "");
    let t = t.as_ref();
    let rest = b
        .name("rest")?
        .as_str()
        .trim()
        .trim_start_matches(':')
        .trim();
    let all = format!("{t}: {rest}");
    if rest.is_empty()
        || ONE_OFF.is_match(&all)
        || AGENT_ACTION.is_match(t)
        || !FIX_CUE.is_match(rest)
    {
        return None;
    }
    let conf =
        if STRONG_CAUSE.is_match(&all) || all.contains("doesn't") || all.contains("instead of") {
            0.7
        } else {
            0.65
        };
    let mut c = candidate(Category::Incidents, Scope::Project, &all, conf);
    c.key = title(t);
    Some(c)
}

#[cfg(test)]
mod tests {
    use crate::extract::rules::extract;
    use crate::extract::rules::test_transcripts::{asst, msg, of, run, tool};
    use crate::ingest::model::Role;
    use crate::records::Category;

    #[test]
    fn failure_then_fix_is_an_incident_not_a_procedure() {
        let mut msgs = Vec::new();
        msgs.extend(run(
            "1",
            "cargo test",
            "error[E0433]: failed to resolve: use of undeclared crate `tempfile`",
            true,
        ));
        msgs.push(asst("a2", "The test needs the `tempfile` dev-dependency because the fixture writes files. Let me add it."));
        msgs.extend(run("3", "cargo test", "test result: ok. 1 passed", false));
        let c = extract(&msgs);
        assert!(of(&c, Category::Procedures).is_empty(), "{c:?}");
        let i = of(&c, Category::Incidents);
        assert_eq!(i.len(), 1, "{c:?}");
        assert_eq!(i[0].confidence, 0.75);
        assert_eq!(i[0].evidence, ["1c", "1r", "a2", "3r"]);
        assert!(
            i[0].text
                .starts_with("`cargo test` failed with \"error[E0433]"),
            "{}",
            i[0].text
        );
        assert!(i[0].text.contains("needs the `tempfile` dev-dependency"));
    }

    #[test]
    fn deliberate_tdd_failure_is_not_an_incident() {
        let mut msgs = vec![asst(
            "a0",
            "Running the new test to confirm it fails for the intended reason.",
        )];
        msgs.push(tool(
            "t1",
            "[exec] npm test\nFAIL src/a.test.ts\nerror: expected 90 got undefined",
            true,
        ));
        msgs.push(asst(
            "a2",
            "The config is missing the threshold because it was never set.",
        ));
        msgs.push(tool("t3", "[exec] npm test\nok", false));
        assert!(of(&extract(&msgs), Category::Incidents).is_empty());
    }

    #[test]
    fn assertion_failures_are_weak_incidents() {
        let mut msgs = Vec::new();
        msgs.extend(run(
            "1",
            "mix test",
            "1) test x\n     Assertion with == failed",
            true,
        ));
        msgs.push(asst(
            "a2",
            "The count is wrong because the helper doubles rows.",
        ));
        msgs.extend(run("3", "mix test", "5 tests, 0 failures", false));
        let i = extract(&msgs);
        let i = of(&i, Category::Incidents);
        assert_eq!(i.len(), 1);
        assert!(i[0].confidence < 0.6, "{:?}", i[0]);
    }

    #[test]
    fn summary_errors_and_fixes_become_incidents() {
        let summary = "Summary:\n4. Errors and fixes:\n   - **Missing lazy_html dependency**: Added `{:lazy_html, \">= 0.1.0\", only: :test}` to mix.exs deps.\n   - **Unused variable**: Changed `x` to `_x`.\n   - **SQLite ALTER TABLE**: SQLite doesn't support it, fixed by rewriting the migration as a table copy.\n5. Problem Solving:\n   - **Other**: fixed by magic.\n";
        let c = extract(&[msg("s1", Role::System, summary)]);
        let i = of(&c, Category::Incidents);
        assert_eq!(i.len(), 2, "{c:?}");
        assert_eq!(i[0].key, "SQLite ALTER TABLE");
        assert_eq!(i[0].confidence, 0.7);
        assert_eq!(i[1].evidence, ["s1"]);
    }

    #[test]
    fn summary_and_raw_incident_of_one_story_merge() {
        let mut msgs = Vec::new();
        msgs.extend(run(
            "1",
            "mix test",
            "** (RuntimeError) Phoenix LiveView requires lazy_html as a test dependency.",
            true,
        ));
        msgs.push(asst(
            "a2",
            "LiveView tests need `lazy_html` as a test dependency.",
        ));
        msgs.extend(run("3", "mix test", "5 tests, 0 failures", false));
        msgs.push(msg("s4", Role::System, "4. Errors and fixes:\n- **Missing lazy_html dependency**: LiveView tests need lazy_html; added `{:lazy_html, \">= 0.1.0\", only: :test}` to mix.exs deps.\n5. Next:"));
        let c = extract(&msgs);
        let i = of(&c, Category::Incidents);
        assert_eq!(i.len(), 1, "{c:?}");
        assert!(i[0].text.starts_with(
            "`mix test` failed with \"(RuntimeError) Phoenix LiveView requires lazy_html"
        ));
    }

    #[test]
    fn summary_bullets_about_own_slips_are_skipped() {
        let summary = "4. Errors and fixes:\n- **Added `:state` to accept list before the attribute**: Fixed by adding the attribute.\n- **Stale build artifacts**: `mix compile --force` resolved compilation ordering issues.\n";
        let c = extract(&[msg("s1", Role::System, summary)]);
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(c[0].key, "Stale build artifacts");
    }
}
