//! Metric functions: budgets, coverage, nDCG, percentiles.

use std::collections::{BTreeSet, HashMap};

use crate::runner::Hit;

/// The leading hits whose texts fit in `budget` characters together: taken
/// in rank order, stopping before the first hit that would pass the budget
/// (later, smaller hits are not taken instead).
pub fn take_budget(hits: &[Hit], budget: usize) -> &[Hit] {
    let mut used = 0;
    for (i, h) in hits.iter().enumerate() {
        used += h.chars;
        if used > budget {
            return &hits[..i];
        }
    }
    hits
}

/// The gold ids covered by the message ids of `hits`.
pub fn covered(hits: &[Hit], gold: &BTreeSet<String>) -> BTreeSet<String> {
    hits.iter()
        .flat_map(|h| &h.message_ids)
        .filter(|id| gold.contains(*id))
        .cloned()
        .collect()
}

/// `part / whole`, 0 when `whole` is 0.
pub fn ratio(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// `1 / log2(rank + 1)` for a 1-based rank.
fn discount(rank: usize) -> f64 {
    1.0 / ((rank + 1) as f64).log2()
}

/// nDCG@k per gold id: each gold id is found at the rank of the first of the
/// top `k` hits covering it; the ideal puts one gold id per rank from 1.
/// Capped at 1 (a hit may cover several gold ids at once).
pub fn ndcg_gold(hits: &[Hit], gold: &BTreeSet<String>, k: usize) -> f64 {
    let mut seen = BTreeSet::new();
    let mut dcg = 0.0;
    for (i, h) in hits.iter().take(k).enumerate() {
        for id in &h.message_ids {
            if gold.contains(id) && seen.insert(id.as_str()) {
                dcg += discount(i + 1);
            }
        }
    }
    let ideal: f64 = (1..=gold.len().min(k)).map(discount).sum();
    if ideal == 0.0 {
        0.0
    } else {
        (dcg / ideal).min(1.0)
    }
}

/// Standard (trec_eval / BEIR) nDCG@k over a ranked list of distinct doc ids
/// with graded relevance; gain = relevance.
pub fn ndcg_graded(docs: &[String], rels: &HashMap<String, i64>, k: usize) -> f64 {
    let gain = |g: i64| g.max(0) as f64;
    let dcg: f64 = docs
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, d)| gain(rels.get(d).copied().unwrap_or(0)) * discount(i + 1))
        .sum();
    let mut ideal: Vec<i64> = rels.values().copied().filter(|&g| g > 0).collect();
    ideal.sort_unstable_by(|a, b| b.cmp(a));
    let idcg: f64 = ideal
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, &g)| gain(g) * discount(i + 1))
        .sum();
    if idcg == 0.0 {
        0.0
    } else {
        dcg / idcg
    }
}

/// The reciprocal rank of the first item of `ranked` in `gold` (0 when
/// none is).
pub fn reciprocal_rank(ranked: &[String], gold: &std::collections::HashSet<&str>) -> f64 {
    ranked
        .iter()
        .position(|d| gold.contains(d.as_str()))
        .map_or(0.0, |i| 1.0 / (i + 1) as f64)
}

/// Whether any of the first `k` items of `ranked` is in `gold`.
pub fn hit_at(ranked: &[String], gold: &std::collections::HashSet<&str>, k: usize) -> bool {
    ranked.iter().take(k).any(|d| gold.contains(d.as_str()))
}

/// Distinct keys of `items` in first-seen order, at most `depth`.
pub fn distinct<T>(items: &[T], key: impl Fn(&T) -> Option<String>, depth: usize) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    items
        .iter()
        .filter_map(key)
        .filter(|k| seen.insert(k.clone()))
        .take(depth)
        .collect()
}

pub fn mean(xs: impl IntoIterator<Item = f64>) -> f64 {
    let (sum, n) = xs
        .into_iter()
        .fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 {
        f64::NAN
    } else {
        sum / n as f64
    }
}

/// The `p`-th percentile (0-100) by nearest rank; NaN when empty.
pub fn percentile(xs: impl IntoIterator<Item = f64>, p: f64) -> f64 {
    let mut v: Vec<f64> = xs.into_iter().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(chars: usize, ids: &[&str]) -> Hit {
        Hit {
            chars,
            message_ids: ids.iter().map(|s| s.to_string()).collect(),
            ..Hit::default()
        }
    }

    #[test]
    fn budget_stops_before_the_hit_that_passes() {
        let hits = [hit(3000, &[]), hit(1500, &[]), hit(10, &[])];
        assert_eq!(take_budget(&hits, 4000).len(), 1);
        assert_eq!(take_budget(&hits[..1], 3000).len(), 1);
        assert_eq!(take_budget(&hits, 100).len(), 0);
    }

    #[test]
    fn ndcg_gold_is_capped_and_ranked() {
        let gold: BTreeSet<String> = ["a", "b"].iter().map(|s| s.to_string()).collect();
        assert_eq!(ndcg_gold(&[hit(1, &["a", "b"])], &gold, 10), 1.0);
        let two = [hit(1, &["a"]), hit(1, &["b"])];
        assert!((ndcg_gold(&two, &gold, 10) - 1.0).abs() < 1e-12);
        assert_eq!(ndcg_gold(&[hit(1, &["x"])], &gold, 10), 0.0);
    }

    #[test]
    fn percentile_nearest_rank() {
        let xs = (1..=100).map(f64::from);
        assert_eq!(percentile(xs.clone(), 50.0), 50.0);
        assert_eq!(percentile(xs, 95.0), 95.0);
        assert!(percentile(Vec::new(), 50.0).is_nan());
    }
}
