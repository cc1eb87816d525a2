//! `eval scale`: quality as history grows (issue #24 item 4). Each set is
//! run alone, then inside more unrelated history: its projects get
//! distractors drawn from the other sets (`distract.rs`) until they hold
//! `size` times the set's own characters, and the set's questions are asked
//! there, through the set's own run (conversion, queries, floor, metrics).
//! The FTS5 floor indexes the same distractors, so recall and floor are
//! compared on the same corpus at every size. When a set's pool runs out,
//! the ratio reached is reported and the larger sizes are not run again.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Instant;

use anyhow::{bail, Result};
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::args::{Common, SuitePaths};
use crate::beam::Target;
use crate::distract::{Scale, Source, Tally};
use crate::report::{f3, opt3, write_json, Headline, Run};
use crate::runner::Recall;
use crate::workspace::Workspace;
use crate::{beam, beam_eval, beir, jira, locomo, swe};

/// A set the curve covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Set {
    /// LoCoMo, one project per conversation
    Locomo,
    /// BEAM, one project per conversation
    Beam,
    /// BEAM, every conversation in one project
    BeamMerged,
    /// jira-dups
    Jira,
    /// swe-sessions, title queries
    Swe,
}

/// What `eval scale` (and `eval all --scale`) runs by default; `--sizes`
/// and `--sets` say the same in their help.
pub const DEFAULT_SIZES: &[u32] = &[1, 4, 16];
pub const DEFAULT_SETS: &[Set] = &[Set::Locomo, Set::Beam, Set::BeamMerged, Set::Jira, Set::Swe];

/// A metric: its name in the table and its field in the per-question
/// results (`ours.<field>`, `floor.<field>`).
type Metric = (&'static str, &'static str);

const EVIDENCE: &[Metric] = &[
    ("budget recall", "budget_recall"),
    ("session any@5", "session5"),
];

impl Set {
    /// Its name in the table.
    fn name(self) -> &'static str {
        match self {
            Set::Locomo => "LoCoMo",
            Set::Beam => "BEAM",
            Set::BeamMerged => "BEAM merged",
            Set::Jira => "jira-dups",
            Set::Swe => "swe-sessions (titles)",
        }
    }

    /// Its key in `--json`.
    fn key(self) -> &'static str {
        match self {
            Set::Locomo => "locomo",
            Set::Beam => "beam",
            Set::BeamMerged => "beam_merged",
            Set::Jira => "jira",
            Set::Swe => "swe_titles",
        }
    }

    /// The source its distractors must not come from: its own.
    fn source(self) -> &'static str {
        match self {
            Set::Locomo => "locomo",
            Set::Beam | Set::BeamMerged => "beam",
            Set::Jira => "jira",
            Set::Swe => "swe",
        }
    }

    fn metrics(self) -> &'static [Metric] {
        match self {
            Set::Locomo | Set::Beam | Set::BeamMerged => EVIDENCE,
            Set::Jira => &[
                ("nDCG@10", "ndcg10"),
                ("recall@10", "recall10"),
                ("MRR", "mrr"),
            ],
            Set::Swe => &[("hit@1", "hit1"), ("MRR", "mrr")],
        }
    }
}

/// Every set, loaded once: each is a target and a source of distractors.
struct Loaded {
    locomo: Vec<locomo::Conversation>,
    beam: Vec<beam::Conversation>,
    jira: Vec<jira::Ticket>,
    swe: Vec<swe::Session>,
    scifact: Vec<beir::Doc>,
}

impl Loaded {
    fn load(paths: &SuitePaths) -> Result<Loaded> {
        let t0 = Instant::now();
        let loaded = Loaded {
            locomo: locomo::load(&paths.locomo)?,
            beam: beam::load(&paths.beam)?,
            jira: jira::load_corpus(&paths.jira)?,
            swe: swe::load_sessions(&paths.swe)?,
            scifact: beir::load_corpus(&paths.scifact)?,
        };
        eprintln!(
            "eval: scale: sets loaded in {:.1}s",
            t0.elapsed().as_secs_f64()
        );
        Ok(loaded)
    }

    /// Every set as a source of distractors, in its converted form.
    fn sources(&self) -> Vec<Source> {
        vec![
            Source::new("locomo", locomo::distractors(&self.locomo)),
            Source::new("beam", beam::distractors(&self.beam)),
            Source::new("swe", swe::distractors(&self.swe)),
            Source::new("jira", jira::distractors(&self.jira)),
            Source::new("scifact", beir::distractors(&self.scifact)),
        ]
    }
}

/// One set at one size.
#[derive(Serialize)]
struct Point {
    set: &'static str,
    size: u32,
    /// The corpus over the set's own characters, as reached.
    ratio: f64,
    tally: Tally,
    headlines: Vec<Headline>,
    /// Indexing (when not reused), queries and floor, in seconds.
    wall_s: f64,
}

