//! The chunker: turns a session's messages into search chunks.
//!
//! Choices:
//!
//! - **Words** are whitespace-separated tokens of a message's text; the
//!   `"<speaker>: "` label is not counted.
//! - **Packing**: messages are added in order. Before adding one, the chunk
//!   is closed when its new words (overlap not counted) would go over
//!   `target_words` and it either already holds at least half the target or
//!   would go over `max_words`. So chunks usually hold between half and twice
//!   the target in new words, and a chunk never holds only overlap.
//! - **Long messages**: a message over `max_words` is cut by [`split_text`]
//!   at paragraph, then sentence, then word boundaries into pieces of about
//!   `target_words`; the pieces are packed like messages, so several chunks
//!   share one message index. A piece that starts inside a message is
//!   rendered `"<speaker>: … <text>"`. A run of non-whitespace counts as one
//!   word however long it is, so tool output should go through
//!   [`super::noise::reduce`] first.
//! - **Degenerate options**: `target_words` below 1 is taken as 1 and
//!   `max_words` below `target_words` as `target_words`.
//! - **Overlap**: a new chunk starts with the last whole pieces of the
//!   previous chunk that together have at most `overlap_words` words. When the
//!   last piece alone is longer, the new chunk starts with an excerpt of its
//!   last `overlap_words` words instead (rendered with `…`). A chunk is
//!   therefore at most `max_words + overlap_words` words. `overlap_words = 0`
//!   turns overlap off.
//! - **Rendering**: one `"<name or role>: <text>"` block per message,
//!   blocks separated by a blank line; consecutive pieces of one message are
//!   rendered as one block.
//! - `message_ids` lists the native ids of every message the chunk shows
//!   any text of (including overlap), in order; messages without an id are
//!   left out. `roles` and `speakers` (the `name`s; messages without a name
//!   add none) are distinct, in order of appearance. `first_ts`/`last_ts` are
//!   the earliest and latest timestamps of those messages.
//! - Messages whose text is empty or whitespace are skipped.
//!
//! Cost is linear in the input: each message is scanned a bounded number of
//! times and each chunk's text is allocated once, at its final size.

use super::model::{Message, Role};

/// Sizes for [`chunk_messages`], in words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkOptions {
    /// Aim for chunks of about this many words (default 300).
    pub target_words: usize,
    /// Words of the previous chunk repeated at the start of the next (default 40).
    pub overlap_words: usize,
    /// No chunk holds more new words than this (default 600); a longer
    /// message is split.
    pub max_words: usize,
}

impl Default for ChunkOptions {
    fn default() -> Self {
        ChunkOptions {
            target_words: 300,
            overlap_words: 40,
            max_words: 600,
        }
    }
}

/// One search chunk.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    /// Index of the first message shown (`base_index + i`).
    pub msg_first: usize,
    /// Index of the last message shown, inclusive.
    pub msg_last: usize,
    /// The rendered text: `"<speaker>: <text>"` blocks separated by blank lines.
    pub text: String,
    /// Native ids of the messages shown, in order.
    pub message_ids: Vec<String>,
    /// Distinct roles, in order of appearance.
    pub roles: Vec<Role>,
    /// Distinct speaker names, in order of appearance.
    pub speakers: Vec<String>,
    /// Earliest message timestamp (unix seconds).
    pub first_ts: Option<i64>,
    /// Latest message timestamp (unix seconds).
    pub last_ts: Option<i64>,
    /// Where each message block sits in `text`, so recall can return an
    /// exact window of messages with exactly the ids it covers.
    pub spans: Vec<Span>,
}

/// One message block of a chunk's text.
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

/// Chunks `messages`; chunk indexes are offset by `base_index` (the index of
/// `messages[0]` in the whole session).
pub fn chunk_messages(messages: &[Message], base_index: usize, opts: &ChunkOptions) -> Vec<Chunk> {
    let mut b = Builder::new(messages, base_index, opts);
    for (i, m) in messages.iter().enumerate() {
        let Some((start, end)) = trim_range(&m.text, 0, m.text.len()) else {
            continue;
        };
        let words = count_words(&m.text[start..end]);
        if words <= b.max {
            b.push(Seg {
                msg: i,
                start,
                end,
                words,
                cont: false,
            });
            continue;
        }
        for p in split_ranges(&m.text, b.target, b.max) {
            let cont = p.start > start;
            b.push(Seg {
                msg: i,
                start: p.start,
                end: p.end,
                words: p.words,
                cont,
            });
        }
    }
    b.finish()
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

/// Byte offset in `s` where its last `n` words (n >= 1) begin.
fn tail_start(s: &str, n: usize) -> usize {
    let mut count = 0;
    let mut in_word = false;
    for (i, c) in s.char_indices().rev() {
        if !c.is_whitespace() {
            in_word = true;
        } else if in_word {
            count += 1;
            if count == n {
                return i + c.len_utf8();
            }
            in_word = false;
        }
    }
    0
}

/// A piece of one message inside the chunk being built.
#[derive(Debug, Clone, Copy)]
struct Seg {
    /// Index into the input slice.
    msg: usize,
    start: usize,
    end: usize,
    words: usize,
    /// Starts inside the message (rendered with `…`).
    cont: bool,
}

struct Builder<'a> {
    msgs: &'a [Message],
    base: usize,
    target: usize,
    overlap: usize,
    max: usize,
    segs: Vec<Seg>,
    /// Words in `segs` that are not overlap.
    new_words: usize,
    out: Vec<Chunk>,
}

