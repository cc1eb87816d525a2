//! Scoring a ranking against gold evidence messages, shared by the
//! conversation sets (LoCoMo, BEAM): the per-question metrics, their means
//! over groups of questions (categories, splits) and the table rows that
//! show them. See the crate doc for the rules.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::metrics::{covered, mean, ndcg_gold, ratio, take_budget};
use crate::report::{f3, opt3, Headline, Table};
use crate::runner::{Hit, Outcome};

/// Characters of hit text the headline metric may use.
pub const BUDGET: usize = 4000;
/// Hits (and distinct sessions) looked at by hit@5 and session@5.
const TOP: usize = 5;

/// The evidence of one question: message ids and the sessions holding them.
#[derive(Debug, Default, Clone)]
pub struct Gold {
    pub ids: BTreeSet<String>,
    pub sessions: BTreeSet<String>,
}

/// How one ranking did on one question.
#[derive(Serialize)]
pub struct Scored {
    pub budget_recall: f64,
    pub recall10: f64,
    /// Any gold id covered by the top 5 hits.
    pub hit5: f64,
    pub hit10: f64,
    /// Any gold session among the first 5 distinct sessions of the hits.
    pub session5: f64,
    pub ndcg10: f64,
    /// Hits taken within the budget, and their characters.
    pub taken: usize,
    pub chars_used: usize,
    pub covered_budget: Vec<String>,
    pub covered10: Vec<String>,
    pub engine_ms: Option<f64>,
    pub wall_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The hits taken within the budget, or the top 10 when more.
    pub hits: Vec<Hit>,
}

fn flag(b: bool) -> f64 {
    if b {
        1.0
    } else {
        0.0
    }
}

/// The distinct `source.session_id`s of `hits` in rank order, at most `k`.
fn first_sessions(hits: &[Hit], k: usize) -> Vec<&str> {
    let mut seen: Vec<&str> = Vec::new();
    for s in hits.iter().filter_map(|h| h.session_id.as_deref()) {
        if seen.len() == k {
            break;
        }
        if !seen.contains(&s) {
            seen.push(s);
        }
    }
    seen
}

pub fn score(o: &Outcome, gold: &Gold) -> Scored {
    let taken = take_budget(&o.hits, BUDGET);
    let top = |k: usize| &o.hits[..o.hits.len().min(k)];
    let in_budget = covered(taken, &gold.ids);
    let in10 = covered(top(10), &gold.ids);
    let sessions = first_sessions(&o.hits, TOP);
    Scored {
        budget_recall: ratio(in_budget.len(), gold.ids.len()),
        recall10: ratio(in10.len(), gold.ids.len()),
        hit5: flag(!covered(top(TOP), &gold.ids).is_empty()),
        hit10: flag(!in10.is_empty()),
        session5: flag(sessions.iter().any(|s| gold.sessions.contains(*s))),
        ndcg10: ndcg_gold(&o.hits, &gold.ids, 10),
        taken: taken.len(),
        chars_used: taken.iter().map(|h| h.chars).sum(),
        covered_budget: in_budget.into_iter().collect(),
        covered10: in10.into_iter().collect(),
        engine_ms: o.engine_ms,
        wall_ms: o.wall_ms,
        error: o.error.clone(),
        hits: top(taken.len().max(10)).to_vec(),
    }
}

/// Our score and the floor's for one question.
#[derive(Serialize)]
pub struct Scores {
    pub ours: Scored,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub floor: Option<Scored>,
}

impl Scores {
    pub fn new(ours: &Outcome, floor: Option<&Outcome>, gold: &Gold) -> Scores {
        Scores {
            ours: score(ours, gold),
            floor: floor.map(|o| score(o, gold)),
        }
    }
}

/// A per-question number to average.
pub type Metric = fn(&Scored) -> f64;

/// Mean of `metric` for us and for the floor (when every question has one).
pub fn avg(scores: &[&Scores], metric: Metric) -> (f64, Option<f64>) {
    let ours = mean(scores.iter().map(|s| metric(&s.ours)));
    let floor: Option<Vec<f64>> = scores
        .iter()
        .map(|s| s.floor.as_ref().map(metric))
        .collect();
    (ours, floor.map(mean))
}

/// Questions grouped by a label (category, split), in label order.
pub fn group_by<'a, T>(
    items: &'a [T],
    labels: &BTreeSet<String>,
    label: impl Fn(&T) -> &str,
    scores: impl Fn(&'a T) -> &'a Scores,
) -> BTreeMap<String, Vec<&'a Scores>> {
    let mut groups: BTreeMap<String, Vec<&Scores>> =
        labels.iter().map(|l| (l.clone(), Vec::new())).collect();
    for item in items {
        groups
            .entry(label(item).to_string())
            .or_default()
            .push(scores(item));
    }
    groups
}

/// The headline figures of a set (budget recall overall and per group, the
/// top-5 rates), added both as table rows and as [`Headline`]s of `set`.
pub struct Summary<'a> {
    pub set: &'a str,
    pub headlines: Vec<Headline>,
}

