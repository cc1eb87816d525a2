//! The embedding model `[semantic] model` names (issue 38): which folder,
//! and the operations on it a front end offers (`recall model check`,
//! `recall model distil`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use super::Memory;
use crate::error::{Error, Result};
use crate::recall::DenseQuery;
use crate::semantic::{self, Check, Model};

/// Models loaded by this process, by configured path, each with its
/// identity (see `semantic::identity`): a long-running front end (`recall
/// mcp`, `recall serve`) loads and hashes its model once, not per query.
pub(super) fn loaded(path: &Path, home: &Path) -> Result<(Arc<Model>, String)> {
    type Loaded = HashMap<PathBuf, (Arc<Model>, String)>;
    static MODELS: OnceLock<Mutex<Loaded>> = OnceLock::new();
    let models = MODELS.get_or_init(Mutex::default);
    if let Some(m) = models.lock().unwrap_or_else(|e| e.into_inner()).get(path) {
        return Ok(m.clone());
    }
    let (model, dir) = Model::load(path)?;
    let id = semantic::identity_cached(&model, &dir, &models_cache(home))?;
    let entry = (Arc::new(model), id);
    models
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(path.to_path_buf(), entry.clone());
    Ok(entry)
}

/// The file that remembers models' identities (see
/// `semantic::identity_cached`).
fn models_cache(home: &Path) -> PathBuf {
    home.join("cache").join("models.json")
}

/// The folder where resident processes lend their model (see
/// `semantic::lend`).
fn lend_dir(home: &Path) -> PathBuf {
    home.join("run")
}

/// How long a one-shot process waits for a lent vector before it loads
/// the model itself: a lender still loading its model at start answers
/// well within it.
const LEND_WAIT: Duration = Duration::from_secs(1);

impl Memory {
    /// The configured model's folder: `[semantic] model` (or
    /// `RECALL_SEMANTIC_MODEL`), a relative path read from the home
    /// folder; `None` when hybrid recall is off.
    pub fn semantic_model(&self) -> Option<PathBuf> {
        let path = self.config.semantic.model.as_ref()?;
        Some(self.home.root().join(path))
    }

    /// `given`, else the configured model, else an error saying how to
    /// configure one.
    fn model_path(&self, given: Option<&Path>) -> Result<PathBuf> {
        match given {
            Some(p) => Ok(p.to_path_buf()),
            None => self.semantic_model().ok_or_else(|| {
                Error::invalid(format!(
                    "no embedding model configured: set `[semantic] model = \"DIR\"` in {} (or RECALL_SEMANTIC_MODEL), or pass --model DIR; {}",
                    self.home.root().join("config.toml").display(),
                    semantic::locate::FETCH
                ))
            }),
        }
    }

    /// The question `text` embedded by the configured model, with the
    /// config's rescue settings: hybrid recall's dense side (see
    /// `recall::dense`). Fails, saying how to fix it, when no model is
    /// configured or it does not load.
    pub fn dense_query(&self, text: &str) -> Result<DenseQuery> {
        let path = self.semantic_model().ok_or_else(|| {
            Error::invalid(format!(
                "hybrid recall is on but no embedding model is configured: set `[semantic] model = \"DIR\"` in {} (or RECALL_SEMANTIC_MODEL); {}",
                self.home.root().join("config.toml").display(),
                semantic::locate::FETCH
            ))
        })?;
        let home = self.home.root();
        let (vector, identity) = if self.is_resident() {
            let (model, identity) = loaded(&path, home)?;
            (model.embed(&[text])?.pop().unwrap_or_default(), identity)
        } else if let Some(lent) = semantic::lend::borrow(&lend_dir(home), &path, text, LEND_WAIT) {
            tracing::debug!("the question embedded by a resident process's model");
            lent
        } else {
            // One question in this process: only what it needs is read.
            let (mut vectors, identity) =
                semantic::embed_once(&path, &[text], &models_cache(home))?;
            (vectors.pop().unwrap_or_default(), identity)
        };
        Ok(DenseQuery {
            vector,
            model: identity,
            rescue: self.config.semantic.rescue(),
        })
    }

