//! Writing prepared sources (transcripts and tickets) into the index, and
//! the source state that makes indexing incremental.
//!
//! Each source is written inside the caller's transaction: its old rows are
//! replaced (or its new chunks appended) together with its `sources` row, so
//! an interrupted run leaves either the old state or the new one.

use std::borrow::Cow;
use std::collections::HashMap;

use rusqlite::{params, Connection, OptionalExtension, Transaction};

use crate::error::Result;
use crate::ingest::chunk::Chunk;
use crate::ingest::model::Role;
use crate::ingest::prepare::PIPELINE_VERSION;
use crate::ingest::{Action, Continuation, Prefix, Prepared, SessionOut, SourceState, TicketOut};
use crate::store::{RowTerms, Table, TermDeltas};

/// The `meta` key that says which scanner last swept the stored paths:
/// the [`PIPELINE_VERSION`] of the rules it ran.
const PATHS_SWEPT: &str = "sources.paths_swept";

/// Rename the sources whose stored path holds a secret (stored so by a
/// version before issue #37, or holding a kind the scanner has learnt
/// since) to the path's redacted form, the one a run now looks them up
/// by; their rows and state are kept. A row already stored under that form
/// wins, and the old one goes. Runs once per version of the rules (a scan
/// of 10,000 paths takes about 16 ms); every path written since is
/// redacted by them. Returns how many were renamed or removed.
pub fn redact_stored_paths(conn: &mut Connection) -> Result<usize> {
    let version = PIPELINE_VERSION.to_string();
    let swept: Option<String> = conn
        .prepare_cached("SELECT value FROM meta WHERE key=?1")?
        .query_row([PATHS_SWEPT], |r| r.get(0))
        .optional()?;
    if swept.as_deref() == Some(version.as_str()) {
        return Ok(0);
    }
    let old: Vec<(i64, String)> = {
        let mut st = conn.prepare("SELECT id, path FROM sources")?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get::<_, String>(1)?)))?;
        let mut old = Vec::new();
        for row in rows {
            let (id, path) = row?;
            if let Cow::Owned(clean) = crate::secrets::redact_path(&path) {
                old.push((id, clean));
            }
        }
        old
    };
    let tx = crate::store::begin_in_turn(conn)?;
    let mut stats = TermDeltas::default();
    for (id, clean) in &old {
        let taken: Option<i64> = tx
            .prepare_cached("SELECT id FROM sources WHERE path=?1")?
            .query_row([clean], |r| r.get(0))
            .optional()?;
        if taken.is_some() {
            delete_source(&tx, *id, &mut stats)?;
        } else {
            tx.prepare_cached("UPDATE sources SET path=?2 WHERE id=?1")?
                .execute(params![id, clean])?;
        }
    }
    stats.flush(&tx)?;
    tx.execute(
        "INSERT INTO meta(key, value) VALUES(?1, ?2) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
        [PATHS_SWEPT, &version],
    )?;
    tx.commit()?;
    Ok(old.len())
}

/// Every source of this host's own files, by path. Sources pulled from a
/// teammate's host (`host` set) have no file here: indexing and pruning
/// never see them.
pub fn load_sources(conn: &Connection) -> Result<HashMap<String, SourceState>> {
    let mut st = conn.prepare(
        "SELECT id, path, format, size, mtime, hash, parser_version, offset, messages, state FROM sources
         WHERE host IS NULL",
    )?;
    let rows = st.query_map([], |r| {
        let state: Option<String> = r.get(9)?;
        Ok(SourceState {
            id: r.get(0)?,
            path: r.get(1)?,
            format: r.get(2)?,
            size: r.get(3)?,
            mtime: r.get(4)?,
            hash: r.get(5)?,
            parser_version: r.get(6)?,
            offset: r.get(7)?,
            messages: r.get(8)?,
            cont: state
                .and_then(|s| serde_json::from_str(&s).ok())
                .unwrap_or_default(),
        })
    })?;
    let mut map = HashMap::new();
    for s in rows {
        let s = s?;
        map.insert(s.path.clone(), s);
    }
    Ok(map)
}

/// A prepared source with what the writer would otherwise compute itself:
/// the term counts of its chunks' text (see [`RowTerms`]) and each chunk's
/// JSON columns. Made by the thread that prepared the source.
#[derive(Debug)]
pub struct Ready {
    pub prepared: Prepared,
    chunk_terms: RowTerms,
    chunk_json: Result<Vec<ChunkJson>>,
    /// Each chunk's quantised vector (`semantic::quant`), in chunk order,
    /// when a model is configured and embedding worked.
    chunk_vectors: Option<Vec<Vec<u8>>>,
}

