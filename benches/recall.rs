//! End-to-end recall latency.
//!
//! Criterion bench (`cargo bench --bench recall`):
//! - `recall/ticket_query/100k_chunks`: the library call
//!   `recall::recall::recall` (plan + fetch + rank, the database already
//!   open, like one query of a running process) with seeded 300-word
//!   tickets, round-robin, against a generated project of 10,000 records
//!   and 100,000 session chunks. `RECALL_BENCH_CHUNKS` / `_RECORDS` change
//!   the size (the name follows the chunk count).
//!
//! The same binary has helper modes used by `scripts/bench-recall.sh` (run
//! it directly, or `cargo bench --bench recall -- <mode> ...`):
//! - `generate --home H --project NAME --records N --chunks N [--seed S]`:
//!   build the project's index (see "Generation" below); reused when the
//!   marker `H/.recall-bench.json` says H already holds that corpus.
//!   Prints JSON (timings, sizes).
//! - `tickets --home H --out DIR --count N [--words W] [--seed S]`: write
//!   seeded tickets `DIR/ticket-NN.txt`, each of exactly W words and each
//!   about the topic of one generated session.
//! - `compare --recall BIN --floor BIN --home H --project NAME --tickets DIR
//!   [--reps N] [--naive-reps N] [--json FILE]`: the end-to-end comparison;
//!   prints a Markdown report (see `cmd_compare`).
//!
//! Generation (seeded, byte-identical for the same seed and sizes):
//! - vocabulary: ~330 English words of coding talk in frequency order, then
//!   30,000 pseudo-words (rare domain vocabulary), sampled together from one
//!   Zipf(1) distribution; plus Zipf-sampled code identifiers, CamelCase
//!   types and file paths, numbers and hashes. Each session has a topic of
//!   40 rare words and identifiers that make up ~8% of its words, so rare
//!   terms cluster by session as they do in real transcripts;
//! - sessions: 8–128 chunks each; user/assistant/tool messages cut into
//!   per-message passages by the real chunker
//!   (`recall::ingest::chunk::chunk_messages` with its default options), so
//!   `spans` and `message_ids` are exactly what `recall index` writes;
//! - rows go straight into `sources`, `sessions`, `chunks` and
//!   `chunks_fts(title, body, aux = recall::text::aux_terms(body))`, with
//!   the term statistics the indexer keeps (`recall::store::TermDeltas`),
//!   in transactions of 20,000 chunks (the indexer's batch size), after
//!   `Db::open(.., ReadWrite)` created the schema with the migrations;
//! - records are real Markdown files written with `render_record` and then
//!   indexed by `recall::index::sync_records`, so `records`, `records_fts`
//!   and `record_dirs` are exactly what `recall` itself writes, and the
//!   query path's stat check of the record folders runs for real.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::sync_channel;
use std::time::{Duration, Instant};

use criterion::Criterion;
use rayon::prelude::*;
use recall::index::{sync_records, Progress};
use recall::ingest::chunk::{chunk_messages, Chunk, ChunkOptions};
use recall::ingest::model::{Message, Role};
use recall::recall::plan::{plan, Table};
use recall::recall::{extract_terms, recall as run_recall, sanitize, Request, Target, Tuning};
use recall::records::{record_path, render_record, Category, Limits, Record, Source};
use recall::store::{Db, Home, OpenMode, Project, Scope};
use rusqlite::params;

/// Bump when the generator's output changes (invalidates cached corpora).
const GEN_VERSION: u32 = 1;
/// Written last into a complete home.
const MARKER: &str = ".recall-bench.json";
const DEFAULT_SEED: u64 = 42;
/// Fixed "now" of the generated corpus (timestamps go back a year from it).
const NOW: i64 = 1_767_225_600; // 2026-01-01T00:00:00Z
const TX_CHUNKS: usize = 20_000;

// ---------------------------------------------------------------------------
// Deterministic randomness

/// SplitMix64.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03);
        r.next();
        r
    }
    /// An independent stream for item `i` of stream `tag`.
    fn derive(seed: u64, tag: u64, i: u64) -> Rng {
        Rng::new(
            seed ^ tag.wrapping_mul(0xA24B_AED4_963E_E407) ^ i.wrapping_mul(0x9FB2_1C65_1E98_DF25),
        )
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next()) * n as u128) >> 64) as usize
    }
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }
    fn chance(&mut self, per_mille: u32) -> bool {
        self.below(1000) < per_mille as usize
    }
    fn w<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
    /// Roughly log-uniform in `lo..=hi`.
    fn log_uniform(&mut self, lo: usize, hi: usize) -> usize {
        let (a, b) = ((lo as f64).ln(), (hi as f64 + 1.0).ln());
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        ((a + (b - a) * u).exp() as usize).clamp(lo, hi)
    }
}

/// Zipf(1) over `n` ranks.
struct Zipf {
    cum: Vec<u64>,
}

impl Zipf {
    fn new(n: usize) -> Zipf {
        let mut acc = 0u64;
        let cum = (0..n)
            .map(|r| {
                acc += 1_000_000_000_000 / (r as u64 + 1);
                acc
            })
            .collect();
        Zipf { cum }
    }
    fn sample(&self, rng: &mut Rng) -> usize {
        let t = rng.next() % self.cum.last().expect("non-empty");
        self.cum.partition_point(|&c| c <= t)
    }
}

// ---------------------------------------------------------------------------
// Vocabulary

