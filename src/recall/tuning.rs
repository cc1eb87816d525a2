//! The ranking knobs (`[recall.tuning]` in `config.toml`): each one a
//! named, documented field with its default and its range, in this one
//! place. `config.rs` reports the ranges with the file and line, and
//! docs/configuration.md lists the defaults (a test keeps it in step).

use serde::Serialize;

/// Ranking knobs; the defaults were chosen with the quality harness
/// (`examples/eval.rs`).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Tuning {
    /// The planner's cost budget per table, in work units of
    /// `terms × (Σ df + docs / 1000)` (see `recall::plan::search_cost`),
    /// for the whole query: each table gets a share in proportion to its
    /// rows, and searches its terms rarest first within that share.
    /// 150,000 is about 30 ms of FTS5 work (mostly bm25) at 1,000,000
    /// passages.
    pub plan_budget: i64,
    /// Ignored: replaced by `plan_budget` (kept so that older config
    /// files still load).
    #[serde(skip_serializing)]
    pub max_terms: Option<usize>,
    /// Candidates fetched from each table.
    pub candidates: usize,
    /// Size of a session hit's window of messages, in characters.
    pub window_chars: usize,
    /// Most hits from one session.
    pub per_session: usize,
    /// Context of a session hit: its neighbouring messages, nearest first,
    /// while each side's added text stays within this many characters (0
    /// turns context off). The best session hit gets `lead_context_chars`
    /// instead.
    pub context_chars: usize,
    /// Context on each side of the best session hit (see `context_chars`).
    pub lead_context_chars: usize,
    /// Session evidence: a session hit's score gains this share of the
    /// mean of its session's next two best hits, so a session with several
    /// matching messages outranks one lucky message.
    pub session_share: f64,
    /// Session coverage, for agents' work sessions (those with tool
    /// output; chat sessions are left alone): each of their hits is scaled
    /// by `(coverage / best coverage) ^ session_coverage_power`, where a
    /// session's coverage is the share of the question (each word once, at
    /// its idf) its candidates hold between them. So the session that
    /// worked on an issue, which names all of its title somewhere,
    /// outranks one whose short tool output holds its rarest word. 0 turns
    /// it off. 0.5 against 0: swe-sessions hit@1 +0.026 (titles) and
    /// +0.012 (full issues); no chat set changes, having no tool output.
    pub session_coverage_power: f64,
    /// Near-duplicate threshold (Jaccard of word sets).
    pub max_jaccard: f64,
    /// Kind weights.
    pub weight_record: f64,
    pub weight_ticket: f64,
    pub weight_session: f64,
    /// Recency half-life.
    pub half_life_days: f64,
    /// bm25 column weights: records (key, body, tags, aux), chunks (title,
    /// body, aux), tickets (title, body, labels, aux).
    pub record_columns: Vec<f64>,
    pub chunk_columns: Vec<f64>,
    pub ticket_columns: Vec<f64>,
    /// Share of the normalised bm25 score in a hit's score within its list;
    /// the rest is the passage score of the text actually returned. 0.7
    /// beat 0.5 on every set at once (LoCoMo, BEAM, BEAM merged, SciFact;
    /// no category down more than 0.005); 0.8 cost a BEAM category 0.018.
    pub bm25_share: f64,
    /// Calibration across lists: each list's scores are scaled by
    /// `(coverage / best coverage) ^ coverage_power`, where a list's
    /// coverage is how much of the question (idf over all tables) its best
    /// hit matches. 0 turns it off: every list's best hit then scores 1.
    pub coverage_power: f64,
    /// Passage scores: weight of the bonus for query words found near each
    /// other (see `passage::Scorer::with_proximity`; 0 turns it off). 1.0
    /// against 0: BEAM +0.006, BEAM merged +0.010, SciFact +0.001, LoCoMo
    /// -0.003 (2.0 gave the same shape, with SciFact -0.001).
    pub proximity: f64,
    /// Pivoted length normalisation of passage scores (see
    /// `rank::normalise_length`): the slope from 0 (off) to 1 (a score per
    /// word of the list's mean length). 0.75 against 0: LoCoMo +0.005,
    /// BEAM +0.025, BEAM merged +0.030, SciFact +0.000, no category down
    /// more than 0.003. 1.0 gave BEAM +0.037 but SciFact -0.004; 0.5 gave
    /// less everywhere but SciFact (+0.003). Dividing the saturation
    /// constant instead (bm25's own form, `tf / (tf + K)`) gave half the
    /// BEAM gain. Records and session passages; tickets and agents' work
    /// sessions have their own slopes, `ticket_length_norm` and
    /// `work_length_norm`.
    pub length_norm: f64,
    /// `length_norm` for ticket lists. A ticket part is a document, not a
    /// turn of a chat: a longer abstract is no more likely to repeat the
    /// question than to answer it, and bm25 (most of the score) already
    /// normalises the same text. 0 against 0.75 on SciFact: test queries
    /// 0.696 both, train queries (809, not used for any other default)
    /// 0.703 against 0.695, the FTS5 floor's 0.701; 0.25 and 0.5 gave
    /// 0.697 on train.
    pub ticket_length_norm: f64,
    /// `length_norm` for the passages of agents' work sessions (those with
    /// tool output), normalised among themselves. A window of code and
    /// tool output is not a turn of a chat: the short grep line that names
    /// a function is no likelier to be the session's work than the
    /// reasoning around it. 0.5 against 0.75 on swe-sessions: hit@1 0.966
    /// -> 0.972 with titles (3 queries up, none down), 0.986 both with
    /// full issues; 0.25 gave 0.972 and 0.984, 0 gave 0.970 and 0.986.
    /// Chat sets have no tool output, so they do not move; 0.5 for every
    /// list cost LoCoMo 0.005 and BEAM's instruction_following 0.018.
    /// Among agent sessions as distractors (`eval scale`), LoCoMo went
    /// from 0.784 to 0.780 at 4x and from 0.771 to 0.770 at 16x.
    pub work_length_norm: f64,
    /// A question of several lines whose first line reads as a title (a
    /// ticket: its title, then its description and logs): each term of
    /// that line weighs this many times its idf in the passage scores, and
    /// is searched twice over, so bm25 counts it twice (as BM25 counts a
    /// word the query repeats). A ticket's title says what it is about; its
    /// body mostly says where it happened. 1 turns it off; single-line
    /// questions are never affected. 2 against 1: jira-dups nDCG@10 0.519
    /// -> 0.547, recall@10 0.625 -> 0.654; swe-sessions full issues hit@1
    /// 0.964 -> 0.974; every other set asks in one line.
    pub title_weight: f64,
    /// Answer type: for a question that asks when (`recall::temporal`),
    /// each hit whose text mentions a time is multiplied by
    /// `1 + this × ln(1 / share)`, `share` being the part of the
    /// candidates that mention one; so the lift fades where times are
    /// common (a long history full of dates) and vanishes when every
    /// candidate has one. 0 turns it off. Against 0, on the questions that
    /// ask when: 0.1 LoCoMo +0.013, BEAM +0.028, BEAM merged +0.000; 0.2
    /// +0.022 / +0.028 / -0.006 (whole sets: LoCoMo +0.003, both halves of
    /// its conversations; BEAM +0.002; BEAM merged -0.000); 0.5 +0.030 /
    /// -0.003 / -0.031. A fixed factor (1.5) cost BEAM merged's
    /// questions 0.025.
    pub temporal_boost: f64,
    /// The subject of the question (`recall::subject`): for a question in
    /// the first person, each session hit the user wrote (in a chat with
    /// unnamed speakers) is multiplied by `1 + this × ln(1 / share)`,
    /// `share` being the part of the candidates the user wrote. 0 turns it
    /// off. Against 0: 0.1 BEAM +0.018, BEAM merged +0.022; 0.2 +0.020 /
    /// +0.031; 0.3 +0.030 / +0.034; 0.6 +0.043 / +0.034; LoCoMo (named
    /// speakers) and SciFact (tickets) unchanged. BEAM summarization, whose
    /// evidence is 63% assistant replies, fell 0.015 at 0.2 (to 0.081, its
    /// floor 0.016).
    pub subject_boost: f64,
    /// Periods the question names (`recall::period`: "in March 2024",
    /// "in June", "in 2023"): each hit whose time falls in one is
    /// multiplied by `1 + this × ln(1 / share)`, `share` being the part of
    /// the candidates that do. 0 turns it off. Against 0: 0.2 LoCoMo
    /// +0.002 (its 264 questions that name a month or year: 0.823 ->
    /// 0.836; both halves of its conversations gain), BEAM -0.000, BEAM
    /// merged -0.001, SciFact unchanged; 0.5 +0.003 / -0.001 / -0.002.
    /// BEAM's 19 such questions lose (0.2: -0.013 per conversation,
    /// -0.036 merged): its times are coarse batch anchors, and its
    /// questions name the dates of plans, not of messages. Times relative
    /// to now ("yesterday", "last week", "two days ago": `recall::relative`)
    /// are lifted the same way.
    pub period_boost: f64,
    /// A pinned record's score is multiplied by this.
    pub pinned_boost: f64,
    /// Importance (0-100) spreads a hit's score over `1 ± this / 2`: the
    /// default 0.4 gives 0.8 at importance 0 and 1.2 at 100 (records
    /// without one have 50, so 1.0).
    pub importance_spread: f64,
    /// Recency: a hit keeps `1 - this` of its score however old it is, and
    /// the rest decays with `half_life_days` since its last update.
    pub recency_share: f64,
    /// Salience: a hit that earlier queries returned gains
    /// `this × ln(1 + times returned)`, decaying with
    /// `salience_half_life_days` since it was last returned.
    pub salience_weight: f64,
    /// The half-life of salience, in days.
    pub salience_half_life_days: f64,
}

