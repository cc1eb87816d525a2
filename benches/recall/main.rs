//! End-to-end recall latency.
//!
//! Criterion bench (`cargo bench --bench recall`):
//! - `recall/ticket_query/100k_chunks`: the library call
//!   `recall::recall::recall` (plan + fetch + rank, the database already
//!   open, like one query of a running process) with seeded 300-word
//!   tickets, round-robin, against a generated project of 10,000 records
//!   and 100,000 session chunks. `RECALL_BENCH_CHUNKS` / `_RECORDS` change
//!   the size (the name follows the chunk count).
//!
//! The same binary has helper modes used by `scripts/bench-recall.sh` (run
//! it directly, or `cargo bench --bench recall -- <mode> ...`):
//! - `generate --home H --project NAME --records N --chunks N [--seed S]`:
//!   build the project's index (see "Generation" below); reused when the
//!   marker `H/.recall-bench.json` says H already holds that corpus.
//!   Prints JSON (timings, sizes).
//! - `tickets --home H --out DIR --count N [--words W] [--seed S]`: write
//!   seeded tickets `DIR/ticket-NN.txt`, each of exactly W words and each
//!   about the topic of one generated session.
//! - `compare --recall BIN --floor BIN --home H --project NAME --tickets DIR
//!   [--reps N] [--naive-reps N] [--json FILE]`: the end-to-end comparison;
//!   prints a Markdown report (see `cmd_compare`).
//!
//! Generation (seeded, byte-identical for the same seed and sizes; the
//! text is the shared generator's, `crates/synth`):
//! - vocabulary (`synth::Vocab`, in its `Mix::CHAT`): ~430 English words of
//!   coding talk in frequency order, then 30,000 pseudo-words (rare domain
//!   vocabulary), sampled together from one Zipf(1) distribution; plus
//!   Zipf-sampled code identifiers, CamelCase types and file paths, numbers
//!   and hashes. Each session has a topic of 40 rare words and identifiers
//!   that make up ~8% of its words, so rare terms cluster by session as
//!   they do in real transcripts;
//! - sessions (`synth::conversation`): 8–128 chunks each; user/assistant/tool messages cut into
//!   per-message passages by the real chunker
//!   (`recall::ingest::chunk::chunk_messages` with its default options), so
//!   `spans` and `message_ids` are exactly what `recall index` writes;
//! - rows go straight into `sources`, `sessions`, `chunks` and
//!   `chunks_fts(title, body, aux = recall::text::aux_terms(body))`, with
//!   the term statistics the indexer keeps (`recall::store::TermDeltas`),
//!   in transactions of 20,000 chunks (the indexer's batch size), after
//!   `Db::open(.., ReadWrite)` created the schema with the migrations;
//! - records (`synth::records`) are real Markdown files written with `render_record` and then
//!   indexed by `recall::index::sync_records`, so `records`, `records_fts`
//!   and `record_dirs` are exactly what `recall` itself writes, and the
//!   query path's stat check of the record folders runs for real.

//!
//! The corpus and the tickets are in `corpus.rs`, the comparison in
//! `compare.rs`.

mod compare;
mod corpus;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::Criterion;
use recall::recall::{recall as run_recall, Request, Target};
use recall::store::{Db, Home, OpenMode, Project};
use synth::Vocab;

use corpus::{generate, layout, ticket, Spec, GEN_VERSION};

const DEFAULT_SEED: u64 = 42;
/// Fixed "now" of the generated corpus (timestamps go back a year from it).
const NOW: i64 = 1_767_225_600; // 2026-01-01T00:00:00Z

fn arg<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
}

fn num(args: &[String], name: &str, default: u64) -> u64 {
    arg(args, name).map_or(default, |s| {
        s.replace('_', "")
            .parse()
            .unwrap_or_else(|_| panic!("bad {name} {s}"))
    })
}

// ---------------------------------------------------------------------------
// Criterion

fn bench_ticket_query(c: &mut Criterion) {
    let chunks = std::env::var("RECALL_BENCH_CHUNKS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000usize);
    let records = std::env::var("RECALL_BENCH_RECORDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000usize);
    let spec = Spec {
        gen_version: GEN_VERSION,
        seed: DEFAULT_SEED,
        project: "bench".into(),
        records,
        chunks,
    };
    let tmp;
    let home = match std::env::var_os("RECALL_BENCH_CACHE") {
        Some(d) => PathBuf::from(d).join(format!("recall-{records}r-{chunks}c-seed{DEFAULT_SEED}")),
        None => {
            tmp = tempfile::tempdir().expect("tempdir");
            tmp.path().join("home")
        }
    };
    let t = Instant::now();
    let m = generate(&home, &spec);
    eprintln!(
        "[bench] corpus ready in {:.1} s (reused: {})",
        t.elapsed().as_secs_f64(),
        m["reused"]
    );
    let h = Home::new(&home);
    let project = Project::resolve(&h, Some("bench"), &home).expect("project");
    let db = Db::open(&project.dir.index_path(), OpenMode::ReadWrite).expect("open");
    let vocab = Vocab::new(DEFAULT_SEED);
    let n_sessions = layout(DEFAULT_SEED, chunks).len();
    let tickets: Vec<String> = (0..20)
        .map(|i| ticket(&vocab, DEFAULT_SEED, n_sessions, i, 300))
        .collect();
    let now = jiff::Timestamp::from_second(NOW).expect("constant");
    let targets = [Target {
        dir: &project.dir,
        db: &db,
    }];
    let name = if chunks.is_multiple_of(1000) {
        format!("{}k_chunks", chunks / 1000)
    } else {
        format!("{chunks}_chunks")
    };
    let mut g = c.benchmark_group("recall");
    g.sample_size(30)
        .warm_up_time(Duration::from_secs(3))
        .measurement_time(Duration::from_secs(20));
    let mut i = 0;
    g.bench_function(format!("ticket_query/{name}"), |b| {
        b.iter(|| {
            let mut req = Request::new(tickets[i % tickets.len()].clone(), 10, now);
            req.max_tokens = Some(2000);
            i += 1;
            let r = run_recall(&targets, &req).expect("recall");
            assert!(!r.hits.is_empty());
            r
        })
    });
    g.finish();
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    match args.first().map(String::as_str) {
        Some("generate") => return corpus::cmd_generate(&args[1..]),
        Some("tickets") => return corpus::cmd_tickets(&args[1..]),
        Some("compare") => return compare::cmd_compare(&args[1..]),
        _ => {}
    }
    let mut c = Criterion::default().configure_from_args();
    bench_ticket_query(&mut c);
    c.final_summary();
}
