//! Text drawn from a [`Vocab`]: words in a [`Mix`], sentences, counted
//! prose, Markdown with lists, headings and code fences, code lines and
//! ids. Tool output (shell runs, compiler errors, blobs) is in
//! `tool_output.rs`.

use std::fmt::Write as _;

use crate::words::NOUNS;
use crate::{cap, Draw, Rng, Vocab};

/// How often each kind of word is drawn, per mille; the rest are short hex
/// hashes.
#[derive(Clone, Copy, Debug)]
pub struct Mix {
    /// Words: English, or English and the pseudo-word tail (`tail`).
    pub words: u32,
    /// Code identifiers, some in backticks (`ticked` per mille of them).
    pub idents: u32,
    /// CamelCase type names.
    pub types: u32,
    /// File paths, in backticks.
    pub files: u32,
    /// Numbers below 5,000.
    pub numbers: u32,
    /// Per mille of identifiers written in backticks.
    pub ticked: u32,
    /// Whether words come from English and the tail or from English alone.
    pub tail: bool,
}

impl Mix {
    /// A coding agent's transcript: English with much code talk (the index
    /// bench's corpus).
    pub const TRANSCRIPT: Mix = Mix {
        words: 780,
        idents: 90,
        types: 40,
        files: 40,
        numbers: 30,
        ticked: 600,
        tail: false,
    };
    /// Conversation passages with a rare-word vocabulary and a topic per
    /// session (the recall bench's corpus).
    pub const CHAT: Mix = Mix {
        words: 880,
        idents: 60,
        types: 20,
        files: 20,
        numbers: 15,
        ticked: 500,
        tail: true,
    };
}

/// A text generator: a seeded [`Rng`] over a [`Vocab`], in a [`Mix`], with
/// an optional topic that a share of the words is drawn from.
pub struct Text<'v> {
    /// The generator; callers draw sizes and choices from it too, so that
    /// one seed decides a whole item.
    pub rng: Rng,
    vocab: &'v Vocab,
    mix: Mix,
    topic: Vec<&'v str>,
    topic_rate: u32,
}

impl<'v> Text<'v> {
    /// Text of `vocab` in `mix`, drawn by `rng`.
    pub fn new(vocab: &'v Vocab, rng: Rng, mix: Mix) -> Text<'v> {
        Text {
            rng,
            vocab,
            mix,
            topic: Vec::new(),
            topic_rate: 0,
        }
    }

    /// The same, with `per_mille` of the words taken from `topic`.
    pub fn with_topic(mut self, topic: Vec<&'v str>, per_mille: u32) -> Text<'v> {
        self.topic = topic;
        self.topic_rate = per_mille;
        self
    }

    /// One word of the topic (empty without a topic).
    pub fn topic_word(&mut self) -> &'v str {
        if self.topic.is_empty() {
            return "";
        }
        self.topic[self.rng.usize(..self.topic.len())]
    }

    /// The first word of the topic, if there is one.
    pub fn topic_head(&self) -> Option<&'v str> {
        self.topic.first().copied()
    }

