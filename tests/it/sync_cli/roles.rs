//! The roles of docs/team-memory.md, run as written against a real server:
//! the SQL blocks of "Roles for a team", each as the role the doc says, then
//! the owner's `--init`, two members and the read-only CI role.

use std::collections::HashMap;
use std::path::Path;

use super::{Host, TEAM};
use crate::common::pg::{Pg, USER};
use crate::common::Env;

/// The ```sql blocks of the doc's section `heading`, in order.
fn sql_blocks(doc: &str, heading: &str) -> Vec<String> {
    let start = doc.find(heading).expect("the section is in the doc");
    let section = &doc[start + heading.len()..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    section
        .split("```sql\n")
        .skip(1)
        .map(|b| b[..b.find("```").expect("a closed block")].to_string())
        .collect()
}

/// Issue 36 item 8: the roles SQL could not be run as written (it said to
/// connect as the owner, then created roles) and the set-up ran `--init`
/// as a member who cannot create tables.
#[test]
fn r36_the_roles_in_the_docs_run_as_written() {
    let Some(pg) = Pg::start() else { return };
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/team-memory.md"))
            .unwrap();
    let blocks = sql_blocks(&doc, "## Roles for a team");
    assert_eq!(blocks.len(), 2, "{blocks:?}");
    let passwords: HashMap<String, String> =
        regex::Regex::new(r"CREATE ROLE (\w+) LOGIN PASSWORD '([^']+)'")
            .unwrap()
            .captures_iter(&blocks[0])
            .map(|c| (c[1].to_string(), c[2].to_string()))
            .collect();
    let url = |login: &str| {
        format!(
            "postgres://{login}:{}@127.0.0.1:{}/recall",
            passwords[login], pg.port
        )
    };
    // 1. As a superuser.
    pg.sql_as("postgres", USER, &blocks[0]).unwrap();
    // 2. The owner creates the tables, from a home with no project shared.
    let env = Env::new();
    let owner = Host::new(&env, "owner");
    owner.run(&["sync", "--init", &url("recall_owner")]);
    // 3. As the owner, in its database.
    pg.sql_as("recall", "recall_owner", &blocks[1]).unwrap();

    let mut alice = Host::new(&env, "alice");
    alice.user = "root".into();
    let mut bob = Host::new(&env, "bob");
    bob.user = "root".into();
    alice.run(&["sync", "--init", &url("alice"), "--team", TEAM]);
    bob.run(&["sync", "--init", &url("bob"), "--team", TEAM]);
    alice.add("ports", "The API listens on 8080");
    alice.run(&[
        "record",
        "add",
        "--scope",
        "user",
        "--category",
        "preferences",
        "--key",
        "tone",
        "Answer tersely",
    ]);
    alice.sync();
    bob.sync();
    assert!(bob.body("ports").is_some());
    let listed = bob.run(&["record", "list", "--scope", "user", "--format", "json"]);
    assert!(!listed.contains("tersely"), "{listed}");

    let ci = Host::new(&env, "ci");
    let out = ci.out(&["sync", "--init", &url("recall_reader"), "--team", TEAM]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(ci.body("ports").is_some());
    // A delete reaches the reader once the members compacted it.
    alice.run(&["record", "delete", "ports"]);
    alice.sync();
    bob.sync();
    alice.sync();
    ci.run(&["sync", "--pull-only"]);
    assert_eq!(ci.body("ports"), None);
}
