//! Passages: scoring text against a plan in Rust, choosing the best window
//! of messages inside a session chunk, and building highlighted snippets.
//!
//! FTS5 finds candidate chunks; this module decides which part of a chunk
//! to return. A 300-word chunk would fill a prompt budget on its own, so a
//! session hit is the best-scoring run of whole messages that fits
//! `window_chars`, and its `message_ids` are exactly the messages shown.

/// Maps hashed on every scored word: foldhash, not SipHash (these keys are
/// words of the index, not attacker-chosen table sizes; SipHash was 5% of a
/// query's instructions at 1,000,000 passages).
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

use std::collections::{BTreeMap, BTreeSet};

use super::hit::{HL_CLOSE, HL_OPEN};
use super::plan::Weighted;
use super::sanitize::TermKind;
use super::tuning::{STEM_WEIGHT, WORD_WEIGHT};
use crate::text::with_stem;

/// A word of a text: its byte range.
struct Token {
    start: usize,
    end: usize,
}

/// The alphanumeric runs of `text`. Nothing is allocated per word: case is
/// folded only when a word is compared (see [`lower_eq`]).
fn tokens(text: &str) -> Vec<Token> {
    let mut out = Vec::with_capacity(text.len() / 5);
    let mut start = None;
    for (i, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        match (c.is_alphanumeric(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push(Token { start: s, end: i });
                start = None;
            }
            _ => {}
        }
    }
    out
}

/// Whether `word` lowercased equals `lower` (already lowercase).
fn lower_eq(word: &str, lower: &str) -> bool {
    if word.is_ascii() {
        word.len() == lower.len() && word.eq_ignore_ascii_case(lower)
    } else {
        word.to_lowercase() == lower
    }
}

/// One term prepared for matching.
struct Matcher {
    words: Vec<String>,
    stem: bool,
    weight: f64,
    /// Terms of one family are forms of one query word (the word and its
    /// stem): two of them side by side are not two words near each other.
    family: usize,
    /// A stem matcher for the other forms of a query word that is its own
    /// stem (see [`Scorer::new`]): the word's exact form is left to the
    /// word's matcher.
    other_forms: bool,
    /// The term it was made from (its index in [`Scorer::new`]'s terms).
    term: usize,
}

/// Tokens apart (at most) for two matched words to count as near each
/// other: adjacent, or with up to two words between them.
const NEAR: usize = 3;

/// Tokens (at most) from a query word to a value after it for the value to
/// be stated about that word: "port 8080", "Node is 20", "the port is now
/// 9090".
const NEAR_VALUE: usize = 3;

/// What a text says about a question (see [`Scorer::stated`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stated {
    /// The query words it holds, as family numbers, sorted.
    pub families: Vec<usize>,
    /// The values it states, each under the query word (family number)
    /// nearest before it; lowercased.
    pub values: BTreeMap<usize, BTreeSet<String>>,
}

/// Scores texts against a plan's terms.
pub struct Scorer {
    matchers: Vec<Matcher>,
    /// Matchers by their first word (word and phrase terms).
    by_word: HashMap<String, Vec<usize>>,
    /// Stem matchers by stem.
    by_stem: HashMap<String, Vec<usize>>,
    /// What a word must start with to have one of the stems: only such a
    /// word is stemmed (see [`StemKeys`]).
    stem_keys: StemKeys,
    /// First bytes of the `by_word` keys: most words are rejected by one
    /// array read instead of a hash.
    first_bytes: [bool; 256],
    /// Weight of the nearness bonus (see [`Scorer::with_proximity`]).
    proximity: f64,
    /// Each family's weight: the highest of its terms'.
    family_weights: Vec<f64>,
}

/// The first two characters of `s` (the second is `\0` when missing).
fn start2(s: &str) -> (char, char) {
    let mut c = s.chars();
    (c.next().unwrap_or('\0'), c.next().unwrap_or('\0'))
}

/// A cheap test of whether a word can have one of a set of stems, so that
/// most words are never stemmed (stemming costs far more than this test).
///
/// An English (Snowball) stem rewrites only the end of a word: the word
/// starts with its stem less the stem's last character ("cri" from
/// "cries", "hope" from "hoping", "mobl" from "mobility"). The only words
/// that break this are three entries of the stemmer's exception table,
/// which are always let through. Checked on the 136,793 distinct words of
/// the LoCoMo, BEAM, SciFact and transcript data.
#[derive(Default)]
struct StemKeys {
    /// Keys of two characters or more by their first two, sorted.
    long: Vec<((char, char), Box<str>)>,
    /// Shorter keys (an empty one lets every word through).
    short: Vec<Box<str>>,
}

