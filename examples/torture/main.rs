//! The reliability and security torture suite: scenarios that try to break
//! `recall` the way a crash, a busy machine, a hostile input or a careless
//! file would, each measured and printed as one table of figures.
//!
//! ```text
//! bash scripts/torture.sh            # full form (minutes)
//! bash scripts/torture.sh --quick    # short form with a fixed seed (seconds; in CI)
//! target/release/examples/torture [--quick] [--seed S] [--kills N] [--load-secs S]
//!                                 [--fuzz N] [--recall-bin PATH] [--keep DIR]
//!                                 [--only kill,load,fuzz,secrets,isolation,hostile]
//! ```
//!
//! Scenarios (each row of the table names its target; the run exits 1 when
//! a target is missed):
//! - **kill -9**: `--kills` times, one of `index`, `index --full`,
//!   `reindex --full`, `record add|update|delete`, `extract` and `serve`
//!   (a loop of `POST` writes) is started on a seeded corpus and killed at
//!   a random moment. After every kill the
//!   index passes `PRAGMA integrity_check`. At the end the jobs are re-run
//!   once and: no `.recall-*.tmp` is left, every record file parses, every
//!   record whose `record add` (exit 0) or `POST` (2xx) was acknowledged
//!   is found by `record get`, the passage count equals a clean index of the same
//!   corpus, and `doctor` passes.
//! - **load**: 8 hook loops (`recall hook claude-code`, UserPromptSubmit),
//!   one `index` loop over a growing corpus and one `record add` loop run
//!   together for `--load-secs`. Hook failures, deadline misses, records
//!   acknowledged but missing from the index right afterwards, the largest
//!   WAL seen, and hook p50/p99 under load against idle.
//! - **fuzz**: the query sanitizer (every output run as an FTS5 `MATCH`)
//!   and every transcript and ticket parser on mutated fixture files,
//!   `--fuzz` inputs in all (10,000,000 in the full form); panics and SQL
//!   errors.
//! - **secrets**: planted secrets of 21 kinds (issue #26's among them)
//!   through every input path (transcript text, a Claude Code line's cwd and
//!   branch, a ticket, `record add --redact` with the secret in the text and
//!   in the key, `remember --redact` with the key built from the text, a
//!   record file written by hand, extraction); every byte and every file
//!   name under the home (except the hand-written file itself), every output
//!   format, the hook output and `recall serve`'s answers (a refused write,
//!   both lists, recall in every format) are searched for them, whole and as
//!   lowercased runs (what a slug or an FTS term keeps).
//! - **isolation**: projects with colliding names (`my.app`, `my-app`,
//!   the same name in two folders) each get a marker; a query in each must
//!   find its own marker and none of the others'.
//! - **hostile**: a bad config, an index from an old schema, a symlinked
//!   records folder, and a full disk (a 1 MB tmpfs, when mounting is
//!   allowed): each gives a clear message or works, never a panic, and a
//!   full disk leaves the index intact.
//!
//! One file per scenario; the corpus in `corpus.rs` (the shared seeded
//! generator's, `crates/synth`), a look into a home in `home.rs`, a
//! `recall serve` child in `serve.rs`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Parser;

mod corpus;
mod fuzz;
mod home;
mod hostile;
mod isolation;
mod kill;
mod load;
#[allow(dead_code)] // shared with the integration tests, which use all of it
#[path = "../../tests/it/common/pg.rs"]
mod pg;
mod secrets;
mod serve;
mod sync;

#[derive(Parser, Debug)]
#[command(about = "recall's reliability and security torture suite")]
struct Opts {
    /// The short form: few kills, a short load, 20,000 fuzz inputs
    #[arg(long)]
    quick: bool,
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// kill -9 rounds [default: 200, quick 12]
    #[arg(long)]
    kills: Option<usize>,
    /// Seconds of load [default: 60, quick 4]
    #[arg(long)]
    load_secs: Option<u64>,
    /// Fuzz inputs [default: 10,000,000, quick 20,000]
    #[arg(long)]
    fuzz: Option<u64>,
    /// The recall binary [default: `recall` next to this executable]
    #[arg(long)]
    recall_bin: Option<PathBuf>,
    /// Keep the workspace in DIR
    #[arg(long)]
    keep: Option<PathBuf>,
    /// Sync kill -9 rounds [default: 100, quick 12]
    #[arg(long)]
    sync_kills: Option<usize>,
    /// Run only these scenarios (kill, load, fuzz, secrets, isolation, hostile, sync)
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
}

