//! `recall sync`: set up team memory, share projects, sync once or in a
//! loop, and show status. Everything it does is a [`Ctx`] call; this file
//! only reads flags and prints.

use std::time::Duration;

use anyhow::Result;

use super::args::SyncArgs;
use super::context::{env, Ctx};
use crate::memory::{SyncInit, SyncOptions, SyncReport, SyncStatus};
use crate::sync::ScopeReport;

/// The exit code of a sync that withheld something (docs/output.md).
const WITHHELD: u8 = 3;

pub fn run(ctx: &Ctx, a: SyncArgs) -> Result<u8> {
    let mut ctx = ctx.clone();
    if let Some(url) = &a.init {
        // The rest of this run uses the remote just set up.
        ctx.config.sync.url = Some(url.trim().to_string());
    }
    let ctx = &ctx;
    if a.status {
        return status(ctx, a.json);
    }
    if a.unshare {
        let was = ctx.unshare()?;
        if a.json {
            let team = was.as_ref().map(|s| s.team.as_str());
            outln!(
                "{}",
                serde_json::json!({"version": 1, "unshared": was.is_some(), "team": team})
            );
            return Ok(0);
        }
        match was {
            Some(s) => outln!(
                "stopped sharing this project (team {}); what the server holds stays",
                s.team
            ),
            None => outln!("this project was not shared"),
        }
        return Ok(0);
    }

    let mut pull_only = a.pull_only;
    // `--init` where no project is shared: the user scope may still sync,
    // and if it cannot (no person mapped to this login) that is no error.
    let mut user_scope_only = false;
    if let Some(url) = &a.init {
        let SyncInit {
            before,
            after,
            can_push,
        } = ctx.sync_init(url, &env)?;
        let remote = ctx.sync_remote(&env)?;
        match before {
            0 => say!(
                "sync: created the recall tables (schema {after}) on {}",
                remote.masked()
            ),
            b if b < after => say!(
                "sync: upgraded {} from schema {b} to {after}",
                remote.masked()
            ),
            _ => say!("sync: {} is ready (schema {after})", remote.masked()),
        }
        say!(
            "sync: remote kept in {}",
            ctx.home.root().join("config.toml").display()
        );
        if !can_push && !pull_only {
            say!(
                "sync: this role may read the recall tables but not write them: pull only (run `recall sync --pull-only` from this host)"
            );
            pull_only = true;
        }
    }
    if a.share || a.init.is_some() {
        match ctx.share(a.team.as_deref(), !a.no_sessions, !a.no_tickets) {
            Ok(s) => say!(
                "sync: sharing this project as team {} (records{}{})",
                s.team,
                if s.sessions { ", sessions" } else { "" },
                if s.tickets { ", tickets" } else { "" },
            ),
            // `--init` in a folder without a remote still sets up the
            // remote (the owner creating the tables from anywhere);
            // `--share` alone must say why it did nothing.
            Err(e) if a.init.is_some() => {
                say!("sync: this project is not shared: {e}");
                if !ctx.shares_a_project()? {
                    // The person's own scope needs no project: it syncs.
                    if !ctx.config.sync.user_scope {
                        say!("sync: nothing to sync from this home yet; run `recall sync --share` in a project");
                        return Ok(0);
                    }
                    say!("sync: no project is shared from this home yet (`recall sync --share` in a project shares it); your own scope syncs now");
                    user_scope_only = true;
                }
            }
            Err(e) => return Err(e.into()),
        }
        if a.share && a.init.is_none() {
            // Shared here; nothing reaches the team until a remote is set.
            if let Err(e) = ctx.sync_remote(&env) {
                say!("sync: nothing is sent yet: {e}");
            }
            return Ok(0);
        }
    }
    let opts = SyncOptions {
        only_current: a.this_project,
        pull_only,
    };
    if a.background {
        // Started by a hook: yield the CPU to the agent's own hooks and
        // queries, and never an error the agent would see.
        super::context::be_nice(&ctx.config);
        match ctx.sync(&opts, false, &env) {
            Err(e) => say!("recall sync (background): {e:#}"),
            Ok(Some(r)) => {
                for f in &r.failed {
                    say!("recall sync (background): {}: {}", f.project, f.error);
                }
                for s in &r.scopes {
                    if let Some(warning) = shared_name_warning(s) {
                        say!("recall sync (background): {warning}");
                    }
                }
            }
            Ok(None) => {}
        }
        return Ok(0);
    }
    if !a.watch {
        let report = match ctx.sync(&opts, true, &env) {
            Err(e) if user_scope_only => {
                say!("sync: {e}");
                return Ok(0);
            }
            r => r?,
        };
        print_report(report.as_ref(), a.json, false)?;
        // 2 when a scope could not be synced (the others were); 3, as for a
        // batch that finished with items it could not do: the rest was
        // synced, and stderr named each item withheld.
        return Ok(match report {
            Some(r) if !r.failed.is_empty() => 2,
            Some(r) if r.needs_attention() => WITHHELD,
            _ => 0,
        });
    }
    // What no retry can fix is an error now, not a line every round: the
    // config is read once, so a missing or malformed url stays so.
    ctx.sync_remote(&env)?;
    let every = match a.interval {
        Some(secs) => Duration::from_secs_f64(secs),
        None => Duration::from_secs_f64(ctx.config.sync.interval_secs),
    };
    say!("sync: every {:.1}s; stop with Ctrl-C", every.as_secs_f64());
    loop {
        let round = ctx.at(jiff::Timestamp::now());
        match round.sync(&opts, true, &env) {
            // A round that changed nothing says nothing (a line per scope
            // every few seconds would bury the rounds that did).
            Ok(r) => print_report(r.as_ref(), a.json, true)?,
            // A failed round (server down) is reported; the next one retries.
            Err(e) => say!("sync: {e:#}"),
        }
        std::thread::sleep(every);
    }
}