/// Words whose stem does not continue their start: `dying` -> `die`.
const STEM_EXCEPTIONS: [&str; 3] = ["dying", "lying", "tying"];

impl StemKeys {
    fn new<'a>(stems: impl Iterator<Item = &'a str>) -> StemKeys {
        let mut keys = StemKeys::default();
        for stem in stems {
            let mut key = stem.chars();
            key.next_back();
            let key = key.as_str();
            if key.chars().nth(1).is_some() {
                keys.long.push((start2(key), Box::from(key)));
            } else {
                keys.short.push(Box::from(key));
            }
        }
        keys.long.sort_unstable();
        keys.long.dedup();
        keys.short.sort_unstable();
        keys.short.dedup();
        keys
    }

    /// Whether the lowercase `word` may have one of the stems.
    fn admit(&self, word: &str) -> bool {
        let s = start2(word);
        let from = self.long.partition_point(|(k, _)| *k < s);
        self.long[from..]
            .iter()
            .take_while(|(k, _)| *k == s)
            .any(|(_, key)| word.starts_with(&**key))
            || self.short.iter().any(|key| word.starts_with(&**key))
            || STEM_EXCEPTIONS.contains(&word)
    }
}

impl Scorer {
    /// A scorer for `terms`. A query word that is its own stem ("deploy")
    /// has no stem term (the sanitizer adds one only for a word it
    /// changes), yet FTS5 finds its other forms ("deploys") through the
    /// `aux` column: such a word also matches its other forms, at the
    /// weight a stem term would have, as "deploying" matches "deploys"
    /// through its stem. Without it a text that holds only another form of
    /// a word scores nothing for it, and a list whose best hit says
    /// "Deploys" judged against one that says "deploy" covered nothing.
    pub fn new(terms: &[Weighted]) -> Scorer {
        Scorer::build(terms, true)
    }

    /// A scorer for [`Scorer::stated`]: the terms grouped by query word,
    /// each word matching its own form and the forms the question's stem
    /// terms match, not the other forms of a word that is its own stem.
    /// Whether two records are about the same thing is read from the
    /// question's words they hold; "the api server listens" and "Postgres
    /// listens" share "listen" as a verb, which does not make them one
    /// subject.
    pub fn for_statements(terms: &[Weighted]) -> Scorer {
        let mut s = Scorer::build(terms, false);
        s.assign_families();
        s
    }

    fn build(terms: &[Weighted], other_forms: bool) -> Scorer {
        let kinds_and_matchers: Vec<(TermKind, Matcher)> = terms
            .iter()
            .enumerate()
            .map(|(term, w)| {
                let m = Matcher {
                    words: crate::text::words(&w.term.text)
                        .map(str::to_lowercase)
                        .collect(),
                    stem: w.term.kind == TermKind::Stem,
                    weight: w.weight,
                    family: 0,
                    other_forms: false,
                    term,
                };
                (w.term.kind, m)
            })
            .filter(|(_, m)| !m.words.is_empty())
            .collect();
        let stems: std::collections::HashSet<&str> = kinds_and_matchers
            .iter()
            .filter(|(_, m)| m.stem)
            .map(|(_, m)| m.words[0].as_str())
            .collect();
        let own_stems: Vec<Matcher> = kinds_and_matchers
            .iter()
            .filter(|(kind, m)| {
                other_forms
                    && *kind == TermKind::Word
                    && m.words.len() == 1
                    && !stems.contains(m.words[0].as_str())
                    && with_stem(&m.words[0], |s| s == m.words[0])
            })
            .map(|(_, m)| Matcher {
                words: m.words.clone(),
                stem: true,
                weight: m.weight * STEM_WEIGHT / WORD_WEIGHT,
                family: 0,
                other_forms: true,
                term: m.term,
            })
            .collect();
        let mut matchers: Vec<Matcher> = kinds_and_matchers.into_iter().map(|(_, m)| m).collect();
        matchers.extend(own_stems);
        let mut by_word: HashMap<String, Vec<usize>> = HashMap::default();
        let mut by_stem: HashMap<String, Vec<usize>> = HashMap::default();
        let mut first_bytes = [false; 256];
        for (i, m) in matchers.iter().enumerate() {
            let first = m.words[0].clone();
            if m.stem {
                by_stem.entry(first).or_default().push(i);
            } else {
                first_bytes[usize::from(first.as_bytes()[0])] = true;
                by_word.entry(first).or_default().push(i);
            }
        }
        let stem_keys = StemKeys::new(by_stem.keys().map(String::as_str));
        Scorer {
            matchers,
            by_word,
            by_stem,
            stem_keys,
            first_bytes,
            proximity: 0.0,
            family_weights: Vec::new(),
        }
    }