    /// Lend the configured model to one-shot processes (the prompt hook,
    /// a one-shot `recall query`) for as long as the returned value lives:
    /// they embed their question with it instead of loading the model
    /// (see `semantic::lend`). For a resident memory
    /// ([`Memory::with_read_pools`]: `recall mcp`, `recall serve`), which
    /// loads the model once, at once, on the lending thread. `None` when
    /// no model is configured, the config uses it for neither hybrid
    /// recall nor the prompt hook's gate (nothing would borrow it, and the
    /// model would only take memory), the memory is not resident, or the
    /// socket cannot be made (logged: lending only ever saves time).
    pub fn lend_model(&self) -> Option<semantic::lend::Lending> {
        let used = self.config.semantic.hybrid || self.config.semantic.hook_gate.is_some();
        if !self.is_resident() || !used {
            return None;
        }
        let path = self.semantic_model()?;
        let home = self.home.root().to_path_buf();
        let (warm_path, warm_home) = (path.clone(), home.clone());
        let warm = move || {
            if let Err(e) = loaded(&warm_path, &warm_home) {
                tracing::debug!("the model to lend does not load: {e}");
            }
        };
        let (model_path, model_home) = (path.clone(), home.clone());
        let embed = move |text: &str| {
            let (model, identity) = loaded(&model_path, &model_home)?;
            Ok((model.embed(&[text])?.pop().unwrap_or_default(), identity))
        };
        match semantic::lend::lend(&lend_dir(&home), &path, warm, embed) {
            Ok(lending) => {
                tracing::debug!(socket = %lending.socket().display(), "lending the model");
                Some(lending)
            }
            Err(e) => {
                tracing::debug!("the model is not lent: {e}");
                None
            }
        }
    }

    /// Load the model (`given`, else the configured one) and time it on
    /// this machine.
    pub fn model_check(&self, given: Option<&Path>) -> Result<Check> {
        semantic::check(&self.model_path(given)?)
    }

    /// Distil a static token table from the transformer (`given`, else the
    /// configured one) into `out`; `progress` gets (tokens done, tokens).
    /// Returns the folder the transformer was read from.
    pub fn model_distil(
        &self,
        given: Option<&Path>,
        out: &Path,
        mut progress: impl FnMut(usize, usize),
    ) -> Result<PathBuf> {
        let path = self.model_path(given)?;
        let (model, dir) = Model::load(&path)?;
        let Model::Transformer(bert) = &model else {
            return Err(Error::Model {
                path: dir,
                detail: "it is already a static table; distil from a transformer (`bash scripts/get-model.sh DIR`, in recall's source, fetches one)".into(),
            });
        };
        let total = bert.vocab_size();
        semantic::table::distil(bert, &dir, out, |done| progress(done, total))?;
        Ok(dir)
    }

    /// Embed the records of the index `conn` writes that have no vector,
    /// when a model is configured and the index's vectors are that
    /// model's (an index without vectors yet, or another model's, is left
    /// to `recall index`, which embeds every row). Best effort, after a
    /// record write: a model that does not load or a failed write leaves
    /// the record without a vector until the next `recall index`, and is
    /// only logged. The model is loaded only when a record lacks one.
    pub(crate) fn embed_records(&self, conn: &mut rusqlite::Connection) {
        let Some(path) = self.semantic_model() else {
            return;
        };
        let embedded = crate::index::records_without_vectors(conn).and_then(|recorded| {
            let Some(recorded) = recorded else {
                return Ok(0);
            };
            let (model, identity) = loaded(&path, self.home.root())?;
            if identity != recorded {
                return Ok(0);
            }
            crate::index::fill_record_vectors(conn, &model)
        });
        match embedded {
            Ok(n) => tracing::debug!(records = n, "record vectors written"),
            Err(e) => tracing::debug!("record vectors not written: {e}"),
        }
    }

    /// The model the indexer embeds passages with, loaded once per run,
    /// and the identity `meta.semantic_model` records (see
    /// [`semantic::identity`]); `None` when none is configured. A model
    /// that does not load is reported through `report_line` and the run
    /// indexes without vectors: an opt-in feature never stops indexing.
    pub(crate) fn embedder(
        &self,
        report_line: &mut dyn FnMut(String),
    ) -> Option<(Arc<Model>, String)> {
        let path = self.semantic_model()?;
        match loaded(&path, self.home.root()) {
            Ok(m) => Some(m),
            Err(e) => {
                report_line(format!("indexing without vectors: {e}"));
                None
            }
        }
    }
}
