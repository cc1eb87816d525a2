//! Transcript indexing throughput.
//!
//! Criterion benches (`cargo bench --bench index`):
//! - `index/claude_jsonl/100mb`: a full index, from an empty database, of a
//!   seeded synthetic corpus of Claude Code transcripts through the library
//!   API (`Db::open` + `index_sources`). `RECALL_BENCH_INDEX_MB` changes the
//!   size (the name follows it).
//! - `index/unchanged/10k_files`: re-running the index over 10,000 small,
//!   already indexed transcripts (folder walk + the stat-only path).
//!
//! The same binary has two helper modes used by `scripts/bench-index.sh`
//! (run it directly, or `cargo bench --bench index -- <mode> ...`):
//! - `generate --out DIR --bytes N [--seed S] [--small-files N]`: write the
//!   seeded corpus (same seed and size: byte-identical files) into DIR,
//!   reusing DIR when its marker says it already holds that corpus.
//! - `generate-one --out FILE --bytes N [--seed S]`: write one seeded
//!   Claude Code session of about N bytes (`scripts/bench-bigfile.sh`).
//! - `floor --src SRC.db --dst DST.db [--secure-delete] [--hashsize BYTES]`: the raw FTS5
//!   floor with this crate's bundled SQLite: insert every row of `SRC.src`
//!   into a fresh `fts5(title, body, aux)` table in one transaction; prints
//!   JSON with the insert time only.
//!
//! Corpora are generated into a temporary folder, or under
//! `$RECALL_BENCH_CACHE` when set (and then reused across runs).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, Throughput};
use rayon::prelude::*;
use recall::index::{index_sources, IndexReport, RunOptions};
use recall::ingest::discover::{expand, Input};
use recall::ingest::IngestOptions;
use recall::store::{Db, OpenMode};

/// Bump when the generator's output changes (invalidates cached corpora).
const GEN_VERSION: u32 = 2;
/// Marker written last into a complete corpus folder (hidden: not walked).
const MARKER: &str = ".recall-bench-corpus";
const DEFAULT_SEED: u64 = 42;
const MB: u64 = 1_000_000;

// ---------------------------------------------------------------------------
// Deterministic randomness (integer-only, so output is identical everywhere)

