//! The home folder: one that cannot be written or is a file is a clear
//! error, files and folders are private (doctor reports one that is not),
//! and `--ephemeral` uses a throwaway home and removes it.

use crate::common::{assert_success, record_files, Env};
use predicates::prelude::*;

#[cfg(unix)]
#[test]
fn unwritable_home_is_a_clear_error() {
    use std::os::unix::fs::PermissionsExt;
    if nix_is_root() {
        return; // root ignores permissions; the check cannot be observed
    }
    let env = Env::new();
    let locked = env.tmp.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o500)).unwrap();
    env.cmd_with(&locked.join("home"), "alpha")
        .args([
            "record",
            "add",
            "--category",
            "decisions",
            "--key",
            "k",
            "t",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot use"));
    assert!(!locked.join("home").exists());
}

#[cfg(unix)]
fn nix_is_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout.starts_with(b"0"))
        .unwrap_or(false)
}

#[test]
fn home_file_instead_of_folder_is_a_clear_error() {
    let env = Env::new();
    let file = env.tmp.path().join("not-a-dir");
    std::fs::write(&file, "x").unwrap();
    env.cmd_with(&file, "alpha")
        .args([
            "record",
            "add",
            "--category",
            "decisions",
            "--key",
            "k",
            "t",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot use"))
        .stderr(predicate::str::contains("--home"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
}

#[test]
fn files_and_folders_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    env.add("decisions", "k", "t");
    for f in record_files(&env.home()) {
        assert_eq!(
            std::fs::metadata(&f).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    assert_eq!(
        std::fs::metadata(env.home()).unwrap().permissions().mode() & 0o777,
        0o700
    );
    // Regression: a query's `hits.log` was created 0644.
    assert_eq!(env.hit_ids("alpha", "t").len(), 1);
    let hits = env.project_dir().join("hits.log");
    assert!(hits.exists());
    for e in walkdir::WalkDir::new(env.home()) {
        let e = e.unwrap();
        let want = if e.file_type().is_dir() { 0o700 } else { 0o600 };
        let mode = e.metadata().unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, want, "{}", e.path().display());
    }
}

/// Regression: doctor checked the modes of the home, scope folders and
/// index only, so a record file readable by everyone went unreported.
#[cfg(unix)]
#[test]
fn r_doctor_reports_a_world_readable_record_file() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    env.add("decisions", "k", "A private decision.");
    let f = record_files(&env.home()).remove(0);
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = env.cmd().arg("doctor").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("chmod 600 {}", f.display())),
        "{text}"
    );
}

/// `--ephemeral` runs one command in a throwaway home and removes it; the
/// real home is never touched.
#[test]
fn ephemeral_uses_a_throwaway_home_and_removes_it() {
    let env = Env::new();
    let tmpdir = env.tmp.path().join("tmp");
    std::fs::create_dir_all(&tmpdir).unwrap();
    let mut c = assert_cmd::Command::cargo_bin("recall").unwrap();
    let out = c
        .env_remove("RECALL_HOME")
        .env("TMPDIR", &tmpdir)
        .args(["--ephemeral", "--project", "alpha"])
        .args([
            "record",
            "add",
            "--category",
            "decisions",
            "--key",
            "e1",
            "fact",
        ])
        .current_dir(env.tmp.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_success(&out);
    assert!(stdout.contains("recall-ephemeral-"), "{stdout}");
    let left: Vec<_> = std::fs::read_dir(&tmpdir).unwrap().collect();
    assert!(left.is_empty(), "the throwaway home is removed: {left:?}");
    assert!(!env.home().exists(), "the real home is not touched");
    let out = env
        .cmd()
        .args(["--ephemeral", "query", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be used with"));
}

/// Regression (review, stop 57): a project whose `project.json` does not
/// read is passed over by `project list` and lookups by name, and doctor
/// said all was well. Doctor names the file and the fix, and the fix works:
/// `recall reindex` in the project's folder writes the file again.
#[test]
fn doctor_names_a_project_json_that_does_not_read() {
    let env = Env::new();
    let folder = env.tmp.path().join("shop");
    std::fs::create_dir_all(folder.join(".git")).unwrap();
    let recall = |args: &[&str]| {
        assert_cmd::Command::cargo_bin("recall")
            .unwrap()
            .env_remove("RECALL_HOME")
            .env_remove("RECALL_PROJECT")
            .arg("--home")
            .arg(env.home())
            .arg("--cwd")
            .arg(&folder)
            .args(args)
            .output()
            .unwrap()
    };
    let out = recall(&[
        "record",
        "add",
        "--category",
        "decisions",
        "--key",
        "deploy",
        "Deploys use make release.",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let info = std::fs::read_dir(env.home().join("projects"))
        .unwrap()
        .map(|e| e.unwrap().path().join("project.json"))
        .find(|p| p.is_file())
        .unwrap();
    std::fs::write(&info, "garbage{").unwrap();
    let out = recall(&["doctor"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains(&format!("{} cannot be read", info.display())) && text.contains("remove it"),
        "{text}"
    );
    std::fs::remove_file(&info).unwrap();
    assert!(recall(&["reindex"]).status.success());
    let out = recall(&["doctor"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let list = String::from_utf8_lossy(&recall(&["project", "list"]).stdout).into_owned();
    assert!(list.contains("shop"), "{list}");
}

/// Regression (review, stop 57): for a deleted `index.db` doctor named
/// only `recall reindex`, which rebuilds the records alone; the indexed
/// sessions and tickets were lost without a word. The fix names both.
#[test]
fn doctor_on_a_missing_index_says_what_reindex_does_not_bring_back() {
    let env = Env::new();
    env.add("decisions", "k", "A decision.");
    std::fs::remove_file(env.project_dir().join("index.db")).unwrap();
    let out = env.cmd().arg("doctor").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("index.db is missing")
            && text.contains("recall reindex")
            && text.contains("then `recall index`"),
        "{text}"
    );
}

/// Regression (review, stop 57): a record file whose key another record
/// holds (a hand-written copy, or a file fixed after `record add` reused
/// its key) was "not indexed" with `recall reindex` as the fix, which
/// refuses it every time. Doctor names both files and the key.
#[test]
fn doctor_names_two_record_files_with_one_key() {
    let env = Env::new();
    env.add("decisions", "deploy", "Deploys use make release.");
    let first = record_files(&env.home()).remove(0);
    let text = std::fs::read_to_string(&first).unwrap();
    let copy = first.with_file_name("deploy-copy.md");
    let id_line = text.lines().find(|l| l.starts_with("id:")).unwrap();
    std::fs::write(&copy, text.replacen(id_line, "id: deploy-copy", 1)).unwrap();
    let out = env.cmd().arg("doctor").output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("key 'deploy' is already the key of")
            && said.contains("deploy-copy.md")
            && !said.contains("not indexed, "),
        "{said}"
    );
}
