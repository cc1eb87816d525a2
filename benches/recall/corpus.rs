//! The bench's corpus: a home with one project whose index holds seeded
//! session passages and records (see "Generation" in `main.rs`), reused
//! when its marker says it is the one asked for; and the tickets asked of
//! it.

use std::path::{Path, PathBuf};
use std::sync::mpsc::sync_channel;
use std::time::{Duration, Instant};

use rayon::prelude::*;
use recall::index::{sync_records, Progress};
use recall::ingest::chunk::{chunk_messages, Chunk, ChunkOptions};
use recall::ingest::model::{Message, Role};
use recall::recall::plan::Table;
use recall::records::{record_path, render_record, Category, Limits, Record, Source};
use recall::store::{Db, Home, OpenMode, Project, Scope};
use rusqlite::params;
use synth::conversation::{Conversation, Lengths};
use synth::Vocab;

use crate::{arg, num, DEFAULT_SEED, NOW};

/// Bump when the generator's output changes (invalidates cached corpora).
pub const GEN_VERSION: u32 = 2;
/// Written last into a complete home.
const MARKER: &str = ".recall-bench.json";
const TX_CHUNKS: usize = 20_000;
/// Mixed into the corpus seed for the tickets' own.
const TICKET_SEED: u64 = 0x7469_636B;

/// Passages per session, for every session, summing to `total`.
pub fn layout(seed: u64, total: usize) -> Vec<usize> {
    synth::conversation::sizes(seed, total, 8, 128)
}

struct ChunkRow {
    chunk: Chunk,
    aux: String,
}

struct SessionRows {
    path: String,
    session_id: String,
    title: String,
    cwd: String,
    branch: String,
    first_ts: i64,
    last_ts: i64,
    messages: usize,
    bytes: usize,
    chunks: Vec<ChunkRow>,
}

fn chunk_opts() -> ChunkOptions {
    ChunkOptions::default()
}

/// Session `s` of the corpus: the shared generator's conversation, cut
/// into passages by recall's own chunker until it gives `n_chunks`
/// complete ones.
fn gen_session(v: &Vocab, seed: u64, s: usize, n_chunks: usize) -> SessionRows {
    let mut talk = Conversation::new(v, seed, s, NOW, Lengths::CHAT);
    let mut msgs: Vec<Message> = Vec::new();
    // Generate messages until the chunker gives more chunks than needed, so
    // the last one kept is complete.
    let mut words = 0usize;
    let mut need = (n_chunks + 1) * chunk_opts().target_words;
    let mut chunks = loop {
        while words < need {
            // The conversation never ends.
            let m = talk.next().expect("another message");
            words += m.words;
            msgs.push(Message {
                id: Some(m.id),
                role: match m.role {
                    synth::conversation::Role::User => Role::User,
                    synth::conversation::Role::Assistant => Role::Assistant,
                    synth::conversation::Role::Tool => Role::Tool,
                },
                name: None,
                text: m.text,
                timestamp: Some(m.ts),
                is_error: false,
            });
        }
        let chunks = chunk_messages(&msgs, 0, &chunk_opts());
        if chunks.len() > n_chunks {
            break chunks;
        }
        need += (n_chunks + 1 - chunks.len()) * chunk_opts().target_words;
    };
    chunks.truncate(n_chunks);
    let messages = chunks.last().map_or(0, |c| c.msg_last + 1);
    let last_ts = chunks
        .last()
        .and_then(|c| c.last_ts)
        .unwrap_or(talk.first_ts);
    let bytes: usize = msgs[..messages].iter().map(|m| m.text.len() + 200).sum();
    let chunks = chunks
        .into_iter()
        .map(|c| ChunkRow {
            aux: recall::text::aux_terms(&c.text),
            chunk: c,
        })
        .collect();
    SessionRows {
        path: format!(
            "/home/dev/.claude/projects/-home-dev-{}/{}.jsonl",
            talk.project, talk.session_id
        ),
        session_id: talk.session_id,
        title: talk.title,
        cwd: talk.cwd,
        branch: talk.branch,
        first_ts: talk.first_ts,
        last_ts,
        messages,
        bytes,
        chunks,
    }
}