/// English of coding conversations, most frequent first.
const ENGLISH: &[&str] = &[
    "the",
    "to",
    "and",
    "a",
    "of",
    "is",
    "in",
    "it",
    "that",
    "this",
    "for",
    "we",
    "i",
    "you",
    "be",
    "on",
    "not",
    "with",
    "as",
    "can",
    "should",
    "will",
    "are",
    "if",
    "now",
    "so",
    "but",
    "let",
    "me",
    "check",
    "file",
    "test",
    "when",
    "from",
    "there",
    "which",
    "then",
    "need",
    "use",
    "all",
    "one",
    "have",
    "was",
    "what",
    "code",
    "an",
    "by",
    "or",
    "at",
    "do",
    "make",
    "sure",
    "still",
    "also",
    "only",
    "see",
    "run",
    "fix",
    "change",
    "because",
    "error",
    "function",
    "issue",
    "value",
    "looks",
    "like",
    "instead",
    "first",
    "again",
    "into",
    "without",
    "after",
    "before",
    "update",
    "works",
    "failing",
    "failed",
    "returns",
    "called",
    "missing",
    "found",
    "right",
    "wrong",
    "problem",
    "approach",
    "current",
    "new",
    "every",
    "each",
    "other",
    "same",
    "case",
    "edge",
    "handle",
    "add",
    "added",
    "remove",
    "keep",
    "move",
    "rename",
    "split",
    "merge",
    "branch",
    "commit",
    "review",
    "comment",
    "question",
    "since",
    "while",
    "until",
    "however",
    "actually",
    "probably",
    "maybe",
    "already",
    "just",
    "more",
    "less",
    "most",
    "many",
    "some",
    "any",
    "no",
    "yes",
    "good",
    "fine",
    "broken",
    "flaky",
    "slow",
    "fast",
    "large",
    "small",
    "empty",
    "part",
    "step",
    "plan",
    "idea",
    "reason",
    "result",
    "output",
    "input",
    "memory",
    "disk",
    "network",
    "request",
    "response",
    "server",
    "client",
    "database",
    "query",
    "index",
    "table",
    "column",
    "row",
    "rows",
    "schema",
    "migration",
    "transaction",
    "lock",
    "thread",
    "worker",
    "queue",
    "retry",
    "timeout",
    "deadline",
    "latency",
    "throughput",
    "performance",
    "benchmark",
    "profile",
    "allocation",
    "cache",
    "cached",
    "invalidate",
    "config",
    "configuration",
    "settings",
    "option",
    "flag",
    "default",
    "environment",
    "variable",
    "path",
    "directory",
    "folder",
    "files",
    "module",
    "package",
    "dependency",
    "version",
    "release",
    "build",
    "compile",
    "compiler",
    "warning",
    "warnings",
    "errors",
    "panic",
    "crash",
    "stack",
    "trace",
    "log",
    "logs",
    "logging",
    "debug",
    "print",
    "parse",
    "parsing",
    "parser",
    "serialize",
    "format",
    "string",
    "number",
    "list",
    "array",
    "map",
    "key",
    "keys",
    "values",
    "type",
    "types",
    "struct",
    "trait",
    "interface",
    "class",
    "method",
    "field",
    "argument",
    "parameter",
    "return",
    "loop",
    "iterator",
    "closure",
    "callback",
    "async",
    "await",
    "future",
    "event",
    "handler",
    "listener",
    "session",
    "user",
    "account",
    "token",
    "auth",
    "login",
    "permission",
    "security",
    "secret",
    "hash",
    "deploy",
    "deployment",
    "staging",
    "production",
    "docker",
    "container",
    "image",
    "pipeline",
    "job",
    "schedule",
    "running",
    "started",
    "finished",
    "done",
    "implemented",
    "implementation",
    "refactor",
    "cleanup",
    "rewrite",
    "read",
    "write",
    "open",
    "close",
    "create",
    "delete",
    "insert",
    "select",
    "upsert",
    "would",
    "could",
    "might",
    "must",
    "does",
    "did",
    "here",
    "where",
    "why",
    "how",
    "whether",
    "either",
    "understand",
    "explain",
    "confirm",
    "verify",
    "expected",
    "actual",
    "behavior",
    "regression",
    "reproduce",
    "minimal",
    "example",
    "documentation",
    "docs",
    "readme",
    "note",
    "todo",
    "later",
    "today",
    "yesterday",
    "week",
    "customer",
    "team",
    "decided",
    "decision",
    "agreed",
    "prefer",
    "avoid",
    "careful",
];

const VERBS: &[&str] = &[
    "get",
    "set",
    "parse",
    "load",
    "build",
    "read",
    "write",
    "fetch",
    "init",
    "update",
    "handle",
    "create",
    "delete",
    "resolve",
    "validate",
    "render",
    "compute",
    "flush",
    "open",
    "close",
    "spawn",
    "merge",
    "index",
    "query",
    "scan",
    "emit",
    "encode",
    "decode",
    "apply",
    "reset",
    "sync",
    "find",
    "collect",
    "insert",
    "remove",
    "split",
    "join",
    "format",
    "normalize",
    "check",
    "ensure",
    "try",
    "make",
    "register",
    "dispatch",
    "schedule",
    "retry",
    "commit",
    "rollback",
    "serialize",
    "restore",
];

const NOUNS: &[&str] = &[
    "config",
    "cache",
    "token",
    "session",
    "index",
    "chunk",
    "record",
    "source",
    "writer",
    "reader",
    "buffer",
    "request",
    "response",
    "handler",
    "client",
    "server",
    "queue",
    "worker",
    "pool",
    "stream",
    "file",
    "path",
    "entry",
    "node",
    "tree",
    "schema",
    "migration",
    "user",
    "account",
    "event",
    "message",
    "payload",
    "hash",
    "key",
    "value",
    "state",
    "error",
    "result",
    "context",
    "options",
    "manager",
    "registry",
    "builder",
    "parser",
    "lexer",
    "router",
    "controller",
    "service",
    "store",
    "db",
    "transaction",
    "batch",
    "limit",
    "offset",
    "cursor",
    "page",
    "row",
    "column",
    "table",
    "field",
    "item",
    "list",
    "map",
    "set",
    "vec",
    "slice",
    "span",
    "range",
    "line",
    "byte",
    "char",
    "word",
    "term",
    "filter",
    "score",
    "rank",
    "hit",
    "snippet",
    "title",
    "body",
    "label",
    "tag",
    "ticket",
    "issue",
    "project",
    "scope",
    "home",
    "dir",
    "meta",
    "info",
    "stats",
    "metrics",
    "timer",
    "clock",
    "deadline",
    "timeout",
    "backoff",
    "lock",
    "mutex",
    "channel",
    "sender",
    "receiver",
    "thread",
    "task",
    "job",
    "pipeline",
    "stage",
    "step",
    "hook",
    "plugin",
    "module",
];

