//! What a recall is asked and what it answers: the request with its
//! filters and tuning, the scopes it searches, and the response with the
//! rows it touched.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::Serialize;

use super::hit::{Hit, HitKind};
use super::plan::{Table, Weighted};
use super::tuning::Tuning;
use crate::records::Category;
use crate::store::{Db, ScopeDir};

/// One scope to search.
pub struct Target<'a> {
    pub dir: &'a ScopeDir,
    pub db: &'a Db,
}

/// A recall request.
#[derive(Debug, Clone)]
pub struct Request {
    pub query: String,
    pub limit: usize,
    /// Kinds to search; empty means all.
    pub kinds: Vec<HitKind>,
    pub category: Option<Category>,
    /// Unix seconds bounds on a hit's time.
    pub since: Option<i64>,
    pub until: Option<i64>,
    /// Only chunks of this session.
    pub session: Option<String>,
    /// Never chunks of this session, nor of its subagents
    /// (`<id>/agent-…`), nor passages that quote its id (a copy of it):
    /// the session a prompt is asked in is not its own evidence.
    pub exclude_session: Option<String>,
    /// Weigh the question's words as evidence for sessions
    /// ([`Response::evidence`]), for the prompt hook's relevance bar.
    pub evidence: bool,
    /// The share of the evidence weight a session hit's session must
    /// cover ([`Response::session_cover`]), and at least
    /// [`RELATIVE_COVER`](super::evidence::RELATIVE_COVER) of the
    /// best-covering session's, for the prompt hook's bar to pass it
    /// (`recall.hook_min_coverage`; 0 passes every cover). A hit below it
    /// fails whatever its words together, so their sessions are not
    /// counted ([`Response::together`] leaves it out).
    pub cover_bar: f64,
    /// Cap on the summed text of the hits, in estimated tokens.
    pub max_tokens: Option<usize>,
    /// Injected so ranking and expiry are deterministic in tests.
    pub now: Timestamp,
    pub tuning: Tuning,
    /// Keep each hit's score breakdown ([`super::Explain`]).
    pub explain: bool,
    /// Hybrid recall is asked for: the façade (`Memory::recall`) embeds
    /// the question and sets [`Request::dense`]. The prompt hook never
    /// does (see docs/semantic.md).
    pub hybrid: bool,
    /// Hybrid recall's dense side: the question's vector, and how it may
    /// rescue what the words miss (`recall::dense`); `None` is lexical
    /// recall alone.
    pub dense: Option<super::dense::DenseQuery>,
}

impl Request {
    /// A request with default filters and tuning.
    pub fn new(query: impl Into<String>, limit: usize, now: Timestamp) -> Request {
        Request {
            query: query.into(),
            limit,
            kinds: vec![],
            category: None,
            since: None,
            until: None,
            session: None,
            exclude_session: None,
            evidence: false,
            cover_bar: 0.0,
            max_tokens: None,
            now,
            tuning: Tuning::default(),
            explain: false,
            hybrid: false,
            dense: None,
        }
    }

    pub(super) fn wants(&self, k: HitKind) -> bool {
        let kind_ok = self.kinds.is_empty() || self.kinds.contains(&k);
        // A category names records; a session id names sessions.
        let cat_ok = self.category.is_none() || k == HitKind::Record;
        let session_ok = self.session.is_none() || k == HitKind::Session;
        kind_ok && cat_ok && session_ok
    }

    /// The time the question is asked from, in unix seconds: `now`, or
    /// `until` when it is earlier. A request for what was known up to a
    /// moment (a ticket filed then, looking for earlier ones) asks as of
    /// that moment, so recency is read from it: what came shortly before
    /// is recent, whatever the calendar says today.
    pub fn as_of(&self) -> i64 {
        let now = self.now.as_second();
        self.until.map_or(now, |u| u.min(now))
    }
}

/// Where a returned hit's row lives, for the salience update.
#[derive(Debug, Clone, Copy)]
pub struct Touched {
    pub target: usize,
    pub table: Table,
    pub rowid: i64,
}

/// The result of a recall.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Response {
    pub query: String,
    /// The terms searched (the union over tables), with weights.
    pub terms: Vec<Weighted>,
    pub hits: Vec<Hit>,
    pub timings_ms: BTreeMap<String, f64>,
    #[serde(skip)]
    pub touched: Vec<Touched>,
    /// Every term of the question, those memory does not hold included,
    /// weighed by how few sessions hold it (see `recall::evidence`); empty
    /// unless [`Request::evidence`].
    #[serde(skip)]
    pub evidence: Vec<Weighted>,
    /// The sessions those weights were counted over.
    #[serde(skip)]
    pub evidence_sessions: i64,
    /// For each session hit (by id), the sessions with a passage that
    /// holds every question word the hit holds (counted up to
    /// [`TOGETHER_CAP`] + 1; see `recall::evidence::sessions_together`),
    /// or at most 1 when the counts alone tell that no more can (see
    /// `recall::evidence::together_bound`); empty unless
    /// [`Request::evidence`], and without the hits whose session covers
    /// less than [`Request::cover_bar`] asks.
    #[serde(skip)]
    pub together: std::collections::HashMap<String, i64>,
    /// For each session hit (by id), the share of the question's evidence
    /// weight ([`Response::evidence`]) that its whole session holds; empty
    /// unless [`Request::evidence`].
    #[serde(skip)]
    pub session_cover: std::collections::HashMap<String, f64>,
    /// What hybrid recall's dense side did (vectors compared, hits
    /// rescued); `None` when [`Request::dense`] was not set.
    #[serde(skip)]
    pub dense: Option<super::dense::Rescued>,
}

/// Sessions counted, at most, by [`Response::together`] (one more is
/// counted, to tell "more").
pub const TOGETHER_CAP: i64 = 16;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn as_of_is_until_when_earlier_than_now() {
        let now = Timestamp::from_second(1_000_000).unwrap();
        let mut r = Request::new("q", 5, now);
        assert_eq!(r.as_of(), 1_000_000);
        r.until = Some(400);
        assert_eq!(r.as_of(), 400);
        r.until = Some(2_000_000);
        assert_eq!(r.as_of(), 1_000_000);
    }
}
