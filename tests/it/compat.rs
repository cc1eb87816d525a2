//! A frozen index written by schema version 1 (`testdata/compat/index-v1.db`)
//! is upgraded in place by the current migrations and still answers queries.

use std::path::PathBuf;

use crate::common::{user_version, Env};

#[test]
fn a_version_1_index_is_migrated_and_searchable() {
    let env = Env::new();
    let show: serde_json::Value =
        serde_json::from_str(&env.run(&["project", "show", "--json"])).unwrap();
    let dir = PathBuf::from(show["dir"].as_str().unwrap());
    std::fs::create_dir_all(&dir).unwrap();
    let frozen = crate::common::testdata("compat/index-v1.db");
    std::fs::copy(&frozen, dir.join("index.db")).unwrap();
    assert_eq!(user_version(&dir.join("index.db")), 1);

    let v = env.query_json("alpha", "ledger postgres migration");
    let kinds: Vec<&str> = v["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["kind"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"record") && kinds.contains(&"session"),
        "{v}"
    );

    assert_eq!(
        user_version(&dir.join("index.db")),
        recall::store::SCHEMA_VERSION
    );
    let c = rusqlite::Connection::open(dir.join("index.db")).unwrap();
    let vocab: i64 = c
        .query_row(
            "SELECT count(*) FROM chunks_vocab WHERE term = 'ledger'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(vocab, 1);
    // The frozen file itself is untouched.
    assert_eq!(user_version(&frozen), 1);
}