const ADJS: &[&str] = &[
    "async", "raw", "default", "pending", "max", "min", "local", "remote", "global", "dirty",
    "stale", "new", "old", "next", "prev", "inner", "outer", "total", "last", "first", "active",
    "cached", "shared", "static", "dynamic", "partial", "full", "empty", "valid", "invalid",
];

const EXTS: &[&str] = &[
    "rs", "rs", "rs", "ts", "tsx", "py", "go", "md", "toml", "json",
];
const TOP_DIRS: &[&str] = &[
    "src", "src", "src", "lib", "tests", "packages", "app", "crates",
];
const ONSETS: &[&str] = &[
    "b", "br", "c", "ch", "cl", "d", "dr", "f", "fl", "g", "gr", "h", "j", "k", "l", "m", "n", "p",
    "pl", "pr", "qu", "r", "s", "sh", "sk", "sl", "st", "t", "th", "tr", "v", "w", "z",
];
const VOWELS: &[&str] = &["a", "e", "i", "o", "u", "ai", "ea", "io", "ou", "y"];
const CODAS: &[&str] = &["", "", "n", "r", "l", "s", "t", "m", "nd", "st", "rk", "x"];
const SUFFIXES: &[&str] = &[
    "", "", "", "", "ing", "ed", "s", "er", "ion", "able", "ment", "ly",
];

const TAIL_WORDS: usize = 30_000;
const IDENTS: usize = 8_000;
const TYPES: usize = 2_000;
const FILES: usize = 3_000;
const TOPIC_WORDS: usize = 30;
const TOPIC_IDENTS: usize = 10;

fn cap(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

struct Vocab {
    /// English, then the pseudo-word tail; sampled with `words_z`.
    words: Vec<String>,
    idents: Vec<String>,
    types: Vec<String>,
    files: Vec<String>,
    words_z: Zipf,
    idents_z: Zipf,
    types_z: Zipf,
    files_z: Zipf,
}

impl Vocab {
    fn new(seed: u64) -> Vocab {
        let mut r = Rng::derive(seed, 1, 0);
        let mut seen: HashSet<String> = ENGLISH.iter().map(|w| w.to_string()).collect();
        let mut words: Vec<String> = ENGLISH.iter().map(|w| w.to_string()).collect();
        while words.len() < ENGLISH.len() + TAIL_WORDS {
            let mut w = String::new();
            // 1-3 syllables, mostly 2: words of 4-12 letters.
            let syllables = [1, 2, 2, 2, 2, 3][r.below(6)];
            for k in 0..syllables {
                w.push_str(r.w(ONSETS));
                w.push_str(r.w(VOWELS));
                if k + 1 == syllables || r.chance(300) {
                    w.push_str(r.w(CODAS));
                }
            }
            w.push_str(r.w(SUFFIXES));
            if w.len() >= 4 && seen.insert(w.clone()) {
                words.push(w);
            }
        }
        let mut idents = Vec::with_capacity(IDENTS);
        let mut seen = HashSet::new();
        while idents.len() < IDENTS {
            let (v, n) = (r.w(VERBS), r.w(NOUNS));
            let id = match r.below(10) {
                0..=3 => format!("{v}_{n}"),
                4..=5 => format!("{v}_{}_{n}", r.w(ADJS)),
                6..=8 => format!("{v}{}{}", cap(r.w(ADJS)), cap(n)),
                _ => format!("{}_{}", n.to_uppercase(), r.w(NOUNS).to_uppercase()),
            };
            if seen.insert(id.clone()) {
                idents.push(id);
            }
        }
        let types = (0..TYPES)
            .map(|_| match r.below(3) {
                0 => format!("{}{}", cap(r.w(ADJS)), cap(r.w(NOUNS))),
                _ => format!("{}{}", cap(r.w(NOUNS)), cap(r.w(NOUNS))),
            })
            .collect();
        let files = (0..FILES)
            .map(|_| {
                let mut p = r.w(TOP_DIRS).to_string();
                for _ in 0..r.range(1, 3) {
                    p.push('/');
                    p.push_str(r.w(NOUNS));
                }
                p.push('.');
                p.push_str(r.w(EXTS));
                p
            })
            .collect();
        Vocab {
            words_z: Zipf::new(words.len()),
            words,
            idents,
            types,
            files,
            idents_z: Zipf::new(IDENTS),
            types_z: Zipf::new(TYPES),
            files_z: Zipf::new(FILES),
        }
    }

    /// The topic of session `s`: rare words and identifiers, uniform over
    /// the tail (so each rare word is the topic of only a few sessions).
    fn topic(&self, seed: u64, s: usize) -> Vec<&str> {
        let mut r = Rng::derive(seed, 2, s as u64);
        let mut t: Vec<&str> = (0..TOPIC_WORDS)
            .map(|_| self.words[ENGLISH.len() + r.below(TAIL_WORDS)].as_str())
            .collect();
        t.extend((0..TOPIC_IDENTS).map(|_| self.idents[r.below(IDENTS)].as_str()));
        t
    }
}

// ---------------------------------------------------------------------------
// Text

struct Gen<'v> {
    r: Rng,
    v: &'v Vocab,
    topic: Vec<&'v str>,
    /// Per mille of words taken from the topic.
    topic_rate: u32,
}

