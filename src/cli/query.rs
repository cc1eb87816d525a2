//! `recall query` and bare `recall TEXT`.

use std::io::{IsTerminal, Read, Write};

use anyhow::{bail, Context as _, Result};

use super::args::{HitKindArg, QueryArgs, QueryFormat};
use super::context::Ctx;
use crate::recall::plan::table_docs;
use crate::recall::{recall, record_hits, HitKind, Request, Response, Target};
use crate::render::{render_json, render_prompt, render_snippets, PromptOptions, Style};
use crate::store::{Db, OpenMode, Scope, ScopeDir, Table};
use crate::when::parse_when;

/// Default budget of the prompt format, in estimated tokens.
pub const PROMPT_TOKENS: usize = 2000;

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

/// The request a query's flags describe.
pub fn request(ctx: &Ctx, a: &QueryArgs, text: String) -> Result<Request> {
    let mut req = Request::new(text, a.limit.unwrap_or(ctx.config.recall.limit), ctx.now);
    req.category = a.category.as_deref().map(str::parse).transpose()?;
    req.kinds = a
        .kinds
        .iter()
        .map(|k| match k {
            HitKindArg::Record => HitKind::Record,
            HitKindArg::Session => HitKind::Session,
            HitKindArg::Ticket => HitKind::Ticket,
        })
        .collect();
    req.since = a
        .since
        .as_deref()
        .map(|s| parse_when(s, ctx.now))
        .transpose()?
        .map(|t| t.as_second());
    req.until = a
        .until
        .as_deref()
        .map(|s| parse_when(s, ctx.now))
        .transpose()?
        .map(|t| t.as_second());
    req.session = a.session.clone();
    req.max_tokens = match a.format {
        Some(QueryFormat::Prompt) => Some(a.max_tokens.unwrap_or(PROMPT_TOKENS)),
        _ => a.max_tokens,
    };
    req.tuning = ctx.config.recall.tuning.clone();
    Ok(req)
}

/// The scope folders a `--scope` value selects.
pub fn scope_dirs(ctx: &Ctx, scope: &str) -> Result<(Vec<ScopeDir>, String)> {
    let project = ctx.project()?;
    let dirs = match scope {
        "" | "all" => vec![project.dir.clone(), ctx.home.user()],
        s => match s.parse::<Scope>()? {
            Scope::Project => vec![project.dir.clone()],
            Scope::User => vec![ctx.home.user()],
        },
    };
    Ok((dirs, project.info.id))
}

pub fn run(ctx: &Ctx, a: QueryArgs) -> Result<u8> {
    let text = query_text(&a)?;
    let req = request(ctx, &a, text)?;
    let (dirs, project) = scope_dirs(ctx, &a.scope)?;
    let dbs = open_scopes(ctx, &dirs)?;
    let targets: Vec<Target> = dbs.iter().map(|(dir, db)| Target { dir, db }).collect();
    let resp = recall(&targets, &req)?;
    let out = render(&resp, &a, &project);
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(out.as_bytes())?;
    stdout.flush()?;
    for (i, (dir, _)) in dbs.iter().enumerate() {
        record_hits(&dir.index_path(), &resp.touched, i, ctx.now.as_second());
    }
    if resp.hits.is_empty() {
        explain_no_hits(ctx, &req, &targets, &dirs, &project)?;
    }
    Ok(if resp.hits.is_empty() { 1 } else { 0 })
}

/// Open the scopes of `dirs` that exist, for reading. A scope with records
/// but no index yet gets one (the records are the truth); otherwise nothing
/// here writes to the database.
pub fn open_scopes<'a>(ctx: &Ctx, dirs: &'a [ScopeDir]) -> Result<Vec<(&'a ScopeDir, Db)>> {
    let mut dbs = Vec::new();
    for dir in dirs.iter().filter(|d| d.root.exists()) {
        let db = match ctx.open_for_read(dir, true)? {
            Some(db) => db,
            None if dir.records_dir().exists() => {
                drop(ctx.open_synced(dir)?);
                Db::open(&dir.index_path(), OpenMode::ReadOnly)?
            }
            None => continue,
        };
        dbs.push((dir, db));
    }
    Ok(dbs)
}

/// On stderr, why a query printed nothing: a budget too small for any hit,
/// or what was searched (so a mistyped `--home` or an empty project does
/// not look like "no match").
fn explain_no_hits(
    ctx: &Ctx,
    req: &Request,
    targets: &[Target],
    dirs: &[ScopeDir],
    project: &str,
) -> Result<()> {
    if let Some(budget) = req.max_tokens {
        let mut free = req.clone();
        free.max_tokens = None;
        free.limit = 1;
        if let Some(best) = recall(targets, &free)?.hits.first() {
            eprintln!(
                "recall: nothing fits in {budget} tokens: the best hit needs about {} (its text), plus the prompt's header; raise --max-tokens",
                crate::text::estimate_tokens(&best.text)
            );
            return Ok(());
        }
    }
    let mut searched = Vec::new();
    for dir in dirs {
        let found = targets.iter().find(|t| t.dir.root == dir.root);
        let what = match found {
            Some(t) => {
                let n = t.db.with_conn(|c| {
                    let mut n = [0i64; 3];
                    for (i, table) in Table::ALL.into_iter().enumerate() {
                        n[i] = table_docs(c, table)?;
                    }
                    Ok(n)
                })?;
                format!("{} records, {} passages, {} ticket parts", n[0], n[1], n[2])
            }
            None => "no index".to_string(),
        };
        searched.push(format!(
            "{} scope {} ({what})",
            dir.scope,
            dir.root.display()
        ));
    }
    eprintln!(
        "recall: no hits in home {} for project {project}; searched {}",
        ctx.home.root().display(),
        searched.join("; ")
    );
    Ok(())
}

fn render(resp: &Response, a: &QueryArgs, project: &str) -> String {
    match a.format.unwrap_or(QueryFormat::Snippets) {
        QueryFormat::Json => render_json(resp, Some(project)) + "\n",
        QueryFormat::Prompt => render_prompt(
            resp,
            PromptOptions {
                max_tokens: a.max_tokens.unwrap_or(PROMPT_TOKENS),
            },
        ),
        QueryFormat::Snippets => {
            let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
            render_snippets(resp, if color { Style::Color } else { Style::Plain })
        }
    }
}
