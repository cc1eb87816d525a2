//! Recall through the façade: a request built from what a front end was
//! asked, which scopes a query searches, the search itself, why nothing was
//! found, and the memory summary.

use std::path::PathBuf;

use super::Memory;
use crate::error::{Error, Result};
use crate::extract::summary::{render_summary, Section};
use crate::index::ListFilter;
use crate::recall::plan::table_docs;
use crate::recall::{recall, record_hits, HitKind, Request, Response, Target};
use crate::records::{Category, Status};
use crate::render::PROMPT_TOKENS;
use crate::store::{Scope, ScopeDir, Table};
use crate::when::{parse_until, parse_when};

/// A recall request as a front end states it, in plain values:
/// [`Memory::request`] fills in the defaults from the config and reads the
/// times, so the CLI, the hooks, `recall serve` and `recall mcp` build the
/// same request from the same options.
#[derive(Debug, Clone, Default)]
pub struct RecallOptions {
    /// Most hits to return; default the config's `recall.limit`.
    pub limit: Option<usize>,
    /// Only these kinds; empty means all.
    pub kinds: Vec<HitKind>,
    /// Only records of this category.
    pub category: Option<Category>,
    /// Only hits from this time on, as a person types it (`2026-11-01`,
    /// an RFC 3339 time, `7d`: see [`parse_when`]), relative to the
    /// memory's `now`.
    pub since: Option<String>,
    /// Only hits up to this time (the same forms as `since`).
    pub until: Option<String>,
    /// Only chunks of this session.
    pub session: Option<String>,
    /// Cap on the hits' summed text, in estimated tokens.
    pub max_tokens: Option<usize>,
    /// The hits are rendered as a prompt: without `max_tokens` the cap is
    /// the prompt's budget, [`PROMPT_TOKENS`].
    pub prompt: bool,
    /// Keep each hit's score breakdown.
    pub explain: bool,
    /// Hybrid recall (the model's nearest passages rescue what the words
    /// miss); `None`: the config's `[semantic] hybrid`.
    pub hybrid: Option<bool>,
}

