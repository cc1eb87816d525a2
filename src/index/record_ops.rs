//! The write path of a record: validate, refuse or redact secrets, take the
//! index's write lock, write the file atomically, then update the index row
//! in that same transaction.
//!
//! A write either happens whole or leaves nothing. Every wait (the write
//! lock behind a running `recall index`) comes before the file changes, so
//! a write that times out waiting has changed nothing; a failure after the
//! file changed puts the old file back before the error is returned. Only a
//! crash in between can leave a file without its row, and the file is the
//! truth: the next read or `recall reindex` indexes it.

use std::borrow::Cow;
use std::fs;
use std::path::PathBuf;

use jiff::Timestamp;
use rusqlite::{Connection, OptionalExtension, Transaction};

use super::records::{remove_record, truncate_wal, upsert_record};
use super::WriteGate;
use crate::error::{Error, Result};
use crate::records::{
    broken_claimant, parse_record_file, record_path, render_record, validate, Category, Limits,
    Record,
};
use crate::secrets;
use crate::store::{atomic_write, ScopeDir, Undo};

/// How to treat secrets found in a record's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecretPolicy {
    /// Refuse the write (the default).
    Refuse,
    /// Store `[REDACTED:<kind>]` in place of each secret.
    Redact,
}

/// Statements run with the hash a record file is about to have, committed
/// before the file changes ([`RecordStore::save_journaled`]).
pub type Journal<'j> = &'j dyn Fn(&Connection, &str) -> Result<()>;

/// A record as found in a scope: its parsed content and its file.
#[derive(Debug, Clone)]
pub struct Located {
    pub record: Record,
    pub path: PathBuf,
}

/// Record operations on one scope folder and its index connection.
pub struct RecordStore<'a> {
    pub dir: &'a ScopeDir,
    pub conn: &'a mut Connection,
    pub limits: Limits,
    /// Passed once the write holds its locks, before a file changes: a
    /// caller that gave up waiting stops the write there.
    pub gate: Option<&'a WriteGate>,
}

