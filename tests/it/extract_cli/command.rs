//! The command protocol (with the fake extractors in
//! `testdata/extractors/`): records with provenance from a good response;
//! a timeout, garbage or a non-zero exit fails the session only; one bad
//! fact is dropped and the others kept; what the command says on stderr is
//! redacted.

use std::path::PathBuf;

use super::{
    auto_keys, env, extract_with, extractor, fact, get, indexed_session, list, outcome,
    record_snapshot, status, Fake,
};
use crate::common::{contains_bytes, record_files, snapshot, Env};
use serde_json::json;

#[test]
fn command_success_writes_records_with_provenance() {
    let env = env();
    indexed_session(&env, "s1");
    let fake = Fake::new(&env);
    let mut pref = fact(
        "preferences",
        "Terse answers",
        "Answer in short paragraphs.",
        0.75,
    );
    pref["scope"] = json!("user");
    pref["evidence"] = json!(["m0", "m2"]);
    fake.answer(vec![
        fact(
            "incidents",
            "Watcher race",
            "The flaky test raced the file watcher; tests now wait for its first event.",
            0.85,
        ),
        pref,
    ]);
    let r = fake.extract(&env, &[]);
    assert_eq!(r["dry_run"], false);
    let rep = &r["report"];
    assert_eq!(
        (
            &rep["sessions"],
            &rep["done"],
            &rep["failed"],
            &rep["records"]
        ),
        (&json!(1), &json!(1), &json!(0), &json!(2)),
        "{r}"
    );
    let o = outcome(&r, "s1");
    assert_eq!(o["state"], "done");
    assert!(o["reason"].is_null());
    assert_eq!(
        o["kept"],
        json!([
            "[project] incidents auto:watcher-race: The flaky test raced the file watcher; tests now wait for its first event.",
            "[user] preferences auto:terse-answers: Answer in short paragraphs."
        ])
    );

    let inc = get(&env, "auto:watcher-race").unwrap();
    assert_eq!(inc["source"], "auto");
    assert_eq!(inc["category"], "incidents");
    assert_eq!(inc["scope"], "project");
    assert_eq!(inc["confidence"], 0.85);
    assert_eq!(
        inc["origin"],
        json!({"session": "s1", "messages": ["m0"], "extractor": "command", "extractor_version": "1"})
    );
    let pref = get(&env, "auto:terse-answers").unwrap();
    assert_eq!(pref["scope"], "user");
    assert_eq!(pref["origin"]["messages"], json!(["m0", "m2"]));
    // The provenance is in the file's frontmatter.
    let md = std::fs::read_to_string(inc["path"].as_str().unwrap()).unwrap();
    for needle in [
        "source: auto",
        "origin:",
        "session: s1",
        "extractor: command",
        "confidence: 0.85",
    ] {
        assert!(md.contains(needle), "{needle} missing from:\n{md}");
    }
    let st = status(&env);
    assert_eq!(st["s1"]["state"], "done");
    assert_eq!(st["s1"]["facts"], 2);
}

/// Run a failing fake extractor over one session: the run exits 0, the
/// session is `failed` with a reason containing `why`, nothing is written.
fn assert_command_failure(script: &str, extra: &[&str], why: &str) {
    assert_command_failure_with(script, extra, &[], why);
}

/// The same, with `vars` set for the run (and so for the extractor).
fn assert_command_failure_with(script: &str, extra: &[&str], vars: &[(String, String)], why: &str) {
    let env = env();
    indexed_session(&env, "s1");
    let cmd = extractor(script);
    let mut args = vec!["--extractor-cmd", cmd.as_str()];
    args.extend_from_slice(extra);
    let before = record_snapshot(&env);
    let r = extract_with(&env, &args, vars);
    assert_eq!(r["report"]["failed"], 1, "{r}");
    assert_eq!(r["report"]["records"], 0, "{r}");
    let o = outcome(&r, "s1");
    assert_eq!(o["state"], "failed");
    let reason = o["reason"].as_str().unwrap();
    assert!(reason.contains(why), "reason {reason:?} lacks {why:?}");
    let st = status(&env);
    assert_eq!(st["s1"]["state"], "failed");
    assert!(
        st["s1"]["reason"].as_str().unwrap().contains(why),
        "{:?}",
        st["s1"]
    );
    assert_eq!(before, record_snapshot(&env));
    assert!(record_files(&env.home()).is_empty());
}

