//! Session hits: the messages a hit cites are exactly those it shows, its
//! times bound them, near-duplicates give one hit, one session gives at
//! most five, touching windows merge, and the context around the best hit
//! and the later ones.

use std::path::{Path, PathBuf};

use super::{field, hits, ids, index, msg, query_json, session_line, sessions_of};
use crate::common::Env;
use serde_json::{json, Value};

#[test]
fn session_hits_cite_exactly_the_messages_they_show() {
    let env = Env::new();
    // 40 short messages (whole messages always fit the window and the
    // chunk overlap), each with its own words, in topical runs.
    let topics = [
        "gateway certificate renewal failed",
        "flaky websocket reconnect",
        "gateway certificate chain",
        "database vacuum schedule",
    ];
    let mut texts = Vec::new();
    let mut body = session_line("sess-cite", "citations");
    for i in 0..40 {
        let topic = topics[(i / 5) % topics.len()];
        let text = format!("note{i} {topic} detail{i}a detail{i}b ends{i}");
        let ts = format!("2020-06-01T10:{:02}:00Z", i);
        body += &msg(
            &format!("m{i}"),
            if i % 2 == 0 { "user" } else { "assistant" },
            &ts,
            &text,
        );
        texts.push((format!("m{i}"), text));
    }
    let path = env.tmp.path().join("cite.jsonl");
    std::fs::write(&path, body).unwrap();
    // Small chunks, so windows from several chunks (and their overlaps)
    // meet in one ranking.
    std::fs::create_dir_all(env.home()).unwrap();
    std::fs::write(
        env.home().join("config.toml"),
        "[index]\nchunk_words = 40\noverlap_words = 12\n",
    )
    .unwrap();
    index(&env, &[&path]);
    let mut multi = 0;
    let mut checked = 0;
    for q in [
        "gateway certificate",
        "websocket reconnect",
        "renewal failed",
        "vacuum",
        "detail7a detail8b detail9a",
        "note12 note13 note14",
    ] {
        let (code, v) = query_json(&env, &["--kind", "session", "--limit", "20", q]);
        assert_eq!(code, 0, "{q}");
        for h in hits(&v) {
            let text = field(h, "text");
            let got: Vec<&str> = h["source"]["message_ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_str().unwrap())
                .collect();
            let want: Vec<&str> = texts
                .iter()
                .filter(|(_, t)| text.contains(t.as_str()))
                .map(|(id, _)| id.as_str())
                .collect();
            assert_eq!(got, want, "query {q:?}, hit text:\n{text}");
            let range = h["source"]["message_range"].as_array().unwrap();
            let (a, b) = (range[0].as_i64().unwrap(), range[1].as_i64().unwrap());
            assert_eq!(
                (a, b),
                (
                    want.first().unwrap()[1..].parse().unwrap(),
                    want.last().unwrap()[1..].parse().unwrap()
                ),
                "message_range matches the ids"
            );
            multi += usize::from(got.len() > 1);
            checked += 1;
        }
    }
    assert!(checked >= 6 && multi >= 3, "{checked} hits, {multi} multi");
}

#[test]
fn near_duplicate_records_and_messages_give_one_hit() {
    let env = Env::new();
    let a = env.add(
        "procedures",
        "staging password rotation",
        "The staging database password rotates every Monday at 09:00 UTC through Vault; restart the API pods afterwards.",
    );
    let b = env.add(
        "procedures",
        "staging db password rotation",
        "The staging database password rotates every Monday at 09:00 UTC through Vault; restart all API pods afterwards.",
    );
    let c = env.add(
        "decisions",
        "production password",
        "The production database password is managed by the platform team and never rotates automatically.",
    );
    let (code, v) = query_json(&env, &["staging database password rotates"]);
    assert_eq!(code, 0);
    let got = ids(&v);
    assert_eq!(
        got.iter().filter(|i| **i == a || **i == b).count(),
        1,
        "one of two near-identical records: {got:?}"
    );
    assert!(got.contains(&c), "a different record stays: {got:?}");

    let dup = "The nightly backup job to S3 failed because the bucket policy denies PutObject from the new IAM role.";
    for (sid, filler, text) in [
        ("sess-dup-a", "Morning, what is on the board today?", dup),
        ("sess-dup-b", "Can you check why the dashboards are red?", dup),
        (
            "sess-dup-c",
            "Another thing about storage.",
            "The nightly backup finished late again; the bucket lifecycle rule moved old snapshots to Glacier.",
        ),
    ] {
        let body = session_line(sid, sid)
            + &msg("x1", "user", "2020-07-01T10:00:00Z", filler)
            + &msg("x2", "assistant", "2020-07-01T10:01:00Z", text)
            + &msg("x3", "user", "2020-07-01T10:02:00Z", "Thanks, that is all for now.");
        let p = env.tmp.path().join(format!("{sid}.jsonl"));
        std::fs::write(&p, body).unwrap();
        index(&env, &[&p]);
    }
    let (_, v) = query_json(
        &env,
        &[
            "--kind",
            "session",
            "nightly backup bucket policy PutObject",
        ],
    );
    let with_dup = hits(&v)
        .iter()
        .filter(|h| field(h, "text").contains("denies PutObject"))
        .count();
    assert_eq!(with_dup, 1, "{v:#}");
    assert_eq!(
        sessions_of(&v).len(),
        2,
        "the different session stays: {v:#}"
    );
}

/// A session with `blocks` well separated matching messages, each with its
/// own words, so every chunk holds one distinct match.
fn write_spread_session(path: &Path, sid: &str, blocks: usize) {
    let mut body = session_line(sid, "zeppelin maintenance log");
    let mut n = 0;
    for i in 0..blocks {
        for j in 0..8 {
            let filler: Vec<String> = (0..40).map(|k| format!("f{i}x{j}y{k}")).collect();
            body += &msg(
                &format!("f{n}"),
                "assistant",
                "2020-08-01T10:00:00Z",
                &filler.join(" "),
            );
            n += 1;
        }
        let text = format!(
            "the zeppelin hangar alarm fired again, case {i}: u{i}a u{i}b u{i}c u{i}d u{i}e u{i}f u{i}g"
        );
        body += &msg(&format!("z{i}"), "user", "2020-08-01T10:00:00Z", &text);
        n += 1;
    }
    std::fs::write(path, body).unwrap();
}

fn touching(a: &Value, b: &Value) -> bool {
    let r = |h: &Value| {
        let x = h["source"]["message_range"].as_array().unwrap();
        (x[0].as_i64().unwrap(), x[1].as_i64().unwrap())
    };
    let ((a0, a1), (b0, b1)) = (r(a), r(b));
    b0 <= a1 + 1 && a0 <= b1 + 1
}

#[test]
fn one_session_gives_at_most_five_hits_by_default() {
    let env = Env::new();
    let big = env.tmp.path().join("big.jsonl");
    write_spread_session(&big, "sess-zeppelin", 10);
    let other = env.tmp.path().join("other.jsonl");
    std::fs::write(
        &other,
        session_line("sess-other", "other")
            + &msg(
                "o1",
                "user",
                "2020-08-02T10:00:00Z",
                "Is the zeppelin hangar alarm still firing?",
            ),
    )
    .unwrap();
    index(&env, &[&big, &other]);
    let db = env.project_dir().join("index.db");
    let chunks: i64 = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT count(*) FROM chunks WHERE session_id = 'sess-zeppelin'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(chunks >= 8, "precondition: many chunks, got {chunks}");
    let from = |v: &Value, sid: &str| -> Vec<Value> {
        hits(v)
            .iter()
            .filter(|h| h["source"]["session_id"] == sid)
            .cloned()
            .collect()
    };
    let (code, v) = query_json(&env, &["--limit", "30", "zeppelin hangar alarm fired"]);
    assert_eq!(code, 0);
    let z = from(&v, "sess-zeppelin");
    assert_eq!(z.len(), 5, "{v:#}");
    assert_eq!(from(&v, "sess-other").len(), 1, "the cap is per session");
    for (i, a) in z.iter().enumerate() {
        for b in &z[i + 1..] {
            assert!(!touching(a, b), "touching windows are merged: {a:#} {b:#}");
        }
    }
    // The cap is a tuning knob.
    std::fs::write(
        env.home().join("config.toml"),
        "[recall.tuning]\nper_session = 7\n",
    )
    .unwrap();
    let (_, v) = query_json(&env, &["--limit", "30", "zeppelin hangar alarm fired"]);
    assert_eq!(from(&v, "sess-zeppelin").len(), 7, "{v:#}");
}

#[test]
fn adjacent_windows_of_one_session_merge() {
    let env = Env::new();
    // Eight 35-word filler messages, then three short matching messages,
    // then filler. Each message is its own passage, so m8, m9 and m10 are
    // three candidates that touch: they must come back as one hit.
    // Context of at most 300 characters a side: one filler message.
    std::fs::create_dir_all(env.home()).unwrap();
    std::fs::write(
        env.home().join("config.toml"),
        "[recall.tuning]\nlead_context_chars = 300\ncontext_chars = 300\n",
    )
    .unwrap();
    let mut body = session_line("sess-merge", "merge");
    for i in 0..8 {
        let words: Vec<String> = (0..35).map(|k| format!("p{i}q{k}")).collect();
        body += &msg(
            &format!("m{i}"),
            "assistant",
            "2020-09-01T10:00:00Z",
            &words.join(" "),
        );
    }
    for (i, t) in [
        (
            8,
            "the quokka migration stalled at step one, alpha bravo charlie delta",
        ),
        (
            9,
            "the quokka migration resumed after the lock, echo foxtrot golf hotel",
        ),
        (
            10,
            "quokka migration done and verified, india juliet kilo lima",
        ),
    ] {
        body += &msg(&format!("m{i}"), "user", "2020-09-01T10:00:00Z", t);
    }
    for i in 11..20 {
        let words: Vec<String> = (0..35).map(|k| format!("r{i}s{k}")).collect();
        body += &msg(
            &format!("m{i}"),
            "assistant",
            "2020-09-01T10:00:00Z",
            &words.join(" "),
        );
    }
    let p = env.tmp.path().join("merge.jsonl");
    std::fs::write(&p, body).unwrap();
    index(&env, &[&p]);
    let db = env.project_dir().join("index.db");
    let c = rusqlite::Connection::open(&db).unwrap();
    let ranges: Vec<(i64, i64)> = c
        .prepare(
            "SELECT msg_first, msg_last FROM chunks WHERE session_id = 'sess-merge' ORDER BY seq",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(
        ranges.len() == 20
            && ranges
                .iter()
                .enumerate()
                .all(|(i, r)| *r == (i as i64, i as i64)),
        "precondition: one passage per message: {ranges:?}"
    );
    let (code, v) = query_json(&env, &["--kind", "session", "quokka migration"]);
    assert_eq!(code, 0);
    assert_eq!(hits(&v).len(), 1, "{v:#}");
    let h = &hits(&v)[0];
    let got: Vec<&str> = h["source"]["message_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    // The merged hit holds the three matches once each, in order, with at
    // most one short neighbour on each side as context.
    let at = got.iter().position(|id| *id == "m8").expect("m8 shown");
    assert_eq!(got[at..at + 3], ["m8", "m9", "m10"], "{h:#}");
    assert!(at <= 1 && got.len() <= at + 4, "{h:#}");
    let first: usize = got[0][1..].parse().unwrap();
    let want: Vec<String> = (first..first + got.len())
        .map(|i| format!("m{i}"))
        .collect();
    assert_eq!(got, want);
    assert_eq!(
        h["source"]["message_range"],
        json!([first, first + got.len() - 1]),
        "{h:#}"
    );
    let text = field(h, "text");
    assert_eq!(text.matches("step one").count(), 1, "m8 once: {text}");
    assert!(
        text.contains("resumed") && text.contains("verified"),
        "{text}"
    );
}

#[test]
fn the_best_session_hit_gets_the_lead_context_and_later_hits_less() {
    // README: the best session hit gets `lead_context_chars` (600) of
    // neighbouring text on each side, every later one `context_chars`
    // (150). Messages of 95 characters (about 105 with the speaker): five
    // fit on each side of the lead hit, one on each side of the next.
    let env = Env::new();
    let mut paths = Vec::new();
    for (name, matched) in [
        (
            "otter",
            "the pelican ledger reconcile failed: pelican ledger totals drift",
        ),
        ("heron", "the pelican ledger was mentioned once"),
    ] {
        let mut body = session_line(&format!("sess-{name}"), name);
        for i in 0..13 {
            let text = if i == 6 {
                matched.to_string()
            } else {
                let filler: Vec<String> = (0..8).map(|k| format!("{name}{i}w{k}")).collect();
                let filler = filler.join(" ");
                format!("{filler} {}", "x".repeat(94 - filler.len()))
            };
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            body += &msg(&format!("{name}-m{i}"), role, "2021-03-01T10:00:00Z", &text);
        }
        let p = env.tmp.path().join(format!("{name}.jsonl"));
        std::fs::write(&p, body).unwrap();
        paths.push(p);
    }
    let refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    index(&env, &refs);
    let (code, v) = query_json(&env, &["--kind", "session", "pelican ledger reconcile"]);
    assert_eq!(code, 0);
    let cited = |h: &Value| -> Vec<String> {
        h["source"]["message_ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap().to_string())
            .collect()
    };
    let want = |name: &str, r: std::ops::RangeInclusive<i32>| -> Vec<String> {
        r.map(|i| format!("{name}-m{i}")).collect()
    };
    assert_eq!(hits(&v).len(), 2, "{v:#}");
    assert_eq!(cited(&hits(&v)[0]), want("otter", 1..=11), "{v:#}");
    assert_eq!(cited(&hits(&v)[1]), want("heron", 5..=7), "{v:#}");
}

#[test]
fn a_session_hit_shows_in_full_every_message_it_cites() {
    // README: "message_ids (the native ids of every message the hit's text
    // covers, in order)". A window whose best messages leave little room
    // still brings the next reply along (up to 1.5x the window), and is
    // then cut to the window by `cut_around`: the reply's id is cited but
    // its text is not shown (and the blocks' blank-line separators go).
    let env = Env::new();
    std::fs::create_dir_all(env.home()).unwrap();
    std::fs::write(
        env.home().join("config.toml"),
        "[recall.tuning]\nwindow_chars = 300\n",
    )
    .unwrap();
    let question = format!(
        "Why does the walrus scheduler skip the nightly job when the clock changes for daylight saving? {}",
        (0..25).map(|k| format!("ctx{k}")).collect::<Vec<_>>().join(" ")
    );
    let answer = format!(
        "Because it stores local times; {}",
        (0..25)
            .map(|k| format!("ans{k}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let texts = [
        ("q1", "user", question.as_str()),
        ("r1", "assistant", answer.as_str()),
        ("q2", "user", "ok thanks"),
    ];
    let mut body = session_line("sess-walrus", "walrus");
    for (id, role, text) in texts {
        body += &msg(id, role, "2020-06-01T10:00:00Z", text);
    }
    let p = env.tmp.path().join("walrus.jsonl");
    std::fs::write(&p, body).unwrap();
    index(&env, &[&p]);
    let (code, v) = query_json(&env, &["--kind", "session", "walrus scheduler"]);
    assert_eq!(code, 0);
    let h = &hits(&v)[0];
    let text = field(h, "text");
    let cited: Vec<&str> = h["source"]["message_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    let shown: Vec<&str> = texts
        .iter()
        .filter(|(_, _, t)| text.contains(t))
        .map(|(id, _, _)| *id)
        .collect();
    assert_eq!(cited, shown, "hit text:\n{text}");
}

/// Regression: a session hit's first/last timestamps were those of the
/// whole chunk, not of the messages its window shows.
#[test]
fn r_session_hit_timestamps_bound_the_messages_shown() {
    let env = Env::new();
    std::fs::create_dir_all(env.home()).unwrap();
    std::fs::write(
        env.home().join("config.toml"),
        "[recall.tuning]\nwindow_chars = 200\nlead_context_chars = 150\n",
    )
    .unwrap();
    let mut body = session_line("sess-times", "times");
    for i in 0..12 {
        let text = if i == 5 {
            "The narwhal importer drops rows with a BOM.".to_string()
        } else {
            format!("Unrelated chatter number {i} about lunch plans.")
        };
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        body += &msg(
            &format!("t{i}"),
            role,
            &format!("2021-04-01T10:{i:02}:00Z"),
            &text,
        );
    }
    let p = env.tmp.path().join("times.jsonl");
    std::fs::write(&p, body).unwrap();
    index(&env, &[&p]);
    let (code, v) = query_json(&env, &["--kind", "session", "narwhal importer"]);
    assert_eq!(code, 0);
    let h = &hits(&v)[0];
    let cited: Vec<usize> = h["source"]["message_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap()[1..].parse().unwrap())
        .collect();
    assert!(cited.contains(&5) && cited.len() < 12, "{h}");
    let at = |i: usize| format!("2021-04-01T10:{i:02}:00Z");
    assert_eq!(h["source"]["first_timestamp"], at(cited[0]), "{h}");
    assert_eq!(
        h["source"]["last_timestamp"],
        at(*cited.last().unwrap()),
        "{h}"
    );
}
