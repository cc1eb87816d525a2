//! Candidate generation: one bm25-ranked FTS5 query per table. Its FTS
//! subquery has its own LIMIT, so SQLite keeps only the top rows instead of
//! sorting every match; the metadata filters run inside that subquery
//! (`recall::filter`). Snippets are left empty here: only the hits that
//! survive selection get one (`search::recall`).

use std::collections::HashSet;

use rusqlite::types::ToSql;
use rusqlite::{Connection, Row};

use super::filter::{self, Ranked};
use super::hit::{Explain, Hit, HitKind, HitSource};
use super::passage::{best_window, Block, Scorer};
use super::plan::{Plan, Table};
use super::request::Request;
use super::subject::user_wrote;
use super::tuning::Tuning;
use crate::error::Result;
use crate::ingest::transcript::TITLE_CAP;
use crate::store::ScopeDir;

/// A hit before fusion, with the signals ranking needs.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub hit: Hit,
    /// bm25 from FTS5, higher is better.
    pub bm25: f64,
    /// The Rust passage score of the returned text.
    pub passage: f64,
    /// Words of the text `passage` was computed on.
    pub words: usize,
    /// Times returned before, and when last (unix seconds).
    pub times_hit: i64,
    pub last_hit: Option<i64>,
    /// Where the row lives, for the salience update: which target, which
    /// table.
    pub target: usize,
    pub table: Table,
    pub rowid: i64,
    /// Session hits: the message indexes shown.
    pub range: Option<(i64, i64)>,
    /// Session hits: the matched message is the user's, in a chat whose
    /// speakers are unnamed (see `recall::subject`).
    pub by_user: bool,
    /// Session hits: the session is an agent's work on a task, one with
    /// tool output (`sessions.work`; see `rank::normalise_length` and
    /// `rank::session_coverage`).
    pub work: bool,
    /// A record's creation time: when its text was first written (its
    /// `updated` moves when it is pinned or reweighed too). `None` for
    /// session passages and tickets.
    pub created: Option<i64>,
}

#[cfg(test)]
impl Candidate {
    /// A candidate of `table` holding `hit`, with neutral scores: for the
    /// ranking tests.
    pub fn of(hit: Hit, table: Table) -> Candidate {
        Candidate {
            hit,
            bm25: 1.0,
            passage: 1.0,
            words: 10,
            times_hit: 0,
            last_hit: None,
            target: 0,
            table,
            rowid: 0,
            range: None,
            by_user: false,
            work: false,
            created: None,
        }
    }
}

/// Candidates fetched per table: enough for the limit, at least the tuned
/// number.
fn fetch(req: &Request) -> i64 {
    req.tuning.candidates.max(req.limit.saturating_mul(2)) as i64
}

/// Unix seconds as RFC 3339, as hits show times.
fn ts(secs: Option<i64>) -> Option<String> {
    secs.and_then(|s| jiff::Timestamp::from_second(s).ok())
        .map(|t| t.to_string())
}

