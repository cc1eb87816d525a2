//! kill -9: jobs killed at random moments on a seeded corpus; afterwards
//! the index passes its integrity check, acknowledged records are kept,
//! temp files go, a re-run converges and doctor passes.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use synth::Rng;

use crate::corpus::write_corpus;
use crate::home::{age_temp_files, count, index_db, integrity_ok, temp_files};
use crate::serve::{http_agent, start_serve};
use crate::{row, Row, World};

/// The kill -9 scenario: `kills` rounds.
pub fn kill9(w: &World, kills: usize, seed: u64) -> Result<Vec<Row>> {
    let home = w.root.join("kill/home");
    let corpus = w.root.join("kill/corpus");
    write_corpus(&corpus, 12, 400, seed)?;
    let reference = w.root.join("kill/reference");
    let p = ["--project", "t"];
    let out = w.run(&reference, &[p[0], p[1], "index", corpus.to_str().unwrap()])?;
    if !out.status.success() {
        bail!(
            "reference index failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let want_chunks = count(
        &index_db(&reference, "t").context("no reference index")?,
        "SELECT count(*) FROM chunks",
    );
    let mut r = Rng::with_seed(seed);
    let mut alive: BTreeMap<String, bool> = BTreeMap::new();
    let (mut corrupt, mut killed) = (0, 0);
    let (mut serve_rounds, mut serve_acked) = (0, 0);
    for round in 0..kills {
        let key = format!("k{}", r.u64(..40));
        let text = format!(
            "decision {round}: use the {} queue for retries",
            r.u64(..1000)
        );
        if r.u64(..8) == 7 {
            let (acked, was_killed) = serve_round(w, &home, round, r.u64(..400))?;
            serve_rounds += 1;
            serve_acked += acked.len();
            for k in acked {
                alive.insert(k, true);
            }
            killed += usize::from(was_killed);
            if let Some(db) = index_db(&home, "t") {
                if db.exists() && !integrity_ok(&db) {
                    corrupt += 1;
                }
            }
            continue;
        }
        let args: Vec<String> = match r.u64(..7) {
            0 => vec!["index".into(), corpus.display().to_string()],
            1 => vec![
                "index".into(),
                "--full".into(),
                corpus.display().to_string(),
            ],
            2 => vec!["reindex".into(), "--full".into()],
            3 | 4 => vec![
                "record".into(),
                "add".into(),
                "--category".into(),
                "decisions".into(),
                "--key".into(),
                key.clone(),
                text,
            ],
            5 => vec!["record".into(), "delete".into(), key.clone()],
            _ => vec![
                "extract".into(),
                "--extractor".into(),
                "builtin".into(),
                "--since".into(),
                "2000-01-01".into(),
            ],
        };
        let mut child = w
            .cmd(&home)
            .args(p)
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        std::thread::sleep(Duration::from_millis(r.u64(..400)));
        let status = match child.try_wait()? {
            Some(s) => Some(s),
            None => {
                child.kill()?;
                child.wait()?;
                killed += 1;
                None
            }
        };
        if let Some(s) = status.filter(|s| s.success()) {
            match (args[0].as_str(), args.get(1).map(String::as_str)) {
                ("record", Some("add")) => drop(alive.insert(key, true)),
                ("record", Some("delete")) => drop(alive.remove(&key)),
                _ => {}
            }
            let _ = s;
        }
        if let Some(db) = index_db(&home, "t") {
            if db.exists() && !integrity_ok(&db) {
                corrupt += 1;
            }
        }
    }
    // A killed write's temp file is an orphan once it is ORPHAN_AGE old
    // (younger ones may be a live writer's); stand in for that wait.
    age_temp_files(&home, recall::store::ORPHAN_AGE + Duration::from_secs(1));
    // Re-run: index and sync converge.
    w.run(&home, &[p[0], p[1], "index", corpus.to_str().unwrap()])?;
    w.run(&home, &[p[0], p[1], "reindex"])?;
    let leftovers = temp_files(&home);
    let mut bad_files = 0;
    for e in walkdir::WalkDir::new(&home).into_iter().flatten() {
        let path = e.path();
        if path.extension().is_some_and(|x| x == "md")
            && path.components().any(|c| c.as_os_str() == "records")
        {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            if recall::records::parse_record(&text, path, &Default::default()).is_err() {
                bad_files += 1;
            }
        }
    }
    let mut lost = 0;
    for key in alive.keys() {
        if !w
            .run(&home, &[p[0], p[1], "record", "get", key])?
            .status
            .success()
        {
            lost += 1;
        }
    }
    let db = index_db(&home, "t").context("no index after the kills")?;
    let chunks = count(&db, "SELECT count(*) FROM chunks");
    let doctor = w.run(&home, &[p[0], p[1], "doctor"])?;
    Ok(vec![
        row(
            "kill -9",
            "rounds (killed mid-run)",
            format!("{kills} ({killed})"),
            "",
            true,
        ),
        row(
            "kill -9",
            "of them `serve` rounds (acknowledged POSTs)",
            format!("{serve_rounds} ({serve_acked})"),
            "",
            true,
        ),
        row(
            "kill -9",
            "integrity_check failures",
            corrupt,
            "0",
            corrupt == 0,
        ),
        row(
            "kill -9",
            "acknowledged records lost",
            format!("{lost} of {}", alive.len()),
            "0",
            lost == 0,
        ),
        row(
            "kill -9",
            "temp files left after a re-run a minute later",
            leftovers,
            "0",
            leftovers == 0,
        ),
        row(
            "kill -9",
            "record files that do not parse",
            bad_files,
            "0",
            bad_files == 0,
        ),
        row(
            "kill -9",
            "passages after a re-run / clean index",
            format!("{chunks} / {want_chunks}"),
            "equal",
            chunks == want_chunks,
        ),
        row(
            "kill -9",
            "doctor after a re-run",
            doctor.status.code().unwrap_or(-1),
            "0",
            doctor.status.success(),
        ),
    ])
}

/// One kill -9 round of `recall serve`: start it, `POST` upserts to project
/// `t` until `ms` milliseconds have passed, then kill it. Returns the keys
/// whose write was acknowledged (2xx) and whether the server was killed
/// (rather than failing to start).
fn serve_round(w: &World, home: &Path, round: usize, ms: u64) -> Result<(Vec<String>, bool)> {
    let Some((mut child, base)) = start_serve(w, home)? else {
        return Ok((vec![], false));
    };
    let agent = http_agent();
    let deadline = Instant::now() + Duration::from_millis(ms);
    let mut acked = Vec::new();
    let mut n = 0;
    while Instant::now() < deadline {
        n += 1;
        let key = format!("s{}", (round * 7 + n) % 40);
        let body = format!("{{\"key\":\"{key}\",\"value\":\"served decision {round}-{n}\"}}");
        let resp = agent
            .post(format!("{base}/api/projects/t/memories"))
            .header("Content-Type", "application/json")
            .send(body);
        if resp.is_ok_and(|r| r.status().is_success()) {
            acked.push(key);
        }
    }
    child.kill()?;
    child.wait()?;
    Ok((acked, true))
}
