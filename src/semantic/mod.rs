//! Embedding models for hybrid recall (issue 38): what `[semantic] model`
//! names, loaded from a folder on disk, run in this process on the CPU,
//! never fetched at run time.
//!
//! Two kinds, told apart by what `model.safetensors` holds:
//! - a transformer ([`bert::Bert`], candle's BERT): all-MiniLM-L6-v2 as
//!   `scripts/get-model.sh` fetches it, or any BERT sentence encoder with
//!   `config.json`;
//! - a static token table ([`table::Table`], model2vec's layout: the
//!   tensor `embeddings`): one vector per token, a text's vector the mean
//!   of its tokens'. `recall model distil` makes one from a transformer.
//!
//! [`locate`] finds the files (a plain folder or a Hugging Face cache
//! folder); [`check()`] times a model on this machine for `recall model
//! check`; [`lend`] lets a resident process embed for one-shot ones. docs/semantic.md has the measurements behind the choice.

pub mod bert;
pub mod check;
pub mod lend;
pub mod locate;
pub mod quant;
pub mod table;

use std::path::{Path, PathBuf};

use memmap2::Mmap;
use safetensors::SafeTensors;
use tokenizers::Tokenizer;

pub use check::{check, Check};

use crate::error::{Error, Result};
use locate::{TOKENIZER, WEIGHTS};

/// Which kind of model a folder holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A BERT encoder run layer by layer.
    Transformer,
    /// A static token table.
    Static,
}

impl Kind {
    /// The name `recall model check` prints.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Transformer => "transformer (BERT, candle)",
            Kind::Static => "static token table",
        }
    }
}

/// A loaded embedding model.
#[derive(Debug)]
pub enum Model {
    Transformer(Box<bert::Bert>),
    Static(Box<table::Table>),
}

impl Model {
    /// Load the model at `path` (a model folder or a Hugging Face cache
    /// folder; see [`locate::model_dir`]). Returns it and the folder its
    /// files were read from.
    pub fn load(path: &Path) -> Result<(Model, PathBuf)> {
        Model::load_for(path, None)
    }

    /// [`Model::load`], a transformer holding only the rows `only` needs
    /// when given (see [`bert::Bert::load_for`]); kept private so that
    /// such a model never outlives the texts it was loaded for.
    fn load_for(path: &Path, only: Option<&[&str]>) -> Result<(Model, PathBuf)> {
        let dir = locate::model_dir(path)?;
        let bad = |detail: String| Error::Model {
            path: dir.clone(),
            detail,
        };
        let tokenizer = Tokenizer::from_file(dir.join(TOKENIZER))
            .map_err(|e| bad(format!("{TOKENIZER} is not a tokenizer file: {e}")))?;
        let weights = dir.join(WEIGHTS);
        let file =
            std::fs::File::open(&weights).map_err(|e| Error::io("cannot open", &weights, e))?;
        // SAFETY: mapped read-only; recall never writes a model's files.
        let map = unsafe { Mmap::map(&file) }.map_err(|e| Error::io("cannot map", &weights, e))?;
        let model = match kind_of(&map).map_err(&bad)? {
            Kind::Static => Model::Static(Box::new(table::Table::load(&dir, map, tokenizer)?)),
            Kind::Transformer => {
                drop(map);
                Model::Transformer(Box::new(match only {
                    None => bert::Bert::load(&dir, tokenizer)?,
                    Some(texts) => bert::Bert::load_for(&dir, tokenizer, texts)?,
                }))
            }
        };
        Ok((model, dir))
    }

    /// Which kind it is.
    pub fn kind(&self) -> Kind {
        match self {
            Model::Transformer(_) => Kind::Transformer,
            Model::Static(_) => Kind::Static,
        }
    }

    /// The vector size.
    pub fn dim(&self) -> usize {
        match self {
            Model::Transformer(m) => m.dim(),
            Model::Static(m) => m.dim(),
        }
    }

    /// The vocabulary size.
    pub fn vocab_size(&self) -> usize {
        match self {
            Model::Transformer(m) => m.vocab_size(),
            Model::Static(m) => m.vocab_size(),
        }
    }

