//! The `builtin` fact extractor: deterministic rules, no model.
//!
//! Owns turning one session's [`Message`]s into [`Candidate`] facts for the
//! five record categories. The guardrails (confidence floor, secrets,
//! dedupe, per-session cap) live in `guard`; this module only proposes, with
//! an honest confidence, and never emits a fact containing a secret.
//!
//! # Heuristics
//! Prose is read sentence by sentence: fenced code, indented code, tables,
//! quotes and tool lines are skipped, markdown emphasis, headings, list
//! markers and links are stripped (inline code is kept), and questions
//! (any `?`) and hypotheticals (`if`, `maybe`, `should we`, ...) never match.
//!
//! * **Preferences** (typed [`Role::User`] prompts only; pasted documents,
//!   subagent task prompts and injected context — long, many-line or
//!   tag-led user messages — are skipped): `use X, not Y` / `instead of`
//!   (0.8), `I prefer` / `I'd rather`, sentence-initial `always` / `never`,
//!   `from now on` / `going forward` (0.75), `stop ...ing` (0.7), and
//!   `don't` / `do not` / `avoid` (0.55, too weak alone; 0.7 with a
//!   durability cue such as `ever`, `without asking`, `in this repo`). Deictic
//!   words (`this`, `that`, `it`, `here`, `line 3`) lower a strong match by
//!   0.15; `don't worry` / `know` / `think` and similar are not instructions.
//!   Scope is [`Scope::Project`] when the text names code, a path or the
//!   project, else [`Scope::User`].
//! * **Principles** (typed user prompts): a clause whose subject is a real
//!   noun phrase (not `it` / `this` / `the issue` / `option 1`) followed by
//!   `must not`, `should always|never`, `never`, `is not acceptable` /
//!   `not allowed` (0.7), `must` / `is required` (0.65) or `is crucial` /
//!   `critical` / `essential` (0.55: too vague alone). Scope: project.
//! * **Decisions**: from the user, `let's use|go with|switch to ...`,
//!   `we'll use`, `going with`, `chose X over Y`, `we switched to` (0.75) and
//!   `we decided` (0.8); from the assistant, the same cues count (0.7) only
//!   when the preceding user prompt shares at least two content words with
//!   the sentence (the user agreed or asked for it), else 0.5. A following
//!   sentence giving the reason (`This is cleaner ...`, `because ...`) is
//!   kept with the decision.
//! * **Procedures**: build / test / lint / format / migrate / run / deploy
//!   commands (`cargo`, `npm run`, `pytest`, `make`, `mix`, `go test`, ...)
//!   that succeeded at least twice with the same normalised command line (no
//!   file arguments; `cd x &&`, `2>&1`, `| tail`, `--seed 0` stripped): 0.7,
//!   0.75 from three successes. One per kind (the most repeated), at most
//!   [`MAX_PROCEDURES`]. Runs come from Codex `[exec]` tool messages and from
//!   Claude Code `[tool Bash]` lines paired with the Tool messages that
//!   follow (a lone call followed straight by the next assistant turn had an
//!   empty, successful result: the parser drops those). A command failed
//!   when its result is an error or its output shows failures even behind a
//!   pipe (`3 failures`, `error[E0308]:`, `FAILED`, `found 2 ... issues`); a
//!   clean result piped through `grep`/`head` proves nothing; rejected or
//!   sandbox-blocked calls are unknown. Explicit statements such as "to run
//!   the tests, use `cargo test --all`" give 0.8 (user) / 0.7 (assistant).
//! * **Incidents**: a failed build/test command with a recognisable error
//!   line, followed by an assistant sentence that states the cause or fix
//!   (`because`, `caused by`, `the problem was`, `fixed by`: strong; `needs`,
//!   `missing`, `isn't configured`, `can't`: medium) before the command runs
//!   again, and a later success of the same command: 0.75 (strong) / 0.7
//!   (medium); a cause without a later success 0.65 / 0.6; a later success
//!   without a stated cause 0.55 (nothing durable to say). A failed
//!   assertion costs 0.2 (usually a bug in code just written, not a lasting
//!   lesson). Deliberate test failures (TDD: "confirm it fails") are
//!   skipped. The `Errors and fixes` section of a compaction summary (a System message, or an assistant
//!   message answering the summary prompt) gives one incident per bullet
//!   `**problem**: fix`, 0.65 (0.7 with an explicit cause), skipping
//!   bullets about unused or renamed code, lint refactors, open problems or
//!   the agent's own slips (a title starting with a past-tense verb:
//!   `Added X before Y`); at most [`MAX_SUMMARY_INCIDENTS`] per summary.
//!   Incidents of one session telling the same story (half the content
//!   words of the shorter one shared) are merged, keeping the stronger.
//!
//! Every candidate's text is at most [`MAX_TEXT_CHARS`] characters, its key
//! at most [`MAX_KEY_CHARS`]; evidence lists native message ids in
//! transcript order. Candidates whose key or text holds a secret are
//! dropped here; same-key candidates keep the more confident one.

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use regex::Regex;