impl<'a> Builder<'a> {
    fn new(msgs: &'a [Message], base: usize, opts: &ChunkOptions) -> Self {
        let target = opts.target_words.max(1);
        Builder {
            msgs,
            base,
            target,
            overlap: opts.overlap_words,
            max: opts.max_words.max(target),
            segs: Vec::new(),
            new_words: 0,
            out: Vec::new(),
        }
    }

    fn push(&mut self, seg: Seg) {
        if should_close(self.new_words, seg.words, self.target, self.max) {
            self.out.push(self.render());
            self.start_with_overlap();
        }
        self.new_words += seg.words;
        self.segs.push(seg);
    }

    fn finish(mut self) -> Vec<Chunk> {
        if self.new_words > 0 {
            self.out.push(self.render());
        }
        self.out
    }

    /// Keeps only the overlap of the chunk just emitted (see module doc).
    fn start_with_overlap(&mut self) {
        let mut keep_from = self.segs.len();
        let mut kept = 0;
        while keep_from > 0 && kept + self.segs[keep_from - 1].words <= self.overlap {
            keep_from -= 1;
            kept += self.segs[keep_from].words;
        }
        let last = self.segs[self.segs.len() - 1];
        if keep_from == self.segs.len() && self.overlap > 0 {
            let text = &self.msgs[last.msg].text[last.start..last.end];
            let start = last.start + tail_start(text, self.overlap);
            let excerpt = Seg {
                start,
                words: self.overlap,
                cont: true,
                ..last
            };
            self.segs.clear();
            self.segs.push(excerpt);
        } else {
            self.segs.drain(..keep_from);
        }
        self.new_words = 0;
    }

    fn render(&self) -> Chunk {
        let cap = self.segs.iter().map(|s| s.end - s.start + 16).sum();
        let mut chunk = Chunk {
            msg_first: self.base + self.segs[0].msg,
            msg_last: self.base + self.segs[self.segs.len() - 1].msg,
            text: String::with_capacity(cap),
            message_ids: Vec::new(),
            roles: Vec::new(),
            speakers: Vec::new(),
            first_ts: None,
            last_ts: None,
            spans: Vec::new(),
        };
        let mut g = 0;
        while g < self.segs.len() {
            let first = self.segs[g];
            let mut h = g;
            while h + 1 < self.segs.len() && self.segs[h + 1].msg == first.msg {
                h += 1;
            }
            let m = &self.msgs[first.msg];
            add_block(
                &mut chunk,
                m,
                &m.text[first.start..self.segs[h].end],
                first.cont,
                self.base + first.msg,
            );
            g = h + 1;
        }
        chunk
    }
}

