//! Tests of the façade's record operations (`records.rs`): upsert, patch,
//! status, remember and list on a temporary home, the write lock and the
//! index refusing a row, generated text kept read-only, and keys, ids and
//! files kept free of secrets.

use jiff::Timestamp;

use super::*;
use crate::index::SecretPolicy;
use crate::memory::test_memory;

fn setup() -> (tempfile::TempDir, Memory, ScopeDir) {
    let tmp = tempfile::tempdir().unwrap();
    let mem = test_memory(tmp.path());
    let dir = mem.ensure_scope(Scope::Project).unwrap();
    (tmp, mem, dir)
}

/// The record store of `dir` on a connection of the test's own.
fn store_on<'a>(dir: &'a ScopeDir, conn: &'a mut rusqlite::Connection) -> RecordStore<'a> {
    RecordStore {
        dir,
        conn,
        limits: crate::records::Limits::default(),
        gate: None,
    }
}

fn record_files(dir: &ScopeDir) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut v: Vec<_> = walkdir::WalkDir::new(dir.records_dir())
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| (e.path().to_path_buf(), std::fs::read(e.path()).unwrap()))
        .collect();
    v.sort();
    v
}

/// Regression (issue 26 item 7): a record write that failed with
/// "database is locked" while `recall index` held the index had
/// already written its file, so a failed write was in fact stored. The
/// write lock is now taken before the file changes.
#[test]
fn r26_a_write_that_cannot_get_the_lock_leaves_nothing() -> Result<()> {
    let (_t, mem, dir) = setup();
    mem.upsert(&dir, new("first", "The first fact."))?;
    let before = record_files(&dir);
    let mut holder = rusqlite::Connection::open(dir.index_path())?;
    let held = holder.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let mut conn = rusqlite::Connection::open(dir.index_path())?;
    conn.busy_timeout(std::time::Duration::ZERO)?;
    let mut store = store_on(&dir, &mut conn);
    for (key, text) in [
        ("second", "A new fact."),
        ("first", "The first fact, edited."),
    ] {
        let err = store
            .upsert(key, None, text, |_| {}, SecretPolicy::Refuse, mem.now)
            .unwrap_err();
        assert!(err.is_busy(), "{err}");
    }
    let err = store.delete("first").unwrap_err();
    assert!(err.is_busy(), "{err}");
    assert_eq!(record_files(&dir), before);
    held.rollback()?;
    Ok(())
}

/// Issue 26 item 7: a write that fails after its file changed (here the
/// index refuses the row) puts the old file back: a new record leaves
/// no file, an edit leaves the old text, a move leaves the old file.
#[test]
fn r26_a_write_the_index_refuses_puts_the_files_back() -> Result<()> {
    let (_t, mem, dir) = setup();
    mem.upsert(&dir, new("first", "The first fact."))?;
    let before = record_files(&dir);
    let mut conn = rusqlite::Connection::open(dir.index_path())?;
    conn.execute_batch(
        "CREATE TEMP TRIGGER refuse BEFORE INSERT ON main.records
         BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;",
    )?;
    let mut store = store_on(&dir, &mut conn);
    let now = mem.now;
    let edits: [(&str, Option<Category>, &str); 3] = [
        ("second", None, "A new fact."),
        ("first", None, "The first fact, edited."),
        (
            "first",
            Some(Category::Procedures),
            "The first fact, moved.",
        ),
    ];
    for (key, category, text) in edits {
        let err = store
            .upsert(key, category, text, |_| {}, SecretPolicy::Refuse, now)
            .unwrap_err();
        assert!(err.to_string().contains("refused by the test"), "{err}");
        assert_eq!(record_files(&dir), before, "{key} {category:?}");
    }
    Ok(())
}

/// A text edit by the API, where generated text is read-only.
fn edit(text: &str) -> Patch {
    Patch {
        text: Some(text.into()),
        keep_generated: true,
        ..Patch::default()
    }
}

