//! Guardrails for extracted facts: pure functions, no I/O.
//!
//! Owns what any extractor (the `builtin` rules or a model) must pass before
//! its candidates become records:
//!
//! * **Input size**: a session shorter than [`MIN_TRANSCRIPT_CHARS`] is not
//!   worth extracting ([`worth_extracting`]); a longer one than
//!   [`MAX_INPUT_CHARS`] is cut to its most informative windows
//!   ([`select_windows`]).
//! * **Output screening** ([`apply`]): candidates below [`MIN_CONFIDENCE`],
//!   with a secret, that look like chain-of-thought or a transcript dump, that
//!   are empty or too long, or near-duplicates (word-set Jaccard above
//!   [`MAX_JACCARD`]) of an existing record or of a candidate already kept are
//!   dropped, each with a reason; at most [`MAX_FACTS_PER_SESSION`] are written,
//!   most confident first.
//! * **Keys** ([`auto_key`]): `auto:` plus the slug of the title.

use std::sync::LazyLock;

use regex::Regex;

use crate::dedupe::WordSet;
use crate::ingest::model::{Message, Role};
use crate::secrets::{contains_secret, redacted_slug};
use crate::text::truncate_chars;

use super::rules::Candidate;

/// Sessions with less text than this (all messages) are skipped.
pub const MIN_TRANSCRIPT_CHARS: usize = 200;
/// Most characters of transcript text handed to an extractor.
pub const MAX_INPUT_CHARS: usize = 12_000;
/// Most facts kept from one session.
pub const MAX_FACTS_PER_SESSION: usize = 5;
/// Candidates below this confidence are dropped (exactly this passes).
pub const MIN_CONFIDENCE: f64 = 0.6;
/// Candidates more similar than this to a kept or existing text are dropped.
pub const MAX_JACCARD: f64 = 0.8;
/// Longest slug part of an `auto:` key, in characters.
pub const MAX_SLUG_CHARS: usize = 60;
/// Longest fact text accepted, in characters.
pub const MAX_FACT_CHARS: usize = 500;
/// Longest single message inside a window, in characters (head kept).
pub const MAX_WINDOW_MESSAGE_CHARS: usize = 2_000;

/// `auto:<slug>`: the title with its secrets redacted, lowercased, every
/// run of non-alphanumerics collapsed to one dash, dashes trimmed (see
/// [`key_slug`] for a long one); `auto:untitled` when nothing
/// alphanumeric is left.
pub fn auto_key(title: &str) -> String {
    let s = key_slug(title);
    if s.is_empty() {
        "auto:untitled".to_string()
    } else {
        format!("auto:{s}")
    }
}

/// The slug of a key's title or a fact's text, its secrets redacted, at
/// most [`MAX_SLUG_CHARS`]. A longer one is cut and ends in a hash of the
/// whole (up to [`SLUG_HASHED_CHARS`]): two facts that share their first
/// 60 characters are two records, not one written over the other.
pub fn key_slug(text: &str) -> String {
    let whole = redacted_slug(text, SLUG_HASHED_CHARS);
    if whole.chars().count() <= MAX_SLUG_CHARS {
        return whole;
    }
    let hash = blake3::hash(whole.as_bytes()).to_hex();
    let head: String = whole.chars().take(MAX_SLUG_CHARS - 9).collect();
    format!("{}-{}", head.trim_end_matches('-'), &hash[..8])
}

/// How much of a long slug its hash covers: facts that agree this far are
/// one fact.
pub const SLUG_HASHED_CHARS: usize = 1000;

/// The slug a long key had before [`key_slug`] hashed it (cut at
/// [`MAX_SLUG_CHARS`]), when it differs: how records written then are
/// found.
pub fn cut_slug(text: &str) -> Option<String> {
    let cut = redacted_slug(text, MAX_SLUG_CHARS);
    (cut != key_slug(text)).then_some(cut)
}

/// How a dropped candidate is reported (`<key>: <why>`), its key redacted:
/// a candidate dropped for holding a secret may hold it in its key.
pub fn dropped_line(c: &Candidate, why: &str) -> String {
    format!("{}: {why}", crate::secrets::redact(&c.key).0)
}

/// Total characters of all message texts.
pub fn transcript_chars(messages: &[Message]) -> usize {
    messages.iter().map(|m| m.text.chars().count()).sum()
}

