//! Term statistics (`schema/0004_term_stats.sql`, `0005_term_df.sql`): how
//! many rows of each FTS table contain each term, kept exactly by the
//! single writer in the same transaction as the rows, so the query planner
//! pays one b-tree probe per term (for every table at once) instead of
//! walking FTS5 doclists.
//!
//! Writers collect changes in a [`TermDeltas`] while they insert and delete
//! FTS rows and call [`TermDeltas::flush`] before committing. Readers call
//! [`lookup_all`], which answers `None` for a table whose counts are
//! missing or stale (an index from before schema 5), so the planner can
//! fall back to counting with FTS5. [`repair`] recounts stale tables; the
//! write path runs it when it opens an index.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use rusqlite::{params, Connection, OptionalExtension};

use crate::error::Result;
use crate::text::words;

/// The FTS table families.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Table {
    Records,
    Chunks,
    Tickets,
}

impl Table {
    /// Every table, in a fixed order.
    pub const ALL: [Table; 3] = [Table::Records, Table::Chunks, Table::Tickets];

    /// The FTS5 table.
    pub fn fts(self) -> &'static str {
        match self {
            Table::Records => "records_fts",
            Table::Chunks => "chunks_fts",
            Table::Tickets => "tickets_fts",
        }
    }

    /// The metadata table sharing the FTS table's rowids.
    pub fn meta(self) -> &'static str {
        match self {
            Table::Records => "records",
            Table::Chunks => "chunks",
            Table::Tickets => "tickets",
        }
    }

    /// The FTS columns, comma-separated, in table order.
    fn columns(self) -> &'static str {
        match self {
            Table::Records => "key, body, tags, aux",
            Table::Chunks => "title, body, aux",
            Table::Tickets => "title, body, labels, aux",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Maps and sets hashed once per word of every indexed row: foldhash
/// (seeded per process), not the slower SipHash.
type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;
type Set<K> = HashSet<K, foldhash::fast::RandomState>;

/// A word as it is counted: lowercase, borrowed unless it had capitals.
/// Every counting path goes through here, so adds and removes agree.
fn folded(w: &str) -> Cow<'_, str> {
    if w.chars().any(char::is_uppercase) {
        Cow::Owned(w.to_lowercase())
    } else {
        Cow::Borrowed(w)
    }
}

/// The distinct lowercase terms of one row's columns, borrowed from the
/// columns unless a word has to be lowercased.
fn row_terms<'a>(cols: &[&'a str]) -> Set<Cow<'a, str>> {
    cols.iter().flat_map(|c| words(c)).map(folded).collect()
}

/// Add `by` to `term`'s count; a term seen before costs no allocation.
fn bump(map: &mut Map<String, i64>, term: Cow<'_, str>, by: i64) {
    match map.get_mut(term.as_ref()) {
        Some(n) => *n += by,
        None => {
            map.insert(term.into_owned(), by);
        }
    }
}

/// The term counts of rows about to be inserted, counted where the rows are
/// prepared (a worker thread) so that the single writer only merges one
/// map per source instead of hashing every word of every row.
#[derive(Debug, Default)]
pub struct RowTerms {
    rows: i64,
    /// Each term's row count and the last row (1-based) that counted it:
    /// one probe per word, and no set per row.
    terms: Map<String, (i64, i64)>,
}

impl RowTerms {
    /// Count one row with these column texts. Counts what
    /// [`TermDeltas::add`] would for the same columns.
    pub fn count(&mut self, cols: &[&str]) {
        self.rows += 1;
        let row = self.rows;
        for c in cols {
            for term in words(c).map(folded) {
                match self.terms.get_mut(term.as_ref()) {
                    Some((n, last)) => {
                        if *last != row {
                            *n += 1;
                            *last = row;
                        }
                    }
                    None => {
                        self.terms.insert(term.into_owned(), (1, row));
                    }
                }
            }
        }
    }
}

/// Changes to the counts made by one transaction, not yet written.
#[derive(Debug, Default)]
pub struct TermDeltas {
    /// By table: each term's change.
    terms: [Map<String, i64>; 3],
    docs: [i64; 3],
    touched: [bool; 3],
    /// Whether sessions were added or removed: the flush counts them again
    /// (see `schema/0016_session_count.sql`).
    sessions: bool,
}

impl TermDeltas {
    /// Count a row about to be inserted with these column texts.
    pub fn add(&mut self, t: Table, cols: &[&str]) {
        self.change(t, cols, 1);
    }

