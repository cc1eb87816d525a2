//! Planted secrets through the binary's write paths (`remember --redact`,
//! `record add --redact --key ...`): no secret may reach a key, an id, a
//! file name, a file, an index, or anything the binary prints.
//!
//! Secrets are assembled at run time from a seeded generator, so this file
//! holds nothing that looks like a real credential to other scanners.

use std::path::Path;

use crate::common::Env;

/// Deterministic letters and digits in mixed case with no vowel (so no
/// placeholder word such as `test` or `token` appears by chance) and no
/// character twice in a row.
fn alnum(seed: u64, n: usize) -> String {
    const ALPHABET: &[u8] = b"bcdfghjkmnpqrstvwxzBCDFGHJKLMNPQRSTVWXZ23456789";
    pick(ALPHABET, seed, n)
}

/// Lowercase hex digits, letters and digits both present.
fn hex(seed: u64, n: usize) -> String {
    let mut s = pick(b"0123456789abcdef", seed, n);
    s.replace_range(0..2, "a7");
    s
}

/// `n` characters of `alphabet`, drawn by the seeded `synth::Rng`.
fn pick(alphabet: &[u8], seed: u64, n: usize) -> String {
    let mut r = synth::Rng::with_seed(seed);
    let mut out = String::with_capacity(n);
    let mut last = 0u8;
    while out.len() < n {
        let c = alphabet[r.usize(..alphabet.len())];
        if c != last {
            out.push(char::from(c));
            last = c;
        }
    }
    // Letters of both cases and a digit, whatever the draw gave.
    if alphabet.len() > 16 {
        out.replace_range(0..3, "Q7k");
    }
    out
}

/// One planted secret: its kind, the sentence that carries it (one line,
/// so it can be a key too), and the secret value itself.
struct Plant {
    kind: &'static str,
    text: String,
    secret: String,
}

fn plant(kind: &'static str, text: String, secret: String) -> Plant {
    Plant { kind, text, secret }
}

/// A sentence around `secret`.
fn said(kind: &'static str, secret: String) -> Plant {
    plant(kind, format!("The {kind} is {secret} for now"), secret)
}

/// A sentence around `line`, whose secret is `secret`.
fn line(kind: &'static str, line: String, secret: String) -> Plant {
    plant(kind, format!("Run {line} to deploy"), secret)
}

