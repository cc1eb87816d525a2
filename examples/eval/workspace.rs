//! The folder a run works in: the recall home, the converted data and the
//! markers saying which datasets are already indexed (and by which `recall`
//! binary, so reusing an index built by another build is flagged).

use std::cell::Cell;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use serde_json::Value;

pub struct Workspace {
    root: PathBuf,
    /// Removes the folder on drop when it is temporary.
    _tmp: Option<tempfile::TempDir>,
    /// Identifies the `recall` binary of this run (see [`Workspace::built_by`]).
    binary: Value,
    /// Whether the stale-index warning was already printed.
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

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The recall home (`--home`).
    pub fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    /// Where the converted files of `dataset` go.
    pub fn data(&self, dataset: &str) -> PathBuf {
        self.root.join("data").join(dataset)
    }

    fn marker(&self, dataset: &str) -> PathBuf {
        self.root.join(format!("indexed-{dataset}.json"))
    }

    /// Whether `dataset` was fully indexed with the same conversion
    /// (`signature` names the options that change the converted files).
    /// Warns once per run when it was indexed by another `recall` build.
    pub fn is_indexed(&self, dataset: &str, signature: &str) -> bool {
        let Ok(text) = fs::read_to_string(self.marker(dataset)) else {
            return false;
        };
        let marker: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let same = marker["signature"].as_str() == Some(signature);
        if same && marker["recall_bin"] != self.binary && !self.warned.replace(true) {
            eprintln!(
                "eval: warning: reusing the {dataset} index, built by another recall build than {}; pass --reindex to rebuild",
                self.binary["path"].as_str().unwrap_or("this one")
            );
        }
        same
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