impl RecordStore<'_> {
    /// Find a record by id, then by key. Reads the file, so the result
    /// reflects hand edits.
    pub fn find(&self, id_or_key: &str) -> Result<Option<Located>> {
        find_record(self.conn, self.dir, &self.limits, id_or_key)
    }

    /// A record file with no index row that claims `key` (see
    /// [`claims`](crate::records::claims)) and does not parse, with why: a
    /// hand edit gone wrong. Only files without a row are read, so this
    /// costs a listing.
    pub fn unreadable_holder(&self, key: &str) -> Option<(PathBuf, Error)> {
        let indexed: std::collections::HashSet<String> = self
            .conn
            .prepare("SELECT path FROM records")
            .and_then(|mut st| st.query_map([], |r| r.get(0))?.collect())
            .ok()?;
        broken_claimant(self.dir, &self.limits, key, |p| {
            p.strip_prefix(&self.dir.root)
                .is_ok_and(|rel| indexed.contains(&*rel.to_string_lossy()))
        })
    }

    /// Like [`find`](Self::find) but a missing record is an error.
    pub fn get(&self, id_or_key: &str) -> Result<Located> {
        self.find(id_or_key)?.ok_or_else(|| Error::NoRecord {
            id_or_key: id_or_key.to_string(),
            scope: Some(self.dir.scope.to_string()),
        })
    }

    /// Validate, check secrets, write the file and index it. Returns where
    /// the record now lives. `previous` is the file it replaces, if any.
    pub fn save(
        &mut self,
        record: Record,
        previous: Option<&PathBuf>,
        policy: SecretPolicy,
    ) -> Result<Located> {
        self.write(record, previous, policy, None)
    }

    /// [`save`](Self::save), first running `journal` with the hash the file
    /// is about to have, in a transaction of its own that commits before
    /// the file changes. Sync notes there what a pull writes, so a crash
    /// after the file changed and before the pull noted it is not taken
    /// for an edit made on this host.
    pub fn save_journaled(
        &mut self,
        record: Record,
        previous: Option<&PathBuf>,
        policy: SecretPolicy,
        journal: Journal,
    ) -> Result<Located> {
        self.write(record, previous, policy, Some(journal))
    }

    fn write(
        &mut self,
        mut record: Record,
        previous: Option<&PathBuf>,
        policy: SecretPolicy,
        journal: Option<Journal>,
    ) -> Result<Located> {
        if journal.is_none() {
            // Not a pull: this host is where the record now comes from.
            record.written_here();
        }
        screen_secrets(&mut record, policy)?;
        validate(&record, &self.limits).map_err(|(_, e)| e)?;
        // Every command takes an id or a key, the id first: a key that is
        // another record's id would send each of them to that record.
        let holder: Option<String> = self
            .conn
            .prepare_cached("SELECT key FROM records WHERE id = ?1 AND id <> ?2")?
            .query_row([&record.meta.key, &record.meta.id], |r| r.get(0))
            .optional()?;
        if let Some(other) = holder {
            return Err(Error::invalid(format!(
                "the key '{}' is the id of the record '{other}', so a command given it would reach that record: choose another key",
                record.meta.key
            )));
        }
        let path = record_path(self.dir, record.meta.category, &record.meta.id);
        let text = render_record(&record)?;
        let moved = previous.filter(|p| **p != path);
        if let Some(note) = journal {
            // The same hash `upsert_record` computes from the file.
            let hash = blake3::hash(text.as_bytes()).to_hex().to_string();
            let tx = crate::store::begin_in_turn(self.conn)?;
            note(&tx, &hash)?;
            tx.commit()?;
            fail::fail_point!("record-journaled");
        }
        let tx = begin(self.conn, self.gate)?;
        let undo = Undo::before(
            &self.dir.undo_dir(),
            [path.as_path()]
                .into_iter()
                .chain(moved.map(PathBuf::as_path)),
        )?;
        let written = (|| {
            atomic_write(&path, text.as_bytes())?;
            if journal.is_some() {
                fail::fail_point!("record-file-written");
            }
            // A reclassified record moves: the new file exists before the
            // old one is removed, so a crash in between never loses it.
            if let Some(old) = moved {
                fs::remove_file(old).map_err(|e| Error::io("cannot remove", old, e))?;
                remove_record(&tx, self.dir, old)?;
            }
            upsert_record(&tx, self.dir, &record, &path)?;
            Ok(tx.commit()?)
        })();
        undo.unless(written)?;
        if moved.is_some() {
            // The old row's page images (its id and path) leave the WAL.
            truncate_wal(self.conn);
        }
        Ok(Located { record, path })
    }

    /// Add a record, or update the one that already has this key (upsert).
    /// An update keeps the category unless one is given; a new record
    /// without one is a decision. An archived record given new text by its
    /// key is active again: the fact was stated anew, and left archived it
    /// would never be recalled. Returns the record and whether it was
    /// created.
    pub fn upsert(
        &mut self,
        key: &str,
        category: Option<Category>,
        body: &str,
        edit: impl FnOnce(&mut Record),
        policy: SecretPolicy,
        now: Timestamp,
    ) -> Result<(Located, bool)> {
        let key = &*screen_key(key, policy)?;
        match self.find_by_key(key)? {
            Some(mut found) => {
                let before = found.record.clone();
                found.record.body = Record::clean_body(body);
                found.record.meta.status = crate::records::Status::Active;
                found.record.mark_edited_by_hand();
                if let Some(c) = category {
                    found.record.meta.category = c;
                }
                edit(&mut found.record);
                // The same fact stated again changes nothing: the file (a
                // committed one, perhaps) is left as it is, `updated` too.
                if found.record == before {
                    return Ok((found, false));
                }
                found.record.meta.updated = now;
                let loc = self.save(found.record, Some(&found.path), policy)?;
                Ok((loc, false))
            }
            None => {
                let mut r = Record::new(
                    key,
                    category.unwrap_or(Category::Decisions),
                    self.dir.scope,
                    crate::records::Source::Manual,
                    body,
                    now,
                );
                edit(&mut r);
                Ok((self.save(r, None, policy)?, true))
            }
        }
    }

    fn find_by_key(&self, key: &str) -> Result<Option<Located>> {
        let id: Option<String> = self
            .conn
            .query_row("SELECT id FROM records WHERE key=?1", [key], |r| r.get(0))
            .optional()?;
        match id {
            Some(id) => self.find(&id),
            None => Ok(None),
        }
    }

    /// Delete a record's file and row.
    pub fn delete(&mut self, id_or_key: &str) -> Result<Located> {
        let loc = self.get(id_or_key)?;
        let tx = begin(self.conn, self.gate)?;
        let undo = Undo::before(&self.dir.undo_dir(), [loc.path.as_path()])?;
        let removed = (|| {
            fs::remove_file(&loc.path).map_err(|e| Error::io("cannot remove", &loc.path, e))?;
            crate::store::sync_parent(&loc.path);
            remove_record(&tx, self.dir, &loc.path)?;
            Ok(tx.commit()?)
        })();
        undo.unless(removed)?;
        truncate_wal(self.conn);
        // Nor does a flat copy of the scope's vectors keep its vector.
        crate::store::flat_vectors::forget(self.dir);
        Ok(loc)
    }
}

