//! Where a model's files are: the folder `[semantic] model` names, or the
//! snapshot inside a Hugging Face cache folder
//! (`models--org--name/snapshots/<hash>/`), so a user who has the model in
//! that cache points at it as it is.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The files a model folder must hold.
pub const TOKENIZER: &str = "tokenizer.json";
/// The weights: a transformer's, or a static token table's.
pub const WEIGHTS: &str = "model.safetensors";

/// How to fetch a model, for error messages that already say how to set
/// one.
macro_rules! fetch {
    () => {
        "a model is a folder with a sentence-transformers model's `tokenizer.json` and `model.safetensors` (all-MiniLM-L6-v2: `bash scripts/get-model.sh DIR`, in recall's source, fetches it into DIR; a Hugging Face cache folder of it works too)"
    };
}

/// How to fetch a model, for error messages that say how to set one.
pub const FETCH: &str = fetch!();

/// How to get a model and set it, for error messages.
pub const HOW_TO_GET: &str = concat!(fetch!(), "; then set `[semantic] model = \"DIR\"`");

/// The folder holding `tokenizer.json` and `model.safetensors` for the
/// model at `path`: `path` itself, or, for a Hugging Face cache folder
/// (one with `snapshots/`), the snapshot `refs/main` names, else the only
/// (or newest) snapshot that holds both files.
pub fn model_dir(path: &Path) -> Result<PathBuf> {
    let meta = std::fs::metadata(path).map_err(|e| Error::Model {
        path: path.to_path_buf(),
        detail: format!("{e}; {HOW_TO_GET}"),
    })?;
    if !meta.is_dir() {
        return Err(Error::Model {
            path: path.to_path_buf(),
            detail: format!(
                "not a folder; name the folder that holds {WEIGHTS} and {TOKENIZER}, not a file in it"
            ),
        });
    }
    if holds_model(path) {
        return Ok(path.to_path_buf());
    }
    let snapshots = path.join("snapshots");
    if snapshots.is_dir() {
        if let Some(dir) = hub_snapshot(path, &snapshots)? {
            return Ok(dir);
        }
        return Err(Error::Model {
            path: path.to_path_buf(),
            detail: format!(
                "no snapshot in {} holds both {WEIGHTS} and {TOKENIZER} (a cache holding only part of a model); {HOW_TO_GET}",
                snapshots.display()
            ),
        });
    }
    let missing: Vec<&str> = [WEIGHTS, TOKENIZER]
        .into_iter()
        .filter(|f| !path.join(f).is_file())
        .collect();
    Err(Error::Model {
        path: path.to_path_buf(),
        detail: format!(
            "no {} there (nor a Hugging Face cache's snapshots/ folder); {HOW_TO_GET}",
            missing.join(" or ")
        ),
    })
}

fn holds_model(dir: &Path) -> bool {
    dir.join(WEIGHTS).is_file() && dir.join(TOKENIZER).is_file()
}

/// The snapshot of a hub cache folder: the one `refs/main` names when it
/// holds the model, else the newest one that does.
fn hub_snapshot(root: &Path, snapshots: &Path) -> Result<Option<PathBuf>> {
    if let Ok(hash) = std::fs::read_to_string(root.join("refs").join("main")) {
        let dir = snapshots.join(hash.trim());
        if !hash.trim().is_empty() && holds_model(&dir) {
            return Ok(Some(dir));
        }
    }
    let entries =
        std::fs::read_dir(snapshots).map_err(|e| Error::io("cannot list", snapshots, e))?;
    let mut best: Option<(std::time::SystemTime, PathBuf)> = None;
    for entry in entries.flatten() {
        let dir = entry.path();
        if !holds_model(&dir) {
            continue;
        }
        let modified = entry
            .metadata()
            .and_then(|m| m.modified())
            .unwrap_or(std::time::UNIX_EPOCH);
        if best.as_ref().is_none_or(|(t, _)| modified > *t) {
            best = Some((modified, dir));
        }
    }
    Ok(best.map(|(_, dir)| dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch_model(dir: &Path) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join(WEIGHTS), b"x").unwrap();
        std::fs::write(dir.join(TOKENIZER), b"{}").unwrap();
    }

    #[test]
    fn a_plain_folder_is_itself() -> Result<()> {
        let t = tempfile::tempdir().unwrap();
        touch_model(t.path());
        assert_eq!(model_dir(t.path())?, t.path());
        Ok(())
    }

    #[test]
    fn a_hub_cache_folder_resolves_to_the_snapshot_refs_main_names() -> Result<()> {
        let t = tempfile::tempdir().unwrap();
        let root = t
            .path()
            .join("models--sentence-transformers--all-MiniLM-L6-v2");
        touch_model(&root.join("snapshots/aaa"));
        touch_model(&root.join("snapshots/bbb"));
        std::fs::create_dir_all(root.join("refs")).unwrap();
        std::fs::write(root.join("refs/main"), "aaa\n").unwrap();
        assert_eq!(model_dir(&root)?, root.join("snapshots/aaa"));
        // Without refs/main: a snapshot that holds the model.
        std::fs::remove_file(root.join("refs/main")).unwrap();
        std::fs::remove_file(root.join("snapshots/aaa").join(WEIGHTS)).unwrap();
        assert_eq!(model_dir(&root)?, root.join("snapshots/bbb"));
        Ok(())
    }

    #[test]
    fn a_bad_path_says_what_is_missing_and_how_to_get_a_model() {
        let t = tempfile::tempdir().unwrap();
        let gone = model_dir(&t.path().join("nope")).unwrap_err().to_string();
        assert!(
            gone.contains("nope") && gone.contains("get-model.sh"),
            "{gone}"
        );
        std::fs::write(t.path().join(TOKENIZER), b"{}").unwrap();
        let half = model_dir(t.path()).unwrap_err().to_string();
        assert!(
            half.contains("no model.safetensors there") && half.contains("get-model.sh"),
            "{half}"
        );
        let file = model_dir(&t.path().join(TOKENIZER))
            .unwrap_err()
            .to_string();
        assert!(file.contains("not a folder"), "{file}");
        std::fs::create_dir_all(t.path().join("snapshots/abc")).unwrap();
        std::fs::remove_file(t.path().join(TOKENIZER)).unwrap();
        let empty = model_dir(t.path()).unwrap_err().to_string();
        assert!(empty.contains("no snapshot"), "{empty}");
    }
}