/// One line of the result table.
struct Row {
    scenario: &'static str,
    metric: String,
    value: String,
    target: String,
    met: bool,
}

fn row(scenario: &'static str, metric: &str, value: impl ToString, target: &str, met: bool) -> Row {
    Row {
        scenario,
        metric: metric.into(),
        value: value.to_string(),
        target: target.into(),
        met,
    }
}

struct World {
    bin: PathBuf,
    root: PathBuf,
}

impl World {
    fn cmd(&self, home: &Path) -> Command {
        let mut c = Command::new(&self.bin);
        c.env_remove("RECALL_HOME")
            .env_remove("RECALL_PROJECT")
            .env_remove("RECALL_LOG")
            .env("NO_COLOR", "1")
            .arg("--home")
            .arg(home)
            .stdin(Stdio::null());
        c
    }

    fn run(&self, home: &Path, args: &[&str]) -> Result<Output> {
        Ok(self.cmd(home).args(args).output()?)
    }
}

fn main() -> Result<()> {
    let o = Opts::parse();
    let bin = match &o.recall_bin {
        Some(b) => b.clone(),
        None => std::env::current_exe()?
            .parent()
            .and_then(Path::parent)
            .context("no folder above the example")?
            .join("recall"),
    };
    if !bin.exists() {
        bail!(
            "no recall binary at {}: build it, or pass --recall-bin",
            bin.display()
        );
    }
    let tmp = tempfile::Builder::new()
        .prefix("recall-torture-")
        .tempdir()?;
    let root = match &o.keep {
        Some(d) => {
            std::fs::create_dir_all(d)?;
            d.clone()
        }
        None => tmp.path().to_path_buf(),
    };
    let w = World { bin, root };
    let t0 = Instant::now();
    let mut rows = Vec::new();
    let kills = o.kills.unwrap_or(if o.quick { 12 } else { 200 });
    let load = Duration::from_secs(o.load_secs.unwrap_or(if o.quick { 4 } else { 60 }));
    let fuzz = o.fuzz.unwrap_or(if o.quick { 20_000 } else { 10_000_000 });
    let wanted = |name: &str| o.only.is_empty() || o.only.iter().any(|x| x == name);
    if wanted("kill") {
        eprintln!("torture: kill -9 x{kills}");
        rows.extend(kill::kill9(&w, kills, o.seed)?);
    }
    if wanted("load") {
        eprintln!("torture: load for {load:?}");
        rows.extend(load::load_test(&w, load, !o.quick)?);
    }
    if wanted("fuzz") {
        eprintln!("torture: fuzz x{fuzz}");
        rows.extend(fuzz::fuzzing(fuzz, o.seed)?);
    }
    if wanted("secrets") {
        eprintln!("torture: secrets");
        rows.extend(secrets::secrets(&w)?);
    }
    if wanted("isolation") {
        eprintln!("torture: isolation");
        rows.extend(isolation::isolation(&w, o.seed)?);
    }
    if wanted("sync") {
        let n = o.sync_kills.unwrap_or(if o.quick { 12 } else { 100 });
        eprintln!("torture: sync kill -9 x{n}");
        rows.extend(sync::sync_kill9(&w, n, o.seed)?);
    }
    if wanted("hostile") {
        eprintln!("torture: hostile environment");
        rows.extend(hostile::hostile(&w)?);
    }
    println!(
        "## recall torture suite ({} form, seed {}, {:.0} s)\n",
        if o.quick { "quick" } else { "full" },
        o.seed,
        t0.elapsed().as_secs_f64()
    );
    println!("| scenario | metric | value | target | met |\n|---|---|---:|---|---|");
    for r in &rows {
        println!(
            "| {} | {} | {} | {} | {} |",
            r.scenario,
            r.metric,
            r.value,
            r.target,
            if r.met { "yes" } else { "**no**" }
        );
    }
    let missed = rows.iter().filter(|r| !r.met).count();
    if missed > 0 {
        eprintln!("torture: {missed} target(s) missed");
        std::process::exit(1);
    }
    Ok(())
}
