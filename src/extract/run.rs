//! The extract pipeline: choose finished sessions, claim each with a lease,
//! run an extractor, apply the guardrails and write auto records with their
//! provenance. Best effort per session: one failure is recorded and the run
//! goes on.

use std::path::PathBuf;
use std::time::Duration;

use jiff::Timestamp;
use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;

use super::command::{self, ExtractRequest, SessionInfo};
use super::guard::{
    self, auto_key, select_windows, worth_extracting, MAX_FACTS_PER_SESSION, MAX_INPUT_CHARS,
};
use super::rules::{self, Candidate};
use crate::dedupe::WordSet;
use crate::error::Result;
use crate::index::{RecordStore, SecretPolicy};
use crate::ingest::model::Message;
use crate::ingest::{parse_file, Format, IngestOptions};
use crate::records::{Category, Limits, Origin, Record, Source, Status as RecordStatus};
use crate::store::{Scope, ScopeDir};

/// Which extractor to run.
#[derive(Debug, Clone)]
pub enum Extractor {
    Builtin,
    Command {
        cmd: String,
        timeout: Duration,
    },
    /// A launcher's non-interactive mode (`claude -p`), prompted in
    /// `workdir` ([`super::model`]).
    Model {
        cmd: String,
        timeout: Duration,
        workdir: std::path::PathBuf,
    },
}

impl Extractor {
    fn name(&self) -> (&str, &str) {
        match self {
            Extractor::Builtin => (rules::EXTRACTOR_NAME, rules::EXTRACTOR_VERSION),
            Extractor::Command { .. } => ("command", "1"),
            Extractor::Model { .. } => ("model", "1"),
        }
    }
}

/// Options of one run.
#[derive(Debug, Clone)]
pub struct Options {
    pub session: Option<String>,
    pub since: Option<i64>,
    pub max_sessions: usize,
    pub idle_secs: i64,
    pub max_age_secs: i64,
    pub dry_run: bool,
    pub extractor: Extractor,
    /// Who holds the leases of this run.
    pub owner: String,
    pub lease_secs: i64,
    pub now: Timestamp,
    /// The wall clock when the run started: leases run from each claim,
    /// `now` plus the time since this.
    pub started: Timestamp,
    pub ingest: IngestOptions,
    pub limits: Limits,
}

/// What happened to one session.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub session_id: String,
    /// The transcript it was read from (redacted when its path holds a
    /// secret): two files can hold one session id (a launcher's capture
    /// of a session, twice).
    pub source: String,
    pub state: String,
    pub reason: Option<String>,
    /// `[scope] category key: text` of each record written (or, in a dry
    /// run, that would be written).
    pub kept: Vec<String>,
    /// Candidates dropped, with the guardrail that dropped them.
    pub dropped: Vec<String>,
}

/// What a run did.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Report {
    pub sessions: usize,
    pub done: usize,
    pub failed: usize,
    pub skipped: usize,
    pub records: usize,
    pub outcomes: Vec<Outcome>,
}

/// Times a session is tried before runs stop taking it (until it changes,
/// or `--session` names it).
pub const ATTEMPTS: i64 = 3;

/// Whether the source `s` (with its extraction row `x`, if any) still needs
/// extracting: never tried, changed since, or failed or interrupted (a
/// `pending` row whose run died) fewer than [`ATTEMPTS`] times, or at all
/// when `--session` names it. Used both to list due sessions and, again
/// under the write lock, to claim one, so a session another run finished
/// meanwhile is not processed twice.
fn needs_work(o: &Options) -> String {
    let retry = match o.session {
        Some(_) => String::new(),
        None => format!(" AND x.attempts < {ATTEMPTS}"),
    };
    format!(
        "(x.source_id IS NULL OR x.source_hash IS NOT s.hash
          OR (x.state IN ('failed', 'pending'){retry}))"
    )
}

/// The sessions extraction looks at, of the source `s` and its session
/// `se`: those with messages. A compaction's transcript is indexed with
/// none (its parent session holds the summary it wrote), so it is neither
/// due nor listed as `pending`; `--session` still takes it by its id.
const EXTRACTABLE: &str = "s.kind = 'session' AND se.messages > 0";

/// A session eligible for extraction.
#[derive(Debug, Clone)]
struct Due {
    source_id: i64,
    path: PathBuf,
    format: String,
    hash: String,
    session_id: String,
    title: Option<String>,
    launcher: String,
    cwd: Option<String>,
}

