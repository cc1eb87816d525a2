//! Preference rules: what a user's typed prompt asks of the agent from now
//! on (`use X, not Y`, `I prefer`, `always` / `never`, `stop ...ing`,
//! `don't`), with a confidence lowered for deictic words and raised for
//! durability cues, in the user's scope only when the text is about the
//! person (`remember`'s test: "I prefer …", "my editor is …").
//! The cues and confidences are listed in the module doc of `rules`.

use std::sync::LazyLock;

use regex::Regex;

use super::candidate::{candidate, Candidate};
use super::re;
use super::sentences::body;
use crate::records::Category;

/// Preference rules, first match wins: (pattern, confidence or `None` for
/// "not an instruction", weak). Weak rules need a durability cue to pass the
/// guard.
type PreferenceRule = (Regex, Option<f64>, bool);

static PREFERENCE_RULES: LazyLock<Vec<PreferenceRule>> = LazyLock::new(|| {
    vec![
        (
            re(r"(?i)^use\s+\S.{0,60}?,?\s+(?:not|instead of|rather than)\s+\S"),
            Some(0.8),
            false,
        ),
        (
            re(
                r"(?i)^(?:i\s+(?:would |really |generally |always )?prefer|i'd prefer|i'd rather|i would rather|prefer)\s+\S",
            ),
            Some(0.75),
            false,
        ),
        (
            re(r"(?i)^(?:always|never)\s+(?:mind\b|worry\b)"),
            None,
            false,
        ),
        (re(r"(?i)^(?:always|never)\s+\w+"), Some(0.75), false),
        (
            re(r"(?i)^(?:from now on|going forward|in (?:the )?future)\b[,:]?\s+\S"),
            Some(0.75),
            false,
        ),
        (re(r"(?i)^stop\s+\w+ing\b"), Some(0.7), false),
        (
            re(
                r"(?i)^(?:don't|dont|don’t|do not)\s+(?:worry|know|understand|see|think|mind|care|bother|forget|hesitate|panic|get|have|need|want|like|agree|recall|remember|seem|expect)\b",
            ),
            None,
            true,
        ),
        (
            re(r"(?i)^(?:don't|dont|don’t|do not|avoid)\s+\w+"),
            Some(0.55),
            true,
        ),
    ]
});

static DURABLE_CUE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:ever|anymore|any more|from now on|going forward|in (?:the )?future|in general|without asking|unless (?:i|explicitly|asked)|in this (?:project|repo|repository|codebase)|always|never)\b",
    )
});
static DEICTIC: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)\b(?:this|that|these|those|it|here|above|below|line \d+|yet|for now|right now)\b")
});

pub(super) fn preference(s: &str) -> Option<Candidate> {
    let b = body(s);
    let (_, base, weak) = PREFERENCE_RULES.iter().find(|(r, _, _)| r.is_match(b))?;
    let base = (*base)?;
    let conf = match (*weak, DURABLE_CUE.is_match(b), DEICTIC.is_match(b)) {
        (true, true, false) => 0.7,
        (true, _, _) => base,
        (false, _, true) => base - 0.15,
        (false, _, false) => base,
    };
    // As `remember` files it: a rule about the codebase ("Use pnpm, not
    // npm") is the project's; only one about the person ("I prefer short
    // answers") goes to the user scope, which every project reads.
    let scope = crate::memory::scope_of(b);
    Some(candidate(Category::Preferences, scope, b, conf))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::rules::extract;
    use crate::extract::rules::test_transcripts::{of, user};
    use crate::store::Scope;

    #[test]
    fn preference_use_x_not_y_from_user() {
        let c = extract(&[user("u1", "Use pnpm, not npm!! It is faster.")]);
        // Filed as `remember` files the same text (review, stop 58: the
        // rules said preferences, `remember` decisions).
        let p = of(&c, crate::memory::classify("Use pnpm, not npm.").0);
        assert_eq!(p.len(), 1, "{c:?}");
        assert_eq!(p[0].text, "Use pnpm, not npm.");
        assert_eq!(p[0].evidence, ["u1"]);
        // A rule about the codebase: the project's, as `remember` files it
        // (review, stop 57: it went to the user scope, read by every
        // project).
        assert_eq!(p[0].scope, Scope::Project);
        assert!(p[0].confidence >= 0.75);
    }

    #[test]
    fn a_preference_about_the_person_is_the_users() {
        let c = extract(&[user("u1", "I prefer short answers without headings.")]);
        let p = of(&c, Category::Preferences);
        assert_eq!(p.len(), 1, "{c:?}");
        assert_eq!(p[0].scope, Scope::User);
    }

    #[test]
    fn preference_always_and_project_scope() {
        let c = extract(&[user(
            "u1",
            "please always run `cargo fmt` before committing",
        )]);
        let p = of(
            &c,
            crate::memory::classify("Always run `cargo fmt` before committing.").0,
        );
        assert_eq!(p.len(), 1, "{c:?}");
        assert_eq!(p[0].text, "Always run `cargo fmt` before committing.");
        assert_eq!(p[0].scope, Scope::Project);
        assert_eq!(p[0].key, "Always run `cargo fmt` before committing");
    }

    #[test]
    fn weak_dont_is_below_threshold_unless_durable() {
        let c = extract(&[user("u1", "don't add notes")]);
        assert!(of(&c, Category::Preferences)
            .iter()
            .all(|p| p.confidence < 0.6));
        let c = extract(&[user("u2", "don't ever push to main without asking")]);
        let p: Vec<_> = c.iter().filter(|x| x.evidence == ["u2"]).collect();
        assert_eq!(p.len(), 1);
        assert!(p[0].confidence >= 0.6);
    }

    #[test]
    fn non_preferences_are_ignored() {
        for text in [
            "don't worry about the tests",
            "I don't know why it fails",
            "never mind, go ahead",
            "should we always use tabs?",
            "if you prefer, use yarn not npm",
        ] {
            let c = extract(&[user("u1", text)]);
            assert!(of(&c, Category::Preferences).is_empty(), "{text}: {c:?}");
        }
    }
}
