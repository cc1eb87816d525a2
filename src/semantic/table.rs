//! A static embedding model: one vector per token of the vocabulary, read
//! from `model.safetensors` (the tensor `embeddings`, rows by dimension,
//! f32 or f16), the layout model2vec saves. A text's vector is the mean of
//! its tokens' rows, scaled to unit length: no network to run, so it costs
//! microseconds, and the file is memory-mapped, so loading touches only
//! the rows a text uses.
//!
//! Embedding a passage is tokenizing it and adding its tokens' rows, and
//! both are done once where they can be: a word's tokens are kept per
//! thread once the tokenizer has split it (when the tokenizer splits at
//! whitespace, so a word tokenizes alone as it does in its text; see
//! `Pieces::of`), and a row is added once per passage, times
//! its count, converted from f16 a row at a time.
//!
//! [`distil`] makes one from a transformer: each token of the vocabulary
//! embedded once, alone between the model's start and end tokens.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use half::slice::HalfFloatSliceExt;
use memmap2::Mmap;
use safetensors::{Dtype, SafeTensors};
use thread_local::ThreadLocal;
use tokenizers::Tokenizer;

use super::bert::Bert;
use super::locate::{TOKENIZER, WEIGHTS};
use crate::error::{Error, Result};

/// The tensor a static model's weights file holds.
pub const TABLE: &str = "embeddings";

/// A loaded token table.
pub struct Table {
    map: Mmap,
    /// Where the rows start in `map`.
    offset: usize,
    f16: bool,
    rows: usize,
    dim: usize,
    normalize: bool,
    tokenizer: Tokenizer,
    /// How a text falls into pieces the tokenizer tokenizes alone, and
    /// each thread's tokens of the pieces it tokenized; `None` when it
    /// cannot be split ([`Pieces::of`]).
    words: Option<(Pieces, ThreadLocal<RefCell<Words>>)>,
}

/// A word's token ids, by the word.
type Words = HashMap<Box<str>, Box<[u32]>>;

/// Words kept per thread, at most: past it the thread starts afresh. A
/// corpus of transcripts has far fewer distinct words than this.
const WORDS_KEPT: usize = 1 << 17;

/// The longest word kept, in bytes: longer ones (hashes, encoded blobs)
/// seldom come back, and keeping them would let a thread's words grow to
/// gigabytes. With it, a thread keeps some 25 MB at most.
const WORD_KEPT_BYTES: usize = 64;

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table")
            .field("rows", &self.rows)
            .field("dim", &self.dim)
            .field("f16", &self.f16)
            .finish_non_exhaustive()
    }
}

impl Table {
    /// Load the table in `dir`, whose weights file is already mapped.
    pub fn load(dir: &Path, map: Mmap, mut tokenizer: Tokenizer) -> Result<Table> {
        let bad = |detail: String| Error::Model {
            path: dir.to_path_buf(),
            detail,
        };
        let (offset, f16, rows, dim) = {
            let tensors = SafeTensors::deserialize(&map)
                .map_err(|e| bad(format!("{WEIGHTS} is not a safetensors file: {e}")))?;
            let view = tensors
                .tensor(TABLE)
                .map_err(|e| bad(format!("{WEIGHTS}: {e}")))?;
            let f16 = match view.dtype() {
                Dtype::F32 => false,
                Dtype::F16 => true,
                other => {
                    return Err(bad(format!(
                        "{WEIGHTS}: the `{TABLE}` table is {other:?}; recall reads F32 or F16"
                    )))
                }
            };
            let [rows, dim] = view.shape() else {
                return Err(bad(format!(
                    "{WEIGHTS}: the `{TABLE}` table has shape {:?}, not rows by dimension",
                    view.shape()
                )));
            };
            let offset = view.data().as_ptr() as usize - map.as_ptr() as usize;
            (offset, f16, *rows, *dim)
        };
        // A table's text is its whole text: no cut, no padding.
        tokenizer
            .with_truncation(None)
            .map_err(|e| bad(format!("{TOKENIZER}: {e}")))?;
        tokenizer.with_padding(None);
        let words = Pieces::of(&tokenizer).map(|pieces| (pieces, ThreadLocal::new()));
        Ok(Table {
            map,
            offset,
            f16,
            rows,
            dim,
            normalize: normalizes(dir),
            tokenizer,
            words,
        })
    }