    /// Count rows about to be inserted whose other columns `rows` counted
    /// and which all hold `shared` in one more column (a session's title,
    /// known only to the writer). Counts as [`add`](Self::add) of each row
    /// would: every term of `shared` is in every row.
    pub fn add_rows(&mut self, t: Table, mut rows: RowTerms, shared: &str) {
        if rows.rows == 0 {
            return;
        }
        for term in row_terms(&[shared]) {
            match rows.terms.get_mut(term.as_ref()) {
                Some(e) => e.0 = rows.rows,
                None => {
                    rows.terms.insert(term.into_owned(), (rows.rows, 0));
                }
            }
        }
        let map = &mut self.terms[t.index()];
        for (term, (n, _)) in rows.terms {
            *map.entry(term).or_insert(0) += n;
        }
        self.docs[t.index()] += rows.rows;
        self.touched[t.index()] = true;
    }

    /// Count a row about to be deleted with these column texts.
    pub fn remove(&mut self, t: Table, cols: &[&str]) {
        self.change(t, cols, -1);
    }

    fn change(&mut self, t: Table, cols: &[&str], by: i64) {
        let terms = &mut self.terms[t.index()];
        for term in row_terms(cols) {
            bump(terms, term, by);
        }
        self.docs[t.index()] += by;
        self.touched[t.index()] = true;
    }

    /// Count the FTS rows `rowid IN (<rowids_sql>)` (a subquery taking
    /// `param` as `?1`) as deleted: call before deleting them.
    pub fn remove_rows(
        &mut self,
        conn: &Connection,
        t: Table,
        rowids_sql: &str,
        param: i64,
    ) -> Result<()> {
        let sql = format!(
            "SELECT {} FROM {} WHERE rowid IN ({rowids_sql})",
            t.columns(),
            t.fts()
        );
        let mut st = conn.prepare_cached(&sql)?;
        let n = st.column_count();
        let mut rows = st.query([param])?;
        while let Some(r) = rows.next()? {
            let cols: Vec<String> = (0..n)
                .map(|i| r.get::<_, Option<String>>(i).map(Option::unwrap_or_default))
                .collect::<rusqlite::Result<_>>()?;
            let refs: Vec<&str> = cols.iter().map(String::as_str).collect();
            self.remove(t, &refs);
        }
        Ok(())
    }

    /// Note that `sessions` rows were added or removed.
    pub fn sessions_changed(&mut self) {
        self.sessions = true;
    }

    /// Write the collected changes inside the caller's transaction and
    /// forget them. A term whose counts all reach zero is deleted.
    pub fn flush(&mut self, tx: &Connection) -> Result<()> {
        if std::mem::take(&mut self.sessions) {
            count_root_sessions(tx)?;
        }
        if !self.touched.iter().any(|t| *t) {
            return Ok(());
        }
        let mut fell = Vec::new();
        for t in Table::ALL {
            let sql = format!(
                "INSERT INTO term_df(term, {c}) VALUES(?1, ?2)
                 ON CONFLICT(term) DO UPDATE SET {c} = {c} + excluded.{c}",
                c = t.meta()
            );
            let mut up = tx.prepare_cached(&sql)?;
            // In key order the upserts walk the b-tree left to right, each
            // page touched once: a third faster for 60,000 terms than hash
            // order (and faster than one INSERT .. SELECT from json_each).
            let mut changed: Vec<(String, i64)> = self.terms[t.index()]
                .drain()
                .filter(|(_, by)| *by != 0)
                .collect();
            changed.sort_unstable_by(|a, b| a.0.cmp(&b.0));
            for (term, by) in changed {
                up.execute(params![term, by])?;
                if by < 0 {
                    fell.push(term);
                }
            }
        }
        let mut gone = tx.prepare_cached(
            "DELETE FROM term_df
             WHERE term = ?1 AND records <= 0 AND chunks <= 0 AND tickets <= 0",
        )?;
        for term in fell {
            gone.execute([term])?;
        }
        for t in Table::ALL {
            if std::mem::take(&mut self.touched[t.index()]) {
                let by = std::mem::take(&mut self.docs[t.index()]);
                let sql = format!(
                    "INSERT INTO table_stats(tbl, docs, max_rowid)
                     VALUES(?1, ?2, (SELECT coalesce(max(rowid), 0) FROM {m}))
                     ON CONFLICT(tbl) DO UPDATE SET docs = docs + excluded.docs,
                       max_rowid = excluded.max_rowid",
                    m = t.meta()
                );
                tx.prepare_cached(&sql)?.execute(params![t.meta(), by])?;
            }
        }
        Ok(())
    }
}

