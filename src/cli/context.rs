//! Stage two of argument handling: resolve the home, project and
//! configuration, and open scopes' indexes.

use std::path::PathBuf;

use anyhow::{Context as _, Result};
use jiff::Timestamp;

use super::args::GlobalArgs;
use crate::config::Config;
use crate::index::{records_changed, sync_records, Progress};
use crate::records::Limits;
use crate::store::{resolve_home, Db, Home, OpenMode, Project, Scope, ScopeDir, SCHEMA_VERSION};

/// Everything a command needs, resolved once.
pub struct Ctx {
    pub home: Home,
    pub config: Config,
    pub project_name: Option<String>,
    pub cwd: PathBuf,
    pub now: Timestamp,
}

impl Ctx {
    /// Resolve flags, environment and config.
    pub fn new(g: &GlobalArgs) -> Result<Ctx> {
        let env = |k: &str| std::env::var(k).ok();
        let home = Home::new(resolve_home(g.home.clone(), env)?);
        let config = Config::load(&home.root().join("config.toml"), env)?;
        let cwd = match &g.cwd {
            Some(c) => c.clone(),
            None => std::env::current_dir().context("cannot read the current folder")?,
        };
        Ok(Ctx {
            home,
            config,
            project_name: g.project.clone(),
            cwd,
            now: Timestamp::now(),
        })
    }

    /// Record limits from the config.
    pub fn limits(&self) -> Limits {
        Limits {
            max_body_chars: self.config.records.max_body_chars,
        }
    }

    /// The current project.
    pub fn project(&self) -> Result<Project> {
        Ok(Project::resolve(
            &self.home,
            self.project_name.as_deref(),
            &self.cwd,
        )?)
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
        self.home.ensure().with_context(|| {
            format!(
                "cannot use {} as the recall home; fix its permissions or choose another with --home or RECALL_HOME",
                self.home.root().display()
            )
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
        let mut db = Db::open(&dir.index_path(), OpenMode::ReadWrite)?;
        let conn = db.writer()?;
        if records_changed(conn, dir)? {
            let report = sync_records(conn, dir, &self.limits(), false, &Progress::hidden())?;
            for e in &report.errors {
                tracing::warn!("skipped {e}");
            }
        }
        Ok(db)
    }
}

impl Ctx {
    /// Lower this process's CPU priority to `index.nice` (Unix), before
    /// any worker thread starts (they inherit it): a batch job then yields
    /// the CPU to the hooks and queries that an agent is waiting on. Best
    /// effort.
    pub fn be_nice(&self) {
        let nice = i32::from(self.config.index.nice);
        #[cfg(unix)]
        if nice > 0 {
            // SAFETY: setpriority has no memory effects; `0` is this process.
            let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) };
            if rc == 0 {
                tracing::debug!("batch job: running at nice {nice}");
            } else {
                tracing::debug!(
                    "setpriority({nice}) failed: {}",
                    std::io::Error::last_os_error()
                );
            }
        }
        #[cfg(not(unix))]
        let _ = nice;
    }

    /// Open a scope's index for reading: read-only, one connection, no pool
    /// and no migration. Records are re-synced first (the only write) when
    /// the stat check says their files changed. With `upgrade` (commands a
    /// person runs), an index from an older version is migrated once and
    /// the user told so; hooks pass `false` and read an old index as it is.
    /// `None` when the scope has no index yet.
    pub fn open_for_read(&self, dir: &ScopeDir, upgrade: bool) -> Result<Option<Db>> {
        let path = dir.index_path();
        if !path.exists() {
            return Ok(None);
        }
        let db = Db::open(&path, OpenMode::ReadOnly)?;
        let version = db.with_conn(|c| {
            Ok(c.pragma_query_value(None, "user_version", |r| r.get::<_, i64>(0))?)
        })?;
        let old = upgrade && version < SCHEMA_VERSION;
        let changed = dir.records_dir().exists() && db.with_conn(|c| records_changed(c, dir))?;
        if (old || changed) && db.is_immutable() {
            // A read-only home: answer from the index as it is.
            tracing::warn!(
                "{} is read-only: record files changed since it was indexed (or it needs an upgrade) are not seen until `recall reindex` runs where the home is writable",
                path.display()
            );
            return Ok(Some(db));
        }
        if changed && !old {
            // The read path's only write, and it never waits: with another
            // writer at work (an index job), answer from the index as it is
            // and let a later read (or the writer) sync the records.
            let synced = Db::try_writer(&path).and_then(|w| match w {
                Some(mut w) => {
                    let report =
                        sync_records(w.writer()?, dir, &self.limits(), false, &Progress::hidden())?;
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
                    tracing::debug!("records changed but the index is busy; read as it is")
                }
                Err(e) => return Err(e.into()),
            }
            return Ok(Some(db));
        }
        if old {
            drop(db);
            self.open_synced(dir)?;
            if old {
                eprintln!(
                    "recall: upgraded {} from schema {version} to {SCHEMA_VERSION}; run `recall index` again to re-read sessions as per-message passages",
                    path.display()
                );
            }
            return Ok(Some(Db::open(&path, OpenMode::ReadOnly)?));
        }
        Ok(Some(db))
    }
}

/// Parse a `--scope` value.
pub fn parse_scope(s: &str) -> Result<Scope> {
    Ok(s.parse::<Scope>()?)
}
