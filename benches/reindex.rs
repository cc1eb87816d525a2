//! `reindex/records/{10k,100k}`: rebuilding a scope's record index from
//! seeded record files (the shared generator's facts, `synth::records`),
//! from scratch (`full`) and when nothing changed (`noop`, the stat-only
//! path).

use std::path::Path;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use recall::index::{sync_records, Progress};
use recall::records::{render_record, Category, Limits, Record, Source};
use recall::store::{atomic_write, Db, OpenMode, Scope, ScopeDir};

/// `n` seeded record files: the shared generator's facts (`synth::records`,
/// bodies of 15-150 words), ids numbered so that none collide.
fn make_corpus(dir: &ScopeDir, n: usize, seed: u64) {
    let vocab = synth::Vocab::new(seed);
    let now: jiff::Timestamp = "2026-01-01T00:00:00Z".parse().expect("constant timestamp");
    let facts = synth::records::facts(&vocab, seed, n, n / 10, Category::ALL.len());
    for (i, f) in facts.iter().enumerate() {
        let cat = Category::ALL[f.category];
        let mut r = Record::new(&f.key, cat, Scope::Project, Source::Manual, &f.body, now);
        r.meta.id = format!("fact-{i}");
        r.meta.keywords = f.keywords.clone();
        let path = dir
            .records_dir()
            .join(cat.as_str())
            .join(format!("fact-{i}.md"));
        atomic_write(&path, render_record(&r).expect("valid record").as_bytes()).expect("write");
    }
}

fn reindex(dir: &ScopeDir, full: bool) -> usize {
    let mut db = Db::open(&dir.index_path(), OpenMode::ReadWrite).expect("open");
    let r = sync_records(
        db.writer().expect("writer"),
        dir,
        &Limits::default(),
        full,
        &Progress::hidden(),
    )
    .expect("sync");
    r.added + r.updated + r.unchanged
}

fn remove_index(dir: &Path) {
    for f in ["index.db", "index.db-wal", "index.db-shm"] {
        let _ = std::fs::remove_file(dir.join(f));
    }
}

fn bench(c: &mut Criterion) {
    for (name, n) in [("10k", 10_000), ("100k", 100_000)] {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = ScopeDir {
            scope: Scope::Project,
            root: tmp.path().to_path_buf(),
        };
        make_corpus(&dir, n, 42);
        let mut g = c.benchmark_group("reindex/records");
        g.sample_size(10);
        g.bench_function(format!("{name}/full"), |b| {
            b.iter_batched(
                || remove_index(&dir.root),
                |_| assert_eq!(reindex(&dir, true), n),
                BatchSize::PerIteration,
            )
        });
        reindex(&dir, true);
        g.bench_function(format!("{name}/noop"), |b| {
            b.iter(|| assert_eq!(reindex(&dir, false), n))
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
