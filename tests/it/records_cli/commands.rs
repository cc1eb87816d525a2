//! The record commands round trip: add, get, update, list (sorted and
//! filtered), delete, archive, reclassify, text from stdin, upsert by key
//! (concurrent adds of one key included), `record edit` and its failures,
//! and `recall remember`.

use crate::common::{record_files, record_text, snapshot, Env};
use predicates::prelude::*;

#[test]
fn add_get_update_list_delete_round_trip() {
    let env = Env::new();
    let id = env.add("decisions", "use pnpm", "We use pnpm, not npm.");
    let md = env.run(&["record", "get", &id]);
    assert!(md.starts_with("---\n"), "{md}");
    assert!(md.contains("key: use pnpm") && md.contains("We use pnpm, not npm."));

    env.run(&[
        "record",
        "update",
        "use pnpm",
        "--text",
        "We use pnpm 9.",
        "--pinned",
        "true",
        "--importance",
        "90",
        "--keywords",
        "node,js",
    ]);
    let j: serde_json::Value =
        serde_json::from_str(&env.run(&["record", "get", &id, "--format", "json"])).unwrap();
    assert_eq!(j["text"], "We use pnpm 9.");
    assert_eq!(j["pinned"], true);
    assert_eq!(j["importance"], 90);
    assert_eq!(j["keywords"], serde_json::json!(["node", "js"]));
    assert_eq!(j["source"], "manual");
    // Regression: an update that names no change printed "updated" and
    // changed nothing; it is refused, naming what it takes.
    let out = env.cmd().args(["record", "update", &id]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--text") && err.contains("--importance"),
        "{err}"
    );

    // Regression (review, stop 62): a key is stored trimmed, and was not
    // found when looked up as it was given.
    let spaced = env.add("decisions", " spaced key ", "A key typed with blanks.");
    let j: serde_json::Value =
        serde_json::from_str(&env.run(&["record", "get", " spaced key ", "--format", "json"]))
            .unwrap();
    assert_eq!(
        (j["id"].as_str(), j["key"].as_str()),
        (Some(&*spaced), Some("spaced key"))
    );
    env.run(&["record", "delete", " spaced key "]);

    env.run(&["record", "delete", &id]);
    env.cmd()
        .args(["record", "get", &id])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no record"));
    assert!(record_files(&env.home()).is_empty());
}

#[test]
fn text_from_stdin() {
    let env = Env::new();
    env.cmd()
        .args([
            "record",
            "add",
            "--category",
            "procedures",
            "--key",
            "tests",
            "-",
        ])
        .write_stdin("Run cargo nextest run.\n")
        .assert()
        .success();
    assert!(env
        .run(&["record", "get", "tests"])
        .contains("Run cargo nextest run."));
}

#[test]
fn upsert_by_key_updates_instead_of_duplicating() {
    let env = Env::new();
    let a = env.add("decisions", "db", "Use SQLite.");
    let b = env.add("decisions", "db", "Use SQLite with WAL.");
    assert_eq!(a, b);
    assert_eq!(record_files(&env.home()).len(), 1);
    assert!(env
        .run(&["record", "get", "db"])
        .contains("Use SQLite with WAL."));
}

/// Review finding: an upsert looked the key up and then wrote, with nothing
/// holding the two together across processes, so concurrent adds of one new
/// key made two records with that key.
#[test]
fn r_concurrent_adds_of_one_new_key_make_one_record() {
    let env = Env::new();
    env.add("decisions", "seed", "The project exists.");
    for round in 0..3 {
        let key = format!("same-{round}");
        let children: Vec<_> = (0..8)
            .map(|i| {
                let mut c = env.std_cmd();
                c.args(["record", "add", "--category", "decisions", "--key", &key])
                    .arg(format!("text {i}"))
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null());
                c.spawn().unwrap()
            })
            .collect();
        for mut c in children {
            assert!(c.wait().unwrap().success());
        }
        let files = record_files(&env.home());
        let named: Vec<_> = files
            .iter()
            .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(&key))
            .collect();
        assert_eq!(named.len(), 1, "{named:?}");
        let list = env.run(&["record", "list"]);
        let rows = list.lines().filter(|l| l.starts_with(&key)).count();
        assert_eq!(rows, 1, "{list}");
    }
}