/// SplitMix64.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        let mut r = Rng(seed ^ 0x005E_ED0F_1DE5_u64.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        r.next();
        r
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next()) * n as u128) >> 64) as usize
    }
    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }
    /// True with probability `per_mille / 1000`.
    fn chance(&mut self, per_mille: u32) -> bool {
        self.below(1000) < per_mille as usize
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
    fn w(&mut self, xs: &[&'static str]) -> &'static str {
        xs[self.below(xs.len())]
    }
    /// Roughly log-uniform in `lo..hi`: a uniform octave, then uniform in it.
    fn log_uniform(&mut self, lo: usize, hi: usize) -> usize {
        let mut octaves = 0;
        while (lo << (octaves + 1)) < hi {
            octaves += 1;
        }
        let a = lo << self.below(octaves + 1);
        self.range(a, (a * 2).min(hi))
    }
    /// A derived seed (for per-file generators).
    fn fork(&mut self) -> u64 {
        self.next()
    }
}

/// Sampling from a fixed Zipf(1) distribution over `n` ranks.
struct Zipf {
    cum: Vec<u64>,
}

impl Zipf {
    fn new(n: usize) -> Zipf {
        let mut acc = 0u64;
        let cum = (0..n)
            .map(|r| {
                acc += 1_000_000_000 / (r as u64 + 1);
                acc
            })
            .collect();
        Zipf { cum }
    }
    fn sample(&self, rng: &mut Rng) -> usize {
        let total = *self.cum.last().expect("non-empty");
        let t = rng.next() % total;
        self.cum.partition_point(|&c| c <= t)
    }
}

// ---------------------------------------------------------------------------
// Vocabulary: English prose words and seeded code identifiers

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
    "I",
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
    "tests",
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
    "changes",
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
    "updated",
    "works",
    "working",
    "failing",
    "failed",
    "passes",
    "passing",
    "returns",
    "returned",
    "called",
    "calling",
    "missing",
    "found",
    "look",
    "right",
    "wrong",
    "problem",
    "approach",
    "simpler",
    "better",
    "faster",
    "slower",
    "current",
    "previous",
    "next",
    "new",
    "old",
    "every",
    "each",
    "other",
    "same",
    "different",
    "case",
    "cases",
    "edge",
    "handle",
    "handles",
    "handling",
    "add",
    "added",
    "adding",
    "remove",
    "removed",
    "keep",
    "kept",
    "move",
    "moved",
    "rename",
    "renamed",
    "split",
    "merge",
    "merged",
    "branch",
    "commit",
    "review",
    "comment",
    "comments",
    "question",
    "answer",
    "because",
    "since",
    "while",
    "until",
    "though",
    "however",
    "actually",
    "probably",
    "maybe",
    "exactly",
    "already",
    "just",
    "more",
    "less",
    "most",
    "least",
    "much",
    "many",
    "few",
    "some",
    "any",
    "no",
    "yes",
    "good",
    "great",
    "fine",
    "clean",
    "broken",
    "flaky",
    "slow",
    "fast",
    "large",
    "small",
    "big",
    "tiny",
    "empty",
    "full",
    "whole",
    "part",
    "parts",
    "step",
    "steps",
    "plan",
    "idea",
    "reason",
    "result",
    "results",
    "output",
    "input",
    "inputs",
    "outputs",
    "memory",
    "disk",
    "network",
    "request",
    "requests",
    "response",
    "server",
    "client",
    "database",
    "query",
    "queries",
    "index",
    "table",
    "column",
    "row",
    "rows",
    "schema",
    "migration",
    "transaction",
    "lock",
    "locks",
    "thread",
    "threads",
    "worker",
    "workers",
    "queue",
    "retry",
    "retries",
    "timeout",
    "timeouts",
    "deadline",
    "latency",
    "throughput",
    "performance",
    "benchmark",
    "profile",
    "profiling",
    "allocation",
    "allocations",
    "cache",
    "cached",
    "caching",
    "invalidate",
    "config",
    "configuration",
    "settings",
    "option",
    "options",
    "flag",
    "flags",
    "default",
    "defaults",
    "environment",
    "variable",
    "variables",
    "path",
    "paths",
    "directory",
    "folder",
    "files",
    "module",
    "modules",
    "package",
    "packages",
    "dependency",
    "dependencies",
    "version",
    "versions",
    "release",
    "build",
    "builds",
    "compile",
    "compiler",
    "warning",
    "warnings",
    "errors",
    "panic",
    "crash",
    "crashes",
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
    "deserialize",
    "format",
    "formatting",
    "string",
    "strings",
    "number",
    "numbers",
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
    "methods",
    "field",
    "fields",
    "argument",
    "arguments",
    "parameter",
    "parameters",
    "return",
    "loop",
    "iterator",
    "closure",
    "callback",
    "async",
    "await",
    "future",
    "promise",
    "event",
    "events",
    "handler",
    "listener",
    "session",
    "sessions",
    "user",
    "users",
    "account",
    "token",
    "tokens",
    "auth",
    "login",
    "permission",
    "permissions",
    "security",
    "secret",
    "encrypt",
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
    "jobs",
    "schedule",
    "scheduled",
    "running",
    "runs",
    "ran",
    "started",
    "finished",
    "done",
    "implemented",
    "implement",
    "implementation",
    "refactor",
    "refactored",
    "cleanup",
    "rewrite",
    "wrote",
    "written",
    "read",
    "reading",
    "write",
    "writing",
    "open",
    "close",
    "closed",
    "create",
    "created",
    "delete",
    "deleted",
    "insert",
    "inserted",
    "select",
    "update",
    "upsert",
    "would",
    "could",
    "might",
    "must",
    "does",
    "did",
    "doesn't",
    "don't",
    "isn't",
    "it's",
    "here",
    "where",
    "why",
    "how",
    "because",
    "though",
    "whether",
    "either",
    "neither",
    "understand",
    "explain",
    "describe",
    "confirm",
    "verify",
    "verified",
    "expected",
    "actual",
    "behavior",
    "behaviour",
    "regression",
    "reproduce",
    "reproduced",
    "minimal",
    "example",
    "examples",
    "documentation",
    "docs",
    "readme",
    "guide",
    "note",
    "notes",
    "todo",
    "later",
    "today",
    "yesterday",
    "tomorrow",
    "week",
    "morning",
    "afternoon",
    "customer",
    "team",
    "decided",
    "decision",
    "agreed",
    "prefer",
    "preferred",
    "avoid",
    "avoided",
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
    "to",
    "from",
    "into",
    "with",
    "is",
    "has",
    "should",
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
    "column",
    "byte",
    "char",
    "word",
    "term",
    "query",
    "filter",
    "score",
    "rank",
    "hit",
    "match",
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
    "retry",
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
    "rs", "rs", "rs", "ts", "tsx", "py", "go", "ex", "md", "toml", "json",
];
const TOP_DIRS: &[&str] = &[
    "src", "src", "src", "lib", "tests", "packages", "app", "crates",
];
const PROJECTS: &[&str] = &[
    "recall", "spotter", "ledger", "atlas", "harbor", "quill", "orbit", "lumen", "tessera",
    "meridian", "cobalt", "fathom",
];
const MODELS: &[&str] = &[
    "claude-opus-4-6",
    "claude-sonnet-4-5-20250929",
    "claude-opus-4-1",
];

fn cap(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

struct Vocab {
    idents: Vec<String>,
    types: Vec<String>,
    files: Vec<String>,
    english_z: Zipf,
    idents_z: Zipf,
    types_z: Zipf,
    files_z: Zipf,
}

impl Vocab {
    fn new(seed: u64) -> Vocab {
        let mut r = Rng::new(seed ^ 0x0076_6F63_6162);
        let mut idents = Vec::new();
        for _ in 0..6000 {
            let v = r.w(VERBS);
            let n = r.w(NOUNS);
            let id = match r.below(10) {
                0..=3 => format!("{v}_{n}"),
                4..=5 => format!("{v}_{}_{n}", r.w(ADJS)),
                6..=8 => format!("{v}{}", cap(n)),
                _ => format!("{}_{}", n.to_uppercase(), r.w(NOUNS).to_uppercase()),
            };
            idents.push(id);
        }
        let types = (0..1500)
            .map(|_| match r.below(3) {
                0 => format!("{}{}", cap(r.w(ADJS)), cap(r.w(NOUNS))),
                _ => format!("{}{}", cap(r.w(NOUNS)), cap(r.w(NOUNS))),
            })
            .collect();
        let files = (0..2500)
            .map(|_| {
                let depth = r.range(1, 3);
                let mut p = r.w(TOP_DIRS).to_string();
                for _ in 0..depth {
                    p.push('/');
                    p.push_str(r.w(NOUNS));
                }
                if r.chance(400) {
                    p.push('_');
                    p.push_str(r.w(NOUNS));
                }
                p.push('.');
                p.push_str(r.w(EXTS));
                p
            })
            .collect();
        Vocab {
            idents,
            types,
            files,
            english_z: Zipf::new(ENGLISH.len()),
            idents_z: Zipf::new(6000),
            types_z: Zipf::new(1500),
            files_z: Zipf::new(2500),
        }
    }
}

// ---------------------------------------------------------------------------
// Text generators

struct Gen<'v> {
    r: Rng,
    v: &'v Vocab,
}

impl<'v> Gen<'v> {
    fn english(&mut self) -> &'static str {
        ENGLISH[self.v.english_z.sample(&mut self.r)]
    }
    fn ident(&mut self) -> &'v str {
        &self.v.idents[self.v.idents_z.sample(&mut self.r)]
    }
    fn ty(&mut self) -> &'v str {
        &self.v.types[self.v.types_z.sample(&mut self.r)]
    }
    fn file(&mut self) -> &'v str {
        &self.v.files[self.v.files_z.sample(&mut self.r)]
    }
    fn hex(&mut self, s: &mut String, n: usize) {
        for _ in 0..n {
            s.push(b"0123456789abcdef"[self.r.below(16)] as char);
        }
    }
    fn alnum(&mut self, s: &mut String, n: usize) {
        const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        for _ in 0..n {
            s.push(A[self.r.below(A.len())] as char);
        }
    }
    fn uuid(&mut self) -> String {
        let mut s = String::with_capacity(36);
        for (i, n) in [8, 4, 4, 4, 12].into_iter().enumerate() {
            if i > 0 {
                s.push('-');
            }
            self.hex(&mut s, n);
        }
        s
    }
    fn id(&mut self, prefix: &str, n: usize) -> String {
        let mut s = prefix.to_string();
        self.alnum(&mut s, n);
        s
    }

    /// One prose word: mostly English, some identifiers, numbers and hashes.
    fn word(&mut self, s: &mut String) {
        match self.r.below(100) {
            0..=77 => s.push_str(self.english()),
            78..=86 => {
                let w = self.ident();
                let tick = self.r.chance(600);
                if tick {
                    s.push('`');
                }
                s.push_str(w);
                if tick {
                    s.push('`');
                }
            }
            87..=90 => s.push_str(self.ty()),
            91..=94 => {
                s.push('`');
                s.push_str(self.file());
                s.push('`');
            }
            95..=97 => {
                let _ = write!(s, "{}", self.r.below(5000));
            }
            _ => self.hex(s, 7),
        }
    }

    fn sentence(&mut self, s: &mut String) {
        let n = self.r.range(5, 22);
        let start = s.len();
        for i in 0..n {
            if i > 0 {
                s.push_str(if self.r.chance(60) { ", " } else { " " });
            }
            self.word(s);
        }
        if let Some(c) = s[start..].chars().next() {
            if c.is_ascii_lowercase() {
                let up = c.to_ascii_uppercase();
                s.replace_range(start..start + 1, up.encode_utf8(&mut [0; 4]));
            }
        }
        s.push_str(match self.r.below(10) {
            0 => "?",
            1 => ":",
            _ => ".",
        });
    }

    /// About `words` words of Markdown-ish prose (paragraphs, bullets, code).
    fn prose(&mut self, s: &mut String, words: usize) {
        let end = s.len() + words * 6;
        while s.len() < end {
            match self.r.below(12) {
                0 => {
                    for _ in 0..self.r.range(2, 5) {
                        s.push_str("- ");
                        self.sentence(s);
                        s.push('\n');
                    }
                }
                1 => {
                    s.push_str("```");
                    s.push_str(self.r.w(&["rust", "ts", "python", "bash", ""]));
                    s.push('\n');
                    let n = self.r.range(2, 12);
                    self.code(s, n, 0);
                    s.push_str("```\n");
                }
                2 => {
                    s.push_str("## ");
                    s.push_str(&cap(self.english()));
                    s.push(' ');
                    s.push_str(self.english());
                    s.push('\n');
                }
                _ => {
                    for _ in 0..self.r.range(1, 4) {
                        self.sentence(s);
                        s.push(' ');
                    }
                    s.pop();
                    s.push('\n');
                }
            }
            s.push('\n');
        }
        while s.ends_with('\n') {
            s.pop();
        }
    }

    fn code_line(&mut self, s: &mut String, indent: usize) {
        for _ in 0..indent {
            s.push_str("    ");
        }
        let (a, b, c) = (self.ident(), self.ident(), self.ident());
        match self.r.below(12) {
            0 => {
                let t = self.ty();
                let _ = write!(
                    s,
                    "pub fn {a}(&self, {b}: &{t}) -> Result<{}> {{",
                    self.ty()
                );
            }
            1 => {
                let _ = write!(s, "let {a} = {b}.{c}()?;");
            }
            2 => {
                let t = self.ty();
                let _ = write!(
                    s,
                    "let mut {a}: Vec<{t}> = Vec::with_capacity({});",
                    self.r.below(512)
                );
            }
            3 => {
                let _ = write!(
                    s,
                    "if {a}.is_empty() {{ return Err(Error::invalid(\"{b} {}\")); }}",
                    self.english()
                );
            }
            4 => {
                let _ = write!(s, "for {a} in {b}.iter().filter(|x| x.{c}()) {{");
            }
            5 => {
                let t = self.ty();
                let _ = write!(s, "use crate::{}::{{{t}, {}}};", self.r.w(NOUNS), self.ty());
            }
            6 => {
                let _ = write!(
                    s,
                    "// {} {} {} `{c}`",
                    cap(self.english()),
                    self.english(),
                    self.english()
                );
            }
            7 => {
                let _ = write!(
                    s,
                    "const {}: usize = {};",
                    a.to_uppercase(),
                    self.r.below(100_000)
                );
            }
            8 => {
                let _ = write!(s, "{a}.{b}(&mut {c}, {});", self.r.below(64));
            }
            9 => {
                let _ = write!(s, "assert_eq!({a}.len(), {}, \"{b}\");", self.r.below(100));
            }
            10 => s.push('}'),
            _ => {
                let t = self.ty();
                let _ = write!(s, "{t}::{a}({b}, {c}).await?");
            }
        }
    }

    fn code(&mut self, s: &mut String, lines: usize, start_line: usize) {
        let mut indent = 0usize;
        for i in 0..lines {
            if start_line > 0 {
                let _ = write!(s, "{:>6}\u{2192}", start_line + i);
            }
            self.code_line(s, indent);
            s.push('\n');
            indent = match self.r.below(4) {
                0 => (indent + 1).min(4),
                1 => indent.saturating_sub(1),
                _ => indent,
            };
        }
    }

    /// Bash output of roughly `bytes` bytes, of one of several shapes.
    fn bash_output(&mut self, s: &mut String, bytes: usize) {
        let end = s.len() + bytes;
        match self.r.below(6) {
            0 => {
                let n = (bytes / 45).max(1);
                let _ = writeln!(s, "running {n} tests");
                while s.len() < end {
                    let ok = if self.r.chance(30) { "FAILED" } else { "ok" };
                    let _ = writeln!(
                        s,
                        "test {}::{}::{} ... {ok}",
                        self.r.w(NOUNS),
                        self.r.w(NOUNS),
                        self.ident()
                    );
                }
                let _ = write!(
                    s,
                    "\ntest result: ok. {n} passed; 0 failed; 0 ignored; finished in {}.{:02}s",
                    self.r.below(60),
                    self.r.below(100)
                );
            }
            1 => {
                while s.len() < end {
                    let f = self.file();
                    let _ = write!(s, "{f}:{}:", self.r.range(1, 2000));
                    self.code_line(s, 1);
                    s.push('\n');
                }
            }
            2 => {
                while s.len() < end {
                    let _ = write!(
                        s,
                        "-rw-r--r--  1 dev dev {:>7} Jan {:>2} 1{}:{:02} ",
                        self.r.below(200_000),
                        self.r.range(1, 31),
                        self.r.below(10),
                        self.r.below(60)
                    );
                    s.push_str(self.file());
                    s.push('\n');
                }
            }
            3 => {
                while s.len() < end {
                    self.hex(s, 7);
                    s.push(' ');
                    self.sentence(s);
                    s.push('\n');
                }
            }
            4 => {
                while s.len() < end {
                    let _ = writeln!(
                        s,
                        "   Compiling {}-{} v0.{}.{}",
                        self.r.w(NOUNS),
                        self.r.w(NOUNS),
                        self.r.below(30),
                        self.r.below(20)
                    );
                    if self.r.chance(100) {
                        let _ = write!(
                            s,
                            "warning: unused variable: `{}`\n  --> {}:{}:{}\n",
                            self.ident(),
                            self.file(),
                            self.r.range(1, 900),
                            self.r.range(1, 80)
                        );
                    }
                }
                let _ = write!(
                    s,
                    "    Finished `release` profile [optimized] target(s) in {}.{:02}s",
                    self.r.below(200),
                    self.r.below(100)
                );
            }
            _ => {
                while s.len() < end {
                    self.sentence(s);
                    s.push('\n');
                }
            }
        }
    }

    fn error_output(&mut self, s: &mut String) {
        let _ = writeln!(s, "Exit code {}", self.r.pick(&[1, 2, 101, 127]));
        for _ in 0..self.r.range(1, 4) {
            let _ = write!(s, "error[E0{}]: ", self.r.range(100, 799));
            self.sentence(s);
            let (f, l, c) = (self.file(), self.r.range(1, 900), self.r.range(1, 80));
            let _ = write!(s, "\n  --> {f}:{l}:{c}\n   |\n{l:>3}| ");
            self.code_line(s, 0);
            s.push_str("\n   |     ^^^^^^ ");
            self.sentence(s);
            s.push_str("\n\n");
        }
        let _ = write!(
            s,
            "error: could not compile `{}` due to previous error",
            self.r.w(PROJECTS)
        );
    }

    /// A big, noisy blob: base64 or minified JSON.
    fn blob(&mut self, s: &mut String, bytes: usize) {
        if self.r.chance(500) {
            const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
            for i in 0..bytes {
                if i > 0 && i % 76 == 0 {
                    s.push('\n');
                }
                s.push(B64[self.r.below(64)] as char);
            }
        } else {
            s.push('{');
            let end = s.len() + bytes;
            while s.len() < end {
                let _ = write!(
                    s,
                    "\"{}\":{{\"{}\":{},\"{}\":\"",
                    self.ident(),
                    self.r.w(NOUNS),
                    self.r.below(1 << 20),
                    self.r.w(NOUNS)
                );
                self.hex(s, 16);
                s.push_str("\"},");
            }
            s.push_str("\"end\":0}");
        }
    }

    /// Once in a while, a credential-shaped string (exercises redaction).
    fn maybe_secret(&mut self, s: &mut String) {
        if !self.r.chance(4) {
            return;
        }
        match self.r.below(3) {
            0 => {
                s.push_str("\nexport AWS_ACCESS_KEY_ID=AKIA");
                const U: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
                for _ in 0..16 {
                    s.push(U[self.r.below(U.len())] as char);
                }
            }
            1 => {
                s.push_str("\nremote: using token ghp_");
                self.alnum(s, 36);
            }
            _ => {
                s.push_str("\nDATABASE_URL=postgres://app:");
                self.alnum(s, 14);
                s.push_str("@db.internal:5432/app");
            }
        }
        s.push('\n');
    }
}

