//! `recall reindex`: rebuild the record index from the record files.

use anyhow::Result;
use serde_json::json;

use super::args::ReindexArgs;
use super::context::Ctx;
use crate::index::{Progress, SyncReport};
use crate::store::{Project, ScopeDir};

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

/// Rebuild one scope through the façade, with a progress bar.
fn reindex_scope(ctx: &Ctx, dir: &ScopeDir, full: bool, bar: bool) -> Result<SyncReport> {
    let files = count_files(dir);
    let progress = Progress::new(files, &format!("{} records", dir.scope), bar);
    let done = ctx.reindex(dir, full, &progress)?;
    progress.finish();
    if let Some(aside) = &done.moved_aside {
        eprintln!(
            "recall: the index at {} was damaged; moved it aside to {} and rebuilt it from the record files; run `recall index` to add sessions and tickets again (and `recall sync` for team memory)",
            dir.index_path().display(),
            aside.display()
        );
    }
    Ok(done.report)
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
