//! The application layer: one [`Memory`] opens a home and a project and
//! offers every operation a front end needs (records, recall, index,
//! extract). The CLI, the hooks, `recall serve` and `recall mcp` only
//! translate their protocol to these calls and back; none of them opens
//! SQLite itself.
//!
//! A `Memory` is cheap to clone. Its clock is the `now` it holds, injected
//! so ranking and timestamps are deterministic in tests; a long-running
//! front end takes a fresh one per request with [`Memory::at`], and reads
//! through pooled connections with [`Memory::with_read_pools`].

mod doctor;
mod hook_session;
mod jobs;
mod prompt;
mod record_writes;
mod records;
mod reindex;
mod remember;
mod repo_records;
mod search;
mod semantic;
mod session_start;
mod skills;
mod sync;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use jiff::Timestamp;

pub use crate::extract::run::Status as ExtractStatus;
pub use crate::store::shown_path;
pub use doctor::{Checkup, Finding, ScopeCheck, ScopeHealth};
pub use jobs::{ExtractJob, ExtractOutcome};
pub use prompt::PromptContext;
pub use record_writes::{NewRecord, Patch};
pub use records::ListOrder;
pub use reindex::Reindexed;
pub use remember::Fact;
pub(crate) use remember::{classify, scope_of};
pub use repo_records::{repo_records_dir, RecordsPlace};
pub use search::{parse_search_scope, Found, RecallOptions};
pub use skills::Promoted;
pub use sync::{is_shared, SyncInit, SyncOptions, SyncReport, SyncStatus};

use crate::config::Config;
use crate::error::{Error, Result};
use crate::index::{records_changed, sync_records, Progress, WriteGate};
use crate::ingest::chunk::ChunkOptions;
use crate::ingest::{Format, IngestOptions, Kind};
use crate::records::Limits;
use crate::store::{
    resolve_home, Db, Home, OpenMode, Project, ProjectInfo, ReadPools, Scope, ScopeDir,
    SCHEMA_VERSION,
};

/// A home, its configuration and the project commands default to.
#[derive(Debug, Clone)]
pub struct Memory {
    pub home: Home,
    pub config: Config,
    /// `--project` / `RECALL_PROJECT`: a project name or id.
    pub project_name: Option<String>,
    /// The folder whose git top-level is the project when no name is given.
    pub cwd: PathBuf,
    /// The time every operation of this `Memory` runs at.
    pub now: Timestamp,
    /// Passed by each record write before it changes a file (see
    /// [`WriteGate`]): a server that stops waiting for a request cancels
    /// it, so an abandoned write never happens later.
    pub gate: Option<Arc<WriteGate>>,
    /// Read-only connection pools shared by every clone, for a front end
    /// that answers many reads (see [`Memory::with_read_pools`]); `None`:
    /// each read opens the index itself.
    readers: Option<Arc<ReadPools>>,
}