fn new(key: &str, text: &str) -> NewRecord {
    NewRecord {
        keep_generated: true,
        ..NewRecord::decision(key, text)
    }
}

/// Issue 26 item 18: an upsert that names no category moved a
/// procedure to decisions (MCP `remember`, REST `POST`).
#[test]
fn r26_an_upsert_without_a_category_keeps_the_category() -> Result<()> {
    let (_t, mem, dir) = setup();
    let mut first = new("deploy", "Deploy with make release.");
    first.category = Some(Category::Procedures);
    mem.upsert(&dir, first)?;
    let mut again = new("deploy", "Deploy with make release, then tag.");
    again.category = None;
    let (loc, created) = mem.upsert(&dir, again)?;
    assert!(!created);
    assert_eq!(loc.record.meta.category, Category::Procedures);
    assert!(
        loc.path.to_string_lossy().contains("/procedures/"),
        "{}",
        loc.path.display()
    );
    // The agent path too.
    let fact = Fact {
        text: "Deploy with make release, tag, then announce.",
        key: Some("deploy2"),
        category: Some(Category::Procedures),
        importance: None,
        secrets: SecretPolicy::Refuse,
    };
    mem.remember(&dir, &fact)?;
    let (loc, _) = mem.remember(
        &dir,
        &Fact {
            category: None,
            ..fact
        },
    )?;
    assert_eq!(loc.record.meta.category, Category::Procedures);
    Ok(())
}

#[test]
fn remember_in_infers_the_scope_a_fact_belongs_to() -> Result<()> {
    let (_t, mem, _dir) = setup();
    let fact = |text| Fact {
        text,
        category: None,
        key: None,
        importance: None,
        secrets: SecretPolicy::Refuse,
    };
    let scope =
        |scope, f: &Fact| -> Result<Scope> { Ok(mem.remember_in(scope, f)?.0.record.meta.scope) };
    let preference = fact("I prefer short answers without emojis.");
    assert_eq!(scope(None, &preference)?, Scope::User);
    let decision = fact("We deploy from the release branch only.");
    assert_eq!(scope(None, &decision)?, Scope::Project);
    // A category given by the caller keeps the fact in the project;
    // a scope given is where it goes.
    let filed = Fact {
        category: Some(Category::Preferences),
        key: Some("answers"),
        ..preference.clone()
    };
    assert_eq!(scope(None, &filed)?, Scope::Project);
    assert_eq!(scope(Some(Scope::User), &decision)?, Scope::User);
    Ok(())
}

#[test]
fn record_dirs_are_the_project_then_the_user() -> Result<()> {
    let (_t, mem, dir) = setup();
    let both = mem.record_dirs(None)?;
    assert_eq!(both.len(), 2);
    assert_eq!(
        (both[0].root.clone(), both[1].scope),
        (dir.root, Scope::User)
    );
    let user = mem.record_dirs(Some(Scope::User))?;
    assert_eq!(user.len(), 1);
    assert_eq!(user[0].scope, Scope::User);
    Ok(())
}

/// Issue 26 item 19: forgetting an archived record said "Forgot" again.
#[test]
fn r26_archiving_an_archived_record_changes_nothing_and_says_so() -> Result<()> {
    let (_t, mem, dir) = setup();
    mem.upsert(&dir, new("db", "Use Postgres."))?;
    let dirs = [dir];
    let (a, changed) = mem.set_status(&dirs, "db", Status::Archived)?;
    assert!(changed);
    let later = mem.at(Timestamp::from_second(1_800_000_000).unwrap());
    let (b, changed) = later.set_status(&dirs, "db", Status::Archived)?;
    assert!(!changed);
    assert_eq!(a.record.meta.updated, b.record.meta.updated);
    let (_, changed) = later.set_status(&dirs, "db", Status::Active)?;
    assert!(changed);
    Ok(())
}

