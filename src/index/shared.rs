//! A source's passages as a portable document, for team memory.
//!
//! A host that shares a transcript or ticket file sends what its index
//! holds for it (the passages, already redacted, with their metadata), not
//! the file. A host that receives one writes it through [`write_source`],
//! the same code `recall index` uses, after the secret scanner has run on
//! it again: there is one way passages enter an index. The receiving host
//! keeps the sender's host id in `sources.host`, so pruning and re-indexing
//! never touch it, and recall shows where it came from.

use rusqlite::{params, Connection, OptionalExtension, Transaction};
use serde::{Deserialize, Serialize};

use super::sources::{delete_source, write_source, Ready};
use crate::error::{Error, Result};
use crate::ingest::chunk::{Chunk, Span};
use crate::ingest::model::{Launcher, Role, SessionMeta, Ticket};
use crate::ingest::{Action, Continuation, Format, Part, Prepared, SessionOut, TicketOut};
use crate::secrets;
use crate::store::TermDeltas;
use crate::text::aux_terms;

/// Everything the index holds for one source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceDoc {
    /// The format it was parsed as (`claude-code`, `codex`, `jsonl`, ...).
    pub format: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionDoc>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tickets: Vec<TicketDoc>,
}

impl SourceDoc {
    /// How many passages (session passages and ticket parts) it holds.
    pub fn passages(&self) -> usize {
        self.session.as_ref().map_or(0, |s| s.passages.len())
            + self.tickets.iter().map(|t| t.parts.len()).sum::<usize>()
    }
}

/// A session and its passages, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionDoc {
    pub session_id: String,
    pub launcher: String,
    pub parent_id: Option<String>,
    pub title: Option<String>,
    pub cwd: Option<String>,
    pub git_branch: Option<String>,
    pub first_ts: Option<i64>,
    /// What the session did (`sessions.did`), one commit subject each;
    /// absent in what hosts before it sent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub did: Vec<String>,
    pub passages: Vec<PassageDoc>,
}

/// One passage: a message (or part of a long one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PassageDoc {
    pub msg: usize,
    pub text: String,
    pub message_ids: Vec<String>,
    pub roles: Vec<String>,
    pub speakers: Vec<String>,
    pub first_ts: Option<i64>,
    pub last_ts: Option<i64>,
    pub spans: Vec<Span>,
}

/// A ticket and its parts (a long ticket is split into several).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TicketDoc {
    pub id: String,
    pub title: String,
    pub status: Option<String>,
    pub labels: Vec<String>,
    pub created: Option<i64>,
    pub updated: Option<i64>,
    pub parts: Vec<String>,
}

/// Read one stored source back as a document.
pub fn export_source(conn: &Connection, source_id: i64) -> Result<SourceDoc> {
    let format: String = conn
        .prepare_cached("SELECT format FROM sources WHERE id=?1")?
        .query_row([source_id], |r| r.get(0))?;
    Ok(SourceDoc {
        format,
        session: export_session(conn, source_id)?,
        tickets: export_tickets(conn, source_id)?,
    })
}

