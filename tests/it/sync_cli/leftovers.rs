//! What a sync killed mid-pull leaves on disk (issue 36 item 6): no
//! temporary file holding shared text outlives the process that made it
//! by more than the next command, and `doctor` reports any it finds.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::{joined, Host};
use crate::common::pg::Pg;
use crate::common::Env;

/// recall's temporary files under `dir` (`.recall-*.tmp`).
fn temps(dir: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy();
            n.starts_with(".recall-") && n.ends_with(".tmp")
        })
        .map(|e| e.path().to_path_buf())
        .collect()
}

/// Host `b` pulls with every file write stopped before its rename, and is
/// killed there, as `kill -9` would: its temporary file holds the text.
fn kill_mid_pull(b: &Host) -> PathBuf {
    let mut child = b.std_cmd_env(
        &["sync"],
        &[("FAILPOINTS", "atomic-write-unpersisted=sleep(20000)")],
    );
    let t0 = Instant::now();
    let left = loop {
        // Written, and waiting to be renamed.
        let written = temps(&b.home.join("projects"))
            .into_iter()
            .find(|t| std::fs::metadata(t).is_ok_and(|m| m.len() > 0));
        if let Some(t) = written {
            break t;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the sync ended before it wrote a file (a test build has fail points on)"
        );
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "no temp file appeared"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    left
}

/// Issue 36 item 6: after a kill mid-pull, temporary files holding pulled
/// (later deleted) text stayed until a record scan ran a minute later, and
/// `doctor` said all checks passed. Now `doctor` names the file at once,
/// and the next command removes it.
#[test]
fn r36_a_pull_killed_mid_write_leaves_no_text_after_the_next_command() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    let [a, b] = joined(&env, &pg, ["a", "b"]);
    a.add("doomed", "The gannet-plum-8841 switch is temporary");
    a.sync();
    let left = kill_mid_pull(&b);
    let text = std::fs::read_to_string(&left).unwrap();
    assert!(text.contains("gannet-plum-8841"), "{text}");

    let out = b.out(&["doctor"]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("temporary file") && said.contains(&left.display().to_string()),
        "{said}"
    );
    // The next command (a query, which reads the records) removes it.
    b.out(&["query", "gannet-plum-8841"]);
    assert_eq!(temps(&b.home), Vec::<PathBuf>::new());

    // And after a sync killed the same way, the next sync.
    a.run(&["record", "delete", "doomed"]);
    a.add("other", "The puffin-slate-1290 switch stays");
    a.sync();
    kill_mid_pull(&b);
    b.sync();
    assert_eq!(temps(&b.home), Vec::<PathBuf>::new());
    assert_eq!(
        super::grep_tree(&b.home.join("projects"), "gannet-plum-8841"),
        Vec::<PathBuf>::new()
    );
    let out = b.out(&["doctor"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
