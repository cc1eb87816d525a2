//! Record operations of the façade: which scopes a record is looked up in,
//! list, get, upsert by key, patch, delete and remember (in the scope the
//! fact belongs to). Each opens the scope's index, syncs changed files
//! first, and goes through [`RecordStore`], so validation, secret refusal
//! and upsert semantics are the same for every front end.

use jiff::Timestamp;

use super::remember::{classify, remember, Fact};
use super::Memory;
use crate::error::{Error, Result};
use crate::index::{
    find_record, list_records, screen_key, screen_secrets, ListFilter, Listed, Located,
    RecordStore, SecretPolicy,
};
use crate::records::{validate, Category, Record, Source, Status};
use crate::store::{Scope, ScopeDir};

/// How [`Memory::list`] orders records after pinned and importance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ListOrder {
    /// Most recently updated first (projects).
    #[default]
    Recent,
    /// Key ascending (the user scope's preferences read as a glossary).
    Key,
}

/// A record to create, or to update when its key exists (upsert).
#[derive(Debug, Clone)]
pub struct NewRecord {
    pub key: String,
    pub text: String,
    /// `None`: an update keeps the record's category; a new record gets
    /// the one the builtin rules classify its text as.
    pub category: Option<Category>,
    pub pinned: Option<bool>,
    pub importance: Option<u8>,
    pub keywords: Option<Vec<String>>,
    /// Who writes it: `manual` (a person) or `agent`. `auto` is extraction's.
    pub source: Source,
    pub secrets: SecretPolicy,
    /// Refuse to change the text of a record a person did not write
    /// (`auto`, `agent`): the REST API's rule. The CLI lets a person take
    /// such a record over (it becomes `manual`).
    pub keep_generated: bool,
}

#[cfg(test)]
impl NewRecord {
    /// A decision a person writes, secrets refused: what most tests store.
    pub(crate) fn decision(key: &str, text: &str) -> NewRecord {
        NewRecord {
            key: key.into(),
            text: text.into(),
            category: Some(Category::Decisions),
            pinned: None,
            importance: None,
            keywords: None,
            source: Source::Manual,
            secrets: SecretPolicy::Refuse,
            keep_generated: false,
        }
    }
}

/// A partial update; `None` leaves a field as it is.
#[derive(Debug, Clone)]
pub struct Patch {
    pub text: Option<String>,
    pub category: Option<Category>,
    pub pinned: Option<bool>,
    pub importance: Option<u8>,
    pub keywords: Option<Vec<String>>,
    pub status: Option<Status>,
    pub secrets: SecretPolicy,
    /// See [`NewRecord::keep_generated`].
    pub keep_generated: bool,
}

impl Default for Patch {
    fn default() -> Self {
        Patch {
            text: None,
            category: None,
            pinned: None,
            importance: None,
            keywords: None,
            status: None,
            secrets: SecretPolicy::Refuse,
            keep_generated: false,
        }
    }
}

impl Patch {
    /// Apply the fields to `r` at `now`.
    /// Change `r` as asked; returns whether anything changed (`updated`
    /// moves only then: an empty patch changes nothing).
    fn apply(self, r: &mut Record, now: Timestamp) -> Result<bool> {
        let before = r.clone();
        if let Some(t) = self.text {
            if t.trim() != r.body {
                refuse_generated(r, self.keep_generated)?;
                r.body = t.trim().to_string();
                r.mark_edited_by_hand();
            }
        }
        if let Some(c) = self.category {
            r.meta.category = c;
        }
        if let Some(p) = self.pinned {
            r.meta.pinned = p;
        }
        if let Some(i) = self.importance {
            check_importance(i)?;
            r.meta.importance = i;
        }
        if let Some(k) = self.keywords {
            r.meta.keywords = clean_keywords(k);
        }
        if let Some(s) = self.status {
            r.meta.status = s;
        }
        let changed = *r != before;
        if changed {
            r.meta.updated = now;
        }
        Ok(changed)
    }
}

fn check_importance(i: u8) -> Result<()> {
    if i > 100 {
        return Err(Error::invalid(format!(
            "importance {i} is out of range 0-100"
        )));
    }
    Ok(())
}

fn clean_keywords(k: Vec<String>) -> Vec<String> {
    k.into_iter()
        .map(|k| k.trim().to_string())
        .filter(|k| !k.is_empty())
        .collect()
}

/// Whether a scope folder has records or an index to look in.
pub(super) fn has_store(dir: &ScopeDir) -> bool {
    dir.records_dir().exists() || dir.index_path().exists()
}

/// Why a write of `source` may not change `existing`'s text.
fn conflict(existing: &Record, source: Source) -> Error {
    match existing.meta.source {
        Source::Manual => Error::Conflict(format!(
            "record '{}' was written by a person; an {} write does not change its text: use another key",
            existing.meta.key,
            source.as_str()
        )),
        other => Error::Conflict(format!(
            "record '{}' is {}-captured and its text is read-only here; pin, unpin or delete it, or write a manual record under another key",
            existing.meta.key,
            other.as_str()
        )),
    }
}