// ---------------------------------------------------------------------------
// JSONL writing

fn js(out: &mut String, s: &str) {
    out.push('"');
    let mut last = 0;
    for (i, b) in s.bytes().enumerate() {
        let esc: &str = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0..=0x1f => {
                out.push_str(&s[last..i]);
                let _ = write!(out, "\\u{b:04x}");
                last = i + 1;
                continue;
            }
            _ => continue,
        };
        out.push_str(&s[last..i]);
        out.push_str(esc);
        last = i + 1;
    }
    out.push_str(&s[last..]);
    out.push('"');
}

/// `2025-06-01T12:34:56.789Z` for unix milliseconds (proleptic Gregorian).
fn iso(ms: i64, out: &mut String) {
    let (secs, milli) = (ms.div_euclid(1000), ms.rem_euclid(1000));
    let (days, sod) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let _ = write!(
        out,
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{milli:03}Z",
        sod / 3600,
        sod / 60 % 60,
        sod % 60
    );
}

/// Sizes of the pieces of a generated session.
#[derive(Clone, Copy)]
struct Profile {
    /// Typical tool output, bytes (log-uniform between these).
    out_min: usize,
    out_max: usize,
    /// Per mille of tool results that are big (30 KB - 400 KB).
    big_per_mille: u32,
    /// Per mille of tool results that are errors.
    error_per_mille: u32,
    /// Words of the first prompt (min, max).
    first_prompt: (usize, usize),
}

