//! The suite's corpora: neutral transcripts from the shared seeded
//! generator (`synth::conversation`, written by `synth::neutral`), one
//! session per file, messages of 40 words.

use std::path::Path;
use std::sync::LazyLock;

use anyhow::Result;
use synth::conversation::{Conversation, Lengths};
use synth::Vocab;

/// The vocabulary every corpus of the suite draws from; the sessions vary
/// with the seed.
static VOCAB: LazyLock<Vocab> = LazyLock::new(|| Vocab::new(42));
/// Sessions lie in the year before 2026-01-01.
const NOW: i64 = 1_767_225_600;
/// The seed of the load scenario's growing corpus.
const GROWTH_SEED: u64 = 0x6772_6F77;

/// A neutral transcript named `id` of `n` messages: session `s` of the
/// corpus of `seed`.
pub fn transcript(id: &str, s: usize, n: usize, seed: u64) -> String {
    let mut c = Conversation::new(&VOCAB, seed, s, NOW, Lengths::fixed(40));
    synth::neutral::transcript(&mut c, id, n)
}

/// `files` transcripts of `msgs` messages, `s000.jsonl` on.
pub fn write_corpus(dir: &Path, files: usize, msgs: usize, seed: u64) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    for f in 0..files {
        let id = format!("s{f:03}");
        std::fs::write(
            dir.join(format!("{id}.jsonl")),
            transcript(&id, f, msgs, seed),
        )?;
    }
    Ok(())
}

/// The `n`th file of a growing corpus (`g00000.jsonl` on), 200 messages.
pub fn write_corpus_file(dir: &Path, n: usize) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    let id = format!("g{n:05}");
    std::fs::write(
        dir.join(format!("{id}.jsonl")),
        transcript(&id, n, 200, GROWTH_SEED),
    )?;
    Ok(())
}