/// Every kind the detector knows, existing and new (issue #26), each once
/// or more.
fn planted() -> Vec<Plant> {
    let a = |i: u64, n: usize| alnum(i, n);
    let pw = |i: u64| format!("Zq{}", alnum(i, 12));
    vec![
        said("aws-access-key", format!("AKIA{}", a(1, 16).to_uppercase())),
        said("aws-access-key", format!("ASIA{}", a(2, 16).to_uppercase())),
        said("aws-example-key", format!("AKIA{}EXAMPLE", "IOSFODNN7")),
        {
            let s = format!("{}/{}", a(3, 20), a(4, 19));
            line("aws-secret-key", format!("aws_secret_access_key={s}"), s)
        },
        said("github-token", format!("ghp_{}", a(5, 36))),
        said("github-token", format!("gho_{}", a(6, 36))),
        said("github-token", format!("ghs_{}", a(7, 36))),
        said(
            "github-token",
            format!("github_pat_{}_{}", a(8, 22), a(9, 59)),
        ),
        said("openai-key", format!("sk-{}", a(10, 48))),
        said("openai-key", format!("sk-proj-{}", a(11, 60))),
        said("openai-key", format!("sk-svcacct-{}", a(12, 60))),
        said("anthropic-key", format!("sk-ant-api03-{}", a(13, 80))),
        said(
            "slack-token",
            format!("xoxb-2345678901-3456789012345-{}", a(14, 24)),
        ),
        said("slack-token", format!("xapp-1-A0123456789-{}", a(15, 30))),
        {
            let path = format!("T{}/B{}/{}", a(16, 8), a(17, 10), a(18, 24));
            line(
                "slack-webhook",
                format!("curl https://hooks.slack.com/services/{path}"),
                path,
            )
        },
        said("stripe-key", format!("sk_live_{}", a(19, 24))),
        said("stripe-key", format!("rk_live_{}", a(20, 24))),
        said("stripe-key", format!("sk_test_{}", a(21, 24))),
        said("stripe-key", format!("whsec_{}", a(22, 32))),
        said("google-api-key", format!("AIza{}", a(23, 35))),
        said(
            "jwt",
            format!("eyJhbGciOiJIUzI1NiJ9.eyJ{}.{}", a(24, 20), a(25, 43)),
        ),
        said("npm-token", format!("npm_{}", a(26, 36))),
        said("gitlab-token", format!("glpat-{}", a(27, 20))),
        said(
            "gitlab-token",
            format!(
                "glpat-{}",
                a(28, 20).replace(|c: char| c.is_ascii_digit(), "Q")
            ),
        ),
        said("huggingface-token", format!("hf_{}", a(29, 34))),
        {
            let k = format!("{}{}==", a(30, 40), a(31, 46));
            line(
                "azure-storage-key",
                format!("az with AccountName=acct;AccountKey={k};EndpointSuffix=core.windows.net"),
                k,
            )
        },
        {
            let t = a(32, 40);
            line(
                "auth-header",
                format!("curl -H 'Authorization: Bearer {t}' https://api.example.org"),
                t,
            )
        },
        {
            let p = pw(33);
            line(
                "basic-auth",
                format!("curl -u deploy:{p} https://api.example.org"),
                p,
            )
        },
        {
            let p = pw(34);
            line(
                "url-password",
                format!("psql postgres://app:{p}@db.internal/app"),
                p,
            )
        },
        {
            let p = pw(35);
            line(
                "redis-url-password",
                format!("redis-cli -u redis://:{p}@cache:6379"),
                p,
            )
        },
        {
            let p = format!("{}#{}", pw(36), a(37, 4));
            line(
                "password-assignment",
                format!("DB_PASSWORD={p} ./migrate"),
                p,
            )
        },
        {
            let p = format!("{}!", pw(38));
            line("pgpassword", format!("PGPASSWORD={p} psql -h db"), p)
        },
        {
            let p = format!("django-insecure-{}#!", a(39, 24));
            line("django-secret", format!("SECRET_KEY='{p}' ./manage.py"), p)
        },
        {
            let p = pw(40);
            line(
                "api-key-header",
                format!("curl -H 'X-Api-Key: {p}' https://api"),
                p,
            )
        },
        {
            let p = format!("{}&3", pw(41));
            line(
                "json-password",
                format!("echo {{\"password\": \"{p}\"}}"),
                p,
            )
        },
        {
            let p = format!("{}_-", pw(42));
            line("go-client-secret", format!("clientSecret := \"{p}\""), p)
        },
        {
            let p = pw(43);
            line(
                "query-access-token",
                format!("curl 'https://api.example.org/v1?access_token={p}'"),
                p,
            )
        },
        said("pypi-token", format!("pypi-AgEIcHlwaS5vcmc{}", a(44, 80))),
        said("twilio-key", format!("SK{}", hex(45, 32))),
        said("sendgrid-key", format!("SG.{}.{}", a(46, 22), a(47, 43))),
        said(
            "discord-token",
            format!("MTIzNDU2Nzg5MDEyMzQ1Njc4.{}.{}", a(48, 6), a(49, 38)),
        ),
        said("shopify-token", format!("shpat_{}", hex(50, 32))),
        said("shopify-token", format!("shpss_{}", hex(51, 32))),
        said("mailgun-key", format!("key-{}", hex(52, 32))),
        said("telegram-token", format!("123456789:AA{}", a(53, 33))),
        said("digitalocean-token", format!("dop_v1_{}", hex(54, 64))),
        said("digitalocean-token", format!("doo_v1_{}", hex(55, 64))),
        said("docker-hub-token", format!("dckr_pat_{}", a(56, 27))),
        {
            let p = pw(57);
            line("mysql-password", format!("mysql -u app -p{p} appdb"), p)
        },
        {
            let p = pw(58);
            line(
                "netrc-password",
                format!("printf 'machine api.example.org login deploy password {p}' > ~/.netrc"),
                p,
            )
        },
        {
            let p = pw(59);
            line(
                "sshpass-password",
                format!("sshpass -p '{p}' ssh deploy@host"),
                p,
            )
        },
        {
            let p = format!("{}==", a(60, 30));
            line(
                "docker-auth",
                format!("echo {{\"auths\": {{\"r.example.org\": {{\"auth\": \"{p}\"}}}}}}"),
                p,
            )
        },
    ]
}