fn weights(t: &Tuning, table: Table) -> String {
    let w: &[f64] = match table {
        Table::Records => &t.record_columns,
        Table::Chunks => &t.chunk_columns,
        Table::Tickets => &t.ticket_columns,
    };
    w.iter()
        .map(|x| format!("{x:.3}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Records of one scope.
#[tracing::instrument(level = "debug", name = "fetch_records", skip_all)]
pub fn records(
    c: &Connection,
    dir: &ScopeDir,
    plan: &Plan,
    scorer: &Scorer,
    req: &Request,
) -> Result<Vec<Candidate>> {
    let Some(expr) = plan.to_match() else {
        return Ok(vec![]);
    };
    let w = weights(&req.tuning, Table::Records);
    // Archived and expired records are few: every match is ranked (the
    // plan an unfiltered query always had) and they are dropped after the
    // limit. Only when that dropped some of a full list, or the request
    // names a category or a time, are records ranked with the filters
    // inside the limit.
    if req.category.is_none() && req.since.is_none() && req.until.is_none() {
        let (list, whole) = record_rows(c, dir, scorer, req, &expr, &filter::records_all(&w))?;
        if whole {
            return Ok(list);
        }
    }
    let inner = filter::records(&w, req);
    Ok(record_rows(c, dir, scorer, req, &expr, &inner)?.0)
}

/// The active, unexpired records among those `inner` ranks, and whether
/// they are the whole answer: none was dropped, or `inner` found fewer
/// rows than its limit.
fn record_rows(
    c: &Connection,
    dir: &ScopeDir,
    scorer: &Scorer,
    req: &Request,
    expr: &dyn ToSql,
    inner: &Ranked,
) -> Result<(Vec<Candidate>, bool)> {
    let sql = format!(
        "SELECT r.rowid, r.id, r.key, r.category, r.path, r.pinned, r.importance, r.updated, r.hits, r.last_hit, f.score, b.body,
                r.status, r.expires, r.created
         FROM ({}) f
         JOIN records r ON r.rowid = f.rowid
         JOIN records_fts b ON b.rowid = f.rowid",
        inner.sql
    );
    let limit = fetch(req);
    let now = req.now.as_second();
    let mut st = c.prepare_cached(&sql)?;
    let mut rows = st.query(&*inner.params(expr, &limit))?;
    let (mut out, mut seen) = (Vec::new(), 0i64);
    while let Some(r) = rows.next()? {
        seen += 1;
        let (status, expires): (String, Option<i64>) = (r.get(12)?, r.get(13)?);
        if status == "active" && expires.is_none_or(|e| e > now) {
            out.push(record(r, dir, scorer)?);
        }
    }
    let whole = out.len() as i64 == seen || seen < limit;
    Ok((out, whole))
}

/// One row of `record_rows` as a candidate.
pub(super) fn record(r: &Row, dir: &ScopeDir, scorer: &Scorer) -> rusqlite::Result<Candidate> {
    let rel: String = r.get(4)?;
    let key: String = r.get(2)?;
    let body: String = r.get(11)?;
    let updated: i64 = r.get(7)?;
    let (passage, words) = scorer.score_counted(&format!("{key}\n{body}"));
    Ok(Candidate {
        hit: Hit {
            rank: 0,
            score: 0.0,
            kind: HitKind::Record,
            scope: dir.scope,
            id: r.get(1)?,
            category: Some(r.get(3)?),
            snippet: String::new(),
            title: key,
            text: body,
            source: HitSource {
                path: Some(dir.root.join(rel).to_string_lossy().into_owned()),
                last_timestamp: ts(Some(updated)),
                ..HitSource::default()
            },
            pinned: r.get(5)?,
            importance: r.get(6)?,
            updated: Some(updated),
            explain: Some(Explain::default()),
            stale_by: None,
            cosine: None,
        },
        bm25: r.get(10)?,
        passage,
        words,
        times_hit: r.get(8)?,
        last_hit: r.get(9)?,
        target: 0,
        table: Table::Records,
        rowid: r.get(0)?,
        range: None,
        by_user: false,
        work: false,
        created: Some(r.get(14)?),
    })
}

/// Parse `[[start, end, msg, id, ts], ...]` (`ts` is absent in indexes
/// written before it was stored).
pub(super) fn blocks(json: &str) -> Vec<Block> {
    use serde_json::Value;
    let v: Vec<Vec<Value>> = serde_json::from_str(json).unwrap_or_default();
    v.iter()
        .filter_map(|a| {
            Some(Block {
                start: usize::try_from(a.first()?.as_u64()?).ok()?,
                end: usize::try_from(a.get(1)?.as_u64()?).ok()?,
                msg: a.get(2)?.as_i64()?,
                id: a.get(3).and_then(Value::as_str).map(str::to_owned),
                ts: a.get(4).and_then(Value::as_i64),
            })
        })
        .collect()
}

/// The title a session passage is shown under: what the session did, the
/// subjects of its commits (`sessions.did`), when it made any; else its
/// own title (its summary, or its first prompt). A compaction's transcript
/// (`<id>/agent-acompact-…`, a sub-agent that summarises its parent) opens
/// with the instruction to summarise, the same in every one: it is shown
/// under its parent session's title, as part of that session. Other
/// sub-agents keep their own, the task they were given.
pub(super) fn shown_title(
    session: &str,
    own: String,
    parent: Option<String>,
    did: Option<String>,
) -> String {
    if let Some(did) = did.filter(|d| !d.trim().is_empty()) {
        let subjects: Vec<&str> = did.lines().filter(|l| !l.trim().is_empty()).collect();
        return crate::ingest::values::title(&subjects.join("; "), TITLE_CAP);
    }
    match parent {
        Some(p) if session.contains("/agent-acompact-") => {
            crate::ingest::values::title(&p, TITLE_CAP)
        }
        _ if own.is_empty() => format!("session {session}"),
        _ => own,
    }
}

/// The columns that read what a session did (`sessions.did`, alias `ss`)
/// and its parent's title (alias `p`: what the parent did, else its
/// title). In an older index read as it is (see `SESSION_DID_SCHEMA`),
/// `NULL` and the parent's title.
pub(super) fn did_columns(c: &Connection) -> Result<(&'static str, &'static str)> {
    let current = crate::store::schema_version(c)? >= crate::store::SESSION_DID_SCHEMA;
    Ok(if current {
        (
            "ss.did",
            "coalesce(replace(p.did, char(10), '; '), p.title)",
        )
    } else {
        ("NULL", "p.title")
    })
}

/// Session chunks of one scope, each cut to its best window of messages.
#[tracing::instrument(level = "debug", name = "fetch_chunks", skip_all)]
pub fn chunks(
    c: &Connection,
    dir: &ScopeDir,
    plan: &Plan,
    scorer: &Scorer,
    req: &Request,
) -> Result<Vec<Candidate>> {
    let Some(expr) = plan.to_match() else {
        return Ok(vec![]);
    };
    let present = filter::excluded(c, req)?;
    let inner = filter::chunks(&weights(&req.tuning, Table::Chunks), req, present);
    // An older index read as it is (see `SESSION_WORK_SCHEMA`) has no
    // `sessions.work`: there, whether the passage is a tool's output, and
    // its session is work when one of its candidates is (below).
    let current = crate::store::schema_version(c)? >= crate::store::SESSION_WORK_SCHEMA;
    let work = if current {
        "ss.work"
    } else {
        r#"c.roles LIKE '%"tool"%'"#
    };
    let (did, parent) = did_columns(c)?;
    let sql = format!(
        "SELECT c.rowid, c.session_id, c.seq, c.spans,
                coalesce(c.first_ts, c.last_ts, ss.first_ts), coalesce(c.last_ts, c.first_ts, ss.first_ts),
                c.hits, c.last_hit, s.path, f.score, b.body, b.title, c.roles, c.speakers, {work},
                (SELECT {parent} FROM sessions p
                 WHERE p.session_id = ss.parent_id AND p.parent_id IS NULL AND p.title <> ''
                 LIMIT 1),
                {did}
         FROM ({}) f
         JOIN chunks c ON c.rowid = f.rowid
         JOIN chunks_fts b ON b.rowid = f.rowid
         JOIN sources s ON s.id = c.source_id
         LEFT JOIN sessions ss ON ss.source_id = c.source_id",
        inner.sql
    );
    let limit = fetch(req);
    let mut st = c.prepare_cached(&sql)?;
    let rows = st.query_map(&*inner.params(&expr, &limit), |r| {
        chunk(r, dir, scorer, req.tuning.window_chars)
    })?;
    let mut list: Vec<Candidate> = rows.collect::<rusqlite::Result<_>>()?;
    if !current {
        let work: HashSet<String> = list
            .iter()
            .filter(|c| c.work)
            .filter_map(|c| c.hit.source.session_id.clone())
            .collect();
        for c in &mut list {
            c.work = c
                .hit
                .source
                .session_id
                .as_ref()
                .is_some_and(|s| work.contains(s));
        }
    }
    Ok(list)
}

/// Ticket parts of one scope.
#[tracing::instrument(level = "debug", name = "fetch_tickets", skip_all)]
pub fn tickets(
    c: &Connection,
    dir: &ScopeDir,
    plan: &Plan,
    scorer: &Scorer,
    req: &Request,
) -> Result<Vec<Candidate>> {
    let Some(expr) = plan.to_match() else {
        return Ok(vec![]);
    };
    let inner = filter::tickets(&weights(&req.tuning, Table::Tickets), req);
    let sql = format!(
        "SELECT t.rowid, t.ticket_id, t.part, NULL, t.created, t.updated, t.hits, t.last_hit, s.path, f.score, b.body, b.title
         FROM ({}) f
         JOIN tickets t ON t.rowid = f.rowid
         JOIN tickets_fts b ON b.rowid = f.rowid
         JOIN sources s ON s.id = t.source_id",
        inner.sql
    );
    let limit = fetch(req);
    let mut st = c.prepare_cached(&sql)?;
    let rows = st.query_map(&*inner.params(&expr, &limit), |r| {
        ticket(r, dir, scorer, req.tuning.window_chars)
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// One row of `chunks`' query as a candidate, cut to its best window:
/// rowid, session id, seq, spans, first and last times, hits, last hit,
/// path, bm25 score, body, title, roles, speakers, work, parent's title,
/// what the session did.
pub(super) fn chunk(
    r: &Row,
    dir: &ScopeDir,
    scorer: &Scorer,
    window_chars: usize,
) -> rusqlite::Result<Candidate> {
    let spans: String = r.get(3)?;
    let body: String = r.get(10)?;
    let session: String = r.get(1)?;
    let title = shown_title(&session, r.get(11)?, r.get(15)?, r.get(16)?);
    let seq: i64 = r.get(2)?;
    let win = best_window(scorer, &body, &blocks(&spans), window_chars);
    let range = match (win.blocks.first(), win.blocks.last()) {
        (Some(a), Some(b)) => Some((a.msg, b.msg)),
        _ => None,
    };
    // The window's own times when the messages have them, else the
    // chunk's.
    let first_ts: Option<i64> = win.blocks.iter().find_map(|b| b.ts).or(r.get(4)?);
    let last_ts: Option<i64> = win.blocks.iter().rev().find_map(|b| b.ts).or(r.get(5)?);
    Ok(Candidate {
        hit: Hit {
            rank: 0,
            score: 0.0,
            kind: HitKind::Session,
            scope: dir.scope,
            id: format!("{session}#{seq}"),
            category: None,
            title,
            snippet: String::new(),
            text: win.text,
            source: HitSource {
                session_id: Some(session),
                message_ids: win.blocks.iter().filter_map(|b| b.id.clone()).collect(),
                message_range: range.map(|(a, b)| [a, b]),
                first_timestamp: ts(first_ts),
                last_timestamp: ts(last_ts),
                ..HitSource::at(r.get(8)?)
            },
            pinned: false,
            importance: 50,
            updated: last_ts.or(first_ts),
            explain: Some(Explain::default()),
            stale_by: None,
            cosine: None,
        },
        bm25: r.get(9)?,
        passage: win.score,
        words: win.words,
        times_hit: r.get(6)?,
        last_hit: r.get(7)?,
        target: 0,
        table: Table::Chunks,
        rowid: r.get(0)?,
        range,
        by_user: user_wrote(&r.get::<_, String>(12)?, &r.get::<_, String>(13)?),
        work: r.get::<_, Option<bool>>(14)?.unwrap_or(false),
        created: None,
    })
}

/// One row of `tickets`' query as a candidate: rowid, ticket id, part,
/// (unused), created, updated, hits, last hit, path, bm25 score, body,
/// title.
pub(super) fn ticket(
    r: &Row,
    dir: &ScopeDir,
    scorer: &Scorer,
    window_chars: usize,
) -> rusqlite::Result<Candidate> {
    let ticket: String = r.get(1)?;
    let part: i64 = r.get(2)?;
    let title: String = r.get(11)?;
    let body: String = r.get(10)?;
    let updated: Option<i64> = r.get(5)?;
    let created: Option<i64> = r.get(4)?;
    let (passage, words) = scorer.score_counted(&format!("{title}\n{body}"));
    let text = crate::text::truncate_chars(&body, window_chars * 2).to_string();
    Ok(Candidate {
        hit: Hit {
            rank: 0,
            score: 0.0,
            kind: HitKind::Ticket,
            scope: dir.scope,
            id: if part == 0 {
                ticket.clone()
            } else {
                format!("{ticket}#{part}")
            },
            category: None,
            snippet: String::new(),
            title,
            text,
            source: HitSource {
                ticket_id: Some(ticket),
                first_timestamp: ts(created),
                last_timestamp: ts(updated),
                ..HitSource::at(r.get(8)?)
            },
            pinned: false,
            importance: 50,
            updated: updated.or(created),
            explain: Some(Explain::default()),
            stale_by: None,
            cosine: None,
        },
        bm25: r.get(9)?,
        passage,
        words,
        times_hit: r.get(6)?,
        last_hit: r.get(7)?,
        target: 0,
        table: Table::Tickets,
        rowid: r.get(0)?,
        range: None,
        by_user: false,
        work: false,
        created: None,
    })
}

#[cfg(test)]
mod tests {
    use super::shown_title;

    /// Issue 39: a session is shown under what it did when it committed,
    /// else under its own title; a compaction under its parent's (what
    /// the parent did, as the query gives it, or its title).
    #[test]
    fn a_session_is_shown_under_what_it_did() {
        let s = |x: &str| Some(x.to_string());
        let template = "Work on bead x-1. Run bd show x-1 to see the issue details".to_string();
        assert_eq!(
            shown_title("s1", template.clone(), None, s("feat: a\nfix: b")),
            "feat: a; fix: b"
        );
        assert_eq!(shown_title("s1", template.clone(), None, None), template);
        assert_eq!(
            shown_title("s1", template.clone(), None, s(" \n")),
            template
        );
        assert_eq!(shown_title("s1", String::new(), None, None), "session s1");
        assert_eq!(
            shown_title(
                "s1/agent-acompact-9",
                "Your task is".into(),
                s("feat: a; fix: b"),
                None
            ),
            "feat: a; fix: b"
        );
        assert_eq!(
            shown_title("s1/agent-a1", "The sub-task".into(), s("feat: a"), None),
            "The sub-task"
        );
        let long = shown_title("s1", template, None, s(&"feat: word ".repeat(30)));
        assert!(long.chars().count() <= 81 && long.ends_with('…'), "{long}");
    }
}
