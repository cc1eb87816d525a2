//! Records kept in the project's repository and skills written into it
//! from procedures, both refusing secrets and links.

use crate::common::{assert_success, Env};
use predicates::prelude::*;

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
    // Regression: with no procedures, `skills` exited 1 and `skills
    // --json` 0; both are 1, as a query with no hits is.
    for args in [&["skills"][..], &["skills", "--json"]] {
        let out = in_repo(&env, &repo).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
    }
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
    assert_eq!(out.status.code(), Some(0));
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
        .starts_with("Use when working on release tag: Tag the release"));
    assert!(
        skill_back
            .body
            .starts_with("# Release tag\n\nTag the release with git tag and push the release tag."),
        "{}",
        skill_back.body
    );
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
    // Issue 39 item 7: the conflicted record is left out, not served from
    // the text it was indexed with, and the warning names its file.
    let (code, out, err) = run(&["query", "pnpm"]);
    assert!(!out.contains("We use pnpm"), "{out}");
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(err.contains("merge conflict markers"), "{err}");
    let name = mine.file_name().unwrap().to_string_lossy().into_owned();
    assert!(err.contains(&name), "{err}");
    let (code, out, err) = run(&["query", "walrus port"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("ports"), "{out}");
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
    // Regression: `skills --json` printed the secret that `summary`
    // redacts and `promote` refuses.
    for args in [&["skills", "--json"][..], &["skills"]] {
        let out = in_repo(&env, &repo).args(args).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{args:?}");
        assert!(!stdout.contains(&token), "{args:?}: {stdout}");
    }
    let json = in_repo(&env, &repo)
        .args(["skills", "--json"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&json.stdout).contains("[REDACTED:github-token]"));
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

/// Issue 37 item 14: `recall skills` proposed `auto-build-the-project-mix-compile`
/// ("Use when working on auto:build-…") for the procedures extraction
/// wrote, `record promote` refused that name, and promoting one of the
/// records gave a one-line SKILL.md. Now the playbook is named and
/// described from what its procedures are for, is promoted by the name
/// `skills` prints, and its body holds the steps of every record.
#[test]
fn r37_a_proposed_playbook_is_promoted_by_the_name_skills_prints() {
    let env = Env::new();
    let repo = env.tmp.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    let out = in_repo(&env, &repo)
        .args(["record", "add", "--category", "decisions", "--key", "db"])
        .arg("We use Postgres 16.")
        .output()
        .unwrap();
    assert_success(&out);
    let printed = String::from_utf8(out.stdout).unwrap();
    let file = std::path::PathBuf::from(printed.split_whitespace().last().unwrap());
    let procedures = file.parent().unwrap().parent().unwrap().join("procedures");
    std::fs::create_dir_all(&procedures).unwrap();
    // As the extraction rules write them (`extract/rules/procedures.rs`).
    for (id, key, body) in [
        (
            "auto-build-the-project-mix-compile-1a2b3c",
            "auto:build-the-project-mix-compile",
            "To build the project, run `mix compile`.",
        ),
        (
            "auto-run-the-tests-mix-test-4d5e6f",
            "auto:run-the-tests-mix-test",
            "To run the tests, run `mix test`.",
        ),
    ] {
        let text = format!(
            "---\nid: {id}\nkey: {key}\ncategory: procedures\nscope: project\nsource: auto\n\
             created: 2026-11-01T00:00:00Z\nupdated: 2026-11-01T00:00:00Z\nconfidence: 0.75\n---\n\n{body}\n"
        );
        std::fs::write(procedures.join(format!("{id}.md")), text).unwrap();
    }

    let out = in_repo(&env, &repo).args(["skills"]).output().unwrap();
    assert_success(&out);
    let listed = String::from_utf8(out.stdout).unwrap();
    let name = listed.lines().next().unwrap().trim().to_string();
    assert_eq!(name, "build-project-and-run-tests", "{listed}");
    assert!(
        listed.contains("Use when you need to build the project or run the tests"),
        "{listed}"
    );
    // Neither the name nor the description comes from the `auto:` key.
    let described: String = listed.lines().take(2).collect();
    assert!(!described.contains("auto"), "{listed}");

    let out = in_repo(&env, &repo)
        .args(["record", "promote", &name])
        .output()
        .unwrap();
    assert_success(&out);
    let skill = repo.join(".claude/skills").join(&name).join("SKILL.md");
    let text = std::fs::read_to_string(&skill).unwrap();
    let back = recall::skills::parse(&text).unwrap();
    assert_eq!(back.name, name);
    assert!(
        back.description
            .starts_with("Use when you need to build the project or run the tests"),
        "{}",
        back.description
    );
    for step in [
        "# Build the project and run the tests",
        "## Build the project",
        "To build the project, run `mix compile`.",
        "## Run the tests",
        "To run the tests, run `mix test`.",
    ] {
        assert!(back.body.contains(step), "{step:?} missing:\n{text}");
    }
    assert!(
        text.contains("auto-build-the-project-mix-compile-1a2b3c")
            && text.contains("auto-run-the-tests-mix-test-4d5e6f"),
        "{text}"
    );

    // A name that is neither a playbook nor a record says where to look.
    in_repo(&env, &repo)
        .args(["record", "promote", "no-such-skill"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("`recall skills` lists"));
}

/// Issue 37 item 13: with the project's records in its repository, every
/// printed record path went through the home's link
/// (`<home>/projects/<id>/records/…`) instead of naming the file a person
/// edits and commits, `<repo>/.recall/records/…`.
#[test]
fn r37_records_in_the_repository_are_printed_at_their_repository_path() {
    let env = Env::new();
    let repo = env.tmp.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    let run = |args: &[&str]| {
        let out = in_repo(&env, &repo).args(args).output().unwrap();
        assert_success(&out);
        String::from_utf8(out.stdout).unwrap()
    };
    run(&["project", "records", "--in-repo"]);
    let shared = repo.join(".recall/records");
    let home = env.home().display().to_string();
    let add = run(&[
        "record",
        "add",
        "--category",
        "decisions",
        "--key",
        "pm",
        "We use pnpm, never npm.",
    ]);
    let remember = run(&["remember", "The staging database is Postgres 16."]);
    let get: serde_json::Value =
        serde_json::from_str(&run(&["record", "get", "pm", "--format", "json"])).unwrap();
    let list = run(&["record", "list", "--format", "json"]);
    let archived = run(&["record", "archive", "pm"]);
    run(&["record", "unarchive", "pm"]);
    let query: serde_json::Value =
        serde_json::from_str(&run(&["query", "--format", "json", "pnpm npm"])).unwrap();
    let hit = &query["hits"][0]["source"]["path"];
    let shared = shared.display().to_string();
    for (what, text) in [
        ("record add", add),
        ("remember", remember),
        ("record get", get["path"].to_string()),
        ("record list", list),
        ("record archive", archived),
        ("query --format json", hit.to_string()),
    ] {
        assert!(
            text.contains(&shared),
            "{what} does not name {shared}: {text}"
        );
        assert!(
            !text.contains(&home),
            "{what} names the home's link: {text}"
        );
    }
}

/// Noticed at stop 37, fixed at stop 46: a record file written by hand in
/// the repository that recall cannot read was named by `doctor`, `reindex`
/// and every read's warning at the home's link to the folder, not where the
/// person wrote it.
#[test]
fn r46_a_hand_written_record_is_named_where_it_was_written() {
    let env = Env::new();
    let repo = env.tmp.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    let out = in_repo(&env, &repo)
        .args(["project", "records", "--in-repo"])
        .output()
        .unwrap();
    assert_success(&out);
    let dir = repo.join(".recall/records/decisions");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("my-cache.md");
    std::fs::write(
        &file,
        "---\nid: cache-1\nkey: cache\ncategory: decisions\nscope: project\nimportance: lots\n---\nThe cache is Redis.\n",
    )
    .unwrap();
    let written = file.display().to_string();
    let home = env.home().display().to_string();
    let doctor = in_repo(&env, &repo).arg("doctor").output().unwrap();
    let reindex = in_repo(&env, &repo).arg("reindex").output().unwrap();
    for (what, out) in [("doctor", &doctor), ("reindex", &reindex)] {
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            text.contains(&written),
            "{what} does not name {written}: {text}"
        );
        assert!(
            !text
                .lines()
                .any(|l| l.contains(&format!("{home}/projects")) && l.contains("my-cache.md")),
            "{what} names the file through the home's link: {text}"
        );
        // (Stop 60: the fields a file in its category's folder leaves out
        // are given by its place, so a missing one is no longer the error.)
        assert!(
            text.contains("my-cache.md:6") && text.contains("a whole number from 0 to 100"),
            "{what} does not say what is wrong where: {text}"
        );
    }
}

/// Regression (reviews, stop 59): a teammate's fresh clone, with a home of
/// its own, ignored the records committed under `.recall/records`: no hit,
/// no hint, and `record add` wrote into the home. A project with no records
/// folder of its own now reads and writes the repository's. And a scope
/// with record files and no index (removed by hand, or left empty by a
/// crash) gave the hooks nothing, not even a pinned record, with
/// SessionStart saying there was no memory yet: the index is built from
/// the files on first read.
#[test]
fn r_a_fresh_clone_reads_the_records_its_repository_keeps() {
    let env = Env::new();
    let repo = env.tmp.path().join("clone");
    let shared = repo.join(".recall/records/decisions");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::write(
        shared.join("pm-0a1b2c.md"),
        "---\nid: pm-0a1b2c\nkey: package manager\ncategory: decisions\nscope: project\nsource: manual\ncreated: 2026-11-01\nupdated: 2026-11-01\npinned: true\n---\n\nWe use pnpm, never npm.\n",
    )
    .unwrap();
    let run = |args: &[&str]| {
        let out = in_repo(&env, &repo).args(args).output().unwrap();
        assert_success(&out);
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let out = run(&["query", "pnpm"]);
    assert!(out.contains("We use «pnpm»"), "{out}");
    assert!(run(&["project", "show"]).contains("(in the repository)"));
    run(&[
        "record",
        "add",
        "--category",
        "decisions",
        "--key",
        "ci",
        "CI runs on the self-hosted pool.",
    ]);
    assert_eq!(std::fs::read_dir(&shared).unwrap().count(), 2);
    // No index: the hook builds it from the files, and injects the pin.
    let project = std::fs::read_dir(env.home().join("projects"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let session_start = |what: &str| {
        let payload = serde_json::json!({
            "session_id": "s1",
            "cwd": repo,
            "hook_event_name": "SessionStart",
            "source": "startup",
        });
        let out = in_repo(&env, &repo)
            .args(["hook", "claude-code"])
            .write_stdin(payload.to_string())
            .output()
            .unwrap();
        assert_success(&out);
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(said.contains("We use pnpm, never npm."), "{what}: {said}");
        assert!(!said.contains("no memory"), "{what}: {said}");
    };
    for f in ["index.db", "index.db-wal", "index.db-shm"] {
        let _ = std::fs::remove_file(project.join(f));
    }
    session_start("no index");
    for f in ["index.db", "index.db-wal", "index.db-shm"] {
        let _ = std::fs::remove_file(project.join(f));
    }
    std::fs::write(project.join("index.db"), b"").unwrap();
    session_start("an empty index");
}
