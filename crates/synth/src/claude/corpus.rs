//! A corpus of Claude Code sessions of a total size, as `~/.claude/projects`
//! holds them (`-home-dev-projects-NAME/ID.jsonl`, subagents in
//! `ID/subagents/`), or many small files. The plan (sizes, ids, seeds) is
//! drawn in order, then the files are written in parallel, each from its
//! own seed, so a corpus is byte-identical for the same seed and size.

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::{session, Profile, Spec};
use crate::text::{hex, uuid};
use crate::words::{ADJECTIVES, NOUNS, PROJECTS};
use crate::{Draw, Rng, Vocab};

/// Bump when the output for a seed and size changes: a folder whose
/// marker names another version is generated again.
const GEN_VERSION: u32 = 3;
/// Written last into a complete corpus folder (hidden: not walked).
const MARKER: &str = ".recall-bench-corpus";
/// 2025-06-01T00:00:00Z, in unix milliseconds: sessions start within 300
/// days after it.
const BASE_MS: i64 = 1_748_736_000_000;

/// What a generated corpus holds.
#[derive(Debug, Clone, Copy)]
pub struct Corpus {
    pub files: usize,
    pub bytes: u64,
}

/// The file plan for a corpus: `total_bytes` of 100 KB - 2 MB sessions
/// (a quarter of them with one or two subagents), or `small_files = Some(n)`
/// files of 1-4 KB in folders of 100.
pub fn plan(total_bytes: u64, seed: u64, small_files: Option<usize>) -> Vec<Spec> {
    let mut r = Rng::with_seed(seed);
    let mut ids = Rng::with_seed(seed ^ 0x1D5);
    let mut specs = Vec::new();
    let mut planned = 0u64;
    loop {
        let i = specs.len();
        let done = match small_files {
            Some(n) => i >= n,
            None => planned >= total_bytes,
        };
        if done {
            break;
        }
        let project = r.pick(PROJECTS);
        let branch = match r.usize(..4) {
            0 => "main".to_string(),
            _ => format!("{}-{}", r.pick(&ADJECTIVES), r.pick(&NOUNS)),
        };
        let session_id = uuid(&mut ids);
        let start_ms = BASE_MS + r.i64(0..300 * 86_400) * 1000;
        let dir = format!("-home-dev-projects-{project}");
        let (target, profile, rel) = match small_files {
            Some(_) => (
                r.usize(1_000..=4_000),
                Profile::SMALL,
                PathBuf::from(format!("p{:03}", i / 100)).join(format!("{session_id}.jsonl")),
            ),
            None => {
                let left = (total_bytes - planned) as usize;
                let t = r.log_uniform(100_000, 2_000_000).min(left.max(20_000));
                let rel = PathBuf::from(&dir).join(format!("{session_id}.jsonl"));
                (t, Profile::FULL, rel)
            }
        };
        planned += target as u64;
        let subagents = if small_files.is_none() && r.chance(250) {
            r.usize(1..=2)
        } else {
            0
        };
        let main = Spec {
            rel,
            target,
            seed: r.u64(..),
            session_id: session_id.clone(),
            cwd: format!("/home/dev/projects/{project}"),
            branch,
            agent_id: None,
            start_ms,
            profile,
        };
        specs.push(main);
        let main = specs.len() - 1;
        for _ in 0..subagents {
            if planned >= total_bytes {
                break;
            }
            let mut agent = String::from("a");
            hex(&mut ids, &mut agent, 7);
            let t = r.log_uniform(50_000, 400_000);
            planned += t as u64;
            specs.push(Spec {
                rel: PathBuf::from(&dir)
                    .join(&session_id)
                    .join("subagents")
                    .join(format!("agent-{agent}.jsonl")),
                target: t,
                seed: r.u64(..),
                agent_id: Some(agent),
                start_ms: start_ms + 60_000,
                profile: Profile::FULL,
                ..specs[main].clone()
            });
        }
    }
    specs
}

fn marker_text(total_bytes: u64, seed: u64, small_files: Option<usize>) -> String {
    format!(
        "gen={GEN_VERSION} bytes={total_bytes} seed={seed} small_files={}",
        small_files.map_or("none".to_string(), |n| n.to_string())
    )
}

