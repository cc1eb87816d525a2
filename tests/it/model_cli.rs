//! `recall model check` (issue 38): what it says with no model configured,
//! with a bad path, and with the real model (fetched by
//! `scripts/get-model.sh`; skipped outside CI without it, a failure in CI).

use std::path::PathBuf;

use crate::common::Env;

/// The model folder `scripts/get-model.sh` fills (or `RECALL_TEST_MODEL`).
pub(crate) fn model_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("RECALL_TEST_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            std::env::var_os("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"))
                .join("models/all-minilm-l6-v2")
        });
    if dir.join("model.safetensors").is_file() {
        return Some(dir);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI needs the embedding model at {}: `bash scripts/get-model.sh` fetches it",
        dir.display()
    );
    eprintln!(
        "skipped: no embedding model at {}; `bash scripts/get-model.sh` fetches it (or set RECALL_TEST_MODEL)",
        dir.display()
    );
    None
}

fn check(env: &Env) -> (Option<i32>, String, String) {
    let out = env
        .cmd()
        .env_remove("RECALL_SEMANTIC_MODEL")
        .args(["model", "check"])
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn without_a_model_configured_check_says_how_to_set_one() {
    let env = Env::new();
    let (code, _, err) = check(&env);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("no embedding model configured"), "{err}");
    assert!(
        err.contains("[semantic] model") && err.contains("config.toml"),
        "{err}"
    );
    assert!(err.contains("scripts/get-model.sh"), "{err}");
    // Regression: it said to set `[semantic] model` twice.
    assert_eq!(err.matches("[semantic] model").count(), 1, "{err}");
}

#[test]
fn a_bad_model_path_names_the_path_and_the_fix() {
    let env = Env::new();
    std::fs::create_dir_all(env.home()).unwrap();
    let half = env.tmp.path().join("half-a-model");
    std::fs::create_dir_all(&half).unwrap();
    std::fs::write(half.join("tokenizer.json"), "{}").unwrap();
    for (path, says) in [
        (env.tmp.path().join("no-such-model"), "No such file"),
        (half, "no model.safetensors there"),
    ] {
        std::fs::write(
            env.home().join("config.toml"),
            format!("[semantic]\nmodel = {:?}\n", path.to_str().unwrap()),
        )
        .unwrap();
        let (code, _, err) = check(&env);
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains(path.to_str().unwrap()), "{err}");
        assert!(
            err.contains(says) && err.contains("scripts/get-model.sh"),
            "{err}"
        );
    }
}

#[test]
fn check_names_the_real_model_its_size_and_speed() {
    let Some(dir) = model_dir() else {
        return;
    };
    let env = Env::new();
    std::fs::create_dir_all(env.home()).unwrap();
    std::fs::write(
        env.home().join("config.toml"),
        format!("[semantic]\nmodel = {:?}\n", dir.to_str().unwrap()),
    )
    .unwrap();
    let (code, out, err) = check(&env);
    assert_eq!(code, Some(0), "{err}");
    for line in [
        "kind: transformer (BERT, candle)",
        "dimension: 384",
        "vocabulary: 30522 tokens",
        "load: ",
        "one prompt: ",
        "passages: ",
    ] {
        assert!(out.contains(line), "no {line:?} in:\n{out}");
    }
    assert!(out.contains(dir.to_str().unwrap()), "{out}");
}

/// A static model small enough to write here: a word-level tokenizer over
/// five words and a 4-dimension table, read by the same loader as a real
/// one.
pub(crate) fn tiny_static_model(dir: &std::path::Path) {
    std::fs::create_dir_all(dir).unwrap();
    let tokenizer = serde_json::json!({
        "version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
        "normalizer": {"type": "Lowercase"}, "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": null, "decoder": null,
        "model": {"type": "WordLevel", "unk_token": "[UNK]",
                  "vocab": {"[UNK]": 0, "deploy": 1, "ship": 2, "release": 3, "cat": 4}}
    });
    std::fs::write(dir.join("tokenizer.json"), tokenizer.to_string()).unwrap();
    let rows: [f32; 20] = [
        0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.9, 0.1, 0.0, 0.0, 0.8, 0.0, 0.2, 0.0, 0.0, 0.0,
        0.0, 1.0,
    ];
    let bytes: Vec<u8> = rows.iter().flat_map(|x| x.to_le_bytes()).collect();
    let view =
        safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![5, 4], &bytes).unwrap();
    let file = safetensors::serialize([("embeddings", view)], None).unwrap();
    std::fs::write(dir.join("model.safetensors"), file).unwrap();
}