/// Whether a session has at least [`MIN_TRANSCRIPT_CHARS`] of text.
pub fn worth_extracting(messages: &[Message]) -> bool {
    transcript_chars(messages) >= MIN_TRANSCRIPT_CHARS
}

static CUES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)\b(?:decided|let's use|going with|chose|switched to|instead of|prefer|always|never|",
        r"don't|do not|must|should always|stop|error|failed|failure|panicked|exception|",
        r"the problem was|caused by|root cause|fixed by|because|to run the tests)\b"
    ))
    .expect("cue pattern is a valid constant regex")
});

/// How informative one message is: user turns +3, errors +2, and +1 per
/// decision / preference / error / cause cue (at most 5).
fn score(m: &Message) -> usize {
    let role = match m.role {
        Role::User => 3,
        Role::System => 1,
        Role::Assistant | Role::Tool => 0,
    };
    role + 2 * usize::from(m.is_error) + CUES.find_iter(&m.text).take(5).count()
}

/// `m` with its text cut to `max` characters (head kept).
fn clipped(m: &Message, max: usize) -> Message {
    let mut out = m.clone();
    if m.text.chars().count() > max {
        out.text = truncate_chars(&m.text, max).to_string();
    }
    out
}

/// The most informative windows of a long transcript, total text at most
/// `max_chars`, in transcript order.
///
/// Each message is first cut to [`MAX_WINDOW_MESSAGE_CHARS`]. If everything
/// fits, everything is returned. Otherwise the first user message is always
/// included (the cut already keeps it within the budget); then messages are
/// ranked by score (user turn +3, error +2, +1 per decision / preference /
/// error / cause cue, at most 5 cues; ties: earlier first) and each scoring
/// message is added together
/// with its neighbours (the window `i-1..=i+1`, so an error comes with the
/// command before it and the explanation after it), skipping any window
/// member that no longer fits. Zero-score messages are never added.
pub fn select_windows(messages: &[Message], max_chars: usize) -> Vec<Message> {
    let per_message = MAX_WINDOW_MESSAGE_CHARS.min(max_chars);
    let msgs: Vec<Message> = messages.iter().map(|m| clipped(m, per_message)).collect();
    if transcript_chars(&msgs) <= max_chars {
        return msgs;
    }
    let lens: Vec<usize> = msgs.iter().map(|m| m.text.chars().count()).collect();
    let mut keep = vec![false; msgs.len()];
    let mut used = 0;
    if let Some(first) = msgs.iter().position(|m| m.role == Role::User) {
        keep[first] = true;
        used = lens[first];
    }
    let mut ranked: Vec<(usize, usize)> = msgs.iter().map(score).enumerate().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let last = msgs.len() - 1;
    for (i, _) in ranked.into_iter().filter(|(_, s)| *s > 0) {
        let window = i.saturating_sub(1)..=(i + 1).min(last);
        for (k, len) in keep[window.clone()].iter_mut().zip(&lens[window]) {
            if !*k && used + len <= max_chars {
                *k = true;
                used += len;
            }
        }
    }
    msgs.into_iter()
        .zip(keep)
        .filter_map(|(m, k)| k.then_some(m))
        .collect()
}

/// What [`apply`] decided.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Verdict {
    /// Candidates that pass, most confident first.
    pub kept: Vec<Candidate>,
    /// Rejected candidates, each with the reason.
    pub dropped: Vec<(Candidate, String)>,
}

static ROLE_PREFIX: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?im)^\s*(?:user|assistant|human|ai|system|tool|claude|codex)\s*:")
        .expect("role prefix pattern is a valid constant regex")
});
static THINKING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)</?(?:thinking|think|thought|reasoning|analysis|scratchpad)>|\[tool \w+\]|\[exec\]|^=== |",
        r"^(?:hmm|wait|okay,? so|let me think|let me|i think|i need to|i should|maybe)\b|",
        // A reasoning model's labels, and its talk about the user and what
        // it will do (a fact is about the code or the person, not the turn).
        r"^(?:thought|thinking|reasoning|reflection)\s*:|\bconclusion\s*:|",
        r"\bthe user (?:seems|wants|is asking|asked me|might)\b|\bso i(?:'ll| will)\b"
    ))
    .expect("thinking pattern is a valid constant regex")
});

