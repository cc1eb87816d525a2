//! `recall reindex`: rebuild the record index from the record files.

use anyhow::Result;
use serde_json::json;

use super::args::ReindexArgs;
use super::context::Ctx;
use crate::index::SyncReport;
use crate::store::{Scope, ScopeDir};

/// Exit code when the batch finished but some files failed.
pub const PARTIAL: u8 = 3;

pub fn run(ctx: &Ctx, a: ReindexArgs) -> Result<u8> {
    super::context::be_nice(&ctx.config);
    let dirs = ctx.reindex_scopes(a.all_projects)?;
    let mut total = SyncReport::default();
    for dir in &dirs {
        let report = match reindex_scope(ctx, dir, a.full, !a.json) {
            Ok(r) => r,
            // One project's damaged index does not stop the others; its
            // fix names it, since `reindex --full` run elsewhere would
            // rebuild another project.
            Err(e) if a.all_projects && dir.scope == Scope::Project => {
                let id = dir.root.file_name().unwrap_or_default().to_string_lossy();
                let line =
                    format!("{e:#} (for this project: `recall reindex --full --project {id}`)");
                say!("recall: {line}");
                total.errors.push(line);
                continue;
            }
            Err(e) => return Err(e),
        };
        for e in &report.errors {
            say!("recall: skipped {e}");
        }
        total.absorb(report);
    }
    if a.json {
        outln!(
            "{}",
            json!({"version": 1, "scopes": dirs.len(), "summary": total})
        );
    } else {
        say!(
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

/// Rebuild one scope through the façade, saying where a damaged index went.
fn reindex_scope(ctx: &Ctx, dir: &ScopeDir, full: bool, bar: bool) -> Result<SyncReport> {
    let done = ctx.reindex(dir, full, bar)?;
    if let Some(aside) = &done.moved_aside {
        let why = done
            .damage
            .as_deref()
            .map(|d| format!(" ({d})"))
            .unwrap_or_default();
        say!(
            "recall: the index at {} was damaged{why}; moved it aside to {} and rebuilt it from the record files; run `recall index` to add sessions and tickets again (and `recall sync` for team memory)",
            dir.index_path().display(),
            aside.display()
        );
    }
    Ok(done.report)
}