/// A term's weight is its idf times the weight of its kind: an identifier
/// (`parse_config`, `HTTP_TIMEOUT`) tells more than a word, a quoted phrase
/// more than its words apart, and a stem (the plural or past tense of a
/// question's word) less than the word itself.
pub const IDENTIFIER_WEIGHT: f64 = 1.6;
/// See [`IDENTIFIER_WEIGHT`].
pub const PHRASE_WEIGHT: f64 = 1.4;
/// See [`IDENTIFIER_WEIGHT`].
pub const WORD_WEIGHT: f64 = 1.0;
/// See [`IDENTIFIER_WEIGHT`].
pub const STEM_WEIGHT: f64 = 0.6;

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            plan_budget: 150_000,
            max_terms: None,
            candidates: 60,
            window_chars: 800,
            per_session: 5,
            context_chars: 150,
            lead_context_chars: 600,
            session_share: 0.3,
            session_coverage_power: 0.5,
            max_jaccard: 0.8,
            weight_record: 1.0,
            weight_ticket: 0.85,
            weight_session: 0.7,
            half_life_days: 90.0,
            record_columns: vec![4.0, 1.0, 2.0, 1.0],
            chunk_columns: vec![1.0, 1.0, 1.0],
            ticket_columns: vec![2.0, 1.0, 1.5, 1.0],
            bm25_share: 0.7,
            coverage_power: 0.5,
            proximity: 1.0,
            length_norm: 0.75,
            ticket_length_norm: 0.0,
            work_length_norm: 0.5,
            title_weight: 2.0,
            temporal_boost: 0.2,
            subject_boost: 0.2,
            period_boost: 0.2,
            pinned_boost: 1.25,
            importance_spread: 0.4,
            recency_share: 0.15,
            salience_weight: 0.05,
            salience_half_life_days: 30.0,
        }
    }
}

