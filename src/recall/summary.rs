//! What a session starts with before any question: a scope's most
//! important records and its latest sessions, read straight from the
//! index (`Memory::session_start` reads them, `render::session_start`
//! writes them as Markdown).

use rusqlite::Connection;

use crate::error::Result;
use crate::store::Scope;

/// What one scope gives a session at its start.
#[derive(Debug, Clone, PartialEq)]
pub struct ScopeStart {
    pub scope: Scope,
    pub records: Vec<TopRecord>,
    /// Only the project scope lists its sessions.
    pub sessions: Vec<RecentSession>,
}

/// A scope's `records` top records and, for a project, its `sessions`
/// latest sessions.
pub fn scope_start(
    c: &Connection,
    scope: Scope,
    records: usize,
    sessions: usize,
    except: Option<&str>,
) -> Result<ScopeStart> {
    let sessions = match scope {
        Scope::Project => recent_sessions(c, sessions, except)?,
        Scope::User => Vec::new(),
    };
    Ok(ScopeStart {
        scope,
        records: top_records(c, records)?,
        sessions,
    })
}

/// A record as the start-of-session summary lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct TopRecord {
    pub key: String,
    pub category: String,
    pub body: String,
}

/// A session as the start-of-session summary lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecentSession {
    pub id: String,
    /// Empty when the session has no title.
    pub title: String,
    pub launcher: String,
    /// Unix seconds of its last message, when known.
    pub last_ts: Option<i64>,
}

/// The `limit` active, unexpired records that matter most: pinned first,
/// then by importance, then the most recently updated.
pub fn top_records(c: &Connection, limit: usize) -> Result<Vec<TopRecord>> {
    let mut st = c.prepare_cached(
        "SELECT r.key, r.category, f.body FROM records r JOIN records_fts f ON f.rowid = r.rowid
         WHERE r.status = 'active' AND (r.expires IS NULL OR r.expires > strftime('%s','now'))
         ORDER BY r.pinned DESC, r.importance DESC, r.updated DESC LIMIT ?1",
    )?;
    let rows = st.query_map([limit as i64], |r| {
        Ok(TopRecord {
            key: r.get(0)?,
            category: r.get(1)?,
            body: r.get(2)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The `limit` latest top-level sessions, newest first, one per session
/// id: two files can carry one session (a copy, a resumed transcript), and
/// the newest title and time win. A session is titled as its hits are:
/// by what it did, its commits' subjects, when it made any (see
/// `candidates::shown_title`), else by its own title; an index older
/// than `sessions.did`, read as it is, by its own title.
pub fn recent_sessions(
    c: &Connection,
    limit: usize,
    except: Option<&str>,
) -> Result<Vec<RecentSession>> {
    let current = crate::store::schema_version(c)? >= crate::store::SESSION_DID_SCHEMA;
    let title = if current {
        "coalesce(replace(did, char(10), '; '), title)"
    } else {
        "title"
    };
    let mut st = c.prepare_cached(&format!(
        "SELECT session_id, coalesce(title, ''), launcher, last_ts FROM (
             SELECT session_id, {title} AS title, launcher, last_ts,
                    row_number() OVER (PARTITION BY session_id
                                       ORDER BY coalesce(last_ts, first_ts, 0) DESC) AS n,
                    coalesce(last_ts, first_ts, 0) AS t
             FROM sessions WHERE parent_id IS NULL AND session_id IS NOT ?2)
         WHERE n = 1 ORDER BY t DESC LIMIT ?1"
    ))?;
    let rows = st.query_map(rusqlite::params![limit as i64, except], |r| {
        Ok(RecentSession {
            id: r.get(0)?,
            title: r.get(1)?,
            launcher: r.get(2)?,
            last_ts: r.get(3)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression (issue probe: "Recent sessions" listed a session twice
    /// when two files carried its id).
    #[test]
    fn r_a_session_in_two_files_is_listed_once() {
        let mut c = Connection::open_in_memory().unwrap();
        crate::store::migrate_for_tests(&mut c);
        c.execute_batch("PRAGMA foreign_keys=OFF;").unwrap();
        for (src, sid, title, last) in [
            (1, "s-1", "old copy", 100),
            (2, "s-1", "resumed", 200),
            (3, "s-2", "other", 150),
        ] {
            c.execute(
                "INSERT INTO sessions(source_id, session_id, title, launcher, last_ts)
                 VALUES(?1, ?2, ?3, 'claude-code', ?4)",
                rusqlite::params![src, sid, title, last],
            )
            .unwrap();
        }
        let got = recent_sessions(&c, 5, None).unwrap();
        let ids: Vec<&str> = got.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["s-1", "s-2"], "{got:?}");
        assert_eq!(got[0].title, "resumed");
        assert_eq!(got[0].last_ts, Some(200));
        assert_eq!(recent_sessions(&c, 1, None).unwrap().len(), 1);
        // Regression (review, stop 62): the session starting (compacted
        // or resumed, so already indexed) is not among its own past.
        let got = recent_sessions(&c, 5, Some("s-1")).unwrap();
        let ids: Vec<&str> = got.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["s-2"], "{got:?}");
    }

    /// Issue 39: a session that committed is listed under its commits'
    /// subjects, as its hits are.
    #[test]
    fn a_session_that_committed_is_listed_under_what_it_did() {
        let mut c = Connection::open_in_memory().unwrap();
        crate::store::migrate_for_tests(&mut c);
        c.execute_batch("PRAGMA foreign_keys=OFF;").unwrap();
        c.execute(
            "INSERT INTO sessions(source_id, session_id, title, launcher, last_ts, did)
             VALUES(1, 's-1', 'Work on bead x-1. Run bd show x-1', 'claude-code', 100, 'feat: a' || char(10) || 'fix: b')",
            [],
        )
        .unwrap();
        assert_eq!(
            recent_sessions(&c, 5, None).unwrap()[0].title,
            "feat: a; fix: b"
        );
    }
}