    /// Scores also reward query words found near each other: each pair of
    /// different query words within [`NEAR`] tokens adds `weight` times the
    /// lighter word's weight, saturating in the pair's count like a term.
    /// So a passage where the question's words stand together outranks one
    /// where they are scattered over a long text.
    pub fn with_proximity(mut self, weight: f64) -> Scorer {
        self.proximity = weight.max(0.0);
        if self.proximity > 0.0 {
            self.assign_families();
        }
        self
    }

    /// A scorer for [`Scorer::covered`]: the terms grouped by query word,
    /// with no nearness bonus.
    pub fn for_coverage(terms: &[Weighted]) -> Scorer {
        let mut s = Scorer::new(terms);
        s.assign_families();
        s
    }

    /// The share of the query's weight that `text` holds at least once:
    /// each query word counts once, at the weight of its heaviest form, so
    /// a text that names every word of the question covers 1 and one that
    /// repeats a single common word covers little. 0 without terms. Needs
    /// a scorer from [`Scorer::for_coverage`] (or with proximity).
    pub fn covered(&self, text: &str) -> f64 {
        let mut seen = vec![false; self.family_weights.len()];
        self.mark_seen(text, &mut seen);
        self.share(&seen)
    }

    /// The query's weight that `text` holds (each query word once, at the
    /// weight of its heaviest form) and the query's whole weight; see
    /// [`Scorer::covered`].
    pub fn held(&self, text: &str) -> (f64, f64) {
        let mut seen = vec![false; self.family_weights.len()];
        self.mark_seen(text, &mut seen);
        let total: f64 = self.family_weights.iter().sum();
        (self.share(&seen) * total, total)
    }

    /// The terms `text` matches, grouped by query word: for each word it
    /// holds, the indices (in [`Scorer::new`]'s terms) of its forms found.
    /// Needs a scorer from [`Scorer::for_coverage`].
    pub fn matched_words(&self, text: &str) -> Vec<Vec<usize>> {
        let toks = tokens(text);
        let mut by_family: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
        for (_, mi, _) in self.matches(text, &toks) {
            let m = &self.matchers[mi];
            by_family.entry(m.family).or_default().insert(m.term);
        }
        by_family
            .into_values()
            .map(|t| t.into_iter().collect())
            .collect()
    }

    /// Mark in `seen` (one flag per query word, see
    /// [`Scorer::for_coverage`]) each word `text` holds.
    pub fn mark_seen(&self, text: &str, seen: &mut [bool]) {
        let toks = tokens(text);
        for (_, mi, _) in self.matches(text, &toks) {
            seen[self.matchers[mi].family] = true;
        }
    }

    /// Query words, for [`Scorer::mark_seen`].
    pub fn words(&self) -> usize {
        self.family_weights.len()
    }

    /// The share of the query's weight the words marked in `seen` hold.
    pub fn share(&self, seen: &[bool]) -> f64 {
        let total: f64 = self.family_weights.iter().sum();
        if total <= 0.0 {
            return 0.0;
        }
        let held: f64 = seen
            .iter()
            .zip(&self.family_weights)
            .filter(|(s, _)| **s)
            .map(|(_, w)| w)
            .sum();
        held / total
    }

