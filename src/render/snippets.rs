//! The human-readable ranked list, coloured on a TTY unless `NO_COLOR`.

use std::borrow::Cow;
use std::fmt::Write;

use super::highlight;
use crate::recall::{Hit, HitKind, Response, HL_CLOSE, HL_OPEN};

/// The marks around a match in plain (uncoloured) snippets. Session text
/// already uses square brackets (`[tool Bash]`, `[exec]`, `[output left
/// out: …]`) and Markdown uses `*`, `_` and backticks; guillemets are
/// neither.
pub const MARK_OPEN: &str = "«";
/// See [`MARK_OPEN`].
pub const MARK_CLOSE: &str = "»";

/// Whether to use ANSI colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Plain,
    Color,
}

fn source_line(h: &Hit) -> String {
    let s = &h.source;
    match h.kind {
        HitKind::Record => printable(s.path.as_deref().unwrap_or_default()).into_owned(),
        HitKind::Session => {
            let range = s
                .message_range
                .map(|[a, b]| format!(" messages {a}-{b}"))
                .unwrap_or_default();
            format!(
                "session {}{range}",
                printable(s.session_id.as_deref().unwrap_or("?"))
            )
        }
        HitKind::Ticket => format!(
            "ticket {}",
            printable(s.ticket_id.as_deref().unwrap_or("?"))
        ),
    }
}

/// `s` with each control character but a line break, a tab and the
/// highlight marks ([`HL_OPEN`], [`HL_CLOSE`], which [`highlight`] turns
/// into guillemets or colour) replaced by U+FFFD: indexed text (a tool's
/// coloured output, a pasted log) may hold terminal escape sequences, and
/// this list goes to a terminal, where one would recolour it, move the
/// cursor or set the clipboard (OSC 52).
fn printable(s: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && !matches!(c, '\n' | '\t' | HL_OPEN | HL_CLOSE);
    if !s.chars().any(unsafe_char) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(
        s.chars()
            .map(|c| if unsafe_char(c) { '\u{FFFD}' } else { c })
            .collect(),
    )
}

/// Render a ranked list, one entry a hit.
#[tracing::instrument(level = "debug", skip_all)]
pub fn render_snippets(resp: &Response, style: Style) -> String {
    let (b, dim, hl, reset) = match style {
        Style::Color => ("\x1b[1m", "\x1b[2m", "\x1b[1;33m", "\x1b[0m"),
        Style::Plain => ("", "", "", ""),
    };
    let (open, close) = match style {
        Style::Color => (hl, reset),
        Style::Plain => (MARK_OPEN, MARK_CLOSE),
    };
    let mut out = String::new();
    for h in &resp.hits {
        let cat = h
            .category
            .as_deref()
            .map(|c| format!("/{}", printable(c)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{b}{}. {}{reset} {dim}[{:.3}] {}{cat} ({}){reset}",
            h.rank,
            printable(&h.title),
            h.score,
            h.kind.as_str(),
            h.scope
        );
        let _ = writeln!(out, "   {}", highlight(&printable(&h.snippet), open, close));
        let _ = writeln!(out, "   {dim}{}{reset}", source_line(h));
        if let Some(id) = &h.stale_by {
            // The newer record by its rank when it is in this list.
            let newer = match resp.hits.iter().find(|n| &n.id == id) {
                Some(n) => format!("hit {}", n.rank),
                None => format!("record {id}"),
            };
            let _ = writeln!(
                out,
                "   {dim}possibly stale: the newer {newer} says otherwise{reset}"
            );
        }
        if let Some(e) = &h.explain {
            let _ = writeln!(out, "   {dim}why: {}{reset}", why(e));
        }
    }
    out
}

/// One line of `query --explain`: the score's parts, stage by stage.
fn why(e: &crate::recall::Explain) -> String {
    let mut s = format!(
        "base {:.3} = {:.2} x bm25 {:.3} + {:.2} x passage {:.3} (raw {:.2} / length {:.2}); coverage x{:.3}; kind x{:.2} pin x{:.2} importance x{:.2} recency x{:.3} salience x{:.3}",
        e.base,
        e.bm25_share,
        e.bm25_norm,
        1.0 - e.bm25_share,
        e.passage_norm,
        e.passage,
        e.length_pivot,
        e.coverage,
        e.kind,
        e.pinned,
        e.importance,
        e.recency,
        e.salience
    );
    for l in &e.lifts {
        let _ = write!(s, "; {} lift x{:.3}", l.name, l.factor);
    }
    if e.session_evidence > 0.0 {
        let _ = write!(s, "; session evidence +{:.3}", e.session_evidence);
    }
    if let Some(d) = &e.dense {
        let _ = write!(s, "; dense cosine {:.3}", d.cosine);
        if d.rescued {
            s.push_str(", rescued by the dense side (placed after the best lexical hits)");
        }
    }
    s
}
