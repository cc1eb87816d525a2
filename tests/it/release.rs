//! The release workflow's plan, checked without a network: every platform
//! it promises is built by the script `.ci/run` runs here as its dry run,
//! and the release profile strips the binary.

use std::path::Path;

use serde_yaml_ng::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_release_workflow_builds_linux_and_macos_with_the_checked_script() {
    let text = std::fs::read_to_string(root().join(".github/workflows/release.yml")).unwrap();
    let wf: Value = serde_yaml_ng::from_str(&text).unwrap();
    // YAML 1.1 reads a bare `on` key as the boolean true.
    let on = wf
        .get("on")
        .or_else(|| wf.get(Value::Bool(true)))
        .expect("the workflow says when it runs");
    let tags: Vec<&str> = on["push"]["tags"]
        .as_sequence()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(tags, ["v*"]);
    let build = &wf["jobs"]["build"];
    let targets: Vec<&str> = build["strategy"]["matrix"]["include"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|e| e["target"].as_str().unwrap())
        .collect();
    for want in [
        "x86_64-unknown-linux-gnu",
        "aarch64-unknown-linux-gnu",
        "x86_64-apple-darwin",
        "aarch64-apple-darwin",
    ] {
        assert!(targets.contains(&want), "{want} not built: {targets:?}");
    }
    let runs: Vec<&str> = build["steps"]
        .as_sequence()
        .unwrap()
        .iter()
        .filter_map(|s| s["run"].as_str())
        .collect();
    assert!(
        runs.iter()
            .any(|r| r.trim() == "bash scripts/package-release.sh ${{ matrix.target }}"),
        "{runs:?}"
    );
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    assert!(
        ci.lines()
            .any(|l| l.trim() == "bash scripts/package-release.sh"),
        ".ci/run does not dry-run the release script"
    );
    assert!(root().join("scripts/package-release.sh").is_file());
}

#[test]
fn the_release_profile_strips_the_binary_and_benches_keep_line_tables() {
    let manifest: toml::Value =
        toml::from_str(&std::fs::read_to_string(root().join("Cargo.toml")).unwrap()).unwrap();
    let profile = &manifest["profile"];
    assert_eq!(profile["release"]["strip"].as_bool(), Some(true));
    assert_eq!(profile["bench"]["debug"].as_str(), Some("line-tables-only"));
    assert_eq!(profile["profiling"]["inherits"].as_str(), Some("release"));
}

/// Regression (issue 37 item 11: `.ci/run` failed with exit 127 when
/// `CARGO_TARGET_DIR` was set, running `target/debug/examples/torture`):
/// every path into the build folder goes through `$TARGET`, which follows
/// `CARGO_TARGET_DIR`; so does the release script's binary.
#[test]
fn r37_ci_follows_cargo_target_dir() {
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    assert!(
        ci.contains(r#"TARGET="${CARGO_TARGET_DIR:-$PWD/target}""#),
        "{ci}"
    );
    for line in ci.lines().filter(|l| !l.trim_start().starts_with('#')) {
        if line.contains("target/") && !line.starts_with("TARGET=") {
            assert!(line.contains("$TARGET/"), "a fixed build path: {line}");
        }
    }
    let pkg = std::fs::read_to_string(root().join("scripts/package-release.sh")).unwrap();
    assert!(pkg.contains(r#"bin="${CARGO_TARGET_DIR:-target}/$target/release/recall""#));
}
