//! Record operations of the façade: which scopes a record is looked up in,
//! list, get, upsert by key, patch, delete and remember (in the scope the
//! fact belongs to). Each opens the scope's index, syncs changed files
//! first, and goes through [`RecordStore`], so validation, secret refusal
//! and upsert semantics are the same for every front end. What a write may
//! ask ([`NewRecord`], [`Patch`]) and its checks are in `record_writes.rs`;
//! the tests are in `records_tests.rs`.

use std::path::Path;

use super::record_writes::{check_importance, clean_keywords, conflict, NewRecord, Patch};
use super::remember::{classify, remember, Fact};
use super::Memory;
use crate::error::{Error, Result};
use crate::index::{
    find_record, list_records, screen_key, screen_secrets, ListFilter, Listed, Located,
    RecordStore, SecretPolicy,
};
use crate::records::{validate, Category, Record, Source, Status};
use crate::store::shown_path;
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

/// Whether a scope folder has records or an index to look in.
pub(super) fn has_store(dir: &ScopeDir) -> bool {
    dir.records_dir().exists() || dir.index_path().exists()
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
        let out = f(&mut store).map_err(|e| e.at(&dir.index_path()))?;
        // The written record's vector, when this index holds the
        // configured model's: hybrid recall finds it before the next
        // `recall index`. Best effort: the write has been made.
        if let Ok(conn) = db.writer() {
            self.embed_records(conn);
        }
        Ok(out)
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
        for r in &mut rows {
            r.path = shown_path(Path::new(&r.path))
                .to_string_lossy()
                .into_owned();
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
    /// record and its store. Not found is [`Error::NoRecord`].
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
        Err(self.not_found(dirs, id_or_key))
    }

    /// The error for a record none of `dirs` holds. A record file that
    /// does not parse (a hand edit gone wrong, a pull that conflicts) is
    /// left out of every read: when it is named after `id_or_key`, or its
    /// `id:` or `key:` line says it, its error says why, so `get` does not
    /// just say there is no such record.
    fn not_found(&self, dirs: &[ScopeDir], id_or_key: &str) -> Error {
        let limits = self.limits();
        let broken = dirs.iter().find_map(|d| {
            crate::records::broken_claimant(d, &limits, id_or_key, |_| false).map(|(_, e)| e)
        });
        match broken {
            Some(e) => Error::NotFound(format!(
                "record '{id_or_key}' is not read, its file is not a valid record: {e}; fix the file, or remove it"
            )),
            None => Error::NoRecord {
                id_or_key: id_or_key.to_string(),
                scope: None,
            },
        }
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
                return Ok(shown(loc));
            }
        }
        Err(self.not_found(dirs, id_or_key))
    }

    /// [`get`](Self::get) as an agent or the API is shown a record: a
    /// secret in a file written by hand redacted, as the index and every
    /// list and query hold it (a person reads the file itself with
    /// `recall record get`).
    pub fn get_redacted(&self, dirs: &[ScopeDir], id_or_key: &str) -> Result<Located> {
        let mut loc = self.get(dirs, id_or_key)?;
        screen_secrets(&mut loc.record, SecretPolicy::Redact)?;
        Ok(loc)
    }

    /// Create a record in `dir`, or update the one with its key. Input is
    /// validated before anything touches disk. Returns the record and
    /// whether it was created.
    pub fn upsert(&self, dir: &ScopeDir, new: NewRecord) -> Result<(Located, bool)> {
        let new = self.check_new(dir.scope, new)?;
        self.write_new(dir, new).map(|(l, c)| (shown(l), c))
    }

    /// [`upsert`](Self::upsert) into a scope that may not exist yet: the
    /// input is checked first, so bad input leaves nothing on disk, not
    /// even the scope's folder.
    pub fn upsert_in(&self, scope: Scope, new: NewRecord) -> Result<(Located, bool)> {
        let new = self.check_new(scope, new)?;
        self.write_new(&self.ensure_scope(scope)?, new)
            .map(|(l, c)| (shown(l), c))
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
            if !exists {
                // Its key in a file that does not parse: a new record
                // would be a second one with that key, and the first, once
                // mended, would be left out as its duplicate.
                if let Some((path, e)) = store.unreadable_holder(&new.key) {
                    return Err(Error::invalid(format!(
                        "the key '{}' is in {}, which is not a valid record ({e}): fix that file, or remove it, then write again",
                        new.key,
                        crate::store::shown_path(&path).display()
                    )));
                }
            }
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
        .map(shown)
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
        .map(|(l, c)| (shown(l), c))
    }

    /// Delete a record's file and index row; no byte of it stays behind.
    pub fn delete(&self, dirs: &[ScopeDir], id_or_key: &str) -> Result<Located> {
        self.with_record(dirs, id_or_key, |store, loc| {
            store.delete(&loc.record.meta.id)
        })
        .map(shown)
    }

    /// Move the record with this id or key to scope `to`, keeping its id,
    /// key, times and source. It is looked for in scope `from`, or, with
    /// `None`, in the project's records first and then the user's. The
    /// copy is written before the original is deleted: a failure between
    /// the two leaves the record in both scopes, never in neither. Refused
    /// when it is in `to` already, or when `to` holds a record with its key.
    pub fn move_record(&self, from: Option<Scope>, id_or_key: &str, to: Scope) -> Result<Located> {
        let from = self.get(&self.record_dirs(from)?, id_or_key)?;
        let record = from.record;
        if record.meta.scope == to {
            return Err(Error::invalid(format!(
                "record {} is in the {} scope already ({})",
                record.meta.id,
                to.as_str(),
                from.path.display()
            )));
        }
        let target = self.ensure_scope(to)?;
        let moved = self.with_store(&target, |store| {
            for taken in [&record.meta.key, &record.meta.id] {
                if let Some(other) = store.find(taken)? {
                    return Err(Error::invalid(format!(
                        "the {} scope has a record with the key or id '{taken}' already ({}): change the `key:` of one of them with `recall record edit {}` (or `recall record edit {}`), then move it again",
                        to.as_str(),
                        other.path.display(),
                        record.meta.id,
                        other.record.meta.id,
                    )));
                }
            }
            let mut r = record.clone();
            r.meta.scope = to;
            store.save(r, None, SecretPolicy::Refuse)
        })?;
        let source = self.scope_dir(record.meta.scope)?;
        self.with_store(&source, |store| store.delete(&record.meta.id))?;
        Ok(shown(moved))
    }

    /// The scope whose records hold `key` (the project's first), if any.
    fn scope_holding(&self, key: &str) -> Result<Option<Scope>> {
        for scope in [Scope::Project, Scope::User] {
            let dir = match self.scope_dir(scope) {
                Ok(d) => d,
                // No project here: only the user scope can hold it.
                Err(_) if scope == Scope::Project => continue,
                Err(e) => return Err(e),
            };
            match self.get(&[dir], key) {
                Ok(_) => return Ok(Some(scope)),
                Err(Error::NoRecord { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(None)
    }

    /// Store one fact an agent learned (see `memory/remember.rs`).
    pub fn remember(&self, dir: &ScopeDir, fact: &Fact) -> Result<(Located, bool)> {
        if let Some(i) = fact.importance {
            check_importance(i)?;
        }
        self.with_store(dir, |store| remember(store, fact, self.now))
            .map(|(l, c)| (shown(l), c))
    }

    /// [`remember`](Self::remember) a fact in `scope`, or where it belongs
    /// when no scope is given: a fact with a category is the project's; one
    /// without goes where the rules classify it (a preference is the
    /// user's, anything else the project's). The scope is created if it
    /// does not exist yet.
    ///
    /// A fact whose key a record already holds, in either scope, updates
    /// that record where it is: an update never files a second record under
    /// the same key in the other scope.
    pub fn remember_in(&self, scope: Option<Scope>, fact: &Fact) -> Result<(Located, bool)> {
        let held = match scope {
            Some(_) => None,
            None => {
                let key = fact
                    .key
                    .map_or_else(|| super::remember::agent_key(fact.text), str::to_string);
                self.scope_holding(&key)?
            }
        };
        let scope = scope.or(held).unwrap_or_else(|| match fact.category {
            Some(_) => Scope::Project,
            None => classify(fact.text).1,
        });
        let dir = self.ensure_scope(scope)?;
        self.remember(&dir, fact)
    }
}

/// A record as it is printed: its path where the file really is (see
/// [`shown_path`]). Only for what is returned: writes go through the path
/// the store found.
fn shown(mut loc: Located) -> Located {
    loc.path = shown_path(&loc.path);
    loc
}

#[cfg(test)]
#[path = "records_tests.rs"]
mod tests;
