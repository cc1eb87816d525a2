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

/// Regression (review, stop 60): a record file a hand edit broke (a slip
/// in a field, or `git pull`'s conflict markers) has no row in the index,
/// and sync sent that as its deletion: the record was wiped from the
/// server and from every other host, and sync exited 0. The deletion is
/// held back, named with the fix, and sync exits 3; fixed, the file syncs
/// as before, and a record deleted for real still goes.
#[test]
fn r_a_record_file_that_does_not_parse_is_not_deleted_everywhere() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    let [a, b] = joined(&env, &pg, ["a", "b"]);
    a.add("k2", "Payments retry three times with backoff");
    a.add("gone", "The old flag is removed on Friday");
    a.sync();
    b.sync();
    assert!(b.body("k2").is_some());
    let path = PathBuf::from(b.record_json("k2")["path"].as_str().unwrap());
    let good = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, good.replace("importance: 50", "importance: lots")).unwrap();
    b.run(&["record", "delete", "gone"]);
    let out = b.out(&["sync"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("the deletion of record 'k2'") && err.contains("does not parse"),
        "{err}"
    );
    a.sync();
    assert!(a.body("k2").is_some(), "k2 deleted on the other host");
    assert!(a.body("gone").is_none(), "a real delete is still sent");
    std::fs::write(&path, good.replace("three times", "five times")).unwrap();
    b.sync();
    a.sync();
    assert_eq!(
        a.body("k2").as_deref(),
        Some("Payments retry five times with backoff")
    );
}

/// Regression (review, stop 62): a record deleted here and not yet pushed
/// came back when a teammate's edit of it was pulled first, and the
/// deletion was never sent, though a change made here and not yet pushed
/// is never overwritten by a pull. Now it stays deleted, its tombstone
/// goes after the edit, and the last change to reach the server wins
/// everywhere; both hosts deleting it leaves nothing to push.
#[test]
fn r_a_delete_not_yet_pushed_outlives_a_pulled_edit() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    let [a, b] = joined(&env, &pg, ["a", "b"]);
    a.add("outage", "Outage: disk full on db-3, customer data exposed");
    a.sync();
    b.sync();
    a.run(&["record", "delete", "outage"]);
    b.add("outage", "Outage: disk full on db-3");
    b.sync();
    let said = a.sync();
    assert_eq!(a.body("outage"), None, "{said}");
    assert!(said.contains("pushed 1"), "{said}");
    b.sync();
    assert_eq!(b.body("outage"), None);
    // Deleted on both before either synced: nothing comes back.
    a.add("flag", "The flag lives in narwhal-umber-6620");
    a.sync();
    b.sync();
    a.run(&["record", "delete", "flag"]);
    b.run(&["record", "delete", "flag"]);
    a.sync();
    b.sync();
    a.sync();
    assert_eq!((a.body("flag"), b.body("flag")), (None, None));
    assert!(b.sync().contains("pulled 0, pushed 0"));
}
