//! Secrets: planted credentials of every kind the scanner knows, through
//! every input path; nothing under the home, no output and no answer of
//! `recall serve` may hold one.

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use anyhow::{bail, Context, Result};

use crate::serve::{http_agent, start_serve};
use crate::{row, Row, World};

/// What `recall serve` answers about the secrets home: a refused write of
/// a secret, both lists and recall in every format. Every body, concatenated.
fn served(w: &World, home: &Path, project: &str, planted: &[String]) -> Result<String> {
    let Some((mut child, base)) = start_serve(w, home)? else {
        bail!("recall serve did not start on the secrets home");
    };
    let agent = http_agent();
    let mut out = String::new();
    let mut body = |r: Result<ureq::http::Response<ureq::Body>, ureq::Error>| -> Result<()> {
        out.push_str(&r?.body_mut().read_to_string()?);
        Ok(())
    };
    let write =
        serde_json::json!({"key": "api-leak", "value": format!("the key is {}", planted[3])});
    body(
        agent
            .post(format!("{base}/api/projects/{project}/memories"))
            .header("Content-Type", "application/json")
            .send(write.to_string()),
    )?;
    body(
        agent
            .get(format!("{base}/api/projects/{project}/memories"))
            .call(),
    )?;
    body(agent.get(format!("{base}/api/user/memories")).call())?;
    for fmt in ["json", "prompt", "snippets"] {
        for q in [
            "deploy+credential+rotate",
            "leaked+token",
            "Deploy+with+set",
            "CI+uploads",
        ] {
            body(
                agent
                    .get(format!(
                        "{base}/api/projects/{project}/recall?q={q}&format={fmt}"
                    ))
                    .call(),
            )?;
        }
    }
    child.kill()?;
    child.wait()?;
    // 1 refused write, then 2 lists and 12 recalls that must have answered.
    let answered = out.matches("\"success\":true").count();
    if answered != 14 {
        bail!("recall serve answered {answered} of 14 reads on the secrets home: {out}");
    }
    Ok(out)
}

/// Does `haystack` hold `secret`, whole or as one of its alphanumeric runs
/// of 8+ characters in any case (a slug, a lowercased key, an FTS term)?
/// Runs of digits alone are left out: a timestamp could hold one.
fn holds(haystack: &str, secret: &str) -> bool {
    let lower = haystack.to_ascii_lowercase();
    haystack.contains(secret)
        || secret
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| w.len() >= 8 && !w.bytes().all(|b| b.is_ascii_digit()))
            .any(|w| lower.contains(&w.to_ascii_lowercase()))
}

