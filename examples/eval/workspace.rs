//! The folder a run works in: the recall home, the converted data and the
//! markers saying which datasets are already indexed (and by which `recall`
//! binary, so reusing an index built by another build is flagged).
//!
//! The recall home is `home/` inside the folder, unless the run indexes into
//! an existing home (`eval beam --merged --home DIR`): then that home is used
//! and its markers live in it (`DIR/.eval-indexed-<set>.json`), so they go
//! when the home goes, while the converted data stays in the workspace.

use std::cell::Cell;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use serde_json::Value;

pub struct Workspace {
    root: PathBuf,
    /// An existing recall home used instead of `root/home`.
    external_home: Option<PathBuf>,
    /// Removes the folder on drop when it is temporary.
    _tmp: Option<tempfile::TempDir>,
    /// Identifies the `recall` binary of this run (see [`Workspace::built_by`]).
    binary: Value,
    /// Whether an index built by another build was reused (its warning is
    /// printed once).
    warned: Cell<bool>,
}

impl Workspace {
    /// `keep` is the `--keep-home` folder; without it a temporary folder.
    pub fn open(keep: Option<&Path>) -> Result<Workspace> {
        match keep {
            Some(dir) => {
                fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
                let root = fs::canonicalize(dir)
                    .with_context(|| format!("cannot resolve {}", dir.display()))?;
                Ok(Workspace {
                    root,
                    external_home: None,
                    _tmp: None,
                    binary: Value::Null,
                    warned: Cell::new(false),
                })
            }
            None => {
                let tmp = tempfile::Builder::new()
                    .prefix("recall-eval-")
                    .tempdir()
                    .context("cannot create a temporary folder")?;
                Ok(Workspace {
                    root: tmp.path().to_path_buf(),
                    external_home: None,
                    _tmp: Some(tmp),
                    binary: Value::Null,
                    warned: Cell::new(false),
                })
            }
        }
    }

    /// Record which `recall` binary indexes and queries in this run.
    pub fn built_by(self, binary: Value) -> Workspace {
        Workspace { binary, ..self }
    }

    /// Use the existing recall home `home` instead of `root/home`; it must
    /// exist (a typo must not create an empty home that then scores 0).
    pub fn with_home(self, home: Option<&Path>) -> Result<Workspace> {
        let Some(home) = home else {
            return Ok(self);
        };
        let home = fs::canonicalize(home).with_context(|| {
            format!(
                "no recall home at {}: --home names an existing home",
                home.display()
            )
        })?;
        Ok(Workspace {
            external_home: Some(home),
            ..self
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The recall home (`--home`).
    pub fn home(&self) -> PathBuf {
        match &self.external_home {
            Some(home) => home.clone(),
            None => self.root.join("home"),
        }
    }

    /// Where indexes are: the home when external, else the workspace.
    pub fn index_place(&self) -> &Path {
        self.external_home.as_deref().unwrap_or(&self.root)
    }

    /// Where the converted files of `dataset` go.
    pub fn data(&self, dataset: &str) -> PathBuf {
        self.root.join("data").join(dataset)
    }

    fn marker(&self, dataset: &str) -> PathBuf {
        match &self.external_home {
            Some(home) => home.join(format!(".eval-indexed-{dataset}.json")),
            None => self.root.join(format!("indexed-{dataset}.json")),
        }
    }

    /// Whether `dataset` was fully indexed with the same conversion
    /// (`signature` names the options that change the converted files).
    /// Warns once per run when it was indexed by another `recall` build.
    pub fn is_indexed(&self, dataset: &str, signature: &str) -> bool {
        let Ok(text) = fs::read_to_string(self.marker(dataset)) else {
            return false;
        };
        let marker: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        // An index without vectors (or another model's) does not serve a
        // run with `--semantic`; a run without reads none, so any index
        // serves it.
        let vectors = &self.binary["vectors"];
        let same = marker["signature"].as_str() == Some(signature)
            && (vectors.is_null() || marker["recall_bin"]["vectors"] == *vectors);
        let other_build = marker["recall_bin"]["path"] != self.binary["path"]
            || marker["recall_bin"]["size"] != self.binary["size"]
            || marker["recall_bin"]["modified"] != self.binary["modified"];
        if same && other_build && !self.warned.replace(true) {
            eprintln!(
                "eval: warning: reusing the {dataset} index, built by another recall build than {}; pass --reindex to rebuild",
                self.binary["path"].as_str().unwrap_or("this one")
            );
        }
        same
    }

    /// Whether this run reused an index built by another `recall` build.
    pub fn reused_other_build(&self) -> bool {
        self.warned.get()
    }

    /// Record that `dataset` is fully indexed, with the index summaries.
    pub fn mark_indexed(&self, dataset: &str, signature: &str, summaries: Value) -> Result<()> {
        let path = self.marker(dataset);
        let marker = serde_json::json!({
            "signature": signature,
            "recall_bin": self.binary,
            "summaries": summaries,
        });
        let text = serde_json::to_string_pretty(&marker)?;
        fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
    }

    /// Forget that `dataset` was indexed (before indexing it again).
    pub fn unmark(&self, dataset: &str) {
        let _ = fs::remove_file(self.marker(dataset));
    }
}