/// Why `text` is not a fact but chain-of-thought or a transcript dump:
/// two or more role-prefixed lines, a thinking tag (`<thinking>`,
/// `<think>`, `<reasoning>`, ...), tool-call lines, a fenced code block,
/// more than five lines, musing openers (`Hmm`, `Wait`, `Let me`, `I
/// think`, ...), a reasoning label (`Thought:`, `Conclusion:`), or talk of
/// the turn (`the user seems …`, `so I will …`).
pub fn dump_reason(text: &str) -> Option<&'static str> {
    if ROLE_PREFIX.find_iter(text).count() >= 2 {
        Some("looks like a transcript dump (role-prefixed lines)")
    } else if text.contains("```") || text.lines().count() > 5 {
        Some("looks like a transcript dump (code block or many lines)")
    } else if THINKING.is_match(text.trim()) {
        Some("looks like chain-of-thought or tool output")
    } else {
        None
    }
}

/// Why a single candidate is rejected on its own, if it is.
fn own_reason(c: &Candidate) -> Option<String> {
    if c.confidence.is_nan() || c.confidence < MIN_CONFIDENCE {
        return Some(format!(
            "confidence {:.2} below {MIN_CONFIDENCE}",
            c.confidence
        ));
    }
    let len = c.text.trim().chars().count();
    if len == 0 {
        return Some("empty text".to_string());
    }
    if len > MAX_FACT_CHARS {
        return Some(format!("text too long ({len} > {MAX_FACT_CHARS} chars)"));
    }
    if contains_secret(&c.text) || contains_secret(&c.key) {
        return Some("contains a secret".to_string());
    }
    dump_reason(&c.text).map(str::to_string)
}

/// The most similar text in `pool` above [`MAX_JACCARD`], with its score.
fn near_duplicate<'a>(
    words: &WordSet,
    pool: impl Iterator<Item = (&'a WordSet, &'a str)>,
) -> Option<(f64, &'a str)> {
    pool.map(|(w, label)| (words.jaccard(w), label))
        .filter(|(j, _)| *j > MAX_JACCARD)
        .max_by(|a, b| a.0.total_cmp(&b.0))
}

/// Whether `new` states another value than `old`: each holds a word with
/// a digit (a version, a port, a limit) that the other lacks.
fn replaces_a_value(new: &str, old: &str) -> bool {
    let values = |t: &str| -> std::collections::BTreeSet<String> {
        crate::text::words(t)
            .filter(|w| w.chars().any(|c| c.is_ascii_digit()))
            .map(str::to_lowercase)
            .collect()
    };
    let (a, b) = (values(new), values(old));
    a.difference(&b).next().is_some() && b.difference(&a).next().is_some()
}

/// Whether `new` says the opposite of `old`: one is negated (`not`,
/// `never`, `no longer`, `don't`, ...) and the other is not.
fn reverses(new: &str, old: &str) -> bool {
    negated(new) != negated(old)
}

fn negated(text: &str) -> bool {
    let lower = text.to_lowercase().replace('\u{2019}', "'");
    lower.contains("n't")
        || crate::text::words(&lower)
            .any(|w| matches!(w, "not" | "no" | "never" | "cannot" | "nor" | "neither"))
}

