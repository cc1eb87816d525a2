//! Procedure rules: the build, test, lint and other project commands that
//! succeeded at least twice with the same command line (one per kind, the
//! most repeated), and statements such as "to run the tests, use `cargo
//! test --all`".

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;

use super::candidate::{candidate, cut_text, ids, index_ids, title, Candidate};
use super::commands::{command_kind, names_files, normalize_command, Kind, Outcome, Run};
use super::sentences::{sentences, usable};
use super::{re, MAX_PROCEDURES, MAX_TEXT_CHARS};
use crate::ingest::model::Message;
use crate::records::Category;
use crate::store::Scope;

/// Repeated successful build/test commands, one per kind.
pub(super) fn procedures(messages: &[Message], runs: &[Run]) -> Vec<Candidate> {
    let mut passed: HashMap<&str, Vec<&Run>> = HashMap::new();
    let mut order: Vec<&str> = Vec::new();
    for r in runs.iter().filter(|r| r.outcome == Outcome::Passed) {
        if command_kind(&r.cmd).is_none() || names_files(&r.cmd) {
            continue;
        }
        let e = passed.entry(&r.cmd).or_default();
        if e.is_empty() {
            order.push(&r.cmd);
        }
        e.push(r);
    }
    let mut best: Vec<(Kind, &str, usize)> = Vec::new();
    for cmd in order {
        let n = passed.get(cmd).map_or(0, Vec::len);
        let Some(kind) = command_kind(cmd) else {
            continue;
        };
        match best.iter_mut().find(|(k, _, _)| *k == kind) {
            Some(b) if b.2 < n => *b = (kind, cmd, n),
            Some(_) => {}
            None if n >= 2 => best.push((kind, cmd, n)),
            None => {}
        }
    }
    best.sort_by_key(|b| std::cmp::Reverse(b.2));
    best.truncate(MAX_PROCEDURES);
    best.into_iter()
        .map(|(kind, cmd, n)| {
            let runs = passed.get(cmd).map_or(&[][..], Vec::as_slice);
            procedure(messages, kind, cmd, n, runs)
        })
        .collect()
}

fn procedure(messages: &[Message], kind: Kind, cmd: &str, n: usize, runs: &[&Run]) -> Candidate {
    let purpose = kind.purpose();
    let mut evidence = Vec::new();
    for r in runs.iter().take(3) {
        evidence.extend([r.call, r.result]);
    }
    Candidate {
        category: Category::Procedures,
        scope: Scope::Project,
        key: title(&format!("{purpose}: {cmd}")),
        text: cut_text(&format!("To {purpose}, run `{cmd}`."), MAX_TEXT_CHARS),
        confidence: if n >= 3 { 0.75 } else { 0.7 },
        evidence: index_ids(messages, &evidence),
    }
}

static STATED_PROCEDURE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\bto (?:run|execute|build|lint|format|deploy|start)(?: the| all)?(?: unit| integration| e2e| full)? (?:tests?|test suite|build|linters?|checks?|benchmarks?|project|app|server)\b[^`]*`(?P<cmd>[^`]+)`",
    )
});

/// "To run the tests, use `cargo test --all`" style statements.
pub(super) fn stated_procedures(m: &Message, conf: f64) -> Vec<Candidate> {
    let mut out = Vec::new();
    for s in sentences(&m.text).iter().filter(|s| usable(s)) {
        let Some(cmd) = STATED_PROCEDURE
            .captures(&s.text)
            .and_then(|c| c.name("cmd"))
            .and_then(|c| normalize_command(c.as_str()))
        else {
            continue;
        };
        let Some(kind) = command_kind(&cmd) else {
            continue;
        };
        let mut c = candidate(Category::Procedures, Scope::Project, &s.text, conf);
        c.key = title(&format!("{}: {cmd}", kind.purpose()));
        c.evidence = ids(&[m]);
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::extract::rules::extract;
    use crate::extract::rules::test_transcripts::{of, run, user};
    use crate::records::Category;

    #[test]
    fn repeated_successful_test_command_is_a_procedure() {
        let mut msgs = vec![user("u", "fix it")];
        msgs.extend(run(
            "1",
            "cd /repo && cargo test --all 2>&1 | tail -5",
            "test result: ok. 3 passed",
            false,
        ));
        msgs.extend(run(
            "2",
            "cargo test --all",
            "test result: ok. 3 passed",
            false,
        ));
        let p = extract(&msgs);
        let p = of(&p, Category::Procedures);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].text, "To run the tests, run `cargo test --all`.");
        assert_eq!(p[0].evidence, ["1c", "1r", "2c", "2r"]);
        assert_eq!(p[0].confidence, 0.7);
    }

    #[test]
    fn single_or_file_specific_runs_are_not_procedures() {
        let mut msgs = Vec::new();
        msgs.extend(run("1", "npm run build", "done", false));
        msgs.extend(run("2", "pytest tests/test_a.py", "1 passed", false));
        msgs.extend(run("3", "pytest tests/test_a.py", "1 passed", false));
        msgs.extend(run("4", "git status", "clean", false));
        msgs.extend(run("5", "git status", "clean", false));
        assert!(of(&extract(&msgs), Category::Procedures).is_empty());
    }

    #[test]
    fn stated_procedure_from_user() {
        let c = extract(&[user("u1", "to run the tests, use `pytest -q tests`")]);
        let p = of(&c, Category::Procedures);
        assert_eq!(p.len(), 1, "{c:?}");
        assert_eq!(p[0].confidence, 0.8);
        assert_eq!(p[0].key, "run the tests: pytest -q tests");
    }
}
