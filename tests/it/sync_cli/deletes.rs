//! Deletes reach every host (issue 36 item 1): a tombstone is compacted
//! away once every host that reports its progress has read past it, and a
//! host that cannot report (a read-only role) or was offline meanwhile
//! reconciles with what the server still holds live.

use std::path::PathBuf;

use super::{grep_tree, joined, reader_url, Host, TEAM};
use crate::common::pg::Pg;
use crate::common::Env;

/// A read-only CI host joined with the reader role.
fn reader<'a>(env: &'a Env, pg: &Pg) -> Host<'a> {
    let ci = Host::new(env, "ci");
    ci.run(&["sync", "--init", &reader_url(pg), "--team", TEAM]);
    ci
}

fn tombstones(pg: &Pg) -> String {
    pg.sql("team", "SELECT count(*) FROM recall_entries WHERE deleted")
}

/// The reproduction of issue 36 item 1: a reader pulled a record, a
/// member deleted it and every member host synced, so the tombstone was
/// compacted (the reader cannot report its progress); the reader's next
/// pull must still drop the record.
#[test]
fn r36_a_read_only_host_learns_of_a_delete_compacted_before_it_pulled() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    let [a, b] = joined(&env, &pg, ["a", "b"]);
    let ci = reader(&env, &pg);
    a.add(
        "doomed",
        "The flag lives in narwhal-umber-6620 until Friday",
    );
    a.sync();
    b.sync();
    ci.run(&["sync", "--pull-only"]);
    assert_eq!(ci.hit_ids("narwhal-umber-6620").len(), 1);

    a.run(&["record", "delete", "doomed"]);
    a.sync();
    b.sync();
    a.sync();
    assert_eq!(tombstones(&pg), "0", "the tombstone was not compacted");

    ci.run(&["sync", "--pull-only"]);
    assert_eq!(ci.body("doomed"), None);
    assert_eq!(ci.hit_ids("narwhal-umber-6620"), Vec::<String>::new());
    assert_eq!(
        grep_tree(&ci.home.join("projects"), "narwhal-umber-6620"),
        Vec::<PathBuf>::new()
    );
    // Reconciled once: the next pull has nothing to do.
    assert!(ci.run(&["sync", "--pull-only"]).contains("pulled 0"));
}

/// A reader offline while records and a session were deleted and the
/// tombstones compacted, and a key deleted and written again: on its next
/// pull it holds exactly what the members hold, and a record written on
/// the reader itself (never exchanged) stays.
#[test]
fn r36_a_reader_offline_across_a_compaction_holds_what_the_members_hold() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    let [a, b] = joined(&env, &pg, ["a", "b"]);
    let sessions = env.tmp.path().join("sessions");
    std::fs::create_dir(&sessions).unwrap();
    let transcript = sessions.join("gone.jsonl");
    std::fs::write(
        &transcript,
        r#"{"role":"user","content":"the okapi-sienna-4410 cache is warm","session_id":"g1"}
{"role":"assistant","content":"okapi-sienna-4410 noted","session_id":"g1"}
"#,
    )
    .unwrap();
    a.run(&["index", transcript.to_str().unwrap()]);
    a.add("keep", "Releases are cut on Mondays");
    a.add("gone", "The heron-teal-3307 flag is temporary");
    a.add("again", "The retry budget is 3");
    a.sync();
    let ci = reader(&env, &pg);
    ci.add("mine", "Only this runner knows this");
    assert_eq!(ci.hit_ids("okapi-sienna-4410").len(), 1);
    assert_eq!(ci.hit_ids("heron-teal-3307").len(), 1);

    // The reader is offline from here.
    b.sync();
    b.run(&["record", "delete", "gone"]);
    a.run(&["record", "delete", "again"]);
    std::fs::remove_file(&transcript).unwrap();
    a.run(&["index", sessions.to_str().unwrap(), "--prune"]);
    a.sync();
    b.sync();
    b.add("again", "The retry budget is 5");
    b.sync();
    a.sync();
    b.sync();
    assert_eq!(tombstones(&pg), "0", "the tombstones were not compacted");

    ci.run(&["sync", "--pull-only"]);
    let mut want = a.records();
    assert_eq!(want, b.records());
    want.push(("mine".into(), "Only this runner knows this".into()));
    want.sort();
    assert_eq!(ci.records(), want);
    assert_eq!(ci.hit_ids("okapi-sienna-4410"), Vec::<String>::new());
    assert_eq!(ci.hit_ids("heron-teal-3307"), Vec::<String>::new());
}
