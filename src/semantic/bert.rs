//! A BERT sentence encoder (all-MiniLM-L6-v2 and its kin) run with
//! candle on the CPU: the weights memory-mapped from `model.safetensors`,
//! the text cut to the model's sequence length, the last layer mean-pooled
//! over the real tokens and scaled to unit length, as sentence-transformers
//! does for these models. A process that embeds one text (the prompt
//! hook's gate) loads only the word-embedding rows its tokens use
//! ([`Bert::load_for`]).

use std::path::{Path, PathBuf};

use candle_core::safetensors::MmapedSafetensors;
use candle_core::{DType, Device, Shape, Tensor};
use candle_nn::var_builder::SimpleBackend;
use candle_nn::{Init, VarBuilder};
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use super::locate::WEIGHTS;
use crate::error::{Error, Result};

/// Longest input in tokens when the folder does not say
/// (`sentence_bert_config.json`'s `max_seq_length`).
const DEFAULT_MAX_TOKENS: usize = 256;

/// The tensor holding one row per token of the vocabulary (perhaps under
/// a prefix such as `bert.`).
const WORD_EMBEDDINGS: &str = "embeddings.word_embeddings.weight";

/// A loaded transformer encoder.
pub struct Bert {
    model: BertModel,
    tokenizer: Tokenizer,
    dim: usize,
    dir: PathBuf,
    /// For an encoder loaded for some texts ([`Bert::load_for`]): the
    /// token ids whose rows it holds, ascending; row `i` is token
    /// `rows[i]`.
    rows: Option<Vec<u32>>,
}

impl std::fmt::Debug for Bert {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bert")
            .field("dir", &self.dir)
            .field("dim", &self.dim)
            .finish_non_exhaustive()
    }
}

impl Bert {
    /// Load the encoder in `dir` (`config.json`, `model.safetensors`,
    /// and the tokenizer the caller read).
    pub fn load(dir: &Path, tokenizer: Tokenizer) -> Result<Bert> {
        Bert::load_rows(dir, tokenizer, None)
    }

    /// Load the encoder in `dir` for `texts` alone: of the word-embedding
    /// table, 47 MB of all-MiniLM-L6-v2's 90, only the rows their tokens
    /// use are read, so a process that embeds once copies about half the
    /// weights. It embeds `texts` as [`Bert::load`]'s encoder does, to the
    /// bit; any other text may hold a token it lacks, and
    /// [`Bert::embed`] then fails.
    pub fn load_for(dir: &Path, tokenizer: Tokenizer, texts: &[&str]) -> Result<Bert> {
        Bert::load_rows(dir, tokenizer, Some(texts))
    }

    fn load_rows(dir: &Path, mut tokenizer: Tokenizer, only: Option<&[&str]>) -> Result<Bert> {
        let bad = |detail: String| Error::Model {
            path: dir.to_path_buf(),
            detail,
        };
        let config_path = dir.join("config.json");
        let text = std::fs::read_to_string(&config_path).map_err(|e| {
            bad(format!(
                "cannot read config.json ({e}); a transformer's folder holds config.json beside {WEIGHTS}"
            ))
        })?;
        let mut config: Config = serde_json::from_str(&text)
            .map_err(|e| bad(format!("config.json is not a BERT configuration: {e}")))?;
        let max_tokens = max_seq_length(dir)
            .unwrap_or(DEFAULT_MAX_TOKENS)
            .min(config.max_position_embeddings);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_tokens,
                ..TruncationParams::default()
            }))
            .map_err(|e| bad(format!("tokenizer.json: {e}")))?;
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            pad_id: config.pad_token_id as u32,
            ..PaddingParams::default()
        }));
        // SAFETY: the weights file is mapped read-only; recall never writes
        // it, and a model folder replaced under a running process is the
        // same hazard as for any memory-mapped read (candle's own loader).
        let weights = unsafe { MmapedSafetensors::new(dir.join(WEIGHTS)) }
            .map_err(|e| bad(format!("cannot read {WEIGHTS}: {e}")))?;
        let rows = match only {
            None => None,
            Some(texts) => {
                let encodings = tokenizer
                    .encode_batch(texts.to_vec(), true)
                    .map_err(|e| bad(format!("cannot tokenize: {e}")))?;
                // The padding token too: a batch pads its shorter texts.
                let mut ids: Vec<u32> = encodings
                    .iter()
                    .flat_map(|e| e.get_ids().iter().copied())
                    .chain([config.pad_token_id as u32])
                    .collect();
                ids.sort_unstable();
                ids.dedup();
                config.vocab_size = ids.len();
                Some(ids)
            }
        };
        let backend: Box<dyn SimpleBackend> = match &rows {
            None => Box::new(weights),
            Some(ids) => Box::new(SomeRows {
                weights,
                ids: ids.clone(),
            }),
        };
        let vb = VarBuilder::from_backend(backend, DType::F32, Device::Cpu);
        let model = BertModel::load(vb, &config).map_err(|e| {
            bad(format!(
                "{WEIGHTS} does not hold the BERT weights config.json describes: {e}"
            ))
        })?;
        Ok(Bert {
            model,
            tokenizer,
            dim: config.hidden_size,
            dir: dir.to_path_buf(),
            rows,
        })
    }

    /// The vector size.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The tokenizer's vocabulary size.
    pub fn vocab_size(&self) -> usize {
        self.tokenizer.get_vocab_size(true)
    }

    /// One unit vector per text, in order. `texts` go through the model
    /// as one batch, padded to the longest.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let bad = |detail: String| Error::Model {
            path: self.dir.clone(),
            detail,
        };
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| bad(format!("cannot tokenize: {e}")))?;
        let ids = encodings
            .iter()
            .map(|e| self.rows_of(e.get_ids()))
            .collect::<Result<Vec<Vec<u32>>>>()?;
        let mask: Vec<Vec<u32>> = encodings
            .iter()
            .map(|e| e.get_attention_mask().to_vec())
            .collect();
        self.run(ids, mask)
            .map_err(|e| bad(format!("inference failed: {e}")))
    }

    /// Embed token ids given as they are (the special tokens included),
    /// for the static table's distillation.
    pub fn embed_ids(&self, ids: Vec<Vec<u32>>) -> Result<Vec<Vec<f32>>> {
        let ids = ids
            .iter()
            .map(|i| self.rows_of(i))
            .collect::<Result<Vec<Vec<u32>>>>()?;
        let mask = ids.iter().map(|i| vec![1; i.len()]).collect();
        self.run(ids, mask).map_err(|e| Error::Model {
            path: self.dir.clone(),
            detail: format!("inference failed: {e}"),
        })
    }

    /// How many rows of the word-embedding table it holds.
    #[cfg(test)]
    pub(crate) fn rows(&self) -> usize {
        self.rows.as_ref().map_or(self.vocab_size(), Vec::len)
    }

    /// The tokenizer, for ids of single tokens.
    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    /// Token ids as rows of this encoder's word-embedding table: the ids
    /// themselves for a whole model; an error when one has no row here.
    fn rows_of(&self, ids: &[u32]) -> Result<Vec<u32>> {
        let Some(rows) = &self.rows else {
            return Ok(ids.to_vec());
        };
        ids.iter()
            .map(|id| rows.binary_search(id).map(|i| i as u32))
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| Error::Model {
                path: self.dir.clone(),
                detail: "the encoder was loaded for other texts and lacks a token's row".into(),
            })
    }

    fn run(&self, ids: Vec<Vec<u32>>, mask: Vec<Vec<u32>>) -> candle_core::Result<Vec<Vec<f32>>> {
        let device = &self.model.device;
        let ids = Tensor::new(ids, device)?;
        let mask = Tensor::new(mask, device)?;
        let types = ids.zeros_like()?;
        let out = self.model.forward(&ids, &types, Some(&mask))?;
        // Mean over the real tokens: sum(out * mask) / sum(mask).
        let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
        let summed = out.broadcast_mul(&mask)?.sum(1)?;
        let counts = mask.sum(1)?;
        let mean = summed.broadcast_div(&counts)?;
        let norm = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
        mean.broadcast_div(&norm)?.to_vec2::<f32>()
    }
}