use crate::ingest::model::{Message, Role};
use crate::records::Category;
use crate::secrets::contains_secret;
use crate::store::Scope;
use crate::text::{slug, truncate_chars, words};

/// Name stored in a record's origin.
pub const EXTRACTOR_NAME: &str = "builtin";
/// Bump when the rules change what they emit.
pub const EXTRACTOR_VERSION: &str = "1";

/// Longest candidate text, in characters.
pub const MAX_TEXT_CHARS: usize = 400;
/// Longest candidate key (title), in characters.
pub const MAX_KEY_CHARS: usize = 60;
/// Most procedures proposed per session.
pub const MAX_PROCEDURES: usize = 3;
/// Most incidents taken from one summary's `Errors and fixes` section.
pub const MAX_SUMMARY_INCIDENTS: usize = 3;

/// A typed prompt longer than this is a pasted document or a task prompt.
const MAX_PROMPT_CHARS: usize = 1500;
/// A typed prompt with more lines than this is a pasted document.
const MAX_PROMPT_LINES: usize = 12;
/// How far (in messages) a failed command looks for its next run.
const INCIDENT_HORIZON: usize = 80;
/// Longest error line quoted in an incident, in characters.
const MAX_ERROR_CHARS: usize = 160;
/// Most evidence ids per candidate.
const MAX_EVIDENCE: usize = 6;

/// One proposed fact.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// Decisions, Procedures, Principles, Incidents or Preferences.
    pub category: Category,
    /// Personal preferences are `User`; facts about the project `Project`.
    pub scope: Scope,
    /// A short human title; the caller turns it into `auto:<slug>`.
    pub key: String,
    /// The fact: one to three self-contained sentences.
    pub text: String,
    /// 0..1, honest.
    pub confidence: f64,
    /// Native ids of the evidence messages, in transcript order.
    pub evidence: Vec<String>,
}

/// The category and scope the rules give one stated fact (as if a user had
/// typed it), or `None` when no rule recognises it.
pub fn classify(text: &str) -> Option<(Category, Scope)> {
    let m = Message {
        id: None,
        role: Role::User,
        name: None,
        text: text.to_string(),
        timestamp: None,
        is_error: false,
    };
    user_facts(&m)
        .into_iter()
        .next()
        .map(|c| (c.category, c.scope))
}

/// Every candidate fact the rules find in one session, strongest first.
pub fn extract(messages: &[Message]) -> Vec<Candidate> {
    let mut out = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        match m.role {
            Role::User if is_typed_prompt(&m.text) => out.extend(user_facts(m)),
            Role::User => {}
            Role::Assistant => {
                out.extend(assistant_decisions(messages, i));
                out.extend(stated_procedures(m, 0.7));
            }
            Role::System | Role::Tool => {}
        }
        if m.role != Role::User {
            out.extend(summary_incidents(m));
        }
    }
    let runs = command_runs(messages);
    out.extend(procedures(messages, &runs));
    out.extend(command_incidents(messages, &runs));
    finish(out)
}

/// Drops secrets, merges same-key candidates and sorts by confidence.
fn finish(cands: Vec<Candidate>) -> Vec<Candidate> {
    let mut best: HashMap<String, Candidate> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    for c in cands {
        if c.text.is_empty() || contains_secret(&c.text) || contains_secret(&c.key) {
            continue;
        }
        let k = slug(&c.key, MAX_KEY_CHARS);
        match best.get(&k) {
            Some(old) if old.confidence >= c.confidence => {}
            Some(_) => {
                best.insert(k, c);
            }
            None => {
                order.push(k.clone());
                best.insert(k, c);
            }
        }
    }
    let mut merged: Vec<Candidate> = order.iter().filter_map(|k| best.remove(k)).collect();
    merged.sort_by(|a, b| b.confidence.total_cmp(&a.confidence));
    let mut out: Vec<Candidate> = Vec::with_capacity(merged.len());
    for c in merged {
        if !out.iter().any(|k| same_incident(k, &c)) {
            out.push(c);
        }
    }
    out
}