fn export_session(conn: &Connection, source_id: i64) -> Result<Option<SessionDoc>> {
    let head = conn
        .prepare_cached(
            "SELECT session_id, launcher, parent_id, title, cwd, git_branch, first_ts, did
             FROM sessions WHERE source_id=?1",
        )?
        .query_row([source_id], |r| {
            Ok(SessionDoc {
                session_id: r.get(0)?,
                launcher: r.get(1)?,
                parent_id: r.get(2)?,
                title: r.get(3)?,
                cwd: r.get(4)?,
                git_branch: r.get(5)?,
                first_ts: r.get(6)?,
                did: r
                    .get::<_, Option<String>>(7)?
                    .unwrap_or_default()
                    .lines()
                    .map(str::to_owned)
                    .collect(),
                passages: Vec::new(),
            })
        })
        .optional()?;
    let Some(mut doc) = head else {
        return Ok(None);
    };
    let mut st = conn.prepare_cached(
        "SELECT c.msg_first, f.body, c.message_ids, c.roles, c.speakers, c.first_ts, c.last_ts, c.spans
         FROM chunks c JOIN chunks_fts f ON f.rowid = c.rowid
         WHERE c.source_id=?1 ORDER BY c.seq",
    )?;
    let rows = st.query_map([source_id], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, String>(4)?,
            r.get::<_, Option<i64>>(5)?,
            r.get::<_, Option<i64>>(6)?,
            r.get::<_, String>(7)?,
        ))
    })?;
    for row in rows {
        let (msg, text, ids, roles, speakers, first_ts, last_ts, spans) = row?;
        doc.passages.push(PassageDoc {
            msg: msg.max(0) as usize,
            text,
            message_ids: serde_json::from_str(&ids)?,
            roles: serde_json::from_str(&roles)?,
            speakers: serde_json::from_str(&speakers)?,
            first_ts,
            last_ts,
            spans: parse_spans(&spans)?,
        });
    }
    Ok(Some(doc))
}

/// Spans are stored as `[[start, end, msg, id, ts], ...]` (older rows have
/// no `ts`).
fn parse_spans(json: &str) -> Result<Vec<Span>> {
    type Stored = (usize, usize, usize, Option<String>, Option<i64>);
    type Older = (usize, usize, usize, Option<String>);
    let rows: Vec<serde_json::Value> = serde_json::from_str(json)?;
    rows.into_iter()
        .map(|v| {
            let (start, end, msg, id, ts) = match serde_json::from_value::<Stored>(v.clone()) {
                Ok(s) => s,
                Err(_) => {
                    let (a, b, c, d) = serde_json::from_value::<Older>(v)?;
                    (a, b, c, d, None)
                }
            };
            Ok(Span {
                start,
                end,
                msg,
                id,
                ts,
            })
        })
        .collect()
}

fn export_tickets(conn: &Connection, source_id: i64) -> Result<Vec<TicketDoc>> {
    let mut st = conn.prepare_cached(
        "SELECT t.ticket_id, f.title, t.status, t.labels, t.created, t.updated, f.body
         FROM tickets t JOIN tickets_fts f ON f.rowid = t.rowid
         WHERE t.source_id=?1 ORDER BY t.rowid",
    )?;
    let rows = st.query_map([source_id], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, Option<String>>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, Option<i64>>(4)?,
            r.get::<_, Option<i64>>(5)?,
            r.get::<_, String>(6)?,
        ))
    })?;
    let mut out: Vec<TicketDoc> = Vec::new();
    for row in rows {
        let (id, title, status, labels, created, updated, body) = row?;
        match out.last_mut() {
            Some(t) if t.id == id => t.parts.push(body),
            _ => out.push(TicketDoc {
                id,
                title,
                status,
                labels: serde_json::from_str(&labels)?,
                created,
                updated,
                parts: vec![body],
            }),
        }
    }
    Ok(out)
}

/// Write a document received from `host` as the source `path` (replacing
/// what was there), through the indexer's own writer. Every text is
/// scanned for secrets again, the path too (a host before issue #37 sent
/// its paths as they were); returns how many were redacted.
pub fn import_source(
    tx: &Transaction,
    path: &str,
    host: &str,
    doc: SourceDoc,
    now: i64,
    stats: &mut TermDeltas,
) -> Result<usize> {
    write_import(tx, prepare_import(path, host, doc)?, now, stats)
}

/// A document received from another host, ready for the writer: what
/// [`import_source`] does before it writes (the secret scan, the term
/// counts), which needs no connection, so a pull prepares documents on
/// other threads while one writes, as `recall index` prepares files.
pub struct Import {
    ready: Ready,
    host: String,
    /// Secrets redacted from its texts.
    pub redactions: usize,
}