    /// One vector per text, in order.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        match self {
            Model::Transformer(m) => m.embed(texts),
            Model::Static(m) => m.embed(texts),
        }
    }
}

/// `texts` embedded by the model at `path`, with its identity
/// ([`identity_cached`], `cache` the file that remembers it), for a
/// process that embeds once: a transformer reads only the rows of its
/// word-embedding table that their tokens use (the prompt hook's gate
/// loads in about half the time). A process that embeds many texts in
/// turn keeps a whole model from [`Model::load`].
pub fn embed_once(path: &Path, texts: &[&str], cache: &Path) -> Result<(Vec<Vec<f32>>, String)> {
    let (model, dir) = Model::load_for(path, Some(texts))?;
    let identity = identity_cached(&model, &dir, cache)?;
    Ok((model.embed(texts)?, identity))
}

/// The kind of model whose weights file is `bytes`: a static table holds
/// the tensor `embeddings` (two dimensions); a BERT encoder its word
/// embeddings under `embeddings.word_embeddings.weight` (perhaps prefixed).
fn kind_of(bytes: &[u8]) -> std::result::Result<Kind, String> {
    let tensors = SafeTensors::deserialize(bytes)
        .map_err(|e| format!("{WEIGHTS} is not a safetensors file: {e}"))?;
    let names = tensors.names();
    if names.contains(&table::TABLE) {
        return Ok(Kind::Static);
    }
    if names
        .iter()
        .any(|n| n.ends_with("embeddings.word_embeddings.weight"))
    {
        return Ok(Kind::Transformer);
    }
    Err(format!(
        "{WEIGHTS} holds neither a token table (`{}`) nor BERT weights (`embeddings.word_embeddings.weight`); recall reads BERT sentence encoders and model2vec-style static models",
        table::TABLE
    ))
}

/// What identifies the vectors a model makes, as `meta.semantic_model`
/// records it: its kind, dimension and the BLAKE3 hash of its weights
/// file (a re-distilled table at the same path is another model).
pub fn identity(model: &Model, dir: &Path) -> Result<String> {
    let weights = dir.join(WEIGHTS);
    let file = std::fs::File::open(&weights).map_err(|e| Error::io("cannot open", &weights, e))?;
    let mut hasher = blake3::Hasher::new();
    hasher
        .update_reader(file)
        .map_err(|e| Error::io("cannot read", &weights, e))?;
    let kind = match model.kind() {
        Kind::Transformer => "transformer",
        Kind::Static => "static",
    };
    Ok(format!(
        "{kind} dim={} blake3={}",
        model.dim(),
        hasher.finalize().to_hex()
    ))
}

/// [`identity`], remembered in `cache` (a small private JSON file) by the
/// weights file's path, length, inode and change time: hashing a 23 MB
/// table costs every fresh process several milliseconds, and any write to
/// the file changes its change time. A cache that cannot be read or
/// written is passed over: the identity is then hashed as before.
pub fn identity_cached(model: &Model, dir: &Path, cache: &Path) -> Result<String> {
    let weights = dir.join(WEIGHTS);
    let Some(stamp) = file_stamp(&weights) else {
        return identity(model, dir);
    };
    let mut known: Vec<KnownIdentity> = std::fs::read(cache)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    if let Some(k) = known.iter().find(|k| k.stamp == stamp) {
        return Ok(k.identity.clone());
    }
    let id = identity(model, dir)?;
    known.retain(|k| k.stamp.path != stamp.path);
    known.push(KnownIdentity {
        stamp,
        identity: id.clone(),
    });
    // A few models at most: the newest kept.
    let drop = known.len().saturating_sub(8);
    known.drain(..drop);
    let written = serde_json::to_vec(&known)
        .map_err(crate::Error::from)
        .and_then(|bytes| {
            if let Some(parent) = cache.parent() {
                crate::store::create_private_dir(parent)?;
            }
            crate::store::atomic_write(cache, &bytes)
        });
    if let Err(e) = written {
        tracing::debug!("model identity not remembered in {}: {e}", cache.display());
    }
    Ok(id)
}

