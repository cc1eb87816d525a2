//! `recall skills` (playbooks proposed from the project's procedures) and
//! `recall record promote NAME` (a proposed playbook, or one record,
//! written as a `SKILL.md`).

use anyhow::Result;

use super::args::SkillsArgs;
use super::context::Ctx;

pub fn run(ctx: &Ctx, a: SkillsArgs) -> Result<u8> {
    // A record written by hand may hold a secret the writes would have
    // refused: shown redacted, as `summary` shows it (`promote` refuses it).
    let mut proposals = ctx.propose_skills()?;
    for p in &mut proposals {
        for text in [&mut p.skill.description, &mut p.skill.body] {
            if let std::borrow::Cow::Owned(clean) = crate::secrets::redact(text).0 {
                *text = clean;
            }
        }
    }
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&proposals)?);
        // As a query with no hits: 1 in every format.
        return Ok(u8::from(proposals.is_empty()));
    }
    if proposals.is_empty() {
        say!(
            "recall: no procedures in this project to make skills from; add some with `recall record add --category procedures`"
        );
        return Ok(1);
    }
    for p in &proposals {
        outln!("{}", p.skill.name);
        outln!("  {}", p.skill.description);
        outln!("  from {}", p.sources.join(", "));
    }
    say!("recall: write one with `recall record promote NAME` (--dry-run shows it first)");
    Ok(0)
}

pub fn promote(ctx: &Ctx, name_or_id: &str, dry_run: bool, force: bool) -> Result<u8> {
    let p = ctx.promote(name_or_id, dry_run, force)?;
    if dry_run {
        outln!("# {}", p.path.display());
        out!("{}", p.text);
        return Ok(0);
    }
    if let Some(b) = &p.backup {
        outln!("kept the old skill as {}", b.display());
    }
    match p.written {
        true => outln!("wrote {}", p.path.display()),
        false => outln!("{} already holds this skill", p.path.display()),
    }
    Ok(0)
}
