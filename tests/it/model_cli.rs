//! `recall model check` (issue 38): what it says with no model configured,
//! with a bad path, and with the real model (fetched by
//! `scripts/get-model.sh`; skipped outside CI without it, a failure in CI).

use std::path::PathBuf;

use crate::common::Env;

/// The model folder `scripts/get-model.sh` fills (or `RECALL_TEST_MODEL`).
fn model_dir() -> Option<PathBuf> {
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
