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
use crate::beam::{self, Conversation, Layout, Question, Target};
use crate::distract::{Draw, Scale, Span};
use crate::evidence::{self, avg, Gold, Scores, Summary, BUDGET};
use crate::floor::{Floor, Row};
use crate::metrics::percentile;
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

/// Run BEAM from the file at `path` into `target`.
pub fn run(
    path: &Path,
    target: Target,
    common: &Common,
    ws: &Workspace,
    recall: &Recall,
) -> Result<Run> {
    let convs = beam::load(path)?;
    run_loaded(&convs, target, &Scale::alone(), common, ws, recall)
}

/// Run BEAM on conversations already loaded, at the size `scale` says:
/// each project (a conversation's, or the merged one) gets its own
/// distractors, dated over the span of the conversations it holds.
pub fn run_loaded(
    convs: &[Conversation],
    target: Target,
    scale: &Scale,
    common: &Common,
    ws: &Workspace,
    recall: &Recall,
) -> Result<Run> {
    let layout = target.layout;
    let (asked, skipped) = select(convs, layout, common.limit_questions);
    let needed: Vec<&Conversation> = match layout {
        Layout::PerConversation => convs
            .iter()
            .filter(|c| asked.iter().any(|a| a.conv.id == c.id))
            .collect(),
        Layout::Merged => convs.iter().collect(),
    };
    let draws = draws(&needed, target, scale);
    let index_s = beam::ensure_indexed(
        ws,
        recall,
        (&needed, &draws),
        (target, scale),
        common.reindex,
    )?;
    let limit = common.limit.unwrap_or(DEFAULT_LIMIT);
    let t0 = Instant::now();
    let ours = par_map(&asked, common.workers, |a| {
        recall.query(
            &scale.project(&target.project(a.conv)),
            &a.q.question,
            limit,
        )
    });
    let wall_s = t0.elapsed().as_secs_f64();
    let floor = if common.no_floor {
        None
    } else {
        Some(run_floor(&needed, &draws, &asked, layout, limit)?)
    };
    let results = score_all(&asked, &ours, floor.as_deref());
    let phase = Phase {
        ours: &ours,
        floor: floor.as_deref(),
        skipped,
        wall_s,
    };
    let mut run = report(convs, target, &results, &phase);
    run.results = serde_json::to_value(&results)?;
    run.summary = summary(target, &results, &phase, common.workers, index_s, ws);
    Ok(run)
}

/// The flat headline figures of a run (`eval beam --summary`): what
/// `scripts/bench-recall.sh` puts in its quality table. Latency is the
/// wall time of each `recall` process (spawn to exit).
fn summary(
    target: Target,
    results: &[QuestionResult],
    p: &Phase,
    workers: usize,
    index_s: Option<f64>,
    ws: &Workspace,
) -> Value {
    let all: Vec<&Scores> = results.iter().map(|r| &r.scores).collect();
    let (recall, floor) = avg(&all, |s| s.budget_recall);
    let wall = |q| percentile(p.ours.iter().map(|o| o.wall_ms), q);
    let engine = |q| percentile(p.ours.iter().filter_map(|o| o.engine_ms), q);
    let projects = match target.layout {
        Layout::PerConversation => "beam-<conversation>",
        Layout::Merged => target.merged_project,
    };
    serde_json::json!({
        "set": target.layout.set_name(),
        "home": ws.home(),
        "project": projects,
        "questions": results.len(),
        "skipped": p.skipped,
        "failed": p.ours.iter().filter(|o| o.error.is_some()).count(),
        "budget_recall": recall,
        "floor_budget_recall": floor,
        "wall_p50_ms": wall(50.0),
        "wall_p95_ms": wall(95.0),
        "engine_p50_ms": engine(50.0),
        "engine_p95_ms": engine(95.0),
        "query_seconds": p.wall_s,
        "workers": workers,
        "index_seconds": index_s,
        "index_reused_from_other_build": ws.reused_other_build(),
    })
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

/// The distractors of each project of `target` at `scale`: one per
/// conversation of `needed`, or one for the merged project.
fn draws<'a>(needed: &[&Conversation], target: Target, scale: &Scale<'a>) -> Vec<Draw<'a>> {
    match target.layout {
        Layout::PerConversation => needed
            .iter()
            .map(|c| scale.draw(&scale.project(&c.project()), c.chars(), c.span()))
            .collect(),
        Layout::Merged => {
            let chars = needed.iter().map(|c| c.chars()).sum();
            let spans = needed.iter().filter_map(|c| c.span());
            let span = Span::of(spans.flat_map(|s| [s.from, s.to]));
            let project = scale.project(target.merged_project);
            vec![scale.draw(&project, chars, span)]
        }
    }
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
/// one for all of them when merged, each with its project's distractors
/// (`draws`, as [`draws`] makes them).
fn run_floor(
    convs: &[&Conversation],
    draws: &[Draw],
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
            for (conv, draw) in convs.iter().zip(draws) {
                let floor = Floor::with_sessions(rows(conv, layout).chain(draw.rows()))?;
                answer(&floor, &|a| a.conv.id == conv.id);
            }
        }
        Layout::Merged => {
            let all = convs.iter().flat_map(|c| rows(c, layout));
            let extra = draws.iter().flat_map(Draw::rows);
            answer(&Floor::with_sessions(all.chain(extra))?, &|_| true);
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

fn report(convs: &[Conversation], target: Target, results: &[QuestionResult], p: &Phase) -> Run {
    let layout = target.layout;
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
        Layout::PerConversation => "one project per conversation".to_string(),
        Layout::Merged if target.merged_project == beam::MERGED_PROJECT => {
            "all conversations in one project".to_string()
        }
        Layout::Merged => format!(
            "all conversations in the project `{}`",
            target.merged_project
        ),
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
        summary: Value::Null,
    }
}