/// Appends one message block to `chunk` and records the message's metadata.
fn add_block(chunk: &mut Chunk, m: &Message, text: &str, cont: bool, index: usize) {
    if !chunk.text.is_empty() {
        chunk.text.push_str("\n\n");
    }
    let start = chunk.text.len();
    chunk
        .text
        .push_str(m.name.as_deref().unwrap_or(m.role.as_str()));
    chunk.text.push_str(if cont { ": … " } else { ": " });
    chunk.text.push_str(text);
    chunk.spans.push(Span {
        start,
        end: chunk.text.len(),
        msg: index,
        id: m.id.clone(),
        ts: m.timestamp,
    });
    if let Some(id) = &m.id {
        chunk.message_ids.push(id.clone());
    }
    if !chunk.roles.contains(&m.role) {
        chunk.roles.push(m.role);
    }
    if let Some(name) = &m.name {
        if !chunk.speakers.contains(name) {
            chunk.speakers.push(name.clone());
        }
    }
    if let Some(ts) = m.timestamp {
        chunk.first_ts = Some(chunk.first_ts.map_or(ts, |t| t.min(ts)));
        chunk.last_ts = Some(chunk.last_ts.map_or(ts, |t| t.max(ts)));
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

    fn opts(target: usize, overlap: usize, max: usize) -> ChunkOptions {
        ChunkOptions {
            target_words: target,
            overlap_words: overlap,
            max_words: max,
        }
    }

    #[test]
    fn small_session_is_one_chunk() {
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
        assert_eq!(chunks.len(), 1);
        let c = &chunks[0];
        assert_eq!(c.text, "alice: why does it flake?\n\nassistant: A race.");
        assert_eq!((c.msg_first, c.msg_last), (5, 7));
        assert_eq!(c.message_ids, ["u1"]);
        assert_eq!(c.roles, [Role::User, Role::Assistant]);
        assert_eq!(c.speakers, ["alice"]);
        assert_eq!((c.first_ts, c.last_ts), (Some(10), Some(20)));
    }

    #[test]
    fn empty_input_gives_no_chunks() {
        assert!(chunk_messages(&[], 0, &ChunkOptions::default()).is_empty());
        assert!(
            chunk_messages(&[msg(Role::User, "", None)], 0, &ChunkOptions::default()).is_empty()
        );
    }

    #[test]
    fn packs_to_target_with_whole_message_overlap() {
        // Ten messages of 50 words, then a 10-word one: target 100, overlap 10.
        let mut msgs: Vec<Message> = (0..10)
            .map(|i| {
                msg(
                    Role::User,
                    &words(&i.to_string(), 50),
                    Some(&format!("m{i}")),
                )
            })
            .collect();
        msgs.push(msg(Role::Assistant, &words("x", 10), Some("mx")));
        let chunks = chunk_messages(&msgs, 100, &opts(100, 10, 200));
        // 50-word messages never fit the overlap, so overlap is a tail excerpt.
        assert_eq!(chunks.len(), 6);
        assert_eq!((chunks[0].msg_first, chunks[0].msg_last), (100, 101));
        assert_eq!(chunks[0].message_ids, ["m0", "m1"]);
        assert_eq!((chunks[1].msg_first, chunks[1].msg_last), (101, 103));
        assert_eq!(chunks[1].message_ids, ["m1", "m2", "m3"]);
        assert!(chunks[1].text.starts_with("user: … w1_40 w1_41"));
        // Words: overlap, two messages, three labels and the `…`.
        assert_eq!(count_words(&chunks[1].text), 10 + 100 + 3 + 1);
        let last = &chunks[5];
        assert_eq!(last.message_ids, ["m9", "mx"]);
        assert!(last
            .text
            .ends_with(&format!("assistant: {}", words("x", 10))));
    }

    #[test]
    fn short_last_messages_overlap_whole() {
        let msgs = vec![
            msg(Role::User, &words("a", 90), Some("a")),
            msg(Role::Assistant, &words("b", 4), Some("b")),
            msg(Role::User, &words("c", 4), Some("c")),
            msg(Role::Assistant, &words("d", 90), Some("d")),
        ];
        let chunks = chunk_messages(&msgs, 0, &opts(100, 10, 200));
        assert_eq!(chunks.len(), 2);
        assert_eq!(chunks[0].message_ids, ["a", "b", "c"]);
        assert_eq!(chunks[1].message_ids, ["b", "c", "d"]);
        assert_eq!(chunks[1].msg_first, 1);
        assert!(chunks[1].text.starts_with(&format!(
            "assistant: {}\n\nuser: {}",
            words("b", 4),
            words("c", 4)
        )));
    }

    #[test]
    fn no_overlap_when_zero() {
        let msgs: Vec<Message> = (0..4)
            .map(|i| msg(Role::User, &words(&i.to_string(), 60), None))
            .collect();
        let chunks = chunk_messages(&msgs, 0, &opts(100, 0, 200));
        let total: usize = chunks
            .iter()
            .map(|c| count_words(&c.text) - (c.msg_last - c.msg_first + 1))
            .sum();
        assert_eq!(total, 240);
    }

    #[test]
    fn long_message_splits_at_paragraphs() {
        let text = (0..6)
            .map(|i| words(&format!("p{i}"), 80))
            .collect::<Vec<_>>()
            .join("\n\n");
        let msgs = vec![
            msg(Role::Assistant, &text, Some("long")),
            msg(Role::User, "thanks", Some("u")),
        ];
        let chunks = chunk_messages(&msgs, 3, &opts(100, 5, 200));
        assert!(chunks.len() >= 4, "{}", chunks.len());
        for c in &chunks[..chunks.len() - 1] {
            assert_eq!((c.msg_first, c.msg_last), (3, 3));
            assert_eq!(c.message_ids, ["long"]);
            assert!(count_words(&c.text) <= 200 + 5 + 2);
        }
        assert!(chunks[0].text.starts_with("assistant: wp0_0 "));
        assert!(chunks[1].text.starts_with("assistant: … "));
        let last = &chunks[chunks.len() - 1];
        assert_eq!(last.message_ids, ["long", "u"]);
        assert!(last.text.ends_with("user: thanks"));
        // Every paragraph word appears in some chunk.
        for i in 0..6 {
            let w = format!("wp{i}_79");
            assert!(chunks.iter().any(|c| c.text.contains(&w)), "{w}");
        }
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
    fn tail_start_counts_words() {
        assert_eq!(&"a b  c"[tail_start("a b  c", 2)..], "b  c");
        assert_eq!(tail_start("only", 3), 0);
        assert_eq!(&"é ü ö"[tail_start("é ü ö", 1)..], "ö");
    }

    #[test]
    fn names_label_blocks() {
        let mut m = msg(Role::User, "hi", None);
        m.name = Some("bob".into());
        let c = chunk_messages(&[m], 0, &ChunkOptions::default());
        assert_eq!(c[0].text, "bob: hi");
    }
}