#[test]
fn reclassify_moves_the_file() {
    let env = Env::new();
    let id = env.add("decisions", "ci", "CI runs on every push.");
    env.run(&["record", "reclassify", &id, "procedures"]);
    let files = record_files(&env.home());
    assert_eq!(files.len(), 1);
    assert!(files[0].to_string_lossy().contains("/records/procedures/"));
    assert_eq!(env.hit_ids("alpha", "push"), vec![id]);
}

#[test]
fn archived_records_stay_on_disk_and_leave_recall() {
    let env = Env::new();
    let id = env.add(
        "incidents",
        "outage",
        "The cache outage came from a stale lock.",
    );
    env.run(&["record", "archive", &id]);
    assert_eq!(record_files(&env.home()).len(), 1);
    assert!(env.hit_ids("alpha", "cache outage").is_empty());
    let archived = env.run(&["record", "list", "--status", "archived", "--format", "json"]);
    assert!(archived.contains(&id));
    env.run(&["record", "unarchive", &id]);
    assert_eq!(env.hit_ids("alpha", "cache outage"), vec![id]);
}

#[test]
fn list_sorts_pinned_then_importance_then_recency_and_filters() {
    let env = Env::new();
    env.add("decisions", "low", "low importance");
    env.run(&[
        "record",
        "add",
        "--category",
        "decisions",
        "--key",
        "high",
        "--importance",
        "90",
        "high importance",
    ]);
    env.run(&[
        "record",
        "add",
        "--category",
        "principles",
        "--key",
        "pinned",
        "--pinned",
        "--importance",
        "10",
        "pinned one",
    ]);
    env.add_user("preferences", "mine", "be terse");
    let rows: Vec<serde_json::Value> =
        serde_json::from_str(&env.run(&["record", "list", "--format", "json"])).unwrap();
    let keys: Vec<&str> = rows.iter().map(|r| r["key"].as_str().unwrap()).collect();
    // `low` and `mine` tie on importance: the more recently updated comes
    // first, and within one second (times have second resolution) the
    // project's record. Both orders are right depending on the clock
    // (a CI run crossed a second boundary), so the order is checked
    // against their times.
    assert_eq!(keys[..2], ["pinned", "high"]);
    let updated = |k: &str| {
        rows.iter()
            .find(|r| r["key"] == k)
            .and_then(|r| r["updated"].as_str())
            .unwrap()
            .to_string()
    };
    let want = if updated("mine") > updated("low") {
        ["mine", "low"]
    } else {
        ["low", "mine"]
    };
    assert_eq!(keys[2..], want, "{rows:#?}");
    let only: Vec<serde_json::Value> = serde_json::from_str(&env.run(&[
        "record",
        "list",
        "--category",
        "principles",
        "--format",
        "json",
    ]))
    .unwrap();
    assert_eq!(only.len(), 1);
    let user: Vec<serde_json::Value> =
        serde_json::from_str(&env.run(&["record", "list", "--scope", "user", "--format", "json"]))
            .unwrap();
    assert_eq!(user.len(), 1);
    let table = env.run(&["record", "list"]);
    assert!(table.lines().next().unwrap().starts_with("ID"));
    assert_eq!(table.lines().count(), 5);
}

#[test]
fn edit_validates_on_save() {
    let env = Env::new();
    let id = env.add("decisions", "edit me", "Old text.");
    env.cmd()
        .env("EDITOR", "sed -i s/Old/New/")
        .env_remove("VISUAL")
        .args(["record", "edit", &id])
        .assert()
        .success();
    assert!(env.run(&["record", "get", &id]).contains("New text."));

    let before = snapshot(&env.home().join("projects"));
    env.cmd()
        .env("EDITOR", "sed -i s/category:.*/category:\\ chores/")
        .env_remove("VISUAL")
        .args(["record", "edit", &id])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("unknown variant `chores`")
                .or(predicate::str::contains("category")),
        )
        .stderr(predicate::str::contains("your edit was not saved"));
    let after = snapshot(&env.home().join("projects"));
    let md = |s: &Vec<(std::path::PathBuf, Vec<u8>)>| {
        s.iter()
            .filter(|(p, _)| p.extension().is_some_and(|e| e == "md"))
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(md(&before), md(&after));
}

