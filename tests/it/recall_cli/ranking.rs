//! Ranking decided both ways: each lift (length normalisation, the answer
//! types, the first person, the period a question names or gives relative
//! to now) puts the right hit first, and with the lift off the other one
//! wins; calibration across lists, `--at` and `--explain`.

use super::{hits, query_json};
use crate::common::Env;
use serde_json::{json, Value};

/// Lists are calibrated against each other: records that share only a
/// common word with the question do not outrank the message that answers
/// it just because each list's best hit used to score 1.
#[test]
fn records_matching_one_common_word_do_not_outrank_the_answer() {
    let env = Env::new();
    for (i, text) in [
        "Deploys run in the morning window, before standup.",
        "The morning build is the one that ships to staging.",
        "Review queues are cleared every morning by the on-call.",
        "Morning standup starts at nine; keep updates short.",
        "Backups are verified each morning against the manifest.",
    ]
    .iter()
    .enumerate()
    {
        env.add("procedures", &format!("morning-{i}"), text);
    }
    env.index_transcript(
        "commute.jsonl",
        &[
            r#"{"role":"user","content":"My daily commute takes 45 minutes each way, so I leave at 7 in the morning."}"#,
            r#"{"role":"assistant","content":"Noted. I will plan meetings around that."}"#,
        ],
    );
    let q = "How long is my daily commute in the morning?";
    let first = |v: &serde_json::Value| v["hits"][0].clone();
    let v = env.query_json("alpha", q);
    let top = first(&v);
    assert_eq!(top["kind"], "session", "{v:#}");
    assert!(
        top["text"].as_str().unwrap().contains("45 minutes"),
        "{v:#}"
    );
    // Records still come back, below the answer.
    let kinds: Vec<&str> = v["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"record"), "{kinds:?}");
    // Without calibration each list's best hit scores 1, and the record
    // list's kind weight puts a morning record first.
    std::fs::write(
        env.home().join("config.toml"),
        "[recall.tuning]\ncoverage_power = 0.0\n",
    )
    .unwrap();
    let v = env.query_json("alpha", q);
    assert_eq!(first(&v)["kind"], "record", "{v:#}");
}

/// Issue 39 item 2: a record that holds another form of the question's
/// word ("Deploys" for "deploy") keeps its place once a session holds the
/// exact form. It was multiplied to 0 by calibration: the word had no stem
/// term, so the judge matched only the exact form.
#[test]
fn a_record_matching_on_another_form_keeps_its_place_beside_a_session_with_the_exact_word() {
    let env = Env::new();
    env.add(
        "decisions",
        "deploy",
        "Deploys go through make ship-it from the release branch.",
    );
    let q = "how do we deploy?";
    let before = env.query_json("alpha", q);
    assert_eq!(before["hits"][0]["kind"], "record", "{before:#}");
    env.index_transcript(
        "asked.jsonl",
        &[
            r#"{"role":"user","content":"how do we deploy?"}"#,
            r#"{"role":"assistant","content":"I am not sure, let me look."}"#,
        ],
    );
    let v = env.query_json("alpha", q);
    let top = &v["hits"][0];
    assert_eq!(top["kind"], "record", "{v:#}");
    assert!(top["score"].as_f64().unwrap() > 0.5, "{v:#}");
}

/// One small session per topic ("Did you see {topic}?"), so that a test
/// question's words are rare in the index.
fn index_unrelated_sessions(env: &Env, topics: &[&str]) {
    for (i, topic) in topics.iter().enumerate() {
        let q = json!({"role": "user", "content": format!("Did you see {topic}?")});
        let a = json!({"role": "assistant", "content": format!("Yes, {topic} was nice.")});
        env.index_transcript(
            &format!("other-{i}.jsonl"),
            &[&q.to_string(), &a.to_string()],
        );
    }
}

/// The source path of the first hit ("" when there is none).
fn first_hit_path(v: &Value) -> String {
    v["hits"][0]["source"]["path"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// A ranking lift, both ways: the first hit for `q` is from the file
/// `with` under the default tuning, and from `without` once `off` (a
/// `[recall.tuning]` line) turns the lift off.
fn assert_lift_decides(env: &Env, q: &str, off: &str, with: &str, without: &str) {
    let v = env.query_json("alpha", q);
    assert!(first_hit_path(&v).ends_with(with), "{v:#}");
    std::fs::write(
        env.home().join("config.toml"),
        format!("[recall.tuning]\n{off}\n"),
    )
    .unwrap();
    let v = env.query_json("alpha", q);
    assert!(first_hit_path(&v).ends_with(without), "{v:#}");
}

/// The long-turn failure of issue #8: a long assistant reply that repeats
/// the question's words outranked the user's short statement that holds
/// the fact. Passage scores are normalised by length (`length_norm`), so
/// the statement comes first; with the normalisation off, the reply does.
#[test]
fn a_short_statement_outranks_a_long_reply_that_repeats_the_question() {
    let env = Env::new();
    index_unrelated_sessions(
        &env,
        &[
            "the release notes",
            "a flaky test",
            "the cache size",
            "lunch",
            "the logo",
        ],
    );
    env.index_transcript(
        "fact.jsonl",
        &[r#"{"role":"user","content":"Just so you know, my daily commute takes 45 minutes each way by train."}"#],
    );
    let filler = "There are many ways to think about this, and the right answer depends on your situation and the time you have. ";
    let reply = format!(
        "A daily commute is common. {filler}How long a daily commute feels depends on the train, the bus or the car. \
         {filler}{filler}Some people use their daily commute to read; others find it tiring. {filler}"
    );
    let line = serde_json::json!({"role": "assistant", "content": reply}).to_string();
    env.index_transcript(
        "advice.jsonl",
        &[
            r#"{"role":"user","content":"Any tips for travelling?"}"#,
            &line,
        ],
    );
    // The question is in the first person: the user's lift is off, so
    // that length alone decides.
    let q = "How long is my daily commute?";
    std::fs::write(
        env.home().join("config.toml"),
        "[recall.tuning]\nsubject_boost = 0.0\n",
    )
    .unwrap();
    let v = env.query_json("alpha", q);
    assert!(first_hit_path(&v).ends_with("fact.jsonl"), "{v:#}");
    std::fs::write(
        env.home().join("config.toml"),
        "[recall.tuning]\nlength_norm = 0.0\nsubject_boost = 0.0\n",
    )
    .unwrap();
    let v = env.query_json("alpha", q);
    assert!(first_hit_path(&v).ends_with("advice.jsonl"), "{v:#}");
}

/// Tickets are documents, not turns of a chat: their passage scores are
/// not divided by length unless `ticket_length_norm` says so (SciFact's
/// 809 train queries: 0.703 without, 0.695 with 0.75). The ticket that
/// says more about the question stays first; with the slope at 1, the
/// short one that only names it wins.
#[test]
fn a_long_ticket_that_covers_the_question_keeps_its_rank() {
    let env = Env::new();
    let dir = env.tmp.path().join("tickets");
    std::fs::create_dir_all(&dir).unwrap();
    let ticket = |id: &str, title: &str, body: &str| {
        let text = format!("---\nid: {id}\ntitle: {title}\n---\n\n{body}\n");
        std::fs::write(dir.join(format!("{id}.md")), text).unwrap();
    };
    for (i, topic) in [
        "the logo colours",
        "lunch orders",
        "the office plants",
        "holiday dates",
    ]
    .iter()
    .enumerate()
    {
        ticket(
            &format!("OT-{i}"),
            &format!("Decide {topic}"),
            &format!("We still need to decide {topic}."),
        );
    }
    let filler = "The team reviewed the design notes, the release plan and the open questions from last week. ";
    ticket(
        "LG-1",
        "Replication lag",
        &format!(
            "Replication lag grows during the nightly vacuum. {filler}The replica falls behind by minutes, \
             and failover then promotes a stale replica. {filler}Measure replication lag per replica \
             and pause the vacuum when lag passes a limit. {filler}"
        ),
    );
    ticket(
        "SH-1",
        "Stale replica",
        "Failover promoted a stale replica again.",
    );
    env.run(&["index", "--kind", "ticket", dir.to_str().unwrap()]);
    let q = "Why does replication lag grow and make failover promote a stale replica?";
    let first = |v: &serde_json::Value| v["hits"][0]["id"].as_str().unwrap_or_default().to_string();
    let v = env.query_json("alpha", q);
    assert_eq!(first(&v), "LG-1", "{v:#}");
    std::fs::write(
        env.home().join("config.toml"),
        "[recall.tuning]\nticket_length_norm = 1.0\n",
    )
    .unwrap();
    let v = env.query_json("alpha", q);
    assert_eq!(first(&v), "SH-1", "{v:#}");
}

/// The passages of an agent's work session (one with a tool's output) are
/// normalised by length apart from a chat's, with `work_length_norm`: the
/// chat's passages get the same pivots with or without the work session
/// in the project, and a work slope of 0 leaves the pivot of every work
/// passage at one, the agent's reasoning included (it is not itself tool
/// output). So the session's kind comes from the index (`sessions.work`),
/// not from the passage.
#[test]
fn an_agents_work_session_is_normalised_apart_from_chats() {
    let chat = |env: &Env| {
        env.index_transcript(
            "chat.jsonl",
            &[
                r#"{"role":"user","content":"The nightly export job times out on large tables."}"#,
                r#"{"role":"assistant","content":"A nightly export of large tables can time out when the job reads every table in one transaction; split the export job by table and give each part its own timeout."}"#,
            ],
        );
    };
    let q = "nightly export job timeout on large tables";
    let pivots = |env: &Env| -> Vec<(String, f64)> {
        let out = env
            .cmd()
            .args(["query", "--format", "json", "--explain", q])
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let mut p: Vec<(String, f64)> = v["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| {
                let path = h["source"]["path"].as_str().unwrap_or_default();
                let name = path.rsplit('/').next().unwrap_or_default();
                let pivot = h["explain"]["length_pivot"].as_f64().unwrap();
                (format!("{name} {}", h["id"].as_str().unwrap()), pivot)
            })
            .collect();
        p.sort_by(|a, b| a.0.cmp(&b.0));
        p
    };
    let alone = Env::new();
    chat(&alone);
    let both = Env::new();
    chat(&both);
    both.index_transcript(
        "work.jsonl",
        &[
            r#"{"role":"assistant","content":"THOUGHT: find where the nightly export job sets its timeout for large tables, then read the export loop."}"#,
            r#"{"role":"tool","content":"jobs/export.py:12: TIMEOUT = 30  # nightly export job"}"#,
            r#"{"role":"assistant","content":"THOUGHT: the export job reads all large tables in one transaction, so the nightly timeout of 30 seconds is too short for them; I will export table by table."}"#,
        ],
    );
    let chat_only = |p: Vec<(String, f64)>| -> Vec<(String, f64)> {
        p.into_iter()
            .filter(|(k, _)| k.starts_with("chat"))
            .collect()
    };
    let a = pivots(&alone);
    assert!(!a.is_empty() && a.iter().all(|(_, p)| *p != 1.0), "{a:?}");
    assert_eq!(chat_only(pivots(&both)), a, "the chat's pivots move");
    std::fs::write(
        both.home().join("config.toml"),
        "[recall.tuning]\nwork_length_norm = 0.0\n",
    )
    .unwrap();
    let b = pivots(&both);
    let work: Vec<&(String, f64)> = b.iter().filter(|(k, _)| k.starts_with("work")).collect();
    assert!(
        !work.is_empty() && work.iter().all(|(_, p)| *p == 1.0),
        "{b:?}"
    );
    // Passages 0 and 2 are the agent's reasoning, 1 the tool's output.
    assert!(
        work.iter()
            .any(|(k, _)| k.ends_with("#0") || k.ends_with("#2")),
        "{b:?}"
    );
    assert_eq!(chat_only(b), a);
}

/// A question that asks when is answered by a text that says when: among
/// messages that match it alike, the one that mentions a time ("last
/// week") comes first (`temporal_boost`); with the lift off, the message
/// that repeats more of the question's words does.
#[test]
fn a_when_question_prefers_the_message_that_says_when() {
    let env = Env::new();
    index_unrelated_sessions(
        &env,
        &[
            "the garden",
            "a new recipe",
            "the weather",
            "a film",
            "the dog",
        ],
    );
    env.index_transcript(
        "plans.jsonl",
        &[r#"{"role":"user","content":"I host the chess tournament for the club."}"#],
    );
    env.index_transcript(
        "done.jsonl",
        &[r#"{"role":"user","content":"I host the chess tournament for the club next Friday."}"#],
    );
    let q = "When do I host the chess tournament for the club?";
    assert_lift_decides(&env, q, "temporal_boost = 0.0", "done.jsonl", "plans.jsonl");
}

/// A question in the first person is about the user: the user's own
/// statement outranks the assistant's reply that says the same in fewer
/// words (`subject_boost`); with the lift off, the shorter reply wins.
#[test]
fn a_first_person_question_prefers_what_the_user_said() {
    let env = Env::new();
    index_unrelated_sessions(
        &env,
        &[
            "the upload page",
            "the login page",
            "the page layout",
            "the routes table",
            "the Flask docs",
        ],
    );
    env.index_transcript(
        "user.jsonl",
        &[
            r#"{"role":"user","content":"The Flask routes for the upload page are done now, I think."}"#,
            r#"{"role":"assistant","content":"Good."}"#,
        ],
    );
    env.index_transcript(
        "assistant.jsonl",
        &[
            r#"{"role":"user","content":"Status?"}"#,
            r#"{"role":"assistant","content":"The Flask routes for the upload page are done."}"#,
        ],
    );
    let q = "Are my Flask routes for the upload page done?";
    assert_lift_decides(
        &env,
        q,
        "subject_boost = 0.0",
        "user.jsonl",
        "assistant.jsonl",
    );
}

/// Two sessions that decided the same thing, in March and in June; the
/// messages carry no time of their own, only their sessions' start.
fn index_dated_decisions(env: &Env) {
    // Undated messages that share a word: the lift is rarer, so larger,
    // when few candidates are from the period.
    index_unrelated_sessions(
        env,
        &[
            "the cache size",
            "a cache miss",
            "the cache logo",
            "lunch",
            "a film",
        ],
    );
    env.index_transcript(
        "march.jsonl",
        &[
            r#"{"session":{"id":"march","started_at":"2024-03-12"}}"#,
            r#"{"role":"user","content":"We decided to move the cache to Redis after the outage review."}"#,
        ],
    );
    env.index_transcript(
        "june.jsonl",
        &[
            r#"{"session":{"id":"june","started_at":"2024-06-20"}}"#,
            r#"{"role":"user","content":"We decided to move the cache to Redis."}"#,
        ],
    );
}

/// A question that names a period lifts the hits from that period
/// (`period_boost`); with the lift off, the shorter June message wins.
#[test]
fn a_question_that_names_a_month_prefers_hits_from_that_month() {
    let env = Env::new();
    index_dated_decisions(&env);
    let q = "What did we decide about the cache in March 2024?";
    assert_lift_decides(&env, q, "period_boost = 0.0", "march.jsonl", "june.jsonl");
}

/// Regression: a message without its own time had no time at all, so
/// `--since` dropped it and its hit showed none, though its session had
/// one. It now takes its session's start.
#[test]
fn r_a_message_without_a_time_takes_its_sessions_start() {
    let env = Env::new();
    index_dated_decisions(&env);
    let (_, v) = query_json(&env, &["cache Redis"]);
    let march = hits(&v)
        .iter()
        .find(|h| h["source"]["session_id"] == "march")
        .unwrap_or_else(|| panic!("no March hit: {v:#}"));
    assert_eq!(
        march["source"]["first_timestamp"], "2024-03-12T00:00:00Z",
        "{v:#}"
    );
    let (_, v) = query_json(&env, &["--since", "2024-05-01", "cache Redis"]);
    let sessions: Vec<&str> = hits(&v)
        .iter()
        .filter_map(|h| h["source"]["session_id"].as_str())
        .collect();
    assert_eq!(sessions, ["june"], "{v:#}");
}

/// Two sessions that decided the same thing, one started yesterday and
/// one six weeks ago, with `recent_text` and `old_text`; returns how the
/// old one's month is said relative to now ("last month", "2 months
/// ago").
fn index_recent_and_old_decisions(env: &Env, recent_text: &str, old_text: &str) -> String {
    let now = jiff::Timestamp::now();
    let utc = |t: jiff::Timestamp| t.to_zoned(jiff::tz::TimeZone::UTC).date();
    let recent = now - jiff::SignedDuration::from_hours(24);
    let old = now - jiff::SignedDuration::from_hours(24 * 42);
    index_unrelated_sessions(
        env,
        &[
            "the cache size",
            "a cache miss",
            "the cache logo",
            "lunch",
            "a film",
        ],
    );
    for (name, time, text) in [("recent", recent, recent_text), ("old", old, old_text)] {
        let session = json!({"session": {"id": name, "started_at": time.to_string()}});
        let message = json!({"role": "user", "content": text});
        env.index_transcript(
            &format!("{name}.jsonl"),
            &[&session.to_string(), &message.to_string()],
        );
    }
    let month = |d: jiff::civil::Date| i32::from(d.year()) * 12 + i32::from(d.month());
    match month(utc(now)) - month(utc(old)) {
        1 => "last month".into(),
        n => format!("{n} months ago"),
    }
}

const LONG: &str = "We decided to move the cache to Redis after the outage review.";
const SHORT: &str = "We decided to move the cache to Redis.";

/// Issue 24 item 5: a question that gives a time relative to now lifts
/// the hits from that span ("yesterday", "last month"), in both
/// directions; with the lift off, the shorter message wins each time.
#[test]
fn a_question_that_says_yesterday_or_last_month_prefers_hits_from_then() {
    let env = Env::new();
    index_recent_and_old_decisions(&env, LONG, SHORT);
    let q = "What did we decide about the cache yesterday?";
    assert_lift_decides(&env, q, "period_boost = 0.0", "recent.jsonl", "old.jsonl");

    let env = Env::new();
    let when = index_recent_and_old_decisions(&env, SHORT, LONG);
    let q = format!("What did we decide about the cache {when}?");
    assert_lift_decides(&env, &q, "period_boost = 0.0", "old.jsonl", "recent.jsonl");
}

/// `--at WHEN` answers as of that time: "yesterday" is the day before it
/// (so an evaluation, or a look back, reads relative times against its
/// own date); without it, the same question reads them against now.
#[test]
fn at_answers_as_of_a_time() {
    let env = Env::new();
    index_dated_decisions(&env);
    let q = "What did we decide about the cache yesterday?";
    let out = env
        .cmd()
        .args([
            "query",
            "--format",
            "json",
            "--at",
            "2024-03-13T09:00:00Z",
            q,
        ])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(first_hit_path(&v).ends_with("march.jsonl"), "{v:#}");
    let v = env.query_json("alpha", q);
    assert!(first_hit_path(&v).ends_with("june.jsonl"), "{v:#}");
    env.cmd()
        .args(["query", "--at", "the day after", q])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("the day after"));
}

/// `query --explain` takes each hit's score apart (issue 23 item 2): the
/// parts multiply back to the score, a pinned, important record shows its
/// boosts, a question that names a month shows the period lift, and
/// without the flag nothing of it is printed.
#[test]
fn explain_takes_each_score_apart() {
    let env = Env::new();
    index_dated_decisions(&env);
    env.run(&[
        "record",
        "add",
        "--category",
        "decisions",
        "--key",
        "cache store",
        "--pinned",
        "--importance",
        "90",
        "The cache lives in Redis.",
    ]);
    let q = "What did we decide about the cache in March 2024?";
    let out = env
        .cmd()
        .args(["query", "--format", "json", "--explain", q])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let hits = v["hits"].as_array().unwrap();
    assert!(!hits.is_empty());
    for h in hits {
        let e = &h["explain"];
        let f = |k: &str| e[k].as_f64().unwrap_or_else(|| panic!("no {k}: {e}"));
        let lifts: f64 = e["lifts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["factor"].as_f64().unwrap())
            .product();
        let product = f("base")
            * f("coverage")
            * f("kind")
            * f("pinned")
            * f("importance")
            * f("recency")
            * f("salience")
            * lifts
            + f("session_evidence");
        let score = h["score"].as_f64().unwrap();
        assert!(
            (product - score).abs() < 1e-9,
            "{product} != {score}: {h:#}"
        );
    }
    let record = hits.iter().find(|h| h["kind"] == "record").unwrap();
    assert_eq!(record["explain"]["pinned"], 1.25);
    assert!(record["explain"]["importance"].as_f64().unwrap() > 1.1);
    let march = hits
        .iter()
        .find(|h| {
            h["source"]["path"]
                .as_str()
                .is_some_and(|p| p.ends_with("march.jsonl"))
        })
        .unwrap();
    assert_eq!(march["explain"]["lifts"][0]["name"], "period", "{march:#}");

    let text = env.run(&["query", "--explain", q]);
    assert!(text.contains("why: base "), "{text}");
    assert!(text.contains("period lift x"), "{text}");
    let plain = env.query_json("alpha", q);
    assert!(plain["hits"][0].get("explain").is_none(), "{plain:#}");
    assert!(!env.run(&["query", q]).contains("why:"));
}

/// An issue's title finds the agent session that worked on it: that
/// session names every word of the title somewhere, while another holds
/// only its rarest word, in one short tool output that scores higher on
/// its own (`session_coverage_power`; with it off, the short output wins).
#[test]
fn an_issue_title_finds_the_agent_session_that_holds_all_of_it() {
    let env = Env::new();
    // The title's other words are common here; parse_duration is rare.
    index_unrelated_sessions(
        &env,
        &[
            "the negative numbers",
            "the durations chart",
            "the fix for the build",
        ],
    );
    env.index_transcript(
        "other.jsonl",
        &[
            r#"{"role":"assistant","content":"Let me look for the helpers."}"#,
            r#"{"role":"tool","content":"def parse_duration(value, fmt=None):"}"#,
            r#"{"role":"assistant","content":"That is the helper; the bug is elsewhere, in the template filters."}"#,
        ],
    );
    env.index_transcript(
        "work.jsonl",
        &[
            r#"{"role":"assistant","content":"I will reproduce the bug with a negative value first, then read the regex in utils/dateparse.py that parse_duration uses to split days, hours, minutes and seconds of the input string."}"#,
            r#"{"role":"tool","content":"python -c 'print(parse_duration(\"-1:15:30\"))' returned None, so negative durations with hours are not parsed by the pattern at all, while positive ones with the same hours, minutes and seconds come back as timedelta values."}"#,
            r#"{"role":"assistant","content":"The lookahead in the hours group must allow the minus sign; I changed it and the fix now parses negative durations."}"#,
        ],
    );
    let q = "Fix parse_duration() for some negative durations";
    assert_lift_decides(
        &env,
        q,
        "session_coverage_power = 0.0",
        "work.jsonl",
        "other.jsonl",
    );
}

/// Newer facts win (issue 24 item 6): two records give the api's port.
/// The older is pinned, so it ranks first on its own; the newer moves
/// above it with a `newer` lift (so `--explain` still multiplies out), and
/// the older is marked in JSON and in the prompt format.
#[test]
fn a_newer_record_with_another_value_ranks_above_the_older() {
    let env = Env::new();
    env.add("decisions", "seed", "A first fact so the project exists.");
    let dir = env.project_dir().join("records");
    let write = |id: &str, day: &str, body: &str, pinned: bool| {
        let at = format!("2025-{day}T00:00:00Z");
        let mut text = crate::common::dated_record_text(id, id, "decisions", &at, body);
        if pinned {
            text = text.replace("source: manual\n", "source: manual\npinned: true\n");
        }
        std::fs::write(dir.join("decisions").join(format!("{id}.md")), text).unwrap();
    };
    write(
        "api-port-old",
        "01-10",
        "The api server port is 8080.",
        true,
    );
    write(
        "api-port-new",
        "06-10",
        "We moved the api server to port 9090.",
        false,
    );
    let args = [
        "--kind",
        "record",
        "--at",
        "2025-07-01T00:00:00Z",
        "api server port",
    ];
    let (_, v) = query_json(&env, &[&args[..], &["--explain"]].concat());
    let got: Vec<(String, Value)> = hits(&v)
        .iter()
        .map(|h| (h["id"].as_str().unwrap().to_string(), h["stale_by"].clone()))
        .collect();
    assert_eq!(
        got,
        [
            ("api-port-new".to_string(), Value::Null),
            ("api-port-old".to_string(), json!("api-port-new")),
        ],
        "{v:#}"
    );
    // It ranked below the pinned one before the move: lifted to its score.
    let (new, old) = (&hits(&v)[0], &hits(&v)[1]);
    let lift = new["explain"]["lifts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "newer")
        .unwrap_or_else(|| panic!("no newer lift: {new:#}"));
    assert!(lift["factor"].as_f64().unwrap() > 1.0, "{new:#}");
    assert_eq!(new["score"], old["score"], "{v:#}");
    let out = env
        .cmd()
        .args(["query", "--format", "prompt"])
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("_possibly stale: the newer record api-port-new says otherwise_"),
        "{text}"
    );
}

/// Issue 39 item 6: a question typed over several lines, one sentence
/// wrapped, ranks as it does on one line: its first line is not a title.
/// A question with a real title (a heading, or a short line and a blank
/// line) still has one.
#[test]
fn a_wrapped_question_ranks_as_it_does_on_one_line() {
    let env = super::corpus();
    let questions = [
        "why did the checkout service hang during the load test when the redis pool ran out of connections",
        "how do we cut a release and push the tag so that CI builds the artifacts",
        "which package manager does the project use for its frontend dependencies",
        "what pool size and acquire timeout did we set for redis after the checkout incident",
        "how should answers be formatted when we debug timeouts together",
        "is there a ticket about the login page being slow on mobile devices",
    ];
    for q in questions {
        let words: Vec<&str> = q.split(' ').collect();
        let wrapped: String = words
            .chunks(5)
            .map(|c| c.join(" "))
            .collect::<Vec<_>>()
            .join("\n");
        let (_, one) = super::query_json(&env, &["--no-salience", q]);
        let (_, many) = super::query_json(&env, &["--no-salience", &wrapped]);
        assert_eq!(super::ids(&one), super::ids(&many), "{q}");
    }
}