/// Screens `cands` against each other and `existing` record texts (the
/// caller passes the 100 or more most recent records of the scope).
///
/// Order: candidates are sorted by confidence (highest first, stable); each
/// is then checked for confidence, emptiness, length, secrets and
/// dump/chain-of-thought shape, then for near-duplicates of an existing
/// record, then of an already kept candidate. The
/// [`MAX_FACTS_PER_SESSION`] cap is the writer's ([`over_the_limit`]):
/// it counts the facts written, not those a person's record of the same
/// key then keeps out.
pub fn apply(mut cands: Vec<Candidate>, existing: &[String]) -> Verdict {
    cands.sort_by(|a, b| b.confidence.total_cmp(&a.confidence));
    let existing: Vec<(WordSet, &str)> = existing
        .iter()
        .map(|t| (WordSet::new(t), t.as_str()))
        .collect();
    let mut kept_words: Vec<(WordSet, String)> = Vec::new();
    let mut verdict = Verdict::default();
    for c in cands {
        let words = WordSet::new(&c.text);
        let reason = own_reason(&c)
            .or_else(|| {
                // A fact that states another value than a record (`Postgres
                // 17` for `Postgres 16`) is news, not a repeat: it is kept,
                // and recall marks the older record possibly stale.
                // So is one that says the opposite ("We no longer deploy on
                // Fridays"), which the words alone take for a repeat.
                let same_values = existing
                    .iter()
                    .filter(|(_, t)| !replaces_a_value(&c.text, t) && !reverses(&c.text, t))
                    .map(|(w, t)| (w, *t));
                near_duplicate(&words, same_values).map(|(j, t)| {
                    format!(
                        "duplicate of existing record (jaccard {j:.2}): {}",
                        truncate_chars(t, 60)
                    )
                })
            })
            .or_else(|| {
                near_duplicate(&words, kept_words.iter().map(|(w, k)| (w, k.as_str())))
                    .map(|(j, k)| format!("duplicate of kept candidate '{k}' (jaccard {j:.2})"))
            });
        match reason {
            Some(r) => verdict.dropped.push((c, r)),
            None => {
                kept_words.push((words, c.key.clone()));
                verdict.kept.push(c);
            }
        }
    }
    verdict
}

