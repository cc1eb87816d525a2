//! `recall demo`: build a temporary store from the bundled demo corpus
//! (`testdata/demo`, built into the binary, so the demo runs wherever the
//! binary does) and print a recall in two formats.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _, Result};

use super::args::{DemoArgs, GlobalArgs, QueryArgs, QueryFormat};
use super::context::Ctx;
use crate::index::{IndexReport, RunOptions, SyncReport};
use crate::ingest::discover::expand;
use crate::ingest::Kind;
use crate::records::Category;
use crate::store::Scope;

const SAMPLE_QUERY: &str = "Ticket: the config loader test is flaky on CI. \
`parse_config_file` sometimes fails with E0502 after the pnpm upgrade; what do we know?";

/// `testdata/demo`, in the binary: an installed recall has no checkout.
static CORPUS: include_dir::Dir<'static> =
    include_dir::include_dir!("$CARGO_MANIFEST_DIR/testdata/demo");

/// The corpus given, or the built-in one written out under `tmp`.
fn corpus_dir(arg: Option<PathBuf>, tmp: &Path) -> Result<PathBuf> {
    let dir = match arg {
        Some(dir) => dir,
        None => {
            let dir = tmp.join("corpus");
            CORPUS
                .extract(&dir)
                .with_context(|| format!("cannot write the demo corpus to {}", dir.display()))?;
            dir
        }
    };
    if !dir.join("records").is_dir() {
        bail!(
            "no demo corpus at {}: a corpus is a folder with records/ (and may have user/, sessions/ and tickets/); leave out --corpus for the built-in one",
            dir.display()
        );
    }
    Ok(dir)
}

/// Copy `<corpus>/<from>/<category>/*.md` into a scope's records folder.
fn copy_records(from: &Path, to: &Path) -> Result<usize> {
    let mut n = 0;
    for cat in Category::ALL {
        let src = from.join(cat.as_str());
        let Ok(entries) = std::fs::read_dir(&src) else {
            continue;
        };
        for e in entries.flatten() {
            let dst = to.join(cat.as_str()).join(e.file_name());
            crate::store::atomic_write(&dst, &std::fs::read(e.path())?)?;
            n += 1;
        }
    }
    Ok(n)
}

/// Index `<corpus>/sessions` and `<corpus>/tickets` into the project.
fn index_demo_sources(ctx: &Ctx, corpus: &Path) -> Result<IndexReport> {
    let run = RunOptions {
        now: ctx.now.as_second(),
        ..RunOptions::default()
    };
    let mut report = IndexReport::default();
    for (sub, kind) in [("sessions", Kind::Session), ("tickets", Kind::Ticket)] {
        let dir = corpus.join(sub);
        if !dir.is_dir() {
            continue;
        }
        let inputs = expand(&[dir])?;
        let r = ctx.index(&inputs, Some(kind), None, &run, &mut |l| {
            say!("recall: {l}")
        })?;
        report.chunks += r.chunks;
        report.tickets += r.tickets;
    }
    Ok(report)
}

pub fn run(a: DemoArgs) -> Result<u8> {
    let tmp = tempfile::Builder::new()
        .prefix("recall-demo-")
        .tempdir()
        .context("cannot create a temporary folder")?;
    let corpus = corpus_dir(a.corpus, tmp.path())?;
    let global = GlobalArgs {
        home: Some(tmp.path().join("home")),
        project: Some("demo".into()),
        cwd: Some(corpus.clone()),
        ephemeral: false,
    };
    let ctx = super::context::open(&global)?;
    let project = ctx.ensure_scope(Scope::Project)?;
    let user = ctx.ensure_scope(Scope::User)?;
    copy_records(&corpus.join("records"), &project.records_dir())?;
    copy_records(&corpus.join("user"), &user.records_dir())?;
    let mut total = SyncReport::default();
    for dir in [&project, &user] {
        total.absorb(ctx.reindex(dir, true, false)?.report);
    }
    for e in &total.errors {
        say!("recall: skipped {e}");
    }
    let indexed = index_demo_sources(&ctx, &corpus)?;
    say!(
        "demo: indexed {} records, {} session chunks and {} tickets from {} into {}",
        total.added,
        indexed.chunks,
        indexed.tickets,
        corpus.display(),
        tmp.path().display()
    );
    let text = if a.text.is_empty() {
        SAMPLE_QUERY.to_string()
    } else {
        a.text.join(" ")
    };
    outln!("query: {text}\n");
    for format in [QueryFormat::Snippets, QueryFormat::Prompt] {
        let name = if format == QueryFormat::Prompt {
            "prompt"
        } else {
            "snippets"
        };
        outln!("--- recall --format {name} ---");
        let q = QueryArgs {
            text: vec![text.clone()],
            format: Some(format),
            max_tokens: Some(800),
            ..QueryArgs::default()
        };
        super::query::run(&ctx, q)?;
        outln!();
    }
    if a.keep {
        let kept = tmp.keep();
        say!("demo: store kept at {}", kept.join("home").display());
    }
    Ok(0)
}
