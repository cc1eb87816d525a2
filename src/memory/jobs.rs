//! The write jobs of the façade: indexing sources into the project and
//! extracting records from its finished sessions.

use std::path::PathBuf;

use jiff::Timestamp;

use super::Memory;
use crate::error::{Error, Result};
use crate::extract::run::{self, Backlog, Extractor, Options, Report, Status};
use crate::index::{index_sources, IndexReport, RunOptions};
use crate::ingest::discover::Input;
use crate::ingest::{Format, Kind};
use crate::store::{Db, OpenMode, Scope};

/// The error of an extraction command in a project with no index.
fn nothing_indexed() -> Error {
    Error::NotFound("nothing indexed for this project yet: run `recall index` first".into())
}

/// What [`Memory::extract`] should do; the rest comes from the config.
#[derive(Debug, Clone)]
pub struct ExtractJob {
    /// Only this session (the idle rule does not apply).
    pub session: Option<String>,
    /// Only sessions active since this time (Unix seconds); replaces
    /// `extract.max_age_days`.
    pub since: Option<i64>,
    pub max_sessions: Option<usize>,
    pub idle_hours: Option<f64>,
    pub dry_run: bool,
    pub extractor: Extractor,
}

/// The result of [`Memory::extract`]: the report, and when nothing was due,
/// the backlog that says why.
#[derive(Debug)]
pub struct ExtractOutcome {
    pub report: Report,
    pub options: Options,
    pub nothing_due: Option<Backlog>,
}

impl Memory {
    /// Index `files` into the current project (created if needed). Each
    /// problem line is passed to `report_line` as it is found.
    /// Of `files`, those `index` would read (not indexed, or changed since),
    /// and how many are indexed as they are.
    pub fn not_yet_indexed(&self, files: Vec<PathBuf>) -> Result<(Vec<PathBuf>, usize)> {
        let dir = self.scope_dir(Scope::Project)?;
        let Some(db) = self.open_for_read(&dir, false)? else {
            return Ok((files, 0));
        };
        let stored = db.with_conn(crate::index::load_sources)?;
        let (done, todo): (Vec<PathBuf>, Vec<PathBuf>) = files
            .into_iter()
            .partition(|p| crate::index::indexed_as_it_is(&stored, p));
        Ok((todo, done.len()))
    }

    pub fn index(
        &self,
        files: &[Input],
        kind: Option<Kind>,
        format: Option<Format>,
        run: &RunOptions,
        report_line: &mut dyn FnMut(String),
    ) -> Result<IndexReport> {
        let dir = self.ensure_scope(Scope::Project)?;
        // Before anything is looked at: the files another run is indexing
        // are indexed once it ends, and found unchanged here.
        let stop = || run.stop.load(std::sync::atomic::Ordering::Relaxed);
        let _run = dir.lock_index(
            &mut |lock| {
                report_line(format!(
                    "waiting for another `recall index` of this project to end ({} is held); this run then does what is left",
                    lock.display()
                ))
            },
            &stop,
        )?;
        if stop() {
            // Stopped while it waited: nothing was looked at.
            return Ok(IndexReport {
                files: files.len(),
                interrupted: true,
                ..IndexReport::default()
            });
        }
        let path = dir.index_path();
        let mut db = Db::open(&path, OpenMode::ReadWrite)?;
        let opts = self.ingest_options(kind, format);
        let mut run = run.clone();
        if run.embedder.is_none() {
            if let Some((model, id)) = self.embedder(report_line) {
                let other = crate::index::note_semantic_model(db.writer()?, &id)
                    .map_err(|e| e.at(&path))?;
                if other {
                    report_line(
                        "the vectors were made by another model than `[semantic] model`: every passage and record is embedded again".into(),
                    );
                }
                run.embedder = Some(model);
            }
        }
        let report = index_sources(db.writer()?, files, &opts, &run, report_line)
            .map_err(|e| e.at(&path))?;
        // What the pipeline did not embed: records, pulled passages, and
        // rows an earlier run left without vectors.
        if let Some(model) = &run.embedder {
            let filled =
                crate::index::fill_vectors(db.writer()?, model).map_err(|e| e.at(&path))?;
            tracing::debug!(?filled, "vectors filled");
        }
        Ok(report)
    }

    /// The extraction options of `job` on top of the config.
    pub fn extract_options(&self, job: &ExtractJob) -> Options {
        let c = &self.config.extract;
        Options {
            session: job.session.clone(),
            since: job.since,
            max_sessions: job.max_sessions.unwrap_or(c.max_sessions),
            idle_secs: (job.idle_hours.unwrap_or(c.idle_hours) * 3600.0) as i64,
            max_age_secs: (c.max_age_days * 86_400.0) as i64,
            dry_run: job.dry_run,
            extractor: job.extractor.clone(),
            owner: format!("{}-{}", std::process::id(), self.now.as_nanosecond()),
            lease_secs: 600,
            now: self.now,
            started: Timestamp::now(),
            ingest: self.ingest_options(None, None),
            limits: self.limits(),
        }
    }