/// Prepare a document from `host` as the source `path` (see [`Import`]).
pub fn prepare_import(path: &str, host: &str, doc: SourceDoc) -> Result<Import> {
    let format: Format = doc.format.parse().map_err(|e: String| {
        Error::invalid(format!(
            "a shared source from host {host} has an unknown format ({e}); upgrade recall on this host"
        ))
    })?;
    let mut redactions = 0;
    let mut clean = |s: &mut String| {
        let (text, found) = secrets::redact(s);
        if !found.is_empty() {
            redactions += found.len();
            *s = text.into_owned();
        }
    };
    let session = doc.session.map(|s| session_out(s, &mut clean));
    let tickets = doc
        .tickets
        .into_iter()
        .map(|t| ticket_out(t, &mut clean))
        .collect();
    let path = secrets::redact_path(path);
    let prepared = Prepared {
        path: path.to_string(),
        action: Action::Replace,
        format: Some(format),
        size: 0,
        mtime: 0,
        hash: String::new(),
        offset: 0,
        cont: Continuation {
            lines: 0,
            session_id: session.as_ref().map(|s: &SessionOut| s.meta.id.clone()),
            codex: None,
        },
        parser_version: 0,
        session,
        tickets,
        problems: Vec::new(),
        unknown_lines: 0,
        error: None,
        bytes: 0,
        redactions: 0,
        part: Part::whole(Action::Replace, 0),
        continues: None,
    };
    Ok(Import {
        ready: Ready::new(prepared),
        host: host.to_string(),
        redactions,
    })
}

/// Write a prepared document through the indexer's own writer; returns
/// how many secrets were redacted from it.
pub fn write_import(
    tx: &Transaction,
    import: Import,
    now: i64,
    stats: &mut TermDeltas,
) -> Result<usize> {
    let path = import.ready.prepared.path.clone();
    write_source(tx, import.ready, now, stats)?;
    tx.prepare_cached("UPDATE sources SET host=?1 WHERE path=?2")?
        .execute(params![import.host, path])?;
    Ok(import.redactions)
}

fn session_out(s: SessionDoc, clean: &mut impl FnMut(&mut String)) -> SessionOut {
    let mut meta = SessionMeta {
        id: s.session_id,
        title: s.title,
        cwd: s.cwd,
        git_branch: s.git_branch,
        started_at: s.first_ts,
        parent_id: s.parent_id,
        did: s.did,
    };
    for field in [&mut meta.title, &mut meta.cwd, &mut meta.git_branch] {
        if let Some(t) = field.as_mut() {
            clean(t);
        }
    }
    meta.did.iter_mut().for_each(&mut *clean);
    let chunks: Vec<_> = s
        .passages
        .into_iter()
        .map(|p| {
            let mut text = p.text;
            let before = text.len();
            clean(&mut text);
            let mut spans = p.spans;
            if text.len() != before {
                // A redaction moved the offsets: the passage is one message,
                // so one span over the whole text stays true.
                spans.truncate(1);
                for sp in &mut spans {
                    sp.start = 0;
                    sp.end = text.len();
                }
            }
            let aux = aux_terms(&text);
            let chunk = Chunk {
                msg_first: p.msg,
                msg_last: p.msg,
                text,
                message_ids: p.message_ids,
                roles: p.roles.iter().map(|r| role(r)).collect(),
                speakers: p.speakers,
                first_ts: p.first_ts,
                last_ts: p.last_ts,
                spans,
            };
            crate::ingest::ChunkOut { chunk, aux }
        })
        .collect();
    SessionOut {
        meta,
        launcher: launcher(&s.launcher),
        new_messages: chunks
            .iter()
            .map(|c: &crate::ingest::ChunkOut| c.chunk.msg_first)
            .max()
            .map_or(0, |m| m + 1),
        chunks,
    }
}

