//! `recall extract` and `recall summary`.

use std::time::Duration;

use anyhow::{bail, Result};

use super::args::{ExtractArgs, ExtractorArg, SummaryArgs};
use super::context::Ctx;
use crate::extract::run::{self, Extractor, Options};
use crate::memory::{ExtractJob, ExtractOutcome, ExtractStatus};
use crate::when::parse_when;

fn extractor(ctx: &Ctx, a: &ExtractArgs) -> Result<Extractor> {
    let cmd = a
        .extractor_cmd
        .clone()
        .or_else(|| ctx.config.extract.command.clone());
    let model = a
        .model_cmd
        .clone()
        .or_else(|| ctx.config.extract.model_command.clone());
    let timeout = Duration::from_secs(a.timeout.unwrap_or(ctx.config.extract.timeout_secs).max(1));
    let model_extractor = |cmd: String| Extractor::Model {
        cmd,
        timeout,
        workdir: ctx.home.root().join("extract-work"),
    };
    // A flag names what this run uses, whatever the config says.
    let chosen = match (
        a.extractor,
        a.extractor_cmd.is_some(),
        a.model_cmd.is_some(),
    ) {
        (Some(x), _, _) => Some(x),
        (None, true, _) => Some(ExtractorArg::Command),
        (None, false, true) => Some(ExtractorArg::Model),
        (None, false, false) => None,
    };
    // A flag for another extractor than the one named would go unused.
    let unused = match a.extractor {
        Some(ExtractorArg::Builtin) => a
            .extractor_cmd
            .as_ref()
            .map(|_| "--extractor-cmd")
            .or(a.model_cmd.as_ref().map(|_| "--model-cmd")),
        Some(ExtractorArg::Command) => a.model_cmd.as_ref().map(|_| "--model-cmd"),
        Some(ExtractorArg::Model) => a.extractor_cmd.as_ref().map(|_| "--extractor-cmd"),
        None => (a.extractor_cmd.is_some() && a.model_cmd.is_some()).then_some("--model-cmd"),
    };
    if let Some(flag) = unused {
        bail!(
            "{flag} names another extractor than this run uses; pass the one you mean (--extractor builtin, --extractor-cmd CMD or --model-cmd CMD)"
        );
    }
    match (chosen, cmd, model) {
        (Some(ExtractorArg::Builtin), _, _) => Ok(Extractor::Builtin),
        (Some(ExtractorArg::Command), None, _) => {
            bail!("--extractor command needs --extractor-cmd CMD or extract.command in config.toml")
        }
        (Some(ExtractorArg::Model), _, None) => bail!(
            "--extractor model needs --model-cmd CMD or extract.model_command in config.toml (such as \"claude -p\")"
        ),
        (Some(ExtractorArg::Model), _, Some(m)) => Ok(model_extractor(m)),
        (Some(ExtractorArg::Command) | None, Some(cmd), _) => Ok(Extractor::Command { cmd, timeout }),
        (None, None, Some(m)) => Ok(model_extractor(m)),
        (None, None, None) => Ok(Extractor::Builtin),
    }
}