fn spans_json(c: &Chunk) -> String {
    let v: Vec<serde_json::Value> = c
        .spans
        .iter()
        .map(|s| serde_json::json!([s.start, s.end, s.msg, s.id]))
        .collect();
    serde_json::Value::Array(v).to_string()
}

#[derive(Default, serde::Serialize)]
struct ChunkStats {
    sessions: usize,
    chunks: usize,
    messages: usize,
    words_min: usize,
    words_max: usize,
    words_mean: f64,
    body_bytes: u64,
    aux_bytes: u64,
    seconds: f64,
}

fn insert_chunks(db: &mut Db, v: &Vocab, seed: u64, total: usize) -> ChunkStats {
    let t0 = Instant::now();
    let plan = layout(seed, total);
    let mut st = ChunkStats {
        sessions: plan.len(),
        words_min: usize::MAX,
        ..Default::default()
    };
    let (tx_send, rx) = sync_channel::<Vec<SessionRows>>(4);
    let mut word_sum = 0u64;
    std::thread::scope(|scope| {
        let plan = &plan;
        scope.spawn(move || {
            const BATCH: usize = 64;
            for lo in (0..plan.len()).step_by(BATCH) {
                let hi = (lo + BATCH).min(plan.len());
                let batch: Vec<SessionRows> = (lo..hi)
                    .into_par_iter()
                    .map(|s| gen_session(v, seed, s, plan[s]))
                    .collect();
                if tx_send.send(batch).is_err() {
                    return;
                }
            }
        });
        let conn = db.writer().expect("writer");
        let mut tx = conn.unchecked_transaction().expect("begin");
        // Term statistics, kept as the indexer keeps them (flushed with
        // each commit).
        let mut stats = recall::store::TermDeltas::default();
        let mut in_tx = 0usize;
        let mut last_report = Instant::now();
        for batch in rx {
            for s in batch {
                tx.prepare_cached(
                    "INSERT INTO sources(path, kind, format, size, mtime, hash, parser_version, offset, messages, state, indexed_at)
                     VALUES(?1, 'session', 'claude-code', ?2, ?3, ?4, 1, ?2, ?5, NULL, ?6)",
                )
                .and_then(|mut q| {
                    q.execute(params![
                        s.path,
                        s.bytes as i64,
                        s.last_ts * 1_000_000_000,
                        blake3::hash(s.path.as_bytes()).to_hex().to_string(),
                        s.messages as i64,
                        NOW
                    ])
                })
                .expect("insert source");
                let source_id = tx.last_insert_rowid();
                // An agent's work on a task, as `recall index` marks it.
                let work = s.chunks.iter().any(|r| r.chunk.roles.contains(&Role::Tool));
                stats.sessions_changed();
                tx.prepare_cached(
                    "INSERT INTO sessions(source_id, session_id, launcher, parent_id, title, cwd, git_branch, first_ts, last_ts, messages, work)
                     VALUES(?1, ?2, 'claude-code', NULL, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                )
                .and_then(|mut q| {
                    q.execute(params![source_id, s.session_id, s.title, s.cwd, s.branch, s.first_ts, s.last_ts, s.messages as i64, work])
                })
                .expect("insert session");
                let mut ins_chunk = tx
                    .prepare_cached(
                        "INSERT INTO chunks(source_id, session_id, seq, msg_first, msg_last, message_ids, spans, roles, speakers,
                            first_ts, last_ts, launcher, cwd, git_branch)
                         VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,'claude-code',?12,?13)",
                    )
                    .expect("prepare chunk");
                let mut ins_fts = tx
                    .prepare_cached(
                        "INSERT INTO chunks_fts(rowid, title, body, aux) VALUES(?1,?2,?3,?4)",
                    )
                    .expect("prepare fts");
                for (seq, row) in s.chunks.iter().enumerate() {
                    let k = &row.chunk;
                    let roles: Vec<&str> = k.roles.iter().map(|r| r.as_str()).collect();
                    ins_chunk
                        .execute(params![
                            source_id,
                            s.session_id,
                            seq as i64,
                            k.msg_first as i64,
                            k.msg_last as i64,
                            serde_json::to_string(&k.message_ids).expect("json"),
                            spans_json(k),
                            serde_json::to_string(&roles).expect("json"),
                            serde_json::to_string(&k.speakers).expect("json"),
                            k.first_ts,
                            k.last_ts,
                            s.cwd,
                            s.branch
                        ])
                        .expect("insert chunk");
                    let rowid = tx.last_insert_rowid();
                    ins_fts
                        .execute(params![rowid, s.title, k.text, row.aux])
                        .expect("insert fts");
                    recall::index::note_root(&tx, rowid, &s.session_id).expect("insert root");
                    stats.add(Table::Chunks, &[&s.title, &k.text, &row.aux]);
                    let w = recall::ingest::chunk::count_words(&k.text);
                    st.words_min = st.words_min.min(w);
                    st.words_max = st.words_max.max(w);
                    word_sum += w as u64;
                    st.body_bytes += k.text.len() as u64;
                    st.aux_bytes += row.aux.len() as u64;
                    st.chunks += 1;
                    in_tx += 1;
                }
                st.messages += s.messages;
                drop(ins_chunk);
                drop(ins_fts);
                if in_tx >= TX_CHUNKS {
                    stats.flush(&tx).expect("term stats");
                    tx.commit().expect("commit");
                    tx = conn.unchecked_transaction().expect("begin");
                    in_tx = 0;
                }
                if last_report.elapsed() > Duration::from_secs(30) {
                    last_report = Instant::now();
                    eprintln!(
                        "[generate] {} / {total} chunks, {:.0} s",
                        st.chunks,
                        t0.elapsed().as_secs_f64()
                    );
                }
            }
        }
        stats.flush(&tx).expect("term stats");
        tx.commit().expect("commit");
    });
    st.words_mean = word_sum as f64 / st.chunks.max(1) as f64;
    st.seconds = t0.elapsed().as_secs_f64();
    st
}

