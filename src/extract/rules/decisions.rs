//! Decision rules: `we decided`, `let's use`, `going with`, `chose X over
//! Y` and the like, from the user (confident) or from the assistant
//! (confident only when the user's prompt before it shares its words), kept
//! with the sentence that gives the reason.

use std::sync::LazyLock;

use regex::Regex;

use super::candidate::{candidate, ids, Candidate};
use super::sentences::{body, content_words, sentences, usable, Sentence};
use super::{is_typed_prompt, re};
use crate::ingest::model::{Message, Role};
use crate::records::Category;
use crate::store::Scope;

/// Decision cues: (pattern, confidence when the user says it).
static DECISION_RULES: LazyLock<Vec<(Regex, f64)>> = LazyLock::new(|| {
    vec![
        (
            re(r"(?i)\bwe(?:'ve| have)?\s+decided\b|\bdecision\s*:"),
            0.8,
        ),
        (
            re(
                r"(?i)^(?:let's|lets|let us)\s+(?:use|go with|switch to|stick with|standardi[sz]e on|adopt|move to|migrate to|keep using)\b",
            ),
            0.75,
        ),
        (
            re(
                r"(?i)\bwe(?:'ll| will| are going to)\s+(?:use|go with|switch to|stick with|adopt)\b",
            ),
            0.75,
        ),
        (
            re(
                r"(?i)\b(?:we're |we are |i'm |i am )?going with\b|\bchose\s+\S.{0,60}\s+over\s+\S|\bopted for\b|\bsettled on\b",
            ),
            0.75,
        ),
        (
            re(
                r"(?i)\bwe(?:'ve| have)?\s+(?:switched|moved|migrated)\s+(?:from\s+\S.{0,40}\s+)?to\b",
            ),
            0.75,
        ),
    ]
});

fn decision_conf(s: &str) -> Option<f64> {
    DECISION_RULES
        .iter()
        .find(|(r, _)| r.is_match(body(s)))
        .map(|(_, c)| *c)
}

pub(super) fn user_decision(s: &str, next: Option<&Sentence>) -> Option<Candidate> {
    let conf = decision_conf(s)?;
    let text = with_rationale(body(s), next);
    Some(candidate(Category::Decisions, Scope::Project, &text, conf))
}

static RATIONALE: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^(?:this|that|because|since|so that|it)\b"));

/// `s` followed by `next` when `next` gives the reason (`This is cleaner`,
/// `because ...`).
fn with_rationale(s: &str, next: Option<&Sentence>) -> String {
    match next {
        Some(n) if usable(n) && RATIONALE.is_match(&n.text) => {
            format!("{}. {}", s.trim_end_matches(['.', '!']).trim_end(), n.text)
        }
        _ => s.to_string(),
    }
}

/// Decision cues in assistant text; confident only when the preceding user
/// prompt shares at least two content words with the sentence.
pub(super) fn assistant_decisions(messages: &[Message], i: usize) -> Vec<Candidate> {
    let Some(m) = messages.get(i) else {
        return Vec::new();
    };
    let prompt = messages[..i]
        .iter()
        .rev()
        .take(4)
        .find(|p| p.role == Role::User && is_typed_prompt(&p.text));
    let asked = prompt.map(|p| content_words(&p.text)).unwrap_or_default();
    let mut out = Vec::new();
    let all = sentences(&m.text);
    for (k, s) in all.iter().enumerate().filter(|(_, s)| usable(s)) {
        if decision_conf(&s.text).is_none() {
            continue;
        }
        let shared = content_words(&s.text).intersection(&asked).count();
        let (conf, evidence) = match prompt {
            Some(p) if shared >= 2 => (0.7, ids(&[p, m])),
            _ => (0.5, ids(&[m])),
        };
        let text = with_rationale(body(&s.text), all.get(k + 1));
        let mut c = candidate(Category::Decisions, Scope::Project, &text, conf);
        c.evidence = evidence;
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::rules::extract;
    use crate::extract::rules::test_transcripts::{asst, of, user};

    #[test]
    fn decision_from_user() {
        let c = extract(&[user("u1", "ok, we decided to use SQLite for the cache.")]);
        let d = of(&c, Category::Decisions);
        assert_eq!(d.len(), 1, "{c:?}");
        assert_eq!(d[0].text, "We decided to use SQLite for the cache.");
        assert_eq!(d[0].confidence, 0.8);
        assert_eq!(d[0].evidence, ["u1"]);
    }

    #[test]
    fn decision_questions_and_hypotheticals_are_not_decisions() {
        for text in [
            "we decided?",
            "did we decide to use redis?",
            "if we switched to redis it would be faster",
        ] {
            let c = extract(&[user("u1", text)]);
            assert!(of(&c, Category::Decisions).is_empty(), "{text}: {c:?}");
        }
    }

    #[test]
    fn assistant_decision_needs_user_agreement() {
        let agreed = [
            user(
                "u1",
                "track sync state in the metrics file, extend the json",
            ),
            asst(
                "a1",
                "Perfect! Let's use unified tracking in the existing metrics file.",
            ),
        ];
        let d = extract(&agreed);
        let d = of(&d, Category::Decisions);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].confidence, 0.7);
        assert_eq!(d[0].evidence, ["u1", "a1"]);
        let alone = [
            user("u1", "hi"),
            asst("a1", "Let's use a HashMap for the index."),
        ];
        let d = extract(&alone);
        assert!(of(&d, Category::Decisions)
            .iter()
            .all(|c| c.confidence < 0.6));
    }

    #[test]
    fn decision_keeps_its_rationale() {
        let c = extract(&[user(
            "u1",
            "Let's use SQLite for the cache. It keeps deployment to one file. Thanks.",
        )]);
        let d = of(&c, Category::Decisions);
        assert_eq!(d.len(), 1);
        assert_eq!(
            d[0].text,
            "Let's use SQLite for the cache. It keeps deployment to one file."
        );
    }
}