/// The two scopes records can go to.
pub struct Scopes<'a> {
    pub project: (&'a ScopeDir, &'a mut Connection),
    pub user: (&'a ScopeDir, &'a mut Connection),
}

fn due(c: &Connection, o: &Options) -> Result<Vec<Due>> {
    let now = o.now.as_second();
    let needs_work = needs_work(o);
    let sql = format!(
        "SELECT s.id, s.path, s.format, s.hash, se.session_id, se.title, se.launcher, se.cwd,
                x.lease_until, x.lease_owner
         FROM sources s JOIN sessions se ON se.source_id = s.id
         LEFT JOIN extractions x ON x.source_id = s.id
         WHERE (?1 IS NULL AND {EXTRACTABLE} OR s.kind = 'session' AND se.session_id = ?1)
           AND (?1 IS NOT NULL OR (coalesce(se.last_ts, s.mtime / 1000000000) <= ?2 - ?3
                                   AND (?5 IS NOT NULL
                                        OR coalesce(se.last_ts, s.mtime / 1000000000) >= ?2 - ?4)))
           AND (?5 IS NULL OR coalesce(se.last_ts, s.mtime / 1000000000) >= ?5)
           AND {needs_work}
         ORDER BY coalesce(se.last_ts, 0) DESC"
    );
    let mut st = c.prepare(&sql)?;
    let rows = st.query_map(
        params![o.session, now, o.idle_secs, o.max_age_secs, o.since,],
        |r| {
            let lease: (Option<i64>, Option<String>) = (r.get(8)?, r.get(9)?);
            let due = Due {
                source_id: r.get(0)?,
                path: PathBuf::from(r.get::<_, String>(1)?),
                format: r.get(2)?,
                hash: r.get(3)?,
                session_id: r.get(4)?,
                title: r.get(5)?,
                launcher: r.get(6)?,
                cwd: r.get(7)?,
            };
            Ok((due, lease))
        },
    )?;
    // A live lease of a run that still has a process keeps its session;
    // a killed run's lease does not (see `claim`).
    let mut out = Vec::new();
    for row in rows {
        let (d, (until, owner)) = row?;
        let held = until.is_some_and(|u| u >= now)
            && owner.is_some_and(|w| w != o.owner && owner_alive(&w));
        if !held {
            out.push(d);
        }
        if out.len() >= o.max_sessions {
            break;
        }
    }
    Ok(out)
}

/// Claim `d` for this run. `false` when another run holds a live lease.
/// The lease runs from the claim, not from the run's start (a run of many
/// sessions would otherwise claim its later ones already expired), and a
/// lease whose owner process is gone is free at once (issue 26 item 10).
fn claim(c: &mut Connection, d: &Due, o: &Options) -> Result<bool> {
    let now = claim_time(o);
    let tx = crate::store::begin_in_turn(c)?;
    let holder: Option<String> = tx
        .query_row(
            "SELECT lease_owner FROM extractions WHERE source_id=?1 AND lease_until >= ?2",
            params![d.source_id, now],
            |r| r.get(0),
        )
        .optional()?
        .flatten();
    if let Some(dead) = holder.filter(|h| *h != o.owner && !owner_alive(h)) {
        tracing::info!(
            "session {}: its lease holder {dead} is gone; taking it over",
            d.session_id
        );
        tx.execute(
            "UPDATE extractions SET lease_until=NULL WHERE source_id=?1 AND lease_owner=?2",
            params![d.source_id, dead],
        )?;
    }
    // Re-checked under the write lock: between `due` and now another run
    // may have leased this session, or finished it.
    let needs_work = needs_work(o);
    let free: Option<i64> = tx
        .query_row(
            &format!(
                "SELECT s.id FROM sources s LEFT JOIN extractions x ON x.source_id = s.id
                 WHERE s.id = ?1 AND s.hash = ?2
                   AND (x.lease_until IS NULL OR x.lease_until < ?3 OR x.lease_owner = ?4)
                   AND {needs_work}"
            ),
            params![d.source_id, d.hash, now, o.owner],
            |r| r.get(0),
        )
        .optional()?;
    if free.is_none() {
        return Ok(false);
    }
    tx.execute(
        "INSERT INTO extractions(source_id, session_id, state, lease_owner, lease_until, attempts, updated)
         VALUES(?1, ?2, 'pending', ?3, ?4, 1, ?5)
         ON CONFLICT(source_id) DO UPDATE SET state='pending', lease_owner=?3, lease_until=?4,
            attempts = attempts + 1, updated=?5",
        params![d.source_id, d.session_id, o.owner, now + o.lease_secs, now],
    )?;
    tx.commit()?;
    Ok(true)
}