#[test]
fn command_timeout_fails_the_session_only() {
    // slow.sh creates `done` after its 3 s sleep: a run that waited for it
    // instead of killing it at the 1 s timeout would leave the file.
    let marker = tempfile::tempdir().unwrap();
    let done = marker.path().join("done");
    let vars = [("SLOW_EXTRACTOR_DONE".into(), done.display().to_string())];
    assert_command_failure_with("slow.sh", &["--timeout", "1"], &vars, "timed out after 1s");
    assert!(
        !done.exists(),
        "the timeout did not cut the 3 s command short"
    );
}

#[test]
fn command_garbage_output_fails_the_session_only() {
    assert_command_failure("garbage.sh", &[], "not a facts response");
}

#[test]
fn command_nonzero_exit_fails_the_session_only() {
    assert_command_failure("fail.sh", &[], "exit status: 3");
    assert_command_failure("fail.sh", &[], "model quota exceeded");
}

/// Regression: one fact with an unknown category made the whole response
/// unusable, so the session failed and its good facts were lost.
#[test]
fn r_one_bad_fact_is_dropped_and_the_others_are_kept() {
    let env = env();
    indexed_session(&env, "s1");
    let fake = Fake::new(&env);
    let mut bogus = fact("decisions", "Bogus", "A fact in no known category.", 0.9);
    bogus["category"] = json!("bogus");
    let mut no_text = fact("decisions", "No text", "x", 0.9);
    no_text.as_object_mut().unwrap().remove("text");
    fake.answer(vec![
        bogus,
        fact(
            "decisions",
            "Use pnpm",
            "Use pnpm for every package install.",
            0.9,
        ),
        no_text,
    ]);
    let r = fake.extract(&env, &[]);
    assert_eq!(outcome(&r, "s1")["state"], "done", "{r}");
    assert_eq!(auto_keys(&env), ["auto:use-pnpm"]);
    let dropped = outcome(&r, "s1")["dropped"].to_string();
    assert!(
        dropped.contains("fact 1 (Bogus)") && dropped.contains("bogus"),
        "{dropped}"
    );
    assert!(dropped.contains("fact 3 (No text)"), "{dropped}");
}

/// Regression (review, stop 62): the five-facts cap counted facts a
/// person's record of the same key then kept out, so good facts were
/// dropped "over the limit" and the session was marked done without them.
#[test]
fn r_facts_a_persons_record_keeps_out_leave_their_place_to_others() {
    let env = env();
    indexed_session(&env, "s1");
    for (key, text) in [
        ("auto:tests", "Run the tests with `mix test --cover`."),
        ("auto:build", "Build with `mix compile --force`."),
    ] {
        env.run(&[
            "record",
            "add",
            "--category",
            "procedures",
            "--key",
            key,
            text,
        ]);
    }
    let fake = Fake::new(&env);
    let topics = ["ruff", "pnpm", "helix", "sqlite", "tokio"];
    let mut facts = vec![
        fact("procedures", "Tests", "Run the tests with mix test.", 0.95),
        fact(
            "procedures",
            "Build",
            "Build the project with mix compile.",
            0.95,
        ),
    ];
    facts.extend(topics.iter().map(|t| {
        fact(
            "decisions",
            t,
            &format!("The project uses {t} for its {t} work."),
            0.8,
        )
    }));
    fake.answer(facts);
    let r = fake.extract(&env, &[]);
    assert_eq!(outcome(&r, "s1")["state"], "done", "{r}");
    let mut want: Vec<String> = topics.iter().map(|t| format!("auto:{t}")).collect();
    want.extend(["auto:build".to_string(), "auto:tests".to_string()]);
    want.sort();
    let mut keys: Vec<String> = auto_keys(&env);
    keys.extend(
        list(&env, "manual")
            .iter()
            .map(|r| r["key"].as_str().unwrap().to_string()),
    );
    keys.sort();
    assert_eq!(keys, want, "{r}");
    let dropped = outcome(&r, "s1")["dropped"].to_string();
    assert!(
        dropped.contains("a manual record has this key"),
        "{dropped}"
    );
    assert!(!dropped.contains("over the limit"), "{dropped}");
}

