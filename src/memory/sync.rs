//! Team memory through the façade: set up the remote, share a project,
//! sync every shared scope, and report status. The CLI, the hooks (through
//! a background `recall sync`) and `recall serve` all call these.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use super::Memory;
use crate::error::{Error, Result};
use crate::index::{sync_records, Progress};
use crate::store::{Db, OpenMode, Project, ScopeDir, Sharing};
use crate::sync::pgschema::Who;
use crate::sync::{self, identity, local, Me, RemoteUrl, ScopeReport, Target};

/// Options of one sync run.
#[derive(Debug, Clone, Default)]
pub struct SyncOptions {
    /// Only the current project (and not the user scope).
    pub only_current: bool,
    /// Pull only: for a read-only role (CI agents).
    pub pull_only: bool,
}

/// What `recall sync --init` found and did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncInit {
    /// The server's schema before and after.
    pub before: i32,
    pub after: i32,
    /// Whether this role may push (else it is read-only: pull only).
    pub can_push: bool,
}

/// What a sync run did, per scope.
#[derive(Debug, Clone, Serialize)]
pub struct SyncReport {
    /// The remote, without its password.
    pub remote: String,
    pub host: String,
    pub scopes: Vec<ScopeReport>,
    /// Scopes whose sync failed, each with its error: the others were
    /// synced all the same.
    pub failed: Vec<ScopeFailure>,
    /// Something to say once: why the user scope is not synced.
    pub note: Option<String>,
}

/// A scope a sync run could not sync.
#[derive(Debug, Clone, Serialize)]
pub struct ScopeFailure {
    /// Its name on the server (the team, or `user:<person>`).
    pub project: String,
    pub error: String,
}

impl SyncReport {
    /// Whether anything was withheld (not sent because it holds a secret).
    pub fn withheld(&self) -> bool {
        self.scopes
            .iter()
            .any(|s| !s.refused.is_empty() || !s.skipped.is_empty())
    }

    /// Whether the run finished with something a person must act on:
    /// items withheld, or another home syncing under this host's name.
    pub fn needs_attention(&self) -> bool {
        self.withheld() || self.scopes.iter().any(|s| s.shared_name.is_some())
    }
}

/// One line of `recall sync --status`.
#[derive(Debug, Clone, Serialize)]
pub struct SyncStatus {
    /// The local project name (or `user`).
    pub scope: String,
    /// The project's name on the server.
    pub team: String,
    pub remote: String,
    /// When this host last finished a sync of it (RFC 3339), if ever.
    pub last_sync: Option<String>,
    /// Changes this host has that the server lacks.
    pub pending: usize,
    /// What the server says; `None` with `error` set when unreachable.
    pub server: Option<sync::RemoteStatus>,
    pub error: Option<String>,
    pub sessions: bool,
    pub tickets: bool,
    /// Why this scope is not synced, when it is not.
    pub note: Option<String>,
    /// When a push last found another home pushing under this host's name
    /// (RFC 3339); cleared by a push that finds none.
    pub name_shared_seen: Option<String>,
}

/// A scope to sync: its folder and how it is shared.
struct Shared {
    label: String,
    dir: ScopeDir,
    target: String,
    sessions: bool,
    tickets: bool,
}

impl Memory {
    /// The configured remote, or how to set one.
    pub fn sync_remote(&self, env: &dyn Fn(&str) -> Option<String>) -> Result<RemoteUrl> {
        let Some(url) = self.config.sync.url.as_deref() else {
            return Err(Error::Sync(format!(
                "no sync remote is set; run `recall sync --init postgres://USER@HOST:PORT/DATABASE` once (or set [sync] url in {} or RECALL_SYNC_URL)",
                self.home.root().join("config.toml").display()
            )));
        };
        RemoteUrl::parse(url, env)
    }

    /// This host's id.
    pub fn host_id(&self) -> Result<String> {
        identity::host_id(&self.home, self.config.sync.host.as_deref())
    }

    fn timeout(&self) -> Duration {
        Duration::from_secs(self.config.sync.connect_timeout_secs.max(1))
    }

