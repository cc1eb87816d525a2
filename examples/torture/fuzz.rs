//! Fuzz: the query sanitizer (every output run as an FTS5 `MATCH`) and
//! every transcript and ticket parser on mutated fixture files.

use std::path::Path;

use anyhow::Result;
use synth::Rng;

use crate::{row, Row};

/// The fuzz scenario: `inputs` queries and mutated files in all.
pub fn fuzzing(inputs: u64, seed: u64) -> Result<Vec<Row>> {
    use recall::recall::sanitize::{extract_terms, to_match};
    let c = rusqlite::Connection::open_in_memory()?;
    c.execute_batch(
        "CREATE VIRTUAL TABLE t USING fts5(title, body, aux, tokenize = 'unicode61 remove_diacritics 2');
         INSERT INTO t VALUES ('redis pool', 'the checkout redis pool is exhausted', 'redi pool');",
    )?;
    let alphabet: Vec<char> =
        "abcXYZ019 \"'*^:-+()[]{}.,;!?/\\<>=&|~`#@$%_\t\nNOTANDORNEAR éü中文🙂\u{202e}\u{0}"
            .chars()
            .collect();
    let mut r = Rng::with_seed(seed);
    let (mut panics, mut sql_errors) = (0u64, 0u64);
    let query_inputs = inputs * 4 / 5;
    for _ in 0..query_inputs {
        let len = r.usize(..60);
        let q: String = (0..len)
            .map(|_| alphabet[r.usize(..alphabet.len())])
            .collect();
        let res = std::panic::catch_unwind(|| to_match(&extract_terms(&q)));
        match res {
            Err(_) => panics += 1,
            Ok(Some(m)) => {
                if c.prepare_cached("SELECT count(*) FROM t WHERE t MATCH ?1")
                    .and_then(|mut st| st.query_row([&m], |row| row.get::<_, i64>(0)))
                    .is_err()
                {
                    sql_errors += 1;
                }
            }
            Ok(None) => {}
        }
    }
    // Parsers on mutated fixtures.
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let files: Vec<Vec<u8>> = walkdir::WalkDir::new(&fixtures)
        .into_iter()
        .flatten()
        .filter(|e| {
            e.path()
                .extension()
                .is_some_and(|x| x == "jsonl" || x == "json" || x == "md" || x == "txt")
        })
        .filter_map(|e| std::fs::read(e.path()).ok())
        .collect();
    let opts = recall::ingest::claude_code::Options::default();
    let copts = recall::ingest::codex::Options::default();
    let parser_inputs = inputs - query_inputs;
    for i in 0..parser_inputs {
        let mut b = files[(i as usize) % files.len()].clone();
        for _ in 0..1 + r.u64(..8) {
            if b.is_empty() {
                break;
            }
            let at = r.usize(..b.len());
            match r.u64(..4) {
                0 => b[at] ^= 1 << r.u64(..8),
                1 => b.truncate(at),
                2 => b.insert(at, b"{}[]\":,\n\\"[r.usize(..9)]),
                _ => drop(b.remove(at)),
            }
        }
        let ok = std::panic::catch_unwind(|| {
            recall::ingest::claude_code::parse(&b, 1, "f", &opts);
            recall::ingest::codex::parse(&b, 1, "f", &copts);
            recall::ingest::neutral::parse(&b, 1, "f");
            recall::ingest::chatlog::parse(&b, "f");
            let _ = recall::ingest::ticket::parse(&b, "f");
        });
        panics += u64::from(ok.is_err());
    }
    Ok(vec![
        row(
            "fuzz",
            "inputs (queries + mutated files)",
            format!("{query_inputs} + {parser_inputs}"),
            "",
            true,
        ),
        row("fuzz", "panics", panics, "0", panics == 0),
        row(
            "fuzz",
            "MATCH expressions SQLite rejected",
            sql_errors,
            "0",
            sql_errors == 0,
        ),
    ])
}