/// Run `set` at the size of `scale`.
fn run_one(
    set: Set,
    data: &Loaded,
    (paths, scale): (&SuitePaths, &Scale),
    common: &Common,
    ws: &Workspace,
    recall: &Recall,
) -> Result<Run> {
    match set {
        Set::Locomo => locomo::run_loaded(&data.locomo, false, scale, common, ws, recall),
        Set::Beam => {
            let target = Target::per_conversation();
            beam_eval::run_loaded(&data.beam, target, scale, common, ws, recall)
        }
        Set::BeamMerged => {
            let target = Target::merged(None);
            beam_eval::run_loaded(&data.beam, target, scale, common, ws, recall)
        }
        Set::Jira => jira::run_loaded(&data.jira, &paths.jira, scale, common, ws, recall),
        Set::Swe => {
            let forms = [swe::Form::Title];
            let runs = swe::run_loaded(&data.swe, &paths.swe, &forms, scale, common, ws, recall)?;
            runs.into_iter()
                .next()
                .ok_or_else(|| anyhow::anyhow!("swe-sessions ran no query form"))
        }
    }
}

/// The mean of `ours.<field>` and of `floor.<field>` over per-question
/// results (the floor's only when every question has one).
fn means(results: &Value, field: &str) -> (f64, Option<f64>) {
    let rows = results.as_array().map(Vec::as_slice).unwrap_or_default();
    let side =
        |s: &str| -> Option<Vec<f64>> { rows.iter().map(|r| r[s][field].as_f64()).collect() };
    let mean = |xs: Vec<f64>| xs.iter().sum::<f64>() / xs.len().max(1) as f64;
    let ours = side("ours").map_or(f64::NAN, mean);
    (ours, side("floor").filter(|f| !f.is_empty()).map(mean))
}

/// The headline figures of one run of `set`.
fn headlines(set: Set, results: &Value) -> Vec<Headline> {
    set.metrics()
        .iter()
        .map(|(name, field)| {
            let (ours, floor) = means(results, field);
            Headline {
                set: set.name().into(),
                metric: (*name).into(),
                ours,
                floor,
            }
        })
        .collect()
}

/// The sizes in increasing order, each once.
fn sizes_in_order(sizes: &[u32]) -> Vec<u32> {
    let mut s: Vec<u32> = sizes.iter().map(|&n| n.max(1)).collect();
    s.sort_unstable();
    s.dedup();
    s
}

pub fn run(
    (paths, sets, sizes): (&SuitePaths, &[Set], &[u32]),
    common: &Common,
    ws: &Workspace,
    recall: &Recall,
) -> Result<()> {
    let t_all = Instant::now();
    let data = Loaded::load(paths)?;
    let sources = data.sources();
    for s in &sources {
        eprintln!("eval: scale: source {} has {} chars", s.name, s.chars());
    }
    let mut points = Vec::new();
    let mut results: BTreeMap<&str, Map<String, Value>> = BTreeMap::new();
    let mut notes = Vec::new();
    let mut failed = Vec::new();
    for &set in sets {
        for size in sizes_in_order(sizes) {
            let pool = sources.iter().filter(|s| s.name != set.source()).collect();
            let scale = Scale::new(size, pool);
            eprintln!("eval: scale: {} at {size}x", set.name());
            let t0 = Instant::now();
            let mut run = match run_one(set, &data, (paths, &scale), common, ws, recall) {
                Ok(run) => run,
                Err(e) => {
                    eprintln!("eval: scale: {} at {size}x failed: {e:#}", set.name());
                    failed.push(format!("{} {size}x", set.name()));
                    break;
                }
            };
            let tally = scale.tally();
            let point = Point {
                set: set.name(),
                size,
                ratio: tally.ratio(),
                headlines: headlines(set, &run.results),
                wall_s: t0.elapsed().as_secs_f64(),
                tally,
            };
            run.title = format!("{} (at {size}x: {:.2}x reached)", run.title, point.ratio);
            eprint!("{}", run.markdown());
            let (ran_out, ratio) = (point.tally.ran_out, point.ratio);
            results
                .entry(set.key())
                .or_default()
                .insert(size.to_string(), std::mem::take(&mut run.results));
            points.push(point);
            if ran_out {
                notes.push(format!(
                    "{}: the distractors ran out at {size}x ({:.2}x reached); larger sizes would be the same corpus, so they were not run",
                    set.name(),
                    ratio
                ));
                break;
            }
        }
    }
    let total_s = t_all.elapsed().as_secs_f64();
    print!("{}", markdown(&points, &notes, total_s));
    if let Some(out) = &common.json {
        let doc =
            json!({ "points": points, "notes": notes, "wall_s": total_s, "results": results });
        write_json(out, &doc)?;
    }
    if !failed.is_empty() {
        bail!("{} point(s) failed: {}", failed.len(), failed.join(", "));
    }
    Ok(())
}

