//! `recall record ...`: the record commands.

use std::io::{IsTerminal, Read};

use anyhow::{bail, Context as _, Result};

use super::args::{AddArgs, GetFormat, ListArgs, ListFormat, RecordCmd, ScopeArg, UpdateArgs};
use super::context::{parse_scope, Ctx};
use crate::index::{ListFilter, Listed, SecretPolicy};
use crate::memory::{Fact, ListOrder, NewRecord, Patch};
use crate::records::{parse_record, render_record, Category, Source, Status};
use crate::store::{Scope, ScopeDir};

/// Run a record subcommand.
pub fn run(ctx: &Ctx, cmd: RecordCmd) -> Result<u8> {
    match cmd {
        RecordCmd::Add(a) => add(ctx, a),
        RecordCmd::Update(a) => update(ctx, a),
        RecordCmd::Reclassify {
            id_or_key,
            category,
            scope,
        } => {
            let p = Patch {
                category: Some(category.parse()?),
                ..Patch::default()
            };
            patch(ctx, &id_or_key, &scope, "reclassified", p)
        }
        RecordCmd::Move { id_or_key, to } => {
            let to = parse_scope(&to)?;
            let moved = ctx.move_record(None, &id_or_key, to)?;
            outln!(
                "moved {} to the {} scope: {}",
                moved.record.meta.id,
                to.as_str(),
                moved.path.display()
            );
            // A shared project's records are the team's: say what the next
            // sync does with this one, before it does it.
            if let Some(team) = ctx.project().ok().and_then(|p| p.info.sync) {
                let key = &moved.record.meta.key;
                match to {
                    Scope::User => say!(
                        "note: {} is shared: the next sync takes '{key}' out of every teammate's memory (it stays yours); `recall record move {key} --to project` before then keeps it the team's",
                        team.team
                    ),
                    Scope::Project => say!(
                        "note: {} is shared: the next sync gives '{key}' to every teammate",
                        team.team
                    ),
                }
            }
            Ok(0)
        }
        RecordCmd::Archive { id_or_key, scope } => {
            set_status(ctx, &id_or_key, &scope, Status::Archived)
        }
        RecordCmd::Unarchive { id_or_key, scope } => {
            set_status(ctx, &id_or_key, &scope, Status::Active)
        }
        RecordCmd::Delete { id_or_key, scope } => delete(ctx, &id_or_key, &scope),
        RecordCmd::List(a) => list(ctx, a),
        RecordCmd::Get {
            id_or_key,
            format,
            scope,
        } => get(ctx, &id_or_key, format, &scope),
        RecordCmd::Edit { id_or_key, scope } => edit(ctx, &id_or_key, &scope),
        RecordCmd::Promote {
            id_or_key,
            dry_run,
            force,
        } => super::skills::promote(ctx, &id_or_key, dry_run, force),
    }
}

/// Read TEXT, or stdin when it is `-` or absent.
fn read_text(arg: Option<String>) -> Result<String> {
    match arg.as_deref() {
        Some(t) if t != "-" => Ok(t.to_string()),
        _ => {
            let stdin = std::io::stdin();
            if arg.is_none() && stdin.is_terminal() {
                bail!("no record text: pass it as an argument or pipe it on stdin");
            }
            let mut bytes = Vec::new();
            stdin
                .lock()
                .read_to_end(&mut bytes)
                .context("cannot read stdin")?;
            String::from_utf8(bytes).context("the text on stdin is not valid UTF-8")
        }
    }
}

fn policy(redact: bool) -> SecretPolicy {
    if redact {
        SecretPolicy::Redact
    } else {
        SecretPolicy::Refuse
    }
}

fn add(ctx: &Ctx, a: AddArgs) -> Result<u8> {
    let scope = parse_scope(&a.scope)?;
    let category: Category = a.category.parse()?;
    let text = read_text(a.text)?;
    let new = NewRecord {
        key: a.key,
        text,
        category: Some(category),
        pinned: a.pinned.then_some(true),
        importance: a.importance,
        keywords: Some(a.keywords).filter(|k| k.iter().any(|k| !k.trim().is_empty())),
        source: Source::Manual,
        secrets: policy(a.redact),
        keep_generated: false,
    };
    let (loc, created) = ctx.upsert_in(scope, new)?;
    let verb = if created { "added" } else { "updated" };
    outln!("{verb} {} {}", loc.record.meta.id, loc.path.display());
    Ok(0)
}

