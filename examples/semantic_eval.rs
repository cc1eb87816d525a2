//! Dense-only quality and speed of embedding models on a LoCoMo slice
//! (issue 38 item 1: choose between a transformer and a static table by
//! measurement). Each turn of the first `--convs` conversations is one
//! document, `"<speaker>: <text>"` (with ` [image: <caption>]` when the turn
//! has one), as `examples/eval` converts them; each question ranks its own
//! conversation's turns by cosine alone.
//!
//! ```text
//! cargo run --release --example semantic_eval -- ../shared/data/locomo/locomo10.json MODEL_DIR [MODEL_DIR...] [--convs 2]
//! ```
//!
//! Metrics, averaged over questions with gold evidence (as `examples/eval`
//! reads it: ids `D<n>:<n>` in `evidence`): budget recall (turns taken in
//! rank order while their text stays within 4,000 characters; the share of
//! gold ids taken), any@5 (a gold id in the top 5), and the same budget
//! recall for multi-hop questions (category 1). Speed: load (files to the
//! first vector), and wall time for every turn and question.

use std::path::PathBuf;
use std::time::Instant;

use recall::semantic::{cosine, Model};

const BUDGET: usize = 4000;

struct Conv {
    turns: Vec<(String, String)>,
    questions: Vec<(String, Vec<String>, u64)>,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut convs = 2usize;
    if let Some(i) = args.iter().position(|a| a == "--convs") {
        convs = args.get(i + 1).ok_or("--convs needs a number")?.parse()?;
        args.drain(i..i + 2);
    }
    let [data, models @ ..] = args.as_slice() else {
        return Err("usage: semantic_eval LOCOMO_JSON MODEL_DIR... [--convs N]".into());
    };
    let convs = read_locomo(&PathBuf::from(data), convs)?;
    let n_turns: usize = convs.iter().map(|c| c.turns.len()).sum();
    let n_q: usize = convs.iter().map(|c| c.questions.len()).sum();
    println!(
        "{} conversations, {n_turns} turns, {n_q} questions",
        convs.len()
    );
    println!("| model | kind | load ms | texts/s | budget recall | any@5 | multi-hop budget |");
    println!("|---|---|---:|---:|---:|---:|---:|");
    for dir in models {
        let t = Instant::now();
        let (model, _) = Model::load(&PathBuf::from(dir))?;
        model.embed(&["warm up"])?;
        let load_ms = t.elapsed().as_secs_f64() * 1000.0;
        let t = Instant::now();
        let (mut budget, mut any5, mut multi, mut n_multi) = (0.0, 0.0, 0.0, 0usize);
        let mut texts = 0usize;
        for c in &convs {
            let docs: Vec<&str> = c.turns.iter().map(|(_, t)| t.as_str()).collect();
            let mut dv = Vec::with_capacity(docs.len());
            for batch in docs.chunks(16) {
                dv.extend(model.embed(batch)?);
            }
            texts += docs.len();
            for (q, gold, cat) in &c.questions {
                let qv = model.embed(&[q])?.remove(0);
                texts += 1;
                let mut order: Vec<(f32, usize)> = dv
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (cosine(&qv, v), i))
                    .collect();
                order.sort_by(|a, b| b.0.total_cmp(&a.0));
                let (b, a) = score(c, &order, gold);
                budget += b;
                any5 += a;
                if *cat == 1 {
                    multi += b;
                    n_multi += 1;
                }
            }
        }
        let rate = texts as f64 / t.elapsed().as_secs_f64();
        println!(
            "| {dir} | {} | {load_ms:.0} | {rate:.0} | {:.3} | {:.3} | {:.3} |",
            model.kind().name(),
            budget / n_q as f64,
            any5 / n_q as f64,
            multi / n_multi.max(1) as f64
        );
    }
    Ok(())
}

/// Budget recall and any@5 of one ranking.
fn score(c: &Conv, order: &[(f32, usize)], gold: &[String]) -> (f64, f64) {
    let mut used = 0usize;
    let mut taken = Vec::new();
    for &(_, i) in order {
        let len = c.turns[i].1.chars().count();
        if used + len > BUDGET {
            break;
        }
        used += len;
        taken.push(c.turns[i].0.as_str());
    }
    let found = gold.iter().filter(|g| taken.contains(&g.as_str())).count();
    let top5: Vec<&str> = order
        .iter()
        .take(5)
        .map(|&(_, i)| c.turns[i].0.as_str())
        .collect();
    let any = gold.iter().any(|g| top5.contains(&g.as_str()));
    (found as f64 / gold.len() as f64, any as u8 as f64)
}

fn read_locomo(path: &PathBuf, n: usize) -> Result<Vec<Conv>, Box<dyn std::error::Error>> {
    let all: Vec<serde_json::Value> = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    let id = regex::Regex::new(r"^D\d+:\d+$")?;
    let mut out = Vec::new();
    for conv in all.iter().take(n) {
        let mut turns = Vec::new();
        let sessions = conv["conversation"].as_object().ok_or("no conversation")?;
        let mut k = 1;
        while let Some(session) = sessions
            .get(&format!("session_{k}"))
            .and_then(|s| s.as_array())
        {
            for turn in session {
                let mut text = format!(
                    "{}: {}",
                    turn["speaker"].as_str().unwrap_or(""),
                    turn["text"].as_str().unwrap_or("")
                );
                if let Some(cap) = turn["blip_caption"].as_str() {
                    text.push_str(&format!(" [image: {cap}]"));
                }
                turns.push((turn["dia_id"].as_str().unwrap_or("").to_string(), text));
            }
            k += 1;
        }
        let mut questions = Vec::new();
        for qa in conv["qa"].as_array().ok_or("no qa")? {
            let gold: Vec<String> = qa["evidence"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|e| e.as_str())
                .flat_map(|e| e.split(|c: char| c == ';' || c.is_whitespace()))
                .filter(|e| id.is_match(e))
                .map(str::to_string)
                .collect();
            if gold.is_empty() {
                continue;
            }
            let q = qa["question"].as_str().unwrap_or("").to_string();
            questions.push((q, gold, qa["category"].as_u64().unwrap_or(0)));
        }
        out.push(Conv { turns, questions });
    }
    Ok(out)
}