/// The time a claim is made: the run's injected `now` plus the time the run
/// has taken so far.
fn claim_time(o: &Options) -> i64 {
    lease_start(o.now, o.started, Timestamp::now())
}

/// `now` moved on by the wall time from `started` to `wall` (never back).
fn lease_start(now: Timestamp, started: Timestamp, wall: Timestamp) -> i64 {
    now.as_second() + wall.as_second().saturating_sub(started.as_second()).max(0)
}

/// Whether the run that owns a lease (`<pid>-<nanos>`, see
/// `Memory::extract_options`) still has a process on this machine. An
/// owner of another form is taken as alive.
fn owner_alive(owner: &str) -> bool {
    let Some(pid) = owner
        .split_once('-')
        .and_then(|(p, _)| p.parse::<i32>().ok())
    else {
        return true;
    };
    #[cfg(unix)]
    {
        // SAFETY: signal 0 only checks that the process exists.
        let rc = unsafe { libc::kill(pid, 0) };
        rc == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

fn finish(
    c: &Connection,
    d: &Due,
    state: &str,
    reason: Option<&str>,
    facts: usize,
    now: i64,
) -> Result<()> {
    c.execute(
        "UPDATE extractions SET state=?2, reason=?3, facts=?4, source_hash=?5, lease_owner=NULL,
            lease_until=NULL, updated=?6, attempts = CASE WHEN ?2 = 'done' THEN 0 ELSE attempts END
         WHERE source_id=?1",
        params![d.source_id, state, reason, facts as i64, d.hash, now],
    )?;
    Ok(())
}

/// Texts of the most recent records of a scope, for near-duplicate checks.
fn recent_texts(c: &Connection, n: i64) -> Result<Vec<String>> {
    let mut st = c.prepare(
        "SELECT f.body FROM records r JOIN records_fts f ON f.rowid = r.rowid ORDER BY r.updated DESC LIMIT ?1",
    )?;
    let rows = st.query_map([n], |r| r.get(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Run extraction over the due sessions of the project in `scopes`.
/// Why sessions were not due, for a run that found nothing to do.
#[derive(Debug, Default, Clone, PartialEq, Serialize)]
pub struct Backlog {
    /// Indexed sessions.
    pub sessions: usize,
    /// Still active: newer than the idle time.
    pub active: usize,
    /// Older than `max_age` (and no `--since`).
    pub too_old: usize,
    /// Older than `--since`.
    pub before_since: usize,
    /// Extracted already (unchanged since).
    pub finished: usize,
    /// Failed [`ATTEMPTS`] times (unchanged since): runs no longer take
    /// them.
    pub gave_up: usize,
    /// Held by another run's lease.
    pub leased: usize,
}

/// Count why the indexed sessions are not due under `o`.
pub fn backlog(c: &Connection, o: &Options) -> Result<Backlog> {
    let now = o.now.as_second();
    let needs_work = needs_work(o);
    let sql = format!(
        "SELECT coalesce(se.last_ts, s.mtime / 1000000000), x.lease_until, {needs_work}, x.lease_owner,
                x.state = 'failed'
         FROM sources s JOIN sessions se ON se.source_id = s.id
         LEFT JOIN extractions x ON x.source_id = s.id
         WHERE {EXTRACTABLE}"
    );
    let mut b = Backlog::default();
    let mut st = c.prepare(&sql)?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        let (last, lease, needs): (i64, Option<i64>, bool) = (r.get(0)?, r.get(1)?, r.get(2)?);
        let owner: Option<String> = r.get(3)?;
        let failed: Option<bool> = r.get(4)?;
        b.sessions += 1;
        if !needs && failed == Some(true) {
            b.gave_up += 1;
        } else if !needs {
            b.finished += 1;
        } else if lease.is_some_and(|l| l >= now) && owner.is_some_and(|w| owner_alive(&w)) {
            b.leased += 1;
        } else if last > now - o.idle_secs {
            b.active += 1;
        } else if o.since.is_some_and(|s| last < s) {
            b.before_since += 1;
        } else if o.since.is_none() && last < now - o.max_age_secs {
            b.too_old += 1;
        }
    }
    Ok(b)
}

/// Whether the project's index holds a session with this id.
pub fn has_session(c: &Connection, id: &str) -> Result<bool> {
    Ok(c.query_row(
        "SELECT 1 FROM sessions WHERE session_id = ?1 LIMIT 1",
        [id],
        |_| Ok(()),
    )
    .optional()?
    .is_some())
}

#[tracing::instrument(level = "debug", name = "extract", skip_all)]
pub fn run(scopes: &mut Scopes, o: &Options) -> Result<Report> {
    let list = due(scopes.project.1, o)?;
    let mut report = Report::default();
    // What a dry run would have written so far: a real run's later
    // sessions find those records and drop their repeats, and so must its
    // preview's.
    let mut would_write = Vec::new();
    for d in list {
        if !o.dry_run && !claim(scopes.project.1, &d, o)? {
            continue;
        }
        report.sessions += 1;
        let outcome = process(scopes, &d, o, &mut would_write);
        // A reason is stored and shown by `extract --status`; it may quote
        // a file, a command or an extractor's output.
        let (state, reason, kept) = match &outcome {
            Ok(out) => (
                out.state.clone(),
                out.reason.as_deref().map(redacted),
                out.kept.len(),
            ),
            Err(e) => ("failed".to_string(), Some(redacted(&e.to_string())), 0),
        };
        if !o.dry_run {
            finish(
                scopes.project.1,
                &d,
                &state,
                reason.as_deref(),
                kept,
                o.now.as_second(),
            )?;
        }
        match state.as_str() {
            "done" => report.done += 1,
            "skipped" => report.skipped += 1,
            _ => report.failed += 1,
        }
        report.records += kept;
        report.outcomes.push(match outcome {
            Ok(out) => Outcome { reason, ..out },
            Err(_) => Outcome {
                session_id: d.session_id.clone(),
                source: shown_source(&d),
                state: "failed".into(),
                reason,
                kept: vec![],
                dropped: vec![],
            },
        });
    }
    Ok(report)
}

/// `text` with its secrets redacted.
fn redacted(text: &str) -> String {
    crate::secrets::redact(text).0.into_owned()
}

/// The path of `d`'s transcript as it may be shown.
fn shown_source(d: &Due) -> String {
    crate::secrets::redact_path(&d.path.to_string_lossy()).into_owned()
}

fn outcome(d: &Due, state: &str, reason: Option<String>) -> Outcome {
    Outcome {
        session_id: d.session_id.clone(),
        source: shown_source(d),
        state: state.into(),
        reason,
        kept: vec![],
        dropped: vec![],
    }
}

#[tracing::instrument(level = "debug", name = "extract_session", skip_all, fields(session = %d.session_id))]
fn process(
    scopes: &mut Scopes,
    d: &Due,
    o: &Options,
    would_write: &mut Vec<String>,
) -> Result<Outcome> {
    let Ok(format) = d.format.parse::<Format>() else {
        return Ok(outcome(
            d,
            "skipped",
            Some(format!("unknown format {}", d.format)),
        ));
    };
    // The stored path is redacted when it holds a secret: find the file.
    let file = crate::secrets::find_path(std::path::Path::new(""), &d.path.to_string_lossy());
    let parsed = match parse_file(file.as_ref().unwrap_or(&d.path), format, &o.ingest) {
        Ok(p) => p,
        Err(e) => {
            return Ok(outcome(
                d,
                "skipped",
                Some(format!("cannot read {}: {e}", d.path.display())),
            ))
        }
    };
    if parsed.messages.is_empty() {
        return Ok(outcome(d, "skipped", Some("no messages to extract".into())));
    }
    if !worth_extracting(&parsed.messages) {
        return Ok(outcome(
            d,
            "skipped",
            Some("transcript under 200 characters".into()),
        ));
    }
    let mut existing = recent_texts(scopes.project.1, 100)?;
    existing.extend(recent_texts(scopes.user.1, 100)?);
    existing.extend(would_write.iter().cloned());
    let facts = candidates(&o.extractor, d, &parsed.messages, &existing)?;
    let verdict = guard::apply(facts.candidates, &existing);
    let mut out = outcome(d, "done", None);
    out.dropped = facts.rejected;
    out.dropped.extend(
        verdict
            .dropped
            .iter()
            .map(|(c, why)| guard::dropped_line(c, why)),
    );
    // The cap counts the facts written: one a person's record of its key
    // keeps out leaves its place to the next.
    let mut written = 0;
    for c in verdict.kept {
        if written >= MAX_FACTS_PER_SESSION {
            out.dropped
                .push(guard::dropped_line(&c, &guard::over_the_limit()));
            continue;
        }
        let line = format!(
            "[{}] {} {}: {}",
            c.scope,
            c.category,
            auto_key(&c.key),
            c.text
        );
        match write(scopes, d, &c, o)? {
            Written::Yes(replaced) => {
                written += 1;
                if o.dry_run {
                    would_write.push(c.text.clone());
                }
                // The key's record held another fact: say which went.
                let line = match replaced {
                    Some(old) => format!(
                        "{line} (replaces: {})",
                        crate::text::truncate_chars(&old, 80)
                    ),
                    None => line,
                };
                out.kept.push(line)
            }
            Written::No(why) => out.dropped.push(guard::dropped_line(&c, &why)),
        }
    }
    Ok(out)
}

/// Candidates from the extractor. The builtin rules read the whole session
/// (they cost nothing); a command gets at most `MAX_INPUT_CHARS` of the most
/// informative windows, which bounds what a model-backed extractor spends.
fn candidates(
    x: &Extractor,
    d: &Due,
    messages: &[Message],
    existing: &[String],
) -> Result<command::Facts> {
    if let Extractor::Builtin = x {
        return Ok(command::Facts {
            candidates: rules::extract(messages),
            rejected: Vec::new(),
        });
    }
    let window = select_windows(messages, MAX_INPUT_CHARS);
    let transcript = window
        .iter()
        .map(|m| {
            format!(
                "{}: {}",
                m.name.as_deref().unwrap_or(m.role.as_str()),
                m.text
            )
        })
        .collect::<Vec<_>>()
        .join("\n\n");
    // What leaves the process is redacted as the index is: the transcript
    // is read again from its file, secrets and all, and a model command
    // sends it to a vendor that keeps its own log of the call.
    let transcript = crate::secrets::redact(&transcript).0;
    let title = d.title.as_deref().map(|t| crate::secrets::redact(t).0);
    let cwd = d.cwd.as_deref().map(|c| crate::secrets::redact_path(c));
    let req = ExtractRequest {
        version: 1,
        session: SessionInfo {
            id: &d.session_id,
            title: title.as_deref(),
            launcher: &d.launcher,
            cwd: cwd.as_deref(),
        },
        transcript: crate::text::truncate_chars(&transcript, MAX_INPUT_CHARS).to_string(),
        existing,
        categories: Category::ALL.iter().map(|c| c.as_str()).collect(),
        max_facts: MAX_FACTS_PER_SESSION,
    };
    match x {
        Extractor::Model {
            cmd,
            timeout,
            workdir,
        } => super::model::run(cmd, &req, *timeout, workdir),
        Extractor::Command { cmd, timeout } => command::run(cmd, &req, *timeout),
        Extractor::Builtin => Ok(command::Facts::default()),
    }
}

/// What [`write()`] did with a candidate.
enum Written {
    /// Written (or, dry, would be); with the text of the record of its key
    /// it replaced, when that was another fact.
    Yes(Option<String>),
    /// Not written, and why.
    No(String),
}

/// Write one kept candidate as an auto record. Manual records are never
/// overwritten.
fn write(scopes: &mut Scopes, d: &Due, c: &Candidate, o: &Options) -> Result<Written> {
    let (dir, conn) = match c.scope {
        Scope::Project => (scopes.project.0, &mut *scopes.project.1),
        Scope::User => (scopes.user.0, &mut *scopes.user.1),
    };
    let key = auto_key(&c.key);
    // One record change at a time per scope, across processes (see
    // `ScopeDir::lock_records`): an API or MCP write of this key waits.
    let _lock = dir.lock_records()?;
    let mut store = RecordStore {
        dir,
        conn,
        limits: o.limits,
        gate: None,
    };
    let existing = store.find(&key)?;
    if existing
        .as_ref()
        .is_some_and(|e| e.record.meta.source != Source::Auto)
    {
        return Ok(Written::No("a manual record has this key".into()));
    }
    let replaced = existing
        .as_ref()
        .map(|e| e.record.body.clone())
        .filter(|old| *old != Record::clean_body(&c.text));
    if o.dry_run {
        return Ok(Written::Yes(replaced));
    }
    let (name, version) = o.extractor.name();
    let origin = Origin {
        session: Some(d.session_id.clone()),
        messages: c.evidence.clone(),
        extractor: Some(name.to_string()),
        extractor_version: Some(version.to_string()),
        ..Origin::default()
    };
    let (mut record, previous) = match existing {
        Some(e) => (e.record, Some(e.path)),
        None => (
            Record::new(&key, c.category, c.scope, Source::Auto, &c.text, o.now),
            None,
        ),
    };
    if record.meta.status == RecordStatus::Archived {
        // A person archived this key's fact: a repeat of it stays archived
        // (the guard only saw the most recent records); another fact under
        // the key is news, and is recalled.
        let (old, new) = (WordSet::new(&record.body), WordSet::new(&c.text));
        if old.jaccard(&new) > guard::MAX_JACCARD {
            return Ok(Written::No("repeats an archived record".into()));
        }
        record.meta.status = RecordStatus::Active;
    }
    record.body = Record::clean_body(&c.text);
    record.meta.category = c.category;
    record.meta.updated = o.now;
    record.meta.confidence = c.confidence.clamp(0.0, 1.0);
    record.meta.origin = Some(origin);
    match store.save(record, previous.as_ref(), SecretPolicy::Refuse) {
        Ok(_) => Ok(Written::Yes(replaced)),
        Err(crate::Error::Secret { kind, .. }) => {
            Ok(Written::No(format!("contains a secret ({kind})")))
        }
        Err(crate::Error::Invalid(msg)) => Ok(Written::No(msg)),
        Err(e) => Err(e),
    }
}

/// One row of `recall extract --status`.
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    pub session_id: String,
    /// The transcript file: state is kept per file, and two files (copies,
    /// or a resumed session) can carry the same session id.
    pub path: String,
    pub state: String,
    pub reason: Option<String>,
    pub facts: i64,
    pub updated: Option<String>,
    /// When the session was last active (Unix seconds), as extraction
    /// judges it: its last message's time, else its file's.
    #[serde(skip)]
    pub last_active: Option<i64>,
}

/// Every session's extraction state; sessions never tried are `pending`.
pub fn status(c: &Connection) -> Result<Vec<Status>> {
    // A session tried by `--session` is listed with its outcome.
    let mut st = c.prepare(&format!(
        "SELECT se.session_id,
                CASE WHEN x.state = 'done' AND x.source_hash IS NOT s.hash THEN 'pending'
                     ELSE coalesce(x.state, 'pending') END,
                CASE WHEN x.state = 'done' AND x.source_hash IS NOT s.hash
                       THEN 'changed since it was extracted'
                     WHEN x.state = 'failed' AND x.source_hash IS s.hash AND x.attempts >= {ATTEMPTS}
                       THEN x.reason || '; tried {ATTEMPTS} times, no run takes it again until it changes or `recall extract --session ' || se.session_id || '` names it'
                     ELSE x.reason END,
                coalesce(x.facts, 0), x.updated, s.path,
                coalesce(se.last_ts, s.mtime / 1000000000)
         FROM sessions se JOIN sources s ON s.id = se.source_id
         LEFT JOIN extractions x ON x.source_id = s.id
         WHERE {EXTRACTABLE} OR x.source_id IS NOT NULL
         ORDER BY coalesce(x.updated, 0) DESC, se.session_id, s.path"
    ))?;
    let rows = st.query_map([], |r| {
        let updated: Option<i64> = r.get(4)?;
        Ok(Status {
            session_id: r.get(0)?,
            path: r.get(5)?,
            state: r.get(1)?,
            reason: r.get(2)?,
            facts: r.get(3)?,
            updated: updated
                .and_then(|u| Timestamp::from_second(u).ok())
                .map(|t| t.to_string()),
            last_active: r.get(6)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 26 item 10: every claim's lease ran from the run's start, so
    /// with 64 sessions at 60 s each the later claims were born expired.
    #[test]
    fn r26_a_lease_runs_from_its_claim() {
        let t = |s| Timestamp::from_second(s).unwrap();
        // A run injected at 1,000 that started (wall clock) at 5,000 and
        // claims at 5,900 has been running 900 s.
        assert_eq!(lease_start(t(1_000), t(5_000), t(5_900)), 1_900);
        // A wall clock that went back never moves a lease earlier.
        assert_eq!(lease_start(t(1_000), t(5_000), t(4_000)), 1_000);
    }

    #[test]
    fn an_owner_without_a_process_is_gone() {
        assert!(owner_alive(&format!("{}-1", std::process::id())));
        assert!(owner_alive("dead-run"), "not a pid: taken as alive");
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!owner_alive(&format!("{pid}-1")));
    }
}