const FULL: Profile = Profile {
    out_min: 100,
    out_max: 12_000,
    big_per_mille: 25,
    error_per_mille: 70,
    first_prompt: (30, 250),
};

const SMALL: Profile = Profile {
    out_min: 60,
    out_max: 600,
    big_per_mille: 0,
    error_per_mille: 70,
    first_prompt: (4, 60),
};

/// One file to generate.
struct FileSpec {
    rel: PathBuf,
    target: usize,
    seed: u64,
    session_id: String,
    cwd: String,
    branch: String,
    agent_id: Option<String>,
    start_ms: i64,
    profile: Profile,
}

/// Writes one session's lines: keeps the envelope and the parent chain.
struct Session<'v> {
    g: Gen<'v>,
    spec: &'v FileSpec,
    out: String,
    parent: Option<String>,
    ts: i64,
    model: &'static str,
}

impl<'v> Session<'v> {
    fn tick(&mut self, lo: usize, hi: usize) {
        self.ts += self.g.r.range(lo, hi) as i64;
    }

    /// Opens a line: the common envelope up to (not including) `type`.
    fn open(&mut self) {
        let o = &mut self.out;
        o.push_str("{\"parentUuid\":");
        match &self.parent {
            Some(p) => js(o, p),
            None => o.push_str("null"),
        }
        let _ = write!(o, ",\"isSidechain\":{}", self.spec.agent_id.is_some());
        o.push_str(",\"userType\":\"external\",\"cwd\":");
        js(o, &self.spec.cwd);
        o.push_str(",\"sessionId\":");
        js(o, &self.spec.session_id);
        o.push_str(",\"version\":\"2.1.39\",\"gitBranch\":");
        js(o, &self.spec.branch);
        if let Some(a) = &self.spec.agent_id {
            o.push_str(",\"agentId\":");
            js(o, a);
        }
        o.push(',');
    }

    /// Closes a line with its uuid and timestamp (+ extra trailing fields).
    fn close(&mut self, extra: &str) -> String {
        let uuid = self.g.uuid();
        self.out.push_str(",\"uuid\":");
        js(&mut self.out, &uuid);
        self.out.push_str(",\"timestamp\":\"");
        iso(self.ts, &mut self.out);
        self.out.push('"');
        self.out.push_str(extra);
        self.out.push_str("}\n");
        self.parent = Some(uuid.clone());
        uuid
    }

    fn snapshot(&mut self) {
        let id = self.g.uuid();
        let o = &mut self.out;
        o.push_str("{\"type\":\"file-history-snapshot\",\"messageId\":");
        js(o, &id);
        o.push_str(",\"snapshot\":{\"messageId\":");
        js(o, &id);
        o.push_str(",\"trackedFileBackups\":{},\"timestamp\":\"");
        iso(self.ts, o);
        o.push_str("\"},\"isSnapshotUpdate\":false}\n");
    }