    /// What `text` says about the question: the query words it holds (as
    /// family numbers, sorted) and the values it states about them. A value
    /// is a run of tokens holding a digit, joined by `.`, `:` or `-` (a
    /// version `3.2.1`, a port `8080`, a size `2GB`, a time `10:30`), that
    /// starts at most [`NEAR_VALUE`] tokens after a query word; it is
    /// stated about the nearest such word. Needs a scorer from
    /// [`Scorer::for_statements`].
    pub fn stated(&self, text: &str) -> Stated {
        let toks = tokens(text);
        let found = self.matches(text, &toks);
        let mut families: Vec<usize> = found
            .iter()
            .map(|&(_, mi, _)| self.matchers[mi].family)
            .collect();
        families.sort_unstable();
        families.dedup();
        // The query word a value at token `i` is about: the nearest one
        // that ends before it, at most NEAR_VALUE tokens back.
        let about = |i: usize| {
            found
                .iter()
                .map(|&(at, mi, _)| (at + self.matchers[mi].words.len().max(1), mi))
                .filter(|&(end, _)| end <= i && i - end < NEAR_VALUE)
                .max_by_key(|&(end, _)| end)
                .map(|(_, mi)| self.matchers[mi].family)
        };
        let digit = |t: &Token| text[t.start..t.end].bytes().any(|b| b.is_ascii_digit());
        let mut values = BTreeMap::<usize, BTreeSet<String>>::new();
        let mut i = 0;
        while i < toks.len() {
            if !digit(&toks[i]) {
                i += 1;
                continue;
            }
            let first = i;
            while i + 1 < toks.len()
                && matches!(&text[toks[i].end..toks[i + 1].start], "." | ":" | "-")
            {
                i += 1;
            }
            if let Some(f) = about(first) {
                values
                    .entry(f)
                    .or_default()
                    .insert(text[toks[first].start..toks[i].end].to_lowercase());
            }
            i += 1;
        }
        Stated { families, values }
    }

    /// Group the terms by query word: a word, its stem and its other forms
    /// share the stem; a phrase is its own family.
    fn assign_families(&mut self) {
        let mut names: HashMap<String, usize> = HashMap::default();
        self.family_weights.clear();
        for m in &mut self.matchers {
            let name = match m.words.as_slice() {
                [one] if m.stem => one.clone(),
                [one] => with_stem(one, str::to_string),
                more => more.join(" "),
            };
            let next = names.len();
            m.family = *names.entry(name).or_insert(next);
            if m.family == self.family_weights.len() {
                self.family_weights.push(m.weight);
            }
            let w = &mut self.family_weights[m.family];
            *w = w.max(m.weight);
        }
    }

