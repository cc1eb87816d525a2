//! Each person's user scope is theirs (issue 36 item 3): `user:<person>`
//! is bound to the database login through the owner's mapping
//! (`recall_people`) and row-level security, not to `$USER`.

use super::{member_url, Host, TEAM};
use crate::common::pg::Pg;
use crate::common::Env;

/// A host of `login` whose `$USER` is `user`.
fn host<'a>(env: &'a Env, pg: &Pg, name: &str, user: &str, login: &str) -> Host<'a> {
    let mut h = Host::new(env, name);
    h.user = user.into();
    let url = member_url(pg, login, Some(login));
    h.run(&["sync", "--init", &url, "--team", TEAM]);
    h
}

fn add_user(h: &Host, key: &str, text: &str) {
    h.run(&[
        "record",
        "add",
        "--scope",
        "user",
        "--category",
        "preferences",
        "--key",
        key,
        text,
    ]);
}

fn user_keys(h: &Host) -> Vec<String> {
    let v: serde_json::Value =
        serde_json::from_str(&h.run(&["record", "list", "--scope", "user", "--format", "json"]))
            .unwrap();
    let mut keys: Vec<String> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["key"].as_str().unwrap().to_string())
        .collect();
    keys.sort();
    keys
}

/// Two people whose `$USER` is the same (root in their containers) each
/// keep their own scope, bound to their login; one cannot read or write
/// the other's, not even with SQL, nor sign as the other.
#[test]
fn r36_each_persons_scope_is_bound_to_their_login() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    Host::new(&env, "owner").init(&pg);
    let alice = host(&env, &pg, "alice-laptop", "root", "alice");
    let bob = host(&env, &pg, "bob-laptop", "root", "bob");
    add_user(&alice, "tone", "Answer tersely");
    alice.sync();
    add_user(&bob, "editor", "Bob uses helix");
    bob.sync();
    alice.sync();
    assert_eq!(user_keys(&alice), ["tone"]);
    assert_eq!(user_keys(&bob), ["editor"]);
    // Alice's second host, another $USER: her scope follows her login.
    let desk = host(&env, &pg, "alice-desk", "ajones", "alice");
    assert_eq!(user_keys(&desk), ["tone"]);
    let rec: serde_json::Value =
        serde_json::from_str(&desk.run(&["record", "get", "tone", "--format", "json"])).unwrap();
    assert!(rec.to_string().contains("\"author\":\"alice\""), "{rec}");

    // Bob cannot read alice's scope, nor write it, even with SQL.
    assert_eq!(
        pg.sql_as(
            "team",
            "bob",
            "SELECT count(*) FROM recall_entries WHERE project = 'user:alice'"
        ),
        Ok("0".to_string())
    );
    let forged = pg.sql_as(
        "team",
        "bob",
        "INSERT INTO recall_entries(project, kind, key, id, host, hash, body)
         VALUES ('user:alice', 'record', 'tone2', nextval('recall_order'), 'x', 'h', 'forged')",
    );
    assert!(
        forged
            .as_ref()
            .is_err_and(|e| e.contains("row-level security")),
        "{forged:?}"
    );
    // Nor sign as alice: the server names the author by the login.
    std::fs::write(bob.home.join("config.toml"), {
        let text = std::fs::read_to_string(bob.home.join("config.toml")).unwrap();
        text.replace("[sync]", "[sync]\nauthor = \"alice\"")
    })
    .unwrap();
    bob.add("signed", "Written by bob");
    bob.sync();
    assert_eq!(
        pg.sql(
            "team",
            "SELECT author FROM recall_entries WHERE key = 'signed'"
        ),
        "bob"
    );
    // Regression: nor by writing the provenance into the file by hand: the
    // receiving host kept the sender's `origin` over the server's row.
    bob.add("forged", "Written by bob, signed alice");
    let rec: serde_json::Value =
        serde_json::from_str(&bob.run(&["record", "get", "forged", "--format", "json"])).unwrap();
    let path = rec["path"].as_str().unwrap();
    let text = std::fs::read_to_string(path).unwrap();
    let signed = text.replacen(
        "---\n",
        "---\norigin:\n  author: alice\n  host: alice-laptop\n",
        1,
    );
    std::fs::write(path, signed).unwrap();
    bob.sync();
    let desk_sees = |key: &str| -> serde_json::Value {
        desk.sync();
        let rec: serde_json::Value =
            serde_json::from_str(&desk.run(&["record", "get", key, "--format", "json"])).unwrap();
        rec["origin"].clone()
    };
    let origin = desk_sees("forged");
    assert_eq!(origin["author"], "bob", "{origin}");
    assert_ne!(origin["host"], "alice-laptop", "{origin}");
    // Regression (review, stop 62): nor by writing the row by hand with
    // his own login: the push named the author, the server did not.
    let by_hand = pg.sql_as(
        "team",
        "bob",
        "INSERT INTO recall_entries(project, kind, key, id, host, author, hash, body, source)
         SELECT project, 'record', 'by-hand', nextval('recall_order'), 'bob-laptop', 'alice', 'h',
                replace(body, 'Written by bob', 'Written by hand'), 'manual'
         FROM recall_entries WHERE key = 'signed';
         UPDATE recall_entries SET author = 'alice' WHERE key = 'signed'",
    );
    assert_eq!(by_hand, Ok(String::new()));
    assert_eq!(
        pg.sql(
            "team",
            "SELECT string_agg(author, ',') FROM recall_entries WHERE key IN ('signed', 'by-hand')"
        ),
        "bob,bob"
    );
}