/// The weights file with its word-embedding table cut to the rows of
/// `ids`, read from the mapped file row by row: the rest of the table is
/// never copied.
struct SomeRows {
    weights: MmapedSafetensors,
    ids: Vec<u32>,
}

impl SomeRows {
    fn tensor(&self, name: &str, dtype: DType, dev: &Device) -> candle_core::Result<Tensor> {
        if !name.ends_with(WORD_EMBEDDINGS) {
            return self.weights.load(name, dev)?.to_dtype(dtype);
        }
        let view = self.weights.get(name)?;
        let &[tokens, dim] = view.shape() else {
            candle_core::bail!(
                "{name} has shape {:?}, not (tokens, dimension)",
                view.shape()
            );
        };
        if let Some(id) = self.ids.iter().find(|&&id| id as usize >= tokens) {
            candle_core::bail!("token id {id} is past {name}'s {tokens} rows");
        }
        let rows = if view.dtype() == safetensors::Dtype::F32 {
            let data = view.data();
            let width = dim * 4;
            let values: Vec<f32> = self
                .ids
                .iter()
                .flat_map(|&id| {
                    let at = id as usize * width;
                    data[at..at + width]
                        .chunks_exact(4)
                        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                })
                .collect();
            Tensor::from_vec(values, (self.ids.len(), dim), dev)?
        } else {
            // Another type: the whole table converted, then cut.
            let ids = Tensor::new(self.ids.as_slice(), dev)?;
            self.weights.load(name, dev)?.index_select(&ids, 0)?
        };
        rows.to_dtype(dtype)
    }
}

impl SimpleBackend for SomeRows {
    fn get(
        &self,
        shape: Shape,
        name: &str,
        _: Init,
        dtype: DType,
        dev: &Device,
    ) -> candle_core::Result<Tensor> {
        let tensor = self.tensor(name, dtype, dev)?;
        if tensor.shape() != &shape {
            candle_core::bail!(
                "{name} has shape {:?}, expected {:?}",
                tensor.shape(),
                shape
            );
        }
        Ok(tensor)
    }

    fn get_unchecked(&self, name: &str, dtype: DType, dev: &Device) -> candle_core::Result<Tensor> {
        self.tensor(name, dtype, dev)
    }

    fn contains_tensor(&self, name: &str) -> bool {
        self.weights.get(name).is_ok()
    }
}

/// `max_seq_length` from `sentence_bert_config.json`, if the folder has it.
fn max_seq_length(dir: &Path) -> Option<usize> {
    let text = std::fs::read_to_string(dir.join("sentence_bert_config.json")).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    value.get("max_seq_length")?.as_u64().map(|n| n as usize)
}