impl<'v> Gen<'v> {
    fn word(&mut self, s: &mut String) {
        if self.r.chance(self.topic_rate) {
            let w = self.topic[self.r.below(self.topic.len())];
            s.push_str(w);
            return;
        }
        match self.r.below(1000) {
            0..=879 => s.push_str(&self.v.words[self.v.words_z.sample(&mut self.r)]),
            880..=939 => {
                let w = &self.v.idents[self.v.idents_z.sample(&mut self.r)];
                let tick = self.r.chance(500);
                if tick {
                    s.push('`');
                }
                s.push_str(w);
                if tick {
                    s.push('`');
                }
            }
            940..=959 => s.push_str(&self.v.types[self.v.types_z.sample(&mut self.r)]),
            960..=979 => {
                s.push('`');
                s.push_str(&self.v.files[self.v.files_z.sample(&mut self.r)]);
                s.push('`');
            }
            980..=994 => {
                let _ = write!(s, "{}", self.r.below(5000));
            }
            _ => {
                for _ in 0..7 {
                    s.push(b"0123456789abcdef"[self.r.below(16)] as char);
                }
            }
        }
    }

    /// About `n` words of sentences; returns the words written.
    fn prose(&mut self, s: &mut String, n: usize) -> usize {
        let mut done = 0;
        while done < n {
            let k = self.r.range(5, 20).min(n - done);
            let start = s.len();
            for i in 0..k {
                if i > 0 {
                    s.push_str(if self.r.chance(60) { ", " } else { " " });
                }
                self.word(s);
            }
            if let Some(c) = s[start..].chars().next().filter(char::is_ascii_lowercase) {
                let up = c.to_ascii_uppercase().to_string();
                s.replace_range(start..start + 1, &up);
            }
            s.push_str(match self.r.below(10) {
                0 => "?",
                1 => ":",
                _ => ".",
            });
            s.push(if self.r.chance(150) { '\n' } else { ' ' });
            done += k;
        }
        while s.ends_with(char::is_whitespace) {
            s.pop();
        }
        done
    }

    /// A few lines of code made of identifiers.
    fn code(&mut self, s: &mut String, lines: usize) {
        s.push_str("\n```\n");
        for _ in 0..lines {
            let f = &self.v.idents[self.v.idents_z.sample(&mut self.r)];
            let a = &self.v.idents[self.v.idents_z.sample(&mut self.r)];
            match self.r.below(3) {
                0 => {
                    let _ = writeln!(
                        s,
                        "let {a} = {f}(&{}, {})?;",
                        self.topic[self.r.below(self.topic.len())],
                        self.r.below(100)
                    );
                }
                1 => {
                    let t = &self.v.types[self.v.types_z.sample(&mut self.r)];
                    let _ = writeln!(s, "fn {f}({a}: &{t}) -> Result<{t}> {{");
                }
                _ => {
                    let _ = writeln!(s, "    {a}.{f}()?;");
                }
            }
        }
        s.push_str("```");
    }

    fn title(&mut self) -> String {
        let mut s = String::new();
        let n = self.r.range(3, 7);
        for i in 0..n {
            if i > 0 {
                s.push(' ');
            }
            if self.r.chance(400) {
                s.push_str(self.topic[self.r.below(self.topic.len())]);
            } else {
                s.push_str(&self.v.words[self.v.words_z.sample(&mut self.r)]);
            }
        }
        cap(&s)
    }
}

fn uuid(r: &mut Rng) -> String {
    let mut s = String::with_capacity(36);
    for (i, n) in [8, 4, 4, 4, 12].into_iter().enumerate() {
        if i > 0 {
            s.push('-');
        }
        for _ in 0..n {
            s.push(b"0123456789abcdef"[r.below(16)] as char);
        }
    }
    s
}

// ---------------------------------------------------------------------------
// Sessions and chunks

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

/// Chunks per session, for every session, summing to `total`.
fn layout(seed: u64, total: usize) -> Vec<usize> {
    let mut r = Rng::derive(seed, 3, 0);
    let mut out = Vec::new();
    let mut left = total;
    while left > 0 {
        let n = r.log_uniform(8, 128).min(left);
        out.push(n);
        left -= n;
    }
    out
}

