//! The metadata filters of a request (session, time, category, archived
//! and expired records) as SQL inside each table's bm25 subquery.
//!
//! That subquery has a LIMIT, so SQLite keeps only the best rows instead of
//! sorting every match. A filter applied after it keeps only the passing
//! part of the best rows of the whole index: on a large index, often
//! nothing, although matches exist (issue 26 item 13). So every filter runs
//! before the limit, and each in the form that is cheapest there:
//!
//! - a session: `+rowid IN (the session's rowids)`, a set read once from the
//!   `chunks_session` index. The `+` keeps the set out of the FTS table's
//!   constraints: as one, SQLite ran the whole MATCH once per rowid (3.9 s
//!   against 0.01 s on 10,000 records);
//! - the session a prompt is asked in: `+rowid NOT IN` its rowids, and
//!   those of passages quoting its id (see [`echo`]), each only when the
//!   index holds any (see [`excluded`]);
//! - times, categories, status: a `CROSS JOIN` to the metadata table,
//!   which keeps the FTS scan as the outer loop (one rowid look-up per
//!   match), with the session's times read only for chunks that have none.
//!
//! A query without filters gets the subquery it always had, with no join.
//! Every value is a bound parameter; the MATCH string is `:expr`, the limit
//! `:limit`.

use rusqlite::types::{ToSql, Value};

use super::request::Request;

/// One table's bm25 subquery (columns `rowid` and `score`, best first) and
/// the parameters its filters bind.
#[derive(Debug, Clone)]
pub struct Ranked {
    pub sql: String,
    args: Vec<(&'static str, Value)>,
}

impl Ranked {
    /// Every parameter of the subquery: the MATCH expression, the limit,
    /// then the filters' own.
    pub fn params<'a>(
        &'a self,
        expr: &'a dyn ToSql,
        limit: &'a dyn ToSql,
    ) -> Vec<(&'a str, &'a dyn ToSql)> {
        let mut all: Vec<(&str, &dyn ToSql)> = vec![(":expr", expr), (":limit", limit)];
        all.extend(self.args.iter().map(|(k, v)| (*k, v as &dyn ToSql)));
        all
    }
}

/// The subquery of `fts` with `join` (tables joined after it, or empty)
/// and `conds` (SQL conditions, all of which must hold).
fn ranked(fts: &str, w: &str, join: &str, conds: &[&str]) -> String {
    let join = if join.is_empty() {
        String::new()
    } else {
        format!(" CROSS JOIN {join}")
    };
    let cond: String = conds.iter().map(|c| format!(" AND {c}")).collect();
    format!(
        "SELECT {fts}.rowid AS rowid, -bm25({fts}, {w}) AS score FROM {fts}{join}
         WHERE {fts} MATCH :expr{cond} ORDER BY bm25({fts}, {w}) LIMIT :limit"
    )
}

fn opt(v: Option<i64>) -> Value {
    v.map_or(Value::Null, Value::Integer)
}

/// Records, every match ranked: archived and expired ones are dropped by
/// the caller after the limit (see `candidates::records`).
pub fn records_all(w: &str) -> Ranked {
    Ranked {
        sql: ranked("records_fts", w, "", &[]),
        args: vec![],
    }
}

/// Records that are active, unexpired at `req.now`, and of the request's
/// category and time span.
pub fn records(w: &str, req: &Request) -> Ranked {
    let conds = [
        "m.status = 'active' AND (m.expires IS NULL OR m.expires > :now)",
        "(:category IS NULL OR m.category = :category)",
        "(:since IS NULL OR m.updated >= :since) AND (:until IS NULL OR m.updated <= :until)",
    ];
    let category = req
        .category
        .map_or(Value::Null, |c| Value::Text(c.as_str().into()));
    Ranked {
        sql: ranked(
            "records_fts",
            w,
            "records m ON m.rowid = records_fts.rowid",
            &conds,
        ),
        args: vec![
            (":now", Value::Integer(req.now.as_second())),
            (":category", category),
            (":since", opt(req.since)),
            (":until", opt(req.until)),
        ],
    }
}

/// Which of the excluded session's passages an index holds (see
/// [`Request::exclude_session`]): its own and its subagents', and other
/// sessions' passages that quote its id (see [`echo`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Excluded {
    pub session: bool,
    pub echo: bool,
}

/// The passages of the session being excluded: its own and its
/// subagents' (`<id>/agent-…`).
macro_rules! excluded_session {
    () => {
        "SELECT rowid FROM chunks WHERE session_id = :exclude
           OR (session_id >= :exclude_sub AND session_id < :exclude_end)"
    };
}

/// Passages that quote the excluded session's id.
macro_rules! excluded_echo {
    () => {
        "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH :echo"
    };
}

