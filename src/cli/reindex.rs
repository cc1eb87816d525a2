//! `recall reindex`: rebuild the record index from the record files.

use anyhow::Result;
use serde_json::json;

use super::args::ReindexArgs;
use super::context::Ctx;
use crate::error::Error;
use crate::index::{sync_records, Progress, SyncReport};
use crate::store::{Db, OpenMode, Project, ScopeDir};

/// Exit code when the batch finished but some files failed.
pub const PARTIAL: u8 = 3;

pub fn run(ctx: &Ctx, a: ReindexArgs) -> Result<u8> {
    super::context::be_nice(&ctx.config);
    let mut dirs = vec![ctx.home.user()];
    if a.all_projects {
        dirs.extend(
            Project::list(&ctx.home)?
                .iter()
                .map(|p| ctx.home.project(&p.id)),
        );
    } else {
        dirs.push(ctx.ensure_scope(crate::store::Scope::Project)?);
    }
    let mut total = SyncReport::default();
    for dir in &dirs {
        let report = reindex_scope(ctx, dir, a.full, !a.json)?;
        for e in &report.errors {
            eprintln!("recall: skipped {e}");
        }
        total.absorb(report);
    }
    if a.json {
        outln!(
            "{}",
            json!({"version": 1, "scopes": dirs.len(), "summary": total})
        );
    } else {
        eprintln!(
            "reindex: scanned {}, added {}, updated {}, removed {}, unchanged {}, errors {}",
            total.scanned,
            total.added,
            total.updated,
            total.removed,
            total.unchanged,
            total.errors.len()
        );
    }
    Ok(if total.errors.is_empty() { 0 } else { PARTIAL })
}

/// Open (recreating a corrupt index when `full`) and sync one scope.
fn reindex_scope(ctx: &Ctx, dir: &ScopeDir, full: bool, bar: bool) -> Result<SyncReport> {
    ctx.home.ensure()?;
    let path = dir.index_path();
    let mut db = match Db::open(&path, crate::store::OpenMode::ReadWrite) {
        Err(Error::CorruptIndex { .. } | Error::SchemaTooNew { .. }) if full => {
            let aside = path.with_extension(format!("db.corrupt-{}", ctx.now.as_second()));
            std::fs::rename(&path, &aside)?;
            for ext in ["db-wal", "db-shm"] {
                let _ = std::fs::remove_file(path.with_extension(ext));
            }
            eprintln!(
                "recall: moved the unreadable index aside to {}; sessions and tickets must be indexed again with `recall index`",
                aside.display()
            );
            Db::open(&path, OpenMode::ReadWrite)?
        }
        other => other?,
    };
    let files = count_files(dir);
    let progress = Progress::new(files, &format!("{} records", dir.scope), bar);
    let report = sync_records(db.writer()?, dir, &ctx.limits(), full, &progress)?;
    if full {
        crate::index::rebuild_source_fts(db.writer()?)?;
    }
    progress.finish();
    Ok(report)
}

fn count_files(dir: &ScopeDir) -> u64 {
    walkdir::WalkDir::new(dir.records_dir())
        .min_depth(2)
        .max_depth(2)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .count() as u64
}
