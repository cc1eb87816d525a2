//! A hostile environment: a bad config, an index from an old schema, a
//! symlinked records folder and a full disk each give a clear message or
//! work, never a panic.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use anyhow::Result;

use crate::corpus::write_corpus;
use crate::home::{index_db, integrity_ok};
use crate::{row, Row, World};

/// The hostile environment scenario.
pub fn hostile(w: &World) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    let no_panic = |o: &Output| o.status.code().is_some_and(|c| c <= 3);
    // A bad config.
    let home = w.root.join("hostile/config");
    std::fs::create_dir_all(&home)?;
    std::fs::write(
        home.join("config.toml"),
        "[recall.tuning]\ncandidates = 0\n",
    )?;
    let o = w.run(&home, &["--project", "p", "query", "x"])?;
    let err = String::from_utf8_lossy(&o.stderr);
    let ok =
        o.status.code() == Some(2) && err.contains("config.toml:2") && err.contains("at least 1");
    rows.push(row(
        "hostile",
        "bad config: exit 2 with file:line and range",
        ok,
        "true",
        ok,
    ));
    // An index from an old schema, opened by this binary.
    let home = w.root.join("hostile/old");
    let out = w.run(
        &home,
        &[
            "--project",
            "p",
            "record",
            "add",
            "--category",
            "decisions",
            "--key",
            "k",
            "old fact",
        ],
    )?;
    let compat = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/compat/index-v1.db");
    if let (true, Some(db)) = (out.status.success(), index_db(&home, "p")) {
        std::fs::copy(&compat, &db)?;
        let o = w.run(&home, &["--project", "p", "query", "old fact"])?;
        let ok = no_panic(&o) && integrity_ok(&db);
        rows.push(row(
            "hostile",
            "old schema: upgraded and answers",
            ok,
            "true",
            ok,
        ));
    }
    // A symlinked records folder.
    let home = w.root.join("hostile/link");
    w.run(
        &home,
        &[
            "--project",
            "p",
            "record",
            "add",
            "--category",
            "decisions",
            "--key",
            "k",
            "linked fact",
        ],
    )?;
    if let Some(db) = index_db(&home, "p") {
        let store = db.parent().unwrap().to_path_buf();
        let elsewhere = w.root.join("hostile/elsewhere-records");
        std::fs::rename(store.join("records"), &elsewhere)?;
        std::os::unix::fs::symlink(&elsewhere, store.join("records"))?;
        let o = w.run(&home, &["--project", "p", "query", "linked fact"])?;
        let ok = o.status.success() && String::from_utf8_lossy(&o.stdout).contains("linked");
        rows.push(row(
            "hostile",
            "symlinked records folder: found",
            ok,
            "true",
            ok,
        ));
    }
    // A full disk: a 1 MB tmpfs, when this machine lets us mount one.
    let mnt = w.root.join("hostile/full");
    std::fs::create_dir_all(&mnt)?;
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
        .arg(&mnt)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if mounted {
        let home = mnt.join("home");
        let corpus = w.root.join("hostile/big");
        write_corpus(&corpus, 8, 400, 3)?;
        let first = w.run(
            &home,
            &[
                "--project",
                "p",
                "record",
                "add",
                "--category",
                "decisions",
                "--key",
                "k",
                "kept fact",
            ],
        )?;
        let o = w.run(
            &home,
            &["--project", "p", "index", corpus.to_str().unwrap()],
        )?;
        let err = String::from_utf8_lossy(&o.stderr);
        let clear =
            no_panic(&o) && (o.status.success() || err.contains("full") || err.contains("space"));
        let db = index_db(&home, "p");
        let intact = db.as_deref().is_some_and(integrity_ok);
        let kept = first.status.success()
            && w.run(&home, &["--project", "p", "record", "get", "k"])?
                .status
                .success();
        // A changed records folder on the full disk: a query still
        // answers from the index as it is (issue 26 item 8).
        if let Some(db) = &db {
            let _ = Command::new("touch")
                .arg(db.with_file_name("records").join("decisions"))
                .status();
        }
        let q = w.run(
            &home,
            &["--project", "p", "query", "--format", "prompt", "kept fact"],
        )?;
        let answers =
            q.status.success() && String::from_utf8_lossy(&q.stdout).contains("kept fact");
        let _ = Command::new("umount").arg(&mnt).status();
        rows.push(row(
            "hostile",
            "full disk: clear error, index intact, records kept, queries answer",
            format!("{clear}/{intact}/{kept}/{answers}"),
            "true/true/true/true",
            clear && intact && kept && answers,
        ));
    } else {
        rows.push(row(
            "hostile",
            "full disk",
            "skipped (cannot mount a tmpfs here)",
            "",
            true,
        ));
    }
    Ok(rows)
}