pub fn run(ctx: &Ctx, a: ExtractArgs) -> Result<u8> {
    if a.status {
        return print_status(&ctx.extract_status()?, a.json);
    }
    let job = ExtractJob {
        session: a.session.clone(),
        since: a
            .since
            .as_deref()
            .map(|s| parse_when(s, ctx.now))
            .transpose()?
            .map(|t| t.as_second()),
        max_sessions: a.max_sessions,
        idle_hours: a.idle_hours,
        dry_run: a.dry_run,
        extractor: extractor(ctx, &a)?,
    };
    let ExtractOutcome {
        report,
        options,
        nothing_due,
    } = ctx.extract(&job)?;
    if a.json {
        outln!(
            "{}",
            serde_json::json!({"version": 1, "dry_run": a.dry_run, "report": report})
        );
    } else {
        // A session id two files hold is told apart by its file.
        let mut ids = std::collections::HashMap::new();
        for o in &report.outcomes {
            *ids.entry(o.session_id.as_str()).or_insert(0) += 1;
        }
        for o in &report.outcomes {
            let why = o
                .reason
                .as_deref()
                .map(|r| format!(" ({r})"))
                .unwrap_or_default();
            let file = match ids.get(o.session_id.as_str()) {
                Some(n) if *n > 1 => format!(" [{}]", o.source),
                _ => String::new(),
            };
            outln!("{}{file} {}{why}", o.session_id, o.state);
            for k in &o.kept {
                outln!("  + {k}");
            }
            for d in &o.dropped {
                outln!("  - {d}");
            }
        }
    }
    let verb = if a.dry_run { "would write" } else { "wrote" };
    say!(
        "extract: {} sessions: {} done, {} skipped, {} failed; {verb} {} records",
        report.sessions,
        report.done,
        report.skipped,
        report.failed,
        report.records
    );
    if let Some(b) = nothing_due {
        match &a.session {
            // The session asked for, not the project's backlog.
            Some(id) => say!(
                "extract: nothing due: session {id} was extracted and has not changed since, or another run is extracting it (`recall extract --status` shows it)"
            ),
            None => say!("extract: nothing due: {}", why_nothing_due(&b, &options)),
        }
    }
    if report.failed > 0 {
        say!(
            "recall: {} sessions failed (the reasons above, and in `recall extract --status`); the next runs try each again, {} times in all, and `recall extract --session ID` at any time",
            report.failed,
            run::ATTEMPTS
        );
        return Ok(super::reindex::PARTIAL);
    }
    Ok(0)
}

/// The reasons behind "0 sessions", with counts and what to change.
fn why_nothing_due(b: &run::Backlog, o: &Options) -> String {
    let days = o.max_age_secs as f64 / 86_400.0;
    let hours = o.idle_secs as f64 / 3_600.0;
    if b.sessions == 0 {
        return "no sessions are indexed in this project: run `recall index` first".into();
    }
    let mut why = Vec::new();
    if b.too_old > 0 {
        why.push(format!(
            "{} older than {days} days: pass --since or set extract.max_age_days",
            b.too_old
        ));
    }
    if b.before_since > 0 {
        why.push(format!("{} older than --since", b.before_since));
    }
    if b.active > 0 {
        why.push(format!(
            "{} active in the last {hours} hours: pass --idle-hours 0 or wait",
            b.active
        ));
    }
    if b.finished > 0 {
        why.push(format!("{} already extracted and unchanged", b.finished));
    }
    if b.gave_up > 0 {
        why.push(format!(
            "{} failed {} times and unchanged since: `recall extract --status` says why, `recall extract --session ID` tries one again",
            b.gave_up,
            run::ATTEMPTS
        ));
    }
    if b.leased > 0 {
        why.push(format!("{} being extracted by another run", b.leased));
    }
    format!("{} indexed sessions; {}", b.sessions, why.join("; "))
}

fn print_status(rows: &[ExtractStatus], json: bool) -> Result<u8> {
    if json {
        outln!("{}", serde_json::to_string_pretty(rows)?);
        return Ok(0);
    }
    for r in rows {
        let why = r
            .reason
            .as_deref()
            .map(|x| format!(" ({x})"))
            .unwrap_or_default();
        outln!(
            "{}\t{}\t{} facts\t{}\t{}{why}",
            r.session_id,
            r.state,
            r.facts,
            r.updated.as_deref().unwrap_or_default(),
            r.path
        );
    }
    Ok(0)
}

/// `recall summary`: one line per active record, pinned first, then by
/// importance, then by recency, within the token budget.
pub fn summary(ctx: &Ctx, a: SummaryArgs) -> Result<u8> {
    if a.write {
        let path = ctx.write_summary(a.max_tokens)?;
        say!("wrote {}", path.display());
    } else {
        out!("{}", ctx.summary(a.max_tokens)?);
    }
    Ok(0)
}