#[test]
fn upsert_creates_then_updates_by_key() -> Result<()> {
    let (_t, mem, dir) = setup();
    let (a, created) = mem.upsert(&dir, new("db", "Use Postgres."))?;
    assert!(created);
    let (b, created) = mem.upsert(&dir, new("db", "Use SQLite."))?;
    assert!(!created);
    assert_eq!(a.record.meta.id, b.record.meta.id);
    let text = std::fs::read_to_string(&b.path).unwrap();
    assert!(text.contains("Use SQLite."), "{text}");
    Ok(())
}

/// Regression (review, stop 57): new text by the key of an archived
/// record was saved but left it archived, so the fact was never recalled.
#[test]
fn new_text_by_key_brings_an_archived_record_back() -> Result<()> {
    let (_t, mem, dir) = setup();
    mem.upsert(&dir, new("deploy", "Deploys use make release."))?;
    let dirs = [dir.clone()];
    mem.set_status(&dirs, "deploy", Status::Archived)?;
    let (back, created) = mem.upsert(&dir, new("deploy", "Deploys use the release workflow."))?;
    assert!(!created);
    assert_eq!(back.record.meta.status, Status::Active);
    assert_eq!(mem.get(&dirs, "deploy")?.record.meta.status, Status::Active);
    Ok(())
}

#[test]
fn generated_text_is_read_only_where_asked() -> Result<()> {
    let (_t, mem, dir) = setup();
    let mut agent = new("agent:x", "Builds run with make.");
    agent.source = Source::Agent;
    mem.upsert(&dir, agent)?;
    let dirs = [dir.clone()];
    let err = mem.patch(&dirs, "agent:x", edit("other")).unwrap_err();
    assert!(matches!(err, Error::Conflict(_)), "{err}");
    let err = mem.upsert(&dir, new("agent:x", "changed")).unwrap_err();
    assert!(matches!(err, Error::Conflict(_)), "{err}");
    // Pinning is allowed, and the same text is not a change.
    let pinned = mem.patch(
        &dirs,
        "agent:x",
        Patch {
            pinned: Some(true),
            keep_generated: true,
            ..Patch::default()
        },
    )?;
    assert!(pinned.record.meta.pinned);
    assert_eq!(pinned.record.meta.source, Source::Agent);
    Ok(())
}

/// Review finding: re-posting an auto record's own text (to change its
/// importance) turned it `manual`, and then its text was editable.
#[test]
fn r_same_text_upsert_keeps_a_generated_records_source() -> Result<()> {
    let (_t, mem, dir) = setup();
    let mut auto = new("auto-1", "Tests run with nextest.");
    auto.source = Source::Auto;
    mem.upsert(&dir, auto)?;
    let mut same = new("auto-1", "Tests run with nextest.");
    same.importance = Some(90);
    let (loc, created) = mem.upsert(&dir, same)?;
    assert!(!created);
    assert_eq!(loc.record.meta.source, Source::Auto);
    assert_eq!(loc.record.meta.importance, 90);
    let dirs = [dir.clone()];
    let err = mem.patch(&dirs, "auto-1", edit("edited")).unwrap_err();
    assert!(matches!(err, Error::Conflict(_)), "{err}");
    // And an agent write does not take over a person's record.
    mem.upsert(&dir, new("mine", "A person wrote this."))?;
    let mut agent = new("mine", "An agent's version.");
    agent.source = Source::Agent;
    let err = mem.upsert(&dir, agent).unwrap_err();
    assert!(err.to_string().contains("written by a person"), "{err}");
    Ok(())
}

