//! A BERT sentence encoder (all-MiniLM-L6-v2 and its kin) run with
//! candle on the CPU: the weights memory-mapped from `model.safetensors`,
//! the text cut to the model's sequence length, the last layer mean-pooled
//! over the real tokens and scaled to unit length, as sentence-transformers
//! does for these models.

use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use super::locate::WEIGHTS;
use crate::error::{Error, Result};

/// Longest input in tokens when the folder does not say
/// (`sentence_bert_config.json`'s `max_seq_length`).
const DEFAULT_MAX_TOKENS: usize = 256;

/// A loaded transformer encoder.
pub struct Bert {
    model: BertModel,
    tokenizer: Tokenizer,
    dim: usize,
    dir: PathBuf,
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
    pub fn load(dir: &Path, mut tokenizer: Tokenizer) -> Result<Bert> {
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
        let config: Config = serde_json::from_str(&text)
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
        let vb = unsafe {
            VarBuilder::from_mmaped_safetensors(&[dir.join(WEIGHTS)], DType::F32, &Device::Cpu)
        }
        .map_err(|e| bad(format!("cannot read {WEIGHTS}: {e}")))?;
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
        let ids: Vec<Vec<u32>> = encodings.iter().map(|e| e.get_ids().to_vec()).collect();
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
        let mask = ids.iter().map(|i| vec![1; i.len()]).collect();
        self.run(ids, mask).map_err(|e| Error::Model {
            path: self.dir.clone(),
            detail: format!("inference failed: {e}"),
        })
    }

    /// The tokenizer, for ids of single tokens.
    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
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

/// `max_seq_length` from `sentence_bert_config.json`, if the folder has it.
fn max_seq_length(dir: &Path) -> Option<usize> {
    let text = std::fs::read_to_string(dir.join("sentence_bert_config.json")).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    value.get("max_seq_length")?.as_u64().map(|n| n as usize)
}