    /// An English word, by frequency.
    pub fn english(&mut self) -> &'v str {
        self.vocab.english(&mut self.rng)
    }

    /// A word as the mix draws words: English, or English and the tail.
    pub fn plain_word(&mut self) -> &'v str {
        if self.mix.tail {
            self.vocab.word(&mut self.rng)
        } else {
            self.vocab.english(&mut self.rng)
        }
    }

    /// A code identifier.
    pub fn ident(&mut self) -> &'v str {
        self.vocab.ident(&mut self.rng)
    }

    /// A type name.
    pub fn ty(&mut self) -> &'v str {
        self.vocab.ty(&mut self.rng)
    }

    /// A file path.
    pub fn file(&mut self) -> &'v str {
        self.vocab.file(&mut self.rng)
    }

    /// One word of prose: from the topic at its rate, else as the mix says.
    pub fn word(&mut self, s: &mut String) {
        if !self.topic.is_empty() && self.rng.chance(self.topic_rate) {
            s.push_str(self.topic_word());
            return;
        }
        let m = self.mix;
        let x = self.rng.u32(..1000);
        if x < m.words {
            s.push_str(self.plain_word());
        } else if x < m.words + m.idents {
            let tick = self.rng.chance(m.ticked);
            let w = self.ident();
            if tick {
                s.push('`');
            }
            s.push_str(w);
            if tick {
                s.push('`');
            }
        } else if x < m.words + m.idents + m.types {
            s.push_str(self.ty());
        } else if x < m.words + m.idents + m.types + m.files {
            s.push('`');
            s.push_str(self.file());
            s.push('`');
        } else if x < m.words + m.idents + m.types + m.files + m.numbers {
            let _ = write!(s, "{}", self.rng.u32(..5000));
        } else {
            hex(&mut self.rng, s, 7);
        }
    }

    /// A sentence of `n` words: capitalised, some commas, ending in `.`,
    /// `?` or `:`.
    pub fn sentence_of(&mut self, s: &mut String, n: usize) {
        let start = s.len();
        for i in 0..n {
            if i > 0 {
                s.push_str(if self.rng.chance(60) { ", " } else { " " });
            }
            self.word(s);
        }
        if let Some(c) = s[start..].chars().next().filter(char::is_ascii_lowercase) {
            let up = c.to_ascii_uppercase();
            s.replace_range(start..start + 1, up.encode_utf8(&mut [0; 4]));
        }
        s.push_str(match self.rng.usize(..10) {
            0 => "?",
            1 => ":",
            _ => ".",
        });
    }

    /// A sentence of 5-22 words.
    pub fn sentence(&mut self, s: &mut String) {
        let n = self.rng.usize(5..=22);
        self.sentence_of(s, n);
    }

    /// `n` words of plain sentences (5-20 words each, some ending a line);
    /// returns the words written.
    pub fn prose(&mut self, s: &mut String, n: usize) -> usize {
        let mut done = 0;
        while done < n {
            let k = self.rng.usize(5..=20).min(n - done);
            self.sentence_of(s, k);
            s.push(if self.rng.chance(150) { '\n' } else { ' ' });
            done += k;
        }
        while s.ends_with(char::is_whitespace) {
            s.pop();
        }
        done
    }

    /// About `words` words of Markdown: paragraphs, bullet lists, headings
    /// and fenced code.
    pub fn markdown(&mut self, s: &mut String, words: usize) {
        let end = s.len() + words * 6;
        while s.len() < end {
            match self.rng.usize(..12) {
                0 => {
                    for _ in 0..self.rng.usize(2..=5) {
                        s.push_str("- ");
                        self.sentence(s);
                        s.push('\n');
                    }
                }
                1 => {
                    s.push_str("```");
                    s.push_str(self.rng.pick(&["rust", "ts", "python", "bash", ""]));
                    s.push('\n');
                    let n = self.rng.usize(2..=12);
                    self.code(s, n, 0);
                    s.push_str("```\n");
                }
                2 => {
                    s.push_str("## ");
                    s.push_str(&cap(self.english()));
                    s.push(' ');
                    s.push_str(self.english());
                    s.push('\n');
                }
                _ => {
                    for _ in 0..self.rng.usize(1..=4) {
                        self.sentence(s);
                        s.push(' ');
                    }
                    s.pop();
                    s.push('\n');
                }
            }
            s.push('\n');
        }
        while s.ends_with('\n') {
            s.pop();
        }
    }

    /// A title of 3-7 words, some from the topic.
    pub fn title(&mut self) -> String {
        let mut s = String::new();
        for i in 0..self.rng.usize(3..=7) {
            if i > 0 {
                s.push(' ');
            }
            if !self.topic.is_empty() && self.rng.chance(400) {
                s.push_str(self.topic_word());
            } else {
                s.push_str(self.plain_word());
            }
        }
        cap(&s)
    }

    /// One line of Rust-like code at `indent` levels.
    pub fn code_line(&mut self, s: &mut String, indent: usize) {
        for _ in 0..indent {
            s.push_str("    ");
        }
        let (a, b, c) = (self.ident(), self.ident(), self.ident());
        match self.rng.usize(..12) {
            0 => {
                let (t, u) = (self.ty(), self.ty());
                let _ = write!(s, "pub fn {a}(&self, {b}: &{t}) -> Result<{u}> {{");
            }
            1 => {
                let _ = write!(s, "let {a} = {b}.{c}()?;");
            }
            2 => {
                let (t, n) = (self.ty(), self.rng.u32(..512));
                let _ = write!(s, "let mut {a}: Vec<{t}> = Vec::with_capacity({n});");
            }
            3 => {
                let w = self.english();
                let _ = write!(
                    s,
                    "if {a}.is_empty() {{ return Err(Error::invalid(\"{b} {w}\")); }}"
                );
            }
            4 => {
                let _ = write!(s, "for {a} in {b}.iter().filter(|x| x.{c}()) {{");
            }
            5 => {
                let (m, t, u) = (self.rng.pick(&NOUNS), self.ty(), self.ty());
                let _ = write!(s, "use crate::{m}::{{{t}, {u}}};");
            }
            6 => {
                let (x, y, z) = (cap(self.english()), self.english(), self.english());
                let _ = write!(s, "// {x} {y} {z} `{c}`");
            }
            7 => {
                let n = self.rng.u32(..100_000);
                let _ = write!(s, "const {}: usize = {n};", a.to_uppercase());
            }
            8 => {
                let _ = write!(s, "{a}.{b}(&mut {c}, {});", self.rng.u32(..64));
            }
            9 => {
                let _ = write!(
                    s,
                    "assert_eq!({a}.len(), {}, \"{b}\");",
                    self.rng.u32(..100)
                );
            }
            10 => s.push('}'),
            _ => {
                let t = self.ty();
                let _ = write!(s, "{t}::{a}({b}, {c}).await?");
            }
        }
    }

    /// `lines` lines of code, indented as blocks open and close; numbered
    /// from `start_line` as `cat -n` numbers them when it is not 0.
    pub fn code(&mut self, s: &mut String, lines: usize, start_line: usize) {
        let mut indent = 0usize;
        for i in 0..lines {
            if start_line > 0 {
                let _ = write!(s, "{:>6}\u{2192}", start_line + i);
            }
            self.code_line(s, indent);
            s.push('\n');
            indent = match self.rng.usize(..4) {
                0 => (indent + 1).min(4),
                1 => indent.saturating_sub(1),
                _ => indent,
            };
        }
    }

    /// A UUID-shaped id.
    pub fn uuid(&mut self) -> String {
        uuid(&mut self.rng)
    }

    /// `prefix` and `n` letters and digits (`msg_01…`, `toolu_01…`).
    pub fn id(&mut self, prefix: &str, n: usize) -> String {
        let mut s = prefix.to_string();
        alnum(&mut self.rng, &mut s, n);
        s
    }
}

