//! The chunker: turns a session's messages into search passages.
//!
//! The message is the unit of retrieval: every message is scored on its
//! own, so a user's short statement is never hidden inside a window that
//! also holds the assistant's long reply repeating the question's words.
//!
//! Choices:
//!
//! - **Words** are whitespace-separated tokens of a message's text; the
//!   `"<speaker>: "` label is not counted.
//! - **One passage per message**: a message of at most `max_words` words is
//!   one passage. A longer one is cut by [`split_text`] at paragraph, then
//!   sentence, then word boundaries into passages of about `target_words`,
//!   each scored on its own; several passages then share one message index.
//!   A passage that starts inside a message is rendered `"<speaker>: … <text>"`.
//!   A run of non-whitespace counts as one word however long it is, so tool
//!   output should go through [`super::noise::reduce`] first.
//! - **No overlap**: context (the neighbouring messages, the session's title
//!   and time) is added by recall after ranking, within its budget.
//! - **Degenerate options**: `target_words` below 1 is taken as 1 and
//!   `max_words` below `target_words` as `target_words`.
//! - `message_ids` is the passage's message id (empty when the message has
//!   none); `roles`, `speakers`, `first_ts` and `last_ts` are that message's.
//! - Messages whose text is empty or whitespace are skipped.
//!
//! Cost is linear in the input: each message is scanned a bounded number of
//! times and each passage's text is allocated once.

use super::model::{Message, Role};

/// Sizes for [`chunk_messages`], in words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkOptions {
    /// A long message is split into passages of about this many words
    /// (default 150).
    pub target_words: usize,
    /// A message of at most this many words stays one passage (default
    /// 300).
    pub max_words: usize,
}

impl Default for ChunkOptions {
    fn default() -> Self {
        ChunkOptions {
            target_words: 150,
            max_words: 300,
        }
    }
}

/// One search passage: a whole message or a part of a long one.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    /// Index of the message (`base_index + i`).
    pub msg_first: usize,
    /// The same as `msg_first`: a passage never spans messages. Kept as a
    /// range so stored rows and hits share one shape.
    pub msg_last: usize,
    /// The rendered text: `"<speaker>: <text>"`.
    pub text: String,
    /// The message's native id, if it has one.
    pub message_ids: Vec<String>,
    /// The message's role.
    pub roles: Vec<Role>,
    /// The message's speaker name, if it has one.
    pub speakers: Vec<String>,
    /// The message's timestamp (unix seconds).
    pub first_ts: Option<i64>,
    pub last_ts: Option<i64>,
    /// Where the message block sits in `text` (one span), so recall can cite
    /// exactly the message it shows.
    pub spans: Vec<Span>,
}

/// One message block of a passage's text.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Span {
    /// Byte range of the block (speaker prefix included) in `Chunk::text`.
    pub start: usize,
    pub end: usize,
    /// Index of the message in its session.
    pub msg: usize,
    /// The message's native id.
    pub id: Option<String>,
    /// The message's time (unix seconds), when known.
    pub ts: Option<i64>,
}

/// The passages of `messages`; message indexes are offset by `base_index`
/// (the index of `messages[0]` in the whole session).
pub fn chunk_messages(messages: &[Message], base_index: usize, opts: &ChunkOptions) -> Vec<Chunk> {
    let target = opts.target_words.max(1);
    let max = opts.max_words.max(target);
    let mut out = Vec::with_capacity(messages.len());
    for (i, m) in messages.iter().enumerate() {
        let Some((start, end)) = trim_range(&m.text, 0, m.text.len()) else {
            continue;
        };
        let index = base_index + i;
        if count_words(&m.text[start..end]) <= max {
            out.push(passage(m, &m.text[start..end], false, index));
            continue;
        }
        for p in split_ranges(&m.text, target, max) {
            out.push(passage(m, &m.text[p.start..p.end], p.start > start, index));
        }
    }
    out
}

