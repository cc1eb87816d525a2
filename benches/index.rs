//! Transcript indexing throughput.
//!
//! Criterion benches (`cargo bench --bench index`):
//! - `index/claude_jsonl/100mb`: a full index, from an empty database, of a
//!   seeded synthetic corpus of Claude Code transcripts through the library
//!   API (`Db::open` + `index_sources`). `RECALL_BENCH_INDEX_MB` changes the
//!   size (the name follows it).
//! - `index/unchanged/10k_files`: re-running the index over 10,000 small,
//!   already indexed transcripts (folder walk + the stat-only path).
//!
//! The same binary has two helper modes used by `scripts/bench-index.sh`
//! (run it directly, or `cargo bench --bench index -- <mode> ...`):
//! - `generate --out DIR --bytes N [--seed S] [--small-files N]`: write the
//!   seeded corpus (same seed and size: byte-identical files) into DIR,
//!   reusing DIR when its marker says it already holds that corpus.
//! - `generate-one --out FILE --bytes N [--seed S]`: write one seeded
//!   Claude Code session of about N bytes (`scripts/bench-bigfile.sh`).
//! - `floor --src SRC.db --dst DST.db [--secure-delete] [--hashsize BYTES]`: the raw FTS5
//!   floor with this crate's bundled SQLite: insert every row of `SRC.src`
//!   into a fresh `fts5(title, body, aux)` table in one transaction; prints
//!   JSON with the insert time only.
//!
//! The corpus is the shared seeded generator's (`synth::claude`: Claude
//! Code sessions of 100 KB - 2 MB, or 1-4 KB for the small files), written
//! into a temporary folder, or under `$RECALL_BENCH_CACHE` when set (and
//! then reused across runs).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, Throughput};
use recall::index::{index_sources, IndexReport, RunOptions};
use recall::ingest::discover::{expand, Input};
use recall::ingest::IngestOptions;
use recall::store::{Db, OpenMode};
use synth::claude::{generate, generate_one, Corpus};

const DEFAULT_SEED: u64 = 42;
const MB: u64 = 1_000_000;

// ---------------------------------------------------------------------------
// Indexing through the library

fn index_dir(home: &Path, inputs: &[Input]) -> IndexReport {
    let mut db = Db::open(&home.join("index.db"), OpenMode::ReadWrite).expect("open index");
    let run = RunOptions {
        now: 1_767_225_600,
        ..RunOptions::default()
    };
    let report = index_sources(
        db.writer().expect("writer"),
        inputs,
        &IngestOptions::default(),
        &run,
        &mut |_| {},
    )
    .expect("index");
    assert_eq!(report.failed, 0, "{}", report.summary());
    report
}

/// A corpus folder: under `$RECALL_BENCH_CACHE` (kept) or a temp dir.
fn corpus_dir(name: &str) -> (PathBuf, Option<tempfile::TempDir>) {
    match std::env::var_os("RECALL_BENCH_CACHE") {
        Some(c) => {
            let root = PathBuf::from(c);
            std::fs::create_dir_all(&root).expect("cache folder");
            (root.join(name), None)
        }
        None => {
            let t = tempfile::tempdir().expect("tempdir");
            (t.path().join(name), Some(t))
        }
    }
}

fn bench_full(c: &mut Criterion) {
    let mb: u64 = std::env::var("RECALL_BENCH_INDEX_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    // Criterion calls the routine once per sample: set up once, lazily (so a
    // filtered-out bench generates nothing).
    type Setup = (Vec<Input>, Corpus, Option<tempfile::TempDir>);
    let setup: OnceLock<Setup> = OnceLock::new();
    let last: std::cell::Cell<Option<(usize, u64, u64)>> = std::cell::Cell::new(None);
    let mut g = c.benchmark_group("index/claude_jsonl");
    g.sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_secs(30));
    // Criterion needs the throughput before the corpus exists: the nominal
    // size; the actual size and chunk rate are printed after the group.
    g.throughput(Throughput::Bytes(mb * MB));
    g.bench_function(format!("{mb}mb"), |b| {
        let (inputs, _, _) = setup.get_or_init(|| {
            let (dir, keep) = corpus_dir(&format!("claude-{mb}mb-seed{DEFAULT_SEED}"));
            let c = generate(&dir, mb * MB, DEFAULT_SEED, None).expect("write corpus");
            let inputs = expand(std::slice::from_ref(&dir)).expect("walk corpus");
            (inputs, c, keep)
        });
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let home = tempfile::tempdir().expect("tempdir");
                let t = Instant::now();
                let r = index_dir(home.path(), inputs);
                let el = t.elapsed();
                total += el;
                last.set(Some((r.chunks, r.bytes, el.as_millis() as u64)));
            }
            total
        });
    });
    g.finish();
    if let (Some((_, corpus, _)), Some((chunks, bytes, ms))) = (setup.get(), last.get()) {
        eprintln!(
            "index/claude_jsonl/{mb}mb: corpus {} files, {:.1} MB; last run {chunks} chunks in {:.2}s: {:.1} MB/s, {:.0} chunks/s",
            corpus.files,
            corpus.bytes as f64 / 1e6,
            ms as f64 / 1e3,
            bytes as f64 / 1e3 / ms.max(1) as f64,
            chunks as f64 * 1e3 / ms.max(1) as f64
        );
    }
}