/// Lowercase alphanumeric runs of 8+ characters of `secret`: what a slug,
/// a lowercased key or an FTS term of it would still hold. Runs of digits
/// alone are left out: a timestamp could hold one.
fn cores(secret: &str) -> Vec<String> {
    secret
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| w.len() >= 8 && !w.bytes().all(|b| b.is_ascii_digit()))
        .map(str::to_ascii_lowercase)
        .collect()
}

/// Which planted secrets `haystack` holds, whole or as a lowercased run.
fn leaks<'a>(plants: &'a [Plant], haystack: &str) -> Vec<&'a str> {
    let lower = haystack.to_ascii_lowercase();
    plants
        .iter()
        .filter(|p| {
            haystack.contains(&p.secret) || cores(&p.secret).iter().any(|c| lower.contains(c))
        })
        .map(|p| p.kind)
        .collect()
}

/// Every file under `dir` (names and bytes) that holds a planted secret.
fn files_holding(plants: &[Plant], dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for e in walkdir::WalkDir::new(dir).into_iter().flatten() {
        let name = e.path().display().to_string();
        for kind in leaks(plants, &name) {
            found.push(format!("{kind} in the name {name}"));
        }
        if e.file_type().is_file() {
            let text = String::from_utf8_lossy(&std::fs::read(e.path()).unwrap()).into_owned();
            for kind in leaks(plants, &text) {
                found.push(format!("{kind} in {name}"));
            }
        }
    }
    found
}

fn assert_no_leak(plants: &[Plant], what: &str, haystack: &str) {
    let found = leaks(plants, haystack);
    assert!(found.is_empty(), "{what} holds {found:?}:\n{haystack}");
}

/// Regression (issue #26: of 50 planted secret kinds, 35 leaked through
/// `remember --redact` into the key, file name, index and query output, and
/// `record add --redact --key` put the token in the id and file name).
/// Each kind goes through `remember --redact` (key from the text and given),
/// and `record add --redact --key`.
#[test]
fn r26_every_planted_secret_stays_out_of_keys_files_and_output() {
    let plants = planted();
    assert!(plants.len() >= 50, "{} kinds", plants.len());
    for p in &plants {
        assert!(
            !recall::secrets::scan(&p.text).is_empty(),
            "the detector does not know the {} in {:?}",
            p.kind,
            p.text
        );
        assert!(
            !cores(&p.secret).is_empty(),
            "{}: no core to look for",
            p.kind
        );
    }
    let env = Env::new();
    let mut printed = String::new();
    for (i, p) in plants.iter().enumerate() {
        let text = format!("Planted{i} {}", p.text);
        printed += &env.run(&["remember", "--redact", "--category", "incidents", &text]);
        let key = format!("r{i} {}", p.text);
        printed += &env.run(&[
            "remember",
            "--redact",
            "--category",
            "incidents",
            "--key",
            &key,
            &text,
        ]);
        let key = format!("k{i} {}", p.text);
        printed += &env.run(&[
            "record",
            "add",
            "--redact",
            "--category",
            "procedures",
            "--key",
            &key,
            &format!("Recorded{i} {}", p.text),
        ]);
    }
    assert_no_leak(&plants, "the output of remember and record add", &printed);
    assert_eq!(printed.lines().count(), 3 * plants.len(), "{printed}");

    let list = env.run(&["record", "list", "--format", "json"]);
    assert_no_leak(&plants, "record list --format json", &list);
    let rows: serde_json::Value = serde_json::from_str(&list).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 3 * plants.len(), "one record per write");
    for row in rows {
        let (key, path) = (row["key"].as_str().unwrap(), row["path"].as_str().unwrap());
        assert_no_leak(&plants, "a key", key);
        assert_no_leak(&plants, "a file name", path);
        assert_no_leak(
            &plants,
            "a record file",
            &std::fs::read_to_string(path).unwrap(),
        );
        assert!(
            row["text"].as_str().unwrap().contains("[REDACTED:"),
            "{row}"
        );
    }

    for (i, _) in plants.iter().enumerate() {
        for q in [format!("Planted{i}"), format!("Recorded{i}")] {
            let out = env.run(&["query", "--format", "json", &q]);
            assert!(out.contains("[REDACTED:"), "query {q}: {out}");
            assert_no_leak(&plants, "query output", &out);
        }
    }
    let prompt = env.run(&[
        "query",
        "--format",
        "prompt",
        "--limit",
        "100",
        "run deploy",
    ]);
    assert_no_leak(&plants, "query --format prompt", &prompt);

    let found = files_holding(&plants, &env.home());
    assert!(found.is_empty(), "files under the home: {found:#?}");
}