fn excluded_args(s: &str) -> [(&'static str, Value); 3] {
    [
        (":exclude", Value::Text(s.to_string())),
        (":exclude_sub", Value::Text(format!("{s}/agent-"))),
        (":exclude_end", Value::Text(format!("{s}/agent."))),
    ]
}

/// What of the request's excluded session `conn`'s index holds. On a
/// session's first prompt nothing of it is indexed yet and nothing quotes
/// its new id: then there is nothing to leave out, and the passages'
/// ranked scan is spared a set lookup for every passage it matches (12.7M
/// of the hook's 182M instructions on a 2,500-character ticket at
/// 1,000,000 passages).
pub fn excluded(conn: &rusqlite::Connection, req: &Request) -> crate::error::Result<Excluded> {
    let Some(s) = &req.exclude_session else {
        return Ok(Excluded::default());
    };
    let holds = |sql: &str, args: &[(&str, Value)]| -> crate::error::Result<bool> {
        let params: Vec<(&str, &dyn ToSql)> =
            args.iter().map(|(k, v)| (*k, v as &dyn ToSql)).collect();
        Ok(conn
            .prepare_cached(&format!("SELECT EXISTS ({sql})"))?
            .query_row(&*params, |r| r.get(0))?)
    };
    let session = holds(excluded_session!(), &excluded_args(s))?;
    let echo = match echo(s) {
        Some(e) => holds(excluded_echo!(), &[(":echo", Value::Text(e))])?,
        None => false,
    };
    Ok(Excluded { session, echo })
}

/// Session chunks of the request's session and time span, without the
/// excluded session's passages that `present` says the index holds. A
/// chunk without times of its own has its session's (as
/// `candidates::chunks` shows it).
pub fn chunks(w: &str, req: &Request, present: Excluded) -> Ranked {
    let mut conds = Vec::new();
    let mut args = Vec::new();
    if let Some(s) = &req.session {
        conds.push("+chunks_fts.rowid IN (SELECT rowid FROM chunks WHERE session_id = :session)");
        args.push((":session", Value::Text(s.clone())));
    }
    if let Some(s) = &req.exclude_session {
        if present.session {
            conds.push(concat!(
                "+chunks_fts.rowid NOT IN (",
                excluded_session!(),
                ")"
            ));
            args.extend(excluded_args(s));
        }
        if let Some(echo) = echo(s).filter(|_| present.echo) {
            conds.push(concat!("+chunks_fts.rowid NOT IN (", excluded_echo!(), ")"));
            args.push((":echo", Value::Text(echo)));
        }
    }
    let timed = req.since.is_some() || req.until.is_some();
    if timed {
        conds.push(
            "(:since IS NULL OR coalesce(m.last_ts, m.first_ts,
               (SELECT coalesce(last_ts, first_ts) FROM sessions WHERE source_id = m.source_id)) >= :since)",
        );
        conds.push(
            "(:until IS NULL OR coalesce(m.first_ts, m.last_ts,
               (SELECT first_ts FROM sessions WHERE source_id = m.source_id)) <= :until)",
        );
        args.extend([(":since", opt(req.since)), (":until", opt(req.until))]);
    }
    let join = if timed {
        "chunks m ON m.rowid = chunks_fts.rowid"
    } else {
        ""
    };
    Ranked {
        sql: ranked("chunks_fts", w, join, &conds),
        args,
    }
}

/// The FTS5 phrase of an excluded session's id, when the id is distinctive
/// enough to be found only where that session is quoted (a UUID, as every
/// launcher's is): a passage that holds it is the asking session itself,
/// copied into another one (its transcript read as a test fixture, a log
/// tail of it), and is no more its evidence than the session is. `None`
/// for a short or wordy id ("s", "my-session"), which text could hold by
/// chance.
pub fn echo(session: &str) -> Option<String> {
    let alnum = session.chars().filter(char::is_ascii_alphanumeric).count();
    let digits = session.chars().filter(char::is_ascii_digit).count();
    (alnum >= 16 && digits >= 4).then(|| super::sanitize::fts_string(session))
}

