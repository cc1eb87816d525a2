//! Hybrid recall (issue 38 item 3) through `recall query`, on the real
//! model (fetched by `scripts/get-model.sh`; skipped outside CI without
//! it, a failure in CI): the dense side rescues a passage the words miss,
//! never moves what the words found, and a query whose hybrid side cannot
//! run (no model, no vectors yet) still answers with the words.

use std::path::Path;

use crate::common::Env;
use crate::model_cli::model_dir;

/// Two sessions: the deploy answer in other words than the question (in
/// one), the passage that shares the question's words (in the other, so
/// neither is shown as the other's context), and unrelated talk around
/// both that the dense side must not pick.
const SESSIONS: [&[&str]; 2] = [
    &[
        r#"{"session":{"id":"s1","title":"team notes"}}"#,
        r#"{"role":"user","id":"a0","content":"My cat likes to sleep on the windowsill in the afternoon sun."}"#,
        r#"{"role":"user","id":"a1","content":"The soup needs more salt and a little lemon juice."}"#,
        r#"{"role":"user","id":"a2","content":"We watched a film about whales and the deep ocean last night."}"#,
        r#"{"role":"user","id":"deploy","content":"Deployments go out with make ship-it from the main branch every Friday afternoon."}"#,
        r#"{"role":"user","id":"a3","content":"The garden tomatoes finally turned red after the long summer."}"#,
        r#"{"role":"user","id":"a4","content":"Her violin lessons moved from Tuesday to Thursday evenings."}"#,
        r#"{"role":"user","id":"a5","content":"The marathon route goes along the river past the old bridge."}"#,
    ],
    &[
        r#"{"session":{"id":"s2","title":"more notes"}}"#,
        r#"{"role":"user","id":"b0","content":"I bought a new umbrella because the old one broke in the storm."}"#,
        r#"{"role":"user","id":"b1","content":"The library closes early on public holidays."}"#,
        r#"{"role":"user","id":"b2","content":"Grandma knitted a blue scarf for the winter."}"#,
        r#"{"role":"user","id":"words","content":"Which rollout steps does the checklist want? Ask Dana about the checklist."}"#,
        r#"{"role":"user","id":"b3","content":"The museum has a new exhibit of medieval armour."}"#,
        r#"{"role":"user","id":"b4","content":"The bakery on the corner sells rye bread on Saturdays."}"#,
        r#"{"role":"user","id":"b5","content":"The kids built a sandcastle at the beach."}"#,
    ],
];

/// The question: no word of it is in the deploy passage.
const QUESTION: &str = "which weekday do we release to the servers? rollout";

/// A home whose config names `model` (and whatever `more` adds), with the
/// session indexed; vectors are written only when `model` is set then.
fn home_with(model: Option<&Path>, more: &str) -> Env {
    let env = Env::new();
    let model = model.map_or(String::new(), |m| {
        format!("model = {:?}\n", m.to_str().unwrap())
    });
    env.write_config(&format!("[semantic]\n{model}{more}"));
    env.index_transcript("s1.jsonl", SESSIONS[0]);
    env.index_transcript("s2.jsonl", SESSIONS[1]);
    env
}

/// `recall query --format json --explain QUESTION [flags]`: exit code,
/// each hit's message ids in rank order, the JSON and stderr.
fn ask(env: &Env, flags: &[&str]) -> (i32, Vec<Vec<String>>, serde_json::Value, String) {
    let out = env
        .cmd()
        .env_remove("RECALL_SEMANTIC_MODEL")
        .env_remove("RECALL_SEMANTIC_HYBRID")
        .args(["query", "--format", "json", "--explain", "--no-salience"])
        .args(flags)
        .arg(QUESTION)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let code = out.status.code().unwrap();
    assert!(code <= 1, "{err}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids = json["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            let ids = h["source"]["message_ids"].as_array().unwrap();
            ids.iter()
                .map(|i| i.as_str().unwrap().to_string())
                .collect()
        })
        .collect();
    (code, ids, json, err)
}

/// The rank (0-based) of the first hit that shows message `id`.
fn rank_of(hits: &[Vec<String>], id: &str) -> Option<usize> {
    hits.iter().position(|h| h.iter().any(|m| m == id))
}