fn gen_session(v: &Vocab, seed: u64, s: usize, n_chunks: usize) -> SessionRows {
    let mut g = Gen {
        r: Rng::derive(seed, 4, s as u64),
        v,
        topic: v.topic(seed, s),
        topic_rate: 80,
    };
    let session_id = uuid(&mut g.r);
    let title = g.title();
    let project = g.r.w(&["app", "api", "web", "core", "infra"]);
    let cwd = format!("/home/dev/{project}");
    let branch = if g.r.chance(300) {
        "main".to_string()
    } else {
        format!("feat/{}", v.topic(seed, s)[0])
    };
    let first_ts = NOW - 365 * 86_400 + g.r.below(365 * 86_400) as i64;
    let mut ts = first_ts;
    let mut msgs: Vec<Message> = Vec::new();
    // Generate messages until the chunker gives more chunks than needed, so
    // the last one kept is complete.
    let mut words = 0usize;
    let mut need = (n_chunks + 1) * chunk_opts().target_words;
    let mut chunks = loop {
        while words < need {
            let i = msgs.len();
            let role = match (i % 2, g.r.below(10)) {
                (0, _) => Role::User,
                (_, 0) => Role::Tool,
                _ => Role::Assistant,
            };
            let n = match role {
                Role::User => g.r.log_uniform(8, 120),
                Role::Tool => g.r.log_uniform(10, 200),
                _ => g.r.log_uniform(20, 450),
            };
            let mut text = String::with_capacity(n * 7);
            let mut done = g.prose(&mut text, n);
            if role == Role::Assistant && g.r.chance(200) {
                let lines = g.r.range(2, 8);
                g.code(&mut text, lines);
                done += lines * 4;
            }
            ts += g.r.range(5, 240) as i64;
            msgs.push(Message {
                id: Some(uuid(&mut g.r)),
                role,
                name: None,
                text,
                timestamp: Some(ts),
                is_error: false,
            });
            words += done;
        }
        let chunks = chunk_messages(&msgs, 0, &chunk_opts());
        if chunks.len() > n_chunks {
            break chunks;
        }
        need += (n_chunks + 1 - chunks.len()) * chunk_opts().target_words;
    };
    chunks.truncate(n_chunks);
    let messages = chunks.last().map_or(0, |c| c.msg_last + 1);
    let last_ts = chunks.last().and_then(|c| c.last_ts).unwrap_or(first_ts);
    let bytes: usize = msgs[..messages].iter().map(|m| m.text.len() + 200).sum();
    let chunks = chunks
        .into_iter()
        .map(|c| ChunkRow {
            aux: recall::text::aux_terms(&c.text),
            chunk: c,
        })
        .collect();
    SessionRows {
        path: format!("/home/dev/.claude/projects/-home-dev-{project}/{session_id}.jsonl"),
        session_id,
        title,
        cwd,
        branch,
        first_ts,
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
                tx.prepare_cached(
                    "INSERT INTO sessions(source_id, session_id, launcher, parent_id, title, cwd, git_branch, first_ts, last_ts, messages)
                     VALUES(?1, ?2, 'claude-code', NULL, ?3, ?4, ?5, ?6, ?7, ?8)",
                )
                .and_then(|mut q| {
                    q.execute(params![source_id, s.session_id, s.title, s.cwd, s.branch, s.first_ts, s.last_ts, s.messages as i64])
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

// ---------------------------------------------------------------------------
// Records

fn write_records(v: &Vocab, seed: u64, dir: &recall::store::ScopeDir, n: usize, n_sessions: usize) {
    let now = jiff::Timestamp::from_second(NOW).expect("constant");
    let mut keys = HashSet::new();
    let items: Vec<(String, Category, String, Vec<String>)> = (0..n)
        .map(|i| {
            // A record is about the topic of some session, like a fact
            // distilled from it.
            let s = Rng::derive(seed, 5, i as u64).below(n_sessions.max(1));
            let mut g = Gen {
                r: Rng::derive(seed, 6, i as u64),
                v,
                topic: v.topic(seed, s),
                topic_rate: 120,
            };
            let mut key = g.title();
            while !keys.insert(key.clone()) {
                key.push(' ');
                key.push_str(g.topic[g.r.below(g.topic.len())]);
            }
            let mut body = String::new();
            let words = g.r.log_uniform(15, 150);
            g.prose(&mut body, words);
            let tags = (0..g.r.below(4))
                .map(|_| g.topic[g.r.below(g.topic.len())].to_lowercase())
                .collect();
            (
                key,
                Category::ALL[g.r.below(Category::ALL.len())],
                body,
                tags,
            )
        })
        .collect();
    items
        .par_iter()
        .enumerate()
        .for_each(|(i, (key, cat, body, tags))| {
            let mut r = Record::new(key, *cat, Scope::Project, Source::Manual, body, now);
            r.meta.keywords = tags.clone();
            r.meta.importance = (30 + (i * 7919) % 60) as u8;
            let path = record_path(dir, *cat, &r.meta.id);
            // Plain writes: `atomic_write`'s two fsyncs per file would make
            // this take minutes and change nothing the query path sees.
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(&path, render_record(&r).expect("valid record")).expect("write record");
        });
}

// ---------------------------------------------------------------------------
// Generate

fn arg<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
}

fn num(args: &[String], name: &str, default: u64) -> u64 {
    arg(args, name).map_or(default, |s| {
        s.replace('_', "")
            .parse()
            .unwrap_or_else(|_| panic!("bad {name} {s}"))
    })
}

fn dir_bytes(p: &Path) -> u64 {
    ["", "-wal", "-shm"]
        .iter()
        .filter_map(|s| std::fs::metadata(format!("{}{s}", p.display())).ok())
        .map(|m| m.len())
        .sum()
}

#[derive(serde::Serialize, serde::Deserialize, Clone, PartialEq, Debug)]
struct Spec {
    gen_version: u32,
    seed: u64,
    project: String,
    records: usize,
    chunks: usize,
}

/// Build (or reuse) the corpus; returns the marker JSON.
fn generate(home: &Path, spec: &Spec) -> serde_json::Value {
    let marker = home.join(MARKER);
    if let Ok(text) = std::fs::read_to_string(&marker) {
        let v: serde_json::Value = serde_json::from_str(&text).expect("marker json");
        let old: Spec = serde_json::from_value(v["spec"].clone()).expect("marker spec");
        if &old == spec {
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

fn cmd_generate(args: &[String]) {
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

// ---------------------------------------------------------------------------
// Tickets

/// A `words`-word ticket about the topic of one generated session.
fn ticket(v: &Vocab, seed: u64, n_sessions: usize, i: usize, words: usize) -> String {
    let mut r = Rng::derive(seed, 7, i as u64);
    let s = r.below(n_sessions.max(1));
    let mut g = Gen {
        r,
        v,
        topic: v.topic(seed, s),
        topic_rate: 100,
    };
    let mut out = g.title();
    out.push_str("\n\n");
    let mut left = words - out.split_whitespace().count();
    while left > 0 {
        let n = g.r.range(25, 70).min(left);
        let mut p = String::new();
        g.prose(&mut p, n);
        // `prose` counts words by generator calls; trim or pad to exact
        // whitespace-separated words.
        let mut ws: Vec<&str> = p.split_whitespace().collect();
        ws.truncate(left);
        left -= ws.len();
        out.push_str(&ws.join(" "));
        out.push_str("\n\n");
    }
    out.trim_end().to_string()
}

fn read_marker(home: &Path) -> serde_json::Value {
    let text =
        std::fs::read_to_string(home.join(MARKER)).expect("no corpus marker: run `generate` first");
    serde_json::from_str(&text).expect("marker json")
}

fn cmd_tickets(args: &[String]) {
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
        let t = ticket(&vocab, seed ^ 0x7469_636B, n_sessions, i, words);
        assert_eq!(t.split_whitespace().count(), words);
        std::fs::write(out.join(format!("ticket-{i:02}.txt")), t).expect("write ticket");
    }
    println!(
        "{}",
        serde_json::json!({"tickets": count, "words": words, "dir": out})
    );
}

// ---------------------------------------------------------------------------
// The equivalent FTS5 query

fn weights(w: &[f64]) -> String {
    w.iter()
        .map(|x| format!("{x:.3}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The statement recall's chunk candidate query runs (src/recall/candidates.rs),
/// with the MATCH expression and limit inlined and the filters that are
/// no-ops without `--session/--since/--until` left out.
fn chunk_sql(expr: &str, t: &Tuning) -> String {
    let w = weights(&t.chunk_columns);
    format!(
        "SELECT c.rowid, c.session_id, c.seq, c.spans, c.first_ts, c.last_ts, c.hits, c.last_hit, s.path, f.score, b.body, b.title \
         FROM (SELECT rowid, -bm25(chunks_fts, {w}) AS score FROM chunks_fts \
               WHERE chunks_fts MATCH '{}' ORDER BY bm25(chunks_fts, {w}) LIMIT {}) f \
         JOIN chunks c ON c.rowid = f.rowid JOIN chunks_fts b ON b.rowid = f.rowid \
         JOIN sources s ON s.id = c.source_id;",
        expr.replace('\'', "''"),
        t.candidates
    )
}

struct Planned {
    sql: String,
    naive_sql: String,
    terms: Vec<(String, i64)>,
    extracted: usize,
    matched: i64,
}

fn planned(conn: &rusqlite::Connection, ticket: &str) -> Planned {
    let t = Tuning::default();
    let terms = extract_terms(ticket);
    // The chunk table's share of the query's budget, as `recall query`
    // computes it (the bench project has no user-scope index).
    let docs = |t| recall::recall::plan::table_docs(conn, t).expect("docs");
    let total = docs(Table::Records) + docs(Table::Chunks) + docs(Table::Tickets);
    let budget = recall::recall::plan::share(t.plan_budget, docs(Table::Chunks), total);
    let p = plan(conn, Table::Chunks, &terms, budget).expect("plan");
    let expr = p.to_match().expect("the ticket has searchable terms");
    let matched: i64 = conn
        .query_row(
            "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?1",
            [&expr],
            |r| r.get(0),
        )
        .expect("count");
    Planned {
        sql: chunk_sql(&expr, &t),
        naive_sql: chunk_sql(&sanitize(ticket).expect("terms"), &t),
        terms: p
            .terms
            .iter()
            .map(|w| (w.term.text.clone(), w.df))
            .collect(),
        extracted: terms.len(),
        matched,
    }
}

// ---------------------------------------------------------------------------
// Compare

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let x = p / 100.0 * (sorted.len() - 1) as f64;
    let (lo, hi) = (x.floor() as usize, x.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (x - lo as f64)
}

#[derive(serde::Serialize, Default, Clone)]
struct Summary {
    n: usize,
    p50: f64,
    p95: f64,
    mean: f64,
    min: f64,
    max: f64,
}

fn summary(xs: &[f64]) -> Summary {
    let mut s = xs.to_vec();
    s.sort_by(f64::total_cmp);
    Summary {
        n: s.len(),
        p50: percentile(&s, 50.0),
        p95: percentile(&s, 95.0),
        mean: s.iter().sum::<f64>() / s.len().max(1) as f64,
        min: s.first().copied().unwrap_or(f64::NAN),
        max: s.last().copied().unwrap_or(f64::NAN),
    }
}

/// Run `cmd` to completion with output discarded; wall milliseconds.
fn timed(cmd: &mut Command, ok: &[i32]) -> f64 {
    let t = Instant::now();
    let st = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("spawn");
    let ms = t.elapsed().as_secs_f64() * 1e3;
    assert!(
        st.code().is_some_and(|c| ok.contains(&c)),
        "{cmd:?} exited with {st}"
    );
    ms
}

/// [`timed`] with `input` written to the command's stdin.
fn timed_stdin(cmd: &mut Command, input: &[u8], ok: &[i32]) -> f64 {
    use std::io::Write as _;
    let t = Instant::now();
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .expect("write stdin");
    let st = child.wait().expect("wait");
    let ms = t.elapsed().as_secs_f64() * 1e3;
    assert!(
        st.code().is_some_and(|c| ok.contains(&c)),
        "{cmd:?} exited with {st}"
    );
    ms
}

fn cmd_compare(args: &[String]) {
    let recall_bin = arg(args, "--recall").expect("--recall BIN");
    let floor_bin = arg(args, "--floor").expect("--floor BIN");
    let home = PathBuf::from(arg(args, "--home").expect("--home DIR"));
    let project = arg(args, "--project").unwrap_or("bench");
    let tdir = PathBuf::from(arg(args, "--tickets").expect("--tickets DIR"));
    let reps = num(args, "--reps", 10) as usize;
    let naive_reps = num(args, "--naive-reps", 1) as usize;
    let marker = read_marker(&home);
    let index = PathBuf::from(marker["index"].as_str().expect("index path"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&tdir)
        .expect("tickets dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no tickets in {}", tdir.display());
    let tickets: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(f).expect("ticket"))
        .collect();

    // Plan every ticket's floor query with the library (same code, same
    // statistics as recall), outside the timed runs.
    let plans: Vec<Planned> = {
        let db = Db::open(&index, OpenMode::ReadOnly).expect("open");
        db.with_conn(|c| Ok(tickets.iter().map(|t| planned(c, t)).collect()))
            .expect("plan")
    };
    for (f, p) in files.iter().zip(&plans) {
        std::fs::write(f.with_extension("floor.sql"), &p.sql).expect("write sql");
        std::fs::write(f.with_extension("naive.sql"), &p.naive_sql).expect("write sql");
    }
    let recall_cmd = |t: &str, format: &str| {
        let mut c = Command::new(recall_bin);
        c.args(["--home"])
            .arg(&home)
            .args(["--project", project, "query", "--format", format, t]);
        c.env_remove("RECALL_HOME")
            .env_remove("RECALL_PROJECT")
            .env_remove("RUST_LOG");
        c
    };
    // The hook's exact invocation: `recall hook claude-code` with a
    // UserPromptSubmit payload on stdin.
    let hook_cmd = || {
        let mut c = Command::new(recall_bin);
        c.args(["--home"])
            .arg(&home)
            .args(["--project", project, "hook", "claude-code"]);
        c
    };
    let payloads: Vec<Vec<u8>> = tickets
        .iter()
        .map(|t| {
            serde_json::json!({
                "hook_event_name": "UserPromptSubmit",
                "session_id": "bench",
                "cwd": "/",
                "prompt": t,
            })
            .to_string()
            .into_bytes()
        })
        .collect();
    let floor_cmd = |sql: &str| {
        let mut c = Command::new(floor_bin);
        c.arg(&index).arg(sql);
        c
    };

    // Check both sides produce output, and warm the page cache.
    eprintln!("[compare] warm-up: one run of each side per ticket");
    let mut json_runs = Vec::new();
    for (t, p) in tickets.iter().zip(&plans) {
        let out = recall_cmd(t, "prompt").output().expect("recall");
        assert!(
            !out.stdout.is_empty(),
            "recall printed nothing: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let out = floor_cmd(&p.sql).output().expect("floor");
        assert!(
            out.status.success(),
            "floor failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let rows = out
            .stdout
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .count();
        assert!(rows > 0, "the floor query returned no rows");
        let out = recall_cmd(t, "json").output().expect("recall json");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("recall json output");
        json_runs.push(v);
    }

    let (mut rec, mut flo, mut naive) = (
        vec![vec![]; tickets.len()],
        vec![vec![]; tickets.len()],
        vec![],
    );
    let mut hook = Vec::new();
    let mut pair_ratios = Vec::new();
    let mut order: Vec<usize> = (0..tickets.len()).collect();
    let mut rng = Rng::new(0x006F_7264_6572);
    let t0 = Instant::now();
    for rep in 0..reps {
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i + 1));
        }
        for (k, &i) in order.iter().enumerate() {
            let (a, b);
            if (rep + k) % 2 == 0 {
                a = timed(&mut recall_cmd(&tickets[i], "prompt"), &[0, 1]);
                b = timed(&mut floor_cmd(&plans[i].sql), &[0]);
            } else {
                b = timed(&mut floor_cmd(&plans[i].sql), &[0]);
                a = timed(&mut recall_cmd(&tickets[i], "prompt"), &[0, 1]);
            }
            hook.push(timed_stdin(&mut hook_cmd(), &payloads[i], &[0]));
            rec[i].push(a);
            flo[i].push(b);
            pair_ratios.push(a / b);
            if rep < naive_reps {
                naive.push(timed(&mut floor_cmd(&plans[i].naive_sql), &[0]));
            }
        }
        eprintln!(
            "[compare] rep {}/{reps} done ({:.0} s)",
            rep + 1,
            t0.elapsed().as_secs_f64()
        );
    }
    let all = |v: &[Vec<f64>]| v.iter().flatten().copied().collect::<Vec<f64>>();
    let (sr, sf, sn) = (summary(&all(&rec)), summary(&all(&flo)), summary(&naive));
    let sh = summary(&hook);
    let sp = summary(&pair_ratios);
    let per_ticket: Vec<f64> = rec
        .iter()
        .zip(&flo)
        .map(|(r, f)| summary(r).p50 / summary(f).p50)
        .collect();
    let spt = summary(&per_ticket);

    // recall's own breakdown (one --format json run per ticket).
    let key = |k: &str| -> Vec<f64> {
        json_runs
            .iter()
            .filter_map(|v| v["timings_ms"][k].as_f64())
            .collect()
    };
    let timings: Vec<(String, Summary)> = ["plan", "fetch", "search", "rank", "total"]
        .iter()
        .map(|k| (k.to_string(), summary(&key(k))))
        .collect();
    let hits = summary(
        &json_runs
            .iter()
            .map(|v| v["hits"].as_array().map_or(0, Vec::len) as f64)
            .collect::<Vec<_>>(),
    );
    let nterms = summary(
        &plans
            .iter()
            .map(|p| p.terms.len() as f64)
            .collect::<Vec<_>>(),
    );
    let extracted = summary(&plans.iter().map(|p| p.extracted as f64).collect::<Vec<_>>());
    let matched = summary(&plans.iter().map(|p| p.matched as f64).collect::<Vec<_>>());
    let dfsum = summary(
        &plans
            .iter()
            .map(|p| p.terms.iter().map(|t| t.1).sum::<i64>() as f64)
            .collect::<Vec<_>>(),
    );

    let chunks = marker["spec"]["chunks"].as_u64().unwrap_or(0);
    let records = marker["spec"]["records"].as_u64().unwrap_or(0);
    let f2 = |x: f64| format!("{x:.1}");
    let met = sr.p50 <= 1.5 * sf.p50;
    let mut md = String::new();
    let _ = writeln!(md, "| measure ({} tickets × {reps} runs, interleaved) | n | p50 ms | p95 ms | mean ms | min ms | max ms |", tickets.len());
    let _ = writeln!(md, "|---|---|---|---|---|---|---|");
    for (name, s) in [
        ("`recall query --format prompt` (process)", &sr),
        (
            "floor: `sqlite_floor` one equivalent FTS5 query (process)",
            &sf,
        ),
        ("naive floor: all ticket terms OR-ed (process)", &sn),
        (
            "`recall hook claude-code`, UserPromptSubmit payload (process)",
            &sh,
        ),
    ] {
        let _ = writeln!(
            md,
            "| {name} | {} | {} | {} | {} | {} | {} |",
            s.n,
            f2(s.p50),
            f2(s.p95),
            f2(s.mean),
            f2(s.min),
            f2(s.max)
        );
    }
    let _ = writeln!(md);
    let _ = writeln!(md, "| ratio recall / floor | value | target | met? |");
    let _ = writeln!(md, "|---|---|---|---|");
    let _ = writeln!(
        md,
        "| p50 / p50 | {:.2} | ≤ 1.5 | {} |",
        sr.p50 / sf.p50,
        if met { "yes" } else { "no" }
    );
    let _ = writeln!(md, "| p95 / p95 | {:.2} | | |", sr.p95 / sf.p95);
    let _ = writeln!(
        md,
        "| hook p50 / query p50 | {:.2} | ≤ 1.2 | {} |",
        sh.p50 / sr.p50,
        if sh.p50 <= 1.2 * sr.p50 { "yes" } else { "no" }
    );
    let _ = writeln!(
        md,
        "| median of paired run ratios (p5–p95: {:.2}–{:.2}) | {:.2} | | |",
        percentile_of(&pair_ratios, 5.0),
        percentile_of(&pair_ratios, 95.0),
        sp.p50
    );
    let _ = writeln!(
        md,
        "| per-ticket p50 ratio: median (min–max) | {:.2} ({:.2}–{:.2}) | | |",
        spt.p50, spt.min, spt.max
    );
    let _ = writeln!(md);
    let _ = writeln!(
        md,
        "recall's own `timings_ms` (one `--format json` run per ticket; ms, p50 / p95 / max): {}",
        timings
            .iter()
            .map(|(k, s)| format!("{k} {:.1} / {:.1} / {:.1}", s.p50, s.p95, s.max))
            .collect::<Vec<_>>()
            .join("; ")
    );
    let _ = writeln!(md);
    let _ = writeln!(md, "Per ticket (p50 median): sanitizer terms {:.0}, planned chunk terms {:.0}, sum of their df {:.0} (p95 {:.0}), rows the planned MATCH matches {:.0} (p95 {:.0}, {:.2}% of chunks), hits {:.0}.",
        extracted.p50, nterms.p50, dfsum.p50, dfsum.p95, matched.p50, matched.p95, 100.0 * matched.p50 / chunks.max(1) as f64, hits.p50);
    let _ = writeln!(md);
    let _ = writeln!(
        md,
        "Corpus: {records} records, {chunks} chunks, index {:.2} GB; measured in {:.0} s.",
        marker["db_bytes"].as_f64().unwrap_or(0.0) / 1e9,
        t0.elapsed().as_secs_f64()
    );
    print!("{md}");
    if let Some(j) = arg(args, "--json") {
        let out = serde_json::json!({
            "recall_ms": sr, "floor_ms": sf, "naive_floor_ms": sn,
            "ratio_p50": sr.p50 / sf.p50, "ratio_p95": sr.p95 / sf.p95,
            "pair_ratio": sp, "per_ticket_ratio": spt,
            "recall_runs_ms": rec, "floor_runs_ms": flo, "naive_runs_ms": naive,
            "timings_ms": timings.iter().map(|(k, s)| (k.clone(), serde_json::to_value(s).expect("json"))).collect::<serde_json::Map<_, _>>(),
            "tickets": files.iter().zip(&plans).map(|(f, p)| serde_json::json!({
                "file": f, "extracted_terms": p.extracted, "chunk_terms": p.terms, "matched": p.matched,
            })).collect::<Vec<_>>(),
            "corpus": marker,
        });
        std::fs::write(j, serde_json::to_string_pretty(&out).expect("json")).expect("write json");
    }
}

fn percentile_of(xs: &[f64], p: f64) -> f64 {
    let mut s = xs.to_vec();
    s.sort_by(f64::total_cmp);
    percentile(&s, p)
}

// ---------------------------------------------------------------------------
// Criterion

fn bench_ticket_query(c: &mut Criterion) {
    let chunks = std::env::var("RECALL_BENCH_CHUNKS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000usize);
    let records = std::env::var("RECALL_BENCH_RECORDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000usize);
    let spec = Spec {
        gen_version: GEN_VERSION,
        seed: DEFAULT_SEED,
        project: "bench".into(),
        records,
        chunks,
    };
    let tmp;
    let home = match std::env::var_os("RECALL_BENCH_CACHE") {
        Some(d) => PathBuf::from(d).join(format!("recall-{records}r-{chunks}c-seed{DEFAULT_SEED}")),
        None => {
            tmp = tempfile::tempdir().expect("tempdir");
            tmp.path().join("home")
        }
    };
    let t = Instant::now();
    let m = generate(&home, &spec);
    eprintln!(
        "[bench] corpus ready in {:.1} s (reused: {})",
        t.elapsed().as_secs_f64(),
        m["reused"]
    );
    let h = Home::new(&home);
    let project = Project::resolve(&h, Some("bench"), &home).expect("project");
    let db = Db::open(&project.dir.index_path(), OpenMode::ReadWrite).expect("open");
    let vocab = Vocab::new(DEFAULT_SEED);
    let n_sessions = layout(DEFAULT_SEED, chunks).len();
    let tickets: Vec<String> = (0..20)
        .map(|i| ticket(&vocab, DEFAULT_SEED ^ 0x7469_636B, n_sessions, i, 300))
        .collect();
    let now = jiff::Timestamp::from_second(NOW).expect("constant");
    let targets = [Target {
        dir: &project.dir,
        db: &db,
    }];
    let name = if chunks.is_multiple_of(1000) {
        format!("{}k_chunks", chunks / 1000)
    } else {
        format!("{chunks}_chunks")
    };
    let mut g = c.benchmark_group("recall");
    g.sample_size(30)
        .warm_up_time(Duration::from_secs(3))
        .measurement_time(Duration::from_secs(20));
    let mut i = 0;
    g.bench_function(format!("ticket_query/{name}"), |b| {
        b.iter(|| {
            let mut req = Request::new(tickets[i % tickets.len()].clone(), 10, now);
            req.max_tokens = Some(2000);
            i += 1;
            let r = run_recall(&targets, &req).expect("recall");
            assert!(!r.hits.is_empty());
            r
        })
    });
    g.finish();
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    match args.first().map(String::as_str) {
        Some("generate") => return cmd_generate(&args[1..]),
        Some("tickets") => return cmd_tickets(&args[1..]),
        Some("compare") => return cmd_compare(&args[1..]),
        _ => {}
    }
    let mut c = Criterion::default().configure_from_args();
    bench_ticket_query(&mut c);
    c.final_summary();
}