/// Regression (review, stop 62): a command extractor's `scope` was taken
/// as given, so a codebase rule it filed as the user's showed in every
/// project, and a person's taste it filed as the project's went to the
/// team. recall files each fact by the test `remember` uses.
#[test]
fn r_an_extractors_scope_is_checked_by_recalls_own_test() {
    let env = env();
    indexed_session(&env, "s1");
    let fake = Fake::new(&env);
    let mut rule = fact(
        "decisions",
        "pnpm",
        "We use pnpm, not npm, in this repo.",
        0.9,
    );
    rule["scope"] = json!("user");
    let mut taste = fact(
        "preferences",
        "pref",
        "I prefer short answers without emojis.",
        0.9,
    );
    taste["scope"] = json!("project");
    fake.answer(vec![rule, taste]);
    let r = fake.extract(&env, &[]);
    assert_eq!(
        outcome(&r, "s1")["kept"],
        json!([
            "[project] decisions auto:pnpm: We use pnpm, not npm, in this repo.",
            "[user] preferences auto:pref: I prefer short answers without emojis."
        ]),
        "{r}"
    );
}

/// Stdout and stderr of `recall ARGS` with extra environment (any exit).
fn output_with(env: &Env, args: &[&str], vars: &[(String, String)]) -> String {
    let mut c = env.cmd();
    c.args(args);
    for (k, v) in vars {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

/// Every file under the home that holds `needle`.
fn files_holding(env: &Env, needle: &str) -> Vec<PathBuf> {
    snapshot(&env.home())
        .into_iter()
        .filter(|(_, bytes)| contains_bytes(bytes, needle.as_bytes()))
        .map(|(p, _)| p)
        .collect()
}

/// Regression (issue #26: the extractor command's stderr was stored
/// unredacted and shown by `extract --status`, and a fact dropped for a
/// secret in its key was reported with the key as is).
#[test]
fn r26_extractor_stderr_and_dropped_keys_are_redacted() {
    let secret = format!("ghp_{}", "Xk9Qm2Zr7Lp4Wn8Vb3Hd6Jf1Tc5Ys0Ga7Ke2");
    let leak = vec![("LEAK".to_string(), secret.clone())];

    // An extractor that fails, saying the secret on stderr.
    let env = env();
    indexed_session(&env, "s1");
    let script = env.tmp.path().join("fail.sh");
    let body = "cat >/dev/null\necho \"auth failed for token $LEAK\" >&2\nexit 3\n";
    std::fs::write(&script, body).unwrap();
    let cmd = format!("sh '{}'", script.display());
    let mut printed = output_with(&env, &["extract", "--extractor-cmd", &cmd], &leak);
    printed += &output_with(&env, &["extract", "--status"], &[]);
    printed += &output_with(&env, &["extract", "--status", "--json"], &[]);
    assert!(
        printed.contains("auth failed for token [REDACTED:github-token]"),
        "{printed}"
    );
    assert!(!printed.contains(&secret), "{printed}");
    assert_eq!(files_holding(&env, &secret), Vec::<PathBuf>::new());

    // An extractor whose fact holds the secret in its key.
    let env = self::env();
    indexed_session(&env, "s2");
    let fake = Fake::new(&env);
    fake.answer(vec![fact(
        "procedures",
        &format!("token {secret}"),
        "Release pushes authenticate with the token from the vault.",
        0.9,
    )]);
    let r = fake.extract(&env, &[]);
    let dropped = outcome(&r, "s2")["dropped"].to_string();
    assert!(
        dropped.contains("token [REDACTED:github-token]: contains a secret"),
        "{r}"
    );
    assert!(!r.to_string().contains(&secret), "{r}");
    assert_eq!(files_holding(&env, &secret), Vec::<PathBuf>::new());
}

/// The `model` extractor: an answer without a facts object fails the
/// session only, with the reason; `--extractor model` without a command
/// says what to pass.
#[test]
fn model_answer_without_facts_fails_the_session_only() {
    let env = env();
    indexed_session(&env, "s1");
    let r = extract_with(
        &env,
        &["--model-cmd", "echo I found nothing worth keeping"],
        &[],
    );
    assert_eq!(r["report"]["failed"], 1, "{r}");
    let reason = outcome(&r, "s1")["reason"].as_str().unwrap().to_string();
    assert!(reason.contains("holds no {\"facts\""), "{reason}");
    assert!(record_files(&env.home()).is_empty());
    let out = env
        .cmd()
        .args(["extract", "--extractor", "model"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--model-cmd CMD or extract.model_command"),
        "{err}"
    );
    // Regression: a flag for another extractor than the one named was
    // ignored (`--extractor builtin --extractor-cmd X` ran the rules).
    for args in [
        &["--extractor", "builtin", "--extractor-cmd", "cat"][..],
        &["--extractor", "model", "--extractor-cmd", "cat"],
        &["--extractor-cmd", "cat", "--model-cmd", "cat"],
    ] {
        let out = env.cmd().arg("extract").args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("names another extractor"), "{args:?}: {err}");
    }
}

/// The `model` extractor's command reads the prompt on stdin, runs in its
/// own folder, and its launcher's recall hooks are off.
#[test]
fn model_command_gets_the_prompt_in_its_own_folder_with_hooks_off() {
    let env = env();
    indexed_session(&env, "s1");
    let seen = env.tmp.path().join("seen.txt");
    let answer = r#"{"facts": [{"category": "procedures", "key": "watcher", "text": "Tests that use the watcher wait for its first event.", "confidence": 0.9}]}"#;
    let cmd = format!(
        "{{ pwd; echo \"hooks=$RECALL_HOOKS\"; cat; }} > '{}'; echo 'Sure:'; echo '{answer}'",
        seen.display()
    );
    let r = extract_with(&env, &["--model-cmd", &cmd], &[]);
    assert_eq!(r["report"]["records"], 1, "{r}");
    let seen = std::fs::read_to_string(&seen).unwrap();
    let mut lines = seen.lines();
    assert!(lines.next().unwrap().ends_with("/extract-work"), "{seen}");
    assert_eq!(lines.next(), Some("hooks=off"));
    assert!(
        seen.contains("durable facts") && seen.contains("races the background file watcher"),
        "{seen}"
    );
}

/// Regression: the index redacts a transcript's secrets, but extraction
/// read the file again and sent them as they were to the extractor
/// command (and so, with `--model-cmd 'claude -p'`, to a vendor's model
/// and its own log of the call), in the transcript and the title.
#[test]
fn r_the_request_to_an_extractor_holds_no_secret() {
    let env = env();
    let secret = format!("ghp_{}", "Xk9Qm2Zr7Lp4Wn8Vb3Hd6Jf1Tc5Ys0Ga7Ke2");
    let mut msgs = super::chat("login");
    msgs[1].1 = format!("I set GITHUB_TOKEN={secret} in the CI settings and reran it.");
    let path = super::write_session(&env, "leaky", "2020-03-01", &msgs);
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("session leaky", &format!("deploy with {secret}"));
    std::fs::write(&path, text).unwrap();
    env.index(&path);
    let fake = Fake::new(&env);
    fake.answer(vec![]);
    fake.extract(&env, &[]);
    let request = fake.request("leaky").to_string();
    assert!(request.contains("[REDACTED:github-token]"), "{request}");
    assert!(request.contains("CI settings"), "{request}");
    assert!(!request.contains(&secret), "{request}");
}

/// Whether the process whose pid `file` holds is still running (not gone,
/// not a zombie).
fn alive(file: &std::path::Path) -> bool {
    let pid = std::fs::read_to_string(file).unwrap();
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()));
    // `pid (comm) S ...`: the state follows the command's closing bracket.
    stat.is_ok_and(|s| {
        s.rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z'))
    })
}