/// The root sessions: a subagent's or a compaction's file has its parent's
/// session as `parent_id`, and a session read from two files (captured
/// twice) is one.
const COUNT_ROOT_SESSIONS: &str =
    "SELECT count(DISTINCT session_id) FROM sessions WHERE parent_id IS NULL";

/// Count the root sessions into `table_stats`
/// (`schema/0016_session_count.sql`).
fn count_root_sessions(tx: &Connection) -> Result<()> {
    let sql = format!(
        "INSERT INTO table_stats(tbl, docs, max_rowid)
         VALUES('root_sessions', ({COUNT_ROOT_SESSIONS}),
           (SELECT coalesce(max(rowid), 0) FROM sessions))
         ON CONFLICT(tbl) DO UPDATE SET docs = excluded.docs, max_rowid = excluded.max_rowid"
    );
    tx.prepare_cached(&sql)?.execute([])?;
    Ok(())
}

/// The number of root sessions: the writer's, or counted where it kept
/// none (see [`stored_root_sessions`]).
pub fn root_sessions(conn: &Connection) -> Result<i64> {
    match stored_root_sessions(conn)? {
        Some(n) => Ok(n),
        None => Ok(conn
            .prepare_cached(COUNT_ROOT_SESSIONS)?
            .query_row([], |r| r.get(0))?),
    }
}

/// The number of root sessions the writer keeps, or `None` when it was
/// not kept (an index before schema 16) or is stale (the largest
/// `sessions` rowid differs from the one counted with it).
pub fn stored_root_sessions(conn: &Connection) -> Result<Option<i64>> {
    if crate::store::schema_version(conn)? < crate::store::SESSION_COUNT_SCHEMA {
        return Ok(None);
    }
    let stored: Option<(i64, i64)> = conn
        .prepare_cached("SELECT docs, max_rowid FROM table_stats WHERE tbl = 'root_sessions'")?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let max: i64 = conn
        .prepare_cached("SELECT coalesce(max(rowid), 0) FROM sessions")?
        .query_row([], |r| r.get(0))?;
    Ok(stored.filter(|&(_, at)| at == max).map(|(n, _)| n))
}

/// Largest rowid of a table's metadata table (0 when empty).
fn max_rowid(conn: &Connection, t: Table) -> Result<i64> {
    let sql = format!("SELECT coalesce(max(rowid), 0) FROM {}", t.meta());
    Ok(conn.prepare_cached(&sql)?.query_row([], |r| r.get(0))?)
}

/// The stored row count of `t`, or `None` when its counts are missing or
/// stale. An index from before schema 5 has no `term_df` (one from before
/// schema 4 no statistics at all): a hook reads such an index as it is,
/// without migrating it, so its counts are missing.
pub fn current_docs(conn: &Connection, t: Table) -> Result<Option<i64>> {
    if !has_count_tables(conn)? {
        return Ok(None);
    }
    stored_docs(conn, t)
}

/// Whether the index has the count tables (schema 5 and later).
fn has_count_tables(conn: &Connection) -> Result<bool> {
    let tables: i64 = conn
        .prepare_cached(
            "SELECT count(*) FROM sqlite_master
             WHERE type = 'table' AND name IN ('table_stats', 'term_df')",
        )?
        .query_row([], |r| r.get(0))?;
    Ok(tables == 2)
}