/// Why a kept candidate past the first [`MAX_FACTS_PER_SESSION`] written
/// is not.
pub fn over_the_limit() -> String {
    format!("over the limit of {MAX_FACTS_PER_SESSION} facts per session")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::Category;
    use crate::store::Scope;

    fn cand(key: &str, text: &str, confidence: f64) -> Candidate {
        Candidate {
            category: Category::Decisions,
            scope: Scope::Project,
            key: key.to_string(),
            text: text.to_string(),
            confidence,
            evidence: vec!["m1".to_string()],
        }
    }

    fn msg(role: Role, text: &str) -> Message {
        Message {
            id: None,
            role,
            name: None,
            text: text.to_string(),
            timestamp: None,
            is_error: false,
        }
    }

    /// Regression (issue #26: a fact dropped for holding a secret in its
    /// key was reported with the key as is).
    #[test]
    fn r26_a_dropped_candidates_key_is_redacted() {
        let t = format!("ghp_{}", "Xk9Qm2Zr7Lp4Wn8Vb3Hd6Jf1Tc5Ys0Ga7Ke2");
        let v = apply(
            vec![cand(&format!("token {t}"), "Deploys use the vault.", 0.9)],
            &[],
        );
        let (c, why) = &v.dropped[0];
        let line = dropped_line(c, why);
        assert_eq!(line, "token [REDACTED:github-token]: contains a secret");
    }

    #[test]
    fn short_transcript_threshold() {
        assert_eq!(MIN_TRANSCRIPT_CHARS, 200);
        let short = [msg(Role::User, &"x".repeat(MIN_TRANSCRIPT_CHARS - 1))];
        assert!(!worth_extracting(&short));
        let enough = [
            msg(Role::User, &"x".repeat(100)),
            msg(Role::Assistant, &"y".repeat(100)),
        ];
        assert!(worth_extracting(&enough));
    }

    #[test]
    fn windows_fit_the_cap_and_keep_first_request_and_order() {
        let mut msgs = vec![msg(Role::User, "Please fix the flaky login test.")];
        for i in 0..200 {
            let text = if i % 50 == 7 {
                format!("error: build failed at step {i}")
            } else {
                format!("{i} {}", "filler output ".repeat(20))
            };
            msgs.push(msg(Role::Tool, &text));
        }
        msgs.push(msg(Role::Assistant, &"long ".repeat(5000)));
        let out = select_windows(&msgs, MAX_INPUT_CHARS);
        assert!(transcript_chars(&out) <= MAX_INPUT_CHARS);
        assert_eq!(out[0].text, "Please fix the flaky login test.");
        assert!(out
            .iter()
            .any(|m| m.text.contains("error: build failed at step 7")));
        let pos: Vec<usize> = out
            .iter()
            .filter_map(|m| msgs.iter().position(|x| x.text == m.text))
            .collect();
        assert!(pos.windows(2).all(|w| w[0] < w[1]), "order kept: {pos:?}");
    }

    #[test]
    fn windows_return_everything_when_it_fits_and_cap_tiny_budgets() {
        let msgs = [msg(Role::User, "hello there"), msg(Role::Assistant, "hi")];
        assert_eq!(select_windows(&msgs, MAX_INPUT_CHARS), msgs);
        let big = [msg(Role::User, &"z".repeat(50_000))];
        let out = select_windows(&big, 100);
        assert!(transcript_chars(&out) <= 100);
        assert!(select_windows(&[], 100).is_empty());
    }

    #[test]
    fn keeps_facts_highest_confidence_first() {
        let topics = [
            "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf",
        ];
        let cands: Vec<Candidate> = topics
            .iter()
            .enumerate()
            .map(|(i, t)| {
                cand(
                    t,
                    &format!("Use {t} for component {t}."),
                    0.6 + 0.05 * i as f64,
                )
            })
            .collect();
        // Highest confidence first; the writer keeps the first five it
        // writes (`over_the_limit`).
        let v = apply(cands, &[]);
        assert_eq!(v.kept.len(), topics.len());
        assert_eq!(v.kept[0].key, "golf");
        assert_eq!(v.kept.last().unwrap().key, "alpha");
        assert!(v.dropped.is_empty());
        assert!(over_the_limit().contains("limit of 5"));
    }

    #[test]
    fn confidence_threshold() {
        let v = apply(
            vec![
                cand("a", "Use tabs in Makefiles.", 0.59),
                cand("b", "Use pnpm for installs.", 0.6),
            ],
            &[],
        );
        assert_eq!(v.kept.len(), 1);
        assert_eq!(v.kept[0].key, "b");
        assert!(
            v.dropped[0].1.starts_with("confidence 0.59 below 0.6"),
            "{:?}",
            v.dropped
        );
    }

    #[test]
    fn jaccard_dedupe_within_batch() {
        let v = apply(
            vec![
                cand("a", "We decided to use SQLite for the local cache.", 0.7),
                cand("b", "We decided to use SQLite for the local cache!", 0.8),
                cand("c", "Deploys go through the staging cluster first.", 0.7),
            ],
            &[],
        );
        assert_eq!(
            v.kept.iter().map(|c| c.key.as_str()).collect::<Vec<_>>(),
            ["b", "c"]
        );
        assert!(
            v.dropped[0].1.contains("duplicate of kept candidate 'b'"),
            "{:?}",
            v.dropped
        );
    }

    /// Regression (review, stop 60): a fact reversing a record ("We no
    /// longer deploy …") was dropped as its duplicate, so the wrong fact
    /// stayed the only one. It is news; a restatement is still a repeat.
    #[test]
    fn r_a_reversal_is_news_not_a_duplicate() {
        let existing = vec![
            "We deploy the web app to production on Fridays after the weekly sync meeting."
                .to_string(),
        ];
        for text in [
            "We no longer deploy the web app to production on Fridays after the weekly sync meeting.",
            "We don't deploy the web app to production on Fridays after the weekly sync meeting.",
        ] {
            let v = apply(vec![cand("fridays", text, 0.9)], &existing);
            assert_eq!(v.kept.len(), 1, "{text}: {:?}", v.dropped);
        }
        let v = apply(
            vec![cand(
                "fridays",
                "We deploy the web app to production on Fridays after the weekly sync meeting, always.",
                0.9,
            )],
            &existing,
        );
        assert_eq!(v.kept.len(), 0, "a restatement is a repeat");
    }

    #[test]
    fn jaccard_dedupe_against_existing() {
        let existing = vec!["We decided to use SQLite for the local cache.".to_string()];
        let v = apply(
            vec![cand("a", "we decided: use SQLite for local cache", 0.9)],
            &existing,
        );
        assert!(v.kept.is_empty());
        assert!(
            v.dropped[0].1.starts_with("duplicate of existing record"),
            "{:?}",
            v.dropped
        );
        let v = apply(
            vec![cand(
                "a",
                "We decided to use Postgres for the main store.",
                0.9,
            )],
            &existing,
        );
        assert_eq!(v.kept.len(), 1);
    }

    #[test]
    fn slug_normalisation() {
        assert_eq!(auto_key("Use PNPM, not npm!!"), "auto:use-pnpm-not-npm");
        assert_eq!(auto_key("  --a__b::c--  "), "auto:a-b-c");
        assert_eq!(auto_key("???"), "auto:untitled");
        let long = auto_key(&"abcdefghij ".repeat(10));
        let slug_part = long.trim_start_matches("auto:");
        assert_eq!(slug_part.chars().count(), MAX_SLUG_CHARS);
        assert!(
            slug_part.starts_with("abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefg-"),
            "{slug_part}"
        );
        let x = auto_key(&"x".repeat(100));
        assert!(x.starts_with(&format!("auto:{}-", "x".repeat(51))), "{x}");
        assert_eq!(
            auto_key(&"x".repeat(60)),
            format!("auto:{}", "x".repeat(60))
        );
        // Regression (review, stop 60): keys alike for 60 characters were one
        // record, the second fact written over the first.
        let tz =
            "running the integration tests against the staging database from a laptop with docker";
        let no_docker = tz.replace("with docker", "without docker");
        assert_ne!(auto_key(tz), auto_key(&no_docker));
        assert_eq!(auto_key(tz), auto_key(&tz.to_uppercase()));
        assert_eq!(
            cut_slug(tz).as_deref(),
            Some("running-the-integration-tests-against-the-staging-database-f")
        );
        assert_eq!(cut_slug("use pnpm"), None);
    }

    #[test]
    fn secrets_dropped() {
        let key = format!("AKIA{}", "ABCDEFGHIJKLMNOP");
        let v = apply(
            vec![cand("aws", &format!("Deploy with key {key} in CI."), 0.9)],
            &[],
        );
        assert!(v.kept.is_empty());
        assert_eq!(v.dropped[0].1, "contains a secret");
    }

    /// Regression: a decision whose value changed (`Postgres 17` after
    /// `Postgres 16`) was dropped as a duplicate of the old record, so
    /// memory kept the old value. A repeat, or one that only adds a
    /// number, is still a duplicate.
    #[test]
    fn r_a_fact_with_a_new_value_is_not_a_duplicate_of_the_old_one() {
        let old =
            "We decided to use Postgres 16 for the analytics service because of its JSON support."
                .to_string();
        let new = old.replace("16", "17");
        let v = apply(vec![cand("pg", &new, 0.9)], std::slice::from_ref(&old));
        assert_eq!(v.kept.len(), 1, "{:?}", v.dropped);
        let v = apply(vec![cand("pg", &old, 0.9)], std::slice::from_ref(&new));
        assert_eq!(v.kept.len(), 1, "{:?}", v.dropped);
        let v = apply(vec![cand("pg", &old, 0.9)], std::slice::from_ref(&old));
        assert!(v.dropped[0].1.starts_with("duplicate of existing record"));
        let plain =
            "We decided to use Postgres for the analytics service because of its JSON support.";
        let v = apply(vec![cand("pg", &old, 0.9)], &[plain.to_string()]);
        assert!(v.kept.is_empty(), "only a number more: {:?}", v.kept);
    }

    #[test]
    fn dumps_and_chain_of_thought_dropped() {
        let v = apply(
            vec![
                cand("d", "user: fix it\nassistant: done", 0.9),
                cand("t", "Hmm, maybe the cache is stale.", 0.9),
                cand("c", "Run:\n```\ncargo test\n```", 0.9),
                cand("ok", "Run the tests with `cargo test --all`.", 0.9),
                // Regression: a reasoning model's forms were kept as facts.
                cand("r1", "<think>The user wants pnpm.</think> Use pnpm.", 0.9),
                cand(
                    "r2",
                    "Thought: the user seems to want pnpm so I will use it.",
                    0.9,
                ),
                cand("r3", "<reasoning>pnpm is faster</reasoning> Use pnpm.", 0.9),
                cand(
                    "r4",
                    "Step 1: read the lockfile. Step 2: compare. Conclusion: pnpm.",
                    0.9,
                ),
                // A procedure's steps and a rule mentioning users stay.
                cand(
                    "steps",
                    "Step 1: build with make. Step 2: deploy with make ship-it.",
                    0.9,
                ),
                cand(
                    "users",
                    "The user settings page must load in under 200 ms.",
                    0.9,
                ),
            ],
            &[],
        );
        let kept: Vec<&str> = v.kept.iter().map(|c| c.key.as_str()).collect();
        assert_eq!(kept, ["ok", "steps", "users"]);
        assert_eq!(v.dropped.len(), 7);
    }
}