/// Print what a sync did; with `quiet_idle` (each round of `--watch`), a
/// scope where nothing happened is left out.
fn print_report(report: Option<&SyncReport>, json: bool, quiet_idle: bool) -> Result<()> {
    let Some(r) = report else {
        say!("sync: another sync is running in this home");
        return Ok(());
    };
    if let Some(note) = &r.note {
        say!("sync: {note}");
    }
    for f in &r.failed {
        say!("sync: {}: not synced: {}", f.project, f.error);
    }
    if json {
        outln!("{}", serde_json::to_string(r)?);
        return Ok(());
    }
    for s in &r.scopes {
        let idle = s.pulled == 0
            && s.pushed == 0
            && s.refused.is_empty()
            && s.skipped.is_empty()
            && s.dropped == 0
            && s.yielded == 0
            && s.shared_name.is_none();
        if quiet_idle && idle {
            continue;
        }
        let mut line = format!("{}: pulled {}, pushed {}", s.project, s.pulled, s.pushed);
        if s.kept_local > 0 {
            line.push_str(&format!(", kept {} local (pushed instead)", s.kept_local));
        }
        if s.yielded > 0 {
            line.push_str(&format!(
                ", took {} person's version(s) the server kept over this host's agent's",
                s.yielded
            ));
        }
        if s.dropped > 0 {
            line.push_str(&format!(", dropped {} deleted elsewhere", s.dropped));
        }
        if s.redacted > 0 {
            line.push_str(&format!(", redacted {} secrets on arrival", s.redacted));
        }
        outln!("{line}");
        for why in &s.refused {
            say!("sync: not sent: {why}");
        }
        for why in &s.skipped {
            say!("sync: not taken: {why}");
        }
        if let Some(warning) = shared_name_warning(s) {
            say!("sync: {warning}");
        }
    }
    Ok(())
}

/// What to say when another home pushed under this host's name.
fn shared_name_warning(s: &ScopeReport) -> Option<String> {
    let host = s.shared_name.as_deref()?;
    Some(format!(
        "{}: another home pushed as host '{host}' since this one last did: two homes of one name never pull each other's changes; give each its own `[sync] host` (or remove the setting: each home then gets an id of its own)",
        s.project
    ))
}

fn status(ctx: &Ctx, json: bool) -> Result<u8> {
    let rows = ctx.sync_status(&env)?;
    if json {
        outln!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(0);
    }
    if rows.is_empty() {
        outln!("no project is shared; run `recall sync --share` in one");
        return Ok(0);
    }
    for r in &rows {
        print_status(r)?;
    }
    Ok(0)
}

fn print_status(r: &SyncStatus) -> Result<()> {
    if let Some(why) = &r.note {
        outln!("{}: not synced", r.scope);
        outln!("  {why}");
        return Ok(());
    }
    outln!("{} (team {})", r.scope, r.team);
    outln!("  remote:     {}", r.remote);
    outln!(
        "  last sync:  {}",
        r.last_sync.as_deref().unwrap_or("never")
    );
    outln!("  to push:    {}", r.pending);
    if let Some(when) = &r.name_shared_seen {
        outln!("  warning:    another home pushed under this host's name (last seen {when}); give each home its own `[sync] host`");
    }
    match (&r.server, &r.error) {
        (Some(s), _) => {
            outln!("  hosts seen: {}", s.hosts);
            outln!("  to pull:    {}", s.behind);
        }
        (None, Some(e)) => outln!("  server:     unreachable ({e})"),
        (None, None) => {}
    }
    let mut kinds = vec!["records"];
    if r.sessions {
        kinds.push("sessions");
    }
    if r.tickets {
        kinds.push("tickets");
    }
    outln!("  shares:     {}", kinds.join(", "));
    Ok(())
}