impl Tuning {
    /// Every value out of its range, as (dotted config key, "is X; it must
    /// be Y"): the one place the ranges live (`config.rs` reports them
    /// with the file and line).
    pub fn problems(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        let counts = [
            (
                "recall.tuning.plan_budget",
                self.plan_budget.max(0) as usize,
                1,
            ),
            ("recall.tuning.candidates", self.candidates, 1),
            ("recall.tuning.window_chars", self.window_chars, 50),
            ("recall.tuning.per_session", self.per_session, 1),
        ];
        for (key, v, min) in counts {
            if v < min {
                out.push((key, format!("is {v}; it must be at least {min}")));
            }
        }
        let numbers = [
            ("recall.tuning.session_share", self.session_share, 0.0, 1.0),
            (
                "recall.tuning.session_coverage_power",
                self.session_coverage_power,
                0.0,
                4.0,
            ),
            ("recall.tuning.max_jaccard", self.max_jaccard, 0.0, 1.0),
            (
                "recall.tuning.weight_record",
                self.weight_record,
                0.0,
                100.0,
            ),
            (
                "recall.tuning.weight_ticket",
                self.weight_ticket,
                0.0,
                100.0,
            ),
            (
                "recall.tuning.weight_session",
                self.weight_session,
                0.0,
                100.0,
            ),
            (
                "recall.tuning.half_life_days",
                self.half_life_days,
                0.01,
                1e6,
            ),
            ("recall.tuning.bm25_share", self.bm25_share, 0.0, 1.0),
            (
                "recall.tuning.coverage_power",
                self.coverage_power,
                0.0,
                4.0,
            ),
            ("recall.tuning.proximity", self.proximity, 0.0, 100.0),
            ("recall.tuning.length_norm", self.length_norm, 0.0, 1.0),
            (
                "recall.tuning.work_length_norm",
                self.work_length_norm,
                0.0,
                1.0,
            ),
            (
                "recall.tuning.ticket_length_norm",
                self.ticket_length_norm,
                0.0,
                1.0,
            ),
            ("recall.tuning.title_weight", self.title_weight, 1.0, 10.0),
            (
                "recall.tuning.temporal_boost",
                self.temporal_boost,
                0.0,
                10.0,
            ),
            ("recall.tuning.subject_boost", self.subject_boost, 0.0, 10.0),
            ("recall.tuning.period_boost", self.period_boost, 0.0, 10.0),
            ("recall.tuning.pinned_boost", self.pinned_boost, 1.0, 10.0),
            (
                "recall.tuning.importance_spread",
                self.importance_spread,
                0.0,
                2.0,
            ),
            ("recall.tuning.recency_share", self.recency_share, 0.0, 1.0),
            (
                "recall.tuning.salience_weight",
                self.salience_weight,
                0.0,
                1.0,
            ),
            (
                "recall.tuning.salience_half_life_days",
                self.salience_half_life_days,
                0.01,
                1e6,
            ),
        ];
        for (key, v, lo, hi) in numbers {
            if !(v.is_finite() && (lo..=hi).contains(&v)) {
                out.push((
                    key,
                    format!("is {v}; it must be a number from {lo} to {hi}"),
                ));
            }
        }
        let columns = [
            (
                "recall.tuning.record_columns",
                &self.record_columns,
                "key, body, tags, aux",
            ),
            (
                "recall.tuning.chunk_columns",
                &self.chunk_columns,
                "title, body, aux",
            ),
            (
                "recall.tuning.ticket_columns",
                &self.ticket_columns,
                "title, body, labels, aux",
            ),
        ];
        for (key, v, names) in columns {
            let n = names.split(", ").count();
            if v.len() != n || v.iter().any(|w| !(w.is_finite() && *w >= 0.0)) {
                out.push((
                    key,
                    format!("is {v:?}; it must be {n} weights of 0 or more ({names})"),
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_in_range() {
        assert_eq!(Tuning::default().problems(), Vec::new());
    }

    /// docs/configuration.md lists every knob with its default: a knob
    /// added here and not there fails.
    #[test]
    fn every_knob_is_documented_with_its_default() {
        let doc = include_str!("../../docs/configuration.md");
        let defaults = toml::Value::try_from(Tuning::default()).unwrap();
        for (key, value) in defaults.as_table().unwrap() {
            let shown = match value {
                toml::Value::Float(f) if f.fract() == 0.0 => format!("{f:.1}"),
                toml::Value::Array(a) => format!(
                    "[{}]",
                    a.iter()
                        .map(|v| match v {
                            toml::Value::Float(f) if f.fract() == 0.0 => format!("{f:.1}"),
                            v => v.to_string(),
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                v => v.to_string(),
            };
            let line = doc
                .lines()
                .find(|l| l.starts_with(&format!("{key} = ")))
                .unwrap_or_else(|| panic!("docs/configuration.md has no line for {key}"));
            assert!(
                line.replace('_', "")
                    .contains(&format!("= {}", shown.replace('_', ""))),
                "{key}: the docs say {line:?}, the default is {shown}"
            );
        }
    }
}