/// The corpus `dir` already holds, when its marker says it is this one.
fn reuse(dir: &Path, want: &str) -> Option<Corpus> {
    let m = std::fs::read_to_string(dir.join(MARKER)).ok()?;
    if m.lines().next() != Some(want) {
        return None;
    }
    let parse = |k: &str| {
        m.lines()
            .find_map(|l| l.strip_prefix(k))?
            .parse::<u64>()
            .ok()
    };
    Some(Corpus {
        files: parse("files=")? as usize,
        bytes: parse("actual_bytes=")?,
    })
}

/// Generate the seeded corpus into `dir` (created; must not exist, or hold
/// exactly this corpus, which is then reused). `small_files = Some(n)`
/// writes `n` files of 1-4 KB instead of `total_bytes` of 100 KB - 2 MB
/// files. The corpus is built beside `dir` and moved into place when
/// complete.
pub fn generate(
    dir: &Path,
    total_bytes: u64,
    seed: u64,
    small_files: Option<usize>,
) -> std::io::Result<Corpus> {
    let want = marker_text(total_bytes, seed, small_files);
    if let Some(c) = reuse(dir, &want) {
        return Ok(c);
    }
    let tmp = dir.with_extension(format!("tmp{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let vocab = Vocab::new(seed);
    let specs = plan(total_bytes, seed, small_files);
    let mut dirs: Vec<PathBuf> = specs
        .iter()
        .filter_map(|s| s.rel.parent().map(|p| tmp.join(p)))
        .collect();
    dirs.sort();
    dirs.dedup();
    for d in &dirs {
        std::fs::create_dir_all(d)?;
    }
    let bytes = specs
        .par_iter()
        .map(|s| {
            let out = session(s, &vocab);
            std::fs::write(tmp.join(&s.rel), &out).map(|()| out.len() as u64)
        })
        .sum::<std::io::Result<u64>>()?;
    let corpus = Corpus {
        files: specs.len(),
        bytes,
    };
    std::fs::write(
        tmp.join(MARKER),
        format!("{want}\nfiles={}\nactual_bytes={bytes}\n", corpus.files),
    )?;
    let _ = std::fs::remove_dir_all(dir);
    std::fs::rename(&tmp, dir)?;
    Ok(corpus)
}

/// One seeded session file of about `bytes` bytes, with the sizes of the
/// full corpus; returns the bytes written.
pub fn generate_one(path: &Path, bytes: u64, seed: u64) -> std::io::Result<u64> {
    let mut r = Rng::with_seed(seed);
    let project = r.pick(PROJECTS);
    let spec = Spec {
        rel: PathBuf::new(),
        target: bytes as usize,
        seed: r.u64(..),
        session_id: uuid(&mut Rng::with_seed(seed ^ 0x1D5)),
        cwd: format!("/home/dev/projects/{project}"),
        branch: "main".to_string(),
        agent_id: None,
        start_ms: BASE_MS,
        profile: Profile::FULL,
    };
    let out = session(&spec, &Vocab::new(seed));
    std::fs::write(path, &out)?;
    Ok(out.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_covers_its_size_and_nests_subagents() {
        let specs = plan(20_000_000, 42, None);
        let total: usize = specs.iter().map(|s| s.target).sum();
        assert!((20_000_000..22_500_000).contains(&total), "{total}");
        let subagents: Vec<&Spec> = specs.iter().filter(|s| s.agent_id.is_some()).collect();
        assert!(!subagents.is_empty());
        for s in subagents {
            let folder = s.rel.parent().unwrap();
            assert!(folder.ends_with(Path::new(&s.session_id).join("subagents")));
        }
        let small = plan(0, 42, Some(250));
        assert_eq!(small.len(), 250);
        assert!(small[249].rel.starts_with("p002"));
    }

    #[test]
    fn same_seed_same_corpus_and_a_marker_reuses_it() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        let ca = generate(&a, 0, 9, Some(20)).unwrap();
        let cb = generate(&b, 0, 9, Some(20)).unwrap();
        assert_eq!((ca.files, ca.bytes), (cb.files, cb.bytes));
        for s in plan(0, 9, Some(20)) {
            let (x, y) = (a.join(&s.rel), b.join(&s.rel));
            assert_eq!(std::fs::read(x).unwrap(), std::fs::read(y).unwrap());
        }
        // Reused: a file removed from a marked corpus is not written again.
        let first = a.join(&plan(0, 9, Some(20))[0].rel);
        std::fs::remove_file(&first).unwrap();
        let again = generate(&a, 0, 9, Some(20)).unwrap();
        assert_eq!(again.bytes, ca.bytes);
        assert!(!first.exists());
    }
}
