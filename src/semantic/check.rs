//! `recall model check`: load the configured model and time it on this
//! machine, the two costs hybrid recall pays: loading in a fresh process
//! plus one prompt (the hook's path), and passages per second (indexing).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::{Kind, Model};
use crate::error::Result;

/// What a check found.
#[derive(Debug, Clone)]
pub struct Check {
    /// The path as configured.
    pub path: PathBuf,
    /// The folder the files were read from (a cache's snapshot, say).
    pub dir: PathBuf,
    pub kind: Kind,
    pub dim: usize,
    pub vocab_size: usize,
    /// A fresh process's load and first vector: opening, mapping and
    /// parsing the files, then one prompt embedded.
    pub load: Duration,
    /// The median time to embed one prompt-sized text, alone.
    pub query: Duration,
    /// Passage-sized texts embedded per second, in batches of
    /// [`BATCH`].
    pub passages_per_sec: f64,
    /// The cosine of a paraphrase pair and of an unrelated pair, so a
    /// broken model (all vectors alike, or noise) shows.
    pub paraphrase: f32,
    pub unrelated: f32,
}

/// Texts per batch when timing passages (the indexer's batch).
pub const BATCH: usize = 16;

const PROMPTS: [&str; 8] = [
    "how do we ship a release?",
    "the thing that broke the nightly build",
    "why does the login page redirect twice after a password reset?",
    "which database do we use for the integration tests",
    "fix the flaky test in the payment module",
    "what did we decide about retry limits on the webhook worker",
    "where is the config for the staging environment",
    "summarise yesterday's discussion about caching",
];

const SENTENCES: [&str; 8] = [
    "Deploys go through make ship-it from the release branch after CI is green.",
    "The cron job that builds the nightly artifacts failed because the disk was full.",
    "We moved session tokens to an HTTP-only cookie and dropped the local storage copy.",
    "Integration tests start their own PostgreSQL server in a temporary folder.",
    "The payment test waited on a real clock; it now takes an injected time.",
    "Webhook deliveries are retried five times with exponential backoff, then parked.",
    "Staging reads its settings from config/staging.toml, overridden by environment variables.",
    "Caching the rendered page halved the response time but made invalidation harder.",
];

/// Load the model at `path` and time it (a few seconds for a transformer).
pub fn check(path: &Path) -> Result<Check> {
    // What a fresh process that embeds one prompt pays (the prompt
    // hook's gate, a one-shot query; see `embed_once`): the files read,
    // only that prompt's rows of a transformer's table, and its vector,
    // which includes what loading left lazy (mapped pages, first-use
    // allocations).
    let start = Instant::now();
    let (once, _) = Model::load_for(path, Some(&PROMPTS[..1]))?;
    let first = once.embed(&PROMPTS[..1])?;
    let load = start.elapsed();
    drop(once);
    let (model, dir) = Model::load(path)?;
    let mut times = Vec::with_capacity(PROMPTS.len());
    for p in PROMPTS {
        let t = Instant::now();
        model.embed(&[p])?;
        times.push(t.elapsed());
    }
    times.sort();
    let query = times[times.len() / 2];
    let passages = passages();
    let refs: Vec<&str> = passages.iter().map(String::as_str).collect();
    let t = Instant::now();
    for batch in refs.chunks(BATCH) {
        model.embed(batch)?;
    }
    let passages_per_sec = refs.len() as f64 / t.elapsed().as_secs_f64().max(1e-9);
    let pair = model.embed(&[SENTENCES[0], PROMPTS[7]])?;
    Ok(Check {
        path: path.to_path_buf(),
        dir,
        kind: model.kind(),
        dim: model.dim(),
        vocab_size: model.vocab_size(),
        load,
        query,
        passages_per_sec,
        paraphrase: super::cosine(&first[0], &pair[0]),
        unrelated: super::cosine(&first[0], &pair[1]),
    })
}

/// 32 passages of about 100 words (an indexed passage is at most 150):
/// each the sentences in a rotated order.
fn passages() -> Vec<String> {
    (0..32)
        .map(|i| {
            (0..SENTENCES.len())
                .map(|j| SENTENCES[(i + j) % SENTENCES.len()])
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_names_the_model_and_its_speed() -> Result<()> {
        let Some(dir) = super::super::test_model_dir() else {
            return Ok(());
        };
        let c = check(&dir)?;
        assert_eq!(
            (c.kind, c.dim, c.vocab_size),
            (Kind::Transformer, 384, 30522)
        );
        assert!(c.passages_per_sec > 0.0 && c.load > Duration::ZERO);
        assert!(c.paraphrase > c.unrelated, "{c:?}");
        Ok(())
    }
}