/// Template words of command incidents; ignored when comparing incidents.
const INCIDENT_TEMPLATE: [&str; 5] = ["failed", "passed", "after", "fix", "fixed"];

/// Two incidents of one session telling the same story (a summary bullet
/// and the raw failure): half of the smaller content-word set is shared.
fn same_incident(a: &Candidate, b: &Candidate) -> bool {
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

// ---------------------------------------------------------------------------
// Sentences

/// One prose sentence, markdown stripped.
#[derive(Debug, Clone, PartialEq)]
struct Sentence {
    text: String,
    question: bool,
}

static LINK: LazyLock<Regex> = LazyLock::new(|| re(r"\[([^\]]+)\]\([^)]*\)"));
static LIST_MARK: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(?:#{1,6}\s+|[-*+•]\s+|\d{1,3}[.)]\s+)+"));
static HYPOTHETICAL: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:if|what if|maybe|perhaps|should we|could|would|can we|do we|shall we|unless|suppose|imagine|in case|not sure|i wonder|i think|i guess|hmm|wait)\b",
    )
});

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("rule pattern is a valid constant regex")
}

/// Prose sentences of `text`.
fn sentences(text: &str) -> Vec<Sentence> {
    let mut out = Vec::new();
    let mut in_fence = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence || !is_prose_line(line) {
            continue;
        }
        split_sentences(&strip_markdown(t), &mut out);
    }
    out
}

/// False for indented code, tables, quotes, tool lines and markup.
fn is_prose_line(line: &str) -> bool {
    let t = line.trim();
    !(t.is_empty()
        || line.starts_with("    ")
        || line.starts_with('\t')
        || t.starts_with(['|', '>', '<', '{', '}', '[', '$', '='])
        || t.starts_with("//"))
}

/// Emphasis, headings, list markers and links removed; inline code kept.
fn strip_markdown(line: &str) -> String {
    let no_links = LINK.replace_all(line, "$1");
    let no_marks = LIST_MARK.replace(&no_links, "");
    no_marks.replace("**", "").trim().to_string()
}

/// Splits after `.`, `!` or `?` followed by whitespace.
fn split_sentences(line: &str, out: &mut Vec<Sentence>) {
    let mut start = 0;
    let mut chars = line.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let boundary =
            matches!(c, '.' | '!' | '?') && chars.peek().is_none_or(|(_, n)| n.is_whitespace());
        if boundary {
            push_sentence(&line[start..i + c.len_utf8()], out);
            start = i + c.len_utf8();
        }
    }
    push_sentence(&line[start..], out);
}

fn push_sentence(s: &str, out: &mut Vec<Sentence>) {
    let text = s.trim();
    if text.chars().filter(|c| c.is_alphanumeric()).count() >= 3 {
        out.push(Sentence {
            text: text.to_string(),
            question: text.contains('?'),
        });
    }
}

/// A sentence a rule may read: no question, no hypothetical, no secret,
/// at least three words and at most 300 characters.
fn usable(s: &Sentence) -> bool {
    !s.question
        && !HYPOTHETICAL.is_match(&s.text)
        && words(&s.text).count() >= 3
        && s.text.chars().count() <= 300
        && !contains_secret(&s.text)
}

/// `s` with a capital first letter and one final period.
fn as_fact(s: &str) -> String {
    let t = s.trim().trim_end_matches(['.', '!', ',', ';', ':']).trim();
    let first_word = t.split_whitespace().next().unwrap_or("");
    let mut chars = t.chars();
    let Some(first) = chars.next() else {
        return String::new();
    };
    let text = if first_word
        .chars()
        .all(|c| c.is_ascii_lowercase() || c == '\'')
    {
        format!("{}{}.", first.to_uppercase(), chars.as_str())
    } else {
        format!("{t}.")
    };
    cut_text(&text, MAX_TEXT_CHARS)
}

/// At most `max` chars, cut at a word boundary with an ellipsis.
fn cut_text(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let head = truncate_chars(s, max.saturating_sub(1));
    let cut = head.rfind(' ').map_or(head, |i| &head[..i]);
    format!("{}…", cut.trim_end_matches([',', ';', ':', ' ']))
}