impl Summary<'_> {
    /// The headline row (`target` beside it) for all questions.
    pub fn overall(&mut self, t: &mut Table, all: &[&Scores], target: &str) {
        let (o, f) = avg(all, |s| s.budget_recall);
        t.row("**budgeted evidence recall**", f3(o), opt3(f), target);
        self.push("budget recall", o, f);
    }

    /// One row per group, named `"– <prefix><label> (n=N)"`.
    pub fn groups(&mut self, t: &mut Table, prefix: &str, groups: &BTreeMap<String, Vec<&Scores>>) {
        for (label, scores) in groups {
            let (o, f) = avg(scores, |s| s.budget_recall);
            let name = format!("{prefix}{label}");
            t.row(
                &format!("– {name} (n={})", scores.len()),
                f3(o),
                opt3(f),
                "",
            );
            if !scores.is_empty() {
                self.push(&format!("– {name} (n={})", scores.len()), o, f);
            }
        }
    }

    /// Any evidence in the top 5 hits, and among the first 5 sessions; also
    /// as headlines when `headline`.
    pub fn top5(&mut self, t: &mut Table, all: &[&Scores], headline: bool) {
        let metrics: [(&str, Metric); 2] = [
            ("any evidence in top 5 hits", |s| s.hit5),
            ("any evidence session in first 5 sessions", |s| s.session5),
        ];
        for (name, m) in metrics {
            let (o, f) = avg(all, m);
            t.row(name, f3(o), opt3(f), "");
            if headline {
                self.push(name, o, f);
            }
        }
    }

    fn push(&mut self, metric: &str, ours: f64, floor: Option<f64>) {
        self.headlines.push(Headline {
            set: self.set.to_string(),
            metric: metric.to_string(),
            ours,
            floor,
        });
    }
}

/// recall@10, hit@10, nDCG@10 and what the budget took.
pub fn detail_rows(t: &mut Table, all: &[&Scores]) {
    let metrics: [(&str, Metric); 3] = [
        ("recall@10", |s| s.recall10),
        ("hit@10", |s| s.hit10),
        ("nDCG@10 (per gold id)", |s| s.ndcg10),
    ];
    for (name, m) in metrics {
        let (o, f) = avg(all, m);
        t.row(name, f3(o), opt3(f), "");
    }
    let (o, f) = avg(all, |s| s.taken as f64);
    t.row("hits taken within budget (mean)", f3(o), opt3(f), "");
    let (o, f) = avg(all, |s| s.chars_used as f64);
    let chars = |x: f64| format!("{x:.0}");
    t.row(
        "chars used (mean)",
        chars(o),
        f.map_or("-".into(), chars),
        "",
    );
}

/// Failed and empty queries, skipped questions and hits by kind.
pub fn diagnostics_rows(t: &mut Table, ours: &[Outcome], skipped: usize) {
    let errors = ours.iter().filter(|o| o.error.is_some()).count();
    let empty = ours
        .iter()
        .filter(|o| o.error.is_none() && o.hits.is_empty())
        .count();
    t.row(
        "queries failed / with no hit",
        format!("{errors} / {empty}"),
        "-".into(),
        "",
    );
    t.row(
        "questions skipped (no evidence)",
        skipped.to_string(),
        "-".into(),
        "",
    );
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for o in ours {
        for h in &o.hits {
            *kinds.entry(h.kind.as_str()).or_default() += 1;
        }
    }
    let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
    t.row("hits returned by kind", kinds.join(", "), "-".into(), "");
    if let Some(e) = ours.iter().find_map(|o| o.error.as_deref()) {
        eprintln!("eval: first query error: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(session: &str, ids: &[&str]) -> Hit {
        Hit {
            chars: 10,
            session_id: Some(session.into()),
            message_ids: ids.iter().map(|s| s.to_string()).collect(),
            ..Hit::default()
        }
    }

    fn gold(ids: &[&str], sessions: &[&str]) -> Gold {
        Gold {
            ids: ids.iter().map(|s| s.to_string()).collect(),
            sessions: sessions.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn session5_counts_distinct_sessions() {
        let mut hits: Vec<Hit> = ["a", "a", "b", "c", "d", "b", "e"]
            .iter()
            .map(|s| hit(s, &[]))
            .collect();
        let o = Outcome {
            hits: hits.clone(),
            ..Outcome::default()
        };
        assert_eq!(score(&o, &gold(&["x"], &["e"])).session5, 1.0);
        hits.insert(0, hit("z", &[]));
        let o = Outcome {
            hits,
            ..Outcome::default()
        };
        assert_eq!(score(&o, &gold(&["x"], &["e"])).session5, 0.0);
    }

    #[test]
    fn hit5_looks_at_five_hits() {
        let mut hits: Vec<Hit> = (0..5).map(|_| hit("a", &["n"])).collect();
        hits.push(hit("a", &["g"]));
        let o = Outcome {
            hits,
            ..Outcome::default()
        };
        let s = score(&o, &gold(&["g"], &["a"]));
        assert_eq!((s.hit5, s.hit10), (0.0, 1.0));
    }
}