/// A chunk's JSON columns.
#[derive(Debug)]
struct ChunkJson {
    message_ids: String,
    spans: String,
    roles: String,
    speakers: String,
}

impl ChunkJson {
    fn new(k: &Chunk) -> Result<ChunkJson> {
        let roles: Vec<&str> = k.roles.iter().map(|r| r.as_str()).collect();
        // `[[start, end, msg, id, ts], ...]`: compact, and read back by
        // recall (which also reads the older four-element form).
        let spans: Vec<_> = k
            .spans
            .iter()
            .map(|s| (s.start, s.end, s.msg, &s.id, s.ts))
            .collect();
        Ok(ChunkJson {
            message_ids: serde_json::to_string(&k.message_ids)?,
            spans: serde_json::to_string(&spans)?,
            roles: serde_json::to_string(&roles)?,
            speakers: serde_json::to_string(&k.speakers)?,
        })
    }
}

impl Ready {
    pub fn new(prepared: Prepared) -> Ready {
        let chunks = prepared.session.as_ref().map_or(&[][..], |s| &s.chunks);
        let mut chunk_terms = RowTerms::default();
        for c in chunks {
            chunk_terms.count(&[&c.chunk.text, &c.aux]);
        }
        let chunk_json = chunks.iter().map(|c| ChunkJson::new(&c.chunk)).collect();
        Ready {
            prepared,
            chunk_terms,
            chunk_json,
            chunk_vectors: None,
        }
    }

    /// The same, with each chunk embedded by `model` (on the preparer
    /// thread, like the term counts). A chunk text the model cannot embed
    /// leaves the source without vectors, with a warning: its rows are
    /// still written.
    pub fn with_vectors(mut self, model: Option<&crate::semantic::Model>) -> Ready {
        let (Some(model), Some(s)) = (model, self.prepared.session.as_ref()) else {
            return self;
        };
        let texts: Vec<&str> = s.chunks.iter().map(|c| c.chunk.text.as_str()).collect();
        let mut vectors = Vec::with_capacity(texts.len());
        for batch in texts.chunks(VECTOR_BATCH) {
            match model.embed(batch) {
                Ok(vs) => vectors.extend(vs.iter().map(|v| crate::semantic::quant::encode(v))),
                Err(e) => {
                    tracing::warn!(path = %self.prepared.path, "passages not embedded: {e}");
                    return self;
                }
            }
        }
        self.chunk_vectors = Some(vectors);
        self
    }
}

/// Passages embedded per call on a preparer thread.
const VECTOR_BATCH: usize = 16;

/// Record which model makes this index's vectors (`meta.semantic_model`,
/// see `semantic::identity`), before a run that writes them. When another
/// model made the vectors already there, they are dropped in the same
/// transaction, so the run embeds every row again (see `fill_vectors`);
/// returns whether it did.
pub fn note_semantic_model(conn: &mut Connection, identity: &str) -> Result<bool> {
    let tx = crate::store::begin_in_turn(conn)?;
    let before = super::vectors_model(&tx)?;
    let other = before.is_some_and(|b| b != identity);
    if other {
        for table in ["chunk_vectors", "record_vectors", "ticket_vectors"] {
            let exists: bool = tx.query_row(
                "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = ?1",
                [table],
                |r| r.get(0),
            )?;
            if exists {
                tx.execute(&format!("DELETE FROM {table}"), [])?;
            }
        }
    }
    tx.execute(
        "INSERT INTO meta(key, value) VALUES('semantic_model', ?1)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [identity],
    )?;
    tx.commit()?;
    Ok(other)
}

/// What writing one source added.
#[derive(Debug, Default, Clone, Copy)]
pub struct Written {
    pub chunks: usize,
    pub tickets: usize,
}

