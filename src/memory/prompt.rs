//! The prompt hook's context, session-aware: what a `UserPromptSubmit`
//! hook injects, without repeating in a session what it already injected
//! there.
//!
//! A long session asks about one task prompt after prompt, and the same
//! hits come back each time. Every session keeps the references of the
//! hits injected into it since it started or last compacted (see
//! `hook_session`) and each later prompt leaves them out, unless it asks
//! for them again ("remind me", "once more"). What is left is rendered as
//! before; when nothing is left, nothing is injected.
//! `recall.hook_repeats = true` turns this off.

use std::path::Path;

use super::{Memory, RecallOptions};
use crate::error::Result;
use crate::render::{
    hit_reference, prompt_text, render_prompt_shown, Named, PromptOptions, PROMPT_TOKENS,
};
use crate::text::estimate_tokens;

/// Evidence this far beyond chance (a hundred million to one that a
/// session holds the words at random) points at its session however many
/// sessions hold its rarest words together. The bound on sessions
/// together is there for a template's words, each common and so weak; a
/// long ticket's function names, error text and paths are each rare, and
/// the few sessions that worked on that code hold several of them.
const OVERWHELMING: f64 = 1e-8;

/// What one prompt gets.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PromptContext {
    /// The Markdown to inject (empty: inject nothing).
    pub text: String,
    /// Its estimated tokens.
    pub tokens: usize,
    /// Hits left out because this session already had them.
    pub repeats_left_out: usize,
    /// Hits left out below the relevance bar
    /// ([`crate::config::RecallConfig::hook_min_score`] and
    /// `hook_min_coverage`).
    pub below_bar: usize,
    /// Tokens injected into this session so far, this prompt included.
    pub session_tokens: usize,
}

/// Words by which a prompt asks for what it was shown before ("again"
/// alone is no such word: "it times out again" asks for nothing twice).
const AGAIN: &[&str] = &["remind", "reminder", "reminders"];

fn asks_again(prompt: &str) -> bool {
    let words: Vec<&str> = crate::recall::sanitize::question_words(prompt).collect();
    let once_more = words
        .windows(2)
        .any(|w| w[0].eq_ignore_ascii_case("once") && w[1].eq_ignore_ascii_case("more"));
    once_more
        || words
            .iter()
            .any(|w| AGAIN.iter().any(|a| w.eq_ignore_ascii_case(a)))
}

impl Memory {
    /// The context for one prompt of `session` (a launcher's session id).
    /// Reads only, like [`Memory::recall_for_hook`]; the one write is the
    /// session's small state file, in a home that already exists.
    pub fn prompt_context(&self, prompt: &str, session: Option<&str>) -> Result<PromptContext> {
        self.prompt_context_in(prompt, session, None)
    }