/// `recall remember`: an agent stores one fact (see `memory::remember`),
/// in the scope it belongs to unless `--scope` names one.
pub fn remember(ctx: &Ctx, a: super::args::RememberArgs) -> Result<u8> {
    let text = read_text(a.text)?;
    let category: Option<Category> = a.category.as_deref().map(str::parse).transpose()?;
    let scope = a.scope.as_deref().map(parse_scope).transpose()?;
    let fact = Fact {
        text: text.trim(),
        category,
        key: a.key.as_deref(),
        importance: a.importance,
        secrets: policy(a.redact),
    };
    let (loc, created) = ctx.remember_in(scope, &fact)?;
    let m = &loc.record.meta;
    outln!(
        "{} {} ({}, {} scope) {}",
        if created { "remembered" } else { "updated" },
        m.key,
        m.category,
        m.scope,
        loc.path.display()
    );
    Ok(0)
}

/// The scope folders to look in for ID_OR_KEY: the one given, else the
/// project's then the user's.
fn lookup_dirs(ctx: &Ctx, arg: &ScopeArg) -> Result<Vec<ScopeDir>> {
    let scope = arg.scope.as_deref().map(parse_scope).transpose()?;
    Ok(ctx.record_dirs(scope)?)
}

/// Apply `patch` to a record and print `verb id path`.
fn set_status(ctx: &Ctx, id_or_key: &str, scope: &ScopeArg, status: Status) -> Result<u8> {
    let (saved, changed) = ctx.set_status(&lookup_dirs(ctx, scope)?, id_or_key, status)?;
    let verb = match (status, changed) {
        (Status::Archived, true) => "archived",
        (Status::Archived, false) => "already archived",
        (_, true) => "unarchived",
        (_, false) => "already active",
    };
    outln!("{verb} {} {}", saved.record.meta.id, saved.path.display());
    Ok(0)
}

fn patch(ctx: &Ctx, id_or_key: &str, scope: &ScopeArg, verb: &str, patch: Patch) -> Result<u8> {
    let saved = ctx.patch(&lookup_dirs(ctx, scope)?, id_or_key, patch)?;
    outln!("{verb} {} {}", saved.record.meta.id, saved.path.display());
    Ok(0)
}

fn update(ctx: &Ctx, a: UpdateArgs) -> Result<u8> {
    let text = match a.text {
        Some(t) => Some(read_text(Some(t))?),
        None => None,
    };
    let p = Patch {
        text,
        pinned: a.pinned,
        importance: a.importance,
        keywords: a.keywords,
        secrets: policy(a.redact),
        ..Patch::default()
    };
    patch(ctx, &a.id_or_key, &a.scope, "updated", p)
}

fn delete(ctx: &Ctx, id_or_key: &str, scope: &ScopeArg) -> Result<u8> {
    let gone = ctx.delete(&lookup_dirs(ctx, scope)?, id_or_key)?;
    outln!("deleted {} {}", gone.record.meta.id, gone.path.display());
    // Nothing of a deleted record is kept, not even its key, so nothing
    // stops its session from giving the fact again.
    if gone.record.meta.source == crate::records::Source::Auto {
        say!(
            "recall: extraction writes this fact again if its session changes and still states it; to keep an extracted fact out for good, archive it (`recall record archive {}`): an archived record stays out of recall when extraction finds the fact again",
            gone.record.meta.key
        );
    }
    Ok(0)
}

fn get(ctx: &Ctx, id_or_key: &str, format: GetFormat, scope: &ScopeArg) -> Result<u8> {
    let loc = ctx.get(&lookup_dirs(ctx, scope)?, id_or_key)?;
    match format {
        GetFormat::Md => out!("{}", render_record(&loc.record)?),
        GetFormat::Json => {
            let mut v = serde_json::to_value(&loc.record.meta)?;
            v["text"] = loc.record.body.clone().into();
            v["path"] = loc.path.to_string_lossy().into_owned().into();
            outln!("{}", serde_json::to_string_pretty(&v)?);
        }
    }
    Ok(0)
}

fn list(ctx: &Ctx, a: ListArgs) -> Result<u8> {
    let filter = ListFilter {
        category: a.category.as_deref().map(str::parse).transpose()?,
        status: a.status.as_deref().map(str::parse).transpose()?,
        source: a.source.as_deref().map(str::parse).transpose()?,
    };
    let rows = list_records(ctx, a.scope.as_deref(), &filter)?;
    match a.format {
        ListFormat::Json => outln!("{}", serde_json::to_string_pretty(&rows)?),
        ListFormat::Table => print_table(&rows)?,
    }
    Ok(0)
}

/// Records of one scope (or both), pinned first, then by importance, then
/// the most recently updated.
fn list_records(ctx: &Ctx, scope: Option<&str>, filter: &ListFilter) -> Result<Vec<Listed>> {
    let scope = scope.map(parse_scope).transpose()?;
    Ok(ctx.list(&ctx.record_dirs(scope)?, filter, ListOrder::Recent)?)
}