/// Write one prepared source. Failed sources are not written (their old
/// rows, if any, stay as they were).
pub fn write_source(
    tx: &Transaction,
    ready: Ready,
    now: i64,
    stats: &mut TermDeltas,
) -> Result<Written> {
    let Ready {
        prepared: ref p,
        chunk_terms,
        chunk_json,
        chunk_vectors,
    } = ready;
    let format = p.format.map(|f| f.as_str()).unwrap_or("unknown");
    let kind = p.format.map(|f| match f.kind() {
        crate::ingest::Kind::Session => "session",
        crate::ingest::Kind::Ticket => "ticket",
    });
    let existing: Option<(i64, i64, Prefix)> = tx
        .prepare_cached("SELECT id, messages, offset, hash FROM sources WHERE path=?1")?
        .query_row([&p.path], |r| {
            let prefix = Prefix {
                offset: r.get(2)?,
                hash: r.get(3)?,
            };
            Ok((r.get(0)?, r.get(1)?, prefix))
        })
        .optional()?;
    // A part continues one prefix of its file. Another run indexing the
    // same file at once may have written this part already, or replaced
    // the prefix: then the stored rows are not the ones it continues, and
    // appending it would store its passages twice (issue 37 item 4).
    if let Some(from) = p.continues.as_ref().filter(|_| p.action == Action::Append) {
        if existing.as_ref().map(|e| &e.2) != Some(from) {
            tracing::debug!(path = %p.path, offset = from.offset, "part not appended: the stored source is not the prefix it continues");
            return Ok(Written::default());
        }
    }
    let existing = existing.map(|(id, messages, _)| (id, messages));
    let append = p.action == Action::Append && existing.is_some();
    if let Some((id, _)) = existing.filter(|_| !append) {
        clear_source(tx, id, stats)?;
    }
    let prior_messages = if append {
        existing.map_or(0, |e| e.1)
    } else {
        0
    };
    let new_messages = p.session.as_ref().map_or(0, |s| s.new_messages) as i64;
    let state = serde_json::to_string(&p.cont)?;
    let values = params![
        kind.unwrap_or("session"),
        format,
        p.size,
        p.mtime,
        p.hash,
        p.parser_version,
        p.offset,
        prior_messages + new_messages,
        state,
        now,
        p.path,
    ];
    // An UPDATE of a known row or a plain INSERT, never an upsert: see
    // `write_session` on statement journals.
    let source_id = match existing {
        Some((id, _)) => {
            tx.prepare_cached(
                "UPDATE sources SET kind=?1, format=?2, size=?3, mtime=?4, hash=?5, parser_version=?6,
                   offset=?7, messages=?8, state=?9, indexed_at=?10 WHERE path=?11",
            )?
            .execute(values)?;
            id
        }
        None => {
            tx.prepare_cached(
                "INSERT INTO sources(kind, format, size, mtime, hash, parser_version, offset, messages, state, indexed_at, path)
                 VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)",
            )?
            .execute(values)?;
            tx.last_insert_rowid()
        }
    };
    let mut w = Written::default();
    if let Some(s) = &p.session {
        let chunks = Chunks {
            terms: chunk_terms,
            json: chunk_json?,
            vectors: chunk_vectors,
        };
        w.chunks = write_session(tx, source_id, s, &p.cont, append, chunks, stats)?;
    }
    for t in &p.tickets {
        write_ticket(tx, source_id, t, stats)?;
        w.tickets += 1;
    }
    Ok(w)
}

/// Delete every row derived from a source, keeping the `sources` row.
fn clear_source(tx: &Connection, id: i64, stats: &mut TermDeltas) -> Result<()> {
    stats.remove_rows(
        tx,
        Table::Chunks,
        "SELECT rowid FROM chunks WHERE source_id=?1",
        id,
    )?;
    stats.remove_rows(
        tx,
        Table::Tickets,
        "SELECT rowid FROM tickets WHERE source_id=?1",
        id,
    )?;
    tx.prepare_cached(
        "DELETE FROM chunks_fts WHERE rowid IN (SELECT rowid FROM chunks WHERE source_id=?1)",
    )?
    .execute([id])?;
    tx.prepare_cached("DELETE FROM chunks WHERE source_id=?1")?
        .execute([id])?;
    tx.prepare_cached(
        "DELETE FROM tickets_fts WHERE rowid IN (SELECT rowid FROM tickets WHERE source_id=?1)",
    )?
    .execute([id])?;
    tx.prepare_cached("DELETE FROM tickets WHERE source_id=?1")?
        .execute([id])?;
    if tx
        .prepare_cached("DELETE FROM sessions WHERE source_id=?1")?
        .execute([id])?
        > 0
    {
        stats.sessions_changed();
    }
    Ok(())
}