    fn user_prompt(&mut self, words: usize) {
        self.tick(2_000, 120_000);
        let mut text = String::new();
        self.g.prose(&mut text, words);
        self.open();
        self.out
            .push_str("\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":");
        if self.g.r.chance(700) {
            js(&mut self.out, &text);
        } else {
            self.out.push_str("[{\"type\":\"text\",\"text\":");
            js(&mut self.out, &text);
            self.out.push_str("}]");
        }
        self.out.push('}');
        self.close("");
    }

    /// One assistant line carrying one content block (already JSON).
    fn assistant(&mut self, msg_id: &str, req_id: &str, block: &str) -> String {
        self.tick(200, 9_000);
        self.open();
        self.out.push_str("\"message\":{\"model\":");
        js(&mut self.out, self.model);
        self.out.push_str(",\"id\":");
        js(&mut self.out, msg_id);
        self.out
            .push_str(",\"type\":\"message\",\"role\":\"assistant\",\"content\":[");
        self.out.push_str(block);
        let (i, c, r, o) = (
            self.g.r.range(1, 12),
            self.g.r.below(20_000),
            self.g.r.range(10_000, 180_000),
            self.g.r.range(1, 3_000),
        );
        let _ = write!(
            self.out,
            "],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{{\"input_tokens\":{i},\"cache_creation_input_tokens\":{c},\"cache_read_input_tokens\":{r},\"cache_creation\":{{\"ephemeral_5m_input_tokens\":{c},\"ephemeral_1h_input_tokens\":0}},\"output_tokens\":{o},\"service_tier\":\"standard\"}}}},\"requestId\":"
        );
        js(&mut self.out, req_id);
        self.out.push_str(",\"type\":\"assistant\"");
        self.close("")
    }

    fn progress(&mut self, tool_id: &str, n: usize) {
        for k in 0..n {
            self.tick(500, 5_000);
            let mut partial = String::new();
            let bytes = self.g.r.range(40, 600);
            self.g.bash_output(&mut partial, bytes);
            self.open();
            self.out
                .push_str("\"type\":\"progress\",\"data\":{\"type\":\"bash_progress\",\"output\":");
            js(&mut self.out, &partial);
            self.out.push_str(",\"fullOutput\":");
            js(&mut self.out, &partial);
            let _ = write!(
                self.out,
                ",\"elapsedTimeSeconds\":{},\"totalLines\":{}}},\"toolUseID\":\"bash-progress-{k}\",\"parentToolUseID\":",
                k * 3 + 3,
                partial.lines().count()
            );
            js(&mut self.out, tool_id);
            self.close("");
        }
    }

    /// One API response (thinking?, text?, tool uses) and the tool results.
    /// Returns whether the turn ended (no tool call).
    fn assistant_turn(&mut self) -> bool {
        let msg_id = self.g.id("msg_01", 22);
        let req_id = self.g.id("req_011", 17);
        let mut block = String::new();
        if self.g.r.chance(250) {
            let mut t = String::new();
            let n = self.g.r.range(20, 250);
            self.g.prose(&mut t, n);
            block.push_str("{\"type\":\"thinking\",\"thinking\":");
            js(&mut block, &t);
            block.push_str(",\"signature\":\"");
            self.g.alnum(&mut block, 300);
            block.push_str("\"}");
            self.assistant(&msg_id, &req_id, &block);
        }
        if self.g.r.chance(650) {
            let mut t = String::new();
            let n = self.g.log_uniform_words();
            self.g.prose(&mut t, n);
            block.clear();
            block.push_str("{\"type\":\"text\",\"text\":");
            js(&mut block, &t);
            block.push('}');
            self.assistant(&msg_id, &req_id, &block);
        }
        let tools = match self.g.r.below(10) {
            0..=2 => 0,
            3..=7 => 1,
            _ => self.g.r.range(2, 4),
        };
        let mut calls = Vec::new();
        for _ in 0..tools {
            let tool_id = self.g.id("toolu_01", 22);
            let (kind, input) = self.tool_input();
            block.clear();
            block.push_str("{\"type\":\"tool_use\",\"id\":");
            js(&mut block, &tool_id);
            block.push_str(",\"name\":");
            js(&mut block, kind);
            let _ = write!(block, ",\"input\":{input}}}");
            let line = self.assistant(&msg_id, &req_id, &block);
            calls.push((tool_id, kind, line));
        }
        for (tool_id, kind, line) in calls {
            if kind == "Bash" {
                let n = self.g.r.below(4);
                self.progress(&tool_id, n);
            }
            self.tool_result(&tool_id, kind, &line);
        }
        tools == 0
    }

    fn tool_input(&mut self) -> (&'static str, String) {
        let mut s = String::new();
        let g = &mut self.g;
        let kind = match g.r.below(20) {
            0..=7 => {
                let mut cmd = String::new();
                match g.r.below(6) {
                    0 => {
                        let _ = write!(cmd, "cargo test {} -- --nocapture", g.ident());
                    }
                    1 => {
                        let _ = write!(cmd, "rg -n \"{}\" {}", g.ident(), g.r.w(TOP_DIRS));
                    }
                    2 => cmd.push_str("git status --short && git diff --stat"),
                    3 => {
                        let _ = write!(cmd, "ls -la {}", g.r.w(TOP_DIRS));
                    }
                    4 => cmd.push_str("git log --oneline -20"),
                    _ => {
                        let _ = write!(
                            cmd,
                            "cargo build --release 2>&1 | tail -{}",
                            g.r.range(5, 80)
                        );
                    }
                }
                let mut desc = String::new();
                g.sentence(&mut desc);
                s.push_str("{\"command\":");
                js(&mut s, &cmd);
                s.push_str(",\"description\":");
                js(&mut s, &desc);
                s.push('}');
                "Bash"
            }
            8..=12 => {
                s.push_str("{\"file_path\":");
                let p = format!("{}/{}", self.spec.cwd, g.file());
                js(&mut s, &p);
                s.push('}');
                "Read"
            }
            13..=16 => {
                let (mut old, mut new) = (String::new(), String::new());
                let n = g.r.range(1, 12);
                g.code(&mut old, n, 0);
                let n = g.r.range(1, 16);
                g.code(&mut new, n, 0);
                s.push_str("{\"replace_all\":false,\"file_path\":");
                let p = format!("{}/{}", self.spec.cwd, g.file());
                js(&mut s, &p);
                s.push_str(",\"old_string\":");
                js(&mut s, &old);
                s.push_str(",\"new_string\":");
                js(&mut s, &new);
                s.push('}');
                "Edit"
            }
            17..=18 => {
                let _ = write!(
                    s,
                    "{{\"pattern\":\"{}\",\"path\":\"{}\",\"output_mode\":\"content\"}}",
                    g.ident(),
                    g.r.w(TOP_DIRS)
                );
                "Grep"
            }
            _ => {
                let mut p = String::new();
                let n = g.r.range(40, 200);
                g.prose(&mut p, n);
                s.push_str("{\"description\":\"Explore the codebase\",\"prompt\":");
                js(&mut s, &p);
                s.push('}');
                "Task"
            }
        };
        (kind, s)
    }

    fn tool_result(&mut self, tool_id: &str, kind: &str, assistant_uuid: &str) {
        self.tick(100, 60_000);
        let p = self.spec.profile;
        let g = &mut self.g;
        let error = g.r.chance(p.error_per_mille);
        let big = !error && g.r.chance(p.big_per_mille);
        let size = if big {
            g.r.log_uniform(30_000, 400_000)
        } else {
            g.r.log_uniform(p.out_min, p.out_max)
        };
        // Stay near the file's target (the output is written twice).
        let left = self.spec.target.saturating_sub(self.out.len());
        let size = size.min((left / 3).max(100));
        let mut out = String::new();
        let mut raw_file = None;
        if error {
            g.error_output(&mut out);
        } else {
            match kind {
                "Read" => {
                    let mut raw = String::new();
                    let lines = (size / 90).max(3);
                    g.code(&mut raw, lines, 0);
                    for (i, l) in raw.lines().enumerate() {
                        let _ = writeln!(out, "{:>6}\u{2192}{l}", i + 1);
                    }
                    raw_file = Some(raw);
                }
                "Edit" => {
                    let _ = writeln!(out, "The file {} has been updated. Here's the result of running `cat -n` on a snippet of the edited file:", g.file());
                    let (n, start) = (g.r.range(5, 15), g.r.range(1, 800));
                    g.code(&mut out, n, start);
                }
                "Grep" => {
                    let n = (size / 30).max(1);
                    for _ in 0..n {
                        out.push_str(g.file());
                        out.push('\n');
                    }
                }
                "Task" => {
                    let n = size / 6;
                    g.prose(&mut out, n);
                }
                _ if big && g.r.chance(150) => g.blob(&mut out, size),
                _ => g.bash_output(&mut out, size),
            }
            g.maybe_secret(&mut out);
        }
        self.open();
        let o = &mut self.out;
        o.push_str(
            "\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"tool_use_id\":",
        );
        js(o, tool_id);
        o.push_str(",\"type\":\"tool_result\",\"content\":");
        if kind == "Task" {
            o.push_str("[{\"type\":\"text\",\"text\":");
            js(o, &out);
            o.push_str("}]");
        } else {
            js(o, &out);
        }
        if error {
            o.push_str(",\"is_error\":true");
        }
        o.push_str("}]}");
        // toolUseResult: the structured duplicate Claude Code writes.
        let mut extra = String::from(",\"toolUseResult\":");
        if error {
            js(&mut extra, &format!("Error: {out}"));
        } else {
            match (kind, raw_file) {
                ("Read", Some(raw)) => {
                    extra.push_str("{\"type\":\"text\",\"file\":{\"filePath\":");
                    js(&mut extra, self.g.file());
                    extra.push_str(",\"content\":");
                    js(&mut extra, &raw);
                    let n = raw.lines().count();
                    let _ = write!(
                        extra,
                        ",\"numLines\":{n},\"startLine\":1,\"totalLines\":{n}}}}}"
                    );
                }
                ("Bash", _) => {
                    extra.push_str("{\"stdout\":");
                    js(&mut extra, &out);
                    extra.push_str(",\"stderr\":\"\",\"interrupted\":false,\"isImage\":false}");
                }
                _ => {
                    extra.push_str("{\"status\":\"completed\",\"content\":");
                    js(&mut extra, &out);
                    extra.push('}');
                }
            }
        }
        extra.push_str(",\"sourceToolAssistantUUID\":");
        js(&mut extra, assistant_uuid);
        self.close(&extra);
    }

    fn system(&mut self) {
        self.tick(10, 500);
        self.open();
        let _ = write!(
            self.out,
            "\"type\":\"system\",\"subtype\":\"turn_duration\",\"durationMs\":{},\"isMeta\":false",
            self.g.r.below(600_000)
        );
        self.close("");
    }

    fn summary(&mut self) {
        let mut t = String::new();
        let n = self.g.r.range(4, 9);
        for i in 0..n {
            if i > 0 {
                t.push(' ');
            }
            t.push_str(&cap(self.g.english()));
        }
        self.out.push_str("{\"type\":\"summary\",\"summary\":");
        js(&mut self.out, &t);
        self.out.push_str(",\"leafUuid\":");
        let leaf = self.parent.clone().unwrap_or_default();
        js(&mut self.out, &leaf);
        self.out.push_str("}\n");
    }
}

impl Gen<'_> {
    /// Words of an assistant text block: mostly short, sometimes long.
    fn log_uniform_words(&mut self) -> usize {
        self.r.log_uniform(8, 700)
    }
}