/// Splits `text` into pieces of about `target_words` words and at most
/// `max_words` (raised to `target_words` if lower), cutting at paragraph
/// (blank line) boundaries, then at sentence boundaries (`.`, `!` or `?`
/// followed by whitespace, or a line break), then between words. Pieces are
/// trimmed slices of `text`; whitespace-only text gives no pieces.
pub fn split_text(text: &str, target_words: usize, max_words: usize) -> Vec<&str> {
    let target = target_words.max(1);
    split_ranges(text, target, max_words.max(target))
        .into_iter()
        .map(|p| &text[p.start..p.end])
        .collect()
}

/// Number of whitespace-separated words (same as
/// `s.split_whitespace().count()`, with a fast path for ASCII text).
pub fn count_words(s: &str) -> usize {
    if !s.is_ascii() {
        return s.split_whitespace().count();
    }
    let mut count = 0;
    let mut in_word = false;
    for &b in s.as_bytes() {
        // ASCII characters with the Unicode White_Space property.
        let space = matches!(b, b' ' | b'\t'..=b'\r');
        count += usize::from(!space && !in_word);
        in_word = !space;
    }
    count
}

/// A byte range of a text and its word count.
#[derive(Debug, Clone, Copy)]
struct Piece {
    start: usize,
    end: usize,
    words: usize,
}

/// Greedy packer shared by message splitting (see the module doc).
struct Packer {
    target: usize,
    max: usize,
    out: Vec<Piece>,
    cur: Option<Piece>,
}

impl Packer {
    fn push(&mut self, p: Piece) {
        match &mut self.cur {
            Some(c) if !should_close(c.words, p.words, self.target, self.max) => {
                c.end = p.end;
                c.words += p.words;
            }
            Some(c) => {
                self.out.push(*c);
                self.cur = Some(p);
            }
            None => self.cur = Some(p),
        }
    }

    fn finish(mut self) -> Vec<Piece> {
        self.out.extend(self.cur);
        self.out
    }
}

/// Whether a chunk of `have` words is closed before adding `next` words.
fn should_close(have: usize, next: usize, target: usize, max: usize) -> bool {
    have > 0 && have + next > target && (have >= target / 2 || have + next > max)
}

fn split_ranges(text: &str, target: usize, max: usize) -> Vec<Piece> {
    let mut packer = Packer {
        target,
        max,
        out: Vec::new(),
        cur: None,
    };
    for_each_paragraph(text, |ps, pe| {
        let words = count_words(&text[ps..pe]);
        if words <= max {
            return packer.push(Piece {
                start: ps,
                end: pe,
                words,
            });
        }
        for_each_sentence(text, ps, pe, |ss, se| {
            let words = count_words(&text[ss..se]);
            if words <= max {
                return packer.push(Piece {
                    start: ss,
                    end: se,
                    words,
                });
            }
            for_each_word_run(text, ss, se, target, |p| packer.push(p));
        });
    });
    packer.finish()
}

/// Calls `f` with runs of `n` words (the last run may be shorter) of
/// `text[ss..se]`.
fn for_each_word_run(text: &str, ss: usize, se: usize, n: usize, mut f: impl FnMut(Piece)) {
    let sentence = &text[ss..se];
    let mut run: Option<Piece> = None;
    for w in sentence.split_whitespace() {
        let start = ss + (w.as_ptr() as usize - sentence.as_ptr() as usize);
        let end = start + w.len();
        let p = run.get_or_insert(Piece {
            start,
            end,
            words: 0,
        });
        p.end = end;
        p.words += 1;
        if p.words == n {
            f(*p);
            run = None;
        }
    }
    if let Some(p) = run {
        f(p);
    }
}

/// Calls `f` with the trimmed byte range of each paragraph (runs of
/// non-blank lines).
fn for_each_paragraph(text: &str, mut f: impl FnMut(usize, usize)) {
    let mut para: Option<(usize, usize)> = None;
    let mut pos = 0;
    for line in text.split_inclusive('\n') {
        match trim_range(text, pos, pos + line.len()) {
            Some((s, e)) => para = Some((para.map_or(s, |p| p.0), e)),
            None => {
                if let Some((s, e)) = para.take() {
                    f(s, e);
                }
            }
        }
        pos += line.len();
    }
    if let Some((s, e)) = para {
        f(s, e);
    }
}

