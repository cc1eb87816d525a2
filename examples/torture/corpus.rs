//! The suite's corpora: neutral transcripts about a topic, one session
//! per file.

use std::path::Path;

use anyhow::Result;

use crate::Rng;

/// A neutral transcript of `n` messages about `topic`.
pub fn transcript(id: &str, topic: &str, n: usize, seed: u64) -> String {
    let mut r = Rng(seed | 1);
    let words = [
        "deploy",
        "cache",
        "parser",
        "timeout",
        "retry",
        "index",
        "migration",
        "queue",
        "token",
        "release",
        "branch",
        "schema",
        "worker",
        "latency",
        "budget",
    ];
    let mut out = format!(
        "{}\n",
        serde_json::json!({"session": {"id": id, "title": format!("{topic} work")}})
    );
    for i in 0..n {
        let text: Vec<&str> = (0..40)
            .map(|_| words[r.below(words.len() as u64) as usize])
            .collect();
        let line = serde_json::json!({
            "role": if i % 2 == 0 { "user" } else { "assistant" },
            "content": format!("{topic} {} step {i}", text.join(" ")),
            "id": format!("{id}-m{i}"),
            "timestamp": format!("2020-01-0{}T10:{:02}:{:02}Z", 1 + i % 9, i / 60 % 60, i % 60),
        });
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out
}

pub fn write_corpus(dir: &Path, files: usize, msgs: usize, seed: u64) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    for f in 0..files {
        let id = format!("s{f:03}");
        std::fs::write(
            dir.join(format!("{id}.jsonl")),
            transcript(&id, &format!("topic{f}"), msgs, seed ^ f as u64),
        )?;
    }
    Ok(())
}

pub fn write_corpus_file(dir: &Path, n: usize) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    let id = format!("g{n:05}");
    std::fs::write(
        dir.join(format!("{id}.jsonl")),
        transcript(&id, "growth", 200, n as u64),
    )?;
    Ok(())
}
