//! The token budget and the limit: a property test over random queries
//! through the library, and the CLI's `--max-tokens` and `--limit`.

use super::{corpus, field, hits, index, msg, query, query_json, session_line};
use crate::common::Env;

/// A second, larger session so budgets and limits bite.
fn add_long_session(env: &Env) {
    let words = [
        "checkout",
        "redis",
        "pool",
        "timeout",
        "release",
        "registry",
        "token",
        "docker",
        "migration",
        "sqlx",
        "commands",
        "load",
        "test",
        "hang",
        "image",
        "push",
    ];
    let mut body = session_line("sess-long", "a long mixed session");
    for i in 0..120 {
        let a = words[i % words.len()];
        let b = words[(i * 7 + 3) % words.len()];
        let c = words[(i * 5 + 1) % words.len()];
        let text = format!(
            "step {i}: looked at the {a} and the {b} again, then the {c}; notes n{i}x y{i}z w{i}q and more words to pad it out a little"
        );
        let ts = format!("2020-05-0{}T1{}:00:00Z", 1 + i % 9, i % 10);
        body += &msg(
            &format!("l{i}"),
            if i % 2 == 0 { "user" } else { "assistant" },
            &ts,
            &text,
        );
    }
    let p = env.tmp.path().join("long.jsonl");
    std::fs::write(&p, body).unwrap();
    index(env, &[&p]);
}

#[test]
fn prompt_budget_and_limit_hold_for_random_queries() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    use recall::recall::{recall as run_recall, Request, Target};
    use recall::render::{render_prompt, PromptOptions};
    use recall::store::{Db, OpenMode, Scope, ScopeDir};

    let env = corpus();
    add_long_session(&env);
    let dirs = [
        ScopeDir {
            scope: Scope::Project,
            root: env.project_dir(),
        },
        ScopeDir {
            scope: Scope::User,
            root: env.home().join("user"),
        },
    ];
    let dbs: Vec<Db> = dirs
        .iter()
        .map(|d| Db::open(&d.index_path(), OpenMode::ReadOnly).unwrap())
        .collect();
    let targets: Vec<Target> = dirs
        .iter()
        .zip(&dbs)
        .map(|(dir, db)| Target { dir, db })
        .collect();
    let vocab = prop::sample::select(vec![
        "checkout",
        "redis",
        "pool",
        "timeout",
        "timeouts",
        "release",
        "registry",
        "token",
        "docker",
        "migration",
        "sqlx",
        "commands",
        "load",
        "hang",
        "image",
        "push",
        "the",
        "parse_config_file",
        "HB-101",
        "\"redis pool\"",
        "zebra",
        "NOT",
        "*",
        "(",
    ]);
    let queries = prop_oneof![
        3 => prop::collection::vec(vocab, 1..10).prop_map(|w| w.join(" ")),
        1 => "\\PC{0,80}",
    ];
    let mut runner = TestRunner::new(Config {
        cases: 96,
        failure_persistence: None,
        ..Config::default()
    });
    let now = jiff::Timestamp::now();
    let nonempty = std::cell::Cell::new(0);
    let cut_by_budget = std::cell::Cell::new(0);
    let check = |(limit, budget, q): (usize, usize, String)| -> Result<(), TestCaseError> {
        let mut req = Request::new(q.clone(), limit, now);
        req.max_tokens = Some(budget);
        let resp = run_recall(&targets, &req)
            .map_err(|e| TestCaseError::fail(format!("recall({q:?}) failed: {e}")))?;
        prop_assert!(
            resp.hits.len() <= limit,
            "{} > limit {limit}",
            resp.hits.len()
        );
        let text_tokens: usize = resp
            .hits
            .iter()
            .map(|h| h.text.chars().count().div_ceil(4))
            .sum();
        prop_assert!(text_tokens <= budget, "hit texts {text_tokens} > {budget}");
        let out = render_prompt(&resp, PromptOptions { max_tokens: budget });
        let tokens = out.chars().count().div_ceil(4);
        prop_assert!(
            tokens <= budget,
            "prompt of {tokens} tokens > {budget}:\n{out}"
        );
        if !out.is_empty() {
            nonempty.set(nonempty.get() + 1);
            prop_assert!(out.starts_with("## Recalled context"));
        }
        // Without a budget the same query would have returned more.
        let mut free = req.clone();
        free.max_tokens = None;
        let all = run_recall(&targets, &free).unwrap();
        if all.hits.len() > resp.hits.len() {
            cut_by_budget.set(cut_by_budget.get() + 1);
        }
        Ok(())
    };
    // Regression (a CI failure): a merge of two adjacent hits passed the
    // budget by the separator's token.
    check((8, 557, "migration HB-101 release".into())).unwrap();
    runner
        .run(&(1usize..16, 0usize..1500, queries), check)
        .unwrap();
    let (nonempty, cut) = (nonempty.get(), cut_by_budget.get());
    assert!(
        nonempty >= 10 && cut >= 5,
        "{nonempty} non-empty, {cut} cut"
    );
}

#[test]
fn cli_prompt_never_exceeds_max_tokens_and_limit_is_kept() {
    let env = corpus();
    add_long_session(&env);
    let q = "checkout redis pool timeout release registry token docker sqlx";
    for budget in [0usize, 40, 60, 90, 120, 150, 400, 2000] {
        let b = budget.to_string();
        let (code, out, err) = query(&env, &["--format", "prompt", "--max-tokens", &b, q]);
        assert!(code == 0 || code == 1, "{err}");
        // Regression (review, stop 57): hits chosen within the budget
        // that the prompt's header and sources left none of printed
        // nothing with exit 0. Nothing shown is exit 1, saying why.
        assert_eq!(out.is_empty(), code == 1, "{budget}: {out}{err}");
        if out.is_empty() {
            assert!(err.contains("raise --max-tokens"), "{budget}: {err}");
        }
        let tokens = out.chars().count().div_ceil(4);
        assert!(tokens <= budget, "{tokens} > {budget}:\n{out}");
        if budget >= 400 {
            assert!(
                out.contains("### "),
                "budget {budget} fits something: {out}"
            );
        }
    }
    for limit in [1usize, 2, 5, 8] {
        let l = limit.to_string();
        let (_, v) = query_json(&env, &["--limit", &l, q]);
        assert_eq!(
            hits(&v).len(),
            limit,
            "enough hits exist for --limit {limit}"
        );
        let (_, out, _) = query(&env, &["--limit", &l, q]);
        let entries = out.lines().filter(|l| !l.starts_with(' ')).count();
        assert_eq!(entries, limit, "{out}");
    }
    // --max-tokens also caps the JSON hits' summed text.
    let (_, v) = query_json(&env, &["--max-tokens", "120", "--limit", "50", q]);
    let total: usize = hits(&v)
        .iter()
        .map(|h| field(h, "text").chars().count().div_ceil(4))
        .sum();
    assert!(total <= 120 && !hits(&v).is_empty(), "{total}");
}
