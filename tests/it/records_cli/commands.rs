//! Record commands end to end: the real binary on a temporary home.

use crate::common::{assert_success, record_files, snapshot, Env};
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
    env.run(&[
        "record",
        "add",
        "--scope",
        "user",
        "--category",
        "preferences",
        "--key",
        "mine",
        "be terse",
    ]);
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

#[test]
fn secret_is_refused_and_nothing_is_written() {
    let env = Env::new();
    let token = format!("ghp_{}", "a1B2".repeat(9));
    env.cmd()
        .args([
            "record",
            "add",
            "--category",
            "incidents",
            "--key",
            "leak",
            &format!("the token is {token}"),
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("github-token"))
        .stderr(predicate::str::contains("--redact"));
    assert!(!env.home().exists(), "a refused write created files");

    env.run(&[
        "record",
        "add",
        "--redact",
        "--category",
        "incidents",
        "--key",
        "leak",
        &format!("the token is {token}"),
    ]);
    let md = env.run(&["record", "get", "leak"]);
    assert!(md.contains("[REDACTED:github-token]"), "{md}");
    assert!(!md.contains(&token));
}

#[test]
fn bad_input_is_refused_and_leaves_disk_unchanged() {
    let env = Env::new();
    env.add("decisions", "existing", "Something true.");
    let before = snapshot(&env.home());
    let long_key = "k".repeat(256);
    let long_body = "x".repeat(2001);
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--category", "chores", "--key", "a", "t"],
            "unknown category 'chores'",
        ),
        (
            vec!["--category", "decisions", "--key", "", "t"],
            "the key is empty",
        ),
        (
            vec!["--category", "decisions", "--key", &long_key, "t"],
            "the limit is 255",
        ),
        (
            vec!["--category", "decisions", "--key", "big", &long_body],
            "the limit is 2000",
        ),
        (
            vec![
                "--category",
                "decisions",
                "--key",
                "imp",
                "--importance",
                "101",
                "t",
            ],
            "out of range",
        ),
        (
            vec!["--category", "decisions", "--key", "empty", "  "],
            "text is empty",
        ),
        (
            vec![
                "--category",
                "decisions",
                "--key",
                "s",
                "--scope",
                "team",
                "t",
            ],
            "unknown scope",
        ),
    ];
    for (args, msg) in cases {
        let mut full = vec!["record", "add"];
        full.extend(args.iter());
        env.cmd()
            .args(&full)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(msg));
        assert_eq!(before, snapshot(&env.home()), "disk changed after {args:?}");
    }
}

#[test]
fn body_cap_is_configurable() {
    let env = Env::new();
    std::fs::create_dir_all(env.home()).unwrap();
    std::fs::write(
        env.home().join("config.toml"),
        "[records]\nmax_body_chars = 10\n",
    )
    .unwrap();
    env.cmd()
        .args([
            "record",
            "add",
            "--category",
            "decisions",
            "--key",
            "k",
            "more than ten characters",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("the limit is 10"));
    env.cmd()
        .env("RECALL_MAX_BODY_CHARS", "100")
        .args([
            "record",
            "add",
            "--category",
            "decisions",
            "--key",
            "k",
            "more than ten characters",
        ])
        .assert()
        .success();
}

#[cfg(unix)]
#[test]
fn unwritable_home_is_a_clear_error() {
    use std::os::unix::fs::PermissionsExt;
    if nix_is_root() {
        return; // root ignores permissions; the check cannot be observed
    }
    let env = Env::new();
    let locked = env.tmp.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o500)).unwrap();
    env.cmd_with(&locked.join("home"), "alpha")
        .args([
            "record",
            "add",
            "--category",
            "decisions",
            "--key",
            "k",
            "t",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot use"));
    assert!(!locked.join("home").exists());
}

#[cfg(unix)]
fn nix_is_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout.starts_with(b"0"))
        .unwrap_or(false)
}