/// A generated record's text is read-only where `keep` says so.
fn refuse_generated(r: &Record, keep: bool) -> Result<()> {
    if keep && r.meta.source != Source::Manual {
        return Err(Error::Conflict(format!(
            "record '{}' is {}-captured and its text is read-only here; pin, unpin or delete it, or write a manual record under another key",
            r.meta.key,
            r.meta.source.as_str()
        )));
    }
    Ok(())
}

impl Memory {
    /// Run `f` with the record store of `dir` (its index synced first).
    fn with_store<T>(
        &self,
        dir: &ScopeDir,
        f: impl FnOnce(&mut RecordStore) -> Result<T>,
    ) -> Result<T> {
        // Held across the sync, the look-up and the write (see
        // `ScopeDir::lock_records`).
        let _lock = dir.lock_records()?;
        let mut db = self.open_synced(dir)?;
        let mut store = RecordStore {
            dir,
            conn: db.writer()?,
            limits: self.limits(),
            gate: self.gate.as_deref(),
        };
        f(&mut store).map_err(|e| e.at(&dir.index_path()))
    }

    /// The scope folders to look a record up in by id or key: `scope`'s,
    /// or the project's then the user's.
    pub fn record_dirs(&self, scope: Option<Scope>) -> Result<Vec<ScopeDir>> {
        Ok(match scope {
            Some(s) => vec![self.scope_dir(s)?],
            None => vec![
                self.scope_dir(Scope::Project)?,
                self.scope_dir(Scope::User)?,
            ],
        })
    }

    /// Records of the scopes `dirs` that exist: pinned first, then by
    /// importance, then by `order`.
    pub fn list(
        &self,
        dirs: &[ScopeDir],
        filter: &ListFilter,
        order: ListOrder,
    ) -> Result<Vec<Listed>> {
        let mut rows: Vec<Listed> = Vec::new();
        // Read-only: a list never takes the record lock or the index's
        // write lock, so it never waits for a writer (issue 26 item 12).
        for (dir, db) in self.open_scopes(dirs)? {
            rows.extend(db.with_conn(|c| list_records(c, dir, filter))?);
        }
        rows.sort_by(|x, y| {
            let first = y
                .pinned
                .cmp(&x.pinned)
                .then(y.importance.cmp(&x.importance));
            match order {
                ListOrder::Recent => first.then(y.updated.cmp(&x.updated)),
                ListOrder::Key => first.then(x.key.cmp(&y.key)),
            }
        });
        Ok(rows)
    }

    /// The first of `dirs` holding a record with this id or key, with the
    /// record and its store. Not found is [`Error::NotFound`].
    pub fn with_record<T>(
        &self,
        dirs: &[ScopeDir],
        id_or_key: &str,
        f: impl FnOnce(&mut RecordStore, Located) -> Result<T>,
    ) -> Result<T> {
        let mut f = Some(f);
        for dir in dirs.iter().filter(|d| has_store(d)) {
            let done = self.with_store(dir, |store| match store.find(id_or_key)? {
                // `f` is still there: the loop returns after its one call.
                Some(loc) => f.take().expect("f is called once")(store, loc).map(Some),
                None => Ok(None),
            })?;
            if let Some(v) = done {
                return Ok(v);
            }
        }
        Err(Error::NotFound(format!(
            "no record with id or key '{id_or_key}'; list them with `recall record list`"
        )))
    }

    /// How many active records a scope holds (0 without an index):
    /// archived ones are left out of recall, and of the count.
    pub fn count_records(&self, dir: &ScopeDir) -> Result<usize> {
        match self.open_for_read(dir, false)? {
            None => Ok(0),
            Some(db) => db.with_conn(|c| {
                let n: i64 = c.query_row(
                    "SELECT count(*) FROM records WHERE status = 'active'",
                    [],
                    |r| r.get(0),
                )?;
                Ok(usize::try_from(n).unwrap_or(0))
            }),
        }
    }

    /// One record by id or key, read-only like [`list`](Self::list).
    pub fn get(&self, dirs: &[ScopeDir], id_or_key: &str) -> Result<Located> {
        let limits = self.limits();
        for (dir, db) in self.open_scopes(dirs)? {
            if let Some(loc) = db.with_conn(|c| find_record(c, dir, &limits, id_or_key))? {
                return Ok(loc);
            }
        }
        Err(Error::NotFound(format!(
            "no record with id or key '{id_or_key}'; list them with `recall record list`"
        )))
    }

    /// Create a record in `dir`, or update the one with its key. Input is
    /// validated before anything touches disk. Returns the record and
    /// whether it was created.
    pub fn upsert(&self, dir: &ScopeDir, new: NewRecord) -> Result<(Located, bool)> {
        let new = self.check_new(dir.scope, new)?;
        self.write_new(dir, new)
    }

    /// [`upsert`](Self::upsert) into a scope that may not exist yet: the
    /// input is checked first, so bad input leaves nothing on disk, not
    /// even the scope's folder.
    pub fn upsert_in(&self, scope: Scope, new: NewRecord) -> Result<(Located, bool)> {
        let new = self.check_new(scope, new)?;
        self.write_new(&self.ensure_scope(scope)?, new)
    }

