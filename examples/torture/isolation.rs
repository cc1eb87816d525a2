//! Isolation: projects with colliding names each find their own marker
//! and none of the others'.

use std::path::PathBuf;

use anyhow::{bail, Result};
use synth::Rng;

use crate::{row, Row, World};

/// The isolation scenario.
pub fn isolation(w: &World, seed: u64) -> Result<Vec<Row>> {
    let home = w.root.join("iso/home");
    let mut r = Rng::with_seed(seed);
    let dirs: Vec<PathBuf> = [
        "a/my.app",
        "a/my-app",
        "b/my.app",
        "a/My App",
        "c/x",
        "c/x/nested",
    ]
    .iter()
    .map(|d| w.root.join("iso/work").join(d))
    .collect();
    let mut markers = Vec::new();
    for d in &dirs {
        std::fs::create_dir_all(d.join(".git"))?;
        let m = format!("zq{}marker", r.u64(..1_000_000_000));
        let out = w
            .cmd(&home)
            .arg("--cwd")
            .arg(d)
            .args([
                "record",
                "add",
                "--category",
                "decisions",
                "--key",
                &m,
                &format!("the {m} lives here"),
            ])
            .output()?;
        if !out.status.success() {
            bail!(
                "record add in {}: {}",
                d.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        markers.push(m);
    }
    let (mut cross, mut own) = (0, 0);
    for (i, d) in dirs.iter().enumerate() {
        for (j, m) in markers.iter().enumerate() {
            let out = w
                .cmd(&home)
                .arg("--cwd")
                .arg(d)
                .args(["query", "--format", "json", m])
                .output()?;
            // The hits' text, not the document (which echoes the query).
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
            let found = v["hits"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|h| h["text"].as_str().is_some_and(|t| t.contains(m.as_str())));
            if i == j {
                own += usize::from(found);
            } else {
                cross += usize::from(found);
            }
        }
    }
    Ok(vec![
        row(
            "isolation",
            "projects (colliding names included)",
            dirs.len(),
            "",
            true,
        ),
        row(
            "isolation",
            "own markers found",
            format!("{own} of {}", dirs.len()),
            "all",
            own == dirs.len(),
        ),
        row("isolation", "cross-project hits", cross, "0", cross == 0),
    ])
}
