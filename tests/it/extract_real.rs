//! The builtin extractor over the real agent transcripts in
//! `shared/data/agent-transcripts/`: it must find a useful number of facts,
//! fail on none, keep every fact short and free of chain-of-thought, and a
//! second run must add nothing.

use crate::common::{record_files, Env};
use serde_json::Value;

/// Openers of musing / chain-of-thought text, which is never a fact.
const THINKING_OPENERS: &[&str] = &[
    "hmm",
    "wait",
    "okay so",
    "okay, so",
    "let me",
    "i think",
    "i need to",
    "i should",
    "maybe",
];

fn extract(env: &Env) -> Value {
    let out = env
        .cmd()
        .args([
            "extract",
            "--json",
            "--extractor",
            "builtin",
            "--max-sessions",
            "10000",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "extract failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn auto_records(env: &Env) -> Vec<Value> {
    let out = env.run(&["record", "list", "--source", "auto", "--format", "json"]);
    serde_json::from_str::<Value>(&out)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn builtin_extract_over_real_transcripts() {
    let Some(root) = crate::common::agent_transcripts() else {
        return;
    };
    let env = Env::new();
    std::fs::create_dir_all(env.home()).unwrap();
    std::fs::write(
        env.home().join("config.toml"),
        "[extract]\nmax_age_days = 100000\n",
    )
    .unwrap();
    let out = env
        .cmd()
        .args(["index", "--json", root.to_str().unwrap()])
        .output()
        .unwrap();
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!(
            "index printed no JSON: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert!(
        summary["summary"]["indexed"].as_u64().unwrap() >= 10,
        "{summary}"
    );

    let first = extract(&env);
    let rep = &first["report"];
    assert_eq!(rep["failed"], 0, "{rep}");
    assert!(rep["sessions"].as_u64().unwrap() >= 10, "{rep}");
    let records = auto_records(&env);
    assert!(records.len() >= 10, "only {} records: {rep}", records.len());
    assert_eq!(
        rep["records"].as_u64().unwrap() as usize,
        records.len(),
        "the report counts what was written"
    );
    for r in &records {
        let text = r["text"].as_str().unwrap();
        let key = r["key"].as_str().unwrap();
        assert!(key.starts_with("auto:"), "{key}");
        assert!(text.chars().count() <= 500, "{key}: {} chars", text.len());
        let lower = text.trim_start().to_lowercase();
        assert!(
            !lower.contains("<thinking>")
                && !THINKING_OPENERS.iter().any(|o| lower.starts_with(o)
                    && lower[o.len()..].starts_with(|c: char| !c.is_alphanumeric())),
            "chain-of-thought stored as a fact: {key}: {text}"
        );
        assert!(!text.contains("```"), "code dump stored: {key}: {text}");
    }
    let files = record_files(&env.home());
    assert_eq!(files.len(), records.len());
    let before: Vec<_> = files.iter().map(|p| std::fs::read(p).unwrap()).collect();

    let second = extract(&env);
    assert_eq!(second["report"]["records"], 0, "{}", second["report"]);
    assert_eq!(second["report"]["sessions"], 0, "{}", second["report"]);
    let after: Vec<_> = record_files(&env.home())
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    assert_eq!(before, after, "the second run changed records");
}