/// Regression: a person who corrected an agent's record (`record add` by
/// its key, `record update --text`, `record edit`) left it `agent`, so the
/// agent's next version, here or from another host, overwrote the
/// correction. A person's text makes it theirs, as for an `auto` record.
#[test]
fn r_a_persons_correction_of_an_agents_record_is_theirs() -> Result<()> {
    let (_t, mem, dir) = setup();
    let dirs = [dir.clone()];
    for (key, by_patch) in [("agent:ci-cache", false), ("agent:ci-lint", true)] {
        let mut agent = new(key, "The CI cache is keyed by the lockfile.");
        agent.source = Source::Agent;
        mem.upsert(&dir, agent)?;
        let person = "The CI cache is keyed by the lockfile and the toolchain.";
        let fixed = match by_patch {
            false => mem.upsert(&dir, NewRecord::decision(key, person))?.0,
            true => mem.patch(
                &dirs,
                key,
                Patch {
                    text: Some(person.into()),
                    ..Patch::default()
                },
            )?,
        };
        assert_eq!(fixed.record.meta.source, Source::Manual, "{key}");
        let mut again = new(key, "The CI cache is keyed by the branch.");
        again.source = Source::Agent;
        let err = mem.upsert(&dir, again).unwrap_err();
        assert!(err.to_string().contains("written by a person"), "{err}");
    }
    Ok(())
}

#[test]
fn bad_input_leaves_nothing_on_disk() {
    let (_t, mem, dir) = setup();
    let mut bad = new("k", "x");
    bad.importance = Some(101);
    assert!(mem.upsert(&dir, bad).is_err());
    assert!(mem.upsert(&dir, new("", "text")).is_err());
    assert!(mem.upsert(&dir, new("k", &"w".repeat(2001))).is_err());
    assert!(
        !dir.records_dir().exists()
            || std::fs::read_dir(dir.records_dir()).unwrap().all(|e| {
                e.unwrap()
                    .path()
                    .read_dir()
                    .map(|mut d| d.next().is_none())
                    .unwrap_or(true)
            })
    );
}

#[test]
fn list_orders_by_key_or_recency_after_pin_and_importance() -> Result<()> {
    let (_t, mem, dir) = setup();
    mem.upsert(&dir, new("a", "older"))?;
    mem.at(Timestamp::from_second(1_700_000_100).unwrap())
        .upsert(&dir, new("b", "newer"))?;
    let mut pinned = new("z", "pinned");
    pinned.pinned = Some(true);
    mem.upsert(&dir, pinned)?;
    let dirs = [dir];
    let keys = |o| -> Result<Vec<String>> {
        Ok(mem
            .list(&dirs, &ListFilter::default(), o)?
            .into_iter()
            .map(|l| l.key)
            .collect())
    };
    assert_eq!(keys(ListOrder::Key)?, ["z", "a", "b"]);
    assert_eq!(keys(ListOrder::Recent)?, ["z", "b", "a"]);
    Ok(())
}

/// A GitHub token, assembled so this file holds none.
fn token() -> String {
    format!("ghp_{}", "Xk9Qm2Zr7Lp4Wn8Vb3Hd6Jf1Tc5Ys0Ga7Ke2")
}

/// Where `token()` could hide once slugged or stored: itself, and its
/// random part lowercased.
fn assert_clean_of_token(what: &str, s: &str) {
    let t = token();
    let core = t[4..].to_lowercase();
    assert!(
        !s.contains(&t) && !s.to_lowercase().contains(&core),
        "{what} holds the token: {s}"
    );
}

/// Regression (issue #26: `remember --redact` built the key, id and
/// file name from the text before redaction, so all three held the
/// token, lowercased).
#[test]
fn r26_remember_key_is_built_from_redacted_text() -> Result<()> {
    let (_t, mem, dir) = setup();
    let text = format!("Deploy with GH_TOKEN={} from CI.", token());
    let fact = Fact {
        text: &text,
        category: None,
        key: None,
        importance: None,
        secrets: SecretPolicy::Redact,
    };
    let (loc, created) = mem.remember(&dir, &fact)?;
    assert!(created);
    let m = &loc.record.meta;
    assert_eq!(
        m.key,
        "agent:deploy-with-gh-token-redacted-github-token-from-ci"
    );
    assert_clean_of_token("the id", &m.id);
    assert_clean_of_token("the file name", &loc.path.display().to_string());
    assert_clean_of_token("the file", &std::fs::read_to_string(&loc.path).unwrap());
    // The same fact again updates the record: one key, one file.
    let (again, created) = mem.remember(&dir, &fact)?;
    assert!(!created);
    assert_eq!(again.path, loc.path);
    Ok(())
}