fn write_session(spec: &FileSpec, vocab: &Vocab, path: &Path) -> std::io::Result<u64> {
    let mut g = Gen {
        r: Rng::new(spec.seed),
        v: vocab,
    };
    let model = g.r.w(MODELS);
    let mut s = Session {
        g,
        spec,
        out: String::with_capacity(spec.target + 512 * 1024),
        parent: None,
        ts: spec.start_ms,
        model,
    };
    if spec.agent_id.is_none() {
        for _ in 0..s.g.r.range(1, 3) {
            s.snapshot();
        }
    }
    let mut first = true;
    // Never cut into the first exchange (a file must stay a transcript).
    let mut keep = 0;
    while s.out.len() < spec.target {
        let words = if first {
            s.g.r
                .range(spec.profile.first_prompt.0, spec.profile.first_prompt.1)
        } else {
            s.g.r.log_uniform(4, 300)
        };
        first = false;
        s.user_prompt(words);
        if spec.agent_id.is_none() && s.g.r.chance(300) {
            s.snapshot();
        }
        // Tool loop until the assistant answers without a tool call.
        let mut steps = 0;
        while !s.assistant_turn() && steps < 12 && s.out.len() < spec.target {
            steps += 1;
        }
        if s.g.r.chance(400) {
            s.system();
        }
        if keep == 0 {
            keep = s.out.len();
        }
    }
    if spec.agent_id.is_none() && s.g.r.chance(300) {
        s.summary();
    }
    // The last turn may overshoot (big outputs): cut at the last line end
    // within the target, so a corpus's size stays close to the nominal one.
    let mut len = s.out.len();
    if len > spec.target + spec.target / 8 {
        if let Some(i) = s.out.as_bytes()[..spec.target]
            .iter()
            .rposition(|&b| b == b'\n')
        {
            len = (i + 1).max(keep);
        }
    }
    std::fs::write(path, &s.out.as_bytes()[..len])?;
    Ok(len as u64)
}