    /// The vector size.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The number of rows (tokens) in the table.
    pub fn vocab_size(&self) -> usize {
        self.rows
    }

    /// One vector per text (unit length unless the model's config says
    /// `"normalize": false`); a text with no known token gets zeros.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        texts.iter().map(|t| self.embed_one(t)).collect()
    }

    fn embed_one(&self, text: &str) -> Result<Vec<f32>> {
        let mut ids = self.token_ids(text)?;
        ids.retain(|&id| (id as usize) < self.rows);
        // Each distinct row once, times its count: a passage repeats its
        // words, and adding a row is most of an embedding's cost.
        ids.sort_unstable();
        let mut sum = vec![0f32; self.dim];
        let mut row = Row::new(self.dim);
        for same in ids.chunk_by(|a, b| a == b) {
            self.add_row(same[0] as usize, same.len() as f32, &mut row, &mut sum);
        }
        if !ids.is_empty() {
            let scale = if self.normalize {
                1.0 / sum.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12)
            } else {
                1.0 / ids.len() as f32
            };
            sum.iter_mut().for_each(|x| *x *= scale);
        }
        Ok(sum)
    }

    /// The token ids of `text`, as the tokenizer gives them for the whole
    /// text. When it splits at whitespace (and punctuation), each piece is
    /// tokenized once per thread and its ids kept.
    fn token_ids(&self, text: &str) -> Result<Vec<u32>> {
        let Some((pieces, words)) = self.words.as_ref().filter(|(p, _)| p.may_cut(text)) else {
            return Ok(self.tokenize(text)?.to_vec());
        };
        let mut words = words.get_or(|| RefCell::new(Words::new())).borrow_mut();
        let mut ids = Vec::with_capacity(text.len() / 4);
        pieces.split.pieces(text, |piece| {
            if let Some(known) = words.get(piece) {
                ids.extend_from_slice(known);
                return Ok(());
            }
            let own = self.tokenize(piece)?;
            ids.extend_from_slice(&own);
            if piece.len() <= WORD_KEPT_BYTES {
                if words.len() >= WORDS_KEPT {
                    words.clear();
                }
                words.insert(piece.into(), own);
            }
            Ok(())
        })?;
        Ok(ids)
    }

    fn tokenize(&self, text: &str) -> Result<Box<[u32]>> {
        let encoding = self
            .tokenizer
            .encode_fast(text, false)
            .map_err(|e| Error::Model {
                path: PathBuf::from(TOKENIZER),
                detail: format!("cannot tokenize: {e}"),
            })?;
        Ok(encoding.get_ids().into())
    }

    /// Add `weight` times row `row` to `out`.
    fn add_row(&self, row: usize, weight: f32, buf: &mut Row, out: &mut [f32]) {
        let width = if self.f16 { 2 } else { 4 };
        let start = self.offset + row * self.dim * width;
        let bytes = &self.map[start..start + self.dim * width];
        if self.f16 {
            for (h, b) in buf.halves.iter_mut().zip(bytes.chunks_exact(2)) {
                *h = half::f16::from_le_bytes([b[0], b[1]]);
            }
            // The whole row at once: F16C's eight lanes when the CPU has it.
            buf.halves.convert_to_f32_slice(&mut buf.floats);
        } else {
            for (f, b) in buf.floats.iter_mut().zip(bytes.chunks_exact(4)) {
                *f = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            }
        }
        for (o, x) in out.iter_mut().zip(&buf.floats) {
            *o += weight * x;
        }
    }
}

/// One row read from the table, converted.
struct Row {
    halves: Vec<half::f16>,
    floats: Vec<f32>,
}

impl Row {
    fn new(dim: usize) -> Row {
        Row {
            halves: vec![half::f16::ZERO; dim],
            floats: vec![0.0; dim],
        }
    }
}

/// How a text is cut so that the tokenizer, given each piece alone, gives
/// the tokens it gives the whole text.
struct Pieces {
    split: Split,
    /// The added tokens the split would cut: a text holding one is
    /// tokenized whole.
    uncut: Vec<String>,
}

/// Whitespace to Rust, control characters to BERT's normalizer, which
/// removes them: vertical tab, form feed, next line.
const DROPPED_WHITESPACE: [char; 3] = ['\u{b}', '\u{c}', '\u{85}'];