fn bench_unchanged(c: &mut Criterion) {
    const FILES: usize = 10_000;
    type Setup = (PathBuf, tempfile::TempDir, Option<tempfile::TempDir>);
    let setup: OnceLock<Setup> = OnceLock::new();
    let mut g = c.benchmark_group("index/unchanged");
    g.sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(10));
    g.throughput(Throughput::Elements(FILES as u64));
    g.bench_function("10k_files", |b| {
        let (dir, home, _) = setup.get_or_init(|| {
            let (dir, keep) = corpus_dir(&format!("small-10k-seed{DEFAULT_SEED}"));
            let corpus = generate(&dir, 0, DEFAULT_SEED, Some(FILES)).expect("write corpus");
            assert_eq!(corpus.files, FILES);
            let home = tempfile::tempdir().expect("tempdir");
            let inputs = expand(std::slice::from_ref(&dir)).expect("walk corpus");
            let first = index_dir(home.path(), &inputs);
            assert_eq!(first.indexed, FILES, "{}", first.summary());
            (dir, home, keep)
        });
        b.iter(|| {
            // Walk + stat-only pass, as `recall index DIR` does.
            let inputs = expand(std::slice::from_ref(dir)).expect("walk corpus");
            let r = index_dir(home.path(), &inputs);
            assert_eq!(r.unchanged, FILES);
            r
        });
    });
    g.finish();
}

// ---------------------------------------------------------------------------
// Helper modes

fn arg<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
}

fn cmd_generate_one(args: &[String]) {
    let out = PathBuf::from(arg(args, "--out").expect("--out FILE"));
    let bytes: u64 = arg(args, "--bytes").map_or(0, |v| v.parse().expect("--bytes N"));
    let seed: u64 = arg(args, "--seed").map_or(DEFAULT_SEED, |v| v.parse().expect("--seed S"));
    let t = Instant::now();
    let written = generate_one(&out, bytes, seed).expect("write session file");
    println!(
        "{{\"bytes\":{written},\"seconds\":{:.3}}}",
        t.elapsed().as_secs_f64()
    );
}

fn cmd_generate(args: &[String]) {
    let out = PathBuf::from(arg(args, "--out").expect("--out DIR"));
    let bytes: u64 = arg(args, "--bytes").map_or(0, |v| v.parse().expect("--bytes N"));
    let seed: u64 = arg(args, "--seed").map_or(DEFAULT_SEED, |v| v.parse().expect("--seed S"));
    let small = arg(args, "--small-files").map(|v| v.parse().expect("--small-files N"));
    let t = Instant::now();
    let c = generate(&out, bytes, seed, small).expect("write corpus");
    println!(
        "{{\"files\":{},\"bytes\":{},\"seconds\":{:.3}}}",
        c.files,
        c.bytes,
        t.elapsed().as_secs_f64()
    );
}

/// Raw FTS5 insert floor with the bundled SQLite (the version we ship).
fn cmd_floor(args: &[String]) {
    let src = arg(args, "--src").expect("--src SRC.db");
    let dst = PathBuf::from(arg(args, "--dst").expect("--dst DST.db"));
    let hashsize: Option<i64> = arg(args, "--hashsize").map(|v| v.parse().expect("--hashsize N"));
    for ext in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{ext}", dst.display()));
    }
    let c = rusqlite::Connection::open(&dst).expect("open floor db");
    c.pragma_update(None, "journal_mode", "WAL").expect("wal");
    c.pragma_update(None, "synchronous", "NORMAL")
        .expect("sync");
    c.execute("ATTACH ?1 AS s", [src]).expect("attach");
    c.execute_batch(
        "CREATE VIRTUAL TABLE t USING fts5(title, body, aux, tokenize = 'unicode61 remove_diacritics 2');",
    )
    .expect("create");
    if args.iter().any(|a| a == "--secure-delete") {
        // As in schema/0001_init.sql (only changes deletes, but also the
        // FTS5 file format version).
        c.execute_batch("INSERT INTO t(t, rank) VALUES('secure-delete', 1);")
            .expect("secure-delete");
    }
    if let Some(h) = hashsize {
        c.execute("INSERT INTO t(t, rank) VALUES('hashsize', ?1)", [h])
            .expect("hashsize");
    }
    let t = Instant::now();
    c.execute_batch(
        "BEGIN; INSERT INTO t(rowid, title, body, aux) SELECT id, title, body, aux FROM s.src; COMMIT;",
    )
    .expect("insert");
    let secs = t.elapsed().as_secs_f64();
    let rows: i64 = c
        .query_row("SELECT count(*) FROM s.src", [], |r| r.get(0))
        .expect("count");
    let version: String = c
        .query_row("SELECT sqlite_version()", [], |r| r.get(0))
        .expect("version");
    println!("{{\"seconds\":{secs:.3},\"rows\":{rows},\"sqlite\":\"{version}\"}}");
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    match args.first().map(String::as_str) {
        Some("generate") => return cmd_generate(&args[1..]),
        Some("generate-one") => return cmd_generate_one(&args[1..]),
        Some("floor") => return cmd_floor(&args[1..]),
        _ => {}
    }
    let mut c = Criterion::default().configure_from_args();
    bench_full(&mut c);
    bench_unchanged(&mut c);
    c.final_summary();
}