/// The file plan for a corpus: sizes and ids, decided sequentially so the
/// files can then be written in parallel, byte-identically.
fn plan(total_bytes: u64, seed: u64, small_files: Option<usize>) -> Vec<FileSpec> {
    let mut r = Rng::new(seed);
    let mut g = Gen {
        r: Rng::new(seed ^ 0x1D5),
        v: &Vocab::new(0),
    };
    let mut specs = Vec::new();
    let mut planned = 0u64;
    let base_ms: i64 = 1_748_736_000_000; // 2025-06-01
    loop {
        let i = specs.len();
        let done = match small_files {
            Some(n) => i >= n,
            None => planned >= total_bytes,
        };
        if done {
            break;
        }
        let project = r.w(PROJECTS);
        let cwd = format!("/home/dev/projects/{project}");
        let branch = match r.below(4) {
            0 => "main".to_string(),
            _ => format!("{}-{}", r.w(ADJS), r.w(NOUNS)),
        };
        let session_id = g.uuid();
        let start_ms = base_ms + (r.below(300 * 86_400) as i64) * 1000;
        let dir = format!("-home-dev-projects-{project}");
        let (target, profile, rel) = match small_files {
            Some(_) => (
                r.range(1_000, 4_000),
                SMALL,
                PathBuf::from(format!("p{:03}", i / 100)).join(format!("{session_id}.jsonl")),
            ),
            None => {
                let left = (total_bytes - planned) as usize;
                let t = r.log_uniform(100_000, 2_000_000).min(left.max(20_000));
                (
                    t,
                    FULL,
                    PathBuf::from(&dir).join(format!("{session_id}.jsonl")),
                )
            }
        };
        planned += target as u64;
        let subagents = if small_files.is_none() && r.chance(250) {
            r.range(1, 2)
        } else {
            0
        };
        specs.push(FileSpec {
            rel,
            target,
            seed: r.fork(),
            session_id: session_id.clone(),
            cwd: cwd.clone(),
            branch: branch.clone(),
            agent_id: None,
            start_ms,
            profile,
        });
        for _ in 0..subagents {
            if planned >= total_bytes {
                break;
            }
            let mut agent = String::from("a");
            g.hex(&mut agent, 7);
            let t = r.log_uniform(50_000, 400_000);
            planned += t as u64;
            specs.push(FileSpec {
                rel: PathBuf::from(&dir)
                    .join(&session_id)
                    .join("subagents")
                    .join(format!("agent-{agent}.jsonl")),
                target: t,
                seed: r.fork(),
                session_id: session_id.clone(),
                cwd: cwd.clone(),
                branch: branch.clone(),
                agent_id: Some(agent),
                start_ms: start_ms + 60_000,
                profile: FULL,
            });
        }
    }
    specs
}

/// What a generated corpus holds.
#[derive(Debug, Clone, Copy)]
pub struct Corpus {
    pub files: usize,
    pub bytes: u64,
}

fn marker_text(total_bytes: u64, seed: u64, small_files: Option<usize>) -> String {
    format!(
        "gen={GEN_VERSION} bytes={total_bytes} seed={seed} small_files={}",
        small_files.map_or("none".to_string(), |n| n.to_string())
    )
}

/// Generate the seeded corpus into `dir` (created; must not exist, or hold
/// exactly this corpus, which is then reused). `small_files = Some(n)`
/// writes `n` files of 1-4 KB instead of `total_bytes` of 100 KB - 2 MB files.
pub fn generate(dir: &Path, total_bytes: u64, seed: u64, small_files: Option<usize>) -> Corpus {
    let want = marker_text(total_bytes, seed, small_files);
    if let Ok(m) = std::fs::read_to_string(dir.join(MARKER)) {
        let mut lines = m.lines();
        if lines.next() == Some(want.as_str()) {
            let parse = |k: &str| {
                m.lines()
                    .find_map(|l| l.strip_prefix(k))
                    .and_then(|v| v.parse::<u64>().ok())
            };
            if let (Some(files), Some(bytes)) = (parse("files="), parse("actual_bytes=")) {
                return Corpus {
                    files: files as usize,
                    bytes,
                };
            }
        }
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
        std::fs::create_dir_all(d).expect("create corpus folder");
    }
    let bytes: u64 = specs
        .par_iter()
        .map(|s| write_session(s, &vocab, &tmp.join(&s.rel)).expect("write corpus file"))
        .sum();
    let corpus = Corpus {
        files: specs.len(),
        bytes,
    };
    std::fs::write(
        tmp.join(MARKER),
        format!("{want}\nfiles={}\nactual_bytes={bytes}\n", corpus.files),
    )
    .expect("write marker");
    let _ = std::fs::remove_dir_all(dir);
    std::fs::rename(&tmp, dir).expect("move corpus into place");
    corpus
}

// ---------------------------------------------------------------------------
// Indexing through the library

fn index_dir(home: &Path, inputs: &[Input]) -> IndexReport {
    let mut db = Db::open(&home.join("index.db"), OpenMode::ReadWrite).expect("open index");
    let run = RunOptions {
        now: 1_767_225_600,
        ..RunOptions::default()
    };
    let report = index_sources(
        db.writer().expect("writer"),
        inputs,
        &IngestOptions::default(),
        &run,
        &mut |_| {},
    )
    .expect("index");
    assert_eq!(report.failed, 0, "{}", report.summary());
    report
}

/// A corpus folder: under `$RECALL_BENCH_CACHE` (kept) or a temp dir.
fn corpus_dir(name: &str) -> (PathBuf, Option<tempfile::TempDir>) {
    match std::env::var_os("RECALL_BENCH_CACHE") {
        Some(c) => {
            let root = PathBuf::from(c);
            std::fs::create_dir_all(&root).expect("cache folder");
            (root.join(name), None)
        }
        None => {
            let t = tempfile::tempdir().expect("tempdir");
            (t.path().join(name), Some(t))
        }
    }
}

fn bench_full(c: &mut Criterion) {
    let mb: u64 = std::env::var("RECALL_BENCH_INDEX_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    // Criterion calls the routine once per sample: set up once, lazily (so a
    // filtered-out bench generates nothing).
    type Setup = (Vec<Input>, Corpus, Option<tempfile::TempDir>);
    let setup: OnceLock<Setup> = OnceLock::new();
    let last: std::cell::Cell<Option<(usize, u64, u64)>> = std::cell::Cell::new(None);
    let mut g = c.benchmark_group("index/claude_jsonl");
    g.sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_secs(30));
    // Criterion needs the throughput before the corpus exists: the nominal
    // size; the actual size and chunk rate are printed after the group.
    g.throughput(Throughput::Bytes(mb * MB));
    g.bench_function(format!("{mb}mb"), |b| {
        let (inputs, _, _) = setup.get_or_init(|| {
            let (dir, keep) = corpus_dir(&format!("claude-{mb}mb-seed{DEFAULT_SEED}"));
            let c = generate(&dir, mb * MB, DEFAULT_SEED, None);
            let inputs = expand(std::slice::from_ref(&dir)).expect("walk corpus");
            (inputs, c, keep)
        });
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let home = tempfile::tempdir().expect("tempdir");
                let t = Instant::now();
                let r = index_dir(home.path(), inputs);
                let el = t.elapsed();
                total += el;
                last.set(Some((r.chunks, r.bytes, el.as_millis() as u64)));
            }
            total
        });
    });
    g.finish();
    if let (Some((_, corpus, _)), Some((chunks, bytes, ms))) = (setup.get(), last.get()) {
        eprintln!(
            "index/claude_jsonl/{mb}mb: corpus {} files, {:.1} MB; last run {chunks} chunks in {:.2}s: {:.1} MB/s, {:.0} chunks/s",
            corpus.files,
            corpus.bytes as f64 / 1e6,
            ms as f64 / 1e3,
            bytes as f64 / 1e3 / ms.max(1) as f64,
            chunks as f64 * 1e3 / ms.max(1) as f64
        );
    }
}