/// Where a text can be cut.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Split {
    /// At whitespace.
    Whitespace,
    /// At whitespace, and around each ASCII punctuation character (BERT's
    /// pre-tokenizer makes each punctuation character a word of its own).
    WhitespaceAndPunctuation,
}

impl Pieces {
    /// How `tokenizer`'s texts can be cut, if they can: it must normalize
    /// character by character (BERT's normalizer, or none) and split at
    /// every whitespace before its model sees the text (BERT's
    /// pre-tokenizer, `Whitespace` or `WhitespaceSplit`). Other tokenizers
    /// (a byte-level or `Metaspace` one marks a word's start in its
    /// tokens) are given the whole text.
    fn of(tokenizer: &Tokenizer) -> Option<Pieces> {
        use tokenizers::normalizers::NormalizerWrapper;
        use tokenizers::pre_tokenizers::PreTokenizerWrapper;
        let normalizer = matches!(
            tokenizer.get_normalizer(),
            None | Some(NormalizerWrapper::BertNormalizer(_))
        );
        let split = match tokenizer.get_pre_tokenizer() {
            Some(PreTokenizerWrapper::BertPreTokenizer(_)) => Split::WhitespaceAndPunctuation,
            Some(PreTokenizerWrapper::Whitespace(_) | PreTokenizerWrapper::WhitespaceSplit(_)) => {
                Split::Whitespace
            }
            _ => return None,
        };
        // Added tokens are matched in the text before the split: one that
        // the split would cut ("[CLS]") sends a text holding it whole.
        let uncut = tokenizer
            .get_added_tokens_decoder()
            .into_values()
            .map(|t| t.content)
            .filter(|t| {
                let mut pieces = 0;
                let counted = split.pieces(t, |_| {
                    pieces += 1;
                    Ok(())
                });
                counted.is_ok() && pieces != 1
            })
            .collect();
        normalizer.then_some(Pieces { split, uncut })
    }

    /// Whether `text` may be cut: it holds no added token the cut would
    /// split, and none of the whitespace characters BERT's normalizer
    /// drops as control characters (so the words either side join) instead
    /// of splitting at them.
    fn may_cut(&self, text: &str) -> bool {
        !text.contains(DROPPED_WHITESPACE) && !self.uncut.iter().any(|t| text.contains(t.as_str()))
    }
}

impl Split {
    /// Call `each` with every non-empty piece of `text`, in order, until
    /// it fails.
    fn pieces<'t>(self, text: &'t str, mut each: impl FnMut(&'t str) -> Result<()>) -> Result<()> {
        let mut start = 0;
        for (i, c) in text.char_indices() {
            let punct = self == Split::WhitespaceAndPunctuation && c.is_ascii_punctuation();
            if c.is_whitespace() || punct {
                if start < i {
                    each(&text[start..i])?;
                }
                if punct {
                    each(&text[i..i + 1])?;
                }
                start = i + c.len_utf8();
            }
        }
        if start < text.len() {
            each(&text[start..])?;
        }
        Ok(())
    }
}