    /// Which tokens match which term: (token index, matcher index, weight).
    fn matches(&self, text: &str, toks: &[Token]) -> Vec<(usize, usize, f64)> {
        let mut out = Vec::new();
        // ASCII text lowercases in place, keeping every offset.
        let ascii = text.is_ascii().then(|| text.to_ascii_lowercase());
        let lower = |t: &Token| -> std::borrow::Cow<'_, str> {
            match &ascii {
                Some(l) => std::borrow::Cow::Borrowed(&l[t.start..t.end]),
                None => std::borrow::Cow::Owned(text[t.start..t.end].to_lowercase()),
            }
        };
        for (i, t) in toks.iter().enumerate() {
            let w = lower(t);
            let known_start = self.first_bytes[usize::from(w.as_bytes()[0])];
            if let Some(ms) = known_start.then(|| self.by_word.get(w.as_ref())).flatten() {
                for &mi in ms {
                    let m = &self.matchers[mi];
                    let rest = m.words[1..].iter().enumerate().all(|(k, x)| {
                        toks.get(i + 1 + k)
                            .is_some_and(|n| lower_eq(&text[n.start..n.end], x))
                    });
                    if rest {
                        out.push((i, mi, m.weight));
                    }
                }
            }
            if !self.by_stem.is_empty() && self.stem_keys.admit(&w) {
                let found = with_stem(&w, |s| self.by_stem.get(s));
                if let Some(ms) = found {
                    out.extend(
                        ms.iter()
                            .filter(|&&mi| {
                                let m = &self.matchers[mi];
                                !(m.other_forms && m.words[0] == w.as_ref())
                            })
                            .map(|&mi| (i, mi, self.matchers[mi].weight)),
                    );
                }
            }
        }
        out
    }

    /// A saturating term-frequency score: each term adds its weight times
    /// tf / (tf + 1), so repeating one word cannot dominate.
    pub fn score(&self, text: &str) -> f64 {
        self.score_counted(text).0
    }

    /// [`Scorer::score`] and the number of words of `text`, the length the
    /// score is normalised by (`rank::normalise_length`).
    pub fn score_counted(&self, text: &str) -> (f64, usize) {
        let toks = tokens(text);
        let mut tf = vec![0usize; self.matchers.len()];
        let found = self.matches(text, &toks);
        for (_, mi, _) in &found {
            tf[*mi] += 1;
        }
        let terms: f64 = tf
            .iter()
            .zip(&self.matchers)
            .map(|(&f, m)| m.weight * f as f64 / (f as f64 + 1.0))
            .sum();
        if self.proximity <= 0.0 {
            return (terms, toks.len());
        }
        (terms + self.proximity * self.nearness(&found), toks.len())
    }

    /// The nearness bonus of [`Scorer::with_proximity`], before its weight.
    /// `found` is in token order.
    fn nearness(&self, found: &[(usize, usize, f64)]) -> f64 {
        if found.len() < 2 {
            return 0.0;
        }
        // One entry per token and query word, however many forms matched.
        let mut at: Vec<(usize, usize)> = found
            .iter()
            .map(|&(i, m, _)| (i, self.matchers[m].family))
            .collect();
        at.sort_unstable();
        at.dedup();
        let mut pairs: Vec<(usize, usize)> = Vec::new();
        for (k, &(i, a)) in at.iter().enumerate() {
            for &(j, b) in at[..k].iter().rev() {
                if i - j > NEAR {
                    break;
                }
                if i != j && a != b {
                    pairs.push((a.min(b), a.max(b)));
                }
            }
        }
        // Sorted, so that the sum runs in one order (scores must not
        // depend on a hash seed).
        pairs.sort_unstable();
        pairs
            .chunk_by(|x, y| x == y)
            .map(|run| {
                let (a, b) = run[0];
                let (w, n) = (
                    self.family_weights[a].min(self.family_weights[b]),
                    run.len() as f64,
                );
                w * n / (n + 1.0)
            })
            .sum()
    }

    /// A short excerpt of `text` around its densest matches, with matched
    /// words wrapped in highlight marks.
    pub fn snippet(&self, text: &str, max_words: usize) -> String {
        let toks = tokens(text);
        if toks.is_empty() {
            return String::new();
        }
        let mut hit = vec![false; toks.len()];
        for (i, mi, _) in self.matches(text, &toks) {
            for k in 0..self.matchers[mi].words.len() {
                hit[i + k] = true;
            }
        }
        let (from, to) = densest(&hit, max_words);
        let mut out = String::new();
        if from > 0 {
            out.push('…');
        }
        // The punctuation that clings to the first and last words shown
        // ("(moved", "Feb).") stays with them.
        let before = if from > 0 { toks[from - 1].end } else { 0 };
        let mut pos = clinging_start(text, before, toks[from].start);
        for (i, t) in toks.iter().enumerate().take(to).skip(from) {
            out.push_str(&text[pos..t.start]);
            if hit[i] {
                out.push(HL_OPEN);
                out.push_str(&text[t.start..t.end]);
                out.push(HL_CLOSE);
            } else {
                out.push_str(&text[t.start..t.end]);
            }
            pos = t.end;
        }
        let after = toks.get(to).map_or(text.len(), |t| t.start);
        out.push_str(&text[pos..clinging_end(text, pos, after)]);
        if to < toks.len() {
            out.push('…');
        }
        out.split_whitespace().collect::<Vec<_>>().join(" ")
    }
}

/// Where the characters that cling to the word starting at `start` begin:
/// the run of non-space characters before it, no further back than
/// `floor` (the previous word's end).
fn clinging_start(text: &str, floor: usize, start: usize) -> usize {
    text[floor..start]
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map_or(floor, |(i, c)| floor + i + c.len_utf8())
}

/// Where the characters that cling to the word ending at `end` stop: the
/// run of non-space characters after it, no further than `ceiling` (the
/// next word's start).
fn clinging_end(text: &str, end: usize, ceiling: usize) -> usize {
    text[end..ceiling]
        .char_indices()
        .find(|(_, c)| c.is_whitespace())
        .map_or(ceiling, |(i, _)| end + i)
}

/// The token range of at most `n` tokens holding the most hits.
fn densest(hit: &[bool], n: usize) -> (usize, usize) {
    let n = n.max(1).min(hit.len());
    let mut best = (0, 0usize);
    let mut count = hit[..n].iter().filter(|h| **h).count();
    best.1 = count;
    for start in 1..=hit.len() - n {
        count = count + usize::from(hit[start + n - 1]) - usize::from(hit[start - 1]);
        if count > best.1 {
            best = (start, count);
        }
    }
    // Start a little before the first hit, for context.
    let first = hit[best.0..best.0 + n].iter().position(|h| *h).unwrap_or(0);
    let from = (best.0 + first).saturating_sub(n / 4).min(hit.len() - n);
    (from, from + n)
}