/// The curve as Markdown: one row per set, size and metric (recall beside
/// the floor and the margin), then what each point held and took.
fn markdown(points: &[Point], notes: &[String], total_s: f64) -> String {
    let mut out = String::from(
        "\n## Scale curve: recall beside the FTS5 floor as unrelated history grows\n\n",
    );
    out.push_str("Size: the project holds that many times the set's own characters (message contents, ticket titles and texts); the rest is distractors from the other sets.\n\n");
    out.push_str("| set | size | reached | metric | recall | floor | margin |\n|---|---:|---:|---|---:|---:|---:|\n");
    for p in points {
        for h in &p.headlines {
            let margin = h.floor.map(|f| h.ours - f).filter(|d| d.is_finite());
            // Writing to a String cannot fail.
            let _ = writeln!(
                out,
                "| {} | {}x | {:.2}x | {} | {} | {} | {} |",
                p.set,
                p.size,
                p.ratio,
                h.metric,
                f3(h.ours),
                opt3(h.floor),
                margin.map_or("-".into(), |m| format!("{m:+.3}"))
            );
        }
    }
    out.push_str("\n| set | size | set chars | distractor chars | sessions | tickets | from | wall (s) |\n|---|---:|---:|---:|---:|---:|---|---:|\n");
    for p in points {
        let t = &p.tally;
        let from: Vec<String> = t
            .by_source
            .iter()
            .map(|(s, c)| format!("{s} {}", mb(*c)))
            .collect();
        let _ = writeln!(
            out,
            "| {} | {}x | {} | {} | {} | {} | {} | {:.0} |",
            p.set,
            p.size,
            mb(t.base_chars),
            mb(t.distractor_chars),
            t.sessions,
            t.tickets,
            if from.is_empty() {
                "-".into()
            } else {
                from.join(", ")
            },
            p.wall_s
        );
    }
    for n in notes {
        let _ = writeln!(out, "\n{n}");
    }
    let _ = writeln!(out, "\nTotal wall time: {total_s:.0}s");
    out
}

/// Characters in millions, two decimals.
fn mb(chars: usize) -> String {
    format!("{:.2}M", chars as f64 / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn means_read_both_sides() {
        let r = json!([
            {"ours": {"hit1": 1.0}, "floor": {"hit1": 0.0}},
            {"ours": {"hit1": 0.0}, "floor": {"hit1": 0.0}},
        ]);
        assert_eq!(means(&r, "hit1"), (0.5, Some(0.0)));
        let no_floor = json!([{"ours": {"hit1": 1.0}}]);
        assert_eq!(means(&no_floor, "hit1"), (1.0, None));
    }

    #[test]
    fn the_flags_default_to_the_defaults() {
        use clap::Parser as _;
        let cli = crate::args::Cli::parse_from(["eval", "scale"]);
        let crate::args::Dataset::Scale { sizes, sets, .. } = cli.dataset else {
            unreachable!("parsed `eval scale`")
        };
        assert_eq!(
            (sizes.as_slice(), sets.as_slice()),
            (DEFAULT_SIZES, DEFAULT_SETS)
        );
    }

    #[test]
    fn sizes_run_in_order_once() {
        assert_eq!(sizes_in_order(&[16, 1, 4, 4, 0]), [1, 4, 16]);
    }

    #[test]
    fn the_table_shows_recall_floor_and_margin() {
        let tally = Tally {
            base_chars: 1_000_000,
            distractor_chars: 3_000_000,
            sessions: 7,
            tickets: 2,
            by_source: vec![("beam".into(), 2_000_000), ("jira".into(), 1_000_000)],
            ran_out: false,
        };
        let p = Point {
            set: "LoCoMo",
            size: 4,
            ratio: tally.ratio(),
            headlines: vec![Headline {
                set: "LoCoMo".into(),
                metric: "budget recall".into(),
                ours: 0.8,
                floor: Some(0.65),
            }],
            wall_s: 12.4,
            tally,
        };
        let md = markdown(&[p], &["a note".into()], 99.0);
        assert!(
            md.contains("| LoCoMo | 4x | 4.00x | budget recall | 0.800 | 0.650 | +0.150 |"),
            "{md}"
        );
        assert!(
            md.contains("| LoCoMo | 4x | 1.00M | 3.00M | 7 | 2 | beam 2.00M, jira 1.00M | 12 |"),
            "{md}"
        );
        assert!(md.contains("a note") && md.contains("Total wall time: 99s"));
    }
}