impl Memory {
    /// Open the home `home` (or the one the environment names, see
    /// [`resolve_home`]) and load its `config.toml` with `RECALL_*`
    /// overrides read through `env`. Nothing is created on disk.
    pub fn open(
        home: Option<PathBuf>,
        project_name: Option<String>,
        cwd: PathBuf,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Memory> {
        let home = Home::new(resolve_home(home, &env)?);
        let config = Config::load(&home.root().join("config.toml"), &env)?;
        Ok(Memory {
            home,
            config,
            project_name,
            cwd,
            now: Timestamp::now(),
            gate: None,
            readers: None,
        })
    }

    /// The same memory, its reads borrowing read-only connections from
    /// pools that it and every clone share (one pool per index file, made
    /// on first use; see [`ReadPools`]) instead of opening the index per
    /// read. For `recall serve` and `recall mcp`; the one-shot paths open
    /// their one connection and start no pool threads.
    pub fn with_read_pools(&self) -> Memory {
        Memory {
            readers: Some(Arc::new(ReadPools::new())),
            ..self.clone()
        }
    }

    /// Whether this memory serves many requests in one process (it has
    /// [`Memory::with_read_pools`]): what it loads once, such as the
    /// embedding model, it keeps.
    pub(crate) fn is_resident(&self) -> bool {
        self.readers.is_some()
    }

    /// The same memory at another time (a server takes one per request).
    pub fn at(&self, now: Timestamp) -> Memory {
        Memory {
            now,
            ..self.clone()
        }
    }

    /// The same memory, its record writes passing `gate` (see
    /// [`WriteGate`]).
    pub fn with_gate(&self, gate: Arc<WriteGate>) -> Memory {
        Memory {
            gate: Some(gate),
            ..self.clone()
        }
    }

    /// The same memory with `name` as its project.
    pub fn with_project(&self, name: &str) -> Memory {
        Memory {
            project_name: Some(name.to_string()),
            ..self.clone()
        }
    }

    /// Record limits from the config.
    pub fn limits(&self) -> Limits {
        Limits {
            max_body_chars: self.config.records.max_body_chars,
        }
    }

    /// Ingest options from the config, with an optional forced kind and
    /// format.
    pub fn ingest_options(&self, kind: Option<Kind>, format: Option<Format>) -> IngestOptions {
        let c = &self.config.index;
        IngestOptions {
            chunk: ChunkOptions {
                target_words: c.chunk_words.max(20),
                max_words: c.chunk_words.max(20) * 2,
            },
            tool_output_cap: c.tool_output_cap,
            ticket_words: c.ticket_words.max(20),
            kind,
            format,
            ..IngestOptions::default()
        }
    }

    /// The current project (it may not exist on disk yet).
    pub fn project(&self) -> Result<Project> {
        let p = Project::resolve(&self.home, self.project_name.as_deref(), &self.cwd)?;
        repo_records::adopt(&p);
        Ok(p)
    }

    /// A project that already exists in this home, by name or id; a
    /// front end addressing projects by name must not create one by a typo.
    pub fn existing_project(&self, name_or_id: &str) -> Result<Project> {
        // A name or id is one path component: `/etc` or `../x` must not
        // reach outside the home's projects folder. The rule is the one a
        // new project's name follows.
        crate::store::check_name(name_or_id).map_err(|e| {
            Error::invalid(format!("{e}; the REST API lists them at GET /api/projects"))
        })?;
        let p = Project::resolve(&self.home, Some(name_or_id), &self.cwd)?;
        if !p.dir.root.join("project.json").exists() {
            return Err(Error::NotFound(format!(
                "no project '{name_or_id}' in the home {}; list them with `recall project list` (or GET /api/projects)",
                self.home.root().display()
            )));
        }
        Ok(p)
    }

    /// Every project of the home, sorted by name.
    pub fn projects(&self) -> Result<Vec<ProjectInfo>> {
        Project::list(&self.home)
    }

    /// `recall project move --from OLD`: the project whose folder was
    /// `from` becomes the current folder's (a clone moved or re-cloned);
    /// its sessions recorded in `from` stay its own. Returns it, and
    /// whether anything changed.
    pub fn move_project_here(&self, from: &Path) -> Result<(Project, bool)> {
        let here = crate::store::canonical_root(&self.cwd)?;
        // The old folder may be gone: compare it as given (made absolute)
        // and, when it still exists, resolved.
        let given = std::path::absolute(from).map_err(|e| Error::io("cannot resolve", from, e))?;
        let resolved = std::fs::canonicalize(from).unwrap_or_else(|_| given.clone());
        let old = self
            .projects()?
            .into_iter()
            .find(|p| {
                let was = |r: &Path| r == given || r == resolved;
                p.root.as_deref().is_some_and(was) || p.moved_from.iter().any(|r| was(r))
            })
            .ok_or_else(|| {
                Error::NotFound(format!(
                    "no project lived in {}; `recall project list` shows each project's folder",
                    from.display()
                ))
            })?;
        let mut project = self.existing_project(&old.id)?;
        if project.info.root.as_deref() == Some(here.as_path()) {
            return Ok((project, false));
        }
        project.move_to(&self.home, &here)?;
        Ok((project, true))
    }

    /// The folder of a scope (for the project scope, the current project).
    pub fn scope_dir(&self, scope: Scope) -> Result<ScopeDir> {
        Ok(match scope {
            Scope::User => self.home.user(),
            Scope::Project => self.project()?.dir,
        })
    }

    /// Make sure the home and, for the project scope, `project.json` exist.
    pub fn ensure_scope(&self, scope: Scope) -> Result<ScopeDir> {
        self.home.ensure().map_err(|e| {
            Error::invalid(format!(
                "cannot use {} as the recall home ({e}); fix its permissions or choose another with --home or RECALL_HOME",
                self.home.root().display()
            ))
        })?;
        if scope == Scope::Project {
            let p = self.project()?;
            p.ensure()?;
            return Ok(p.dir);
        }
        Ok(self.home.user())
    }

    /// Open a scope's index read-write, first syncing records when the cheap
    /// stat check says their files changed.
    pub fn open_synced(&self, dir: &ScopeDir) -> Result<Db> {
        let path = dir.index_path();
        let mut db = Db::open(&path, OpenMode::ReadWrite)?;
        let conn = db.writer()?;
        if records_changed(conn, dir)? {
            let report = sync_records(conn, dir, &self.limits(), false, &Progress::hidden())
                .map_err(|e| e.at(&path))?;
            for e in &report.errors {
                tracing::warn!("skipped {e}");
            }
        }
        Ok(db)
    }

    /// Open a scope's index for reading: read-only, one connection (borrowed
    /// from the pool with [`Memory::with_read_pools`]), no migration.
    /// Records are re-synced first (the only write) when
    /// the stat check says their files changed and no writer holds the lock.
    /// With `upgrade` (commands a person runs), an index from an older
    /// version is migrated once and the user told so on stderr; hooks pass
    /// `false` and read an old index as it is. `None` when the scope has no
    /// index yet, or an empty one.
    pub fn open_for_read(&self, dir: &ScopeDir, upgrade: bool) -> Result<Option<Db>> {
        let path = dir.index_path();
        if !path.exists() && !self.index_records(dir) {
            return Ok(None);
        }
        let mut db = self.open_read(&path)?;
        let version = |db: &Db| {
            db.with_conn(
                |c| Ok(c.pragma_query_value(None, "user_version", |r| r.get::<_, i64>(0))?),
            )
        };
        // A zero-length file (a crash or a full disk while it was created;
        // `Db::open` refuses a version 0 that holds tables) is an index
        // with nothing in it yet: a writer creates its tables.
        if version(&db)? == 0 {
            drop(db);
            if !self.index_records(dir) {
                return Ok(None);
            }
            db = self.open_read(&path)?;
        }
        let version = version(&db)?;
        let old = upgrade && version < SCHEMA_VERSION;
        let changed = dir.records_dir().exists() && db.with_conn(|c| records_changed(c, dir))?;
        if (old || changed) && db.is_immutable() {
            tracing::warn!(
                "{} cannot be written (a read-only folder or a full disk): record files changed since it was indexed (or an upgrade) are not seen until `recall reindex` runs where it can write",
                path.display()
            );
            return Ok(Some(db));
        }
        if old {
            drop(db);
            self.open_synced(dir)?;
            // Schema 4 also changed how sessions are cut into passages,
            // which only a new `index` run applies to old transcripts.
            let hint = if version < 4 {
                "; run `recall index` again to re-read sessions as per-message passages"
            } else {
                ""
            };
            tracing::warn!(
                "upgraded {} from schema {version} to {SCHEMA_VERSION}{hint}",
                path.display()
            );
            return Ok(Some(self.open_read(&path)?));
        }
        if changed {
            self.sync_if_idle(dir, &path);
        }
        Ok(Some(db))
    }

    /// The index is derived from the record files: a scope that has some
    /// and no index (a fresh clone of a repository that keeps its records,
    /// an index.db removed by hand or left empty by a crash) gets one now,
    /// as `recall reindex` would build it. Whether it has one now.
    fn index_records(&self, dir: &ScopeDir) -> bool {
        if !crate::index::has_record_files(dir) {
            return false;
        }
        match self.open_synced(dir) {
            Ok(_) => true,
            Err(e) => {
                tracing::warn!(
                    "{}: the record files are not indexed and cannot be now ({e}); run `recall reindex` where it can write",
                    crate::store::shown_path(&dir.records_dir()).display()
                );
                false
            }
        }
    }

    /// The index at `path`, read-only: pooled when this memory has pools.
    fn open_read(&self, path: &Path) -> Result<Db> {
        match &self.readers {
            Some(pools) => pools.open(path),
            None => Db::open(path, OpenMode::ReadOnly),
        }
    }

    /// Sync changed record files unless another writer (an index job) holds
    /// the lock: a read never waits for a writer; the next read or the
    /// writer itself picks the change up.
    /// Nor does a read fail because the sync cannot write (a full disk, a
    /// refused write): the index as it is still answers, with a warning.
    fn sync_if_idle(&self, dir: &ScopeDir, path: &Path) {
        let synced = Db::try_writer(path).and_then(|w| match w {
            Some(mut w) => {
                let report =
                    sync_records(w.writer()?, dir, &self.limits(), false, &Progress::hidden())
                        .map_err(|e| e.at(path))?;
                for e in &report.errors {
                    tracing::warn!("skipped {e}");
                }
                Ok(())
            }
            None => Ok(()),
        });
        match synced {
            Ok(()) => {}
            Err(e) if e.is_busy() => {
                tracing::debug!("records changed but the index is busy; read as it is");
            }
            Err(e) => tracing::warn!(
                "record files changed but the index was not updated ({e}); answering from the index as it is"
            ),
        }
    }

    /// The scope folders that exist among `dirs`, opened for reading. A
    /// scope with records but no index yet gets one (the records are the
    /// truth); otherwise nothing here writes to the database.
    pub fn open_scopes<'a>(&self, dirs: &'a [ScopeDir]) -> Result<Vec<(&'a ScopeDir, Db)>> {
        let mut dbs = Vec::new();
        for dir in dirs.iter().filter(|d| d.root.exists()) {
            let db = match self.open_for_read(dir, true)? {
                Some(db) => db,
                None if dir.records_dir().exists() => {
                    drop(self.open_synced(dir)?);
                    self.open_read(&dir.index_path())?
                }
                None => continue,
            };
            dbs.push((dir, db));
        }
        Ok(dbs)
    }
}

