//! `recall query` and bare `recall TEXT`.

use std::io::{IsTerminal, Read, Write};

use anyhow::{bail, Context as _, Result};

use super::args::{HitKindArg, QueryArgs, QueryFormat};
use super::context::Ctx;
use crate::memory::{parse_search_scope, RecallOptions};
use crate::recall::{HitKind, Request, Response};
use crate::render::{
    render_json, render_prompt, render_snippets, PromptOptions, Style, PROMPT_TOKENS,
};
use crate::when::parse_when;

/// The query text from the arguments, `--query-file`, or stdin.
/// The query as given: TEXT, the file, or stdin. An empty one is not an
/// error: it finds nothing (exit 1) and says it was empty.
fn query_text(a: &QueryArgs) -> Result<String> {
    if !a.text.is_empty() {
        if a.query_file.is_some() {
            bail!("pass the query as TEXT or with --query-file, not both");
        }
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
fn request(ctx: &Ctx, a: &QueryArgs, text: String) -> Result<Request> {
    let opts = RecallOptions {
        limit: a.limit,
        kinds: a
            .kinds
            .iter()
            .map(|k| match k {
                HitKindArg::Record => HitKind::Record,
                HitKindArg::Session => HitKind::Session,
                HitKindArg::Ticket => HitKind::Ticket,
            })
            .collect(),
        category: a.category.as_deref().map(str::parse).transpose()?,
        since: a.since.clone(),
        until: a.until.clone(),
        session: a.session.clone(),
        max_tokens: a.max_tokens,
        prompt: a.format == Some(QueryFormat::Prompt),
        explain: a.explain,
        hybrid: a.semantic.then_some(true),
    };
    Ok(ctx.request(text, opts)?)
}

pub fn run(ctx: &Ctx, a: QueryArgs) -> Result<u8> {
    // The prompt format has no place for scores: the flag would do nothing.
    if a.explain && a.format == Some(QueryFormat::Prompt) {
        bail!("--explain shows each hit's score in the snippets and json formats; the prompt format shows none (run the query again with --format snippets --explain to see them)");
    }
    let at =
        a.at.as_deref()
            .map(|w| parse_when(w, ctx.now))
            .transpose()?;
    let ctx = &at.map_or_else(|| ctx.clone(), |t| ctx.at(t));
    let text = query_text(&a)?;
    let req = request(ctx, &a, text)?;
    let found = ctx.recall(&req, parse_search_scope(&a.scope)?)?;
    let out = render(&found.response, &a, &found.project);
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(out.as_bytes())?;
    stdout.flush()?;
    // The prompt adds a header and each hit's title and source to the
    // hits' text, so hits chosen within the budget can leave none that
    // fits: that is no answer, as when nothing was found.
    let shown_none = out.is_empty() && !found.response.hits.is_empty();
    // A look from another time notes nothing: salience is stamped with
    // the time of use, and a made-up one would skew it for years.
    if !a.no_salience && a.at.is_none() && !shown_none {
        found.note_hits(ctx.now.as_second());
    }
    if let Some(note) = &found.note {
        say!("recall: {note}");
    }
    if let Some(why) = &found.no_hits {
        say!("recall: {why}");
    }
    if shown_none {
        say!(
            "recall: nothing fits in {} tokens: the best hit's text alone is about {}, and the prompt adds a header and each hit's title and source; raise --max-tokens",
            a.max_tokens.unwrap_or(PROMPT_TOKENS),
            crate::text::estimate_tokens(&found.response.hits[0].text)
        );
        return Ok(1);
    }
    Ok(if found.response.hits.is_empty() { 1 } else { 0 })
}

pub fn render(resp: &Response, a: &QueryArgs, project: &str) -> String {
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