/// `n` records about the topics of the corpus's sessions, written as real
/// Markdown files for recall's own sync to index.
fn write_records(v: &Vocab, seed: u64, dir: &recall::store::ScopeDir, n: usize, n_sessions: usize) {
    let now = jiff::Timestamp::from_second(NOW).expect("constant");
    let facts = synth::records::facts(v, seed, n, n_sessions, Category::ALL.len());
    facts.par_iter().enumerate().for_each(|(i, f)| {
        let cat = Category::ALL[f.category];
        let mut r = Record::new(&f.key, cat, Scope::Project, Source::Manual, &f.body, now);
        r.meta.keywords = f.keywords.clone();
        r.meta.importance = (30 + (i * 7919) % 60) as u8;
        let path = record_path(dir, cat, &r.meta.id);
        // Plain writes: `atomic_write`'s two fsyncs per file would make
        // this take minutes and change nothing the query path sees.
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, render_record(&r).expect("valid record")).expect("write record");
    });
}

fn dir_bytes(p: &Path) -> u64 {
    ["", "-wal", "-shm"]
        .iter()
        .filter_map(|s| std::fs::metadata(format!("{}{s}", p.display())).ok())
        .map(|m| m.len())
        .sum()
}

/// What a corpus is made of; the marker holds it, so a home is reused only
/// for the same spec.
#[derive(serde::Serialize, serde::Deserialize, Clone, PartialEq, Debug)]
pub struct Spec {
    pub gen_version: u32,
    pub seed: u64,
    pub project: String,
    pub records: usize,
    pub chunks: usize,
}

