//! Recall through the façade: which scopes a query searches, the search
//! itself, why nothing was found, and the memory summary.

use std::path::PathBuf;

use super::Memory;
use crate::error::Result;
use crate::extract::summary::{render_summary, Section};
use crate::index::ListFilter;
use crate::recall::plan::table_docs;
use crate::recall::{recall, record_hits, Request, Response, Target};
use crate::records::Status;
use crate::store::{Scope, ScopeDir, Table};

/// The result of [`Memory::recall`].
#[derive(Debug)]
pub struct Found {
    pub response: Response,
    /// The project searched (its id).
    pub project: String,
    /// When there are no hits: what was searched, or why nothing fit, for
    /// a person to read (a mistyped home must not look like "no match").
    pub no_hits: Option<String>,
    /// The index of each searched scope, in the order of the hits' targets.
    indexes: Vec<PathBuf>,
}

impl Found {
    /// Note the returned hits in each scope's salience log (an append; the
    /// next write job folds it in). Call it after the answer is out.
    pub fn note_hits(&self, now: i64) {
        for (i, path) in self.indexes.iter().enumerate() {
            record_hits(path, &self.response.touched, i, now);
        }
    }
}

impl Memory {
    /// The scope folders a query searches: the current project's and the
    /// user's, or one of them.
    pub fn search_dirs(&self, scope: Option<Scope>) -> Result<(Vec<ScopeDir>, String)> {
        // The user scope alone needs no project (a server asked for it has
        // none); the project is then only named, when there is one.
        if scope == Some(Scope::User) {
            let project = self.project().map(|p| p.info.id).unwrap_or_default();
            return Ok((vec![self.home.user()], project));
        }
        let project = self.project()?;
        let dirs = match scope {
            None => vec![project.dir.clone(), self.home.user()],
            Some(Scope::Project) => vec![project.dir.clone()],
            Some(Scope::User) => vec![self.home.user()],
        };
        Ok((dirs, project.info.id))
    }

    /// Search the scopes `scope` selects (both by default) and merge the
    /// hits into one ranking. Reads only: see [`Memory::open_for_read`].
    pub fn recall(&self, req: &Request, scope: Option<Scope>) -> Result<Found> {
        let (dirs, project) = self.search_dirs(scope)?;
        let dbs = self.open_scopes(&dirs)?;
        let targets: Vec<Target> = dbs.iter().map(|(dir, db)| Target { dir, db }).collect();
        let response = recall(&targets, req)?;
        let no_hits = match response.hits.is_empty() {
            true => Some(self.explain_no_hits(req, &targets, &dirs, &project)?),
            false => None,
        };
        Ok(Found {
            response,
            project,
            no_hits,
            indexes: dbs.iter().map(|(d, _)| d.index_path()).collect(),
        })
    }

    /// Recall for a hook: the project's and the user's indexes read as they
    /// are (no migration, no index created, no salience note), so the hook
    /// path never writes and never waits.
    pub fn recall_for_hook(&self, req: &Request) -> Result<Response> {
        let mut open = Vec::new();
        for dir in [self.project()?.dir, self.home.user()] {
            if let Some(db) = self.open_for_read(&dir, false)? {
                open.push((dir, db));
            }
        }
        let targets: Vec<Target> = open.iter().map(|(dir, db)| Target { dir, db }).collect();
        recall(&targets, req)
    }

    /// Why a query found nothing: a budget too small for any hit, or what
    /// was searched, with counts.
    fn explain_no_hits(
        &self,
        req: &Request,
        targets: &[Target],
        dirs: &[ScopeDir],
        project: &str,
    ) -> Result<String> {
        if let Some(budget) = req.max_tokens {
            let mut free = req.clone();
            free.max_tokens = None;
            free.limit = 1;
            if let Some(best) = recall(targets, &free)?.hits.first() {
                return Ok(format!(
                    "nothing fits in {budget} tokens: the best hit needs about {} (its text), plus the prompt's header; raise --max-tokens",
                    crate::text::estimate_tokens(&best.text)
                ));
            }
        }
        let mut searched = Vec::new();
        for dir in dirs {
            let what = match targets.iter().find(|t| t.dir.root == dir.root) {
                Some(t) => {
                    let n = t.db.with_conn(|c| {
                        let mut n = [0i64; 3];
                        for (i, table) in Table::ALL.into_iter().enumerate() {
                            n[i] = table_docs(c, table)?;
                        }
                        Ok(n)
                    })?;
                    format!("{} records, {} passages, {} ticket parts", n[0], n[1], n[2])
                }
                None => "no index".to_string(),
            };
            searched.push(format!(
                "{} scope {} ({what})",
                dir.scope,
                dir.root.display()
            ));
        }
        Ok(format!(
            "no hits in home {} for project {project}; searched {}",
            self.home.root().display(),
            searched.join("; ")
        ))
    }

    /// The `MEMORY.md`-style summary of the project's records and the
    /// user's preferences, within `max_tokens`.
    pub fn summary(&self, max_tokens: usize) -> Result<String> {
        let project = self.project()?;
        let mut sections = Vec::new();
        for (scope, title) in [(Scope::Project, "Project"), (Scope::User, "Preferences")] {
            let dir = self.scope_dir(scope)?;
            let filter = ListFilter {
                status: Some(Status::Active),
                ..ListFilter::default()
            };
            if !super::records::has_store(&dir) {
                continue;
            }
            let records = self.list(&[dir], &filter, super::ListOrder::Recent)?;
            sections.push(Section { title, records });
        }
        Ok(render_summary(&project.info.name, &sections, max_tokens))
    }
}