    /// `recall sync --init URL`: create or upgrade the server's schema and
    /// keep `url` as this home's remote. A role that may only read the
    /// tables (nothing to create when the schema is current) is set up
    /// too, to pull only.
    pub fn sync_init(&self, url: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<SyncInit> {
        let remote = RemoteUrl::parse(url, env)?;
        let mut client = remote.connect(self.timeout())?;
        let (before, after) = sync::pgschema::migrate(&mut client, &remote)?;
        let can_push = sync::pgschema::can_push(&mut client, &remote)?;
        self.home.ensure()?;
        crate::config::set_sync_url(&self.home.root().join("config.toml"), url.trim())?;
        Ok(SyncInit {
            before,
            after,
            can_push,
        })
    }

    /// Share the current project as `team` (default: its normalised
    /// `origin` remote). Returns how it is now shared.
    pub fn share(&self, team: Option<&str>, sessions: bool, tickets: bool) -> Result<Sharing> {
        self.ensure_scope(crate::store::Scope::Project)?;
        let mut project = self.project()?;
        let team = match team {
            Some(t) if t.trim().starts_with("user:") => {
                return Err(Error::invalid(format!(
                    "the team name '{}' starts with `user:`, which names a person's own scope on the server; name the project's team otherwise (for example acme/app)",
                    t.trim()
                )))
            }
            Some(t) => identity::check_name("the team name", t.trim())?.to_string(),
            None => project
                .info
                .root
                .as_deref()
                .and_then(identity::team_from_git)
                .or_else(|| project.info.sync.as_ref().map(|s| s.team.clone()))
                .ok_or_else(|| {
                    Error::invalid(format!(
                        "project '{}' has no git `origin` remote to name its team by; name it with --team NAME (the same on every host)",
                        project.info.name
                    ))
                })?,
        };
        let sharing = Sharing {
            team,
            sessions,
            tickets,
        };
        let mut info = project.info.clone();
        info.sync = Some(sharing.clone());
        project.save_info(info)?;
        Ok(sharing)
    }

    /// Stop sharing the current project (what the server has stays).
    pub fn unshare(&self) -> Result<Option<Sharing>> {
        let mut project = self.project()?;
        let was = project.info.sync.clone();
        if was.is_some() {
            let mut info = project.info.clone();
            info.sync = None;
            project.save_info(info)?;
        }
        Ok(was)
    }

    /// The shared projects a sync covers: every one of the home, or only
    /// the current one.
    fn shared_projects(&self, only_current: bool) -> Result<Vec<Shared>> {
        let mut out = Vec::new();
        let projects = if only_current {
            vec![self.project()?.info]
        } else {
            self.projects()?
        };
        for info in projects {
            let Some(s) = info.sync.clone() else { continue };
            out.push(Shared {
                label: info.name.clone(),
                dir: self.home.project(&info.id),
                target: s.team,
                sessions: s.sessions,
                tickets: s.tickets,
            });
        }
        Ok(out)
    }

    /// Whether any project of this home is shared.
    pub fn shares_a_project(&self) -> Result<bool> {
        Ok(!self.shared_projects(false)?.is_empty())
    }

    /// The user scope, shared as the person the server knows the login to
    /// be (never `$USER`: schema/pg/0005_people.sql).
    /// The person this home's user scope was last synced as, if ever.
    fn last_synced_person(&self) -> Result<Option<String>> {
        let dir = self.home.user();
        let Some(db) = self.open_for_read(&dir, false)? else {
            return Ok(None);
        };
        let bound = db.with_conn(local::bound_project)?;
        Ok(bound.and_then(|p| p.strip_prefix("user:").map(str::to_string)))
    }

    fn user_scope(&self, person: &str) -> Shared {
        Shared {
            label: "user".into(),
            dir: self.home.user(),
            target: identity::user_project(person),
            sessions: false,
            tickets: false,
        }
    }

    /// Why the user scope is not synced when no person is mapped to the
    /// login, said once per home and login (`<home>/sync-no-person` keeps
    /// the login it was said for); `None` when said before.
    fn no_person_once(&self, who: &Who, remote: &RemoteUrl) -> Result<Option<String>> {
        let marker = self.home.root().join("sync-no-person");
        if std::fs::read_to_string(&marker).is_ok_and(|l| l == who.login) {
            return Ok(None);
        }
        crate::store::atomic_write(&marker, who.login.as_bytes())?;
        Ok(Some(no_person(who, remote)))
    }

    /// Sync every shared scope: pull, then push. One sync per home runs at
    /// a time (`<home>/sync.lock`); with `wait` false, a sync already
    /// running makes this return `Ok(None)` at once.
    pub fn sync(
        &self,
        opts: &SyncOptions,
        wait: bool,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<SyncReport>> {
        let remote = self.sync_remote(env)?;
        let mut scopes = self.shared_projects(opts.only_current)?;
        let wants_user = !opts.only_current && self.config.sync.user_scope;
        if scopes.is_empty() && !wants_user {
            if opts.only_current {
                return Err(Error::Sync(
                    "this project is not shared; run `recall sync --share` here to share it (a plain `recall sync` syncs the shared ones)".into(),
                ));
            }
            return Err(nothing_shared(None));
        }
        let Some(_lock) = self.sync_lock(wait)? else {
            return Ok(None);
        };
        let host = self.host_id()?;
        let mut client = sync::connect(&remote, self.timeout())?;
        let who = sync::pgschema::who(&mut client, &remote)?;
        let mut note = None;
        if wants_user {
            match &who.person {
                Some(p) => {
                    scopes.push(self.user_scope(p));
                    let _ = std::fs::remove_file(self.home.root().join("sync-no-person"));
                }
                None => note = self.no_person_once(&who, &remote)?,
            }
        }
        if scopes.is_empty() {
            return Err(nothing_shared(Some(no_person(&who, &remote))));
        }
        let me = Me {
            host: &host,
            limits: self.limits(),
            now: self.now.as_second(),
        };
        let mut reports = Vec::new();
        let mut failed = Vec::new();
        for s in &scopes {
            // One scope's failure (a grant it lacks, a damaged index) is
            // that scope's: the others sync all the same.
            match self.sync_one(s, &mut client, &remote, &me, opts) {
                Ok(r) => reports.push(r),
                Err(e) => failed.push(ScopeFailure {
                    project: s.target.clone(),
                    error: e.to_string(),
                }),
            }
        }
        Ok(Some(SyncReport {
            remote: remote.masked().to_string(),
            host,
            scopes: reports,
            failed,
            note,
        }))
    }

    /// Sync one shared scope: its record files noted, then pulled and
    /// pushed.
    fn sync_one(
        &self,
        s: &Shared,
        client: &mut postgres::Client,
        remote: &sync::RemoteUrl,
        me: &Me,
        opts: &SyncOptions,
    ) -> Result<ScopeReport> {
        crate::store::create_private_dir(&s.dir.root)?;
        // One record sync over every file's stat, not only the folders'
        // (what `open_synced` checks): an edit in place, which keeps
        // the folder's mtime, must still be sent.
        let mut db = Db::open(&s.dir.index_path(), OpenMode::ReadWrite)?;
        let report = sync_records(
            db.writer()?,
            &s.dir,
            &self.limits(),
            false,
            &Progress::hidden(),
        )?;
        for e in &report.errors {
            tracing::warn!("skipped {e}");
        }
        let target = Target {
            dir: &s.dir,
            project: s.target.clone(),
            sessions: s.sessions,
            tickets: s.tickets,
        };
        sync::sync_scope(client, remote, db.writer()?, &target, me, opts.pull_only)
    }

    fn sync_lock(&self, wait: bool) -> Result<Option<std::fs::File>> {
        self.home.ensure()?;
        let path: PathBuf = self.home.root().join("sync.lock");
        let file = crate::store::private_file()
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| Error::io("cannot open", &path, e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) if wait => {
                // A sync that waits without a word looks hung; the holder
                // wrote its process id into the file.
                let holder = std::fs::read_to_string(&path).unwrap_or_default();
                let holder = holder.trim();
                tracing::warn!(
                    "waiting for another `recall sync` of this home to end ({} holds {})",
                    if holder.is_empty() {
                        "a process".to_string()
                    } else {
                        format!("process {holder}")
                    },
                    path.display()
                );
                file.lock()
                    .map_err(|e| Error::io("cannot lock", &path, e))?;
            }
            Err(std::fs::TryLockError::WouldBlock) => return Ok(None),
            Err(std::fs::TryLockError::Error(e)) => return Err(Error::io("cannot lock", &path, e)),
        }
        // Who holds it, for the next one to wait: best effort.
        let _ = file.set_len(0).and_then(|()| {
            std::io::Write::write_all(&mut &file, std::process::id().to_string().as_bytes())
        });
        Ok(Some(file))
    }

    /// `recall sync --status`: per shared scope, what waits to be pushed,
    /// the last sync, and (when the server answers) hosts and backlog.
    pub fn sync_status(&self, env: &dyn Fn(&str) -> Option<String>) -> Result<Vec<SyncStatus>> {
        let remote = self.sync_remote(env)?;
        let mut scopes = self.shared_projects(false)?;
        let host = self.host_id()?;
        let mut client = sync::connect(&remote, self.timeout());
        let who = match &mut client {
            Ok(c) if self.config.sync.user_scope => Some(sync::pgschema::who(c, &remote)?),
            _ => None,
        };
        let mut unsynced = None;
        match who.as_ref().map(|w| (w, w.person.as_deref())) {
            Some((_, Some(p))) => scopes.push(self.user_scope(p)),
            Some((w, None)) => unsynced = Some(no_person(w, &remote)),
            // The server does not answer: the person's scope is still
            // listed, as it was last synced, with what waits to be pushed.
            None if self.config.sync.user_scope && client.is_err() => {
                if let Some(person) = self.last_synced_person()? {
                    scopes.push(self.user_scope(&person));
                }
            }
            None => {}
        }
        let mut out = Vec::new();
        for s in scopes {
            let (pending, last, cursor, shared, mut mine) =
                match self.open_for_read(&s.dir, false)? {
                    Some(db) => db.with_conn(|c| {
                        let mut n = local::pending_records(c)?.len();
                        n += local::pending_sources(c, &host, s.sessions, s.tickets)?.len();
                        let shared = local::shared_name(c, &host)?;
                        let mine = local::former_names(c, &host)?;
                        Ok((n, local::last_sync(c)?, local::cursor(c)?, shared, mine))
                    })?,
                    None => (0, None, 0, None, Vec::new()),
                };
            let rfc3339 = |t: i64| jiff::Timestamp::from_second(t).ok().map(|t| t.to_string());
            let (server, error) = match &mut client {
                Ok(c) => {
                    mine.push(host.clone());
                    match sync::remote_status(c, &remote, &s.target, &mine, cursor, last.is_none())
                    {
                        Ok(st) => (Some(st), None),
                        Err(e) => (None, Some(e.to_string())),
                    }
                }
                Err(e) => (None, Some(e.to_string())),
            };
            out.push(SyncStatus {
                scope: s.label,
                team: s.target,
                remote: remote.masked().to_string(),
                last_sync: last.and_then(rfc3339),
                pending,
                server,
                error,
                sessions: s.sessions,
                tickets: s.tickets,
                note: None,
                name_shared_seen: shared.and_then(rfc3339),
            });
        }
        if let Some(why) = unsynced {
            out.push(SyncStatus {
                scope: "user".into(),
                team: String::new(),
                remote: remote.masked().to_string(),
                last_sync: None,
                pending: 0,
                server: None,
                error: None,
                sessions: false,
                tickets: false,
                note: Some(why),
                name_shared_seen: None,
            });
        }
        Ok(out)
    }
}

/// Why the user scope of a login no person is mapped to is not synced,
/// and how the owner maps one.
fn no_person(who: &Who, remote: &RemoteUrl) -> String {
    format!(
        "the user scope is not synced: no person is mapped to the login {} on {}; if it is a person's own login, the owner maps it once with INSERT INTO recall_people(login, person) VALUES ('{}', 'NAME'); if it is a shared one (the owner's, a reader's, CI's), set `[sync] user_scope = false` here (docs/team-memory.md)",
        who.login,
        remote.masked(),
        who.login
    )
}

fn nothing_shared(why_not_user: Option<String>) -> Error {
    let mut msg = "no project is shared yet; run `recall sync --share` in a project (its team is its git origin, or name it with --team NAME)".to_string();
    if let Some(why) = why_not_user {
        msg.push_str(", and ");
        msg.push_str(&why);
    }
    Error::Sync(msg)
}

/// Whether `project` is shared (used by front ends to decide whether a
/// background sync is worth starting).
pub fn is_shared(project: &Project) -> bool {
    project.info.sync.is_some()
}
