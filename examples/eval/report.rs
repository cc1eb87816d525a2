//! The Markdown reports: one `metric | ours | floor | target` table per
//! set, and the combined `set | metric | recall | floor | delta` table of
//! `eval all`.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use anyhow::{Context as _, Result};
use serde::Serialize;
use serde_json::Value;

use crate::metrics::percentile;
use crate::runner::Outcome;

#[derive(Default)]
pub struct Table {
    rows: Vec<[String; 4]>,
}

impl Table {
    pub fn row(&mut self, metric: &str, ours: String, floor: String, target: &str) {
        self.rows
            .push([metric.to_string(), ours, floor, target.to_string()]);
    }

    /// The table as Markdown under a `## title` heading.
    pub fn markdown(&self, title: &str) -> String {
        let mut out = format!("\n## {title}\n\n");
        out.push_str("| metric | ours | floor | target |\n|---|---:|---:|---:|\n");
        for [m, o, f, t] in &self.rows {
            // Writing to a String cannot fail.
            let _ = writeln!(out, "| {m} | {o} | {f} | {t} |");
        }
        out
    }

    /// Latency rows for our outcomes and the floor's (if computed).
    /// The failed queries' row (the first error goes to stderr), then
    /// [`Table::latency`]: the tail every ranked set's table shares.
    pub fn failures_and_latency(
        &mut self,
        ours: &[Outcome],
        floor: Option<&[Outcome]>,
        wall_s: f64,
    ) {
        let errors = ours.iter().filter(|o| o.error.is_some()).count();
        self.row("queries failed", errors.to_string(), "-".into(), "");
        if let Some(e) = ours.iter().find_map(|o| o.error.as_deref()) {
            eprintln!("eval: first query error: {e}");
        }
        let ours_refs: Vec<&Outcome> = ours.iter().collect();
        let floor_refs: Vec<&Outcome> = floor.unwrap_or_default().iter().collect();
        self.latency(&ours_refs, &floor_refs, wall_s);
    }

    pub fn latency(&mut self, ours: &[&Outcome], floor: &[&Outcome], query_wall_s: f64) {
        let engine = |o: &[&Outcome], p| percentile(o.iter().filter_map(|x| x.engine_ms), p);
        let wall = |o: &[&Outcome], p| percentile(o.iter().map(|x| x.wall_ms), p);
        for p in [50.0, 95.0] {
            let f = (!floor.is_empty()).then(|| engine(floor, p));
            self.row(
                &format!("latency p{p} engine `timings_ms.total` (ms)"),
                ms(engine(ours, p)),
                f.map_or("-".into(), ms),
                "",
            );
        }
        for p in [50.0, 95.0] {
            let w = wall(ours, p);
            self.row(
                &format!("latency p{p} process wall (ms)"),
                ms(w),
                "-".into(),
                "",
            );
        }
        self.row(
            "query phase wall time (s)",
            format!("{query_wall_s:.1}"),
            "-".into(),
            "",
        );
    }
}

/// One figure of a set beside its floor, for the combined table.
#[derive(Debug, Clone, Serialize)]
pub struct Headline {
    pub set: String,
    pub metric: String,
    pub ours: f64,
    pub floor: Option<f64>,
}

/// What one dataset run produces.
pub struct Run {
    /// The heading of its table.
    pub title: String,
    pub table: Table,
    /// The figures it contributes to the combined table.
    pub headlines: Vec<Headline>,
    /// Every per-question result, for `--json`.
    pub results: Value,
    /// Its headline figures as one flat object, for `--summary` (null when
    /// the set has none).
    pub summary: Value,
}

impl Run {
    pub fn markdown(&self) -> String {
        self.table.markdown(&self.title)
    }
}

/// The combined table: `set | metric | recall | floor | delta`.
pub fn suite_markdown(title: &str, headlines: &[Headline]) -> String {
    let mut out = format!("\n## {title}\n\n");
    out.push_str("| set | metric | recall | floor | delta |\n|---|---|---:|---:|---:|\n");
    for h in headlines {
        let delta = h.floor.map(|f| h.ours - f);
        let delta = delta
            .filter(|d| d.is_finite())
            .map_or("-".into(), |d| format!("{d:+.3}"));
        // Writing to a String cannot fail.
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {delta} |",
            h.set,
            h.metric,
            f3(h.ours),
            opt3(h.floor)
        );
    }
    out
}

/// Three decimals, or `n/a`.
pub fn f3(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.3}")
    } else {
        "n/a".into()
    }
}

/// An optional value with three decimals, `-` when absent.
pub fn opt3(x: Option<f64>) -> String {
    x.map_or("-".into(), f3)
}

/// Milliseconds with one decimal, or `n/a`.
pub fn ms(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.1}")
    } else {
        "n/a".into()
    }
}

/// Write `value` as pretty JSON to `path`.
pub fn write_json(path: &Path, value: &impl Serialize) -> Result<()> {
    let text = serde_json::to_string_pretty(value)?;
    fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
    eprintln!("eval: wrote {}", path.display());
    Ok(())
}
