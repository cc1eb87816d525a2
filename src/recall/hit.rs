//! What recall returns: plain data, rendered by `render`.

use serde::Serialize;

use crate::error::{Error, Result};
use crate::store::Scope;

/// The kind of thing a hit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum HitKind {
    Record,
    Ticket,
    Session,
}

impl HitKind {
    pub fn as_str(self) -> &'static str {
        match self {
            HitKind::Record => "record",
            HitKind::Ticket => "ticket",
            HitKind::Session => "session",
        }
    }
}

impl std::str::FromStr for HitKind {
    type Err = Error;

    /// `record`, `session` or `ticket`, in any case (MCP clients send
    /// `Record` as well).
    fn from_str(s: &str) -> Result<HitKind> {
        [HitKind::Record, HitKind::Session, HitKind::Ticket]
            .into_iter()
            .find(|k| k.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                Error::invalid(format!("unknown kind '{s}': use record, session or ticket"))
            })
    }
}

/// Where a hit came from.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct HitSource {
    /// A record's file (absolute), or a transcript or ticket file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub message_ids: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_range: Option<[i64; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ticket_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_timestamp: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_timestamp: Option<String>,
    /// The teammate's host a passage was pulled from by `recall sync`
    /// (absent: this host's own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

impl HitSource {
    /// A source at `path` (a transcript or ticket file), with its host when
    /// it was pulled from another host (`sync://<host>:<path>`).
    pub fn at(path: String) -> HitSource {
        let host = path
            .strip_prefix("sync://")
            .and_then(|rest| rest.split_once(':'))
            .map(|(host, _)| host.to_string());
        HitSource {
            path: Some(path),
            host,
            ..HitSource::default()
        }
    }
}

/// Marks that open and close a highlighted match inside [`Hit::snippet`];
/// renderers turn them into colour, `**bold**` or nothing.
pub const HL_OPEN: char = '\u{2}';
pub const HL_CLOSE: char = '\u{3}';

/// One ranked result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    /// 1-based position in the final ranking.
    pub rank: usize,
    /// Fused score in `[0, 1]`; higher is better.
    pub score: f64,
    pub kind: HitKind,
    pub scope: Scope,
    /// Record id, chunk id (`<session>#<seq>`) or ticket id.
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// Record key, session title or ticket title.
    pub title: String,
    /// A short excerpt with [`HL_OPEN`]/[`HL_CLOSE`] around matches.
    pub snippet: String,
    /// The full text of the hit.
    pub text: String,
    pub source: HitSource,
    #[serde(skip)]
    pub pinned: bool,
    #[serde(skip)]
    pub importance: u8,
    /// Unix seconds of the newest content in the hit.
    #[serde(skip)]
    pub updated: Option<i64>,
    /// Why it scored what it did (`query --explain`); kept through ranking
    /// and dropped from the response unless asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<Explain>,
    /// The id of a newer hit in the same answer that states a different
    /// value for the same thing (`recall::stale`): this one may be out of
    /// date.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale_by: Option<String>,
    /// The cosine of its stored vector with the question's, when the dense
    /// side ran (`recall::dense`) and the row has a vector of that model:
    /// the prompt hook's semantic gate reads it.
    #[serde(skip)]
    pub cosine: Option<f64>,
}

/// One answer-type lift: `time` (the question asks when), `user` (the
/// user wrote it), `period` (a named or relative time).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Lift {
    pub name: String,
    pub factor: f64,
}

/// A hit's score taken apart, stage by stage (see `recall::rank`):
/// `base = bm25_share × bm25 + (1 − bm25_share) × passage` (each divided
/// by its list's best), times the list's `coverage`, times each boost and
/// lift, plus `session_evidence`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Explain {
    /// FTS5 bm25 (higher is better), and divided by the list's best.
    pub bm25: f64,
    pub bm25_norm: f64,
    /// The Rust passage score of the text shown, the length pivot it was
    /// divided by, and the result divided by the list's best.
    pub passage: f64,
    pub length_pivot: f64,
    pub passage_norm: f64,
    /// bm25's share of the base score.
    pub bm25_share: f64,
    /// The normalised score within its list.
    pub base: f64,
    /// The list's calibration: how much of the question its best hit
    /// covers, against the best list's.
    pub coverage: f64,
    /// Kind weight, pin, importance, recency and salience factors.
    pub kind: f64,
    pub pinned: f64,
    pub importance: f64,
    pub recency: f64,
    pub salience: f64,
    /// Answer-type lifts that applied.
    pub lifts: Vec<Lift>,
    /// Added for the other matching messages of its session (scaled by the
    /// `session_coverage` lift when there is one, so the score is still the
    /// product of the factors and lifts plus this).
    pub session_evidence: f64,
    /// Hybrid recall's dense side, when it ran (`recall::dense`): the
    /// cosine of the hit's stored vector with the question's, and whether
    /// the dense side rescued it (its score then is the place it was given,
    /// not the product above).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dense: Option<Dense>,
}

/// The dense side of a hit's score (see [`Explain::dense`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Dense {
    pub cosine: f64,
    pub rescued: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kind_is_read_in_any_case_and_anything_else_says_what_to_use() {
        assert_eq!("record".parse::<HitKind>().ok(), Some(HitKind::Record));
        assert_eq!("Session".parse::<HitKind>().ok(), Some(HitKind::Session));
        assert_eq!("TICKET".parse::<HitKind>().ok(), Some(HitKind::Ticket));
        let e = "records".parse::<HitKind>().unwrap_err();
        assert!(matches!(e, Error::Invalid(_)), "{e}");
        assert_eq!(
            e.to_string(),
            "unknown kind 'records': use record, session or ticket"
        );
    }
}
