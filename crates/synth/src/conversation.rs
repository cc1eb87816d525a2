//! A session as plain messages: who speaks, what they say (prose about the
//! session's topic, some code), when, and the session's own title, cwd and
//! branch. The recall bench cuts these into passages with recall's
//! chunker; the torture suite writes them as neutral transcripts.

use crate::text::uuid;
use crate::{stream, tags, Draw, Mix, Text, Vocab};

/// Who wrote a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
    Tool,
}

impl Role {
    /// The name transcripts use.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// One message.
#[derive(Clone, Debug)]
pub struct Message {
    pub role: Role,
    pub text: String,
    /// Words the generator wrote (a code line counts as four).
    pub words: usize,
    /// Unix seconds.
    pub ts: i64,
    pub id: String,
}

/// How long messages are, in words (log-uniform in each range).
#[derive(Clone, Copy, Debug)]
pub struct Lengths {
    pub user: (usize, usize),
    pub assistant: (usize, usize),
    pub tool: (usize, usize),
    /// Per mille of assistant messages that end in a code block.
    pub code: u32,
}

impl Lengths {
    /// Short prompts, long answers, tool output in between.
    pub const CHAT: Lengths = Lengths {
        user: (8, 120),
        assistant: (20, 450),
        tool: (10, 200),
        code: 200,
    };

    /// Every message `n` words, no code.
    pub const fn fixed(n: usize) -> Lengths {
        Lengths {
            user: (n, n),
            assistant: (n, n),
            tool: (n, n),
            code: 0,
        }
    }
}

/// Session `s` of a corpus: its metadata, and its messages as an endless
/// iterator (take as many as needed; the same seed gives the same ones).
pub struct Conversation<'v> {
    /// The session's text generator (topic words at 8%).
    pub text: Text<'v>,
    pub session_id: String,
    pub title: String,
    /// A short project name; `cwd` is `/home/dev/{project}`.
    pub project: &'static str,
    pub cwd: String,
    pub branch: String,
    /// Unix seconds of the first message: within the year before `now`.
    pub first_ts: i64,
    ts: i64,
    n: usize,
    lengths: Lengths,
}

impl<'v> Conversation<'v> {
    /// Session `s` of the corpus of `seed` (the vocabulary's seed gives the
    /// topic), set in the year before `now`.
    pub fn new(vocab: &'v Vocab, seed: u64, s: usize, now: i64, lengths: Lengths) -> Self {
        let mut text = Text::new(vocab, stream(seed, tags::SESSION, s as u64), Mix::CHAT)
            .with_topic(vocab.topic(s), 80);
        let session_id = text.uuid();
        let title = text.title();
        let project = text.rng.pick(&["app", "api", "web", "core", "infra"]);
        let branch = match text.topic_head() {
            Some(t) if !text.rng.chance(300) => format!("feat/{t}"),
            _ => "main".to_string(),
        };
        let first_ts = now - 365 * 86_400 + text.rng.i64(0..365 * 86_400);
        Conversation {
            text,
            session_id,
            title,
            project,
            cwd: format!("/home/dev/{project}"),
            branch,
            first_ts,
            ts: first_ts,
            n: 0,
            lengths,
        }
    }
}

impl Iterator for Conversation<'_> {
    type Item = Message;

    /// The next message: users on even turns, the assistant (or, one time
    /// in ten, a tool) on odd ones, 5 s to 4 min apart.
    fn next(&mut self) -> Option<Message> {
        let t = &mut self.text;
        let role = match (self.n % 2, t.rng.usize(..10)) {
            (0, _) => Role::User,
            (_, 0) => Role::Tool,
            _ => Role::Assistant,
        };
        let l = self.lengths;
        let (lo, hi) = match role {
            Role::User => l.user,
            Role::Tool => l.tool,
            Role::Assistant => l.assistant,
        };
        let n = t.rng.log_uniform(lo, hi);
        let mut text = String::with_capacity(n * 7);
        let mut words = t.prose(&mut text, n);
        if role == Role::Assistant && t.rng.chance(l.code) {
            let lines = t.rng.usize(2..=8);
            text.push_str("\n```\n");
            t.code(&mut text, lines, 0);
            text.push_str("```");
            words += lines * 4;
        }
        self.ts += t.rng.i64(5..=240);
        self.n += 1;
        Some(Message {
            role,
            text,
            words,
            ts: self.ts,
            id: uuid(&mut t.rng),
        })
    }
}

/// `total` split into parts of `lo..=hi` (log-uniform; the last may be
/// smaller): the sizes of a corpus's sessions, in order.
pub fn sizes(seed: u64, total: usize, lo: usize, hi: usize) -> Vec<usize> {
    let mut r = stream(seed, tags::SIZES, 0);
    let mut out = Vec::new();
    let mut left = total;
    while left > 0 {
        let n = r.log_uniform(lo, hi).min(left);
        out.push(n);
        left -= n;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_767_225_600;

    #[test]
    fn same_session_same_messages() {
        let v = Vocab::new(3);
        let take = |s| {
            Conversation::new(&v, 3, s, NOW, Lengths::CHAT)
                .take(30)
                .map(|m| m.text)
                .collect::<Vec<_>>()
        };
        assert_eq!(take(5), take(5));
        assert_ne!(take(5), take(6));
    }

    #[test]
    fn messages_alternate_and_move_forward_in_time() {
        let v = Vocab::new(3);
        let c = Conversation::new(&v, 3, 0, NOW, Lengths::fixed(40));
        assert!(c.first_ts <= NOW && c.first_ts > NOW - 366 * 86_400);
        let first = c.first_ts;
        let ms: Vec<Message> = c.take(50).collect();
        assert!(ms.iter().step_by(2).all(|m| m.role == Role::User));
        assert!(ms.iter().all(|m| m.words == 40 && m.ts > first));
        assert!(ms.windows(2).all(|w| w[0].ts < w[1].ts));
    }

    #[test]
    fn sizes_sum_to_the_total() {
        let s = sizes(42, 100_000, 8, 128);
        assert_eq!(s.iter().sum::<usize>(), 100_000);
        assert!(s.iter().all(|&n| (1..=128).contains(&n)));
        assert_eq!(s, sizes(42, 100_000, 8, 128));
    }
}