/// The result of [`Memory::recall`].
#[derive(Debug)]
pub struct Found {
    pub response: Response,
    /// The project searched (its id).
    pub project: String,
    /// When there are no hits: what was searched, or why nothing fit, for
    /// a person to read (a mistyped home must not look like "no match").
    pub no_hits: Option<String>,
    /// Why hybrid recall, asked for, did not run or found nothing to
    /// compare (no model, a model that does not load, no vectors): the
    /// answer is then the words' alone. For stderr, never for the answer.
    pub note: Option<String>,
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

/// A query's scope as a person or a client names it: empty or `all`
/// means both scopes, else `project` or `user`.
pub fn parse_search_scope(s: &str) -> Result<Option<Scope>> {
    match s {
        "" | "all" => Ok(None),
        s => s.parse().map(Some).map_err(|_| {
            Error::invalid(format!(
                "unknown scope '{s}': expected project, user or all"
            ))
        }),
    }
}

/// A Unix time as RFC 3339, for messages.
fn show_time(secs: i64) -> String {
    jiff::Timestamp::from_second(secs).map_or_else(|_| secs.to_string(), |t| t.to_string())
}

impl Memory {
    /// The request `opts` describe for `text`, at this memory's `now`, with
    /// the config's tuning. Fails only on a time it cannot read.
    pub fn request(&self, text: impl Into<String>, opts: RecallOptions) -> Result<Request> {
        let when = |w: Option<String>| -> Result<Option<i64>> {
            Ok(w.map(|w| parse_when(&w, self.now))
                .transpose()?
                .map(|t| t.as_second()))
        };
        let limit = opts.limit.unwrap_or(self.config.recall.limit);
        let mut req = Request::new(text, limit, self.now);
        req.kinds = opts.kinds;
        req.category = opts.category;
        req.since = when(opts.since)?;
        req.until = opts
            .until
            .map(|w| parse_until(&w, self.now))
            .transpose()?
            .map(|t| t.as_second());
        if let (Some(since), Some(until)) = (req.since, req.until) {
            if since > until {
                return Err(Error::invalid(format!(
                    "the time range ends before it starts (since {}, until {}): nothing can match; swap them",
                    show_time(since),
                    show_time(until)
                )));
            }
        }
        req.session = opts.session;
        req.max_tokens = match opts.prompt {
            true => Some(opts.max_tokens.unwrap_or(PROMPT_TOKENS)),
            false => opts.max_tokens,
        };
        req.tuning = self.config.recall.tuning.clone();
        req.explain = opts.explain;
        req.hybrid = opts.hybrid.unwrap_or(self.config.semantic.hybrid);
        Ok(req)
    }

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
    ///
    /// With [`Request::hybrid`], the question is embedded by the configured
    /// model first (see [`Memory::dense_query`]); when that cannot be done
    /// the words answer alone and [`Found::note`] says why.
    pub fn recall(&self, req: &Request, scope: Option<Scope>) -> Result<Found> {
        let (dirs, project) = self.search_dirs(scope)?;
        let dbs = self.open_scopes(&dirs)?;
        let targets: Vec<Target> = dbs.iter().map(|(dir, db)| Target { dir, db }).collect();
        let (dense, mut note) = match req.hybrid && req.dense.is_none() {
            true => match self.dense_query(&req.query) {
                Ok(d) => (Some(d), None),
                Err(e) => (None, Some(format!("{e}; answered with words alone"))),
            },
            false => (None, None),
        };
        let with_dense;
        let req = match dense {
            Some(d) => {
                with_dense = Request {
                    dense: Some(d),
                    ..req.clone()
                };
                &with_dense
            }
            None => req,
        };
        let mut response = recall(&targets, req)?;
        if response.dense.is_some_and(|d| d.other_model > 0) {
            note = Some(
                "hybrid recall skipped vectors made by another model than `[semantic] model`: `recall index` embeds them again with this one; answered with words alone there".into(),
            );
        } else if response.dense.is_some_and(|d| d.scanned == 0) {
            note = Some(
                "hybrid recall found no vectors in the searched indexes: `recall index` embeds passages and records once `[semantic] model` is set; answered with words alone".into(),
            );
        }
        show_record_paths(&mut response);
        let no_hits = match response.hits.is_empty() {
            true => Some(self.explain_no_hits(req, &targets, &dirs, &project)?),
            false => None,
        };
        Ok(Found {
            response,
            project,
            no_hits,
            note,
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
        let mut response = recall(&targets, req)?;
        show_record_paths(&mut response);
        Ok(response)
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
        // No hits, as for any query (a script piping an empty ticket body
        // gets the empty answer it can handle), but not "memory holds
        // nothing".
        if req.query.trim().is_empty() {
            return Ok(
                "empty query: nothing to search for (pass TEXT, --query-file FILE, or the text on stdin)"
                    .into(),
            );
        }
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

    /// Write [`Memory::summary`] to the project's `MEMORY.md` (the project
    /// is created if needed); returns the file's path.
    pub fn write_summary(&self, max_tokens: usize) -> Result<std::path::PathBuf> {
        let text = self.summary(max_tokens)?;
        let path = self.project()?.dir.root.join("MEMORY.md");
        self.ensure_scope(Scope::Project)?;
        crate::store::atomic_write(&path, text.as_bytes())?;
        Ok(path)
    }
}

/// Record hits name their file where it really is: a project's records in
/// its repository under `.recall/records`, not through the home's link
/// (see [`crate::store::shown_path`]).
fn show_record_paths(resp: &mut Response) {
    for h in resp.hits.iter_mut().filter(|h| h.kind == HitKind::Record) {
        if let Some(p) = h.source.path.as_mut() {
            *p = crate::store::shown_path(std::path::Path::new(p))
                .to_string_lossy()
                .into_owned();
        }
    }
}

#[cfg(test)]
mod tests {
    use jiff::Timestamp;

    use super::*;

    /// Regression: an unknown search scope named project and user only,
    /// though `all` is one too.
    #[test]
    fn a_search_scope_is_project_user_or_all() {
        assert_eq!(parse_search_scope("all").unwrap(), None);
        assert_eq!(parse_search_scope("").unwrap(), None);
        assert_eq!(parse_search_scope("user").unwrap(), Some(Scope::User));
        let e = parse_search_scope("proj").unwrap_err().to_string();
        assert_eq!(e, "unknown scope 'proj': expected project, user or all");
    }

    fn memory(home: &std::path::Path) -> Memory {
        Memory::open(Some(home.to_path_buf()), None, home.to_path_buf(), |_| None)
            .unwrap()
            .at(Timestamp::from_second(1_700_000_000).unwrap())
    }

    #[test]
    fn a_request_takes_its_defaults_from_the_config() -> Result<()> {
        let tmp = tempfile::tempdir().unwrap();
        let mem = memory(tmp.path());
        let req = mem.request("deploy", RecallOptions::default())?;
        assert_eq!(req.limit, mem.config.recall.limit);
        assert_eq!(req.max_tokens, None);
        assert_eq!(req.now, mem.now);
        let opts = RecallOptions {
            prompt: true,
            ..RecallOptions::default()
        };
        assert_eq!(mem.request("deploy", opts)?.max_tokens, Some(PROMPT_TOKENS));
        let opts = RecallOptions {
            limit: Some(3),
            max_tokens: Some(500),
            prompt: true,
            ..RecallOptions::default()
        };
        let req = mem.request("deploy", opts)?;
        assert_eq!((req.limit, req.max_tokens), (3, Some(500)));
        Ok(())
    }

    #[test]
    fn a_request_reads_times_relative_to_now() -> Result<()> {
        let tmp = tempfile::tempdir().unwrap();
        let mem = memory(tmp.path());
        let opts = RecallOptions {
            since: Some("1d".into()),
            ..RecallOptions::default()
        };
        let req = mem.request("deploy", opts)?;
        assert_eq!(req.since, Some(mem.now.as_second() - 86_400));
        let opts = RecallOptions {
            until: Some("not a time".into()),
            ..RecallOptions::default()
        };
        assert!(matches!(
            mem.request("deploy", opts),
            Err(crate::Error::Invalid(_))
        ));
        // Regression: one day given as both bounds found nothing (its
        // `until` was its first second), and a range that ends before it
        // starts found nothing without a word.
        let range = |since: &str, until: &str| RecallOptions {
            since: Some(since.into()),
            until: Some(until.into()),
            ..RecallOptions::default()
        };
        let req = mem.request("deploy", range("2026-02-11", "2026-02-11"))?;
        assert_eq!(req.until.unwrap() - req.since.unwrap(), 86_399);
        let Err(crate::Error::Invalid(why)) =
            mem.request("deploy", range("2026-02-12", "2026-02-11"))
        else {
            panic!("a reversed range is refused");
        };
        assert!(why.contains("ends before it starts"), "{why}");
        Ok(())
    }

    #[test]
    fn the_summary_is_written_beside_the_project_index() -> Result<()> {
        let tmp = tempfile::tempdir().unwrap();
        let mem = memory(tmp.path()).with_project("app");
        let new = crate::memory::NewRecord::decision("pnpm", "We use pnpm.");
        mem.upsert_in(Scope::Project, new)?;
        let path = mem.write_summary(500)?;
        assert_eq!(path, mem.project()?.dir.root.join("MEMORY.md"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), mem.summary(500)?);
        Ok(())
    }

    #[test]
    fn a_search_scope_of_all_or_nothing_is_both() -> Result<()> {
        assert_eq!(parse_search_scope("")?, None);
        assert_eq!(parse_search_scope("all")?, None);
        assert_eq!(parse_search_scope("user")?, Some(Scope::User));
        assert!(parse_search_scope("everything").is_err());
        Ok(())
    }
}
