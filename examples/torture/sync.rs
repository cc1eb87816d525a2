//! Team memory under kill -9: two hosts (two homes) change records and
//! index sessions, and `recall sync` on either side, or `recall sync
//! --pull-only` on a third host with a read-only role, is killed at random
//! points, again and again. Then each host syncs twice and all three must
//! hold exactly what was written: nothing lost, nothing duplicated or
//! resurrected (the reader learns of deletes whose tombstones the members
//! compacted), the same on every host and on the server.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use synth::Rng;

use crate::corpus::transcript;
use crate::home::{count, index_db};
use crate::pg::Pg;
use crate::{row, Row, World};

const TEAM: &str = "torture/sync";

fn sync_cmd(w: &World, home: &Path, args: &[&str]) -> std::process::Command {
    let mut c = w.cmd(home);
    c.env("USER", "torture")
        .env("PGPASSFILE", "/nonexistent")
        .args(["--project", "t"])
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    c
}

fn must(w: &World, home: &Path, args: &[&str]) -> Result<()> {
    let out = sync_cmd(w, home, args).output()?;
    if !out.status.success() {
        bail!(
            "recall {args:?} in {}: {}",
            home.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(())
}

/// Write (or overwrite) a record file by hand: the Markdown is the truth.
fn write_record(home: &Path, key: &str, body: &str) -> Result<()> {
    let dir = records_dir(home)?;
    std::fs::create_dir_all(&dir)?;
    std::fs::write(
        dir.join(format!("{key}.md")),
        format!("---\nid: {key}\nkey: {key}\ncategory: decisions\nscope: project\nsource: manual\ncreated: 2026-01-01T00:00:00Z\nupdated: 2026-01-01T00:00:00Z\n---\n\n{body}\n"),
    )?;
    Ok(())
}

fn records_dir(home: &Path) -> Result<PathBuf> {
    let db =
        index_db(home, "t").ok_or_else(|| anyhow::anyhow!("no project t in {}", home.display()))?;
    Ok(db
        .parent()
        .expect("index.db has a folder")
        .join("records/decisions"))
}

/// Keys and bodies of every record file of a host.
fn records_of(home: &Path) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    let dir = records_dir(home)?;
    for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        // A killed write's temp file is not a record (recall never reads
        // it; a later run removes it once it is an orphan).
        if recall::store::is_temp_name(&e.file_name().to_string_lossy()) {
            continue;
        }
        let text = std::fs::read_to_string(e.path())?;
        let key = text
            .lines()
            .find_map(|l| l.strip_prefix("key: "))
            .unwrap_or_default()
            .trim_matches('\'')
            .to_string();
        let body = text
            .rsplit("---\n")
            .next()
            .unwrap_or_default()
            .trim()
            .to_string();
        if out.insert(key.clone(), body).is_some() {
            bail!("{}: two files hold the key {key}", home.display());
        }
    }
    Ok(out)
}