/// A title from the start of `s`: whole words, at most [`MAX_KEY_CHARS`].
fn title(s: &str) -> String {
    let t = s.trim().trim_end_matches(['.', '!', ',', ';', ':']);
    let mut out = String::new();
    for w in t.split_whitespace() {
        if out.chars().count() + w.chars().count() + 1 > MAX_KEY_CHARS {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    if out.is_empty() {
        out = truncate_chars(t, MAX_KEY_CHARS).to_string();
    }
    out
}

fn ids(msgs: &[&Message]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for m in msgs {
        if let Some(id) = &m.id {
            if !out.contains(id) && out.len() < MAX_EVIDENCE {
                out.push(id.clone());
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------
// User prompts: preferences, principles, decisions

static INJECTED: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^\s*(?:<|#|your task is|this session is being continued|caveat:|\[request interrupted)",
    )
});

/// A prompt the user typed (not a pasted document, task prompt or injection).
fn is_typed_prompt(text: &str) -> bool {
    text.chars().count() <= MAX_PROMPT_CHARS
        && text.lines().count() <= MAX_PROMPT_LINES
        && !INJECTED.is_match(text)
}

fn user_facts(m: &Message) -> Vec<Candidate> {
    let mut out = Vec::new();
    let all = sentences(&m.text);
    for (i, s) in all.iter().enumerate().filter(|(_, s)| usable(s)) {
        let found = preference(&s.text)
            .or_else(|| user_decision(&s.text, all.get(i + 1)))
            .or_else(|| principle(&s.text));
        if let Some(mut c) = found {
            c.evidence = ids(&[m]);
            out.push(c);
        }
    }
    out.extend(stated_procedures(m, 0.8));
    out
}

static FILLERS: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:(?:please|pls|also|and|but|so|ok|okay|just|oh|however|then|note|remember|important)\b[,:!]?\s*)+",
    )
});

/// `s` without leading fillers (`please`, `also`, `ok,` ...).
fn body(s: &str) -> &str {
    FILLERS.find(s).map_or(s, |m| &s[m.end()..])
}

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
static PROJECT_MARK: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"`|/|\b\w+\.(?:rs|py|ts|js|ex|exs|go|toml|json|ya?ml|md)\b|\b[a-z]+_[a-z_]+\b|\b[a-z]+[A-Z]\w*\b|(?i:\b(?:project|repo|repository|codebase|module|crate|package)\b)",
    )
});

fn preference(s: &str) -> Option<Candidate> {
    let b = body(s);
    let (_, base, weak) = PREFERENCE_RULES.iter().find(|(r, _, _)| r.is_match(b))?;
    let base = (*base)?;
    let conf = match (*weak, DURABLE_CUE.is_match(b), DEICTIC.is_match(b)) {
        (true, true, false) => 0.7,
        (true, _, _) => base,
        (false, _, true) => base - 0.15,
        (false, _, false) => base,
    };
    let scope = if PROJECT_MARK.is_match(b) {
        Scope::Project
    } else {
        Scope::User
    };
    Some(candidate(Category::Preferences, scope, b, conf))
}

fn candidate(category: Category, scope: Scope, text: &str, confidence: f64) -> Candidate {
    let text = as_fact(text);
    Candidate {
        category,
        scope,
        key: title(&text),
        text,
        confidence,
        evidence: Vec::new(),
    }
}

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

fn user_decision(s: &str, next: Option<&Sentence>) -> Option<Candidate> {
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
fn principle(s: &str) -> Option<Candidate> {
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

// ---------------------------------------------------------------------------
// Assistant decisions

static STOPWORDS: LazyLock<HashSet<&'static str>> = LazyLock::new(|| {
    "the a an and or but of to in on for with at by from is are was were be been it this that these those we you i our your let lets s use using just also so as not no yes do does did will would can could should have has had there here then than into about all any some more most very great good ok okay perfect sure now"
        .split(' ')
        .collect()
});

/// Lowercase content words of `s` (no stopwords, at least three letters).
fn content_words(s: &str) -> HashSet<String> {
    words(s)
        .map(str::to_lowercase)
        .filter(|w| w.chars().count() >= 3 && !STOPWORDS.contains(w.as_str()))
        .collect()
}

/// Decision cues in assistant text; confident only when the preceding user
/// prompt shares at least two content words with the sentence.
fn assistant_decisions(messages: &[Message], i: usize) -> Vec<Candidate> {
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

// ---------------------------------------------------------------------------
// Commands: runs, procedures, incidents

/// What a recognised project command does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Test,
    Lint,
    Format,
    Build,
    Migrate,
    Run,
    Deploy,
}

impl Kind {
    fn purpose(self) -> &'static str {
        match self {
            Kind::Test => "run the tests",
            Kind::Lint => "run the linters and static checks",
            Kind::Format => "format the code",
            Kind::Build => "build the project",
            Kind::Migrate => "migrate the database",
            Kind::Run => "start the app locally",
            Kind::Deploy => "deploy",
        }
    }
}

