//! Project identity from the git top level, the project list, and scopes:
//! projects never see each other's records, user records appear in every
//! project.

use crate::common::Env;

/// Regression: a typo in `--project` filed a fact into a new project and
/// said only "added …". A command that creates a project named on the
/// command line says so; one that only reads creates none and says
/// nothing of it, and the second write to it is quiet.
#[test]
fn a_project_a_write_creates_by_its_name_is_announced() {
    let env = Env::new();
    let add = |project: &str, key: &str| {
        let out = env
            .cmd_in(project)
            .args([
                "record",
                "add",
                "--category",
                "decisions",
                "--key",
                key,
                "We use pnpm.",
            ])
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let first = add("alpha", "a");
    assert!(
        first.contains("created project 'alpha'") && first.contains("recall project list"),
        "{first}"
    );
    assert_eq!(add("alpha", "b"), "");
    let out = env
        .cmd_in("alpah")
        .args(["query", "pnpm"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("created project"), "{err}");
    assert!(!env.home().join("projects").read_dir().unwrap().any(|e| {
        e.unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("alpah")
    }));
}

#[test]
fn projects_never_see_each_others_records() {
    let env = Env::new();
    env.cmd_in("alpha")
        .args([
            "record",
            "add",
            "--category",
            "decisions",
            "--key",
            "a",
            "alpha uses postgres",
        ])
        .assert()
        .success();
    env.cmd_in("beta")
        .args([
            "record",
            "add",
            "--category",
            "decisions",
            "--key",
            "b",
            "beta uses mysql",
        ])
        .assert()
        .success();
    assert_eq!(env.hit_ids("alpha", "postgres mysql").len(), 1);
    assert_eq!(env.hit_ids("beta", "postgres mysql").len(), 1);
    assert!(env.hit_ids("beta", "postgres").is_empty());
    assert!(env.hit_ids("alpha", "mysql").is_empty());
}

#[test]
fn user_records_appear_in_every_project() {
    let env = Env::new();
    env.add_user("preferences", "style", "I prefer small focused commits");
    for p in ["alpha", "beta", "gamma"] {
        let v = env.query_json(p, "commits");
        assert_eq!(v["hits"][0]["scope"], "user", "{p}: {v}");
    }
}

#[test]
fn project_identity_from_git_toplevel() {
    let env = Env::new();
    let repo = env.tmp.path().join("work/app");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join("src/deep")).unwrap();
    let other = env.tmp.path().join("other/app");
    std::fs::create_dir_all(other.join(".git")).unwrap();
    let show = |cwd: &std::path::Path| -> serde_json::Value {
        let mut c = assert_cmd::Command::cargo_bin("recall").unwrap();
        c.env_remove("RECALL_PROJECT")
            .env_remove("RECALL_HOME")
            .arg("--home")
            .arg(env.home());
        let out = c
            .args(["project", "show", "--json", "--cwd"])
            .arg(cwd)
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let a = show(&repo.join("src/deep"));
    let b = show(&repo);
    let c = show(&other);
    assert_eq!(a["id"], b["id"]);
    assert_ne!(a["id"], c["id"], "two checkouts named app collided");
    assert!(a["id"].as_str().unwrap().starts_with("app-"));
    assert_eq!(a["name"], "app");
}

#[test]
fn project_list_prints_the_mapping() {
    let env = Env::new();
    env.cmd_in("alpha")
        .args([
            "record",
            "add",
            "--category",
            "decisions",
            "--key",
            "a",
            "x",
        ])
        .assert()
        .success();
    env.cmd_in("beta")
        .args([
            "record",
            "add",
            "--category",
            "decisions",
            "--key",
            "b",
            "y",
        ])
        .assert()
        .success();
    let out = env.run(&["project", "list"]);
    assert_eq!(out.lines().count(), 2);
    assert!(
        out.contains("\talpha\t") && out.contains("\tbeta\t"),
        "{out}"
    );
}

/// Regression (issue 37 item 7: the CLI made projects named `a/b` or
/// holding U+202E, which record keys and the REST API refuse): one rule
/// everywhere; the message says what is wrong and what to use, and
/// nothing is created.
#[test]
fn r37_a_project_name_follows_the_rule_keys_and_the_api_follow() {
    let env = Env::new();
    const ADD: [&str; 7] = [
        "record",
        "add",
        "--category",
        "decisions",
        "--key",
        "k",
        "a fact",
    ];
    for (name, why) in [
        ("team/app", "it contains a slash"),
        (
            "dep\u{202E}gnp",
            "it contains the invisible character U+202E",
        ),
        ("..", "is a folder reference"),
    ] {
        let out = env.cmd_in(name).args(ADD).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{name}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("cannot name a project") && err.contains(why),
            "{err}"
        );
        assert!(err.contains("use letters, digits and - _ ."), "{err}");
    }
    assert!(
        !env.home().join("projects").exists()
            || std::fs::read_dir(env.home().join("projects"))
                .unwrap()
                .next()
                .is_none()
    );
    env.cmd_in("team-app.v2").args(ADD).assert().success();
}