/// Remove a source and everything derived from it.
pub fn delete_source(tx: &Connection, id: i64, stats: &mut TermDeltas) -> Result<()> {
    clear_source(tx, id, stats)?;
    tx.prepare_cached("DELETE FROM sources WHERE id=?1")?
        .execute([id])?;
    Ok(())
}

/// What [`Ready`] computed for a session's chunks, in chunk order.
struct Chunks {
    terms: RowTerms,
    json: Vec<ChunkJson>,
    vectors: Option<Vec<Vec<u8>>>,
}

fn write_session(
    tx: &Transaction,
    source_id: i64,
    s: &SessionOut,
    cont: &Continuation,
    append: bool,
    chunks: Chunks,
    stats: &mut TermDeltas,
) -> Result<usize> {
    let session_id = cont.session_id.clone().unwrap_or_else(|| s.meta.id.clone());
    let first = s.chunks.iter().filter_map(|c| c.chunk.first_ts).min();
    let last = s.chunks.iter().filter_map(|c| c.chunk.last_ts).max();
    // An agent's work on a task (see schema/0009_session_work.sql).
    let work = s.chunks.iter().any(|c| c.chunk.roles.contains(&Role::Tool));
    // One subject per line; none is NULL. An append adds the subjects
    // the session did not have (a part read again, or one commit message
    // given twice, shows once).
    let had: Option<String> = match append && !s.meta.did.is_empty() {
        true => tx
            .prepare_cached("SELECT did FROM sessions WHERE source_id=?1")?
            .query_row([source_id], |r| r.get(0))
            .optional()?
            .flatten(),
        false => None,
    };
    let mut did: Vec<&str> = had.as_deref().unwrap_or_default().lines().collect();
    let before = did.len();
    for subject in &s.meta.did {
        if !did.contains(&subject.as_str()) {
            did.push(subject);
        }
    }
    let did = (did.len() > before).then(|| did.join("\n"));
    if append {
        // The session keeps the cwd and branch of its first part (a whole
        // read keeps the first ones of the file), unless it had none.
        tx.prepare_cached(
            "UPDATE sessions SET messages = messages + ?2, last_ts = max(coalesce(last_ts, ?3), coalesce(?3, last_ts)),
               first_ts = coalesce(first_ts, ?4), cwd = coalesce(cwd, ?5), git_branch = coalesce(git_branch, ?6),
               work = max(work, ?7),
               did = coalesce(?8, did)
             WHERE source_id=?1",
        )?
        .execute(params![
            source_id,
            s.new_messages as i64,
            last,
            first,
            s.meta.cwd,
            s.meta.git_branch,
            work,
            did
        ])?;
    } else {
        // A plain INSERT: `clear_source` removed the old row. A statement
        // that may change several rows (an upsert, `INSERT OR REPLACE`
        // with foreign keys) opens a statement journal, and SQLite then
        // asks every FTS5 table written in the transaction for a
        // savepoint, which writes out FTS5's in-memory hash as a new
        // segment. Once per source, that made most of the writer's FTS5
        // time merging small segments (100 MB of transcripts: 1.50 s ->
        // 1.43 s without it).
        stats.sessions_changed();
        tx.prepare_cached(
            "INSERT INTO sessions(session_id, source_id, launcher, parent_id, title, cwd, git_branch, first_ts, last_ts, messages, work, did)
             VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)",
        )?
        .execute(params![
            session_id,
            source_id,
            s.launcher.as_str(),
            s.meta.parent_id,
            s.meta.title,
            s.meta.cwd,
            s.meta.git_branch,
            s.meta.started_at.or(first),
            last,
            s.new_messages as i64,
            work,
            did
        ])?;
    }
    let (title, cwd, git_branch): (String, Option<String>, Option<String>) = tx
        .prepare_cached(
            "SELECT coalesce(title, ''), cwd, git_branch FROM sessions WHERE source_id=?1",
        )?
        .query_row([source_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()?
        .unwrap_or_default();
    let place = Place {
        session_id: &session_id,
        title: &title,
        launcher: s.launcher.as_str(),
        cwd: cwd.as_deref(),
        git_branch: git_branch.as_deref(),
    };
    let first_seq: i64 = tx
        .prepare_cached("SELECT coalesce(max(seq) + 1, 0) FROM chunks WHERE source_id=?1")?
        .query_row([source_id], |r| r.get(0))?;
    for (i, (c, json)) in s.chunks.iter().zip(&chunks.json).enumerate() {
        let rowid = insert_chunk(
            tx,
            source_id,
            first_seq + i as i64,
            &place,
            (&c.chunk, &c.aux, json),
        )?;
        if let Some(v) = chunks.vectors.as_ref().and_then(|vs| vs.get(i)) {
            tx.prepare_cached("INSERT INTO chunk_vectors(rowid, v) VALUES(?1, ?2)")?
                .execute(params![rowid, v])?;
        }
    }
    stats.add_rows(Table::Chunks, chunks.terms, &title);
    Ok(s.chunks.len())
}

/// What every passage of a session repeats: its session, title, launcher
/// and the session's cwd and branch (those of its first part).
struct Place<'a> {
    session_id: &'a str,
    title: &'a str,
    launcher: &'a str,
    cwd: Option<&'a str>,
    git_branch: Option<&'a str>,
}