/// The planted secrets scenario.
pub fn secrets(w: &World) -> Result<Vec<Row>> {
    let home = w.root.join("secrets/home");
    let proj = w.root.join("secrets/project");
    std::fs::create_dir_all(proj.join(".git"))?;
    let planted: Vec<String> = vec![
        format!("ghp_{}", "T0rtur3Gh0stKeyAbCdEfGhIjKlMnOpQrStU"),
        format!("AKIA{}", "TORTURE7Q2X9K4LM"),
        format!(
            "sk-ant-api03-{}",
            "t0rtur3-Zq8Xw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7Aa6"
        ),
        format!("xoxb-{}", "1234567890-1234567890123-T0rtur3S1ackT0kenAbCd"),
        format!("npm_{}", "T0rtur3NpmT0kenAbCdEfGhIjKlMnOpQrStU"),
        format!("glpat-{}", "T0rtur3GitLab9xYzAbCd"),
        format!("hf_{}", "T0rtur3HuggingFace9xYzAbCdEfGhIjKlMn"),
        // Issue #26: kinds that were stored as is in every channel.
        format!("pypi-AgEIcHlwaS5vcmc{}", "T0rtur3PyPi".repeat(6)),
        format!("SK{}", "7f3a9c0e1b5d28467f3a9c0e1b5d2846"),
        format!(
            "SG.{}.{}",
            "T0rtur3SendGr1dAbCdEfG", "T0rtur3SendGr1dAbCdEfGhIjKlMnOpQrStUvWxYz01"
        ),
        format!(
            "MTIzNDU2Nzg5MDEyMzQ1Njc4.{}.{}",
            "T0rtAb", "T0rtur3D1sc0rdAbCdEfGhIjKlMnOpQrStUv"
        ),
        format!("shpat_{}", "7f3a9c0e1b5d28467f3a9c0e1b5d2846"),
        format!("key-{}", "a7f3a9c0e1b5d28467f3a9c0e1b5d284"),
        format!("123456789:AA{}", "T0rtur3Te1egramAbCdEfGhIjKlMnOpQr"),
        format!("dop_v1_{}", "7f3a9c0e1b5d2846".repeat(4)),
        format!("glpat-{}", "TorturGitLabNoDigitAb"),
        format!("AKIA{}EXAMPLE", "IOSFODNN7"),
        "T0rtur3MySqlPw9".to_string(),
        "T0rtur3NetrcPw9".to_string(),
        "T0rtur3SshPw9x".to_string(),
        "VDBydHVyM0RvY2tlckF1dGg=".to_string(),
    ];
    // The sentence each secret travels in: a password needs the command
    // or file that names it.
    let carrier = |s: &str| -> String {
        match s {
            _ if s.contains("MySql") => format!("Migrate with mysql -u app -p{s} appdb."),
            _ if s.contains("Netrc") => {
                format!("The netrc says machine git.example.org login ci password {s} today.")
            }
            _ if s.contains("SshPw") => format!("Deploy with sshpass -p '{s}' ssh ci@host now."),
            _ if s.ends_with('=') => {
                format!("Docker config has {{\"auth\": \"{s}\"}} for the registry.")
            }
            _ => format!("We decided to rotate the deploy credential {s} every week."),
        }
    };
    let known = planted
        .iter()
        .filter(|s| !recall::secrets::scan(&carrier(s)).is_empty())
        .count();
    let pc = |args: &[&str]| -> Result<Output> {
        Ok(w.cmd(&home).arg("--cwd").arg(&proj).args(args).output()?)
    };
    // A neutral transcript, and a Claude Code one with secrets in cwd and
    // branch too.
    let t = w.root.join("secrets/s.jsonl");
    let mut text = String::new();
    for (i, s) in planted.iter().enumerate() {
        text.push_str(
            &serde_json::json!({"role": "user", "content": carrier(s), "id": format!("m{i}")})
                .to_string(),
        );
        text.push('\n');
    }
    std::fs::write(&t, text)?;
    let cc = w.root.join("secrets/cc.jsonl");
    let cc_line = serde_json::json!({
        "type": "user", "uuid": "u1", "parentUuid": null, "sessionId": "cc-secret",
        "timestamp": "2020-01-01T00:00:00Z", "cwd": format!("/tmp/{}", planted[0]),
        "gitBranch": planted[1], "message": {"role": "user", "content": format!("Always use the staging key {} for smoke tests.", planted[2])},
    });
    std::fs::write(&cc, format!("{cc_line}\n"))?;
    let ticket = w.root.join("secrets/TICK-1.md");
    std::fs::write(
        &ticket,
        format!(
            "# Rotate credentials\n\nThe leaked token was {}.\n\nAlso rotate {} and {}.\n",
            planted[3], planted[4], planted[5]
        ),
    )?;
    pc(&["index", t.to_str().unwrap(), cc.to_str().unwrap()])?;
    pc(&["index", "--kind", "ticket", ticket.to_str().unwrap()])?;
    pc(&[
        "record",
        "add",
        "--redact",
        "--category",
        "incidents",
        "--key",
        "leak",
        &format!("token {} leaked", planted[0]),
    ])?;
    pc(&[
        "remember",
        "--redact",
        &format!("The CI uses {} for uploads.", planted[1]),
    ])?;
    pc(&[
        "remember",
        "--redact",
        &format!("Model downloads use {} in CI.", planted[6]),
    ])?;
    // Issue #26: keys, ids and file names built from the text (or given)
    // before redaction held the secret, lowercased.
    for (i, s) in planted.iter().enumerate() {
        let text = carrier(s);
        pc(&["remember", "--redact", "--category", "incidents", &text])?;
        let key = format!("k{i} {text}");
        pc(&["record", "add", "--redact", "--key", &key, &text])?;
    }
    // A record file written by hand (the user's own file keeps its text).
    let dir_out = pc(&["project", "show", "--json"])?;
    let dir: serde_json::Value = serde_json::from_slice(&dir_out.stdout)?;
    let store = PathBuf::from(dir["dir"].as_str().context("no store dir")?);
    std::fs::create_dir_all(store.join("records/procedures"))?;
    let hand = store.join("records/procedures/hand.md");
    std::fs::write(&hand, format!("---\nid: hand\nkey: hand written\ncategory: procedures\nscope: project\nsource: manual\ncreated: 2020-01-01T00:00:00Z\nupdated: 2020-01-01T00:00:00Z\n---\n\nDeploy with {} set.\n", planted[2]))?;
    pc(&["extract", "--extractor", "builtin", "--since", "2000-01-01"])?;
    let mut outputs = String::new();
    for fmt in ["json", "prompt", "snippets"] {
        for q in [
            "deploy credential rotate",
            "staging key smoke tests",
            "leaked token",
            "CI uploads",
            "Deploy with set",
        ] {
            let o = pc(&["query", "--format", fmt, q])?;
            outputs.push_str(&String::from_utf8_lossy(&o.stdout));
        }
    }
    let payload = serde_json::json!({"session_id": "x", "cwd": proj, "hook_event_name": "UserPromptSubmit", "prompt": "deploy credential staging key"});
    let mut child = w
        .cmd(&home)
        .args(["hook", "claude-code"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.to_string().as_bytes())?;
    outputs.push_str(&String::from_utf8_lossy(&child.wait_with_output()?.stdout));
    outputs.push_str(&served(
        w,
        &home,
        dir["id"].as_str().unwrap_or(""),
        &planted,
    )?);
    let mut stored = BTreeSet::new();
    for e in walkdir::WalkDir::new(&home).into_iter().flatten() {
        if e.path() == hand {
            continue;
        }
        let rel = e.path().strip_prefix(&home).unwrap_or(e.path()).display();
        let name = e.path().to_string_lossy();
        let bytes = if e.file_type().is_file() {
            std::fs::read(e.path()).unwrap_or_default()
        } else {
            Vec::new()
        };
        for s in &planted {
            if holds(&String::from_utf8_lossy(&bytes), s) {
                stored.insert(format!("{} in {rel}", &s[..8]));
            }
            if holds(&name, s) {
                stored.insert(format!("{} in the name {rel}", &s[..8]));
            }
        }
    }
    let shown = planted.iter().filter(|s| holds(&outputs, s)).count();
    let redacted = outputs.matches("[REDACTED:").count();
    let leaks = if stored.is_empty() {
        "0".to_string()
    } else {
        format!(
            "{}: {}",
            stored.len(),
            stored.iter().cloned().collect::<Vec<_>>().join("; ")
        )
    };
    Ok(vec![
        row(
            "secrets",
            "planted secrets the detector knows (9 input paths)",
            format!("{known} of {}", planted.len()),
            "all",
            known == planted.len(),
        ),
        row(
            "secrets",
            "files under the home holding one",
            leaks,
            "0",
            stored.is_empty(),
        ),
        row(
            "secrets",
            "secrets in query, hook and server output",
            shown,
            "0",
            shown == 0,
        ),
        row(
            "secrets",
            "[REDACTED:...] marks in the output",
            redacted,
            "> 0",
            redacted > 0,
        ),
    ])
}
