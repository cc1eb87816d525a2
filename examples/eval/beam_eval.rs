//! BEAM questions: selection, queries through `recall`, the FTS5 floor and
//! the report (overall, per category, per split). Loading, conversion and
//! indexing are in `beam.rs`. See the crate doc for the rules.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use serde::Serialize;
use serde_json::Value;

use crate::args::Common;
use crate::beam::{self, Conversation, Layout, Question};
use crate::evidence::{self, Gold, Scores, Summary, BUDGET};
use crate::floor::{Floor, Row};
use crate::report::{Run, Table};
use crate::runner::{par_map, Outcome, Recall};
use crate::workspace::Workspace;

const DEFAULT_LIMIT: usize = 50;

/// One question to run, with its gold in the layout's ids.
struct Asked<'a> {
    conv: &'a Conversation,
    q: &'a Question,
    gold: Gold,
}

/// One row of the `--json` output.
#[derive(Serialize)]
struct QuestionResult {
    conversation: String,
    split: String,
    id: String,
    category: String,
    question: String,
    answer: Value,
    gold: Vec<String>,
    #[serde(flatten)]
    scores: Scores,
}

/// Run BEAM from the file at `path`, per conversation or `merged`.
pub fn run(
    path: &Path,
    merged: bool,
    common: &Common,
    ws: &Workspace,
    recall: &Recall,
) -> Result<Run> {
    let convs = beam::load(path)?;
    let layout = if merged {
        Layout::Merged
    } else {
        Layout::PerConversation
    };
    run_loaded(&convs, layout, common, ws, recall)
}

/// Run BEAM on conversations already loaded.
pub fn run_loaded(
    convs: &[Conversation],
    layout: Layout,
    common: &Common,
    ws: &Workspace,
    recall: &Recall,
) -> Result<Run> {
    let (asked, skipped) = select(convs, layout, common.limit_questions);
    let needed: Vec<&Conversation> = match layout {
        Layout::PerConversation => convs
            .iter()
            .filter(|c| asked.iter().any(|a| a.conv.id == c.id))
            .collect(),
        Layout::Merged => convs.iter().collect(),
    };
    beam::ensure_indexed(ws, recall, &needed, layout, common.reindex)?;
    let limit = common.limit.unwrap_or(DEFAULT_LIMIT);
    let t0 = Instant::now();
    let ours = par_map(&asked, common.workers, |a| {
        recall.query(&a.conv.project(layout), &a.q.question, limit)
    });
    let wall_s = t0.elapsed().as_secs_f64();
    let floor = if common.no_floor {
        None
    } else {
        Some(run_floor(&needed, &asked, layout, limit)?)
    };
    let results = score_all(&asked, &ours, floor.as_deref());
    let phase = Phase {
        ours: &ours,
        floor: floor.as_deref(),
        skipped,
        wall_s,
    };
    let mut run = report(convs, layout, &results, &phase);
    run.results = serde_json::to_value(&results)?;
    Ok(run)
}

/// The questions with evidence (at most `limit`, in file order), and how
/// many have none.
fn select(convs: &[Conversation], layout: Layout, limit: Option<usize>) -> (Vec<Asked<'_>>, usize) {
    let all = convs.iter().flat_map(|conv| {
        conv.questions.iter().map(move |q| Asked {
            conv,
            q,
            gold: conv.gold(layout, q),
        })
    });
    let (mut with, without): (Vec<_>, Vec<_>) = all.partition(|a| !a.gold.ids.is_empty());
    with.truncate(limit.unwrap_or(usize::MAX));
    (with, without.len())
}

/// One floor row per message: its content, keyed by the layout's id.
fn rows(conv: &Conversation, layout: Layout) -> impl Iterator<Item = Row> + '_ {
    conv.sessions.iter().flat_map(move |s| {
        s.messages.iter().filter_map(move |m| {
            Some(Row {
                key: conv.message_key(layout, &m.id)?,
                session: Some(s.id.clone()),
                body: m.content.clone(),
            })
        })
    })
}

/// The floor's outcome for every question: one table per conversation, or
/// one for all of them when merged.
fn run_floor(
    convs: &[&Conversation],
    asked: &[Asked],
    layout: Layout,
    limit: usize,
) -> Result<Vec<Outcome>> {
    let mut out: Vec<Outcome> = vec![Outcome::default(); asked.len()];
    let mut answer = |floor: &Floor, keep: &dyn Fn(&Asked) -> bool| {
        for (i, a) in asked.iter().enumerate().filter(|(_, a)| keep(a)) {
            out[i] = floor.search(&a.q.question, Some(limit));
        }
    };
    match layout {
        Layout::PerConversation => {
            for conv in convs {
                let floor = Floor::with_sessions(rows(conv, layout))?;
                answer(&floor, &|a| a.conv.id == conv.id);
            }
        }
        Layout::Merged => {
            let all = convs.iter().flat_map(|c| rows(c, layout));
            answer(&Floor::with_sessions(all)?, &|_| true);
        }
    }
    Ok(out)
}

fn score_all(asked: &[Asked], ours: &[Outcome], floor: Option<&[Outcome]>) -> Vec<QuestionResult> {
    asked
        .iter()
        .enumerate()
        .map(|(i, a)| QuestionResult {
            conversation: a.conv.id.clone(),
            split: a.conv.split.clone(),
            id: a.q.id.clone(),
            category: a.q.category.clone(),
            question: a.q.question.clone(),
            answer: a.q.answer.clone(),
            gold: a.gold.ids.iter().cloned().collect(),
            scores: Scores::new(&ours[i], floor.and_then(|f| f.get(i)), &a.gold),
        })
        .collect()
}

/// What the query phase produced, besides the scores.
struct Phase<'a> {
    ours: &'a [Outcome],
    floor: Option<&'a [Outcome]>,
    skipped: usize,
    wall_s: f64,
}

fn report(convs: &[Conversation], layout: Layout, results: &[QuestionResult], p: &Phase) -> Run {
    let mut t = Table::default();
    let all: Vec<&Scores> = results.iter().map(|r| &r.scores).collect();
    let mut summary = Summary {
        set: layout.set_name(),
        headlines: vec![],
    };
    summary.overall(&mut t, &all, "");
    summary.top5(&mut t, &all, true);
    let splits: BTreeSet<String> = convs.iter().map(|c| c.split.clone()).collect();
    let by_split = evidence::group_by(results, &splits, |r| &r.split, |r| &r.scores);
    summary.groups(&mut t, "split ", &by_split);
    let categories: BTreeSet<String> = convs
        .iter()
        .flat_map(|c| c.questions.iter().map(|q| q.category.clone()))
        .collect();
    let by_category = evidence::group_by(results, &categories, |r| &r.category, |r| &r.scores);
    summary.groups(&mut t, "", &by_category);
    evidence::detail_rows(&mut t, &all);
    evidence::diagnostics_rows(&mut t, p.ours, p.skipped);
    let ours_refs: Vec<&Outcome> = p.ours.iter().collect();
    let floor_refs: Vec<&Outcome> = p.floor.unwrap_or_default().iter().collect();
    t.latency(&ours_refs, &floor_refs, p.wall_s);
    let how = match layout {
        Layout::PerConversation => "one project per conversation",
        Layout::Merged => "all conversations in one project",
    };
    Run {
        title: format!(
            "{}: {} questions ({} without evidence skipped), {how}, budget {BUDGET} chars",
            layout.set_name(),
            results.len(),
            p.skipped
        ),
        table: t,
        headlines: summary.headlines,
        results: Value::Null,
    }
}