fn print_table(rows: &[Listed]) -> Result<()> {
    if rows.is_empty() {
        say!("no records");
        return Ok(());
    }
    let idw = rows
        .iter()
        .map(|r| r.id.chars().count())
        .max()
        .unwrap_or(2)
        .max(2);
    outln!(
        "{:<idw$}  {:<11}  {:<7}  {:<6}  PIN  IMP  {:<10}  KEY",
        "ID",
        "CATEGORY",
        "SCOPE",
        "SOURCE",
        "UPDATED"
    );
    for r in rows {
        let day = r.updated.get(..10).unwrap_or(&r.updated);
        let status = if r.status == "archived" {
            " (archived)"
        } else if r.expired {
            " (expired)"
        } else {
            ""
        };
        outln!(
            "{:<idw$}  {:<11}  {:<7}  {:<6}  {:<3}  {:>3}  {:<10}  {}{status}",
            r.id,
            r.category,
            r.scope.as_str(),
            r.source,
            if r.pinned { "*" } else { "" },
            r.importance,
            day,
            r.key
        );
    }
    Ok(())
}

/// Keep the text of an edit that did not save, for the user to fix; where
/// it is, as the message says it. A secret in it is redacted first: a kept
/// edit outlives the command, and the secret may be why it failed.
fn keep_failed_edit(tmp: tempfile::NamedTempFile, edited: &str) -> String {
    let (clean, found) = crate::secrets::redact(edited);
    if !found.is_empty() && std::fs::write(tmp.path(), clean.as_bytes()).is_err() {
        // Dropping `tmp` removes the file that still holds the secret.
        return "nowhere (cannot redact the secret in the temporary file)".into();
    }
    match tmp.keep() {
        Ok((_, p)) if found.is_empty() => p.display().to_string(),
        Ok((_, p)) => format!("{} with its secrets redacted", p.display()),
        Err(_) => "nowhere (cannot keep the temporary file)".into(),
    }
}

fn edit(ctx: &Ctx, id_or_key: &str, scope: &ScopeArg) -> Result<u8> {
    let editor = std::env::var("VISUAL")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .or_else(|| {
            std::env::var("EDITOR")
                .ok()
                .filter(|v| !v.trim().is_empty())
        })
        .context("set $VISUAL or $EDITOR to the editor to use")?;
    let dirs = lookup_dirs(ctx, scope)?;
    let loc = ctx.get(&dirs, id_or_key)?;
    let original = render_record(&loc.record)?;
    // Inside the home (0700), not /tmp: a failed edit is kept for the
    // user (its secrets redacted: `keep_failed_edit`).
    let edits = ctx.home.root().join("edits");
    crate::store::create_private_dir(&edits)?;
    let tmp = tempfile::Builder::new()
        .prefix(&format!("recall-edit-{}-", loc.record.meta.id))
        .suffix(".md")
        .tempfile_in(&edits)
        .context("cannot create a temporary file to edit")?;
    std::fs::write(tmp.path(), &original)?;
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(tmp.path())
        .status()
        .with_context(|| format!("cannot run the editor '{editor}'"))?;
    if !status.success() {
        bail!("the editor '{editor}' exited with {status}; the record was not changed");
    }
    let edited = std::fs::read_to_string(tmp.path())?;
    if edited == original {
        outln!("unchanged {}", loc.record.meta.id);
        return Ok(0);
    }
    let result = ctx.with_record(&dirs, &loc.record.meta.id, |store, now_loc| {
        let mut r = parse_record(&edited, tmp.path(), &store.limits)?;
        // Neither is the file's to change: the id names the record
        // everywhere (links, other hosts), and the scope is the folder the
        // file lives in. Saved as edited, the file would say one thing and
        // recall do another.
        let (was, now) = (&now_loc.record.meta, &r.meta);
        if now.id != was.id {
            return Err(crate::Error::invalid(format!(
                "the id cannot be changed (it names the record everywhere, other hosts included): keep `id: {}`; to file the fact under another key, change `key:`",
                was.id
            )));
        }
        if now.scope != was.scope {
            return Err(crate::Error::invalid(format!(
                "the scope is where the file lives and cannot be changed by editing it: keep `scope: {}`, then `recall record move {} --to {}` moves it",
                was.scope, was.id, now.scope
            )));
        }
        r.meta.id = now_loc.record.meta.id.clone();
        r.meta.updated = ctx.now;
        if r.body != now_loc.record.body {
            r.mark_edited_by_hand();
        }
        store.save(r, Some(&now_loc.path), SecretPolicy::Refuse)
    });
    let saved = match result {
        Ok(s) => s,
        Err(e) => {
            let where_ = keep_failed_edit(tmp, &edited);
            // A parse error may quote the text it could not read.
            let e = crate::secrets::redact(&e.to_string()).0.into_owned();
            bail!("{e}\nyour edit was not saved; it is kept at {where_} (fix it and copy it over {}, or delete it)", loc.path.display());
        }
    };
    let path = crate::memory::shown_path(&saved.path);
    outln!("updated {} {}", saved.record.meta.id, path.display());
    Ok(0)
}