/// The words find `words` and miss `deploy`; hybrid on rescues `deploy`
/// right after the lexical top, with its cosine and `rescued` in the
/// explanation, and `words` keeps its place. Hybrid off (the default) does
/// not show `deploy`.
#[test]
fn a_paraphrase_the_words_miss_is_rescued_and_what_they_found_keeps_its_place() {
    let Some(model) = model_dir() else {
        return;
    };
    let env = home_with(Some(&model), "");
    let (_, off, _, _) = ask(&env, &[]);
    assert_eq!(rank_of(&off, "words"), Some(0), "{off:?}");
    assert_eq!(rank_of(&off, "deploy"), None, "off: {off:?}");
    let (code, on, json, err) = ask(&env, &["--semantic"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.is_empty(), "{err}");
    assert_eq!(on[0], off[0], "the words' best keeps rank 1: {on:?}");
    let at = rank_of(&on, "deploy").unwrap_or_else(|| panic!("not rescued: {on:?}"));
    let dense = &json["hits"][at]["explain"]["dense"];
    assert_eq!(dense["rescued"], true, "{dense}");
    assert!(dense["cosine"].as_f64().unwrap() >= 0.5, "{dense}");
    assert_eq!(json["hits"][0]["explain"]["dense"]["rescued"], false);
    // The config turns it on for every query, the same way.
    let env = home_with(Some(&model), "hybrid = true\n");
    let (_, by_config, _, _) = ask(&env, &[]);
    assert_eq!(by_config, on);
    // And the snippets' explanation says so.
    let out = env
        .cmd()
        .args(["query", "--explain", "--no-salience", QUESTION])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("rescued by the dense side"), "{text}");
}

