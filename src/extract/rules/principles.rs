//! Principle rules: a clause of a typed prompt whose subject is a real noun
//! phrase followed by `must`, `must not`, `should always|never`, `never`,
//! `is not allowed` or `is required`; vaguer modals (`is crucial`) weigh
//! less.

use std::sync::LazyLock;

use regex::Regex;

use super::candidate::{candidate, Candidate};
use super::re;
use crate::records::Category;
use crate::store::Scope;

static CLAUSE_SPLIT: LazyLock<Regex> =
    LazyLock::new(|| re(r"[,;:]\s+|\s+(?:however|but|and so)\s+"));
static RULE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?P<subj>(?:[\w`'./-]+\s+){1,5}?)(?P<modal>must\s+not|mustn't|must|should\s+(?:always|never)|never|(?:is|are)\s+(?:not acceptable|unacceptable|not allowed|forbidden|prohibited|mandatory|required|crucial|critical|essential))\b",
    )
});
static BAD_SUBJECT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:it|this|that|these|those|there|which|what|who|i|he|she|they|everything|something|nothing|one|option|the (?:issue|problem|fix|error|bug|result|answer|above|same))\b",
    )
});
static CONNECTIVE: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^(?:however|but|and|also|so|then|though)\b\s*"));

/// A user-stated rule: a clause `<subject> must|never|should always ...`.
pub(super) fn principle(s: &str) -> Option<Candidate> {
    let mut start = 0;
    for clause in CLAUSE_SPLIT.split(s) {
        let offset = s[start..].find(clause).map_or(start, |i| start + i);
        start = offset + clause.len();
        let c = CONNECTIVE.replace(clause, "");
        let Some(caps) = RULE.captures(&c) else {
            continue;
        };
        let subj = caps.name("subj").map_or("", |m| m.as_str());
        let modal = caps.name("modal").map_or("", |m| m.as_str()).to_lowercase();
        if BAD_SUBJECT.is_match(subj) || c.to_lowercase().contains("must have been") {
            continue;
        }
        let rest = CONNECTIVE.replace(&s[offset..], "").into_owned();
        return Some(candidate(
            Category::Principles,
            Scope::Project,
            &rest,
            modal_conf(&modal),
        ));
    }
    None
}

fn modal_conf(modal: &str) -> f64 {
    if modal.ends_with("crucial") || modal.ends_with("critical") || modal.ends_with("essential") {
        0.55
    } else if modal == "must" || modal.ends_with("mandatory") || modal.ends_with("required") {
        0.65
    } else {
        0.7
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::rules::extract;
    use crate::extract::rules::test_transcripts::{asst, of, user};

    #[test]
    fn principle_with_real_subject() {
        let c = extract(&[user(
            "u1",
            "the main idea is fine, however the orchestrator must not be agent specific",
        )]);
        let p = of(&c, Category::Principles);
        assert_eq!(p.len(), 1, "{c:?}");
        assert_eq!(p[0].text, "The orchestrator must not be agent specific.");
        assert_eq!(p[0].confidence, 0.7);
        assert_eq!(p[0].scope, Scope::Project);
    }

    #[test]
    fn principle_not_from_deictic_subject() {
        for text in [
            "the issue must be addressed today",
            "it must be a caching bug",
            "this should always work, right?",
        ] {
            let c = extract(&[user("u1", text)]);
            assert!(of(&c, Category::Principles).is_empty(), "{text}: {c:?}");
        }
    }

    #[test]
    fn vague_principles_and_narrated_procedures_are_weak() {
        let c = extract(&[user("u1", "performance is crucial")]);
        assert!(c.iter().all(|c| c.confidence < 0.6), "{c:?}");
        let c = extract(&[asst("a1", "Had to run `mix format` before commit.")]);
        assert!(of(&c, Category::Procedures).is_empty(), "{c:?}");
    }
}
