//! `recall project list|show`: the mapping from folders to project ids.

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
                eprintln!("no projects in {}", ctx.home.root().display());
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
    }
    Ok(0)
}

fn line(p: &ProjectInfo) -> String {
    let root = p
        .root
        .as_ref()
        .map(|r| r.display().to_string())
        .unwrap_or_else(|| "(named)".into());
    format!("{}\t{}\t{}", p.id, p.name, root)
}
