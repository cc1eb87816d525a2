//! A static embedding model: one vector per token of the vocabulary, read
//! from `model.safetensors` (the tensor `embeddings`, rows by dimension,
//! f32 or f16), the layout model2vec saves. A text's vector is the mean of
//! its tokens' rows, scaled to unit length: no network to run, so it costs
//! microseconds, and the file is memory-mapped, so loading touches only
//! the rows a text uses.
//!
//! [`distil`] makes one from a transformer: each token of the vocabulary
//! embedded once, alone between the model's start and end tokens.

use std::path::{Path, PathBuf};

use memmap2::Mmap;
use safetensors::{Dtype, SafeTensors};
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
}

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
        Ok(Table {
            map,
            offset,
            f16,
            rows,
            dim,
            normalize: normalizes(dir),
            tokenizer,
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
        let encoding = self
            .tokenizer
            .encode_fast(text, false)
            .map_err(|e| Error::Model {
                path: PathBuf::from(TOKENIZER),
                detail: format!("cannot tokenize: {e}"),
            })?;
        let mut sum = vec![0f32; self.dim];
        let mut n = 0usize;
        for &id in encoding.get_ids() {
            if (id as usize) < self.rows {
                self.add_row(id as usize, &mut sum);
                n += 1;
            }
        }
        if n > 0 {
            let scale = if self.normalize {
                1.0 / sum.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12)
            } else {
                1.0 / n as f32
            };
            sum.iter_mut().for_each(|x| *x *= scale);
        }
        Ok(sum)
    }

    fn add_row(&self, row: usize, out: &mut [f32]) {
        let width = if self.f16 { 2 } else { 4 };
        let start = self.offset + row * self.dim * width;
        let bytes = &self.map[start..start + self.dim * width];
        if self.f16 {
            for (o, b) in out.iter_mut().zip(bytes.chunks_exact(2)) {
                *o += half::f16::from_le_bytes([b[0], b[1]]).to_f32();
            }
        } else {
            for (o, b) in out.iter_mut().zip(bytes.chunks_exact(4)) {
                *o += f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            }
        }
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
mod tests {
    use super::*;

    /// A folder with a word-level tokenizer over four tokens and their
    /// rows, stored as `dtype`.
    fn tiny_model(dir: &Path, f16: bool) {
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