/// `recall extract --extractor-cmd CMD` started with the signals that end
/// it at their default action but those in `ignored` (as `nohup` starts a
/// command): a test run from a script's background job inherits SIGINT
/// ignored, which recall rightly keeps.
fn extract_with_signals(env: &Env, cmd: &str, ignored: &[libc::c_int]) -> std::process::Child {
    use std::os::unix::process::CommandExt as _;
    let ignored = ignored.to_vec();
    let mut c = env.std_cmd();
    c.args(["extract", "--json", "--extractor-cmd", cmd])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: only signal(2), async-signal-safe, between fork and exec.
    unsafe {
        c.pre_exec(move || {
            for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                let action = match ignored.contains(&signal) {
                    true => libc::SIG_IGN,
                    false => libc::SIG_DFL,
                };
                libc::signal(signal, action);
            }
            Ok(())
        })
    };
    c.spawn().unwrap()
}

/// Regression (review, stop 60): only the extractor's `sh` was killed. A
/// timeout left the program it ran going (a model's CLI spending quota);
/// a process it left in the background held stdout, so extract waited for
/// it past any timeout; and Ctrl-C ended recall but not the extractor. The
/// extractor now runs in a process group of its own, ended in all three.
#[test]
fn r_the_extractors_process_group_ends_with_it() {
    use crate::common::wait::until;
    use std::os::unix::process::ExitStatusExt as _;
    let env = env();
    indexed_session(&env, "s1");
    let pids = env.tmp.path().join("pids");
    std::fs::create_dir_all(&pids).unwrap();
    // The extractor has written its background child's pid.
    let started = |pid: &std::path::Path| {
        until(30, "the extractor starts", || {
            std::fs::read_to_string(pid).is_ok_and(|p| !p.trim().is_empty())
        })
    };

    // A timeout ends what the extractor started.
    let pid = pids.join("timeout");
    let cmd = format!("sleep 1000 & echo $! > '{}'; wait", pid.display());
    let r = extract_with(&env, &["--extractor-cmd", &cmd, "--timeout", "1"], &[]);
    assert_eq!(outcome(&r, "s1")["state"], "failed", "{r}");
    until(10, "the timed-out extractor's child ends", || !alive(&pid));

    // What it leaves in the background is ended when it exits, not waited
    // for: the subshell would touch the mark after 20 s.
    let mark = pids.join("mark");
    let cmd = format!(
        "(sleep 20; touch '{}') & echo '{{\"facts\": []}}'",
        mark.display()
    );
    let r = extract_with(&env, &["--extractor-cmd", &cmd], &[]);
    assert_eq!(outcome(&r, "s1")["state"], "done", "{r}");
    assert!(!mark.exists(), "extract waited for the background process");

    // Ctrl-C ends the extractor with recall, and recall as before.
    indexed_session(&env, "s2");
    let pid = pids.join("interrupt");
    let cmd = format!("sleep 1000 & echo $! > '{}'; wait", pid.display());
    let mut run = extract_with_signals(&env, &cmd, &[]);
    started(&pid);
    // SAFETY: kill(2) on a child this test started.
    unsafe { libc::kill(run.id() as libc::pid_t, libc::SIGINT) };
    let status = run.wait().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGINT), "{status:?}");
    until(10, "the interrupted extractor's child ends", || {
        !alive(&pid)
    });

    // Started ignoring SIGHUP (`nohup`), it goes on ignoring it.
    indexed_session(&env, "s3");
    let pid = pids.join("nohup");
    let cmd = format!("sleep 1000 & echo $! > '{}'; wait", pid.display());
    let mut run = extract_with_signals(&env, &cmd, &[libc::SIGHUP]);
    started(&pid);
    // SAFETY: kill(2) on children this test started.
    unsafe { libc::kill(run.id() as libc::pid_t, libc::SIGHUP) };
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(
        run.try_wait().unwrap().is_none(),
        "SIGHUP ended a nohup run"
    );
    assert!(alive(&pid));
    unsafe { libc::kill(run.id() as libc::pid_t, libc::SIGTERM) };
    let status = run.wait().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
    until(10, "the terminated extractor's child ends", || !alive(&pid));
}