/// A message block inside a chunk's text.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub start: usize,
    pub end: usize,
    pub msg: i64,
    pub id: Option<String>,
    /// The message's time (unix seconds), when known.
    pub ts: Option<i64>,
}

/// The chosen window of a chunk.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    pub text: String,
    pub score: f64,
    /// Words of the text `score` was computed on (the scored messages; a
    /// reply added after them is shown but not scored).
    pub words: usize,
    pub blocks: Vec<Block>,
}

/// The best run of consecutive blocks whose text fits `max_chars`, plus the
/// next message when the total stays within 1.5 × `max_chars`. A single
/// block longer than the budget is cut around its best part; otherwise every
/// block in the window appears whole in its text.
pub fn best_window(scorer: &Scorer, text: &str, blocks: &[Block], max_chars: usize) -> Window {
    let valid: Vec<&Block> = blocks
        .iter()
        .filter(|b| {
            b.start < b.end
                && b.end <= text.len()
                && text.is_char_boundary(b.start)
                && text.is_char_boundary(b.end)
        })
        .collect();
    if valid.is_empty() {
        let cut = crate::text::truncate_chars(text, max_chars);
        let (score, words) = scorer.score_counted(cut);
        return Window {
            text: cut.to_string(),
            score,
            words,
            blocks: vec![],
        };
    }
    let (scores, words): (Vec<f64>, Vec<usize>) = valid
        .iter()
        .map(|b| scorer.score_counted(&text[b.start..b.end]))
        .unzip();
    let lens: Vec<usize> = valid
        .iter()
        .map(|b| text[b.start..b.end].chars().count() + 2)
        .collect();
    let (mut best, mut best_score) = ((0, 0), f64::MIN);
    let (mut lo, mut sum_len, mut sum_score) = (0, 0usize, 0.0);
    for hi in 0..valid.len() {
        sum_len += lens[hi];
        sum_score += scores[hi];
        while sum_len > max_chars && lo < hi {
            sum_len -= lens[lo];
            sum_score -= scores[lo];
            lo += 1;
        }
        if sum_score > best_score + 1e-9 {
            best = (lo, hi);
            best_score = sum_score;
        }
    }
    // Messages at either edge that match nothing only spend the budget.
    while best.0 < best.1 && scores[best.0] <= 0.0 {
        best.0 += 1;
    }
    while best.1 > best.0 && scores[best.1] <= 0.0 {
        best.1 -= 1;
    }
    // The reply after the best message often holds the answer (a question
    // matches the query, its answer does not): add the next message when it
    // keeps the window within half again the budget.
    // The window is then shown whole: every message it cites appears in
    // full in its text.
    let scored_words = words[best.0..=best.1].iter().sum();
    let used: usize = lens[best.0..=best.1].iter().sum();
    let with_reply =
        best.1 + 1 < valid.len() && used + lens[best.1 + 1] <= max_chars + max_chars / 2;
    if with_reply {
        best.1 += 1;
    }
    let chosen: Vec<Block> = valid[best.0..=best.1]
        .iter()
        .map(|b| (*b).clone())
        .collect();
    let joined = chosen
        .iter()
        .map(|b| &text[b.start..b.end])
        .collect::<Vec<_>>()
        .join("\n\n");
    // Only a single message longer than the budget is cut.
    if !with_reply && joined.chars().count() > max_chars {
        let text = cut_around(scorer, &joined, max_chars);
        let (score, words) = scorer.score_counted(&text);
        return Window {
            score,
            words,
            text,
            blocks: chosen,
        };
    }
    Window {
        score: best_score.max(0.0),
        words: scored_words,
        text: joined,
        blocks: chosen,
    }
}

