//! `recall project list|show|records|move`: the mapping from folders to
//! project ids.

use std::path::Path;

use anyhow::Result;

use super::args::ProjectCmd;
use super::context::Ctx;
use crate::store::ProjectInfo;

pub fn run(ctx: &Ctx, cmd: ProjectCmd) -> Result<u8> {
    match cmd {
        ProjectCmd::List { json } => {
            let all = ctx.projects()?;
            if json {
                outln!("{}", serde_json::to_string_pretty(&all)?);
            } else if all.is_empty() {
                say!("no projects in {}", ctx.home.root().display());
            } else {
                for p in &all {
                    outln!("{}", line(p));
                }
            }
        }
        ProjectCmd::Show { json } => {
            let p = ctx.project()?;
            if json {
                let mut v = serde_json::to_value(&p.info)?;
                v["dir"] = p.dir.root.to_string_lossy().into_owned().into();
                v["exists"] = p.dir.root.exists().into();
                outln!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                outln!("{}", line(&p.info));
                outln!("store: {}", p.dir.root.display());
                let place = ctx.records_place()?;
                if place.in_repo {
                    outln!("records: {} (in the repository)", place.path.display());
                }
            }
        }
        ProjectCmd::Records { in_repo, in_home } => {
            let place = match (in_repo, in_home) {
                (false, false) => ctx.records_place()?,
                _ => ctx.move_records(in_repo)?,
            };
            let moved = match place.moved {
                0 => String::new(),
                n => format!(" ({n} file(s) moved)"),
            };
            let where_ = if place.in_repo {
                "in the repository"
            } else {
                "in the home"
            };
            outln!("records: {} ({where_}){moved}", place.path.display());
        }
        ProjectCmd::Move { from } => move_here(ctx, &from)?,
    }
    Ok(0)
}

/// `recall project move --from OLD`.
fn move_here(ctx: &Ctx, from: &Path) -> Result<()> {
    let (project, moved) = ctx.move_project_here(from)?;
    let root = project
        .info
        .root
        .as_deref()
        .map(|r| r.display().to_string())
        .unwrap_or_default();
    if !moved {
        outln!("project {} already lives in {root}", project.info.id);
        return Ok(());
    }
    outln!(
        "project {} ({}) now lives in {root}; its sessions recorded in {} stay its own (`recall index --claude-code`, `--codex` or `--gemini` takes any not indexed yet)",
        project.info.id,
        project.info.name,
        from.display()
    );
    Ok(())
}

fn line(p: &ProjectInfo) -> String {
    let root = p
        .root
        .as_ref()
        .map(|r| r.display().to_string())
        .unwrap_or_else(|| "(named)".into());
    format!("{}\t{}\t{}", p.id, p.name, root)
}