static COMMAND: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:[A-Z][A-Z0-9_]*=\S+\s+)*(?:cargo\s+(?:build|test|nextest|clippy|fmt|check|bench|run)|(?:npm|pnpm|yarn|bun)\s+(?:run\s+\S+|test|build|lint|ci)|npx\s+(?:vitest|jest|tsc|eslint|prettier|playwright)|pytest|python3?\s+-m\s+(?:pytest|unittest|mypy|ruff|black)|uv\s+run\s+\S+|poetry\s+run\s+\S+|tox|nox|make|just|go\s+(?:test|build|vet|run)|mix\s+(?:test|compile|credo|dialyzer|format|ecto\.\S+|phx\.server|ash\.codegen)|\./gradlew|gradle|mvn|dotnet\s+(?:build|test)|bundle\s+exec\s+\S+|rspec|rake|docker\s+(?:build|compose)|ruff|mypy|eslint|tsc|jest|vitest|deno\s+(?:test|task)|swift\s+(?:build|test)|zig\s+build|ctest|terraform\s+apply|kubectl\s+apply|helm\s+(?:upgrade|install))\b",
    )
});

/// The kind of a recognised command, `None` for anything else: the first
/// [`KIND_WORDS`] entry naming a non-flag argument or a `.`/`:`/`-`/`_` part
/// of one (`ecto.migrate`, `test:unit`); anything else recognised is a build.
fn command_kind(cmd: &str) -> Option<Kind> {
    if !COMMAND.is_match(cmd) {
        return None;
    }
    let parts: Vec<&str> = cmd
        .split_whitespace()
        .filter(|t| !t.starts_with('-'))
        .flat_map(|t| t.split(['.', ':', '-', '_']))
        .collect();
    let kind = KIND_WORDS
        .iter()
        .find(|(ws, _)| ws.iter().any(|w| parts.contains(w)))
        .map_or(Kind::Build, |(_, k)| *k);
    Some(kind)
}

/// Words that give a command its kind, first match wins.
const KIND_WORDS: [(&[&str], Kind); 7] = [
    (&["fmt", "format", "prettier", "black"], Kind::Format),
    (&["migrate", "migration", "migrations"], Kind::Migrate),
    (
        &[
            "deploy", "apply", "upgrade", "install", "publish", "release",
        ],
        Kind::Deploy,
    ),
    (
        &[
            "test", "tests", "pytest", "jest", "vitest", "rspec", "spec", "nextest", "unittest",
            "ctest", "e2e",
        ],
        Kind::Test,
    ),
    (
        &[
            "clippy",
            "lint",
            "credo",
            "dialyzer",
            "mypy",
            "ruff",
            "tsc",
            "vet",
            "check",
            "typecheck",
            "eslint",
        ],
        Kind::Lint,
    ),
    (&["build", "compile"], Kind::Build),
    (&["server", "run", "start", "dev", "serve", "up"], Kind::Run),
];

static CD_PREFIX: LazyLock<Regex> = LazyLock::new(|| re(r"^(?:cd\s+\S+\s*&&\s*)+"));
static NOISE_SUFFIX: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\s*(?:\d?>&\d|\d?>\s*/dev/null|\|\s*(?:tail|head|grep|rg|less|cat|tee)\b.*|;\s*echo\b.*|\|\|\s*(?:true|echo\b.*)|&&\s*echo\b.*)\s*$",
    )
});

/// Flags that change nothing about what a command is for.
static NOISE_FLAGS: LazyLock<Regex> =
    LazyLock::new(|| re(r"\s--seed[= ]\d+\b|\s--(?:no-)?colou?r(?:=\w+)?\b"));

/// `raw` without `cd x &&`, redirections, trailing pipes and noise flags
/// (`--seed 0`, `--color`); `None` for multi-line or here-doc commands.
fn normalize_command(raw: &str) -> Option<String> {
    let first = raw.trim();
    if first.is_empty() || first.contains('\n') || first.contains("<<") || first.contains("$(") {
        return None;
    }
    let mut cmd = CD_PREFIX.replace(first, "").into_owned();
    loop {
        let next = NOISE_SUFFIX.replace(&cmd, "").trim().to_string();
        if next == cmd {
            break;
        }
        cmd = next;
    }
    let cmd = NOISE_FLAGS.replace_all(&cmd, "");
    let cmd = cmd.split_whitespace().collect::<Vec<_>>().join(" ");
    (!cmd.is_empty()).then_some(cmd)
}