/// The memory façade tests run on: the home `<tmp>/home`, the project
/// `app`, the clock at Unix second 1,700,000,000.
#[cfg(test)]
pub(crate) fn test_memory(tmp: &Path) -> Memory {
    // A fresh home with no config and no environment always opens.
    Memory::open(
        Some(tmp.join("home")),
        Some("app".into()),
        tmp.into(),
        |_| None,
    )
    .unwrap()
    .at(Timestamp::from_second(1_700_000_000).unwrap())
}

/// [`test_memory`] with one project record (`use-pnpm`, a decision);
/// returns the record's file.
#[cfg(test)]
pub(crate) fn test_memory_with_record(tmp: &Path) -> (Memory, PathBuf) {
    let mem = test_memory(tmp);
    let new = NewRecord::decision("use-pnpm", "We use pnpm, not npm.");
    let file = mem.upsert_in(Scope::Project, new).unwrap().0.path;
    (mem, file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory(home: &Path) -> Memory {
        Memory::open(Some(home.to_path_buf()), None, home.to_path_buf(), |_| None).unwrap()
    }

    #[test]
    fn existing_project_refuses_an_unknown_name() -> Result<()> {
        let tmp = tempfile::tempdir().unwrap();
        let mem = memory(tmp.path());
        let err = mem.existing_project("nope").unwrap_err();
        assert!(matches!(err, Error::NotFound(_)), "{err}");
        mem.with_project("app").ensure_scope(Scope::Project)?;
        let p = mem.existing_project("app")?;
        assert_eq!(p.info.name, "app");
        assert_eq!(mem.existing_project(&p.info.id)?.info.id, p.info.id);
        Ok(())
    }

    /// Review finding: `/api/projects/%2Fetc/memories` read `/etc/project.json`.
    #[test]
    fn r_project_names_cannot_leave_the_home() {
        let tmp = tempfile::tempdir().unwrap();
        let mem = memory(tmp.path());
        for bad in ["/etc", "../x", "a/b", "..", "a\\b", ""] {
            let err = mem.existing_project(bad).unwrap_err();
            assert!(matches!(err, Error::Invalid(_)), "{bad}: {err}");
        }
    }

    /// The keys of the project's records, sorted.
    fn keys(mem: &Memory) -> Result<Vec<String>> {
        let dirs = [mem.scope_dir(Scope::Project)?];
        let rows = mem.list(
            &dirs,
            &crate::index::ListFilter::default(),
            ListOrder::Recent,
        )?;
        let mut keys: Vec<String> = rows.into_iter().map(|r| r.key).collect();
        keys.sort();
        Ok(keys)
    }

    /// A record file `late` in the project of `mem`, written as another
    /// tool would, without touching the index.
    fn drop_in_record(mem: &Memory, tmp: &Path) -> Result<()> {
        let other = test_memory(&tmp.join("elsewhere"));
        let new = NewRecord::decision("late", "The walrus port is 7411.");
        let file = other.upsert_in(Scope::Project, new)?.0.path;
        let dir = mem
            .scope_dir(Scope::Project)?
            .records_dir()
            .join("decisions");
        std::fs::copy(&file, dir.join(file.file_name().unwrap())).unwrap();
        Ok(())
    }

    /// [`test_memory_with_record`] and the same memory with reader pools,
    /// which has read the record twice (a pool made, a connection idle).
    fn pooled_memory(tmp: &Path) -> Result<(Memory, Memory)> {
        let (mem, _) = test_memory_with_record(tmp);
        let pooled = mem.with_read_pools();
        for _ in 0..2 {
            assert_eq!(keys(&pooled)?, ["use-pnpm"]);
        }
        Ok((mem, pooled))
    }

    /// `recall reindex --full` moves a damaged index aside and builds a new
    /// one from the files: a server's next read sees the new index, not the
    /// old file its pooled connection still holds open.
    #[test]
    fn r23_a_pooled_read_after_reindex_full_sees_the_new_index() -> Result<()> {
        let tmp = tempfile::tempdir().unwrap();
        let (mem, pooled) = pooled_memory(tmp.path())?;
        let dir = mem.scope_dir(Scope::Project)?;
        drop_in_record(&mem, tmp.path())?;
        // The header overwritten in place: the pooled connection's file.
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(dir.index_path())
            .unwrap();
        std::io::Write::write_all(&mut f, b"not an index at all").unwrap();
        drop(f);
        let done = mem.reindex(&dir, true, false)?;
        assert!(done.moved_aside.is_some(), "{done:?}");
        for _ in 0..2 {
            assert_eq!(keys(&pooled)?, ["late", "use-pnpm"]);
        }
        Ok(())
    }

    /// A pooled read answers while another connection holds the write lock
    /// (a handshake keeps it held until the read is done): from the index
    /// as it is, since the record file added meanwhile can only be synced
    /// by a writer. Once the lock is free, the next read syncs it.
    #[test]
    fn a_pooled_read_answers_while_a_writer_holds_the_lock_and_syncs_after() -> Result<()> {
        let tmp = tempfile::tempdir().unwrap();
        let (mem, pooled) = pooled_memory(tmp.path())?;
        drop_in_record(&mem, tmp.path())?;
        let index = mem.scope_dir(Scope::Project)?.index_path();
        let (locked_tx, locked_rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let writer = std::thread::spawn(move || -> Result<()> {
            let w = rusqlite::Connection::open(&index)?;
            w.execute_batch("BEGIN IMMEDIATE; UPDATE records SET importance = importance;")?;
            locked_tx.send(()).unwrap();
            // Held until the read is done; the deadline only ends a test
            // whose read never answers.
            let answered = done_rx.recv_timeout(std::time::Duration::from_secs(60));
            w.execute_batch("ROLLBACK")?;
            answered.map_err(|e| Error::invalid(format!("the read did not answer: {e}")))
        });
        locked_rx.recv().unwrap();
        let during = keys(&pooled);
        done_tx.send(()).unwrap();
        writer.join().unwrap()?;
        assert_eq!(during?, ["use-pnpm"], "the index as it is");
        assert_eq!(keys(&pooled)?, ["late", "use-pnpm"]);
        Ok(())
    }

    /// A record another process writes is in the next pooled read.
    #[test]
    fn a_pooled_read_sees_another_writers_record_at_once() -> Result<()> {
        let tmp = tempfile::tempdir().unwrap();
        let (mem, pooled) = pooled_memory(tmp.path())?;
        mem.upsert_in(Scope::Project, NewRecord::decision("db", "We use SQLite."))?;
        assert_eq!(keys(&pooled)?, ["db", "use-pnpm"]);
        Ok(())
    }

    #[test]
    fn at_changes_only_the_clock() {
        let tmp = tempfile::tempdir().unwrap();
        let mem = memory(tmp.path());
        let t = Timestamp::from_second(1_700_000_000).unwrap();
        let later = mem.at(t);
        assert_eq!(later.now, t);
        assert_eq!(later.home.root(), mem.home.root());
    }
}