fn bench_unchanged(c: &mut Criterion) {
    const FILES: usize = 10_000;
    type Setup = (PathBuf, tempfile::TempDir, Option<tempfile::TempDir>);
    let setup: OnceLock<Setup> = OnceLock::new();
    let mut g = c.benchmark_group("index/unchanged");
    g.sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(10));
    g.throughput(Throughput::Elements(FILES as u64));
    g.bench_function("10k_files", |b| {
        let (dir, home, _) = setup.get_or_init(|| {
            let (dir, keep) = corpus_dir(&format!("small-10k-seed{DEFAULT_SEED}"));
            let corpus = generate(&dir, 0, DEFAULT_SEED, Some(FILES));
            assert_eq!(corpus.files, FILES);
            let home = tempfile::tempdir().expect("tempdir");
            let inputs = expand(std::slice::from_ref(&dir)).expect("walk corpus");
            let first = index_dir(home.path(), &inputs);
            assert_eq!(first.indexed, FILES, "{}", first.summary());
            (dir, home, keep)
        });
        b.iter(|| {
            // Walk + stat-only pass, as `recall index DIR` does.
            let inputs = expand(std::slice::from_ref(dir)).expect("walk corpus");
            let r = index_dir(home.path(), &inputs);
            assert_eq!(r.unchanged, FILES);
            r
        });
    });
    g.finish();
}

// ---------------------------------------------------------------------------
// Helper modes

fn arg<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
}

/// One seeded session file of about `bytes` bytes (the last turn is cut at
/// a line end), with the sizes of the full corpus.
pub fn generate_one(path: &Path, bytes: u64, seed: u64) -> u64 {
    let mut r = Rng::new(seed);
    let mut g = Gen {
        r: Rng::new(seed ^ 0x1D5),
        v: &Vocab::new(0),
    };
    let project = r.w(PROJECTS);
    let spec = FileSpec {
        rel: PathBuf::new(),
        target: bytes as usize,
        seed: r.fork(),
        session_id: g.uuid(),
        cwd: format!("/home/dev/projects/{project}"),
        branch: "main".to_string(),
        agent_id: None,
        start_ms: 1_748_736_000_000,
        profile: FULL,
    };
    write_session(&spec, &Vocab::new(seed), path).expect("write session file")
}

fn cmd_generate_one(args: &[String]) {
    let out = PathBuf::from(arg(args, "--out").expect("--out FILE"));
    let bytes: u64 = arg(args, "--bytes").map_or(0, |v| v.parse().expect("--bytes N"));
    let seed: u64 = arg(args, "--seed").map_or(DEFAULT_SEED, |v| v.parse().expect("--seed S"));
    let t = Instant::now();
    let written = generate_one(&out, bytes, seed);
    println!(
        "{{\"bytes\":{written},\"seconds\":{:.3}}}",
        t.elapsed().as_secs_f64()
    );
}

fn cmd_generate(args: &[String]) {
    let out = PathBuf::from(arg(args, "--out").expect("--out DIR"));
    let bytes: u64 = arg(args, "--bytes").map_or(0, |v| v.parse().expect("--bytes N"));
    let seed: u64 = arg(args, "--seed").map_or(DEFAULT_SEED, |v| v.parse().expect("--seed S"));
    let small = arg(args, "--small-files").map(|v| v.parse().expect("--small-files N"));
    let t = Instant::now();
    let c = generate(&out, bytes, seed, small);
    println!(
        "{{\"files\":{},\"bytes\":{},\"seconds\":{:.3}}}",
        c.files,
        c.bytes,
        t.elapsed().as_secs_f64()
    );
}

/// Raw FTS5 insert floor with the bundled SQLite (the version we ship).
fn cmd_floor(args: &[String]) {
    let src = arg(args, "--src").expect("--src SRC.db");
    let dst = PathBuf::from(arg(args, "--dst").expect("--dst DST.db"));
    let hashsize: Option<i64> = arg(args, "--hashsize").map(|v| v.parse().expect("--hashsize N"));
    for ext in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{ext}", dst.display()));
    }
    let c = rusqlite::Connection::open(&dst).expect("open floor db");
    c.pragma_update(None, "journal_mode", "WAL").expect("wal");
    c.pragma_update(None, "synchronous", "NORMAL")
        .expect("sync");
    c.execute("ATTACH ?1 AS s", [src]).expect("attach");
    c.execute_batch(
        "CREATE VIRTUAL TABLE t USING fts5(title, body, aux, tokenize = 'unicode61 remove_diacritics 2');",
    )
    .expect("create");
    if args.iter().any(|a| a == "--secure-delete") {
        // As in schema/0001_init.sql (only changes deletes, but also the
        // FTS5 file format version).
        c.execute_batch("INSERT INTO t(t, rank) VALUES('secure-delete', 1);")
            .expect("secure-delete");
    }
    if let Some(h) = hashsize {
        c.execute("INSERT INTO t(t, rank) VALUES('hashsize', ?1)", [h])
            .expect("hashsize");
    }
    let t = Instant::now();
    c.execute_batch(
        "BEGIN; INSERT INTO t(rowid, title, body, aux) SELECT id, title, body, aux FROM s.src; COMMIT;",
    )
    .expect("insert");
    let secs = t.elapsed().as_secs_f64();
    let rows: i64 = c
        .query_row("SELECT count(*) FROM s.src", [], |r| r.get(0))
        .expect("count");
    let version: String = c
        .query_row("SELECT sqlite_version()", [], |r| r.get(0))
        .expect("version");
    println!("{{\"seconds\":{secs:.3},\"rows\":{rows},\"sqlite\":\"{version}\"}}");
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    match args.first().map(String::as_str) {
        Some("generate") => return cmd_generate(&args[1..]),
        Some("generate-one") => return cmd_generate_one(&args[1..]),
        Some("floor") => return cmd_floor(&args[1..]),
        _ => {}
    }
    let mut c = Criterion::default().configure_from_args();
    bench_full(&mut c);
    bench_unchanged(&mut c);
    c.final_summary();
}