/// Regression (issue #26: `record add --redact --key "token ghp_..."`
/// put the whole token in the id and the file name). A key holding a
/// secret is refused, or redacted before anything is built from it.
#[test]
fn r26_a_key_holding_a_secret_is_refused_or_redacted() -> Result<()> {
    let (_t, mem, dir) = setup();
    let key = format!("token {}", token());
    let err = mem.upsert(&dir, new(&key, "A fact.")).unwrap_err();
    assert!(matches!(err, Error::Secret { .. }), "{err}");
    assert!(err.to_string().contains("at key, line 1"), "{err}");
    assert!(!dir.records_dir().join("decisions").exists());

    let mut redacted = new(&key, "A fact.");
    redacted.secrets = SecretPolicy::Redact;
    let (loc, created) = mem.upsert(&dir, redacted.clone())?;
    assert!(created);
    assert_eq!(loc.record.meta.key, "token [REDACTED:github-token]");
    assert!(loc
        .record
        .meta
        .id
        .starts_with("token-redacted-github-token-"));
    assert_clean_of_token("the file name", &loc.path.display().to_string());
    assert_clean_of_token("the file", &std::fs::read_to_string(&loc.path).unwrap());
    // Upsert by the same key finds the redacted record.
    let (again, created) = mem.upsert(&dir, redacted)?;
    assert!(!created);
    assert_eq!(again.record.meta.id, loc.record.meta.id);
    Ok(())
}

/// An id that holds a secret (a file written by hand, an old record) is
/// replaced on the next save, and the file moves with it.
#[test]
fn r26_an_id_holding_a_secret_is_replaced_on_save() -> Result<()> {
    let (_t, mem, dir) = setup();
    let (loc, _) = mem.upsert(&dir, new("deploy", "Deploy from main."))?;
    let text = std::fs::read_to_string(&loc.path).unwrap();
    let old_id = loc.record.meta.id.clone();
    let bad_id = format!("deploy-{}", token());
    let bad_path = loc.path.with_file_name(format!("{bad_id}.md"));
    std::fs::write(&bad_path, text.replace(&old_id, &bad_id)).unwrap();
    std::fs::remove_file(&loc.path).unwrap();
    let dirs = [dir.clone()];
    let saved = mem.patch(
        &dirs,
        "deploy",
        Patch {
            importance: Some(70),
            ..Patch::default()
        },
    )?;
    assert_clean_of_token("the id", &saved.record.meta.id);
    assert_clean_of_token("the file name", &saved.path.display().to_string());
    assert!(!bad_path.exists(), "the old file is gone");
    Ok(())
}

/// Issue 39 item 4: `remember` by a key a project record holds updates it
/// there, keeping its category, even when the text reads as a personal
/// preference; no second record with the key appears in the user scope.
#[test]
fn r39_remember_by_key_updates_the_record_in_its_own_scope() -> Result<()> {
    let (_t, mem, dir) = setup();
    let mut first = new("rk", "The cache broke on friday.");
    first.category = Some(Category::Incidents);
    first.source = Source::Agent;
    mem.upsert(&dir, first)?;
    let fact = Fact {
        text: "I prefer that the cache is fixed by restarting.",
        category: None,
        key: Some("rk"),
        importance: None,
        secrets: SecretPolicy::Refuse,
    };
    let (loc, created) = mem.remember_in(None, &fact)?;
    assert!(!created);
    assert_eq!(loc.record.meta.scope, Scope::Project);
    assert_eq!(loc.record.meta.category, Category::Incidents);
    let user = mem.record_dirs(Some(Scope::User))?;
    assert!(matches!(mem.get(&user, "rk"), Err(Error::NoRecord { .. })));
    // Without a key held anywhere, a first-person preference is the user's
    // and an imperative rule the project's.
    let pref = Fact {
        key: None,
        ..fact.clone()
    };
    assert_eq!(
        mem.remember_in(None, &pref)?.0.record.meta.scope,
        Scope::User
    );
    let rule = Fact {
        text: "Never commit the _bmad-output folder.",
        ..pref.clone()
    };
    let (loc, _) = mem.remember_in(None, &rule)?;
    assert_eq!(
        (loc.record.meta.scope, loc.record.meta.category),
        (Scope::Project, Category::Principles)
    );
    Ok(())
}

