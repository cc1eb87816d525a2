//! The Markdown report: `metric | ours | floor | target`.

use std::fs;
use std::path::Path;

use anyhow::{Context as _, Result};
use serde::Serialize;

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

    /// Print the table as Markdown on stdout.
    pub fn print(&self, title: &str) {
        println!("\n## {title}\n");
        println!("| metric | ours | floor | target |");
        println!("|---|---:|---:|---:|");
        for [m, o, f, t] in &self.rows {
            println!("| {m} | {o} | {f} | {t} |");
        }
    }

    /// Latency rows for our outcomes and the floor's (if computed).
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