/// Regression (review, stop 57): an edit of `scope:` or `id:` said
/// "updated" and changed neither, and the file then said one scope while
/// the record stayed in the other. Both are refused, naming what to do,
/// and the edit is kept.
#[test]
fn an_edit_of_the_scope_or_the_id_is_refused_with_what_to_do() {
    let env = Env::new();
    let id = env.add("procedures", "tests", "Run cargo nextest run.");
    for (sed, says) in [
        ("sed -i s/^scope:.*/scope:\\ user/", "recall record move"),
        ("sed -i s/^id:.*/id:\\ renamed/", "the id cannot be changed"),
    ] {
        let out = env
            .cmd()
            .env("EDITOR", sed)
            .env_remove("VISUAL")
            .args(["record", "edit", &id])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{sed}: {err}");
        assert!(
            err.contains(says) && err.contains("your edit was not saved"),
            "{err}"
        );
    }
    let got = env.run(&["record", "get", &id]);
    assert!(
        got.contains("scope: project") && got.contains(&format!("id: {id}")),
        "{got}"
    );
}

/// Regression (issue probe: a failed `record edit` named the store file and
/// two different line numbers, and kept the text in /tmp): the error names
/// the kept file once, with its line, and the file is in the home.
#[test]
fn r_a_failed_edit_names_the_kept_file_and_keeps_it_in_the_home() {
    let env = Env::new();
    let id = env.add("decisions", "edit me", "Old text.");
    let out = env
        .cmd()
        .env("EDITOR", "sed -i s/^id:.*/id:\\ [broken/")
        .env_remove("VISUAL")
        .args(["record", "edit", &id])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let edits = env.home().join("edits");
    let kept: Vec<_> = std::fs::read_dir(&edits)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let kept = kept[0].display().to_string();
    assert!(
        err.contains(&format!("recall: {kept}:2: invalid frontmatter")),
        "{err}"
    );
    assert!(!err.contains("at line"), "one line number: {err}");
    assert!(err.contains(&format!("it is kept at {kept}")), "{err}");
}

/// `recall remember`: classified by the builtin rules (a preference goes to
/// the user scope), keyed `agent:<slug>`, upserted, `source: agent`; it
/// refuses secrets and never overwrites a record a person wrote.
#[test]
fn remember_classifies_upserts_and_guards() {
    let env = Env::new();
    let out = env.run(&["remember", "I prefer short answers without emojis."]);
    assert!(
        out.starts_with(
            "remembered agent:i-prefer-short-answers-without-emojis (preferences, user scope)"
        ),
        "{out}"
    );
    let out = env.run(&["remember", "We deploy from the release branch only."]);
    assert!(out.contains("(decisions, project scope)"), "{out}");
    let again = env.run(&["remember", "We deploy from the release branch only."]);
    assert!(again.starts_with("updated agent:we-deploy"), "{again}");
    let got = env.run(&[
        "record",
        "get",
        "agent:we-deploy-from-the-release-branch-only",
    ]);
    assert!(got.contains("source: agent"), "{got}");
    let listed = env.run(&["record", "list", "--source", "agent", "--format", "json"]);
    assert_eq!(listed.matches("\"key\"").count(), 2, "{listed}");
    // A secret is refused, with the way out.
    let token = format!("ghp_{}", "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5");
    let out = env
        .cmd()
        .args(["remember", &format!("the CI token is {token}")])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("refusing to store a secret: github-token"),
        "{err}"
    );
    // A person's record keeps its text.
    env.add("decisions", "deploys", "Deploys happen on Tuesdays.");
    let out = env
        .cmd()
        .args(["remember", "--key", "deploys", "Deploys happen daily."])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("belongs to a record a person wrote"), "{err}");
    assert!(env.run(&["record", "get", "deploys"]).contains("Tuesdays"));
}

