//! Context added to a session hit after ranking: the neighbouring messages
//! needed to understand it. A hit is one message (or one passage of a long
//! message); the messages just before it and just after it (most often the
//! reply that holds the answer) are added, nearest first, while each side's
//! added text stays within a number of characters: `lead_context_chars` for
//! the best session hit, `context_chars` for the others (`search::recall`
//! chooses). So a chat of short turns shows the exchange around the match,
//! while a long assistant reply never crowds out the user's short
//! statement. The hit then cites every message its text shows.
//!
//! Expansion happens while hits are selected (`rank::select`): an expanded
//! hit that would pass the token budget is kept unexpanded, so context
//! never displaces the matched message.

use rusqlite::{Connection, OptionalExtension};

use super::candidates::Candidate;
use crate::error::Result;

/// One neighbouring message: its text (all its passages) and citation.
struct Neighbour {
    text: String,
    id: Option<String>,
    ts: Option<i64>,
}

/// Message `msg` of source `source_id`, if it has at most `max_chars`
/// characters of text.
fn neighbour(
    conn: &Connection,
    source_id: i64,
    msg: i64,
    max_chars: usize,
) -> Result<Option<Neighbour>> {
    if msg < 0 {
        return Ok(None);
    }
    let mut st = conn.prepare_cached(
        "SELECT f.body, c.message_ids, c.first_ts FROM chunks c JOIN chunks_fts f ON f.rowid = c.rowid
         WHERE c.source_id = ?1 AND c.msg_first = ?2 AND c.msg_last = ?2 ORDER BY c.seq",
    )?;
    let rows = st.query_map([source_id, msg], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, Option<i64>>(2)?,
        ))
    })?;
    let mut out: Option<Neighbour> = None;
    for row in rows {
        let (body, ids, ts) = row?;
        let n = out.get_or_insert_with(|| Neighbour {
            text: String::new(),
            id: serde_json::from_str::<Vec<String>>(&ids)
                .ok()
                .and_then(|v| v.into_iter().next()),
            ts,
        });
        if !n.text.is_empty() {
            n.text.push(' ');
        }
        // A later passage of one message starts with `speaker: … `.
        let body = match (n.text.is_empty(), body.split_once(": … ")) {
            (false, Some((_, rest))) => rest.to_string(),
            _ => body,
        };
        n.text.push_str(&body);
        if n.text.chars().count() > max_chars {
            return Ok(None);
        }
    }
    Ok(out)
}

/// The messages next to `from` in direction `step` (-1 or 1), nearest
/// first, while their text sums to at most `max_chars` and none is already
/// shown.
fn side(
    conn: &Connection,
    source: i64,
    from: i64,
    step: i64,
    max_chars: usize,
    shown: &dyn Fn(i64) -> bool,
) -> Result<Vec<Neighbour>> {
    let mut out = Vec::new();
    let mut left = max_chars;
    let mut msg = from + step;
    while !shown(msg) {
        let Some(n) = neighbour(conn, source, msg, left)? else {
            break;
        };
        left = left.saturating_sub(n.text.chars().count() + 2);
        out.push(n);
        msg += step;
    }
    Ok(out)
}

/// The source a chunk row belongs to.
fn source_of(conn: &Connection, rowid: i64) -> Result<Option<i64>> {
    Ok(conn
        .prepare_cached("SELECT source_id FROM chunks WHERE rowid = ?1")?
        .query_row([rowid], |r| r.get(0))
        .optional()?)
}

/// `c` with its short neighbours added, or `None` when there is nothing to
/// add (not a session hit, or both neighbours are long or missing).
/// `shown(msg)` says whether a message is already in a kept hit of the same
/// session; such a message is not repeated.
pub fn expand(
    conn: &Connection,
    c: &Candidate,
    max_chars: usize,
    shown: &dyn Fn(i64) -> bool,
) -> Result<Option<Candidate>> {
    let Some((first, last)) = c.range else {
        return Ok(None);
    };
    if max_chars == 0 {
        return Ok(None);
    }
    let Some(source) = source_of(conn, c.rowid)? else {
        return Ok(None);
    };
    let before = side(conn, source, first, -1, max_chars, shown)?;
    let after = side(conn, source, last, 1, max_chars, shown)?;
    if before.is_empty() && after.is_empty() {
        return Ok(None);
    }
    let mut e = c.clone();
    let src = &mut e.hit.source;
    // `before` runs outwards: the nearest message first.
    for b in &before {
        e.hit.text = format!("{}\n\n{}", b.text, e.hit.text);
        if let Some(id) = &b.id {
            src.message_ids.insert(0, id.clone());
        }
        if let Some(ts) = b.ts.and_then(|t| jiff::Timestamp::from_second(t).ok()) {
            src.first_timestamp = Some(ts.to_string());
        }
    }
    for a in &after {
        e.hit.text = format!("{}\n\n{}", e.hit.text, a.text);
        if let Some(id) = &a.id {
            src.message_ids.push(id.clone());
        }
        if let Some(ts) = a.ts.and_then(|t| jiff::Timestamp::from_second(t).ok()) {
            src.last_timestamp = Some(ts.to_string());
        }
    }
    e.range = Some((first - before.len() as i64, last + after.len() as i64));
    src.message_range = e.range.map(|(a, b)| [a, b]);
    Ok(Some(e))
}