/// The scenario: `rounds` kills split over both hosts.
pub fn sync_kill9(w: &World, rounds: usize, seed: u64) -> Result<Vec<Row>> {
    let Some(pg) = Pg::start() else {
        return Ok(vec![row(
            "sync kill -9",
            "PostgreSQL",
            "not installed",
            "installed",
            false,
        )]);
    };
    let homes = [w.root.join("sync/a"), w.root.join("sync/b")];
    let reader = w.root.join("sync/c");
    let corpus = w.root.join("sync/corpus");
    for (i, h) in homes.iter().enumerate() {
        must(w, h, &["sync", "--init", &pg.url(), "--team", TEAM])?;
        // Each host owns its own keys, so the expected end state is known.
        for k in 0..20 {
            write_record(h, &format!("h{i}-k{k}"), &format!("initial {i}/{k}"))?;
        }
        // And a session of its own, so passages travel whatever the kill
        // rounds draw (they index more now and then).
        let dir = corpus.join(format!("h{i}"));
        std::fs::create_dir_all(&dir)?;
        let f = dir.join(format!("h{i}.jsonl"));
        std::fs::write(&f, transcript(&format!("h{i}"), rounds + i, 60, seed))?;
        must(w, h, &["index", f.to_str().unwrap()])?;
    }
    pg.sql(
        "team",
        "CREATE ROLE reader LOGIN PASSWORD 'reader-pw-123';
         GRANT USAGE ON SCHEMA public TO reader;
         GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader;",
    );
    let reader_url = format!("postgres://reader:reader-pw-123@127.0.0.1:{}/team", pg.port);
    must(w, &reader, &["sync", "--init", &reader_url, "--team", TEAM])?;
    let mut want: [BTreeMap<String, Option<String>>; 2] = Default::default();
    for (i, m) in want.iter_mut().enumerate() {
        for k in 0..20 {
            m.insert(format!("h{i}-k{k}"), Some(format!("initial {i}/{k}")));
        }
    }
    let mut r = Rng::with_seed(seed);
    let (mut killed, t0) = (0, Instant::now());
    for round in 0..rounds {
        let i = r.usize(..3);
        if i == 2 {
            // The reader only pulls.
            let mut child = sync_cmd(w, &reader, &["sync", "--pull-only"]).spawn()?;
            std::thread::sleep(Duration::from_millis(r.u64(..40)));
            if child.try_wait()?.is_none() {
                killed += 1;
            }
            let _ = child.kill();
            let _ = child.wait();
            continue;
        }
        let home = &homes[i];
        // Change something, then start a sync and kill it somewhere.
        let key = format!("h{i}-k{}", r.u64(..30));
        match r.u64(..6) {
            0 => {
                let p = records_dir(home)?.join(format!("{key}.md"));
                if p.exists() {
                    std::fs::remove_file(p)?;
                    want[i].insert(key, None);
                }
            }
            1 => {
                let dir = corpus.join(format!("r{round}"));
                std::fs::create_dir_all(&dir)?;
                let f = dir.join(format!("s{round}.jsonl"));
                std::fs::write(&f, transcript(&format!("s{round}"), round, 60, seed))?;
                must(w, home, &["index", f.to_str().unwrap()])?;
            }
            _ => {
                let body = format!("round {round} value {}", r.u64(..1_000_000));
                write_record(home, &key, &body)?;
                want[i].insert(key, Some(body));
            }
        }
        let mut child = sync_cmd(w, home, &["sync"]).spawn()?;
        std::thread::sleep(Duration::from_millis(r.u64(..40)));
        if child.try_wait()?.is_none() {
            killed += 1;
        }
        let _ = child.kill();
        let _ = child.wait();
    }
    // Settle: two rounds on each host.
    for _ in 0..2 {
        for h in &homes {
            must(w, h, &["sync"])?;
        }
        must(w, &reader, &["sync", "--pull-only"])?;
    }
    let expected: BTreeMap<String, String> = want
        .iter()
        .flat_map(|m| m.iter())
        .filter_map(|(k, v)| v.clone().map(|v| (k.clone(), v)))
        .collect();
    let got = [
        records_of(&homes[0])?,
        records_of(&homes[1])?,
        records_of(&reader)?,
    ];
    let lost = expected
        .iter()
        .filter(|(k, v)| got.iter().any(|g| g.get(*k) != Some(*v)))
        .count();
    for (k, v) in &expected {
        for (i, g) in got.iter().enumerate() {
            if g.get(k) != Some(v) {
                eprintln!("torture: sync: host {i} has {k} = {:?}, want {v:?}; server: {}", g.get(k),
                    pg.sql("team", &format!("SELECT id, host, hash, deleted, right(body, 40) FROM recall_entries WHERE key='{k}'")));
            }
        }
    }
    let extra = got
        .iter()
        .map(|g| g.keys().filter(|k| !expected.contains_key(*k)).count())
        .sum::<usize>();
    let server = pg.sql(
        "team",
        "SELECT count(*) - count(DISTINCT (kind, key)) FROM recall_entries",
    );
    // Every session indexed on one host arrives once on the other.
    let all = [&homes[0], &homes[1], &reader];
    let chunks: Vec<i64> = all
        .iter()
        .map(|h| index_db(h, "t").map_or(-1, |db| count(&db, "SELECT count(*) FROM chunks")))
        .collect();
    let dup_sources: i64 = all
        .iter()
        .map(|h| {
            index_db(h, "t").map_or(-1, |db| {
                count(&db, "SELECT count(*) - count(DISTINCT path) FROM sources")
            })
        })
        .sum();
    Ok(vec![
        row(
            "sync kill -9",
            "rounds (syncs killed mid-run)",
            format!("{rounds} ({killed})"),
            "≥ 100 in the full run",
            true,
        ),
        row(
            "sync kill -9",
            "records lost or wrong after re-sync",
            lost,
            "0",
            lost == 0,
        ),
        row(
            "sync kill -9",
            "records duplicated or resurrected",
            extra,
            "0",
            extra == 0,
        ),
        row(
            "sync kill -9",
            "duplicate rows on the server",
            &server,
            "0",
            server == "0",
        ),
        row(
            "sync kill -9",
            "passages on host a / host b / reader c",
            format!("{} / {} / {}", chunks[0], chunks[1], chunks[2]),
            "equal",
            chunks[0] == chunks[1] && chunks[1] == chunks[2] && chunks[0] > 0 && dup_sources == 0,
        ),
        row(
            "sync kill -9",
            "seconds",
            format!("{:.0}", t0.elapsed().as_secs_f64()),
            "-",
            true,
        ),
    ])
}