/// Regression (review, stop 60): `remember` keys a fact by its text's
/// first 60 characters, so a second fact that began the same way was
/// written over the first. A long text's key now ends in a hash of it; the
/// same text remembered again is still one record, found by the key it had
/// before the hash.
#[test]
fn r_long_facts_alike_at_the_start_are_two_records() {
    let env = Env::new();
    let stem = "When running the integration tests against the staging database,";
    let tz = format!("{stem} set TZ=UTC first.");
    let serial = format!("{stem} never run them in parallel.");
    env.run(&["remember", &tz]);
    env.run(&["remember", &serial]);
    let again = env.run(&["remember", &tz]);
    assert!(again.starts_with("updated agent:"), "{again}");
    let listed = env.run(&["record", "list", "--format", "json"]);
    assert_eq!(listed.matches("\"key\"").count(), 2, "{listed}");
    assert!(
        listed.contains("TZ=UTC") && listed.contains("in parallel"),
        "{listed}"
    );

    // A record stored under the cut key, as before: the same text updates it.
    let env = Env::new();
    let cut = "agent:when-running-the-integration-tests-against-the-staging-datab";
    let dir = env.project_dir().join("records/decisions");
    std::fs::create_dir_all(&dir).unwrap();
    let text =
        record_text("old-1", cut, "decisions", &tz).replace("source: manual", "source: agent");
    std::fs::write(dir.join("old-1.md"), text).unwrap();
    env.run(&["reindex"]);
    let again = env.run(&["remember", &tz]);
    assert!(again.starts_with(&format!("updated {cut}")), "{again}");
    let listed = env.run(&["record", "list", "--format", "json"]);
    assert_eq!(listed.matches("\"key\"").count(), 1, "{listed}");
}

/// Regression (issue #26: a failed `record edit` kept its text, secret
/// included, in `<home>/edits/`). What is kept is redacted, the error does
/// not quote the secret, and no file under the home holds it.
#[test]
fn r26_a_failed_edit_keeps_no_secret() {
    let env = Env::new();
    let id = env.add("decisions", "edit me", "Old text.");
    let token = format!("ghp_{}", "Xk9Qm2Zr7Lp4Wn8Vb3Hd6Jf1Tc5Ys0Ga7Ke2");
    let out = env
        .cmd()
        .env("EDITOR", format!("sed -i s/Old/{token}/"))
        .env_remove("VISUAL")
        .args(["record", "edit", &id])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("github-token"), "{err}");
    assert!(err.contains("with its secrets redacted"), "{err}");
    assert!(!err.contains(&token), "{err}");
    let kept: Vec<_> = std::fs::read_dir(env.home().join("edits"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let text = std::fs::read_to_string(&kept[0]).unwrap();
    assert!(text.contains("[REDACTED:github-token] text."), "{text}");
    for (path, bytes) in snapshot(&env.home()) {
        let hay = String::from_utf8_lossy(&bytes);
        assert!(!hay.contains(&token), "{} holds the token", path.display());
    }
}

/// Issue 39 item 4: `record move` takes a misfiled record to the other
/// scope with its id and text, and refuses to move it where it is.
#[test]
fn a_record_moves_between_scopes() {
    let env = Env::new();
    env.add_user(
        "preferences",
        "fmt",
        "Always run mix format before committing.",
    );
    let out = env.run(&["record", "move", "fmt", "--to", "project"]);
    assert!(out.starts_with("moved fmt-"), "{out}");
    assert!(out.contains("to the project scope"), "{out}");
    let got = env.run_json(&[
        "record", "get", "fmt", "--scope", "project", "--format", "json",
    ]);
    assert_eq!(got["scope"], "project");
    assert_eq!(got["text"], "Always run mix format before committing.");
    let gone = env
        .cmd()
        .args(["record", "get", "fmt", "--scope", "user"])
        .output()
        .unwrap();
    assert!(!gone.status.success());
    let again = env
        .cmd()
        .args(["record", "move", "fmt", "--to", "project"])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("in the project scope already"),
        "{again:?}"
    );
    let bad = env
        .cmd()
        .args(["record", "move", "fmt", "--to", "team"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    // Regression: a key the other scope holds already pointed at `record
    // update`, which has no --key; the fix names `record edit` and ids.
    let id = &env.add_user("preferences", "fmt", "Always run cargo fmt.");
    let taken = env
        .cmd()
        .args(["record", "move", id, "--to", "project"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&taken.stderr);
    assert_eq!(taken.status.code(), Some(2), "{err}");
    assert!(
        err.contains("has a record with the key or id 'fmt' already")
            && err.contains(&format!("`recall record edit {id}`")),
        "{err}"
    );
    assert!(!err.contains("record update"), "{err}");
}
