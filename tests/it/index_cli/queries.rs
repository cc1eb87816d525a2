//! Queries against a small store: bare `recall` is `query` (stdin and query
//! files too), hostile and huge queries, no hits, long ticket text, rare
//! words after junk, and a query that writes nothing to the index.

use crate::common::Env;

#[test]
fn bare_recall_equals_query_and_reads_stdin_or_file() {
    let env = Env::new();
    env.add("decisions", "k", "We deploy with terraform.");
    // Scores move with salience between runs; the hits must not.
    let ids = |out: String| -> Vec<String> {
        out.lines()
            .filter(|l| l.trim_start().starts_with('/'))
            .map(str::to_string)
            .collect()
    };
    let a = env.run(&["terraform", "deploy"]);
    let b = env.run(&["query", "terraform", "deploy"]);
    assert_eq!(ids(a.clone()), ids(b));
    assert!(a.contains("terraform"));
    let c = env
        .cmd()
        .args(["query", "--format", "json"])
        .write_stdin("how do we deploy?")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&c.stdout).contains("\"rank\": 1"));
    let qf = env.tmp.path().join("q.txt");
    std::fs::write(&qf, b"terraform \xff\xfe invalid utf8").unwrap();
    env.cmd()
        .args(["query", "--query-file"])
        .arg(&qf)
        .assert()
        .success();
}

#[test]
fn hostile_and_huge_queries_never_error() {
    let env = Env::new();
    env.add("decisions", "k", "plain fact about NEAR and OR");
    let huge = "lorem ipsum dolor ".repeat(6000);
    for q in [
        "\"unbalanced",
        "a AND OR NOT",
        "NEAR(x y, 2)",
        "col:val*",
        "^-( ) {}",
        "🦀🦀",
        huge.as_str(),
    ] {
        let code = env.cmd().args(["query", q]).output().unwrap().status.code();
        assert!(matches!(code, Some(0 | 1)), "{q:.40}: {code:?}");
    }
}

#[test]
fn no_hits_exits_1() {
    let env = Env::new();
    env.add("decisions", "k", "fact");
    env.cmd().args(["query", "zebra"]).assert().code(1);
}

#[test]
fn long_ticket_query_is_not_anded() {
    let env = Env::new();
    env.add(
        "incidents",
        "k",
        "The websocket reconnect loop leaked file descriptors.",
    );
    let ticket = "Users report that after a network blip the app stops receiving updates; \
        we suspect the websocket reconnect logic, maybe related to the proxy timeout settings \
        changed last sprint. Please investigate and add monitoring.";
    assert_eq!(env.hit_ids("alpha", ticket).len(), 1);
}

/// A query writes nothing to the index: salience goes to `hits.log`, which
/// the next write job folds in.
#[test]
fn a_query_leaves_the_index_untouched_and_salience_is_folded_later() {
    let env = Env::new();
    env.index_transcript(
        "s.jsonl",
        &[r#"{"role":"user","content":"the quokka cache evicts too early"}"#],
    );
    let dir = env.project_dir();
    let before = std::fs::read(dir.join("index.db")).unwrap();
    let wal = |d: &std::path::Path| {
        std::fs::metadata(d.join("index.db-wal"))
            .map(|m| m.len())
            .unwrap_or(0)
    };
    let wal_before = wal(&dir);
    // `--no-salience` notes nothing at all.
    let out = env.run(&["query", "--no-salience", "--format", "json", "quokka cache"]);
    assert!(out.contains("quokka"), "{out}");
    assert!(!dir.join("hits.log").exists());
    let v = env.query_json("alpha", "quokka cache");
    assert_eq!(v["hits"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(std::fs::read(dir.join("index.db")).unwrap(), before);
    assert_eq!(wal(&dir), wal_before, "no WAL frames written");
    let log = std::fs::read_to_string(dir.join("hits.log")).unwrap();
    assert_eq!(log.lines().count(), 1, "{log}");
    env.run(&["reindex"]);
    assert!(!dir.join("hits.log").exists());
    let c = rusqlite::Connection::open(dir.join("index.db")).unwrap();
    let hits: i64 = c
        .query_row("SELECT sum(hits) FROM chunks", [], |r| r.get(0))
        .unwrap();
    assert_eq!(hits, 1);
}

/// Regression: queries were cut to their first 64 terms in text order, so
/// 70 junk words followed by "deploy migration" found nothing.
#[test]
fn r_a_rare_word_after_many_junk_words_is_still_searched() {
    let env = Env::new();
    env.add(
        "procedures",
        "deploy",
        "Run the deploy migration before restarting the workers.",
    );
    let junk: Vec<String> = (0..70).map(|i| format!("junkword{i}")).collect();
    let q = format!("{} deploy migration", junk.join(" "));
    assert_eq!(env.hit_ids("alpha", &q).len(), 1);
}