#[test]
fn home_file_instead_of_folder_is_a_clear_error() {
    let env = Env::new();
    let file = env.tmp.path().join("not-a-dir");
    std::fs::write(&file, "x").unwrap();
    env.cmd_with(&file, "alpha")
        .args([
            "record",
            "add",
            "--category",
            "decisions",
            "--key",
            "k",
            "t",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot use"))
        .stderr(predicate::str::contains("--home"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
}

#[test]
fn files_and_folders_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    env.add("decisions", "k", "t");
    for f in record_files(&env.home()) {
        assert_eq!(
            std::fs::metadata(&f).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    assert_eq!(
        std::fs::metadata(env.home()).unwrap().permissions().mode() & 0o777,
        0o700
    );
    // Regression: a query's `hits.log` was created 0644.
    assert_eq!(env.hit_ids("alpha", "t").len(), 1);
    let hits = env.project_dir().join("hits.log");
    assert!(hits.exists());
    for e in walkdir::WalkDir::new(env.home()) {
        let e = e.unwrap();
        let want = if e.file_type().is_dir() { 0o700 } else { 0o600 };
        let mode = e.metadata().unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, want, "{}", e.path().display());
    }
}

#[test]
fn global_flags_work_after_the_subcommand() {
    let env = Env::new();
    let mut c = assert_cmd::Command::cargo_bin("recall").unwrap();
    c.env_remove("RECALL_HOME")
        .env_remove("RECALL_PROJECT")
        .args([
            "record",
            "add",
            "--category",
            "decisions",
            "--key",
            "k",
            "t",
            "--home",
        ])
        .arg(env.home())
        .args(["--project", "alpha"])
        .assert()
        .success();
    assert_eq!(
        env.run(&["record", "list", "--format", "json"])
            .matches("\"key\"")
            .count(),
        1
    );
}

/// Regression: `doctor` told the user to run `reindex --full` for a damaged
/// FTS table, but `--full` kept every row whose file hash was unchanged, so
/// the damage (and the wrong text in recall) stayed.
#[test]
fn r_reindex_full_repairs_damaged_fts_content() {
    let env = Env::new();
    env.add(
        "decisions",
        "package manager",
        "We use pnpm workspaces, not npm.",
    );
    env.add("procedures", "release", "Tag the release and push the tag.");
    let db = env.project_dir().join("index.db");
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute(
        "UPDATE records_fts_content SET c1 = 'totally different words' WHERE id = 1",
        [],
    )
    .unwrap();
    drop(c);
    let doctor = env.cmd().arg("doctor").output().unwrap();
    assert_eq!(doctor.status.code(), Some(1), "doctor sees the damage");
    assert!(String::from_utf8_lossy(&doctor.stdout).contains("reindex --full"));

    env.run(&["reindex", "--full"]);
    let doctor = env.cmd().arg("doctor").output().unwrap();
    assert_eq!(
        doctor.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&doctor.stdout)
    );
    let v = env.query_json("alpha", "pnpm workspaces");
    assert!(v["hits"][0]["text"]
        .as_str()
        .unwrap()
        .contains("We use pnpm workspaces"));
    assert!(!v.to_string().contains("totally different"), "{v}");
}

/// Regression: `recall --scope user record add ...` wrote a project record,
/// because the top-level `--scope` belongs to the bare query form and was
/// silently ignored.
#[test]
fn r_query_flags_before_a_subcommand_are_an_error() {
    let env = Env::new();
    let out = env
        .cmd()
        .args([
            "--scope",
            "user",
            "record",
            "add",
            "--category",
            "preferences",
            "--key",
            "tabs",
            "Indent with tabs.",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--scope before the subcommand") && err.contains("after the subcommand"),
        "{err}"
    );
    assert!(record_files(&env.home()).is_empty(), "nothing written");
    // After the subcommand it does what it says.
    env.run(&[
        "record",
        "add",
        "--scope",
        "user",
        "--category",
        "preferences",
        "--key",
        "tabs",
        "Indent with tabs.",
    ]);
    let files = record_files(&env.home());
    assert!(
        files[0].to_string_lossy().contains("/user/records/"),
        "{files:?}"
    );
}

/// Regression: doctor checked the modes of the home, scope folders and
/// index only, so a record file readable by everyone went unreported.
#[cfg(unix)]
#[test]
fn r_doctor_reports_a_world_readable_record_file() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    env.add("decisions", "k", "A private decision.");
    let f = record_files(&env.home()).remove(0);
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = env.cmd().arg("doctor").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("chmod 600 {}", f.display())),
        "{text}"
    );
}

/// Regression (issue probe: a deleted record's text stayed as raw bytes in
/// `index.db`): after `record delete` no byte of its text is left in any
/// file of the store, even while another connection holds the index open.
#[test]
fn r_a_deleted_record_leaves_no_bytes_in_the_store() {
    let env = Env::new();
    env.add("decisions", "keep", "unrelated decision about the build");
    let id = env.add(
        "decisions",
        "marker",
        "the zorblaxquux credential lives in the vault",
    );
    let dir = env.project_dir();
    // A reader keeps the WAL from being removed when the writer closes.
    let reader = rusqlite::Connection::open(dir.join("index.db")).unwrap();
    let _: i64 = reader
        .query_row("SELECT count(*) FROM records", [], |r| r.get(0))
        .unwrap();
    env.run(&["record", "delete", &id]);
    let mut holders = Vec::new();
    for e in walkdir::WalkDir::new(&dir) {
        let e = e.unwrap();
        if e.file_type().is_file() {
            let bytes = std::fs::read(e.path()).unwrap();
            if bytes.windows(11).any(|w| w == b"zorblaxquux") {
                holders.push(e.path().to_path_buf());
            }
        }
    }
    assert!(holders.is_empty(), "still holding the text: {holders:?}");
    drop(reader);
}

/// `--ephemeral` runs one command in a throwaway home and removes it; the
/// real home is never touched.
#[test]
fn ephemeral_uses_a_throwaway_home_and_removes_it() {
    let env = Env::new();
    let tmpdir = env.tmp.path().join("tmp");
    std::fs::create_dir_all(&tmpdir).unwrap();
    let mut c = assert_cmd::Command::cargo_bin("recall").unwrap();
    let out = c
        .env_remove("RECALL_HOME")
        .env("TMPDIR", &tmpdir)
        .args(["--ephemeral", "--project", "alpha"])
        .args([
            "record",
            "add",
            "--category",
            "decisions",
            "--key",
            "e1",
            "fact",
        ])
        .current_dir(env.tmp.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_success(&out);
    assert!(stdout.contains("recall-ephemeral-"), "{stdout}");
    let left: Vec<_> = std::fs::read_dir(&tmpdir).unwrap().collect();
    assert!(left.is_empty(), "the throwaway home is removed: {left:?}");
    assert!(!env.home().exists(), "the real home is not touched");
    let out = env
        .cmd()
        .args(["--ephemeral", "query", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be used with"));
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

/// Issue 26 item 12: `list` and `get` (and so REST `GET` and MCP
/// `get`/`list`) took the record lock and opened the index read-write, so
/// they waited behind any writer. Reads never wait for writers: with the
/// record lock and the index's write lock both held for the whole test,
/// they still answer.
#[test]
fn r26_reads_never_wait_for_a_writer() {
    let env = Env::new();
    env.add("decisions", "db", "We use PostgreSQL");
    let dir = env.project_dir();
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.join("records.lock"))
        .unwrap();
    lock.lock().unwrap();
    let writer = rusqlite::Connection::open(dir.join("index.db")).unwrap();
    writer.execute_batch("BEGIN IMMEDIATE").unwrap();
    for args in [&["record", "list"][..], &["record", "get", "db"]] {
        let mut child = env
            .std_cmd()
            .args(args)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut done = None;
        for _ in 0..300 {
            if let Some(status) = child.try_wait().unwrap() {
                done = Some(status);
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let Some(status) = done else {
            let _ = child.kill();
            panic!("recall {args:?} is still waiting for the writer after 30 s");
        };
        assert!(status.success(), "{args:?}");
        let mut out = String::new();
        std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut out).unwrap();
        assert!(out.contains("PostgreSQL") || out.contains("db"), "{out}");
    }
    writer.execute_batch("ROLLBACK").unwrap();
}

/// Regression (issue 26 item 9): `doctor` run while records were being
/// written reported a record "not indexed": it read the files and the rows
/// at different moments, between a write's file and its row. It now waits
/// for a record write in flight (which holds `records.lock` from its file
/// to its row) and reads the index as one snapshot.
#[cfg(target_os = "linux")]
#[test]
fn r26_doctor_waits_for_a_record_write_in_flight() {
    let env = Env::new();
    let id = env.add("decisions", "seed", "A first fact so the project exists.");
    let dir = env.project_dir();
    // A writer between its file and its row: it holds the records lock
    // and its new file is in place.
    let lock = std::fs::File::create(dir.join("records.lock")).unwrap();
    lock.lock().unwrap();
    let records = dir.join("records").join("decisions");
    let first = std::fs::read_to_string(records.join(format!("{id}.md"))).unwrap();
    let late = first
        .replace(&id, "late-0a1b2c")
        .replace("key: seed", "key: late")
        .replace("A first fact", "A second fact");
    let path = records.join("late-0a1b2c.md");
    std::fs::write(&path, late).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let doctor = env
        .std_cmd()
        .arg("doctor")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Doctor waits for the lock (the kernel says where it sleeps).
    crate::common::wait::for_wchan(doctor.id(), "locks_lock_inode_wait");
    // The writer indexes its row (here a read syncs the new file), then
    // lets go.
    assert_eq!(env.hit_ids("alpha", "second").len(), 1);
    drop(lock);
    let out = doctor.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
}

/// `recall --home H --cwd <git folder> ARGS`: a project tied to a folder.
fn in_repo(env: &Env, repo: &std::path::Path) -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("recall").unwrap();
    c.env_remove("RECALL_HOME")
        .env_remove("RECALL_PROJECT")
        .env("NO_COLOR", "1")
        .arg("--home")
        .arg(env.home())
        .arg("--cwd")
        .arg(repo);
    c
}

/// Issue 25 part 7: procedures become skills. `recall skills` proposes one
/// playbook per task with its source records; `record promote` writes one
/// record as `.claude/skills/<name>/SKILL.md`, which reads back as a
/// launcher reads it; `--dry-run` writes nothing; a person's edit is never
/// overwritten without `--force` (and then kept); a secret is refused.
#[test]
fn procedures_become_skills() {
    let env = Env::new();
    let repo = env.tmp.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    let add = |key: &str, text: &str| {
        let out = in_repo(&env, &repo)
            .args([
                "record",
                "add",
                "--category",
                "procedures",
                "--key",
                key,
                text,
            ])
            .output()
            .unwrap();
        assert_success(&out);
        String::from_utf8(out.stdout)
            .unwrap()
            .split_whitespace()
            .nth(1)
            .unwrap()
            .to_string()
    };
    let tag = add(
        "release-tag",
        "Tag the release with git tag and push the release tag.",
    );
    let notes = add(
        "release-notes",
        "Write release notes from the git tag log before the release.",
    );
    add(
        "db-backup",
        "Back up the Postgres database nightly with pg_dump.",
    );

    let out = in_repo(&env, &repo)
        .args(["skills", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let proposals = v.as_array().unwrap();
    assert_eq!(proposals.len(), 2, "{v:#}");
    let release = proposals
        .iter()
        .find(|p| p["sources"].as_array().unwrap().len() == 2)
        .unwrap_or_else(|| panic!("no release playbook: {v:#}"));
    let sources: Vec<&str> = release["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert!(
        sources.contains(&tag.as_str()) && sources.contains(&notes.as_str()),
        "{sources:?}"
    );

    let skill = repo.join(".claude/skills/release-tag/SKILL.md");
    let dry = in_repo(&env, &repo)
        .args(["record", "promote", "release-tag", "--dry-run"])
        .output()
        .unwrap();
    assert!(dry.status.success());
    assert!(String::from_utf8_lossy(&dry.stdout).contains("name: release-tag"));
    assert!(!skill.exists(), "--dry-run wrote");

    in_repo(&env, &repo)
        .args(["record", "promote", "release-tag"])
        .assert()
        .success();
    let text = std::fs::read_to_string(&skill).unwrap();
    let skill_back = recall::skills::parse(&text).unwrap();
    assert_eq!(skill_back.name, "release-tag");
    assert_eq!(
        skill.parent().unwrap().file_name().unwrap().to_str(),
        Some(skill_back.name.as_str())
    );
    assert!(skill_back
        .description
        .starts_with("Use when working on release-tag: Tag the release"));
    assert!(skill_back
        .body
        .starts_with("Tag the release with git tag and push the release tag."));
    // Again: nothing changes.
    in_repo(&env, &repo)
        .args(["record", "promote", "release-tag"])
        .assert()
        .success()
        .stdout(predicate::str::contains("already holds this skill"));

    // A person edits the skill: promote refuses, --force keeps a copy.
    let edited = text.replace("push the release tag", "push the tag to the mirror too");
    std::fs::write(&skill, &edited).unwrap();
    in_repo(&env, &repo)
        .args(["record", "promote", "release-tag"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--force"));
    assert_eq!(std::fs::read_to_string(&skill).unwrap(), edited);
    in_repo(&env, &repo)
        .args(["record", "promote", "release-tag", "--force"])
        .assert()
        .success()
        .stdout(predicate::str::contains("kept the old skill as"));
    assert_eq!(std::fs::read_to_string(&skill).unwrap(), text);
    let backups = std::fs::read_dir(skill.parent().unwrap())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("SKILL.md.bak-")
        })
        .count();
    assert_eq!(backups, 1);

    // A record file that holds a secret (written by hand) is not promoted.
    let records = std::fs::read_dir(env.home().join("projects"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("records/procedures");
    let first = std::fs::read_dir(&records)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let token = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
    let leaked = std::fs::read_to_string(&first)
        .unwrap()
        .replace("id: ", "id: leak-")
        .replace("key: ", "key: leak-")
        .trim_end()
        .to_string()
        + &format!("\nDeploy with {token}.\n");
    let leak = records.join("leak.md");
    std::fs::write(&leak, leaked).unwrap();
    std::fs::set_permissions(&leak, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let out = in_repo(&env, &repo)
        .args(["record", "promote", "leak-db-backup"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("secret"), "{stderr}");
    assert!(!repo.join(".claude/skills/leak-db-backup").exists());
}

/// Issue 25 part 3: a project's records kept in its repository. `project
/// records --in-repo` moves them to `<git top>/.recall/records` (the index
/// stays in the home); a teammate's record arriving with `git pull` is
/// recalled; a record with merge conflict markers is skipped by recall and
/// reported by doctor with the fix; `--in-home` brings them back.
#[test]
fn records_kept_in_the_repository() {
    let env = Env::new();
    let repo = env.tmp.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    let run = |args: &[&str]| {
        let out = in_repo(&env, &repo).args(args).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    run(&[
        "record",
        "add",
        "--category",
        "decisions",
        "--key",
        "pm",
        "We use pnpm, never npm.",
    ]);
    run(&[
        "record",
        "add",
        "--category",
        "procedures",
        "--key",
        "tests",
        "Run cargo nextest.",
    ]);
    let (code, out, err) = run(&["project", "records", "--in-repo"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("in the repository") && out.contains("2 file(s) moved"),
        "{out}"
    );
    let shared = repo.join(".recall/records");
    assert_eq!(
        walkdir::WalkDir::new(&shared)
            .into_iter()
            .flatten()
            .filter(|e| e.file_type().is_file())
            .count(),
        2
    );
    let (_, out, _) = run(&["project", "show"]);
    assert!(out.contains("(in the repository)"), "{out}");
    let (code, out, _) = run(&["query", "pnpm"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("pm"), "{out}");
    assert_eq!(run(&["doctor"]).0, Some(0));

    // A teammate's record arrives with `git pull`.
    let decisions = shared.join("decisions");
    let mine = std::fs::read_dir(&decisions)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let text = std::fs::read_to_string(&mine).unwrap();
    let id = text
        .lines()
        .find_map(|l| l.strip_prefix("id: "))
        .unwrap()
        .to_string();
    let theirs = text
        .replace(&id, "ports-0a1b2c")
        .replace("key: pm", "key: ports")
        .replace(
            "We use pnpm, never npm.",
            "The walrus API listens on port 7411.",
        );
    std::fs::write(decisions.join("ports-0a1b2c.md"), &theirs).unwrap();
    let (_, out, _) = run(&["query", "walrus port"]);
    assert!(out.contains("ports"), "{out}");

    // A pull that conflicts: recall skips the record and says why; doctor
    // names it with the fix.
    let conflicted = text.replace(
        "We use pnpm, never npm.",
        "<<<<<<< HEAD\nWe use pnpm, never npm.\n=======\nWe use yarn.\n>>>>>>> origin/main",
    );
    // As git writes it: a new file renamed over the old one.
    let git_write = |path: &std::path::Path, text: &str| {
        let tmp = path.with_extension("git-tmp");
        std::fs::write(&tmp, text).unwrap();
        std::fs::rename(&tmp, path).unwrap();
    };
    git_write(&mine, &conflicted);
    let (code, _, err) = run(&["query", "walrus port"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("merge conflict markers"), "{err}");
    let (code, out, _) = run(&["doctor"]);
    assert_ne!(code, Some(0));
    assert!(
        out.contains("merge conflict markers") && out.contains("remove the marker lines"),
        "{out}"
    );
    git_write(&mine, &text);

    // Back in the home: the repository keeps its files.
    let (code, out, err) = run(&["project", "records", "--in-home"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("in the home"), "{out}");
    assert!(decisions.join("ports-0a1b2c.md").exists());
    let (_, out, _) = run(&["query", "walrus port"]);
    assert!(out.contains("ports"), "{out}");
    assert!(!run(&["project", "show"]).1.contains("in the repository"));
}

/// Review findings: `--in-repo` would have copied a hand-written record
/// holding a secret into the working tree, and `record promote` wrote
/// through a symbolic link a cloned repository can hold. Both refuse.
#[test]
fn r_records_in_the_repository_and_skills_refuse_secrets_and_links() {
    let env = Env::new();
    let repo = env.tmp.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    let out = in_repo(&env, &repo)
        .args([
            "record",
            "add",
            "--category",
            "procedures",
            "--key",
            "deploy",
            "Deploy with make release.",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let file = std::fs::read_dir(env.home().join("projects"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("records/procedures");
    let first = std::fs::read_dir(&file)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let text = std::fs::read_to_string(&first).unwrap();
    let token = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
    std::fs::write(
        &first,
        format!("{}\nThe token is {token}.\n", text.trim_end()),
    )
    .unwrap();
    let out = in_repo(&env, &repo)
        .args(["project", "records", "--in-repo"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("would be committed") && !stderr.contains(&token),
        "{stderr}"
    );
    assert!(!repo.join(".recall").exists(), "nothing moved");
    std::fs::write(&first, &text).unwrap();

    // A skills folder that links outside the project.
    let outside = env.tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(repo.join(".claude")).unwrap();
    std::os::unix::fs::symlink(&outside, repo.join(".claude/skills")).unwrap();
    let out = in_repo(&env, &repo)
        .args(["record", "promote", "deploy"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("symbolic link"), "{stderr}");
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
}