/// [`current_docs`] of an index known to have the count tables.
fn stored_docs(conn: &Connection, t: Table) -> Result<Option<i64>> {
    let stored: Option<(i64, i64)> = conn
        .prepare_cached("SELECT docs, max_rowid FROM table_stats WHERE tbl = ?1")?
        .query_row([t.meta()], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let max = max_rowid(conn, t)?;
    Ok(match stored {
        Some((docs, m)) if m == max => Some(docs),
        None if max == 0 => Some(0),
        _ => None,
    })
}

/// Every table's counts of some words (see [`lookup_all`]).
#[derive(Debug, Default)]
pub struct Counts {
    /// By table: the row count and each word's document frequency, in the
    /// order the words were given; `None` when missing or stale.
    tables: [Option<(i64, Vec<i64>)>; 3],
}

impl Counts {
    /// The counts of `t`: its row count and the words' frequencies.
    pub fn get(&self, t: Table) -> Option<(i64, &[i64])> {
        self.tables[t.index()]
            .as_ref()
            .map(|(docs, dfs)| (*docs, dfs.as_slice()))
    }
}

/// Document frequencies of `words` in every table, one probe per word.
pub fn lookup_all(conn: &Connection, words: &[&str]) -> Result<Counts> {
    let mut docs = [None; 3];
    if has_count_tables(conn)? {
        for t in Table::ALL {
            docs[t.index()] = stored_docs(conn, t)?;
        }
    }
    let mut found: HashMap<String, [i64; 3]> = HashMap::new();
    // An empty (or stale) table needs no probe: only probe when some
    // current table has rows.
    if docs.iter().any(|d| d.is_some_and(|n| n > 0)) && !words.is_empty() {
        let json = serde_json::to_string(words)?;
        let mut st = conn.prepare_cached(
            "SELECT term, records, chunks, tickets FROM term_df
             WHERE term IN (SELECT value FROM json_each(?1))",
        )?;
        let rows = st.query_map([json], |r| {
            Ok((r.get(0)?, [r.get(1)?, r.get(2)?, r.get(3)?]))
        })?;
        for row in rows {
            let (term, dfs): (String, [i64; 3]) = row?;
            found.insert(term, dfs);
        }
    }
    let mut out = Counts::default();
    for t in Table::ALL {
        out.tables[t.index()] = docs[t.index()].map(|n| {
            let dfs = words
                .iter()
                .map(|w| found.get(*w).map_or(0, |d| d[t.index()]))
                .collect();
            (n, dfs)
        });
    }
    Ok(out)
}

/// Recount `t` from its stored FTS rows, replacing its counts.
pub fn recount(conn: &Connection, t: Table) -> Result<()> {
    conn.execute_batch(&format!(
        "UPDATE term_df SET {c} = 0 WHERE {c} != 0;
         DELETE FROM term_df WHERE records <= 0 AND chunks <= 0 AND tickets <= 0;",
        c = t.meta()
    ))?;
    conn.prepare_cached("DELETE FROM table_stats WHERE tbl = ?1")?
        .execute([t.meta()])?;
    let mut d = TermDeltas::default();
    d.remove_rows(
        conn,
        t,
        &format!("SELECT rowid FROM {} WHERE ?1 = ?1", t.fts()),
        0,
    )?;
    // `remove_rows` counted every row as removed; turn that into adding.
    for v in d.terms[t.index()].values_mut() {
        *v = -*v;
    }
    d.docs[t.index()] = -d.docs[t.index()];
    d.touched[t.index()] = true;
    d.flush(conn)
}

/// Recount every table whose counts are missing or stale. Returns the
/// tables recounted. Runs on the write path; the caller holds a write
/// transaction or is the only writer.
pub fn repair(conn: &Connection) -> Result<Vec<Table>> {
    let mut out = Vec::new();
    for t in Table::ALL {
        if current_docs(conn, t)?.is_none() {
            tracing::warn!(
                "counting the terms of {} once (an index from an older version)",
                t.fts()
            );
            recount(conn, t)?;
            out.push(t);
        }
    }
    if crate::store::schema_version(conn)? >= crate::store::SESSION_COUNT_SCHEMA
        && stored_root_sessions(conn)?.is_none()
    {
        count_root_sessions(conn)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> Connection {
        let mut c = Connection::open_in_memory().unwrap();
        crate::store::migrate_for_tests(&mut c);
        c.execute_batch("PRAGMA foreign_keys=OFF;").unwrap();
        c
    }

    /// The writer keeps the number of root sessions with each flush that
    /// added or removed one; a reader finding sessions it was not counted
    /// with (a writer that did not keep it) is told to count, and the next
    /// write job's repair counts again.
    #[test]
    fn the_writer_keeps_the_root_session_count() -> Result<()> {
        let c = db();
        let add = |source: i64, session: &str, parent: Option<&str>| {
            c.execute(
                "INSERT INTO sessions(source_id, session_id, launcher, parent_id) VALUES(?1, ?2, 'x', ?3)",
                params![source, session, parent],
            )
        };
        assert_eq!(stored_root_sessions(&c)?, Some(0));
        let mut d = TermDeltas::default();
        add(1, "s1", None)?;
        add(2, "s1/agent-a1", Some("s1"))?;
        add(3, "s2", None)?;
        d.sessions_changed();
        d.flush(&c)?;
        assert_eq!(stored_root_sessions(&c)?, Some(2));
        // Removed: the flush counts again.
        c.execute("DELETE FROM sessions WHERE source_id = 1", [])?;
        d.sessions_changed();
        d.flush(&c)?;
        assert_eq!(stored_root_sessions(&c)?, Some(1));
        // Added without the count kept: stale, counted by the reader,
        // until a repair.
        add(4, "s3", None)?;
        assert_eq!(stored_root_sessions(&c)?, None);
        repair(&c)?;
        assert_eq!(stored_root_sessions(&c)?, Some(2));
        // An index before the count was kept is counted by the reader.
        c.pragma_update(None, "user_version", crate::store::SESSION_COUNT_SCHEMA - 1)?;
        assert_eq!(stored_root_sessions(&c)?, None);
        Ok(())
    }

    fn insert(c: &Connection, d: &mut TermDeltas, rowid: i64, body: &str) -> Result<()> {
        c.execute(
            "INSERT INTO tickets(rowid, source_id, ticket_id, part) VALUES(?1, 0, 'x', ?1)",
            [rowid],
        )?;
        c.execute(
            "INSERT INTO tickets_fts(rowid, title, body, labels, aux) VALUES(?1, 'T', ?2, '', '')",
            params![rowid, body],
        )?;
        d.add(Table::Tickets, &["T", body, "", ""]);
        Ok(())
    }

    /// One table's counts of `words`.
    fn lookup(c: &Connection, t: Table, words: &[&str]) -> Result<Option<(i64, Vec<i64>)>> {
        Ok(lookup_all(c, words)?
            .get(t)
            .map(|(docs, dfs)| (docs, dfs.to_vec())))
    }

    fn df(c: &Connection, term: &str) -> Result<i64> {
        let (_, dfs) = lookup(c, Table::Tickets, &[term])?.expect("current");
        Ok(dfs[0])
    }

    #[test]
    fn counts_follow_inserts_and_deletes() -> Result<()> {
        let c = db();
        let mut d = TermDeltas::default();
        insert(&c, &mut d, 1, "Flaky test, flaky loader")?;
        insert(&c, &mut d, 2, "the loader")?;
        d.flush(&c)?;
        assert_eq!(df(&c, "flaky")?, 1, "counted once per row");
        assert_eq!(df(&c, "loader")?, 2);
        assert_eq!(df(&c, "t")?, 2, "the title column counts too");
        assert_eq!(df(&c, "zebra")?, 0);
        d.remove_rows(&c, Table::Tickets, "SELECT ?1", 1)?;
        c.execute("DELETE FROM tickets_fts WHERE rowid = 1", [])?;
        c.execute("DELETE FROM tickets WHERE rowid = 1", [])?;
        d.flush(&c)?;
        assert_eq!(df(&c, "flaky")?, 0);
        assert_eq!(df(&c, "loader")?, 1);
        assert_eq!(lookup(&c, Table::Tickets, &[])?.map(|x| x.0), Some(1));
        let left: i64 = c.query_row(
            "SELECT count(*) FROM term_df WHERE term = 'flaky'",
            [],
            |r| r.get(0),
        )?;
        assert_eq!(left, 0, "zero counts are deleted");
        Ok(())
    }

    #[test]
    fn rows_counted_off_the_writer_count_what_adding_each_row_counts() {
        let rows = [
            ("Flaky test in the Loader", "flaki load"),
            ("the loader again, and the title word Deploy", ""),
            ("ΣΊΣΥΦΟΣ wrote σίσυφος", "HashMap hash map"),
            ("", ""),
        ];
        for title in ["Deploy the LOADER", "", "zebra"] {
            let mut one_by_one = TermDeltas::default();
            let mut counted = RowTerms::default();
            for (body, aux) in rows {
                one_by_one.add(Table::Chunks, &[title, body, aux]);
                counted.count(&[body, aux]);
            }
            let mut merged = TermDeltas::default();
            merged.add_rows(Table::Chunks, counted, title);
            let i = Table::Chunks.index();
            assert_eq!(merged.terms[i], one_by_one.terms[i], "title {title:?}");
            assert_eq!(merged.docs[i], 4);
        }
        let mut none = TermDeltas::default();
        none.add_rows(Table::Chunks, RowTerms::default(), "title");
        assert!(!none.touched[Table::Chunks.index()], "no rows, no change");
    }

    #[test]
    fn rows_written_without_counts_are_stale_and_repair_recounts() -> Result<()> {
        let c = db();
        let mut d = TermDeltas::default();
        insert(&c, &mut d, 1, "alpha beta")?;
        // `d` is never flushed: the counts do not know row 1.
        assert!(lookup(&c, Table::Tickets, &["alpha"])?.is_none());
        assert_eq!(repair(&c)?, vec![Table::Tickets]);
        assert_eq!(df(&c, "alpha")?, 1);
        assert!(repair(&c)?.is_empty(), "current counts are left alone");
        // An empty table needs no counts.
        assert_eq!(lookup(&c, Table::Chunks, &["alpha"])?, Some((0, vec![0])));
        Ok(())
    }
}
