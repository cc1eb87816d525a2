//! `recall query` and bare `recall TEXT`.

use std::io::{IsTerminal, Read};

use anyhow::{bail, Context as _, Result};

use super::args::{QueryArgs, QueryFormat};
use super::context::Ctx;
use crate::recall::{recall, Request, Response, Target};
use crate::render::{render_json, render_prompt, render_snippets, PromptOptions, Style};
use crate::store::{Db, OpenMode};

/// The query text from the arguments, `--query-file`, or stdin.
fn query_text(a: &QueryArgs) -> Result<String> {
    if !a.text.is_empty() {
        return Ok(a.text.join(" "));
    }
    let bytes = if let Some(f) = &a.query_file {
        std::fs::read(f).with_context(|| format!("cannot read the query file {}", f.display()))?
    } else {
        let stdin = std::io::stdin();
        if stdin.is_terminal() {
            bail!("no query: pass TEXT, --query-file FILE, or pipe the query on stdin");
        }
        let mut b = Vec::new();
        stdin
            .lock()
            .read_to_end(&mut b)
            .context("cannot read stdin")?;
        b
    };
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

pub fn run(ctx: &Ctx, a: QueryArgs) -> Result<u8> {
    let text = query_text(&a)?;
    let category = a.category.as_deref().map(str::parse).transpose()?;
    let project = ctx.project()?;
    let dirs = [project.dir.clone(), ctx.home.user()];
    let mut dbs = Vec::new();
    for dir in &dirs {
        if !dir.root.exists() {
            continue;
        }
        let db = if dir.records_dir().exists() {
            ctx.open_synced(dir)?
        } else {
            Db::open(&dir.index_path(), OpenMode::ReadWrite)?
        };
        dbs.push((dir, db));
    }
    let targets: Vec<Target> = dbs.iter().map(|(dir, db)| Target { dir, db }).collect();
    let req = Request {
        query: text,
        limit: a.limit.unwrap_or(ctx.config.recall.limit),
        category,
        now: ctx.now,
    };
    let resp = recall(&targets, &req)?;
    print!("{}", render(&resp, &a, project.info.id.as_str()));
    Ok(if resp.hits.is_empty() { 1 } else { 0 })
}

fn render(resp: &Response, a: &QueryArgs, project: &str) -> String {
    match a.format.unwrap_or(QueryFormat::Snippets) {
        QueryFormat::Json => render_json(resp, Some(project)) + "\n",
        QueryFormat::Prompt => render_prompt(
            resp,
            PromptOptions {
                max_tokens: a.max_tokens,
            },
        ),
        QueryFormat::Snippets => {
            let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
            render_snippets(resp, if color { Style::Color } else { Style::Plain })
        }
    }
}
