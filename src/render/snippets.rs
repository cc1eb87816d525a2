//! The human-readable ranked list, coloured on a TTY unless `NO_COLOR`.

use std::fmt::Write;

use super::highlight;
use crate::recall::{Hit, HitKind, Response};

/// Whether to use ANSI colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Plain,
    Color,
}

fn source_line(h: &Hit) -> String {
    let s = &h.source;
    match h.kind {
        HitKind::Record => s.path.clone().unwrap_or_default(),
        HitKind::Session => {
            let range = s
                .message_range
                .map(|[a, b]| format!(" messages {a}-{b}"))
                .unwrap_or_default();
            format!("session {}{range}", s.session_id.as_deref().unwrap_or("?"))
        }
        HitKind::Ticket => format!("ticket {}", s.ticket_id.as_deref().unwrap_or("?")),
    }
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
        Style::Plain => ("[", "]"),
    };
    let mut out = String::new();
    for h in &resp.hits {
        let cat = h
            .category
            .as_deref()
            .map(|c| format!("/{c}"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{b}{}. {}{reset} {dim}[{:.3}] {}{cat} ({}){reset}",
            h.rank,
            h.title,
            h.score,
            h.kind.as_str(),
            h.scope
        );
        let _ = writeln!(out, "   {}", highlight(&h.snippet, open, close));
        let _ = writeln!(out, "   {dim}{}{reset}", source_line(h));
    }
    out
}