pub(crate) fn count(db: &std::path::Path, table: &str) -> i64 {
    rusqlite::Connection::open(db)
        .unwrap()
        .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .unwrap()
}

/// Issue 38 item 2: with `[semantic]` configured, `recall index` stores a
/// vector for every passage and record; a deleted row takes its vector
/// with it; without `[semantic]` no vector is written.
#[test]
fn index_writes_vectors_beside_rows_and_deletes_take_them() {
    let env = Env::new();
    let model = env.tmp.path().join("tiny-model");
    tiny_static_model(&model);
    std::fs::create_dir_all(env.home()).unwrap();
    std::fs::write(
        env.home().join("config.toml"),
        format!("[semantic]\nmodel = {:?}\n", model.to_str().unwrap()),
    )
    .unwrap();
    let t = env.tmp.path().join("s.jsonl");
    std::fs::write(
        &t,
        "{\"session\":{\"id\":\"s1\",\"title\":\"shipping\"}}\n\
         {\"role\":\"user\",\"id\":\"m0\",\"content\":\"how do we ship a release\"}\n\
         {\"role\":\"assistant\",\"id\":\"m1\",\"content\":\"deploy from the release branch\"}\n",
    )
    .unwrap();
    env.run(&[
        "record",
        "add",
        "--category",
        "decisions",
        "--key",
        "deploy",
        "Deploy ships the release.",
    ]);
    env.run(&["index", t.to_str().unwrap()]);
    let db = env.project_dir().join("index.db");
    assert_eq!(count(&db, "chunks"), 2);
    assert_eq!(count(&db, "chunk_vectors"), 2, "one per passage");
    assert_eq!(count(&db, "record_vectors"), 1, "and per record");
    let (id, blob): (String, Vec<u8>) = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT (SELECT value FROM meta WHERE key='semantic_model'), v FROM record_vectors",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert!(id.starts_with("static dim=4 blake3="), "{id}");
    let v = recall::semantic::quant::decode(&blob).unwrap();
    assert_eq!(v.len(), 4);
    assert!(
        v[0] > 0.9 && v[3].abs() < 0.01,
        "deploy, ship, release: {v:?}"
    );
    // A second run has nothing left to embed, and writes no twin.
    env.run(&["index", t.to_str().unwrap()]);
    assert_eq!(count(&db, "chunk_vectors"), 2);
    env.run(&["record", "delete", "deploy"]);
    assert_eq!(
        count(&db, "record_vectors"),
        0,
        "the vector went with its row"
    );

    // Off: no vectors.
    let off = Env::new();
    let t2 = off.tmp.path().join("s.jsonl");
    std::fs::copy(&t, &t2).unwrap();
    off.run(&["index", t2.to_str().unwrap()]);
    let db = off.project_dir().join("index.db");
    assert_eq!(count(&db, "chunks"), 2);
    assert_eq!(count(&db, "chunk_vectors"), 0);
}

/// A configured model that does not load leaves indexing as it was, with
/// the reason on stderr.
#[test]
fn a_broken_model_indexes_without_vectors_and_says_why() {
    let env = Env::new();
    std::fs::create_dir_all(env.home()).unwrap();
    std::fs::write(
        env.home().join("config.toml"),
        "[semantic]\nmodel = \"/no/such/model\"\n",
    )
    .unwrap();
    let t = env.tmp.path().join("s.jsonl");
    std::fs::write(
        &t,
        "{\"session\":{\"id\":\"s1\"}}\n{\"role\":\"user\",\"id\":\"m0\",\"content\":\"hello there\"}\n",
    )
    .unwrap();
    let out = env
        .cmd()
        .args(["index", t.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("indexing without vectors") && err.contains("/no/such/model"),
        "{err}"
    );
    let db = env.project_dir().join("index.db");
    assert_eq!((count(&db, "chunks"), count(&db, "chunk_vectors")), (1, 0));
}
