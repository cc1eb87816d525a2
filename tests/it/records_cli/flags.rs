//! Where flags may go: global flags after the subcommand work, query flags
//! before a subcommand are an error.

use crate::common::{record_files, Env};

#[test]
fn global_flags_work_after_the_subcommand() {
    let env = Env::new();
    let mut c = assert_cmd::Command::cargo_bin("recall").unwrap();
    c.env_remove("RECALL_HOME")
        .env_remove("RECALL_PROJECT")
        .args([
            "record",
            "add",
            "--category",
            "decisions",
            "--key",
            "k",
            "t",
            "--home",
        ])
        .arg(env.home())
        .args(["--project", "alpha"])
        .assert()
        .success();
    assert_eq!(
        env.run(&["record", "list", "--format", "json"])
            .matches("\"key\"")
            .count(),
        1
    );
}

/// Regression: `recall --scope user record add ...` wrote a project record,
/// because the top-level `--scope` belongs to the bare query form and was
/// silently ignored.
#[test]
fn r_query_flags_before_a_subcommand_are_an_error() {
    let env = Env::new();
    let out = env
        .cmd()
        .args([
            "--scope",
            "user",
            "record",
            "add",
            "--category",
            "preferences",
            "--key",
            "tabs",
            "Indent with tabs.",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--scope before the subcommand") && err.contains("after the subcommand"),
        "{err}"
    );
    assert!(record_files(&env.home()).is_empty(), "nothing written");
    // After the subcommand it does what it says.
    env.add_user("preferences", "tabs", "Indent with tabs.");
    let files = record_files(&env.home());
    assert!(
        files[0].to_string_lossy().contains("/user/records/"),
        "{files:?}"
    );
}
