//! Claude Code transcripts as Claude Code writes them: one JSONL session
//! file (user prompts, assistant lines, tool calls and their results with
//! the structured `toolUseResult` duplicate, progress lines, snapshots,
//! summaries; subagent files beside their session), and corpora of them
//! planned to a total size (`corpus.rs`). The lines themselves are written
//! in `lines.rs`.

mod corpus;
mod lines;

use std::path::PathBuf;

pub use corpus::{generate, generate_one, plan, Corpus};

use crate::{Draw, Mix, Text, Vocab};
use lines::Session;

/// Sizes of the pieces of a generated session.
#[derive(Clone, Copy, Debug)]
pub struct Profile {
    /// Typical tool output, bytes (log-uniform between these).
    pub out_min: usize,
    pub out_max: usize,
    /// Per mille of tool results that are big (30 KB - 400 KB).
    pub big_per_mille: u32,
    /// Per mille of tool results that are errors.
    pub error_per_mille: u32,
    /// Words of the first prompt (min, max).
    pub first_prompt: (usize, usize),
}

impl Profile {
    /// Sessions of 100 KB - 2 MB with the occasional huge output.
    pub const FULL: Profile = Profile {
        out_min: 100,
        out_max: 12_000,
        big_per_mille: 25,
        error_per_mille: 70,
        first_prompt: (30, 250),
    };
    /// Sessions of 1-4 KB (many small files).
    pub const SMALL: Profile = Profile {
        out_min: 60,
        out_max: 600,
        big_per_mille: 0,
        error_per_mille: 70,
        first_prompt: (4, 60),
    };
}

/// One session file to generate.
#[derive(Clone, Debug)]
pub struct Spec {
    /// Path relative to the corpus folder.
    pub rel: PathBuf,
    /// Bytes to write (the last turn is cut at a line end past it).
    pub target: usize,
    /// The seed of the file's text.
    pub seed: u64,
    pub session_id: String,
    pub cwd: String,
    pub branch: String,
    /// A subagent's id: the file is a sidechain of `session_id`.
    pub agent_id: Option<String>,
    /// Unix milliseconds of the first line.
    pub start_ms: i64,
    pub profile: Profile,
}

/// The bytes of the session `spec` describes: whole lines, close to
/// `spec.target` bytes, never cut inside the first exchange.
pub fn session(spec: &Spec, vocab: &Vocab) -> Vec<u8> {
    let mut t = Text::new(vocab, crate::Rng::with_seed(spec.seed), Mix::TRANSCRIPT);
    let model = t.rng.pick(crate::words::MODELS);
    let mut s = Session::new(t, spec, model);
    let sub = spec.agent_id.is_some();
    if !sub {
        for _ in 0..s.t.rng.usize(1..=3) {
            s.snapshot();
        }
    }
    let mut first = true;
    let mut keep = 0;
    while s.out.len() < spec.target {
        let words = if first {
            let (lo, hi) = spec.profile.first_prompt;
            s.t.rng.usize(lo..=hi)
        } else {
            s.t.rng.log_uniform(4, 300)
        };
        first = false;
        s.user_prompt(words);
        if !sub && s.t.rng.chance(300) {
            s.snapshot();
        }
        // Tool loop until the assistant answers without a tool call.
        let mut steps = 0;
        while !s.assistant_turn() && steps < 12 && s.out.len() < spec.target {
            steps += 1;
        }
        if s.t.rng.chance(400) {
            s.system();
        }
        if keep == 0 {
            keep = s.out.len();
        }
    }
    if !sub && s.t.rng.chance(300) {
        s.summary();
    }
    // The last turn may overshoot (big outputs): cut at the last line end
    // within the target, so a corpus's size stays close to the nominal one.
    let mut out = s.out.into_bytes();
    if out.len() > spec.target + spec.target / 8 {
        if let Some(i) = out[..spec.target].iter().rposition(|&b| b == b'\n') {
            out.truncate((i + 1).max(keep));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(seed: u64, target: usize, agent: bool) -> Spec {
        Spec {
            rel: PathBuf::from("s.jsonl"),
            target,
            seed,
            session_id: "5e55-1d".into(),
            cwd: "/home/dev/projects/atlas".into(),
            branch: "main".into(),
            agent_id: agent.then(|| "a1b2c3d".to_string()),
            start_ms: 1_748_736_000_000,
            profile: Profile::FULL,
        }
    }

    #[test]
    fn a_session_is_json_lines_near_its_target_size() {
        let v = Vocab::new(1);
        for (seed, target, agent) in [(1, 200_000, false), (2, 60_000, true)] {
            let out = session(&spec(seed, target, agent), &v);
            assert!(
                out.len() > target / 2 && out.len() < target * 3,
                "{}",
                out.len()
            );
            let text = std::str::from_utf8(&out).unwrap();
            let mut parents = 0;
            for line in text.lines() {
                let l: serde_json::Value = serde_json::from_str(line).unwrap();
                assert!(l["type"].is_string(), "{line}");
                parents += usize::from(l["parentUuid"].is_string());
                if agent && l.get("agentId").is_some() {
                    assert_eq!(l["isSidechain"], true);
                }
            }
            assert!(parents > 10);
            assert!(text.contains("\"type\":\"tool_result\""));
            assert!(text.contains("\"toolUseResult\""));
        }
    }

    #[test]
    fn same_spec_same_bytes() {
        let v = Vocab::new(1);
        let a = session(&spec(7, 50_000, false), &v);
        assert_eq!(a, session(&spec(7, 50_000, false), &v));
        assert_ne!(a, session(&spec(8, 50_000, false), &v));
    }
}