/// What tells one weights file from another without reading it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct FileStamp {
    path: PathBuf,
    len: u64,
    inode: u64,
    changed_s: i64,
    changed_ns: i64,
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct KnownIdentity {
    #[serde(flatten)]
    stamp: FileStamp,
    identity: String,
}

#[cfg(unix)]
fn file_stamp(path: &Path) -> Option<FileStamp> {
    use std::os::unix::fs::MetadataExt;
    let path = std::fs::canonicalize(path).ok()?;
    let m = std::fs::metadata(&path).ok()?;
    Some(FileStamp {
        len: m.len(),
        inode: m.ino(),
        changed_s: m.ctime(),
        changed_ns: m.ctime_nsec(),
        path,
    })
}

#[cfg(not(unix))]
fn file_stamp(_: &Path) -> Option<FileStamp> {
    None
}

/// Cosine similarity of two vectors of one size (unit vectors: their dot
/// product).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na * nb)
    }
}

/// The model the tests load: `RECALL_TEST_MODEL`, else the folder
/// `scripts/get-model.sh` fills by default. `None` (the test skips, saying
/// how to fetch it) outside CI; in CI (`CI` set) a missing model fails.
#[cfg(test)]
pub(crate) fn test_model_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("RECALL_TEST_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let target = std::env::var_os("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
            target.join("models/all-minilm-l6-v2")
        });
    if dir.join(WEIGHTS).is_file() {
        return Some(dir);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI needs the embedding model at {}: `bash scripts/get-model.sh` fetches it",
        dir.display()
    );
    eprintln!(
        "skipped: no embedding model at {}; `bash scripts/get-model.sh` fetches it (or set RECALL_TEST_MODEL)",
        dir.display()
    );
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paraphrases_are_closer_than_unrelated_text() -> Result<()> {
        let Some(dir) = test_model_dir() else {
            return Ok(());
        };
        let (model, _) = Model::load(&dir)?;
        assert_eq!((model.kind(), model.dim()), (Kind::Transformer, 384));
        assert_eq!(model.vocab_size(), 30522);
        let v = model.embed(&[
            "how do we ship a release?",
            "Deploys go through make ship-it from the release branch.",
            "My cat likes to sleep on the windowsill in the afternoon.",
        ])?;
        let norm: f32 = v[0].iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "{norm}");
        assert!(cosine(&v[0], &v[1]) > cosine(&v[0], &v[2]) + 0.2);
        Ok(())
    }

    #[test]
    fn a_batch_embeds_each_text_as_it_would_alone() -> Result<()> {
        let Some(dir) = test_model_dir() else {
            return Ok(());
        };
        let (model, _) = Model::load(&dir)?;
        let texts = [
            "a short one",
            "a much longer text, padded to nothing in its own batch",
        ];
        let batch = model.embed(&texts)?;
        for (text, v) in texts.iter().zip(&batch) {
            let alone = model.embed(&[text])?;
            assert!(cosine(&alone[0], v) > 0.9999, "{text}");
        }
        Ok(())
    }

    /// A transformer loaded for some texts (stop 55, the prompt hook's
    /// gate) holds a few rows of its word-embedding table, not 30,522, and
    /// embeds those texts to the bit as the whole model does; a text with
    /// a token it lacks is refused, not embedded with another token's row.
    #[test]
    fn a_model_loaded_for_its_texts_embeds_them_as_the_whole_model_does() -> Result<()> {
        let Some(dir) = test_model_dir() else {
            return Ok(());
        };
        let texts = [
            "analyze history.jsonl and tell me how sessions are tracked",
            "ok",
        ];
        let t = tempfile::tempdir().unwrap();
        let cache = t.path().join("models.json");
        let (once, identity) = embed_once(&dir, &texts, &cache)?;
        let (whole, _) = Model::load(&dir)?;
        assert_eq!(once, whole.embed(&texts)?);
        assert_eq!(identity, super::identity(&whole, &dir)?);
        let (some, _) = Model::load_for(&dir, Some(&texts))?;
        let Model::Transformer(bert) = &some else {
            panic!("a transformer");
        };
        assert!(bert.rows() < 40, "{} rows", bert.rows());
        let e = some.embed(&["walrus"]).unwrap_err().to_string();
        assert!(e.contains("loaded for other texts"), "{e}");
        Ok(())
    }

    /// Stop 46: the identity is hashed once per weights file, not once per
    /// process; the cache is read while the file is unchanged, and a file
    /// rewritten (even to the same length) is hashed again.
    #[test]
    fn a_models_identity_is_remembered_until_its_file_changes() -> Result<()> {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("model");
        std::fs::create_dir(&dir).unwrap();
        table::tests::tiny_model(&dir, false);
        let (model, _) = Model::load(&dir)?;
        let cache = t.path().join("cache/models.json");
        let hashed = identity(&model, &dir)?;
        assert_eq!(identity_cached(&model, &dir, &cache)?, hashed);
        // Read from the cache: an identity planted there is what comes back.
        let planted = std::fs::read_to_string(&cache)
            .unwrap()
            .replace(&hashed, "static dim=2 blake3=planted");
        std::fs::write(&cache, planted).unwrap();
        assert_eq!(
            identity_cached(&model, &dir, &cache)?,
            "static dim=2 blake3=planted"
        );
        // The weights rewritten to the same length: hashed again, whatever
        // the cache says (the file's change time moved).
        let weights = dir.join(WEIGHTS);
        let mut bytes = std::fs::read(&weights).unwrap();
        *bytes.last_mut().unwrap() ^= 0x01;
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&weights, &bytes).unwrap();
        let (model, _) = Model::load(&dir)?;
        let again = identity_cached(&model, &dir, &cache)?;
        assert_eq!(again, identity(&model, &dir)?);
        assert_ne!(again, hashed);
        // A cache that is not JSON is passed over.
        std::fs::write(&cache, "not json").unwrap();
        assert_eq!(identity_cached(&model, &dir, &cache)?, again);
        Ok(())
    }

    #[test]
    fn weights_of_another_kind_are_refused_with_what_recall_reads() {
        let view =
            safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![1], &[0u8; 4])
                .unwrap();
        let bytes = safetensors::serialize([("lm_head.weight", view)], None).unwrap();
        let e = kind_of(&bytes).unwrap_err();
        assert!(e.contains("neither a token table"), "{e}");
        assert!(kind_of(b"not safetensors")
            .unwrap_err()
            .contains("not a safetensors file"));
    }

    /// Issue 38 item 5: candle's encoder, as recall runs it, makes the
    /// vectors sentence-transformers' pipeline makes. The reference is
    /// `scripts/reference-embeddings.py` (numpy, float64), which wrote the
    /// file; the sentences go through as one batch, as the index sends them.
    /// One is past 256 tokens: cut at tokenizer.json's own 128 instead, its
    /// cosine would be 0.973.
    #[test]
    fn the_transformer_matches_the_reference_vectors() -> Result<()> {
        let Some(dir) = test_model_dir() else {
            return Ok(());
        };
        let (model, _) = Model::load(&dir)?;
        assert_eq!((model.kind(), model.dim()), (Kind::Transformer, 384));
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/semantic/reference-minilm.json");
        let text = std::fs::read_to_string(&path).expect("the reference vectors are committed");
        let reference: serde_json::Value =
            serde_json::from_str(&text).expect("the reference file is JSON");
        let sentences = reference["sentences"]
            .as_array()
            .expect("the reference file lists sentences");
        let texts: Vec<&str> = sentences
            .iter()
            .map(|s| s["text"].as_str().expect("each sentence has a text"))
            .collect();
        let vectors = model.embed(&texts)?;
        for ((s, text), v) in sentences.iter().zip(&texts).zip(&vectors) {
            let want: Vec<f32> = s["vector"]
                .as_array()
                .expect("each sentence has a vector")
                .iter()
                .map(|x| x.as_f64().expect("a vector holds numbers") as f32)
                .collect();
            assert_eq!(want.len(), v.len(), "{text:?}");
            let cos = cosine(&want, v);
            let head: String = text.chars().take(50).collect();
            eprintln!("cosine {cos:.6}  {head:?}");
            assert!(
                cos >= 0.99,
                "the transformer's vector for {text:?} has cosine {cos} with the reference's"
            );
        }
        Ok(())
    }
}