fn ticket_out(t: TicketDoc, clean: &mut impl FnMut(&mut String)) -> TicketOut {
    let mut ticket = Ticket {
        id: t.id,
        title: t.title,
        status: t.status,
        labels: t.labels,
        created: t.created,
        updated: t.updated,
        body: String::new(),
        comments: Vec::new(),
    };
    clean(&mut ticket.title);
    for l in &mut ticket.labels {
        clean(l);
    }
    let parts = t
        .parts
        .into_iter()
        .map(|mut body| {
            clean(&mut body);
            let aux = aux_terms(&format!("{} {body}", ticket.title));
            (body, aux)
        })
        .collect();
    TicketOut { ticket, parts }
}

fn role(s: &str) -> Role {
    match s {
        "user" => Role::User,
        "system" => Role::System,
        "tool" => Role::Tool,
        _ => Role::Assistant,
    }
}

fn launcher(s: &str) -> Launcher {
    match s {
        "claude-code" => Launcher::ClaudeCode,
        "codex" => Launcher::Codex,
        "gemini" => Launcher::Gemini,
        "markdown" => Launcher::Markdown,
        _ => Launcher::Neutral,
    }
}

/// Whether a source is stored as `path` (redacted as [`import_source`]
/// stores it).
pub fn has_source_at(conn: &Connection, path: &str) -> Result<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM sources WHERE path=?1")?
        .query_row([secrets::redact_path(path)], |_| Ok(()))
        .optional()?
        .is_some())
}

/// Remove the source stored as `path` (redacted as [`import_source`]
/// stores it), if any (a teammate's tombstone).
pub fn remove_source_at(tx: &Transaction, path: &str, stats: &mut TermDeltas) -> Result<bool> {
    let id: Option<i64> = tx
        .prepare_cached("SELECT id FROM sources WHERE path=?1")?
        .query_row([secrets::redact_path(path)], |r| r.get(0))
        .optional()?;
    match id {
        Some(id) => {
            delete_source(tx, id, stats)?;
            Ok(true)
        }
        None => Ok(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 39: what a session did travels with it to other hosts,
    /// redacted on arrival like its title; a document from a host before
    /// it (no `did`) still reads.
    #[test]
    fn what_a_session_did_travels_and_is_redacted() -> Result<()> {
        let mut conn = Connection::open_in_memory()?;
        crate::store::migrate_for_tests(&mut conn);
        let token = format!("ghp_{}", "a1B2c3D4e5".repeat(4));
        let doc = |did: &str| {
            format!(
                r#"{{"format":"claude-code","session":{{"session_id":"s1","launcher":"claude-code",
                "parent_id":null,"title":"Work on x","cwd":null,"git_branch":null,"first_ts":null,{did}
                "passages":[{{"msg":0,"text":"hello","message_ids":["m0"],"roles":["user"],
                "speakers":[],"first_ts":null,"last_ts":null,"spans":[]}}]}},"tickets":[]}}"#
            )
        };
        let with = doc(&format!(r#""did":["feat: a","fix: token {token}"],"#));
        let tx = conn.transaction()?;
        let mut stats = TermDeltas::default();
        import_source(
            &tx,
            "sync://s1",
            "b",
            serde_json::from_str(&with)?,
            0,
            &mut stats,
        )?;
        let old: SourceDoc = serde_json::from_str(&doc(""))?;
        assert!(old.session.unwrap().did.is_empty());
        let back = export_source(&tx, 1)?.session.unwrap();
        assert_eq!(back.did.len(), 2, "{:?}", back.did);
        assert_eq!(back.did[0], "feat: a");
        assert!(!back.did[1].contains(&token), "{:?}", back.did);
        Ok(())
    }

    #[test]
    fn spans_read_both_stored_forms() -> Result<()> {
        let s = parse_spans(r#"[[0,5,2,"m1",17],[6,9,3,null]]"#)?;
        assert_eq!(s.len(), 2);
        assert_eq!(
            (s[0].start, s[0].end, s[0].msg, s[0].ts),
            (0, 5, 2, Some(17))
        );
        assert_eq!(s[0].id.as_deref(), Some("m1"));
        assert_eq!((s[1].msg, s[1].id.as_deref(), s[1].ts), (3, None, None));
        Ok(())
    }
}