fn insert_chunk(
    tx: &Transaction,
    source_id: i64,
    seq: i64,
    place: &Place,
    (k, aux, json): (&Chunk, &str, &ChunkJson),
) -> Result<i64> {
    tx.prepare_cached(
        "INSERT INTO chunks(source_id, session_id, seq, msg_first, msg_last, message_ids, spans, roles, speakers,
            first_ts, last_ts, launcher, cwd, git_branch)
         VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14)",
    )?
    .execute(params![
        source_id,
        place.session_id,
        seq,
        k.msg_first as i64,
        k.msg_last as i64,
        json.message_ids,
        json.spans,
        json.roles,
        json.speakers,
        k.first_ts,
        k.last_ts,
        place.launcher,
        place.cwd,
        place.git_branch
    ])?;
    let rowid = tx.last_insert_rowid();
    tx.prepare_cached("INSERT INTO chunks_fts(rowid, title, body, aux) VALUES(?1,?2,?3,?4)")?
        .execute(params![rowid, place.title, k.text, aux])?;
    note_root(tx, rowid, place.session_id)?;
    Ok(rowid)
}

/// Note passage `rowid`'s root session in `chunk_roots`, through which the
/// prompt hook counts the sessions holding a word (`recall::evidence`;
/// `schema/0015_chunk_roots.sql` says why it is written here and not by a
/// trigger). Whatever writes a passage writes this beside it.
pub fn note_root(tx: &rusqlite::Connection, rowid: i64, session_id: &str) -> Result<()> {
    let root = crate::recall::evidence::root_of(session_id);
    tx.prepare_cached("INSERT OR IGNORE INTO root_sessions(session_id) VALUES(?1)")?
        .execute([root])?;
    let id: i64 = tx
        .prepare_cached("SELECT id FROM root_sessions WHERE session_id = ?1")?
        .query_row([root], |r| r.get(0))?;
    tx.prepare_cached("INSERT INTO chunk_roots(rowid, root) VALUES(?1, ?2)")?
        .execute(params![rowid, id])?;
    Ok(())
}

fn write_ticket(
    tx: &Transaction,
    source_id: i64,
    t: &TicketOut,
    stats: &mut TermDeltas,
) -> Result<()> {
    let k = &t.ticket;
    let labels = serde_json::to_string(&k.labels)?;
    for (part, (body, aux)) in t.parts.iter().enumerate() {
        tx.prepare_cached(
            "INSERT INTO tickets(source_id, ticket_id, part, status, labels, created, updated)
             VALUES(?1,?2,?3,?4,?5,?6,?7)",
        )?
        .execute(params![
            source_id,
            k.id,
            part as i64,
            k.status,
            labels,
            k.created,
            k.updated
        ])?;
        let rowid = tx.last_insert_rowid();
        tx.prepare_cached(
            "INSERT INTO tickets_fts(rowid, title, body, labels, aux) VALUES(?1,?2,?3,?4,?5)",
        )?
        .execute(params![rowid, k.title, body, k.labels.join(" "), aux])?;
        stats.add(Table::Tickets, &[&k.title, body, &k.labels.join(" "), aux]);
    }
    Ok(())
}

/// Rebuild the inverted indexes of session chunks and tickets from their
/// stored rows (FTS5 `rebuild`): repairs an index that no longer matches
/// its rows, as `doctor` reports it. Text damaged in the rows themselves
/// comes back only by indexing the sources again (`recall index --full`).
pub fn rebuild_source_fts(conn: &Connection) -> Result<()> {
    crate::store::bulk::rebuild(conn)
}