    /// [`prompt_context`](Self::prompt_context) for a session whose Claude
    /// Code `transcript` tells the id it is indexed under (see
    /// [`Memory::note_session`]), read once per session.
    pub fn prompt_context_in(
        &self,
        prompt: &str,
        session: Option<&str>,
        transcript: Option<&Path>,
    ) -> Result<PromptContext> {
        if prompt.trim().is_empty() {
            return Ok(PromptContext::default());
        }
        let opts = RecallOptions {
            prompt: true,
            ..RecallOptions::default()
        };
        let mut given = session.map(|s| self.read_session(s)).unwrap_or_default();
        if given.indexed_as.is_none() {
            given.indexed_as = transcript.and_then(crate::ingest::claude_code::indexed_session_id);
        }
        let mut req = self.request(prompt, opts)?;
        // A resumed session's transcript is indexed under the session it
        // resumed, whose turns are in front of the agent already.
        req.exclude_session = given
            .indexed_as
            .clone()
            .or_else(|| session.map(str::to_string));
        req.evidence = true;
        req.cover_bar = self.config.recall.hook_min_coverage;
        let mut resp = self.recall_for_hook(&req)?;
        tracing::debug!(timings = ?resp.timings_ms, "prompt hook: recall");
        if self.config.recall.hook_repeats {
            given.shown.clear();
        }
        let all = resp.hits.len();
        let named = Named::of(&resp.query);
        self.relevance_bar(&mut resp, &named, None);
        // The semantic gate only ever leaves out, so the model is loaded
        // only for a prompt the words would give something: recall again
        // with the candidates' cosines (the same hits: nothing is rescued)
        // and judge them with the gate.
        if !resp.hits.is_empty() {
            if let Some((gate, dense)) = self.gate_query(prompt) {
                req.dense = Some(dense);
                resp = self.recall_for_hook(&req)?;
                self.relevance_bar(&mut resp, &named, Some(gate));
            }
        }
        let below_bar = all - resp.hits.len();
        let before = resp.hits.len();
        if !asks_again(prompt) {
            resp.hits
                .retain(|h| !given.shown.contains(&given_key(h, &named)));
        }
        let repeats_left_out = before - resp.hits.len();
        let (text, shown) = render_prompt_shown(
            &resp,
            PromptOptions {
                max_tokens: PROMPT_TOKENS,
            },
        );
        let tokens = if text.is_empty() {
            0
        } else {
            estimate_tokens(&text)
        };
        given.tokens += tokens;
        let shown: std::collections::HashSet<String> = shown.into_iter().collect();
        given.shown.extend(
            resp.hits
                .iter()
                .filter(|h| shown.contains(&hit_reference(h)))
                .map(|h| given_key(h, &named)),
        );
        if let Some(s) = session {
            self.note_project(&mut given);
            self.write_session(s, &given);
        }
        Ok(PromptContext {
            text,
            tokens,
            repeats_left_out,
            below_bar,
            session_tokens: given.tokens,
        })
    }

    /// Keep the hits that clear the relevance bar. Every hit must score
    /// at least `recall.hook_min_score` of the best hit's (scores are
    /// relative within one answer). Pinned records always pass.
    ///
    /// With a `gate` (`[semantic] hook_gate`), a hit whose cosine with the
    /// prompt is below it is left out; one without a cosine is not judged
    /// by it.
    ///
    /// A record or a ticket must hold `recall.hook_min_coverage` of the
    /// prompt's weight in its title and text (the words memory holds,
    /// weighted by rarity among passages).
    ///
    /// A session passage is judged as evidence for its session (see
    /// `recall::evidence`), with the prompt's words weighed by how few of
    /// the project's sessions hold them, and the words no session holds
    /// counted too:
    /// - the words it holds must be rarer than chance: fewer than one
    ///   session would hold them all were they independent;
    /// - and few sessions (`recall.hook_max_sessions`) may have a passage
    ///   holding them together: a prompt template's or a greeting's words
    ///   stand together in every session, however rare each is; unless
    ///   the words are overwhelming evidence ([`OVERWHELMING`]);
    /// - its session's matching passages must hold `hook_min_coverage` of
    ///   the prompt's weight, and at least
    ///   [`RELATIVE_COVER`](crate::recall::evidence::RELATIVE_COVER) of what
    ///   the best-covering session holds: a long ticket's words are spread over
    ///   the session that worked on it, and a prompt whose own subject is
    ///   nowhere in memory is not covered by sessions that share its other
    ///   words.
    fn relevance_bar(&self, resp: &mut crate::recall::Response, named: &Named, gate: Option<f64>) {
        let (min_score, min_coverage) = (
            self.config.recall.hook_min_score,
            self.config.recall.hook_min_coverage,
        );
        // Judged on what the prompt would show: a passage of nothing but
        // tool output the prompt names nothing in is not shown, so it sets
        // no bar for the others, and words only such output holds cover
        // nothing.
        let shown: Vec<Option<String>> = resp.hits.iter().map(|h| prompt_text(h, named)).collect();
        let best = resp
            .hits
            .iter()
            .zip(&shown)
            .filter(|(_, t)| t.is_some())
            .map(|(h, _)| h.score)
            .fold(0.0, f64::max);
        let judge = crate::recall::Scorer::for_coverage(&resp.terms);
        let evidence = crate::recall::Scorer::for_coverage(&resp.evidence);
        let max_sessions = i64::from(self.config.recall.hook_max_sessions);
        let third = resp.evidence_sessions / 3;
        let best_cover = resp.session_cover.values().copied().fold(0.0, f64::max);
        let mut shown = shown.into_iter();
        resp.hits.retain(|h| {
            let Some(text) = shown.next().flatten() else {
                return false;
            };
            if h.pinned {
                return true;
            }
            // The semantic gate: a hit whose vector is far from the
            // prompt's is about something else, whatever words it shares.
            // One without a vector of this model is judged by words alone.
            if gate.zip(h.cosine).is_some_and(|(gate, cos)| cos < gate) {
                tracing::debug!(hit = %h.id, cosine = h.cosine, "prompt hook: below the semantic gate");
                return false;
            }
            if h.score < min_score * best {
                return false;
            }
            let shown_text = text.as_str();
            if h.kind == crate::recall::HitKind::Session && !resp.evidence.is_empty() {
                // A session is judged by the words that tell sessions
                // apart, those memory does not hold included (see
                // `recall::evidence`): it must hold enough of them, and
                // enough of the prompt.
                let (held, _) = evidence.held(&format!("{}\n{shown_text}", h.title));
                // Not counted for a hit whose cover fails the bar below.
                let together = resp.together.get(&h.id).copied();
                let pointed = max_sessions == 0
                    || together.is_none_or(|n| n <= max_sessions.min(third).max(1))
                    || crate::recall::evidence::beyond_chance(
                        held,
                        resp.evidence_sessions,
                        OVERWHELMING,
                    );
                let covered = resp.session_cover.get(&h.id).copied().unwrap_or(0.0);
                tracing::debug!(
                    hit = %h.id,
                    together = ?together,
                    held,
                    sessions = resp.evidence_sessions,
                    covered,
                    best_cover,
                    "prompt hook: a session hit's evidence"
                );
                return pointed
                    && crate::recall::evidence::beyond_chance(
                        held,
                        resp.evidence_sessions,
                        self.config.recall.hook_chance,
                    )
                    && crate::recall::evidence::covers(covered, best_cover, min_coverage);
            }
            min_coverage <= 0.0 || judge.covered(&format!("{}\n{}", h.title, text)) >= min_coverage
        });
    }