    /// The write of an upsert whose input was checked.
    fn write_new(&self, dir: &ScopeDir, new: NewRecord) -> Result<(Located, bool)> {
        let keywords = new.keywords.map(clean_keywords);
        let fields = |r: &mut Record| {
            if let Some(p) = new.pinned {
                r.meta.pinned = p;
            }
            if let Some(i) = new.importance {
                r.meta.importance = i;
            }
            if let Some(k) = keywords.clone() {
                r.meta.keywords = k;
            }
        };
        self.with_store(dir, |store| {
            let found = store
                .find(&new.key)?
                .filter(|f| f.record.meta.key == new.key);
            if let Some(found) =
                found.filter(|f| new.keep_generated && f.record.meta.source != new.source)
            {
                // Another writer's record: its text stays theirs, and so
                // does its source (a same-text write must not turn an
                // `auto` record into an editable `manual` one).
                if found.record.body != new.text.trim() {
                    return Err(conflict(&found.record, new.source));
                }
                let mut r = found.record;
                if let Some(c) = new.category {
                    r.meta.category = c;
                }
                fields(&mut r);
                r.meta.updated = self.now;
                return Ok((store.save(r, Some(&found.path), new.secrets)?, false));
            }
            let exists = store.find(&new.key)?.is_some();
            let category = new
                .category
                .or_else(|| (!exists).then(|| super::remember::classify(&new.text).0));
            store.upsert(
                &new.key,
                category,
                &new.text,
                |r| {
                    if new.source != Source::Manual {
                        r.meta.source = new.source;
                    }
                    fields(r);
                },
                new.secrets,
                self.now,
            )
        })
    }

    /// Validate a new record (fields, limits, secrets) without touching
    /// disk. Returns it with its key screened: a key holding a secret is
    /// refused, or redacted before it is looked up or becomes an id.
    fn check_new(&self, scope: Scope, mut new: NewRecord) -> Result<NewRecord> {
        if let Some(i) = new.importance {
            check_importance(i)?;
        }
        new.key = screen_key(&new.key, new.secrets)?.into_owned();
        let mut probe = Record::new(
            &new.key,
            new.category.unwrap_or(Category::Decisions),
            scope,
            new.source,
            &new.text,
            self.now,
        );
        validate(&probe, &self.limits()).map_err(|(_, e)| e)?;
        screen_secrets(&mut probe, new.secrets)?;
        Ok(new)
    }

    /// Change some fields of a record found in `dirs`.
    pub fn patch(&self, dirs: &[ScopeDir], id_or_key: &str, patch: Patch) -> Result<Located> {
        let policy = patch.secrets;
        self.with_record(dirs, id_or_key, |store, loc| {
            let mut r = loc.record.clone();
            if !patch.apply(&mut r, self.now)? {
                return Ok(loc);
            }
            store.save(r, Some(&loc.path), policy)
        })
    }

    /// Leave a record out of recall (`archived`) or bring it back
    /// (`active`), keeping its file. Returns it and whether its status
    /// changed: archiving an archived record changes nothing, not even
    /// `updated`, and says so.
    pub fn set_status(
        &self,
        dirs: &[ScopeDir],
        id_or_key: &str,
        status: Status,
    ) -> Result<(Located, bool)> {
        self.with_record(dirs, id_or_key, |store, loc| {
            if loc.record.meta.status == status {
                return Ok((loc, false));
            }
            let mut r = loc.record;
            r.meta.status = status;
            r.meta.updated = self.now;
            Ok((store.save(r, Some(&loc.path), SecretPolicy::Refuse)?, true))
        })
    }

    /// Delete a record's file and index row; no byte of it stays behind.
    pub fn delete(&self, dirs: &[ScopeDir], id_or_key: &str) -> Result<Located> {
        self.with_record(dirs, id_or_key, |store, loc| {
            store.delete(&loc.record.meta.id)
        })
    }

    /// Store one fact an agent learned (see `memory/remember.rs`).
    pub fn remember(&self, dir: &ScopeDir, fact: &Fact) -> Result<(Located, bool)> {
        if let Some(i) = fact.importance {
            check_importance(i)?;
        }
        self.with_store(dir, |store| remember(store, fact, self.now))
    }

    /// [`remember`](Self::remember) a fact in `scope`, or where it belongs
    /// when no scope is given: a fact with a category is the project's; one
    /// without goes where the rules classify it (a preference is the
    /// user's, anything else the project's). The scope is created if it
    /// does not exist yet.
    pub fn remember_in(&self, scope: Option<Scope>, fact: &Fact) -> Result<(Located, bool)> {
        let scope = scope.unwrap_or_else(|| match fact.category {
            Some(_) => Scope::Project,
            None => classify(fact.text).1,
        });
        let dir = self.ensure_scope(scope)?;
        self.remember(&dir, fact)
    }
}

#[cfg(test)]
mod tests {
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
        let scope = |scope, f: &Fact| -> Result<Scope> {
            Ok(mem.remember_in(scope, f)?.0.record.meta.scope)
        };
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
}