/// Calls `f` with the trimmed byte range of each sentence of `text[ps..pe]`.
fn for_each_sentence(text: &str, ps: usize, pe: usize, mut f: impl FnMut(usize, usize)) {
    let mut start = ps;
    let mut after_stop = false;
    for (i, c) in text[ps..pe].char_indices() {
        if c == '\n' || (after_stop && c.is_whitespace()) {
            if let Some((s, e)) = trim_range(text, start, ps + i) {
                f(s, e);
            }
            start = ps + i;
        }
        after_stop = matches!(c, '.' | '!' | '?');
    }
    if let Some((s, e)) = trim_range(text, start, pe) {
        f(s, e);
    }
}

/// `text[start..end]` without surrounding whitespace, or `None` if blank.
fn trim_range(text: &str, start: usize, end: usize) -> Option<(usize, usize)> {
    let s = &text[start..end];
    let trimmed = s.trim_start();
    if trimmed.is_empty() {
        return None;
    }
    let lead = s.len() - trimmed.len();
    Some((start + lead, start + lead + trimmed.trim_end().len()))
}

/// One passage: `text` (a slice of `m.text`) labelled with its speaker.
fn passage(m: &Message, text: &str, cont: bool, index: usize) -> Chunk {
    let label = m.name.as_deref().unwrap_or(m.role.as_str());
    let mut body = String::with_capacity(label.len() + text.len() + 6);
    body.push_str(label);
    body.push_str(if cont { ": … " } else { ": " });
    body.push_str(text);
    Chunk {
        msg_first: index,
        msg_last: index,
        spans: vec![Span {
            start: 0,
            end: body.len(),
            msg: index,
            id: m.id.clone(),
            ts: m.timestamp,
        }],
        text: body,
        message_ids: m.id.iter().cloned().collect(),
        roles: vec![m.role],
        speakers: m.name.iter().cloned().collect(),
        first_ts: m.timestamp,
        last_ts: m.timestamp,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(role: Role, text: &str, id: Option<&str>) -> Message {
        Message {
            id: id.map(str::to_owned),
            role,
            name: None,
            text: text.to_owned(),
            timestamp: None,
            is_error: false,
        }
    }

    /// `n` words `w<tag>_0 .. w<tag>_{n-1}`.
    fn words(tag: &str, n: usize) -> String {
        (0..n)
            .map(|i| format!("w{tag}_{i}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn opts(target: usize, max: usize) -> ChunkOptions {
        ChunkOptions {
            target_words: target,
            max_words: max,
        }
    }

    #[test]
    fn every_message_is_its_own_passage() {
        let mut a = msg(Role::User, "  why does it flake?  ", Some("u1"));
        a.name = Some("alice".into());
        a.timestamp = Some(20);
        let mut b = msg(Role::Assistant, "A race.", None);
        b.timestamp = Some(10);
        let chunks = chunk_messages(
            &[a, msg(Role::Tool, " \n ", Some("t")), b],
            5,
            &ChunkOptions::default(),
        );
        assert_eq!(chunks.len(), 2, "the blank tool message is skipped");
        let c = &chunks[0];
        assert_eq!(c.text, "alice: why does it flake?");
        assert_eq!((c.msg_first, c.msg_last), (5, 5));
        assert_eq!(c.message_ids, ["u1"]);
        assert_eq!(c.roles, [Role::User]);
        assert_eq!(c.speakers, ["alice"]);
        assert_eq!((c.first_ts, c.last_ts), (Some(20), Some(20)));
        assert_eq!(c.spans.len(), 1);
        assert_eq!((c.spans[0].start, c.spans[0].end), (0, c.text.len()));
        let d = &chunks[1];
        assert_eq!(d.text, "assistant: A race.");
        assert_eq!((d.msg_first, d.msg_last), (7, 7));
        assert!(d.message_ids.is_empty());
        assert!(d.speakers.is_empty());
    }

    #[test]
    fn empty_input_gives_no_chunks() {
        assert!(chunk_messages(&[], 0, &ChunkOptions::default()).is_empty());
        let blank = [msg(Role::User, "   ", None)];
        assert!(chunk_messages(&blank, 0, &ChunkOptions::default()).is_empty());
    }

    #[test]
    fn a_message_up_to_max_words_stays_whole() {
        let m = msg(Role::User, &words("a", 200), Some("m"));
        let c = chunk_messages(&[m], 0, &opts(50, 200));
        assert_eq!(c.len(), 1);
        assert_eq!(count_words(&c[0].text), 201);
    }

    #[test]
    fn long_message_splits_into_passages_at_paragraphs() {
        let text = (0..6)
            .map(|i| words(&format!("p{i}"), 80))
            .collect::<Vec<_>>()
            .join("\n\n");
        let msgs = vec![
            msg(Role::Assistant, &text, Some("long")),
            msg(Role::User, "thanks", Some("u")),
        ];
        let chunks = chunk_messages(&msgs, 3, &opts(100, 200));
        assert!(chunks.len() >= 4, "{}", chunks.len());
        let (long, last) = chunks.split_at(chunks.len() - 1);
        for c in long {
            assert_eq!((c.msg_first, c.msg_last), (3, 3));
            assert_eq!(c.message_ids, ["long"]);
            assert!(count_words(&c.text) <= 200 + 2);
        }
        assert!(long[0].text.starts_with("assistant: wp0_0 "));
        assert!(long[1].text.starts_with("assistant: … "));
        assert_eq!(last[0].message_ids, ["u"]);
        assert_eq!(last[0].text, "user: thanks");
        // Every word of the long message is in exactly one passage.
        let total: usize = long.iter().map(|c| count_words(&c.text) - 1).sum();
        let conts = long.iter().filter(|c| c.text.contains(": … ")).count();
        assert_eq!(total - conts, 480);
    }

    /// A 200,000-word message becomes bounded passages, not one huge row.
    #[test]
    fn huge_message_is_bounded() {
        let m = msg(Role::Tool, &words("h", 200_000), None);
        let c = chunk_messages(&[m], 0, &ChunkOptions::default());
        assert!(c.iter().all(|c| count_words(&c.text) <= 302));
        assert_eq!(c.len(), 200_000usize.div_ceil(150));
    }

    #[test]
    fn split_text_falls_back_to_sentences_then_words() {
        let sentences = (0..5)
            .map(|i| format!("{}.", words(&format!("s{i}"), 30)))
            .collect::<Vec<_>>()
            .join(" ");
        let parts = split_text(&sentences, 40, 60);
        assert!(parts.iter().all(|p| count_words(p) <= 60));
        assert!(parts[0].ends_with("ws0_29."));
        assert_eq!(parts.iter().map(|p| count_words(p)).sum::<usize>(), 150);

        let one = words("z", 250);
        let parts = split_text(&one, 100, 120);
        let sizes: Vec<usize> = parts.iter().map(|p| count_words(p)).collect();
        assert_eq!(sizes, [100, 100, 50]);
        assert!(split_text(" \n\n ", 10, 20).is_empty());
    }

    #[test]
    fn split_text_lines_are_sentences() {
        let log = (0..30)
            .map(|i| format!("line {i} ok"))
            .collect::<Vec<_>>()
            .join("\n");
        let parts = split_text(&log, 10, 20);
        assert!(parts
            .iter()
            .all(|p| p.starts_with("line ") && p.ends_with("ok")));
    }

    #[test]
    fn count_words_matches_split_whitespace() {
        for s in [
            "",
            " a  b\tc\n",
            "a\x0bb\x0cc\rd",
            "x\u{a0}y z",
            "\u{3000}",
            "a\x1fb",
        ] {
            assert_eq!(count_words(s), s.split_whitespace().count(), "{s:?}");
        }
    }

    #[test]
    fn names_label_blocks() {
        let mut m = msg(Role::User, "hi", None);
        m.name = Some("bob".into());
        let c = chunk_messages(&[m], 0, &ChunkOptions::default());
        assert_eq!(c[0].text, "bob: hi");
    }
}