/// `n` lowercase hex digits.
pub fn hex(r: &mut Rng, s: &mut String, n: usize) {
    s.extend((0..n).map(|_| r.digit(16)));
}

/// `n` ASCII letters and digits.
pub fn alnum(r: &mut Rng, s: &mut String, n: usize) {
    s.extend((0..n).map(|_| r.alphanumeric()));
}

/// A UUID-shaped id: 8-4-4-4-12 hex digits.
pub fn uuid(r: &mut Rng) -> String {
    let mut s = String::with_capacity(36);
    for (i, n) in [8, 4, 4, 4, 12].into_iter().enumerate() {
        if i > 0 {
            s.push('-');
        }
        hex(r, &mut s, n);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(v: &Vocab, seed: u64, mix: Mix) -> Text<'_> {
        Text::new(v, Rng::with_seed(seed), mix)
    }

    #[test]
    fn prose_counts_the_words_it_writes() {
        let v = Vocab::new(1);
        let mut t = text(&v, 2, Mix::CHAT);
        for n in [1, 5, 37, 300] {
            let mut s = String::new();
            assert_eq!(t.prose(&mut s, n), n);
            // A few words are `a, b` pairs or hold no space; never more.
            assert!(s.split_whitespace().count() <= n, "{n}: {s}");
        }
    }

    #[test]
    fn a_topic_shows_in_the_text() {
        let v = Vocab::new(1);
        let topic = v.topic(3);
        let lower: Vec<String> = topic.iter().map(|w| w.to_lowercase()).collect();
        let mut t = text(&v, 4, Mix::CHAT).with_topic(topic, 200);
        let mut s = String::new();
        t.prose(&mut s, 500);
        let hits = s
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .filter(|w| lower.contains(&w.to_lowercase()))
            .count();
        assert!((50..200).contains(&hits), "{hits}");
    }

    #[test]
    fn markdown_and_code_are_deterministic() {
        let v = Vocab::new(1);
        let draw = || {
            let mut t = text(&v, 9, Mix::TRANSCRIPT);
            let mut s = String::new();
            t.markdown(&mut s, 400);
            t.code(&mut s, 20, 7);
            s.push_str(&t.uuid());
            s
        };
        assert_eq!(draw(), draw());
    }
}
