//! `recall demo`, README's first command: it runs from any folder (the
//! corpus is built into the binary), indexes the corpus into a throwaway
//! store and recalls against it in two formats.

use crate::common::Env;

fn demo(env: &Env, args: &[&str]) -> std::process::Output {
    assert_cmd::Command::cargo_bin("recall")
        .unwrap()
        .env_remove("RECALL_HOME")
        .env_remove("RECALL_PROJECT")
        .env("HOME", env.tmp.path())
        .env("NO_COLOR", "1")
        .arg("demo")
        .args(args)
        .current_dir(env.tmp.path())
        .output()
        .unwrap()
}

/// Regression (review, stop 57): the demo read `testdata/demo` of the
/// checkout it was built in, so an installed binary said "no demo corpus".
/// Run from a folder with no checkout in sight, it finds the incident
/// record first and prints the prompt block.
#[test]
fn the_demo_runs_anywhere_and_recalls_the_incident_first() {
    let env = Env::new();
    let out = demo(&env, &[]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("demo: indexed 10 records") && stderr.contains("3 tickets"),
        "{stderr}"
    );
    let snippets = stdout
        .split("--- recall --format snippets ---")
        .nth(1)
        .unwrap_or_default();
    let first = snippets
        .lines()
        .find(|l| l.starts_with("1. "))
        .unwrap_or_default();
    assert!(first.contains("flaky config loader test"), "{stdout}");
    assert!(snippets.contains("«flaky»"), "{stdout}");
    assert!(
        stdout.contains("--- recall --format prompt ---") && stdout.contains("## Recalled context"),
        "{stdout}"
    );
    // A corpus of one's own that is not one says what one is.
    let out = demo(&env, &["--corpus", "/nonexistent/corpus"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("no demo corpus at /nonexistent/corpus") && stderr.contains("records/"),
        "{stderr}"
    );
}