/// Ticket parts of the request's time span.
pub fn tickets(w: &str, req: &Request) -> Ranked {
    if req.since.is_none() && req.until.is_none() {
        return Ranked {
            sql: ranked("tickets_fts", w, "", &[]),
            args: vec![],
        };
    }
    let conds = [
        "(:since IS NULL OR coalesce(m.updated, m.created) >= :since)",
        "(:until IS NULL OR coalesce(m.created, m.updated) <= :until)",
    ];
    Ranked {
        sql: ranked(
            "tickets_fts",
            w,
            "tickets m ON m.rowid = tickets_fts.rowid",
            &conds,
        ),
        args: vec![(":since", opt(req.since)), (":until", opt(req.until))],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> Request {
        Request::new("x", 10, jiff::Timestamp::from_second(1_000).unwrap())
    }

    /// Without filters the sessions' and tickets' subqueries are the plain
    /// bm25 scan they always were: no join, no parameter of their own.
    #[test]
    fn unfiltered_subqueries_have_no_join() {
        let req = request();
        for r in [
            chunks("1.0", &req, Excluded::default()),
            tickets("1.0", &req),
        ] {
            assert!(
                !r.sql.contains("JOIN") && !r.sql.contains(" IN "),
                "{}",
                r.sql
            );
            assert!(r.args.is_empty());
        }
    }

    /// The session a prompt is asked in, and its subagents', are left out
    /// as a set read once, like a session filter.
    #[test]
    fn an_excluded_session_is_a_plus_rowid_set() {
        let mut req = request();
        req.exclude_session = Some("s".into());
        let present = Excluded {
            session: true,
            echo: false,
        };
        let r = chunks("1.0", &req, present);
        assert!(r.sql.contains("+chunks_fts.rowid NOT IN"), "{}", r.sql);
        assert_eq!(r.args.len(), 3);
    }

    /// An excluded session the index holds nothing of (a prompt's session
    /// not indexed yet) leaves the ranked scan as it is without one.
    #[test]
    fn an_excluded_session_the_index_lacks_adds_no_condition() {
        let mut req = request();
        req.exclude_session = Some("55604662-cf2a-4c2d-851a-ec234028f8ca".into());
        let r = chunks("1.0", &req, Excluded::default());
        assert!(!r.sql.contains(" IN "), "{}", r.sql);
        assert!(r.args.is_empty());
    }

    /// `excluded` finds the session's own passages, its subagents', and
    /// other sessions' passages quoting its id, each only where they are.
    #[test]
    fn excluded_tells_what_the_index_holds_of_the_session() -> crate::error::Result<()> {
        let conn = rusqlite::Connection::open_in_memory()?;
        conn.execute_batch(
            "CREATE TABLE chunks (session_id TEXT);
             CREATE VIRTUAL TABLE chunks_fts USING fts5(body);",
        )?;
        let id = "55604662-cf2a-4c2d-851a-ec234028f8ca";
        let mut req = request();
        req.exclude_session = Some(id.into());
        let add = |session: &str, body: &str| -> rusqlite::Result<()> {
            conn.execute("INSERT INTO chunks(session_id) VALUES (?1)", [session])?;
            conn.execute("INSERT INTO chunks_fts(body) VALUES (?1)", [body])?;
            Ok(())
        };
        add("other", "nothing of it")?;
        assert_eq!(excluded(&conn, &req)?, Excluded::default());
        add(&format!("{id}/agent-a1"), "a subagent's turn")?;
        let sub = excluded(&conn, &req)?;
        assert!(sub.session && !sub.echo, "{sub:?}");
        add("third", &format!("tail of ~/.claude/projects/p/{id}.jsonl"))?;
        assert_eq!(
            excluded(&conn, &req)?,
            Excluded {
                session: true,
                echo: true
            }
        );
        req.exclude_session = Some("other".into());
        let own = excluded(&conn, &req)?;
        assert!(own.session && !own.echo, "{own:?}");
        req.exclude_session = None;
        assert_eq!(excluded(&conn, &req)?, Excluded::default());
        Ok(())
    }

    /// A launcher's session id (a UUID) is looked for in other sessions'
    /// text, as one quoted phrase; a short or wordy id is not.
    #[test]
    fn only_a_distinctive_session_id_is_looked_for_in_text() {
        let id = "55604662-cf2a-4c2d-851a-ec234028f8ca";
        assert_eq!(
            echo(id).as_deref(),
            Some("\"55604662-cf2a-4c2d-851a-ec234028f8ca\"")
        );
        assert_eq!(
            echo("a\"b 1234567890abcdefgh").as_deref(),
            Some("\"a\"\"b 1234567890abcdefgh\"")
        );
        for plain in ["s", "my-session", "replay-of-the-long-session-name", "2026"] {
            assert_eq!(echo(plain), None, "{plain}");
        }
        let mut req = request();
        req.exclude_session = Some(id.into());
        let both = Excluded {
            session: true,
            echo: true,
        };
        let r = chunks("1.0", &req, both);
        assert!(r.sql.contains("MATCH :echo"), "{}", r.sql);
        assert_eq!(r.args.len(), 4);
        let quoted = Excluded {
            session: false,
            echo: true,
        };
        let r = chunks("1.0", &req, quoted);
        assert!(r.sql.contains("MATCH :echo"), "{}", r.sql);
        assert_eq!(r.args.len(), 1);
    }

    /// A session filter never becomes a rowid constraint of the FTS table
    /// (which SQLite would answer with one MATCH per rowid).
    #[test]
    fn a_session_is_a_plus_rowid_set() {
        let mut req = request();
        req.session = Some("s".into());
        let r = chunks("1.0", &req, Excluded::default());
        assert!(r.sql.contains("+chunks_fts.rowid IN"), "{}", r.sql);
        assert!(!r.sql.contains("JOIN"), "{}", r.sql);
    }
}