/// Hybrid on, the model configured but the index built before it was:
/// no vectors to compare, so the words answer alone and stderr says how
/// to get the vectors.
#[test]
fn hybrid_on_without_vectors_yet_still_answers() {
    let Some(model) = model_dir() else {
        return;
    };
    let env = home_with(None, "");
    let (_, off, _, _) = ask(&env, &[]);
    env.write_config(&format!(
        "[semantic]\nmodel = {:?}\nhybrid = true\n",
        model.to_str().unwrap()
    ));
    let (code, on, _, err) = ask(&env, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(on, off);
    assert!(
        err.contains("no vectors") && err.contains("recall index"),
        "{err}"
    );
}

/// Hybrid asked for with no model configured, or one that does not load:
/// the words answer, and stderr says what to set where.
#[test]
fn hybrid_without_a_model_answers_with_words_and_says_how_to_set_one() {
    let env = home_with(None, "");
    let (_, off, _, _) = ask(&env, &[]);
    let (code, on, _, err) = ask(&env, &["--semantic"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(on, off);
    assert!(
        err.contains("no embedding model is configured")
            && err.contains("[semantic] model")
            && err.contains("answered with words alone"),
        "{err}"
    );
    env.write_config("[semantic]\nmodel = \"/no/such/model\"\nhybrid = true\n");
    let (code, on, _, err) = ask(&env, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(on, off);
    assert!(
        err.contains("/no/such/model") && err.contains("answered with words alone"),
        "{err}"
    );
}

/// A bad `[semantic] hybrid` value names the file, its line and what to
/// write; a bad `RECALL_SEMANTIC_HYBRID` or `RECALL_SEMANTIC_HOOK_GATE`
/// names the variable.
#[test]
fn a_bad_semantic_setting_says_where_and_what_to_write() {
    let env = Env::new();
    env.write_config("[semantic]\nhybrid = \"sometimes\"\n");
    let out = env.cmd().args(["query", "x"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("config.toml:2"), "{err}");
    for (var, value, says) in [
        ("RECALL_SEMANTIC_HYBRID", "sometimes", "1, true, on"),
        ("RECALL_SEMANTIC_HOOK_GATE", "high", "a cosine from -1 to 1"),
    ] {
        let env = Env::new();
        let out = env
            .cmd()
            .env(var, value)
            .args(["query", "x"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&format!("{var}={value:?}")) && err.contains(says),
            "{err}"
        );
    }
}

/// Ticket parts get vectors too (schema 11), so the dense side can rescue
/// a ticket; deleting the ticket's file takes them.
#[test]
fn index_writes_a_vector_per_ticket_part() {
    let env = Env::new();
    let model = env.tmp.path().join("tiny-model");
    crate::model_cli::tiny_static_model(&model);
    env.write_config(&format!(
        "[semantic]\nmodel = {:?}\n",
        model.to_str().unwrap()
    ));
    let dir = env.tmp.path().join("tickets");
    std::fs::create_dir_all(&dir).unwrap();
    for (id, text) in [("T-1", "deploy the release"), ("T-2", "the cat")] {
        std::fs::write(
            dir.join(format!("{id}.md")),
            format!("---\nid: {id}\ntitle: \"{text}\"\n---\n{text} please\n"),
        )
        .unwrap();
    }
    env.run(&["index", "--kind", "ticket", dir.to_str().unwrap()]);
    let db = env.project_dir().join("index.db");
    let parts = crate::model_cli::count(&db, "tickets");
    assert_eq!(parts, 2);
    assert_eq!(crate::model_cli::count(&db, "ticket_vectors"), parts);
}

/// Vectors another model made are in another space: hybrid recall does
/// not compare the question with them (it says so and the words answer),
/// and the next `recall index` embeds every row again with the configured
/// model. Before the fix they were compared without a word.
#[test]
fn r38_vectors_of_another_model_are_not_compared_and_index_embeds_them_again() {
    let Some(model) = model_dir() else {
        return;
    };
    let env = home_with(Some(&model), "");
    let (_, off, _, _) = ask(&env, &[]);
    let (_, on, _, _) = ask(&env, &["--semantic"]);
    assert!(rank_of(&on, "deploy").is_some(), "{on:?}");
    let ours: String = env
        .open_index()
        .query_row(
            "SELECT value FROM meta WHERE key = 'semantic_model'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    env.open_index()
        .execute(
            "UPDATE meta SET value = 'static dim=384 blake3=another' WHERE key = 'semantic_model'",
            [],
        )
        .unwrap();
    let (code, other, _, err) = ask(&env, &["--semantic"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(other, off, "compared with another model's vectors");
    assert!(
        err.contains("another model") && err.contains("recall index"),
        "{err}"
    );

    let out = env
        .cmd()
        .args(["index", env.tmp.path().join("s1.jsonl").to_str().unwrap()])
        .output()
        .unwrap();
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("embedded again"), "{said}");
    let db = env.open_index();
    let now: String = db
        .query_row(
            "SELECT value FROM meta WHERE key = 'semantic_model'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(now, ours);
    let (chunks, vectors): (i64, i64) = db
        .query_row(
            "SELECT (SELECT count(*) FROM chunks), (SELECT count(*) FROM chunk_vectors)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(vectors, chunks, "every passage embedded again");
    let (_, again, _, err) = ask(&env, &["--semantic"]);
    assert_eq!(again, on, "{err}");
}

/// A record written with `record add` or `remember` gets its vector at
/// once when the index holds the configured model's vectors, so hybrid
/// recall finds it before the next `recall index`; an index no model has
/// embedded yet is left to `recall index`, which embeds every row.
#[test]
fn a_record_written_gets_its_vector_at_once() {
    let env = Env::new();
    let model = env.tmp.path().join("tiny-model");
    crate::model_cli::tiny_static_model(&model);
    let db = env.project_dir().join("index.db");
    let add = |key: &str, text: &str| {
        env.run(&[
            "record",
            "add",
            "--category",
            "decisions",
            "--key",
            key,
            text,
        ]);
    };
    // No model's vectors yet: the record waits for `recall index`.
    add("first", "Deploys go through make ship-it.");
    env.write_config(&format!(
        "[semantic]\nmodel = {:?}\n",
        model.to_str().unwrap()
    ));
    add("second", "The cache is flushed on every release.");
    assert_eq!(crate::model_cli::count(&db, "record_vectors"), 0);
    let empty = env.tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    env.run(&["index", empty.to_str().unwrap()]);
    assert_eq!(crate::model_cli::count(&db, "record_vectors"), 2);
    // Now each write embeds what it wrote.
    add("third", "Releases are tagged from the main branch.");
    env.run(&[
        "remember",
        "--key",
        "fourth",
        "We pin the runner image to ubuntu-22.04.",
    ]);
    assert_eq!(crate::model_cli::count(&db, "records"), 4);
    assert_eq!(crate::model_cli::count(&db, "record_vectors"), 4);
}

/// Six sessions for the prompt hook's semantic gate: `s1` is the deploy
/// problem the prompt is about, `s2` a party banner that shares its rare
/// words (walrus, release, branch, deploy), the rest other work.
const GATE_SESSIONS: [(&str, &str, &str); 6] = [
    (
        "s1",
        "The walrus deploy times out on the release branch every time.",
        "The deploy job waits for the database migrations to finish; raise migrate_timeout in deploy.toml to 600 seconds and the release goes through.",
    ),
    (
        "s2",
        "Draw a walrus mascot for the release party banner at the branch office.",
        "Here is a cheerful walrus in a party hat holding balloons, for the release party banner at the branch office; the balloons deploy from his tusks.",
    ),
    (
        "s3",
        "Make the header sticky and the footer grey.",
        "Added position sticky to the header and a grey background to the footer.",
    ),
    (
        "s4",
        "Add unit tests for the invoice parser.",
        "Added eleven tests for the invoice parser covering totals, taxes and empty lines.",
    ),
    (
        "s5",
        "Fix the typos in the readme and the contributing guide.",
        "Fixed seven typos across the readme and the contributing guide.",
    ),
    (
        "s6",
        "Switch the logger to JSON output in production.",
        "The logger now writes JSON lines when APP_ENV is production.",
    ),
];

/// The sessions the prompt hook injects for `prompt`, as a new session
/// would get them (a fresh session id each time), and its stderr.
fn hook_sessions(env: &Env, prompt: &str, vars: &[(&str, &str)]) -> (Vec<String>, String) {
    static ASKED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = ASKED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let payload = serde_json::json!({
        "hook_event_name": "UserPromptSubmit",
        "session_id": format!("asking-{n}"),
        "cwd": env.tmp.path(),
        "prompt": prompt,
    });
    let out = env
        .cmd()
        .env_remove("RECALL_SEMANTIC_MODEL")
        .env_remove("RECALL_SEMANTIC_HOOK_GATE")
        .envs(vars.iter().copied())
        .args(["hook", "claude-code"])
        .write_stdin(payload.to_string())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{err}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let text = json["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default();
    let sessions = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("_source: session "))
        .map(|s| s.split_whitespace().next().unwrap().to_string())
        .collect();
    (sessions, err)
}

/// A home whose config names `model` (and whatever `more` adds) with
/// [`GATE_SESSIONS`] indexed, and the config's model line.
fn gate_home(model: &Path, more: &str) -> (Env, String) {
    let env = Env::new();
    let model_line = format!("model = {:?}\n", model.to_str().unwrap());
    env.write_config(&format!("[semantic]\n{model_line}{more}"));
    for (id, user, assistant) in GATE_SESSIONS {
        let lines = [
            format!(r#"{{"session":{{"id":"{id}","title":"work {id}"}}}}"#),
            serde_json::json!({"role": "user", "id": "u", "content": user}).to_string(),
            serde_json::json!({"role": "assistant", "id": "a", "content": assistant}).to_string(),
        ];
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        env.index_transcript(&format!("{id}.jsonl"), &lines);
    }
    (env, model_line)
}

/// `[semantic] hook_gate`: the prompt hook leaves out a passage that
/// shares the prompt's rare words but whose vector is far from the
/// prompt's (the party banner, cosine about 0.54 here, against 0.79 for
/// the deploy problem). Without the gate both are injected; with a model
/// that does not load, the hook injects by words and does not fail.
#[test]
fn the_prompt_hooks_semantic_gate_leaves_out_a_passage_about_something_else() {
    let Some(model) = model_dir() else {
        return;
    };
    let (env, model_line) = gate_home(&model, "");
    let prompt = "walrus release branch deploy";
    let (off, err) = hook_sessions(&env, prompt, &[]);
    assert_eq!(off, ["s1", "s2"], "{err}");
    env.write_config(&format!("[semantic]\n{model_line}hook_gate = 0.65\n"));
    let (gated, err) = hook_sessions(&env, prompt, &[]);
    assert_eq!(gated, ["s1"], "{err}");
    // The same by the environment variable, over a config without it.
    env.write_config(&format!("[semantic]\n{model_line}"));
    let (by_env, err) = hook_sessions(&env, prompt, &[("RECALL_SEMANTIC_HOOK_GATE", "0.65")]);
    assert_eq!(by_env, ["s1"], "{err}");
    // A model that does not load: the words judge alone, nothing fails.
    // It is loaded only for a prompt the words give something.
    env.write_config("[semantic]\nmodel = \"/no/such/model\"\nhook_gate = 0.65\n");
    let debug = [("RUST_LOG", "recall=debug")];
    let (unloaded, err) = hook_sessions(&env, prompt, &debug);
    assert_eq!(unloaded, off, "{err}");
    assert!(err.contains("no semantic gate"), "{err}");
    let (nothing, err) = hook_sessions(&env, "quantum chromodynamics on a lattice", &debug);
    assert!(nothing.is_empty(), "{nothing:?}");
    assert!(!err.contains("no semantic gate"), "{err}");
}

/// A resident `recall mcp` lends its model to the prompt hook's one-shot
/// processes (`semantic::lend`): the hook embeds the prompt with it
/// instead of loading the model, and injects what it injects when it
/// loads the model itself. The socket goes when the server does, and the
/// hook then loads the model again.
#[test]
fn the_prompt_hook_borrows_the_model_of_a_running_mcp_server() {
    let Some(model) = model_dir() else {
        return;
    };
    let (env, _) = gate_home(&model, "hook_gate = 0.65\n");
    let prompt = "walrus release branch deploy";
    let debug = [("RUST_LOG", "recall=debug")];
    let (alone, err) = hook_sessions(&env, prompt, &debug);
    assert_eq!(alone, ["s1"], "{err}");
    assert!(!err.contains("resident process"), "{err}");

    let mut server = env
        .std_cmd()
        .env_remove("RECALL_SEMANTIC_MODEL")
        .arg("mcp")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let run = env.home().join("run");
    let socket = || {
        std::fs::read_dir(&run)
            .ok()
            .and_then(|mut d| d.next())
            .and_then(|e| e.ok())
            .map(|e| e.path())
    };
    crate::common::wait::until(60, "recall mcp lends its model", || socket().is_some());
    let (lent, err) = hook_sessions(&env, prompt, &debug);
    assert_eq!(lent, alone, "{err}");
    assert!(
        err.contains("the question embedded by a resident process's model"),
        "{err}"
    );

    // The client hangs up (before it initialised, which the server
    // reports as an error): the server stops and takes its socket along.
    drop(server.stdin.take());
    server.wait().unwrap();
    assert_eq!(socket(), None);
    let (after, err) = hook_sessions(&env, prompt, &debug);
    assert_eq!(after, alone, "{err}");
    assert!(!err.contains("resident process"), "{err}");
}

/// A resident `recall mcp` lends its model only when the config uses it
/// (hybrid recall or the hook's gate): otherwise nothing borrows it, and
/// loading it would only cost the server the model's memory. A model that
/// does not load is enough here: the socket is made before the model is
/// loaded, and a server answers only after it has decided.
#[test]
fn a_model_nothing_uses_is_not_lent() {
    use std::io::{BufRead, Write};
    let env = Env::new();
    let run = env.home().join("run");
    let lends = |config: &str| {
        env.write_config(&format!(
            "[semantic]\nmodel = \"/nonexistent/model\"\n{config}"
        ));
        let mut server = env
            .std_cmd()
            .env_remove("RECALL_SEMANTIC_MODEL")
            .env_remove("RECALL_SEMANTIC_HOOK_GATE")
            .env_remove("RECALL_SEMANTIC_HYBRID")
            .arg("mcp")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = server.stdin.take().unwrap();
        writeln!(
            stdin,
            "{}",
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "t", "version": "1"}}})
        )
        .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(server.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(line.contains("serverInfo"), "{config}: {line}");
        let lent = std::fs::read_dir(&run).is_ok_and(|mut d| d.next().is_some());
        drop(stdin);
        server.wait().unwrap();
        lent
    };
    assert!(!lends(""), "a model nothing uses");
    assert!(!lends("hybrid = false\n"), "hybrid off");
    assert!(lends("hook_gate = 0.3\n"), "the hook's gate uses it");
    assert!(lends("hybrid = true\n"), "hybrid recall uses it");
}