    /// Extract records from the project's due sessions (or one session).
    /// A dry run writes nothing, not even an empty user scope.
    pub fn extract(&self, job: &ExtractJob) -> Result<ExtractOutcome> {
        let pdir = self.project()?.dir;
        if !pdir.index_path().exists() {
            return Err(nothing_indexed());
        }
        let mut pdb = self.open_synced(&pdir)?;
        let options = self.extract_options(job);
        let udir = self.scope_dir(Scope::User)?;
        let mut udb = None;
        let mut empty = None;
        // A dry run must not create the user scope just to compare against
        // its (absent) records: an empty in-memory index stands in for it.
        let user = if job.dry_run && !udir.index_path().exists() && !udir.records_dir().exists() {
            empty.insert(crate::store::empty_in_memory()?)
        } else {
            self.ensure_scope(Scope::User)?;
            udb.insert(self.open_synced(&udir)?).writer()?
        };
        let mut scopes = run::Scopes {
            project: (&pdir, pdb.writer()?),
            user: (&udir, user),
        };
        if let Some(id) = &options.session {
            if !run::has_session(scopes.project.1, id)? {
                return Err(Error::NotFound(format!(
                    "no indexed session with id '{id}' in this project; `recall extract --status` lists them (index the transcript first with `recall index`)"
                )));
            }
        }
        let report = run::run(&mut scopes, &options).map_err(|e| e.at(&pdir.index_path()))?;
        let nothing_due = match report.sessions {
            0 => Some(run::backlog(scopes.project.1, &options)?),
            _ => None,
        };
        Ok(ExtractOutcome {
            report,
            options,
            nothing_due,
        })
    }
}

impl Memory {
    /// Every indexed session of the project and its extraction state
    /// (`recall extract --status`); sessions never tried are `pending`.
    pub fn extract_status(&self) -> Result<Vec<Status>> {
        let pdir = self.project()?.dir;
        if !pdir.index_path().exists() {
            return Err(nothing_indexed());
        }
        let mut rows = run::status(self.open_synced(&pdir)?.writer()?)?;
        // A pending session a plain `recall extract` would not take says
        // why, as a run that finds nothing due does.
        let c = &self.config.extract;
        let now = self.now.as_second();
        let idle = (c.idle_hours * 3600.0) as i64;
        let max_age = (c.max_age_days * 86_400.0) as i64;
        for r in rows
            .iter_mut()
            .filter(|r| r.state == "pending" && r.reason.is_none())
        {
            let Some(last) = r.last_active else { continue };
            r.reason = if last > now - idle {
                Some(format!(
                    "active in the last {} hours: due once idle that long",
                    c.idle_hours
                ))
            } else if last < now - max_age {
                Some(format!(
                    "older than {} days: `recall extract --session {}` or --since takes it",
                    c.max_age_days, r.session_id
                ))
            } else {
                None
            };
        }
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::discover::expand;
    use crate::memory::test_memory;

    #[test]
    fn status_before_any_index_says_to_index() {
        let tmp = tempfile::tempdir().unwrap();
        let got = test_memory(tmp.path()).extract_status();
        let said = |m: &str| m.ends_with("run `recall index` first");
        assert!(matches!(got, Err(Error::NotFound(m)) if said(&m)));
    }

    #[test]
    fn indexed_sessions_start_pending() -> Result<()> {
        let tmp = tempfile::tempdir().unwrap();
        let mem = test_memory(tmp.path());
        let sessions =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/demo/sessions");
        let files = expand(&[sessions])?;
        let run = RunOptions::default();
        mem.index(&files, Some(Kind::Session), None, &run, &mut |_| {})?;
        let rows = mem.extract_status()?;
        assert!(!rows.is_empty());
        assert!(
            rows.iter().all(|r| r.state == "pending" && r.facts == 0),
            "{rows:?}"
        );
        Ok(())
    }

    /// Regression: `--status` listed as plain `pending` a session that a
    /// plain `recall extract` would not take; it says why, as a run that
    /// finds nothing due does, and a due session says nothing more.
    #[test]
    fn a_pending_session_no_run_would_take_says_why() -> Result<()> {
        let tmp = tempfile::tempdir().unwrap();
        let mem = test_memory(tmp.path());
        let sessions =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/demo/sessions");
        let run = RunOptions::default();
        mem.index(
            &expand(&[sessions])?,
            Some(Kind::Session),
            None,
            &run,
            &mut |_| {},
        )?;
        let rows = mem.extract_status()?;
        let last = rows[0].last_active.expect("a session's time");
        let at = |secs: i64| mem.at(Timestamp::from_second(last + secs).unwrap());
        let reason = |m: &Memory| m.extract_status().unwrap()[0].reason.clone();
        let hours = 3600;
        let old = reason(&at(31 * 24 * hours)).unwrap_or_default();
        assert!(
            old.starts_with("older than 30 days: `recall extract --session ")
                && old.ends_with("` or --since takes it"),
            "{old}"
        );
        let active = reason(&at(hours)).unwrap_or_default();
        assert_eq!(
            active,
            "active in the last 12 hours: due once idle that long"
        );
        assert_eq!(reason(&at(13 * hours)), None);
        Ok(())
    }
}
