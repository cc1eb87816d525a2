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
//!   Scope is [`Scope::User`] only when the text is about the person
//!   (`remember`'s test: "I prefer …", "my editor is …"), else
//!   [`Scope::Project`]: "use pnpm, not npm" is the codebase's convention.
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
//!
//! # Layout
//! One file per family of rules, each with its tests: `preferences`,
//! `principles` and `decisions` read prose; `commands` turns tool messages
//! into runs, from which `procedures` and `incidents` are told; `sentences`
//! is the prose reader they share, and `candidate` the shape of what they
//! propose (text, key, evidence) and the final merge. This file holds the
//! limits and the dispatch over one session.

mod candidate;
mod commands;
mod decisions;
mod incidents;
mod preferences;
mod principles;
mod procedures;
mod sentences;
#[cfg(test)]
mod test_transcripts;

use std::sync::LazyLock;

use regex::Regex;

use crate::ingest::model::{Message, Role};
use crate::records::Category;
use crate::store::Scope;

pub use candidate::Candidate;
use candidate::{finish, ids};
use commands::command_runs;
use decisions::{assistant_decisions, user_decision};
use incidents::{command_incidents, summary_incidents};
use preferences::preference;
use principles::principle;
use procedures::{procedures, stated_procedures};
use sentences::{sentences, usable};

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
            // A person's statement is filed as `remember` files the same
            // text: one category for one fact, whichever way it arrived.
            c.category = crate::memory::classify(&c.text).0;
            c.evidence = ids(&[m]);
            out.push(c);
        }
    }
    out.extend(stated_procedures(m, 0.8));
    out
}

/// A constant pattern of a rule, compiled.
pub(crate) fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("rule pattern is a valid constant regex")
}

#[cfg(test)]
mod tests {
    use super::test_transcripts::{asst, msg, user};
    use super::*;

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
}