/// One execution of a shell command with its outcome.
#[derive(Debug, Clone)]
struct Run {
    cmd: String,
    /// Index of the message that issued the command.
    call: usize,
    /// Index of the message holding the result.
    result: usize,
    outcome: Outcome,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Passed,
    Failed,
    /// Rejected by the user or a tool error unrelated to the command.
    Unknown,
}

/// Every shell command with a known result: Codex `[exec] cmd` tool messages
/// carry their output; a Claude Code `[tool Bash] cmd` line is paired with
/// the Tool message(s) right after its assistant message when the counts
/// match, and a lone call followed directly by the next assistant turn had
/// an empty, successful result.
fn command_runs(messages: &[Message]) -> Vec<Run> {
    let mut runs = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        match m.role {
            Role::Tool => {
                if let Some(rest) = m.text.strip_prefix("[exec] ") {
                    let (line, output) = rest.split_once('\n').unwrap_or((rest, ""));
                    push_run(&mut runs, line, i, i, outcome(m.is_error, output));
                }
            }
            Role::Assistant => claude_runs(messages, i, &mut runs),
            _ => {}
        }
    }
    runs
}

fn claude_runs(messages: &[Message], i: usize, runs: &mut Vec<Run>) {
    let calls: Vec<&str> = messages[i]
        .text
        .lines()
        .filter(|l| l.starts_with("[tool "))
        .collect();
    let results: Vec<usize> = (i + 1..messages.len())
        .take_while(|&j| messages[j].role == Role::Tool)
        .collect();
    let next_is_turn = messages
        .get(i + 1)
        .is_some_and(|m| m.role == Role::Assistant);
    if let ([line], [], true) = (calls.as_slice(), results.as_slice(), next_is_turn) {
        // The parser drops empty successful results (errors are always
        // kept), so a lone call answered by the next turn succeeded silently.
        if let Some(cmd) = line.strip_prefix("[tool Bash] ") {
            push_run(runs, cmd, i, i, Outcome::Passed);
        }
        return;
    }
    if calls.len() != results.len() {
        return;
    }
    for (line, &j) in calls.iter().zip(&results) {
        if let Some(cmd) = line.strip_prefix("[tool Bash] ") {
            let m = &messages[j];
            push_run(runs, cmd, i, j, outcome(m.is_error, &m.text));
        }
    }
}

fn push_run(runs: &mut Vec<Run>, raw: &str, call: usize, result: usize, outcome: Outcome) {
    let outcome = match outcome {
        Outcome::Passed if FILTERED.is_match(raw) => Outcome::Unknown,
        o => o,
    };
    if let Some(cmd) = normalize_command(raw) {
        runs.push(Run {
            cmd,
            call,
            result,
            outcome,
        });
    }
}

static FAILURE_TEXT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?m)^\s*(?:error(?:\[E\d+\])?:|FAILED\b|FAIL\b|test result: FAILED|Traceback \(most recent call last\)|npm ERR!|make: \*\*\*)|\b[1-9]\d* (?:tests? )?(?:failures?|failed|errors?)\b|\*\* \(\w+(?:\.\w+)*(?:Error|Exception)\)|\bfound [1-9]\d* [\w ]{0,30}issues?\b|warnings were emitted",
    )
});
/// Output piped through a filter: a clean result proves nothing.
static FILTERED: LazyLock<Regex> = LazyLock::new(|| re(r"\|\s*(?:grep|rg|head|sed|awk)\b"));
static NOT_RUN: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)doesn't want to proceed|tool use was rejected|<tool_use_error>|operation not permitted|interrupted by user",
    )
});

fn outcome(is_error: bool, output: &str) -> Outcome {
    if NOT_RUN.is_match(output) {
        Outcome::Unknown
    } else if is_error || FAILURE_TEXT.is_match(output) {
        Outcome::Failed
    } else {
        Outcome::Passed
    }
}

/// Whether a command line names files (a one-off invocation, not a procedure).
fn names_files(cmd: &str) -> bool {
    cmd.split_whitespace().skip(1).any(|t| {
        !t.starts_with('-')
            && (t.contains('/')
                || t.contains("::")
                || t.rsplit_once('.').is_some_and(|(_, e)| {
                    (1..=5).contains(&e.len()) && e.chars().all(char::is_alphabetic)
                }))
    })
}