    /// The semantic gate (`[semantic] hook_gate`) and the prompt embedded
    /// for it, asking the dense side for the candidates' cosines only: it
    /// rescues nothing here. `None` when the gate is off, and when the
    /// model does not load (logged: the hook then judges by words, it
    /// never fails for an opt-in feature).
    fn gate_query(&self, prompt: &str) -> Option<(f64, crate::recall::DenseQuery)> {
        let gate = self.config.semantic.hook_gate?;
        match self.dense_query(prompt) {
            Ok(mut q) => {
                q.rescue.most = 0;
                Some((gate, q))
            }
            Err(e) => {
                tracing::debug!("prompt hook: no semantic gate: {e}");
                None
            }
        }
    }
}

/// What a session was given: the hit and its text as the prompt showed it
/// for a prompt naming `named`, so a record edited since (a fact corrected
/// mid-session) is given again, and so is a passage whose tool output a
/// later prompt names (it was shown without it).
fn given_key(h: &crate::recall::Hit, named: &Named) -> String {
    let shown = prompt_text(h, named).unwrap_or_default();
    let text = blake3::hash(shown.as_bytes()).to_hex();
    format!("{} {}", hit_reference(h), &text[..12])
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::memory::test_memory;
    use crate::memory::NewRecord;
    use crate::store::Scope;

    pub(in crate::memory) fn setup() -> (tempfile::TempDir, Memory) {
        let tmp = tempfile::tempdir().unwrap();
        let mem = test_memory(tmp.path());
        let dir = mem.ensure_scope(Scope::Project).unwrap();
        for (key, text) in [
            ("cache", "The walrus cache lives in Redis, port 6390."),
            ("deploy", "Deploy the walrus service with make release."),
        ] {
            let new = NewRecord {
                key: key.into(),
                text: text.into(),
                category: None,
                pinned: None,
                importance: None,
                keywords: None,
                source: crate::records::Source::Manual,
                secrets: crate::index::SecretPolicy::Refuse,
                keep_generated: false,
            };
            mem.upsert(&dir, new).unwrap();
        }
        (tmp, mem)
    }

    #[test]
    fn a_session_is_not_given_the_same_hit_twice() -> Result<()> {
        let (_t, mem) = setup();
        let first = mem.prompt_context("where is the walrus cache?", Some("s1"))?;
        assert!(first.text.contains("port 6390"), "{first:?}");
        assert!(first.tokens > 0);
        let second = mem.prompt_context("and the walrus cache port?", Some("s1"))?;
        assert!(!second.text.contains("port 6390"), "{second:?}");
        assert!(second.repeats_left_out > 0);
        assert_eq!(second.session_tokens, first.tokens + second.tokens);
        // Asked again, it is given again; another session gets it too.
        let again = mem.prompt_context("remind me where the walrus cache is", Some("s1"))?;
        assert!(again.text.contains("port 6390"), "{again:?}");
        let other = mem.prompt_context("where is the walrus cache?", Some("s2"))?;
        assert!(other.text.contains("port 6390"), "{other:?}");
        // Without a session, or with repeats on, nothing is left out.
        let none = mem.prompt_context("where is the walrus cache?", None)?;
        assert!(none.text.contains("port 6390"));
        let mut repeats = mem.clone();
        repeats.config.recall.hook_repeats = true;
        let r = repeats.prompt_context("where is the walrus cache?", Some("s1"))?;
        assert!(r.text.contains("port 6390"));
        Ok(())
    }

    /// Issue 25 part 2: a hit that holds little of the prompt is not
    /// injected, and a prompt no hit covers well gets nothing at all.
    #[test]
    fn hits_below_the_relevance_bar_are_not_injected() -> Result<()> {
        let (_t, mem) = setup();
        // The deploy record holds only "walrus" of this prompt.
        let got = mem.prompt_context("walrus cache port in redis", None)?;
        assert!(got.text.contains("port 6390"), "{got:?}");
        assert!(!got.text.contains("make release"), "{got:?}");
        assert_eq!(got.below_bar, 1);
        let mut open = mem.clone();
        open.config.recall.hook_min_score = 0.0;
        open.config.recall.hook_min_coverage = 0.0;
        let all = open.prompt_context("walrus cache port in redis", None)?;
        assert!(all.text.contains("make release"), "{all:?}");
        assert_eq!(all.below_bar, 0);
        // Each record holds one of the two words: neither clears a bar
        // of 0.9, and nothing is injected.
        let mut strict = mem.clone();
        strict.config.recall.hook_min_coverage = 0.9;
        let none = strict.prompt_context("redis release", None)?;
        assert_eq!((none.text.as_str(), none.below_bar), ("", 2), "{none:?}");
        let both = open.prompt_context("redis release", None)?;
        assert!(both.text.contains("port 6390") && both.text.contains("make release"));
        Ok(())
    }

    fn session_hit(id: &str, score: f64, text: &str) -> crate::recall::Hit {
        crate::recall::Hit {
            rank: 1,
            score,
            kind: crate::recall::HitKind::Session,
            scope: Scope::Project,
            id: id.into(),
            category: None,
            title: "a session".into(),
            snippet: String::new(),
            text: text.into(),
            source: crate::recall::HitSource {
                session_id: Some(id.into()),
                message_range: Some([0, 1]),
                ..crate::recall::HitSource::at(format!("{id}.jsonl"))
            },
            pinned: false,
            importance: 0,
            updated: None,
            explain: None,
            stale_by: None,
            cosine: None,
        }
    }

    /// Review finding: the bar was judged on the whole text, so a passage
    /// of nothing but tool output (never shown) could be the best hit and
    /// push every shown hit below half its score.
    #[test]
    fn the_bar_is_judged_on_what_the_prompt_shows() -> Result<()> {
        let (_t, mem) = setup();
        let dump = format!("tool: {}", "walrus migration log line ".repeat(20));
        let mut resp = crate::recall::Response {
            query: "walrus migration".into(),
            terms: ["walrus", "migration"]
                .map(|w| crate::recall::plan::Weighted {
                    term: crate::recall::Term {
                        text: w.into(),
                        kind: crate::recall::TermKind::Word,
                    },
                    df: 1,
                    exact: true,
                    weight: 1.0,
                })
                .to_vec(),
            hits: vec![
                session_hit("s1", 1.0, &dump),
                session_hit("s2", 0.4, "assistant: the walrus migration is done"),
            ],
            timings_ms: Default::default(),
            ..Default::default()
        };
        mem.relevance_bar(&mut resp, &Named::of("walrus migration"), None);
        let ids: Vec<&str> = resp.hits.iter().map(|h| h.id.as_str()).collect();
        assert_eq!(ids, ["s2"]);
        Ok(())
    }

    /// The semantic gate (`[semantic] hook_gate`): a hit whose vector is
    /// far from the prompt's is left out however many words it shares; one
    /// with no vector of the model is judged by words alone; a pinned
    /// record always passes. Off (the default), cosines change nothing.
    #[test]
    fn the_semantic_gate_leaves_out_hits_far_from_the_prompt() {
        let (_t, mem) = setup();
        let resp = || {
            let mut near = session_hit("near", 1.0, "assistant: the walrus migration is done");
            near.cosine = Some(0.41);
            let mut far = session_hit("far", 1.0, "assistant: a walrus migration song");
            far.cosine = Some(0.12);
            let none = session_hit("none", 1.0, "assistant: walrus migration notes");
            let mut pinned = session_hit("pinned", 1.0, "assistant: walrus migration rules");
            (pinned.pinned, pinned.cosine) = (true, Some(-0.2));
            crate::recall::Response {
                query: "walrus migration".into(),
                hits: vec![near, far, none, pinned],
                ..Default::default()
            }
        };
        let mut open = mem.clone();
        open.config.recall.hook_min_coverage = 0.0;
        let kept = |gate: Option<f64>| {
            let mut r = resp();
            open.relevance_bar(&mut r, &Named::of("walrus migration"), gate);
            r.hits.into_iter().map(|h| h.id).collect::<Vec<_>>()
        };
        assert_eq!(kept(None), ["near", "far", "none", "pinned"]);
        assert_eq!(kept(Some(0.25)), ["near", "none", "pinned"]);
        assert_eq!(kept(Some(0.5)), ["none", "pinned"]);
    }

    /// Review finding: a passage shown without its tool output counted as
    /// given whole, so a later prompt naming something in that output got
    /// nothing.
    #[test]
    fn a_passage_shown_without_its_output_is_given_again_when_the_output_is_named() {
        let text = format!(
            "assistant: [tool Bash] cat keys.txt\n\ntool: {}\n\nassistant: rotated",
            "key material line ".repeat(20)
        );
        let h = session_hit("s1", 1.0, &text);
        let key = |q: &str| given_key(&h, &Named::of(q));
        let plain = key("how did we rotate the keys");
        assert_eq!(plain, key("and how were the keys rotated"));
        assert_ne!(plain, key("what was in keys.txt"));
    }

    /// Review finding: a record corrected mid-session kept its id, so its
    /// new text was never given to the session that had the old one.
    #[test]
    fn a_record_edited_since_is_given_again() -> Result<()> {
        let (_t, mem) = setup();
        let first = mem.prompt_context("where is the walrus cache?", Some("s1"))?;
        assert!(first.text.contains("port 6390"));
        let dir = mem.project()?.dir;
        let fix = NewRecord {
            key: "cache".into(),
            text: "The walrus cache lives in Redis, port 6391 since the move.".into(),
            category: None,
            pinned: None,
            importance: None,
            keywords: None,
            source: crate::records::Source::Manual,
            secrets: crate::index::SecretPolicy::Refuse,
            keep_generated: false,
        };
        mem.upsert(&dir, fix)?;
        let again = mem.prompt_context("where is the walrus cache?", Some("s1"))?;
        assert!(again.text.contains("port 6391"), "{again:?}");
        Ok(())
    }
}