/// Whether the folder's `config.json` asks for unit vectors (model2vec's
/// `"normalize"`; yes when it does not say).
fn normalizes(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("config.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v.get("normalize").and_then(|n| n.as_bool()))
        .unwrap_or(true)
}

/// Tokens embedded per batch while distilling.
const DISTIL_BATCH: usize = 512;

/// The SIF coefficient `a` of each row's weight `a / (a + p(token))`, with
/// `p` the token's Zipf probability from its frequency rank: common words
/// ("the", "we") weigh next to nothing, rare ones fully. Measured on a
/// LoCoMo slice (docs/semantic.md): no weighting 0.475 budget recall,
/// a = 1e-4 0.638, 3e-3 0.655, 1e-2 0.650, 1e-3 0.668.
pub const SIF: f32 = 1e-3;

/// Each row's weight. BERT's WordPiece vocabulary lists whole words by
/// frequency from "the" on, so a token's rank is its id past "the"'s; the
/// ids before it (padding, unused slots, single characters) count as the
/// most frequent. A vocabulary without "the" ranks by id.
fn sif_weights(tokenizer: &Tokenizer, rows: usize) -> Vec<f32> {
    let first = tokenizer.token_to_id("the").unwrap_or(0) as usize;
    let zipf_norm = (rows as f32).ln() + 0.5772;
    (0..rows)
        .map(|id| {
            let rank = id.saturating_sub(first).max(1) as f32;
            let p = 1.0 / (rank * zipf_norm);
            SIF / (SIF + p)
        })
        .collect()
}

/// Distil a static table from the transformer `bert` (loaded from
/// `from`) into the folder `out`: each vocabulary token embedded alone
/// between the tokenizer's `[CLS]` and `[SEP]` and mean-pooled, weighted
/// by its rarity ([`SIF`]), stored as f16 with a copy of the tokenizer and
/// a model2vec-style `config.json`. `progress` is called with the tokens
/// done so far.
pub fn distil(bert: &Bert, from: &Path, out: &Path, mut progress: impl FnMut(usize)) -> Result<()> {
    let bad = |detail: String| Error::Model {
        path: from.to_path_buf(),
        detail,
    };
    let tokenizer = bert.tokenizer();
    let (cls, sep) = match (tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")) {
        (Some(c), Some(s)) => (c, s),
        _ => {
            return Err(bad(
                "the tokenizer has no [CLS] and [SEP] tokens; distilling needs a BERT WordPiece tokenizer".into(),
            ))
        }
    };
    let rows = tokenizer.get_vocab_size(true);
    let dim = bert.dim();
    let weights = sif_weights(tokenizer, rows);
    let mut table: Vec<u8> = Vec::with_capacity(rows * dim * 2);
    for start in (0..rows).step_by(DISTIL_BATCH) {
        let ids = (start..(start + DISTIL_BATCH).min(rows))
            .map(|id| vec![cls, id as u32, sep])
            .collect();
        for (v, w) in bert.embed_ids(ids)?.into_iter().zip(&weights[start..]) {
            table.extend(
                v.iter()
                    .flat_map(|x| half::f16::from_f32(x * w).to_le_bytes()),
            );
        }
        progress((start + DISTIL_BATCH).min(rows));
    }
    std::fs::create_dir_all(out).map_err(|e| Error::io("cannot create", out, e))?;
    let view = safetensors::tensor::TensorView::new(Dtype::F16, vec![rows, dim], &table)
        .map_err(|e| bad(format!("cannot build the table: {e}")))?;
    let weights = out.join(WEIGHTS);
    let bytes = safetensors::serialize([(TABLE, view)], None)
        .map_err(|e| bad(format!("cannot serialise the table: {e}")))?;
    crate::store::atomic_write(&weights, &bytes)?;
    let tok = std::fs::read(from.join(TOKENIZER))
        .map_err(|e| Error::io("cannot read", from.join(TOKENIZER), e))?;
    crate::store::atomic_write(&out.join(TOKENIZER), &tok)?;
    let config = serde_json::json!({
        "model_type": "model2vec",
        "normalize": true,
        "hidden_dim": dim,
        "sif_coefficient": SIF,
        "distilled_from": from.display().to_string(),
        "distilled_by": "recall model distil",
    });
    crate::store::atomic_write(
        &out.join("config.json"),
        serde_json::to_string_pretty(&config)?.as_bytes(),
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A folder with a word-level tokenizer over four tokens and their
    /// rows, stored as `dtype`.
    pub(crate) fn tiny_model(dir: &Path, f16: bool) {
        let tokenizer = serde_json::json!({
            "version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
            "normalizer": null, "pre_tokenizer": {"type": "Whitespace"},
            "post_processor": null, "decoder": null,
            "model": {"type": "WordLevel", "unk_token": "[UNK]",
                      "vocab": {"[UNK]": 0, "deploy": 1, "ship": 2, "cat": 3}}
        });
        std::fs::write(dir.join(TOKENIZER), tokenizer.to_string()).unwrap();
        let rows = [0.0f32, 0.0, 1.0, 0.0, 0.8, 0.6, 0.0, 1.0];
        let (dtype, bytes): (Dtype, Vec<u8>) = if f16 {
            let b = rows
                .iter()
                .flat_map(|x| half::f16::from_f32(*x).to_le_bytes());
            (Dtype::F16, b.collect())
        } else {
            (
                Dtype::F32,
                rows.iter().flat_map(|x| x.to_le_bytes()).collect(),
            )
        };
        let view = safetensors::tensor::TensorView::new(dtype, vec![4, 2], &bytes).unwrap();
        let file = safetensors::serialize([(TABLE, view)], None).unwrap();
        std::fs::write(dir.join(WEIGHTS), file).unwrap();
    }

    #[test]
    fn a_text_is_the_unit_mean_of_its_tokens_rows() -> Result<()> {
        for f16 in [false, true] {
            let t = tempfile::tempdir().unwrap();
            tiny_model(t.path(), f16);
            let (model, _) = super::super::Model::load(t.path())?;
            assert_eq!(model.kind(), super::super::Kind::Static);
            assert_eq!((model.dim(), model.vocab_size()), (2, 4));
            let v = model.embed(&["deploy ship", "cat", ""])?;
            let n = (1.8f32 * 1.8 + 0.6 * 0.6).sqrt();
            assert!((v[0][0] - 1.8 / n).abs() < 1e-3 && (v[0][1] - 0.6 / n).abs() < 1e-3);
            assert_eq!(v[1], vec![0.0, 1.0]);
            assert_eq!(v[2], vec![0.0, 0.0], "no token: zeros");
        }
        Ok(())
    }

    /// A table of one row over `tokenizer`: enough to cut and tokenize.
    fn table_over(tokenizer: Tokenizer) -> Table {
        let t = tempfile::tempdir().unwrap();
        let view = safetensors::tensor::TensorView::new(Dtype::F32, vec![1, 1], &[0u8; 4]).unwrap();
        std::fs::write(
            t.path().join(WEIGHTS),
            safetensors::serialize([(TABLE, view)], None).unwrap(),
        )
        .unwrap();
        let file = std::fs::File::open(t.path().join(WEIGHTS)).unwrap();
        let map = unsafe { Mmap::map(&file) }.unwrap();
        Table::load(t.path(), map, tokenizer).unwrap()
    }

    /// Every text gets from the pieces the ids the tokenizer gives it
    /// whole, and the second time from what the thread kept.
    fn assert_pieces_tokenize_as_the_whole(table: &Table, texts: &[&str]) {
        for text in texts {
            let whole = table.tokenize(text).unwrap();
            for time in ["first", "second"] {
                let cut = table.token_ids(text).unwrap();
                assert_eq!(&cut[..], &whole[..], "{time} time: {text:?}");
            }
        }
    }

    const TRICKY: &[&str] = &[
        "Deploy the walrus: make ship-it, then `git push --tags`.",
        r#"{"session_id":"019b03b7-a099","ts":1765293925,"text":"hi"}"#,
        "/Users/me/repo/src/agents/plugins/codex.plugin.ts:147",
        "Héllo ÉCOLE naïve café\tTabs\u{a0}and\u{2003}spaces",
        "中文字符和English混合, 日本語テキスト",
        "[CLS] what [SEP] a[MASK]b [UNK]",
        "emoji 🚀 rocket, math ∑x², dash – and — quotes “so” ‘on’",
        "\u{0}control\u{7}chars\u{200b}zero-width",
        "form\u{c}feed, vertical\u{b}tab, next\u{85}line, line\u{2028}separator",
        "",
        "   ",
        "supercalifragilisticexpialidocious_is_longer_than_most_words_but_not_than_one_hundred_chars_at_all_xx",
    ];

    /// BERT's tokenizer, as all-MiniLM-L6-v2 and the tables distilled
    /// from it ship it (BERT's normalizer and pre-tokenizer, WordPiece,
    /// bracketed special tokens), over a small vocabulary.
    fn bert_tokenizer() -> Tokenizer {
        let mut vocab = serde_json::Map::new();
        let words = [
            "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "deploy", "walrus", "make",
            "ship", "it", "git", "push", "tag", "##s", "session", "id", "text", "hi", "user",
            "##s", "src", "agent", "plugin", "code", "##x", "hello", "ecole", "cafe", "tab", "and",
            "space", "中", "文", "english", "what", "a", "b", "rocket", "math", "so", "on",
            "control", "char", "zero", "width", "super", "##cal", "##i", "-", ":", ",", "`", ".",
            "\"", "/", "{", "}", "[", "]", "_", "1", "##7", "##6", "##5",
        ];
        for (i, w) in words.iter().enumerate() {
            vocab.entry(w.to_string()).or_insert(i.into());
        }
        let added: Vec<_> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
            .iter()
            .map(|t| {
                serde_json::json!({"id": vocab[*t], "content": t, "single_word": false,
                    "lstrip": false, "rstrip": false, "normalized": false, "special": true})
            })
            .collect();
        let json = serde_json::json!({
            "version": "1.0", "truncation": null, "padding": null, "added_tokens": added,
            "normalizer": {"type": "BertNormalizer", "clean_text": true,
                           "handle_chinese_chars": true, "strip_accents": null, "lowercase": true},
            "pre_tokenizer": {"type": "BertPreTokenizer"},
            "post_processor": null, "decoder": null,
            "model": {"type": "WordPiece", "unk_token": "[UNK]",
                      "continuing_subword_prefix": "##", "max_input_chars_per_word": 100,
                      "vocab": vocab}
        });
        Tokenizer::from_bytes(json.to_string()).unwrap()
    }

    #[test]
    fn a_text_cut_into_words_tokenizes_as_it_does_whole() {
        let bert = table_over(bert_tokenizer());
        let (pieces, _) = bert.words.as_ref().expect("BERT's tokenizer is cut");
        assert_eq!(pieces.split, Split::WhitespaceAndPunctuation);
        // "[CLS]" is matched whole before the split: a text holding it is
        // tokenized whole.
        assert!(!pieces.may_cut("a [CLS] b") && pieces.may_cut("a [CL S] b"));
        assert_pieces_tokenize_as_the_whole(&bert, TRICKY);
        let t = tempfile::tempdir().unwrap();
        tiny_model(t.path(), false);
        let words = table_over(Tokenizer::from_file(t.path().join(TOKENIZER)).unwrap());
        assert_eq!(words.words.as_ref().unwrap().0.split, Split::Whitespace);
        assert_pieces_tokenize_as_the_whole(&words, TRICKY);
    }

    /// The same over the real transcripts with the real model's tokenizer
    /// (a distilled table copies it): every passage-sized piece of every
    /// transcript line.
    #[test]
    fn real_transcripts_tokenize_cut_as_they_do_whole() {
        let Some(dir) = super::super::test_model_dir() else {
            return;
        };
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/agent-transcripts");
        if !data.is_dir() {
            eprintln!("skipped: no transcripts at {}", data.display());
            return;
        }
        let table = table_over(Tokenizer::from_file(dir.join(TOKENIZER)).unwrap());
        assert!(table.words.is_some(), "all-MiniLM-L6-v2's tokenizer is cut");
        let mut texts = 0;
        for entry in walkdir::WalkDir::new(&data).into_iter().flatten() {
            if entry.path().extension().is_none_or(|e| e != "jsonl") {
                continue;
            }
            let content = std::fs::read_to_string(entry.path()).unwrap_or_default();
            for line in content.lines().take(200) {
                let text: String = line.chars().take(4_000).collect();
                assert_pieces_tokenize_as_the_whole(&table, &[&text]);
                texts += 1;
            }
        }
        assert!(texts > 1_000, "{texts} texts");
    }

    #[test]
    fn a_table_of_another_type_or_shape_is_refused() {
        let t = tempfile::tempdir().unwrap();
        tiny_model(t.path(), false);
        let view = safetensors::tensor::TensorView::new(Dtype::F32, vec![8], &[0u8; 32]).unwrap();
        let file = safetensors::serialize([(TABLE, view)], None).unwrap();
        std::fs::write(t.path().join(WEIGHTS), file).unwrap();
        let e = super::super::Model::load(t.path()).unwrap_err().to_string();
        assert!(e.contains("not rows by dimension"), "{e}");
    }

    #[test]
    fn rare_tokens_weigh_more_than_common_ones() {
        let t = tempfile::tempdir().unwrap();
        tiny_model(t.path(), false);
        let tok = Tokenizer::from_file(t.path().join(TOKENIZER)).unwrap();
        let w = sif_weights(&tok, 4);
        assert!(w[1] < w[2] && w[2] < w[3] && w[3] <= 1.0, "{w:?}");
    }
}