/// Repeated successful build/test commands, one per kind.
fn procedures(messages: &[Message], runs: &[Run]) -> Vec<Candidate> {
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

/// Ids of the messages at `indices`, in transcript order.
fn index_ids(messages: &[Message], indices: &[usize]) -> Vec<String> {
    let mut idx = indices.to_vec();
    idx.sort_unstable();
    idx.dedup();
    let picked: Vec<&Message> = idx.iter().filter_map(|&i| messages.get(i)).collect();
    ids(&picked)
}

static STATED_PROCEDURE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\bto (?:run|execute|build|lint|format|deploy|start)(?: the| all)?(?: unit| integration| e2e| full)? (?:tests?|test suite|build|linters?|checks?|benchmarks?|project|app|server)\b[^`]*`(?P<cmd>[^`]+)`",
    )
});

/// "To run the tests, use `cargo test --all`" style statements.
fn stated_procedures(m: &Message, conf: f64) -> Vec<Candidate> {
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
fn command_incidents(messages: &[Message], runs: &[Run]) -> Vec<Candidate> {
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
fn summary_incidents(m: &Message) -> Vec<Candidate> {
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
    use super::*;

    fn msg(id: &str, role: Role, text: &str) -> Message {
        Message {
            id: Some(id.to_string()),
            role,
            name: None,
            text: text.to_string(),
            timestamp: None,
            is_error: false,
        }
    }

    fn user(id: &str, text: &str) -> Message {
        msg(id, Role::User, text)
    }

    fn asst(id: &str, text: &str) -> Message {
        msg(id, Role::Assistant, text)
    }

    fn tool(id: &str, text: &str, is_error: bool) -> Message {
        Message {
            is_error,
            ..msg(id, Role::Tool, text)
        }
    }

    fn of(cands: &[Candidate], cat: Category) -> Vec<&Candidate> {
        cands.iter().filter(|c| c.category == cat).collect()
    }

    #[test]
    fn preference_use_x_not_y_from_user() {
        let c = extract(&[user("u1", "Use pnpm, not npm!! It is faster.")]);
        let p = of(&c, Category::Preferences);
        assert_eq!(p.len(), 1, "{c:?}");
        assert_eq!(p[0].text, "Use pnpm, not npm.");
        assert_eq!(p[0].evidence, ["u1"]);
        assert_eq!(p[0].scope, Scope::User);
        assert!(p[0].confidence >= 0.75);
    }

    #[test]
    fn preference_always_and_project_scope() {
        let c = extract(&[user(
            "u1",
            "please always run `cargo fmt` before committing",
        )]);
        let p = of(&c, Category::Preferences);
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
        let p = of(&c, Category::Preferences);
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

    #[test]
    fn preferences_only_from_user_messages() {
        let msgs = [
            asst("a1", "Always run the linter before committing."),
            msg("s1", Role::System, "Never use npm, use pnpm instead."),
        ];
        assert!(extract(&msgs).is_empty());
    }

    #[test]
    fn pasted_documents_are_not_prompts() {
        let doc = format!(
            "Your task is to create a detailed summary.\n{}",
            "You MUST never skip this.\n".repeat(3)
        );
        assert!(extract(&[user("u1", &doc)]).is_empty());
        let long = "- Always use tabs.\n".repeat(20);
        assert!(extract(&[user("u2", &long)]).is_empty());
    }

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

    fn run(id: &str, cmd: &str, out: &str, err: bool) -> [Message; 2] {
        [
            asst(&format!("{id}c"), &format!("[tool Bash] {cmd}")),
            tool(&format!("{id}r"), out, err),
        ]
    }

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
    fn pipe_masked_failures_count_as_failures() {
        assert_eq!(
            outcome(false, "Finished in 0.3s\n12 tests, 2 failures"),
            Outcome::Failed
        );
        assert_eq!(outcome(false, "12 tests, 0 failures"), Outcome::Passed);
        assert_eq!(
            outcome(true, "The user doesn't want to proceed with this tool use."),
            Outcome::Unknown
        );
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
    fn codex_exec_messages_are_runs() {
        let msgs = [
            tool("c1", "[exec] make build\nok", false),
            tool("c2", "[exec] make build\nok", false),
        ];
        let p = extract(&msgs);
        assert_eq!(of(&p, Category::Procedures)[0].evidence, ["c1", "c2"]);
    }

    #[test]
    fn stated_procedure_from_user() {
        let c = extract(&[user("u1", "to run the tests, use `pytest -q tests`")]);
        let p = of(&c, Category::Procedures);
        assert_eq!(p.len(), 1, "{c:?}");
        assert_eq!(p[0].confidence, 0.8);
        assert_eq!(p[0].key, "run the tests: pytest -q tests");
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
    fn no_chain_of_thought_or_code_dump() {
        let msgs = [
            user("u1", "hi"),
            asst("a1", "Hmm, maybe we decided to use redis? Wait, I think we should go with Postgres.\n```\nlet's use = 1;\nwe decided = 2;\n```"),
        ];
        assert!(extract(&msgs)
            .iter()
            .all(|c| c.confidence < 0.6 || c.category != Category::Decisions));
        assert!(extract(&msgs).iter().all(|c| !c.text.contains("```")));
    }

    #[test]
    fn secrets_are_never_emitted() {
        let key = format!("ghp_{}", "a1B2c3D4e5".repeat(4));
        let msgs = [
            user(
                "u1",
                &format!("always export GITHUB_TOKEN={key} before deploying"),
            ),
            user("u2", "we decided to use password=Hunter2-Xy9 for staging"),
        ];
        let c = extract(&msgs);
        assert!(c.iter().all(|c| !contains_secret(&c.text)), "{c:?}");
        assert!(c.is_empty(), "{c:?}");
    }

    #[test]
    fn text_and_key_are_capped() {
        let long = format!("always {}", "use the shared helper module ".repeat(30));
        let c = extract(&[user("u1", &long)]);
        assert!(c.is_empty() || c.iter().all(|c| c.text.chars().count() <= MAX_TEXT_CHARS));
        assert!(cut_text(&"word ".repeat(100), 20).chars().count() <= 20);
        assert!(title(&"abcdef ".repeat(20)).chars().count() <= MAX_KEY_CHARS);
    }

    #[test]
    fn silent_success_and_mismatched_results() {
        // A lone Bash call answered directly by the next turn had an empty,
        // successful result (the parser drops those).
        let msgs = [
            asst("a1", "[tool Bash] mix compile --warnings-as-errors 2>&1"),
            asst(
                "a2",
                "Clean compile.\n[tool Bash] mix compile --warnings-as-errors",
            ),
            asst("a3", "Clean again."),
        ];
        let c = extract(&msgs);
        let p = of(&c, Category::Procedures);
        assert_eq!(p.len(), 1, "{c:?}");
        assert_eq!(
            p[0].text,
            "To build the project, run `mix compile --warnings-as-errors`."
        );
        assert_eq!(p[0].evidence, ["a1", "a2"]);
        // Two calls, one result: unpaired, so nothing is known.
        let msgs = [
            asst("b1", "[tool Bash] make test\n[tool Bash] make lint"),
            tool("b2", "ok", false),
            asst("b3", "[tool Bash] make test\n[tool Bash] make lint"),
            tool("b4", "ok", false),
        ];
        assert!(extract(&msgs).is_empty());
    }

    #[test]
    fn grep_filtered_output_proves_nothing() {
        let mut msgs = Vec::new();
        msgs.extend(run("1", "cargo clippy 2>&1 | grep warning", "", false));
        msgs.extend(run("2", "cargo clippy 2>&1 | grep warning", "", false));
        assert!(of(&extract(&msgs), Category::Procedures).is_empty());
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

    #[test]
    fn vague_principles_and_narrated_procedures_are_weak() {
        let c = extract(&[user("u1", "performance is crucial")]);
        assert!(c.iter().all(|c| c.confidence < 0.6), "{c:?}");
        let c = extract(&[asst("a1", "Had to run `mix format` before commit.")]);
        assert!(of(&c, Category::Procedures).is_empty(), "{c:?}");
    }

    #[test]
    fn normalize_strips_noise() {
        assert_eq!(
            normalize_command("cd /x && mix test 2>&1 | tail -5").as_deref(),
            Some("mix test")
        );
        assert_eq!(normalize_command("git commit -m \"$(cat <<'EOF'"), None);
        assert_eq!(command_kind("mix credo --strict"), Some(Kind::Lint));
        assert_eq!(command_kind("npm run build"), Some(Kind::Build));
        assert_eq!(command_kind("mix ecto.migrate"), Some(Kind::Migrate));
        assert_eq!(
            command_kind("mix dialyzer --format short"),
            Some(Kind::Lint)
        );
        assert_eq!(command_kind("cargo run --release"), Some(Kind::Run));
        assert_eq!(command_kind("git push"), None);
        assert_eq!(
            normalize_command("mix test --seed 0").as_deref(),
            Some("mix test")
        );
        assert!(names_files("mix test test/a_test.exs"));
        assert!(!names_files("cargo test --all-targets"));
    }
}
