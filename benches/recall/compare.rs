//! The end-to-end comparison `scripts/bench-recall.sh` prints: `recall
//! query` and the hook as whole processes against one equivalent FTS5
//! statement (recall's own chunk candidate query with the MATCH expression
//! recall plans for the ticket) run by `sqlite_floor`, interleaved, in
//! alternating order.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

use recall::recall::plan::{plan, Table};
use recall::recall::{extract_terms, sanitize, Tuning};
use recall::store::{Db, OpenMode};

use crate::corpus::read_marker;
use crate::{arg, num};

fn weights(w: &[f64]) -> String {
    w.iter()
        .map(|x| format!("{x:.3}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The statement recall's chunk candidate query runs (src/recall/candidates.rs),
/// with the MATCH expression and limit inlined and the filters that are
/// no-ops without `--session/--since/--until` left out.
fn chunk_sql(expr: &str, t: &Tuning) -> String {
    let w = weights(&t.chunk_columns);
    format!(
        "SELECT c.rowid, c.session_id, c.seq, c.spans, c.first_ts, c.last_ts, c.hits, c.last_hit, s.path, f.score, b.body, b.title \
         FROM (SELECT rowid, -bm25(chunks_fts, {w}) AS score FROM chunks_fts \
               WHERE chunks_fts MATCH '{}' ORDER BY bm25(chunks_fts, {w}) LIMIT {}) f \
         JOIN chunks c ON c.rowid = f.rowid JOIN chunks_fts b ON b.rowid = f.rowid \
         JOIN sources s ON s.id = c.source_id;",
        expr.replace('\'', "''"),
        t.candidates
    )
}

struct Planned {
    sql: String,
    naive_sql: String,
    terms: Vec<(String, i64)>,
    extracted: usize,
    matched: i64,
}

fn planned(conn: &rusqlite::Connection, ticket: &str) -> Planned {
    let t = Tuning::default();
    let terms = extract_terms(ticket);
    // The chunk table's share of the query's budget, as `recall query`
    // computes it (the bench project has no user-scope index).
    let docs = |t| recall::recall::plan::table_docs(conn, t).expect("docs");
    let total = docs(Table::Records) + docs(Table::Chunks) + docs(Table::Tickets);
    let budget = recall::recall::plan::share(t.plan_budget, docs(Table::Chunks), total);
    let p = plan(conn, Table::Chunks, &terms, budget).expect("plan");
    let expr = p.to_match().expect("the ticket has searchable terms");
    let matched: i64 = conn
        .query_row(
            "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?1",
            [&expr],
            |r| r.get(0),
        )
        .expect("count");
    Planned {
        sql: chunk_sql(&expr, &t),
        naive_sql: chunk_sql(&sanitize(ticket).expect("terms"), &t),
        terms: p
            .terms
            .iter()
            .map(|w| (w.term.text.clone(), w.df))
            .collect(),
        extracted: terms.len(),
        matched,
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let x = p / 100.0 * (sorted.len() - 1) as f64;
    let (lo, hi) = (x.floor() as usize, x.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (x - lo as f64)
}

#[derive(serde::Serialize, Default, Clone)]
struct Summary {
    n: usize,
    p50: f64,
    p95: f64,
    mean: f64,
    min: f64,
    max: f64,
}

fn summary(xs: &[f64]) -> Summary {
    let mut s = xs.to_vec();
    s.sort_by(f64::total_cmp);
    Summary {
        n: s.len(),
        p50: percentile(&s, 50.0),
        p95: percentile(&s, 95.0),
        mean: s.iter().sum::<f64>() / s.len().max(1) as f64,
        min: s.first().copied().unwrap_or(f64::NAN),
        max: s.last().copied().unwrap_or(f64::NAN),
    }
}

/// Run `cmd` to completion with output discarded; wall milliseconds.
fn timed(cmd: &mut Command, ok: &[i32]) -> f64 {
    let t = Instant::now();
    let st = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("spawn");
    let ms = t.elapsed().as_secs_f64() * 1e3;
    assert!(
        st.code().is_some_and(|c| ok.contains(&c)),
        "{cmd:?} exited with {st}"
    );
    ms
}

/// [`timed`] with `input` written to the command's stdin.
fn timed_stdin(cmd: &mut Command, input: &[u8], ok: &[i32]) -> f64 {
    use std::io::Write as _;
    let t = Instant::now();
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .expect("write stdin");
    let st = child.wait().expect("wait");
    let ms = t.elapsed().as_secs_f64() * 1e3;
    assert!(
        st.code().is_some_and(|c| ok.contains(&c)),
        "{cmd:?} exited with {st}"
    );
    ms
}

/// `compare`: time recall, the hook and the floor on every ticket and print
/// the Markdown report (and `--json FILE`).
pub fn cmd_compare(args: &[String]) {
    let recall_bin = arg(args, "--recall").expect("--recall BIN");
    let floor_bin = arg(args, "--floor").expect("--floor BIN");
    let home = PathBuf::from(arg(args, "--home").expect("--home DIR"));
    let project = arg(args, "--project").unwrap_or("bench");
    let tdir = PathBuf::from(arg(args, "--tickets").expect("--tickets DIR"));
    let reps = num(args, "--reps", 10) as usize;
    let naive_reps = num(args, "--naive-reps", 1) as usize;
    let marker = read_marker(&home);
    let index = PathBuf::from(marker["index"].as_str().expect("index path"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&tdir)
        .expect("tickets dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no tickets in {}", tdir.display());
    let tickets: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(f).expect("ticket"))
        .collect();

    // Plan every ticket's floor query with the library (same code, same
    // statistics as recall), outside the timed runs.
    let plans: Vec<Planned> = {
        let db = Db::open(&index, OpenMode::ReadOnly).expect("open");
        db.with_conn(|c| Ok(tickets.iter().map(|t| planned(c, t)).collect()))
            .expect("plan")
    };
    for (f, p) in files.iter().zip(&plans) {
        std::fs::write(f.with_extension("floor.sql"), &p.sql).expect("write sql");
        std::fs::write(f.with_extension("naive.sql"), &p.naive_sql).expect("write sql");
    }
    let recall_cmd = |t: &str, format: &str| {
        let mut c = Command::new(recall_bin);
        c.args(["--home"])
            .arg(&home)
            .args(["--project", project, "query", "--format", format, t]);
        c.env_remove("RECALL_HOME")
            .env_remove("RECALL_PROJECT")
            .env_remove("RUST_LOG");
        c
    };
    // The hook's exact invocation: `recall hook claude-code` with a
    // UserPromptSubmit payload on stdin.
    let hook_cmd = || {
        let mut c = Command::new(recall_bin);
        c.args(["--home"])
            .arg(&home)
            .args(["--project", project, "hook", "claude-code"]);
        c
    };
    // Each run is the first prompt of a session of its own, as a prompt
    // hook mostly runs: under one shared id every run after a ticket's
    // first would leave out what that session was already given. The id
    // is a launcher's (a UUID), so the hook leaves out the passages that
    // quote it as it does for a real session (`recall::filter::echo`).
    let payload = |ticket: &str| -> Vec<u8> {
        serde_json::json!({
            "hook_event_name": "UserPromptSubmit",
            "session_id": uuid::Uuid::new_v4().to_string(),
            "cwd": "/",
            "prompt": ticket,
        })
        .to_string()
        .into_bytes()
    };
    let floor_cmd = |sql: &str| {
        let mut c = Command::new(floor_bin);
        c.arg(&index).arg(sql);
        c
    };

    // Check both sides produce output, and warm the page cache.
    eprintln!("[compare] warm-up: one run of each side per ticket");
    let mut json_runs = Vec::new();
    for (t, p) in tickets.iter().zip(&plans) {
        let out = recall_cmd(t, "prompt").output().expect("recall");
        assert!(
            !out.stdout.is_empty(),
            "recall printed nothing: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let out = floor_cmd(&p.sql).output().expect("floor");
        assert!(
            out.status.success(),
            "floor failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let rows = out
            .stdout
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .count();
        assert!(rows > 0, "the floor query returned no rows");
        let out = recall_cmd(t, "json").output().expect("recall json");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("recall json output");
        json_runs.push(v);
    }

    let (mut rec, mut flo, mut naive) = (
        vec![vec![]; tickets.len()],
        vec![vec![]; tickets.len()],
        vec![],
    );
    let mut hook = Vec::new();
    let mut pair_ratios = Vec::new();
    let mut order: Vec<usize> = (0..tickets.len()).collect();
    let mut rng = synth::Rng::with_seed(0x006F_7264_6572);
    let t0 = Instant::now();
    for rep in 0..reps {
        rng.shuffle(&mut order);
        for (k, &i) in order.iter().enumerate() {
            let (a, b);
            if (rep + k) % 2 == 0 {
                a = timed(&mut recall_cmd(&tickets[i], "prompt"), &[0, 1]);
                b = timed(&mut floor_cmd(&plans[i].sql), &[0]);
            } else {
                b = timed(&mut floor_cmd(&plans[i].sql), &[0]);
                a = timed(&mut recall_cmd(&tickets[i], "prompt"), &[0, 1]);
            }
            hook.push(timed_stdin(&mut hook_cmd(), &payload(&tickets[i]), &[0]));
            rec[i].push(a);
            flo[i].push(b);
            pair_ratios.push(a / b);
            if rep < naive_reps {
                naive.push(timed(&mut floor_cmd(&plans[i].naive_sql), &[0]));
            }
        }
        eprintln!(
            "[compare] rep {}/{reps} done ({:.0} s)",
            rep + 1,
            t0.elapsed().as_secs_f64()
        );
    }
    let all = |v: &[Vec<f64>]| v.iter().flatten().copied().collect::<Vec<f64>>();
    let (sr, sf, sn) = (summary(&all(&rec)), summary(&all(&flo)), summary(&naive));
    let sh = summary(&hook);
    let sp = summary(&pair_ratios);
    let per_ticket: Vec<f64> = rec
        .iter()
        .zip(&flo)
        .map(|(r, f)| summary(r).p50 / summary(f).p50)
        .collect();
    let spt = summary(&per_ticket);

    // recall's own breakdown (one --format json run per ticket).
    let key = |k: &str| -> Vec<f64> {
        json_runs
            .iter()
            .filter_map(|v| v["timings_ms"][k].as_f64())
            .collect()
    };
    let timings: Vec<(String, Summary)> = ["plan", "fetch", "search", "rank", "total"]
        .iter()
        .map(|k| (k.to_string(), summary(&key(k))))
        .collect();
    let hits = summary(
        &json_runs
            .iter()
            .map(|v| v["hits"].as_array().map_or(0, Vec::len) as f64)
            .collect::<Vec<_>>(),
    );
    let nterms = summary(
        &plans
            .iter()
            .map(|p| p.terms.len() as f64)
            .collect::<Vec<_>>(),
    );
    let extracted = summary(&plans.iter().map(|p| p.extracted as f64).collect::<Vec<_>>());
    let matched = summary(&plans.iter().map(|p| p.matched as f64).collect::<Vec<_>>());
    let dfsum = summary(
        &plans
            .iter()
            .map(|p| p.terms.iter().map(|t| t.1).sum::<i64>() as f64)
            .collect::<Vec<_>>(),
    );

    let chunks = marker["spec"]["chunks"].as_u64().unwrap_or(0);
    let records = marker["spec"]["records"].as_u64().unwrap_or(0);
    let f2 = |x: f64| format!("{x:.1}");
    let met = sr.p50 <= 1.5 * sf.p50;
    let mut md = String::new();
    let _ = writeln!(md, "| measure ({} tickets × {reps} runs, interleaved) | n | p50 ms | p95 ms | mean ms | min ms | max ms |", tickets.len());
    let _ = writeln!(md, "|---|---|---|---|---|---|---|");
    for (name, s) in [
        ("`recall query --format prompt` (process)", &sr),
        (
            "floor: `sqlite_floor` one equivalent FTS5 query (process)",
            &sf,
        ),
        ("naive floor: all ticket terms OR-ed (process)", &sn),
        (
            "`recall hook claude-code`, UserPromptSubmit payload (process)",
            &sh,
        ),
    ] {
        let _ = writeln!(
            md,
            "| {name} | {} | {} | {} | {} | {} | {} |",
            s.n,
            f2(s.p50),
            f2(s.p95),
            f2(s.mean),
            f2(s.min),
            f2(s.max)
        );
    }
    let _ = writeln!(md);
    let _ = writeln!(md, "| ratio recall / floor | value | target | met? |");
    let _ = writeln!(md, "|---|---|---|---|");
    let _ = writeln!(
        md,
        "| p50 / p50 | {:.2} | ≤ 1.5 | {} |",
        sr.p50 / sf.p50,
        if met { "yes" } else { "no" }
    );
    let _ = writeln!(md, "| p95 / p95 | {:.2} | | |", sr.p95 / sf.p95);
    let _ = writeln!(
        md,
        "| hook p50 / query p50 | {:.2} | ≤ 1.2 | {} |",
        sh.p50 / sr.p50,
        if sh.p50 <= 1.2 * sr.p50 { "yes" } else { "no" }
    );
    let _ = writeln!(
        md,
        "| median of paired run ratios (p5–p95: {:.2}–{:.2}) | {:.2} | | |",
        percentile_of(&pair_ratios, 5.0),
        percentile_of(&pair_ratios, 95.0),
        sp.p50
    );
    let _ = writeln!(
        md,
        "| per-ticket p50 ratio: median (min–max) | {:.2} ({:.2}–{:.2}) | | |",
        spt.p50, spt.min, spt.max
    );
    let _ = writeln!(md);
    let _ = writeln!(
        md,
        "recall's own `timings_ms` (one `--format json` run per ticket; ms, p50 / p95 / max): {}",
        timings
            .iter()
            .map(|(k, s)| format!("{k} {:.1} / {:.1} / {:.1}", s.p50, s.p95, s.max))
            .collect::<Vec<_>>()
            .join("; ")
    );
    let _ = writeln!(md);
    let _ = writeln!(md, "Per ticket (p50 median): sanitizer terms {:.0}, planned chunk terms {:.0}, sum of their df {:.0} (p95 {:.0}), rows the planned MATCH matches {:.0} (p95 {:.0}, {:.2}% of chunks), hits {:.0}.",
        extracted.p50, nterms.p50, dfsum.p50, dfsum.p95, matched.p50, matched.p95, 100.0 * matched.p50 / chunks.max(1) as f64, hits.p50);
    let _ = writeln!(md);
    let _ = writeln!(
        md,
        "Corpus: {records} records, {chunks} chunks, index {:.2} GB; measured in {:.0} s.",
        marker["db_bytes"].as_f64().unwrap_or(0.0) / 1e9,
        t0.elapsed().as_secs_f64()
    );
    print!("{md}");
    if let Some(j) = arg(args, "--json") {
        let out = serde_json::json!({
            "recall_ms": sr, "floor_ms": sf, "naive_floor_ms": sn,
            "ratio_p50": sr.p50 / sf.p50, "ratio_p95": sr.p95 / sf.p95,
            "pair_ratio": sp, "per_ticket_ratio": spt,
            "recall_runs_ms": rec, "floor_runs_ms": flo, "naive_runs_ms": naive,
            "timings_ms": timings.iter().map(|(k, s)| (k.clone(), serde_json::to_value(s).expect("json"))).collect::<serde_json::Map<_, _>>(),
            "tickets": files.iter().zip(&plans).map(|(f, p)| serde_json::json!({
                "file": f, "extracted_terms": p.extracted, "chunk_terms": p.terms, "matched": p.matched,
            })).collect::<Vec<_>>(),
            "corpus": marker,
        });
        std::fs::write(j, serde_json::to_string_pretty(&out).expect("json")).expect("write json");
    }
}

fn percentile_of(xs: &[f64], p: f64) -> f64 {
    let mut s = xs.to_vec();
    s.sort_by(f64::total_cmp);
    percentile(&s, p)
}