/// A login no person is mapped to (a shared one): the user scope is not
/// synced, and the sync says so once, not on every run.
#[test]
fn r36_with_no_person_known_the_user_scope_is_not_synced_and_said_once() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    Host::new(&env, "owner").init(&pg);
    let url = member_url(&pg, "ci_shared", None);
    let h = Host::new(&env, "shared");
    let out = h.out(&["sync", "--init", &url, "--team", TEAM]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("user scope is not synced") && err.contains("ci_shared"),
        "{err}"
    );
    // Regression: the only fix named was mapping the login to a person,
    // wrong for a shared one.
    assert!(err.contains("`[sync] user_scope = false`"), "{err}");
    add_user(&h, "tone", "Answer tersely");
    let out = h.out(&["sync"]);
    assert!(out.status.success());
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("user scope"),
        "said twice"
    );
    assert_eq!(
        pg.sql(
            "team",
            "SELECT count(*) FROM recall_entries WHERE project LIKE 'user:%'"
        ),
        "0"
    );
    let st = h.run(&["sync", "--status"]);
    assert!(st.contains("not synced"), "{st}");
}

/// Regression: `sync --init` where the project has no git origin (and no
/// `--team`) said there was nothing to sync, and the person's own scope,
/// which needs no project, was left for a later plain `sync`.
#[test]
fn r_init_without_a_shared_project_still_syncs_the_persons_scope() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    Host::new(&env, "owner").init(&pg);
    let carol = Host::new(&env, "carol");
    add_user(&carol, "tone", "Carol likes short answers");
    let url = member_url(&pg, "carol", Some("carol"));
    let out = carol.out(&["sync", "--init", &url]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("your own scope syncs now"), "{err}");
    assert_eq!(
        pg.sql(
            "team",
            "SELECT count(*) FROM recall_entries WHERE project = 'user:carol'"
        ),
        "1"
    );
    // The owner, whose login is no person: set up, and no error.
    let owner = Host::new(&env, "owner2");
    let out = owner.out(&["sync", "--init", &pg.url()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
}

/// Regression: with the server down, `sync --status` left out the person's
/// own scope (who the login is comes from the server), so what waited to
/// be pushed there was not shown at all. It is listed as last synced.
#[test]
fn r_status_lists_the_persons_scope_with_the_server_down() {
    let Some(pg) = Pg::start() else { return };
    let env = Env::new();
    Host::new(&env, "owner").init(&pg);
    let carol = host(&env, &pg, "carol", "carol", "carol");
    add_user(&carol, "tone", "Carol likes short answers");
    carol.sync();
    add_user(&carol, "editor", "Carol edits in Helix");
    pg.stop();
    let st = carol.run(&["sync", "--status"]);
    assert!(st.contains("user (team user:carol)"), "{st}");
    let user = st.split("user (team").nth(1).unwrap();
    assert!(user.contains("to push:    1"), "{st}");
    assert!(user.contains("server:     unreachable"), "{st}");
}