/// The `max_chars` of `text` around its densest matches.
fn cut_around(scorer: &Scorer, text: &str, max_chars: usize) -> String {
    let words = (max_chars / 6).max(8);
    let plain: String = scorer
        .snippet(text, words)
        .chars()
        .filter(|c| *c != HL_OPEN && *c != HL_CLOSE)
        .collect();
    crate::text::truncate_chars(&plain, max_chars).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recall::plan::Weighted;
    use crate::recall::sanitize::{Term, TermKind};

    fn scorer(terms: &[(&str, TermKind, f64)]) -> Scorer {
        let w: Vec<Weighted> = terms
            .iter()
            .map(|(t, k, w)| Weighted {
                term: Term {
                    text: t.to_string(),
                    kind: *k,
                },
                df: 1,
                exact: true,
                weight: *w,
            })
            .collect();
        Scorer::new(&w)
    }

    #[test]
    fn covered_counts_each_query_word_once_at_its_weight() {
        let terms = [
            ("timeout", TermKind::Word, 3.0),
            ("retri", TermKind::Stem, 1.0),
            ("retries", TermKind::Word, 1.5),
        ];
        let w: Vec<Weighted> = terms
            .iter()
            .map(|(t, k, w)| Weighted {
                term: Term {
                    text: t.to_string(),
                    kind: *k,
                },
                df: 1,
                exact: true,
                weight: *w,
            })
            .collect();
        let s = Scorer::for_coverage(&w);
        // Two query words: timeout (3) and retries (its forms, 1.5 at most).
        assert!((s.covered("the timeout and the retries") - 1.0).abs() < 1e-9);
        assert!((s.covered("timeout timeout timeout") - 3.0 / 4.5).abs() < 1e-9);
        assert!((s.covered("it retried once") - 1.5 / 4.5).abs() < 1e-9);
        assert_eq!(s.covered("nothing of the kind"), 0.0);
        assert_eq!(Scorer::for_coverage(&[]).covered("timeout"), 0.0);
    }

    /// A query word that is its own stem ("deploy") matches its other
    /// forms ("Deploys") at a stem's weight, and its exact form once.
    #[test]
    fn a_word_that_is_its_own_stem_matches_its_other_forms() {
        let s = Scorer::for_coverage(&[Weighted {
            term: Term {
                text: "deploy".into(),
                kind: TermKind::Word,
            },
            df: 1,
            exact: true,
            weight: 2.0,
        }]);
        let exact = s.score("how do we deploy");
        let other = s.score("Deploys go through make");
        assert!((exact - 1.0).abs() < 1e-9, "{exact}");
        assert!((other - 2.0 * STEM_WEIGHT / 2.0).abs() < 1e-9, "{other}");
        assert_eq!(s.covered("Deploys go through make"), 1.0);
        assert_eq!(s.covered("nothing here"), 0.0);
    }

    #[test]
    fn phrases_stems_and_saturation() {
        let s = scorer(&[
            ("config loader", TermKind::Identifier, 2.0),
            ("pars", TermKind::Stem, 1.0),
        ]);
        assert!(s.score("the config loader is parsing") > s.score("the loader config is here"));
        assert!(s.score("parsing parsed parses") < 1.0 + 1e-9);
        assert_eq!(s.score("nothing relevant"), 0.0);
    }

    #[test]
    fn every_word_with_a_query_stem_gets_past_the_stem_keys() {
        // Each pair: a word and a stem it must match. The first three
        // are the stemmer's exceptions that rewrite a word's start.
        let cases = [
            ("dying", "die"),
            ("lying", "lie"),
            ("tying", "tie"),
            ("skies", "sky"),
            ("cries", "cri"),
            ("hoping", "hope"),
            ("mobility", "mobil"),
            ("relational", "relat"),
            ("early", "earli"),
            ("only", "onli"),
            ("us", "us"),
        ];
        for (word, stem) in cases {
            assert_eq!(with_stem(word, str::to_string), stem, "{word}");
            let s = scorer(&[(stem, TermKind::Stem, 1.0)]);
            assert_eq!(s.score(word), 0.5, "{word} should match {stem}");
        }
        // Words that cannot have the stem are not stemmed, and do not match.
        let keys = StemKeys::new(["hope", "sky", "us"].into_iter());
        assert!(keys.admit("hoped") && keys.admit("skies") && keys.admit("use"));
        assert!(!keys.admit("happy") && !keys.admit("spy") && !keys.admit("as"));
    }

    #[test]
    fn query_words_near_each_other_score_higher_than_scattered_ones() {
        let terms = [
            ("commute", TermKind::Word, 2.0),
            ("minutes", TermKind::Word, 1.0),
            ("minut", TermKind::Stem, 1.0),
        ];
        let plain = scorer(&terms);
        let near = scorer(&terms).with_proximity(1.0);
        let close = "my commute takes 45 minutes each way";
        let apart = "the commute was discussed at length before we spent a few minutes";
        // Without the bonus the two texts tie; with it, the close one wins
        // by the lighter word's weight times the saturated pair count.
        assert!((plain.score(close) - plain.score(apart)).abs() < 1e-9);
        assert!((near.score(close) - plain.score(close) - 0.5).abs() < 1e-9);
        assert_eq!(near.score(apart), plain.score(apart));
        // A word and its own stem on one token, or a word repeated, are
        // not two query words near each other.
        assert_eq!(
            near.score("minutes minutes"),
            plain.score("minutes minutes")
        );
        assert_eq!(near.score("commute"), plain.score("commute"));
        // Off by default, and never negative.
        assert_eq!(
            scorer(&terms).with_proximity(-1.0).score(close),
            plain.score(close)
        );
    }

    #[test]
    fn window_picks_the_matching_messages_within_budget() {
        let text = "a: hello there\n\nb: the flaky test again\n\na: unrelated chatter here\n\nb: fixed the flaky test";
        let mut blocks = Vec::new();
        let mut start = 0;
        for (i, part) in text.split("\n\n").enumerate() {
            blocks.push(Block {
                start,
                end: start + part.len(),
                msg: i as i64,
                id: Some(format!("m{i}")),
                ts: None,
            });
            start += part.len() + 2;
        }
        let s = scorer(&[("flaky", TermKind::Word, 1.0)]);
        let w = best_window(&s, text, &blocks, 30);
        assert_eq!(w.blocks.len(), 1);
        assert!(w.text.contains("flaky"));
        // The reply after the match comes along when it fits in 1.5x.
        let w = best_window(&s, text, &blocks, 40);
        assert_eq!(w.blocks.first().map(|b| b.msg), Some(1));
        assert_eq!(w.blocks.last().map(|b| b.msg), Some(2));
        let w = best_window(&s, text, &blocks, 1000);
        assert_eq!(w.blocks.first().map(|b| b.msg), Some(1));
        assert_eq!(w.blocks.last().map(|b| b.msg), Some(3));
    }

    #[test]
    fn a_score_counts_the_words_it_read() {
        let s = scorer(&[("deploy", TermKind::Word, 1.0)]);
        assert_eq!(s.score_counted(""), (0.0, 0));
        assert_eq!(s.score_counted("Deploy, world! x_y 3.14").1, 6);
        assert_eq!(s.score_counted("naïve café — deploy").1, 3);
        assert_eq!(s.score_counted("deploy it").0, s.score("deploy it"));
    }

    /// The window's length is that of what was scored: the reply added
    /// after the best message is shown, not counted.
    #[test]
    fn a_window_counts_the_words_it_scored() {
        let s = scorer(&[("deploy", TermKind::Word, 1.0)]);
        let text = "we deploy today\n\nok sounds good to me";
        let blocks = [
            Block {
                start: 0,
                end: 15,
                msg: 0,
                id: None,
                ts: None,
            },
            Block {
                start: 17,
                end: text.len(),
                msg: 1,
                id: None,
                ts: None,
            },
        ];
        let w = best_window(&s, text, &blocks, 800);
        assert_eq!(w.blocks.len(), 2, "the reply is shown");
        assert_eq!(w.words, 3);
        // A single message longer than the budget is cut, and counted cut.
        let long = "deploy ".repeat(300);
        let w = best_window(&s, &long, &[], 100);
        assert_eq!(w.words, s.score_counted(&w.text).1);
        assert!(w.words < 300);
    }

    #[test]
    fn snippet_highlights_matches() {
        let s = scorer(&[("loader", TermKind::Word, 1.0)]);
        let snip = s.snippet("one two three the loader failed four five six", 4);
        assert!(snip.contains("\u{2}loader\u{3}"), "{snip:?}");
        assert!(snip.starts_with('…'));
    }

    /// Issue 37 item 13: the punctuation around the first and last words
    /// shown was cut ("(moved from 1337 in Feb").
    #[test]
    fn r37_a_snippet_keeps_the_punctuation_that_clings_to_its_words() {
        let s = scorer(&[("moved", TermKind::Word, 1.0)]);
        let whole = s.snippet("The port (moved from 1337 in Feb).", 20);
        assert_eq!(whole, "The port (\u{2}moved\u{3} from 1337 in Feb).");
        let cut = s.snippet("one two three (moved from 1337 in Feb). Four five six.", 5);
        assert_eq!(cut, "…three (\u{2}moved\u{3} from 1337 in…");
        let end = s.snippet("a b c d e f g h (moved here).", 4);
        assert_eq!(end, "…g h (\u{2}moved\u{3} here).");
    }
}