/// The write transaction, begun before any file changes: waiting for the
/// lock is the only wait of a write, and the gate is passed once it is
/// held.
fn begin<'c>(conn: &'c mut Connection, gate: Option<&WriteGate>) -> Result<Transaction<'c>> {
    // Immediate whatever the connection's default: the lock is taken
    // here, before any file changes, not at the first write; in turn with
    // `recall index`, which begins again right after each commit.
    let tx = crate::store::begin_in_turn(conn)?;
    if let Some(g) = gate {
        g.pass()?;
    }
    Ok(tx)
}

/// A key given by a caller, screened before it is looked up or turned into
/// an id and a file name: refused when it holds a secret, or redacted under
/// [`SecretPolicy::Redact`].
pub fn screen_key(key: &str, policy: SecretPolicy) -> Result<Cow<'_, str>> {
    // "package manager " is the key "package manager": spaces at the ends
    // are never meant, and kept they make a second record of one fact.
    let (clean, found) = secrets::redact(key.trim());
    match found.first() {
        Some(first) if policy == SecretPolicy::Refuse => Err(refusal("key", first)),
        _ => Ok(clean),
    }
}

/// The error for a secret found in a record's `field`.
fn refusal(field: &str, first: &secrets::Finding) -> Error {
    Error::Secret {
        kind: first.kind.to_string(),
        location: format!(
            "{field}, {}",
            first.describe().split_once(" at ").map_or("", |x| x.1)
        ),
    }
}

/// Find a record by id, then by key, on any connection (a read-only one
/// too). Reads the file, so the result reflects hand edits.
pub fn find_record(
    conn: &Connection,
    dir: &ScopeDir,
    limits: &Limits,
    id_or_key: &str,
) -> Result<Option<Located>> {
    // Keys are stored trimmed (`record add --key " db "` is `db`), so they
    // are looked up so.
    let id_or_key = id_or_key.trim();
    // A write that moves the record (a new category is a new folder)
    // writes the new file, removes the old one, then commits the row: a
    // read in between finds the row's file gone. It is read again once
    // the row moved, for up to MOVED_WAIT.
    let mut waited = std::time::Duration::ZERO;
    loop {
        let rel: Option<String> = conn
            .query_row(
                "SELECT path FROM records WHERE id=?1 UNION ALL SELECT path FROM records WHERE key=?1 LIMIT 1",
                [id_or_key],
                |r| r.get(0),
            )
            .optional()?;
        let Some(rel) = rel else { return Ok(None) };
        // A hand-written file whose name holds a secret is stored redacted.
        let path = crate::secrets::find_path(&dir.root, &rel).unwrap_or_else(|| dir.root.join(rel));
        let text = match fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && waited < MOVED_WAIT => {
                std::thread::sleep(MOVED_STEP);
                waited += MOVED_STEP;
                continue;
            }
            Err(e) => return Err(Error::io("cannot read", &path, e)),
        };
        let record = parse_record_file(&text, &path, dir.scope, limits)?;
        return Ok(Some(Located { record, path }));
    }
}

/// How long [`find_record`] waits for a write that moved a record to
/// commit its row, and how often it looks.
const MOVED_WAIT: std::time::Duration = std::time::Duration::from_millis(500);
const MOVED_STEP: std::time::Duration = std::time::Duration::from_millis(10);