/// Issue 39 item 4: a misfiled record moves to the other scope with its
/// id, key and text; moving it where it is, or onto a key the target
/// holds, is refused with the reason.
#[test]
fn r39_a_record_moves_to_the_other_scope() -> Result<()> {
    let (_t, mem, dir) = setup();
    let mut rec = new("fmt", "Always run mix format before committing.");
    rec.category = Some(Category::Preferences);
    let user = mem.ensure_scope(Scope::User)?;
    let (loc, _) = mem.upsert(&user, rec)?;
    let id = loc.record.meta.id.clone();
    let moved = mem.move_record(None, "fmt", Scope::Project)?;
    assert_eq!(moved.record.meta.id, id);
    assert_eq!(moved.record.meta.scope, Scope::Project);
    assert!(moved.path.starts_with(dir.records_dir()));
    assert!(!loc.path.exists(), "the user scope's file is gone");
    assert!(matches!(
        mem.get(std::slice::from_ref(&user), "fmt"),
        Err(Error::NoRecord { .. })
    ));
    let again = mem.move_record(None, "fmt", Scope::Project).unwrap_err();
    assert!(again.to_string().contains("already"), "{again}");
    mem.upsert(&user, new("fmt", "A user record with the same key."))?;
    let taken = mem.move_record(None, &id, Scope::User).unwrap_err();
    assert!(taken.to_string().contains("has a record"), "{taken}");
    // Looked for in the scope named only (the panel moves the record of
    // the list it shows): a key only the project holds is not the user's.
    mem.upsert(&dir, new("ci", "CI runs on every push."))?;
    let elsewhere = mem.move_record(Some(Scope::User), "ci", Scope::Project);
    assert!(
        matches!(elsewhere, Err(Error::NoRecord { .. })),
        "{elsewhere:?}"
    );
    assert_eq!(
        mem.move_record(Some(Scope::Project), "ci", Scope::User)?
            .record
            .meta
            .scope,
        Scope::User
    );
    Ok(())
}

/// Regression (review, stop 62): a write that moves a record (a new
/// category is a new folder) writes the new file, removes the old one,
/// then commits the row; a read in between (a `get`, or `remember`
/// looking for the scope that holds its key) failed with "cannot read"
/// the old file. It reads again once the row has moved.
#[test]
fn r_a_read_during_a_move_finds_the_record_where_it_went() -> Result<()> {
    let tmp = tempfile::tempdir().unwrap();
    let (mem, file) = crate::memory::test_memory_with_record(tmp.path());
    let dir = mem.scope_dir(Scope::Project)?;
    // Mid-move: the new file written, the old one gone, the row not yet
    // committed.
    let moved = dir
        .records_dir()
        .join("procedures")
        .join(file.file_name().unwrap());
    std::fs::create_dir_all(moved.parent().unwrap()).unwrap();
    std::fs::rename(&file, &moved).unwrap();
    let rel = moved
        .strip_prefix(&dir.root)
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let index = dir.index_path();
    let commit = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(100));
        let c = rusqlite::Connection::open(index).unwrap();
        c.execute("UPDATE records SET path = ?1 WHERE key = 'use-pnpm'", [rel])
            .unwrap();
    });
    // Read as `get` reads, with no scan of the folders first (which
    // would find the file anew).
    let reader = rusqlite::Connection::open(dir.index_path()).unwrap();
    let found = crate::index::find_record(&reader, &dir, &mem.limits(), "use-pnpm");
    commit.join().unwrap();
    assert_eq!(found?.map(|l| l.path), Some(moved));
    Ok(())
}