/// Stdout and stderr of `recall ARGS` (any exit code).
fn all_output(env: &Env, args: &[&str]) -> String {
    let out = env.cmd().args(args).output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

/// Regression (issue #26: a neutral transcript's session id or message id
/// holding a secret was stored and printed as is). Ids get stand-ins before
/// anything is stored; nothing the binary prints or keeps holds the secret.
#[test]
fn r26_transcript_ids_holding_a_secret_are_never_stored_or_printed() {
    let plants = [
        said("github-token", format!("ghp_{}", alnum(70, 36))),
        said("twilio-key", format!("SK{}", hex(71, 32))),
    ];
    let (session, message) = (&plants[0].secret, &plants[1].secret);
    let env = Env::new();
    let path = env.tmp.path().join("s.jsonl");
    let mut lines = vec![
        format!("{{\"session\": {{\"id\": \"deploy-{session}\", \"started_at\": \"2020-01-01T00:00:00Z\"}}}}"),
        format!("{{\"role\": \"user\", \"content\": \"We decided to deploy from the release branch only.\", \"id\": \"m-{message}\"}}"),
    ];
    for i in 0..6 {
        lines.push(format!("{{\"role\": \"assistant\", \"content\": \"Step {i}: the release branch deploy checks passed and the rollout continues as planned.\", \"id\": \"a{i}\"}}"));
    }
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let mut printed = all_output(&env, &["index", path.to_str().unwrap()]);
    printed += &all_output(
        &env,
        &["query", "--format", "json", "release branch deploy"],
    );
    printed += &all_output(
        &env,
        &["query", "--format", "prompt", "release branch deploy"],
    );
    printed += &all_output(
        &env,
        &["extract", "--extractor", "builtin", "--since", "2000-01-01"],
    );
    printed += &all_output(&env, &["extract", "--status"]);
    assert!(
        printed.contains("deploy-redacted-github-token-"),
        "{printed}"
    );
    assert_no_leak(&plants, "the output of index, query and extract", &printed);
    let found = files_holding(&plants, &env.home());
    assert!(found.is_empty(), "files under the home: {found:#?}");
}

/// The `source.path` of every hit of a JSON query for `q`.
fn hit_paths(env: &Env, q: &str) -> Vec<String> {
    let v: serde_json::Value =
        serde_json::from_str(&env.run(&["query", "--format", "json", q])).unwrap();
    v["hits"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|h| h["source"]["path"].as_str().map(str::to_owned))
        .collect()
}

/// `index --json ARGS`: its summary.
fn index_json(env: &Env, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["index", "--json"];
    all.extend_from_slice(args);
    env.run_json(&all)["summary"].clone()
}

/// Regression (issue #37 item 1: a transcript's file name kept its token
/// in `sources.path`, and so in `query --format json`'s `source.path`, the
/// prompt format and the REST API; the same for Claude Code files). The
/// path is stored and shown redacted, and the file is still found again:
/// the next run finds it unchanged, a grown file is appended to, `--prune`
/// keeps it while it exists, and extraction reads it.
#[test]
fn r37_a_transcript_file_name_holding_a_secret_is_never_stored_or_printed() {
    let plants = [
        said("github-token", format!("ghp_{}", alnum(80, 36))),
        said(
            "aws-access-key",
            format!("AKIA{}", alnum(81, 16).to_uppercase()),
        ),
    ];
    let env = Env::new();
    let dir = env.tmp.path().join("d1");
    std::fs::create_dir(&dir).unwrap();
    let neutral = dir.join(format!("{}.jsonl", plants[0].secret));
    let line = |text: &str| format!("{{\"role\":\"user\",\"content\":\"{text}\"}}\n");
    std::fs::write(&neutral, line("deploy filename test quokka")).unwrap();
    let claude = dir.join(format!("{}.jsonl", plants[1].secret));
    std::fs::write(
        &claude,
        concat!(
            r#"{"type":"user","uuid":"u1","sessionId":"s1","cwd":"/p","message":{"role":"user","content":"the wombat filename deploy"}}"#,
            "\n"
        ),
    )
    .unwrap();
    let n = neutral.to_str().unwrap();
    let c = claude.to_str().unwrap();
    let mut printed = all_output(&env, &["index", "--format", "neutral", n]);
    printed += &all_output(&env, &["index", "--format", "claude-code", c]);
    for q in ["quokka", "wombat"] {
        let paths = hit_paths(&env, q);
        assert_eq!(paths.len(), 1, "{q}: {paths:?}");
        assert!(paths[0].contains("/d1/[REDACTED:"), "{paths:?}");
        printed += &all_output(&env, &["query", "--format", "json", q]);
        printed += &all_output(&env, &["query", "--format", "prompt", q]);
    }
    let server = crate::common::server::Server::start(&env, &[]);
    for format in ["json", "prompt", "snippets"] {
        let (code, v) = server.call(
            "GET",
            &format!("/api/projects/alpha/recall?q=quokka&format={format}"),
            None,
        );
        assert_eq!(code, 200, "{v}");
        assert!(
            format != "json" || v.to_string().contains("d1/[REDACTED:github-token].jsonl#"),
            "{v}"
        );
        printed += &v.to_string();
    }
    drop(server);
    let stored: Vec<String> = env
        .open_index()
        .prepare("SELECT path FROM sources ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(stored.len(), 2, "{stored:?}");
    assert!(
        stored[0].contains("[REDACTED:github-token].jsonl#"),
        "{stored:?}"
    );
    assert!(
        stored[1].contains("[REDACTED:aws-access-key].jsonl#"),
        "{stored:?}"
    );

    // Found again: unchanged, then appended to, kept by --prune.
    assert_eq!(
        index_json(&env, &["--format", "neutral", n])["unchanged"],
        1
    );
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&neutral)
        .unwrap();
    std::io::Write::write_all(&mut f, line("the platypus rollout").as_bytes()).unwrap();
    drop(f);
    let grown = index_json(&env, &["--format", "neutral", n]);
    assert_eq!(
        (grown["appended"].clone(), grown["indexed"].clone()),
        (1.into(), 0.into()),
        "{grown}"
    );
    assert_eq!(hit_paths(&env, "platypus rollout").len(), 1);
    assert_eq!(index_json(&env, &["--prune"])["removed"], 0);
    printed += &all_output(
        &env,
        &["extract", "--extractor", "builtin", "--since", "2000-01-01"],
    );
    let status = all_output(&env, &["extract", "--status"]);
    assert!(!status.contains("cannot read"), "{status}");
    printed += &status;

    assert_no_leak(
        &plants,
        "the output of index, query, serve and extract",
        &printed,
    );
    let found = files_holding(&plants, &env.home());
    assert!(found.is_empty(), "files under the home: {found:#?}");

    // Gone: --prune removes it, and nothing else.
    std::fs::remove_file(&neutral).unwrap();
    assert_eq!(index_json(&env, &["--prune"])["removed"], 1);
    assert_eq!(hit_paths(&env, "wombat").len(), 1);
}

/// Regression (issue #37 item 1, for indexes written before it): a row
/// whose path holds the secret is renamed on the next run, not indexed a
/// second time beside the old one.
#[test]
fn r37_a_path_stored_with_its_secret_is_redacted_in_place() {
    let token = format!("ghp_{}", alnum(82, 36));
    let env = Env::new();
    let file = env.tmp.path().join(format!("{token}.jsonl"));
    std::fs::write(
        &file,
        "{\"role\":\"user\",\"content\":\"the echidna deploy\"}\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    env.run(&["index", f]);
    let real = std::fs::canonicalize(&file).unwrap();
    let db = env.open_index();
    db.execute("UPDATE sources SET path=?1", [real.to_str().unwrap()])
        .unwrap();
    // As an index written before issue #37 is: its paths never swept.
    db.execute("DELETE FROM meta WHERE key LIKE 'sources.paths%'", [])
        .unwrap();
    drop(db);
    assert_eq!(index_json(&env, &[f])["unchanged"], 1);
    let paths: Vec<String> = env
        .open_index()
        .prepare("SELECT path FROM sources")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(paths.len(), 1, "{paths:?}");
    assert!(
        !paths[0].contains(&token) && paths[0].contains("[REDACTED:"),
        "{paths:?}"
    );
}

/// Regression (issue #37 item 1: a record file written by hand whose name
/// holds a secret kept it in `records.path`, printed by `record list` and
/// `query`). The row's path is redacted, the record is still read and
/// found, `doctor` names the file (redacted), and an older row holding
/// the name is renamed by the next sync.
#[test]
fn r37_a_record_file_name_holding_a_secret_is_never_stored_or_printed() {
    let plants = [said("github-token", format!("ghp_{}", alnum(83, 36)))];
    let env = Env::new();
    env.add("decisions", "seed", "A record so the project exists.");
    let dir = env.project_dir().join("records").join("decisions");
    let file = dir.join(format!("{}.md", plants[0].secret));
    let text = crate::common::record_text(
        "d-handwritten",
        "numbat-release",
        "decisions",
        "We release the numbat build on Fridays.",
    );
    std::fs::write(&file, text).unwrap();
    // As recall writes records (a file others may read is a finding of
    // its own, which names the file as it is).
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let mut printed = all_output(&env, &["reindex"]);
    let paths = hit_paths(&env, "numbat release Fridays");
    assert_eq!(paths.len(), 1, "{paths:?}");
    assert!(
        paths[0].contains("decisions/[REDACTED:github-token].md#"),
        "{paths:?}"
    );
    printed += &all_output(&env, &["query", "--format", "json", "numbat release"]);
    printed += &all_output(&env, &["query", "--format", "prompt", "numbat release"]);
    printed += &all_output(&env, &["record", "list", "--format", "json"]);
    let (_, doctor) = env.doctor();
    assert!(doctor.contains("github-token in the file name"), "{doctor}");
    printed += &doctor;
    // Read by id or key: the file is found from the redacted row.
    let got = all_output(&env, &["record", "get", "numbat-release"]);
    assert!(got.contains("numbat build on Fridays"), "{got}");
    assert_no_leak(
        &plants,
        "the output of reindex, query, list and doctor",
        &printed,
    );
    let found = files_holding(&plants, &env.project_dir().join("index.db"));
    assert!(found.is_empty(), "the index: {found:#?}");

    let rel = format!("records/decisions/{}.md", plants[0].secret);
    let db = env.open_index();
    db.execute(
        "UPDATE records SET path=?1 WHERE key='numbat-release'",
        [&rel],
    )
    .unwrap();
    drop(db);
    env.run(&["reindex"]);
    let rows: Vec<String> = env
        .open_index()
        .prepare("SELECT path FROM records WHERE key='numbat-release'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert!(rows[0].contains("[REDACTED:github-token]"), "{rows:?}");
}

/// Regression (issue #37 item 2: values the scanner skipped were stored by
/// `record add` although the docs promise to refuse their kind, and nine
/// kinds were not known). Each is refused, and `--redact` stores none.
#[test]
fn r37_values_the_scanner_skipped_are_refused() {
    let h = |i: u64, n: usize| hex(i, n);
    let letters = |i: u64, n: usize| {
        let mut s = pick(b"bcdfghjkmnpqrstvwxzBCDFGHJKLMNPQRSTVWXZ", i, n);
        s.replace_range(0..2, "Qk");
        s
    };
    // `pick` puts `Q7k` first: upper case, it is of the bech32 alphabet.
    let bech = pick(b"QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 96, 58).to_uppercase();
    let plants = vec![
        said("huggingface-token", format!("hf_{}", letters(84, 34))),
        said("google-api-key", format!("AIza{}-2-", alnum(85, 32))),
        said("gitlab-token", format!("glpat-{}", "abcdefghijklmnopqrst")),
        line(
            "password-assignment",
            format!("DB_PASSWORD=Passw0rd!{}", 2024),
            format!("Passw0rd!{}", 2024),
        ),
        {
            let v = format!("Kq7v{}Z2mW9", "Token");
            line("password-assignment", format!("DB_PASSWORD={v}"), v)
        },
        {
            let v = format!("Zq81{}R7tY3u", "sample");
            line("password-assignment", format!("api_key={v}"), v)
        },
        {
            let t = format!("9f{}k{}", "Test", alnum(86, 26));
            line(
                "auth-header",
                format!("curl -H 'Authorization: Bearer {t}' https://api"),
                t,
            )
        },
        {
            let t = format!("{}AxXxG{}", alnum(87, 14).to_uppercase(), alnum(88, 21));
            line(
                "auth-header",
                format!("curl -H 'Authorization: Bearer {t}' https://api"),
                t,
            )
        },
        {
            let t = format!("hvs.{}", alnum(89, 24));
            line("vault-token", format!("VAULT_TOKEN={t} vault kv get x"), t)
        },
        said("google-oauth-secret", format!("GOCSPX-{}", alnum(90, 28))),
        {
            let p = format!("Zq{}", alnum(91, 12));
            line(
                "cli-password",
                format!("docker login -u deploy -p {p} r.example.org"),
                p,
            )
        },
        {
            let k = h(92, 32);
            line(
                "sentry-dsn",
                format!("SENTRY_DSN=https://{k}@o1.ingest.sentry.io/2"),
                k,
            )
        },
        said("age-secret-key", format!("AGE-SECRET-KEY-1{bech}")),
        said("databricks-token", format!("dapi{}", h(93, 32))),
        said(
            "grafana-token",
            format!("glsa_{}_{}", alnum(94, 32), h(95, 8)),
        ),
        said("linear-key", format!("lin_api_{}", alnum(97, 40))),
        said("postman-key", format!("PMAK-{}-{}", h(98, 24), h(99, 34))),
    ];
    let env = Env::new();
    let mut printed = String::new();
    for (i, p) in plants.iter().enumerate() {
        let key = format!("k{i}");
        let out = env
            .cmd()
            .args([
                "record",
                "add",
                "--category",
                "incidents",
                "--key",
                &key,
                &p.text,
            ])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{}: {} was stored: {err}",
            p.kind,
            p.text
        );
        assert!(err.contains("secret"), "{}: {err}", p.kind);
        printed += &err;
        printed += &env.run(&[
            "record",
            "add",
            "--redact",
            "--category",
            "incidents",
            "--key",
            &key,
            &p.text,
        ]);
    }
    printed += &env.run(&["record", "list", "--format", "json"]);
    assert_no_leak(&plants, "the output of record add and list", &printed);
    let found = files_holding(&plants, &env.home());
    assert!(found.is_empty(), "files under the home: {found:#?}");
}

/// Regression (review, stop 59): passages were cut from a message before
/// its secrets were redacted, so a passage's spans (byte offsets into its
/// text) no longer matched it once a secret of another length stood in
/// for the key. The hits of one message then failed to merge: a query
/// showed the messages twice, the repeats without `message_ids`.
#[test]
fn r_a_redacted_secret_leaves_one_hit_per_message() {
    let env = Env::new();
    let key = format!("AKIA{}", alnum(11, 16).to_uppercase());
    let line = |text: &str| {
        serde_json::json!({"type": "user", "uuid": format!("u-{}", text.len()), "sessionId": "s-6",
            "timestamp": "2026-01-01T00:00:00Z", "cwd": "/p",
            "message": {"role": "user", "content": text}})
        .to_string()
    };
    let path = env.tmp.path().join("a.jsonl");
    std::fs::write(
        &path,
        [
            line(&format!("{key} spanprobe éééé")),
            line("second spanprobe message"),
            line(&format!("{key} spanprobe 日本語 again")),
        ]
        .join("\n")
            + "\n",
    )
    .unwrap();
    env.index(&path);
    let v = env.query_json("alpha", "spanprobe");
    let hits = v["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 1, "{v}");
    assert_eq!(
        hits[0]["source"]["message_ids"].as_array().unwrap().len(),
        3,
        "{v}"
    );
    assert!(!v.to_string().contains(&key), "{v}");
}