/// Build (or reuse) the corpus; returns the marker JSON.
pub fn generate(home: &Path, spec: &Spec) -> serde_json::Value {
    let marker = home.join(MARKER);
    if let Ok(text) = std::fs::read_to_string(&marker) {
        let v: serde_json::Value = serde_json::from_str(&text).expect("marker json");
        let old: Spec = serde_json::from_value(v["spec"].clone()).expect("marker spec");
        if &old == spec {
            // Brought to this build's schema (opening to write migrates):
            // the hooks read an index as they find it, so a corpus left at
            // an older schema would be timed without what the new one adds.
            let h = Home::new(home);
            let project = Project::resolve(&h, Some(&spec.project), home).expect("project");
            Db::open(&project.dir.index_path(), OpenMode::ReadWrite).expect("migrate");
            let mut v = v;
            v["reused"] = true.into();
            return v;
        }
    }
    if home.exists() {
        std::fs::remove_dir_all(home).expect("clear home");
    }
    let t0 = Instant::now();
    let h = Home::new(home);
    h.ensure().expect("home");
    let project = Project::resolve(&h, Some(&spec.project), home).expect("project");
    project.ensure().expect("project.json");
    let vocab = Vocab::new(spec.seed);
    let n_sessions = layout(spec.seed, spec.chunks).len();
    let mut db = Db::open(&project.dir.index_path(), OpenMode::ReadWrite).expect("open");

    let tr = Instant::now();
    write_records(&vocab, spec.seed, &project.dir, spec.records, n_sessions);
    let write_s = tr.elapsed().as_secs_f64();
    let rep = sync_records(
        db.writer().expect("writer"),
        &project.dir,
        &Limits::default(),
        false,
        &Progress::hidden(),
    )
    .expect("sync records");
    assert_eq!(rep.added, spec.records, "records indexed: {:?}", rep.errors);
    let records_s = tr.elapsed().as_secs_f64();
    eprintln!(
        "[generate] {} records in {records_s:.1} s (files {write_s:.1} s)",
        spec.records
    );

    let cs = insert_chunks(&mut db, &vocab, spec.seed, spec.chunks);
    let tc = Instant::now();
    db.writer()
        .expect("writer")
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
        .expect("checkpoint");
    let checkpoint_s = tc.elapsed().as_secs_f64();
    drop(db);
    let index = project.dir.index_path();
    let out = serde_json::json!({
        "spec": spec,
        "reused": false,
        "project_id": project.info.id,
        "index": index,
        "seconds": t0.elapsed().as_secs_f64(),
        "records_seconds": records_s,
        "records_file_seconds": write_s,
        "chunks": cs,
        "checkpoint_seconds": checkpoint_s,
        "db_bytes": dir_bytes(&index),
    });
    std::fs::write(&marker, serde_json::to_string_pretty(&out).expect("json")).expect("marker");
    out
}

/// `generate`: build or reuse the corpus; prints the marker as JSON.
pub fn cmd_generate(args: &[String]) {
    let home = PathBuf::from(arg(args, "--home").expect("--home DIR"));
    let spec = Spec {
        gen_version: GEN_VERSION,
        seed: num(args, "--seed", DEFAULT_SEED),
        project: arg(args, "--project").unwrap_or("bench").to_string(),
        records: num(args, "--records", 100_000) as usize,
        chunks: num(args, "--chunks", 1_000_000) as usize,
    };
    let out = generate(&home, &spec);
    println!("{}", serde_json::to_string(&out).expect("json"));
}

/// Ticket `i` of the set: `words` words about one session's topic.
pub fn ticket(v: &Vocab, spec_seed: u64, n_sessions: usize, i: usize, words: usize) -> String {
    synth::tickets::ticket(v, spec_seed ^ TICKET_SEED, n_sessions, i, words)
}

/// The marker of the corpus in `home`.
pub fn read_marker(home: &Path) -> serde_json::Value {
    let text =
        std::fs::read_to_string(home.join(MARKER)).expect("no corpus marker: run `generate` first");
    serde_json::from_str(&text).expect("marker json")
}

/// `tickets`: write the seeded tickets of the corpus in `--home`.
pub fn cmd_tickets(args: &[String]) {
    let home = PathBuf::from(arg(args, "--home").expect("--home DIR"));
    let out = PathBuf::from(arg(args, "--out").expect("--out DIR"));
    let count = num(args, "--count", 20) as usize;
    let words = num(args, "--words", 300) as usize;
    let m = read_marker(&home);
    let spec: Spec = serde_json::from_value(m["spec"].clone()).expect("spec");
    let seed = num(args, "--seed", spec.seed);
    let vocab = Vocab::new(spec.seed);
    let n_sessions = layout(spec.seed, spec.chunks).len();
    std::fs::create_dir_all(&out).expect("mkdir");
    for i in 0..count {
        let t = ticket(&vocab, seed, n_sessions, i, words);
        assert_eq!(t.split_whitespace().count(), words);
        std::fs::write(out.join(format!("ticket-{i:02}.txt")), t).expect("write ticket");
    }
    println!(
        "{}",
        serde_json::json!({"tickets": count, "words": words, "dir": out})
    );
}
