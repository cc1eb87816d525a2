//! `recall doctor`: print what [`Memory::doctor`](crate::Memory::doctor)
//! found in each scope, with the fix for each problem.

use anyhow::Result;

use super::context::Ctx;
use crate::memory::ScopeHealth;

pub fn run(ctx: &Ctx) -> Result<u8> {
    let checkup = ctx.doctor();
    for s in &checkup.scopes {
        let status = match s.health {
            ScopeHealth::Empty => "empty",
            ScopeHealth::Checked {
                read_only,
                problems,
            } => {
                if read_only {
                    outln!(
                        "note: {} is read-only: queries and hooks work; writes need a writable home; FTS integrity not checked",
                        s.index.display()
                    );
                }
                if problems == 0 {
                    "ok"
                } else {
                    "problems"
                }
            }
        };
        outln!("{}: {} ({status})", s.scope, s.root.display());
    }
    for f in &checkup.findings {
        outln!("problem: {}\n  fix: {}", f.what, f.fix);
    }
    // Say what was not checked: other projects of this home.
    let others = checkup.unchecked?;
    if !others.is_empty() {
        outln!(
            "not checked: {} other project(s) of this home ({}); run `recall doctor --project NAME` for each",
            others.len(),
            others.join(", ")
        );
    }
    if checkup.findings.is_empty() {
        outln!("all checks passed");
        Ok(0)
    } else {
        outln!("{} problem(s) found", checkup.findings.len());
        Ok(1)
    }
}