/// Refuse or redact secrets in the key, body, keywords and aliases. The id
/// and the origin's session and message ids are derived, never typed, so
/// one holding a secret (an old record, a file written by hand, an
/// extractor's evidence) gets a clean stand-in whatever the policy; a new
/// id moves the record's file on save.
pub fn screen_secrets(r: &mut Record, policy: SecretPolicy) -> Result<Vec<String>> {
    let mut kinds = screen_ids(r);
    let m = &mut r.meta;
    let mut fields: Vec<(String, &mut String)> =
        vec![("key".into(), &mut m.key), ("text".into(), &mut r.body)];
    for (i, k) in m.keywords.iter_mut().enumerate() {
        fields.push((format!("keyword {}", i + 1), k));
    }
    for (i, a) in m.aliases.iter_mut().enumerate() {
        fields.push((format!("alias {}", i + 1), a));
    }
    for (name, value) in fields {
        let (clean, found) = secrets::redact(value);
        let Some(first) = found.first() else { continue };
        if policy == SecretPolicy::Refuse {
            return Err(refusal(&name, first));
        }
        *value = clean.into_owned();
        kinds.extend(found.iter().map(|f| format!("{} in the {name}", f.kind)));
    }
    Ok(kinds)
}

/// Replace the record's id and origin ids that hold a secret; what was
/// replaced, as `<field> id`.
fn screen_ids(r: &mut Record) -> Vec<String> {
    let mut replaced = Vec::new();
    let mut screen = |id: &mut String, name: &str| {
        if let Cow::Owned(clean) = secrets::redact_id(id) {
            *id = clean;
            replaced.push(format!("a secret in the {name}"));
        }
    };
    screen(&mut r.meta.id, "id");
    if let Some(o) = r.meta.origin.as_mut() {
        if let Some(s) = o.session.as_mut() {
            screen(s, "origin session");
        }
        for m in &mut o.messages {
            screen(m, "origin message id");
        }
    }
    replaced
}

/// A row of `recall record list`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Listed {
    pub id: String,
    pub key: String,
    pub category: String,
    pub scope: crate::store::Scope,
    pub source: String,
    pub status: String,
    pub pinned: bool,
    pub importance: u8,
    pub updated: String,
    pub path: String,
    pub text: String,
    /// The teammate's host it was pulled from by `recall sync`, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// When it leaves recall (its frontmatter's `expires`), if ever.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires: Option<String>,
    /// Past its `expires`: recall leaves it out, whatever its `status`.
    pub expired: bool,
}

/// Filters of `recall record list`; `None` matches everything.
#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    pub category: Option<Category>,
    pub status: Option<crate::records::Status>,
    pub source: Option<crate::records::Source>,
}

impl RecordStore<'_> {
    /// Records of this scope: pinned first, then by importance, then most
    /// recently updated.
    pub fn list(&self, f: &ListFilter) -> Result<Vec<Listed>> {
        list_records(self.conn, self.dir, f)
    }
}

/// [`RecordStore::list`] on any connection (a read-only one too).
pub fn list_records(conn: &Connection, dir: &ScopeDir, f: &ListFilter) -> Result<Vec<Listed>> {
    let mut st = conn.prepare(
            "SELECT r.id, r.key, r.category, r.source, r.status, r.pinned, r.importance, r.updated, r.path, f.body, r.host,
                    r.expires
             FROM records r JOIN records_fts f ON f.rowid = r.rowid
             WHERE (?1 IS NULL OR r.category=?1) AND (?2 IS NULL OR r.status=?2) AND (?3 IS NULL OR r.source=?3)
             ORDER BY r.pinned DESC, r.importance DESC, r.updated DESC, r.key",
        )?;
    let now = Timestamp::now().as_second();
    let rows = st.query_map(
        rusqlite::params![
            f.category.map(|c| c.as_str()),
            f.status.map(|s| s.as_str()),
            f.source.map(|s| s.as_str())
        ],
        |r| {
            let updated: i64 = r.get(7)?;
            let rel: String = r.get(8)?;
            let expires: Option<i64> = r.get(11)?;
            Ok(Listed {
                id: r.get(0)?,
                key: r.get(1)?,
                category: r.get(2)?,
                scope: dir.scope,
                source: r.get(3)?,
                status: r.get(4)?,
                pinned: r.get(5)?,
                importance: r.get(6)?,
                updated: Timestamp::from_second(updated)
                    .map(|t| t.to_string())
                    .unwrap_or_default(),
                path: dir.root.join(rel).to_string_lossy().into_owned(),
                text: r.get(9)?,
                host: r.get(10)?,
                expires: expires
                    .and_then(|e| Timestamp::from_second(e).ok())
                    .map(|t| t.to_string()),
                expired: expires.is_some_and(|e| e <= now),
            })
        },
    )?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}
