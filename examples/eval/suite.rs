//! `eval all`: LoCoMo, BEAM per conversation, BEAM merged, SciFact,
//! jira-dups and swe-sessions (titles and full issues) in one workspace. Each set's own table goes to stderr as it finishes; stdout
//! gets one combined `set | metric | recall | floor | delta` table. A set
//! that fails is reported and left out; the others still run.

use anyhow::{bail, Result};
use serde_json::{Map, Value};

use crate::args::{Common, SuitePaths};
use crate::beam::{self, Target};
use crate::distract::Scale;
use crate::report::{suite_markdown, write_json, Headline, Run};
use crate::runner::Recall;
use crate::workspace::Workspace;
use crate::{beam_eval, beir, jira, locomo, swe};

/// What the sets produced so far.
#[derive(Default)]
struct Collected {
    headlines: Vec<Headline>,
    results: Map<String, Value>,
    failed: Vec<String>,
}

impl Collected {
    /// Keep a set's figures, or report why it has none.
    fn add(&mut self, key: &str, run: Result<Run>) {
        match run {
            Ok(run) => {
                eprint!("{}", run.markdown());
                self.headlines.extend(run.headlines);
                self.results.insert(key.to_string(), run.results);
            }
            Err(e) => {
                eprintln!("eval: {key} failed: {e:#}");
                self.failed.push(key.to_string());
            }
        }
    }
}

pub fn run(paths: &SuitePaths, common: &Common, ws: &Workspace, recall: &Recall) -> Result<()> {
    let mut c = Collected::default();
    c.add(
        "locomo",
        locomo::run(&paths.locomo, false, common, ws, recall),
    );
    match beam::load(&paths.beam) {
        Ok(convs) => {
            for (key, target) in [
                ("beam", Target::per_conversation()),
                ("beam_merged", Target::merged(None)),
            ] {
                c.add(
                    key,
                    beam_eval::run_loaded(&convs, target, &Scale::alone(), common, ws, recall),
                );
            }
        }
        Err(e) => c.add("beam", Err(e)),
    }
    c.add(
        "scifact",
        beir::run(&paths.scifact, "test", common, ws, recall),
    );
    c.add("jira", jira::run(&paths.jira, common, ws, recall));
    let forms = [swe::Form::Title, swe::Form::Full];
    match swe::run(&paths.swe, &forms, common, ws, recall) {
        Ok(runs) => {
            for (form, run) in forms.iter().zip(runs) {
                c.add(form.key(), Ok(run));
            }
        }
        Err(e) => c.add("swe", Err(e)),
    }
    print!(
        "{}",
        suite_markdown("All sets: recall beside the FTS5 floor", &c.headlines)
    );
    if let Some(out) = &common.json {
        write_json(out, &Value::Object(c.results))?;
    }
    if !c.failed.is_empty() {
        bail!("{} set(s) failed: {}", c.failed.len(), c.failed.join(", "));
    }
    Ok(())
}
