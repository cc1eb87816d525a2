//! Reading the sets' files: JSON Lines (gzipped or not), qrels, fields.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{bail, Context as _, Result};
use serde_json::Value;

/// Query id → (doc id → graded relevance).
pub type Qrels = BTreeMap<String, HashMap<String, i64>>;

/// The rows of a JSON Lines file that are objects; other lines are skipped.
/// (`.gz` is read through `gzip -dc`).
pub fn jsonl(path: &Path) -> Result<Vec<Value>> {
    let bytes = read_maybe_gz(path)?;
    let text = String::from_utf8_lossy(&bytes);
    Ok(text
        .lines()
        .filter_map(|line| match serde_json::from_str(line) {
            Ok(v @ Value::Object(_)) => Some(v),
            _ => None,
        })
        .collect())
}

pub fn str_field(v: &Value, key: &str) -> String {
    match &v[key] {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => String::new(),
    }
}

/// `query-id \t corpus-id \t score` lines; the header and bad lines are skipped.
pub fn load_qrels(path: &Path) -> Result<Qrels> {
    let text =
        fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut qrels = Qrels::new();
    for line in text.lines() {
        let cols: Vec<&str> = line.split('\t').map(str::trim).collect();
        let [q, d, s] = cols[..] else { continue };
        let Ok(score) = s.parse::<i64>() else {
            continue;
        };
        qrels
            .entry(q.to_string())
            .or_default()
            .insert(d.to_string(), score);
    }
    Ok(qrels)
}

/// The file's bytes, decompressed by `gzip -dc` when it ends in `.gz` (the
/// harness has no gzip crate).
pub fn read_maybe_gz(path: &Path) -> Result<Vec<u8>> {
    if path.extension().is_none_or(|e| e != "gz") {
        return fs::read(path).with_context(|| format!("cannot read {}", path.display()));
    }
    let out = Command::new("gzip")
        .arg("-dc")
        .arg(path)
        .stdin(Stdio::null())
        .output()
        .context("cannot run `gzip -dc`: install gzip or pass the unpacked JSON")?;
    if !out.status.success() {
        bail!(
            "gzip -dc {} failed ({}): {}",
            path.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(out.stdout)
}
