//! Configuration: defaults < `<home>/config.toml` < `RECALL_*` environment
//! variables < command-line flags (flags are applied by `cli`).

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Settings for records.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct RecordsConfig {
    /// Longest record body, in characters.
    pub max_body_chars: usize,
}

impl Default for RecordsConfig {
    fn default() -> Self {
        RecordsConfig {
            max_body_chars: 2000,
        }
    }
}

/// Settings for recall.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct RecallConfig {
    /// Default number of hits.
    pub limit: usize,
    /// Whether the prompt hook injects again, later in one session, a hit
    /// it already injected in it (`false`: it does not, unless the prompt
    /// asks again).
    pub hook_repeats: bool,
    /// The prompt hook injects a hit only if it scores at least this share
    /// of the best hit's score (0: every hit; pinned records always).
    pub hook_min_score: f64,
    /// ... and holds at least this share of the prompt's weight (each
    /// prompt word once, weighted by its rarity; 0: no bar). A session hit
    /// is judged by its session's passages that matched, with words weighed
    /// by how few sessions hold them and the prompt's words memory does
    /// not hold counted too (see `recall::evidence`); a record or ticket
    /// by its own text, over the words memory holds. A prompt that no hit
    /// covers this well gets nothing.
    pub hook_min_coverage: f64,
    /// A session hit the prompt hook injects must point at few sessions:
    /// at most this many of the project's sessions (its own included, and
    /// never more than a third of them) may have a passage holding every
    /// prompt word the hit holds. Words that stand together in many
    /// sessions, such as a prompt template's or a greeting's, are no
    /// evidence of which one a prompt is about (0: no bar).
    pub hook_max_sessions: u32,
    /// A session hit the prompt hook injects must hold words rarer than
    /// chance: were the words independent, at most this many of the
    /// project's sessions would hold them all (see
    /// `recall::evidence::beyond_chance`; 0.3 by default, measured in
    /// docs/benchmarks.md, "What the prompt hook injects").
    pub hook_chance: f64,
    /// Ranking knobs (`[recall.tuning]`).
    pub tuning: crate::recall::Tuning,
}

impl Default for RecallConfig {
    fn default() -> Self {
        RecallConfig {
            limit: 10,
            hook_repeats: false,
            // Measured by examples/hook_replay (docs/benchmarks.md, "What
            // the prompt hook injects"): 0.3 keeps the gold session of 190
            // of 200 swe-sessions tickets (0.35: 181) and gives nothing to
            // 77% of them with the gold session taken out (0.25: 68%).
            hook_min_score: 0.5,
            hook_min_coverage: 0.3,
            hook_max_sessions: 2,
            hook_chance: 0.3,
            tuning: crate::recall::Tuning::default(),
        }
    }
}

/// Settings for indexing transcripts and tickets.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct IndexConfig {
    /// A message longer than twice this many words is split into passages
    /// of about this size.
    pub chunk_words: usize,
    /// Ignored: passages are single messages and do not overlap (kept so
    /// that config files written for older versions still load).
    #[serde(skip_serializing)]
    pub overlap_words: Option<usize>,
    /// Cap on one tool result or command output, in characters (errors get 4x).
    pub tool_output_cap: usize,
    /// Target size of a ticket part, in words.
    pub ticket_words: usize,
    /// CPU niceness of `index` and `reindex` (0-19; 0 leaves it alone):
    /// batch jobs yield the CPU to hooks and queries on a busy machine. 19,
    /// the lowest priority: at 10 a hook's p99 under an index job was still
    /// 3.1x its p99 alone (torture load), at 19 it is 2.0x.
    pub nice: u8,
}

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            chunk_words: 150,
            overlap_words: None,
            tool_output_cap: 2000,
            ticket_words: 300,
            nice: 19,
        }
    }
}

/// Settings for extraction.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ExtractConfig {
    /// A session is finished after this many idle hours.
    pub idle_hours: f64,
    /// Sessions older than this are not extracted.
    pub max_age_days: f64,
    /// Most sessions per run.
    pub max_sessions: usize,
    /// External extractor command (used when set, unless --extractor builtin).
    pub command: Option<String>,
    /// A launcher's non-interactive mode, prompted on stdin (`claude -p`,
    /// `codex exec --skip-git-repo-check`, `gemini --skip-trust`): the
    /// `model` extractor, used when set and `command` is not.
    pub model_command: Option<String>,
    /// Timeout of the external command.
    pub timeout_secs: u64,
    /// The SessionEnd hook also extracts the session (after indexing it, in
    /// the background). PreCompact always does.
    pub on_session_end: bool,
}

impl Default for ExtractConfig {
    fn default() -> Self {
        ExtractConfig {
            idle_hours: 12.0,
            max_age_days: 30.0,
            max_sessions: 64,
            command: None,
            model_command: None,
            timeout_secs: 60,
            on_session_end: false,
        }
    }
}

/// Team memory (`[sync]`): where changes are exchanged and what is shared.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct SyncConfig {
    /// The PostgreSQL remote, `postgres://user@host:port/db?sslmode=...`
    /// (`RECALL_SYNC_URL`). A password is better kept in `~/.pgpass` or
    /// `PGPASSWORD` than here.
    pub url: Option<String>,
    /// This host's name in provenance (default: the machine's host name
    /// plus a random suffix, kept in `<home>/host.json`).
    pub host: Option<String>,
    /// Not used since the server names each change's author by the
    /// database login (docs/team-memory.md); still read, so a config
    /// that sets it loads.
    pub author: Option<String>,
    /// Share indexed sessions of shared projects (records always are).
    pub sessions: bool,
    /// Share indexed tickets of shared projects.
    pub tickets: bool,
    /// Sync the user scope (your preferences) between your own hosts, as
    /// `user:<person>`, the person the server's owner mapped this host's
    /// database login to; never into a team project.
    pub user_scope: bool,
    /// Seconds to wait for the server to answer a connection.
    pub connect_timeout_secs: u64,
    /// Seconds between syncs in `recall serve` and `recall sync --watch`,
    /// 0.1 to 86,400 as `--interval` takes (fractions allowed).
    pub interval_secs: f64,
}

impl Default for SyncConfig {
    fn default() -> Self {
        SyncConfig {
            url: None,
            host: None,
            author: None,
            sessions: true,
            tickets: true,
            user_scope: true,
            connect_timeout_secs: 5,
            interval_secs: 30.0,
        }
    }
}

/// Hybrid recall's embedding model (`[semantic]`, issue 38): off unless
/// `model` is set.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct SemanticConfig {
    /// The model's folder (`model.safetensors` and `tokenizer.json`, or a
    /// Hugging Face cache folder `models--org--name`); a relative path is
    /// read from the home folder (`RECALL_SEMANTIC_MODEL`).
    pub model: Option<std::path::PathBuf>,
    /// Hybrid recall in `recall query`, `recall serve` and the MCP tool:
    /// the model's nearest passages rescue what the words miss
    /// (`RECALL_SEMANTIC_HYBRID`; `recall query --semantic` turns it on for
    /// one query). Off by default: see docs/semantic.md for the figures.
    pub hybrid: bool,
    /// The cosine a passage or record needs to be rescued
    /// (`RECALL_SEMANTIC_MIN_COSINE`).
    pub min_cosine: f64,
    /// And how many standard deviations above the mean cosine of its table
    /// (`RECALL_SEMANTIC_MIN_Z`).
    pub min_z: f64,
    /// Most hits the dense side adds (`RECALL_SEMANTIC_RESCUE`).
    pub rescue: usize,
    /// They are placed right after this many of the lexical ranking's best
    /// (`RECALL_SEMANTIC_RESCUE_AFTER`).
    pub rescue_after: usize,
    /// The prompt hook's semantic gate: the cosine with the prompt a
    /// passage, record or ticket part needs, by its stored vector, to be
    /// injected (`RECALL_SEMANTIC_HOOK_GATE`). Off unless set; needs
    /// `model` and an index whose vectors that model made. See
    /// docs/semantic.md for what it costs and what it removes.
    pub hook_gate: Option<f64>,
}

impl Default for SemanticConfig {
    fn default() -> Self {
        let r = crate::recall::Rescue::default();
        SemanticConfig {
            model: None,
            hybrid: false,
            min_cosine: r.min_cosine,
            min_z: r.min_z,
            rescue: r.most,
            rescue_after: r.after,
            hook_gate: None,
        }
    }
}

impl SemanticConfig {
    /// How the dense side may rescue, as these keys say.
    pub fn rescue(&self) -> crate::recall::Rescue {
        crate::recall::Rescue {
            min_cosine: self.min_cosine,
            min_z: self.min_z,
            most: self.rescue,
            after: self.rescue_after,
        }
    }
}

/// The whole configuration.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub records: RecordsConfig,
    pub recall: RecallConfig,
    pub index: IndexConfig,
    pub extract: ExtractConfig,
    pub sync: SyncConfig,
    pub semantic: SemanticConfig,
}

impl Config {
    /// Load `path` if it exists, then apply `RECALL_*` overrides from `env`.
    ///
    /// Every value is checked against its range; the first one out of range
    /// is an error naming the file, the line and the valid range.
    pub fn load(path: &Path, env: impl Fn(&str) -> Option<String>) -> Result<Config> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => Some(text),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                None
            }
            Err(e) => return Err(Error::io("cannot read", path, e)),
        };
        let mut cfg = match &text {
            Some(text) => toml::from_str(text).map_err(|e| {
                let line = e
                    .span()
                    .map(|s| 1 + text[..s.start.min(text.len())].matches('\n').count())
                    .unwrap_or(1);
                Error::Parse {
                    path: path.to_path_buf(),
                    line,
                    message: format!("invalid config: {}", e.message()),
                }
            })?,
            None => Config::default(),
        };
        cfg.apply_env(&env)?;
        if let Some((key, problem)) = cfg.problems().into_iter().next() {
            let from_env = ENV_KEYS
                .iter()
                .find(|(_, k)| *k == key)
                .and_then(|(var, _)| env(var).filter(|v| !v.is_empty()).map(|_| *var));
            // A variable's value is not in the file: no file and line.
            if let Some(var) = from_env {
                return Err(Error::invalid(format!(
                    "invalid environment: {var} (sets {key}) {problem}; change or unset {var}"
                )));
            }
            return Err(Error::Parse {
                path: path.to_path_buf(),
                line: text.as_deref().and_then(|t| line_of(t, key)).unwrap_or(1),
                message: format!("invalid config: {key} {problem}"),
            });
        }
        Ok(cfg)
    }

    /// Values out of range, as (dotted key, "is X; must be Y"), in file order.
    fn problems(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        let mut at_least = |key: &'static str, v: usize, min: usize| {
            if v < min {
                out.push((key, format!("is {v}; it must be at least {min}")));
            }
        };
        at_least("records.max_body_chars", self.records.max_body_chars, 1);
        at_least("recall.limit", self.recall.limit, 1);
        at_least("index.chunk_words", self.index.chunk_words, 10);
        at_least("index.tool_output_cap", self.index.tool_output_cap, 1);
        at_least("index.ticket_words", self.index.ticket_words, 10);
        at_least("extract.max_sessions", self.extract.max_sessions, 1);
        at_least(
            "sync.connect_timeout_secs",
            self.sync.connect_timeout_secs as usize,
            1,
        );
        at_least(
            "extract.timeout_secs",
            self.extract.timeout_secs as usize,
            1,
        );
        let every = self.sync.interval_secs;
        if !(every.is_finite() && (0.1..=86_400.0).contains(&every)) {
            out.push((
                "sync.interval_secs",
                format!("is {every}; it must be from 0.1 to 86400 seconds, as --interval"),
            ));
        }
        if self.index.nice > 19 {
            out.push((
                "index.nice",
                format!("is {}; it must be from 0 to 19", self.index.nice),
            ));
        }
        let mut within = |key: &'static str, v: f64, lo: f64, hi: f64| {
            if !(v.is_finite() && (lo..=hi).contains(&v)) {
                out.push((
                    key,
                    format!("is {v}; it must be a number from {lo} to {hi}"),
                ));
            }
        };
        within(
            "recall.hook_min_score",
            self.recall.hook_min_score,
            0.0,
            1.0,
        );
        within(
            "recall.hook_min_coverage",
            self.recall.hook_min_coverage,
            0.0,
            1.0,
        );
        within(
            "recall.hook_max_sessions",
            f64::from(self.recall.hook_max_sessions),
            0.0,
            f64::from(crate::recall::TOGETHER_CAP as u32),
        );
        within("recall.hook_chance", self.recall.hook_chance, 0.0, 100.0);
        within("semantic.min_cosine", self.semantic.min_cosine, -1.0, 1.0);
        within("semantic.min_z", self.semantic.min_z, 0.0, 100.0);
        if let Some(gate) = self.semantic.hook_gate {
            within("semantic.hook_gate", gate, -1.0, 1.0);
        }
        within("semantic.rescue", self.semantic.rescue as f64, 0.0, 50.0);
        within(
            "semantic.rescue_after",
            self.semantic.rescue_after as f64,
            0.0,
            1000.0,
        );
        within("extract.idle_hours", self.extract.idle_hours, 0.0, 1e6);
        within("extract.max_age_days", self.extract.max_age_days, 0.0, 1e7);
        out.extend(self.recall.tuning.problems());
        out
    }

    fn apply_env(&mut self, env: &impl Fn(&str) -> Option<String>) -> Result<()> {
        let num = |name: &str| -> Result<Option<usize>> {
            match env(name).filter(|v| !v.is_empty()) {
                None => Ok(None),
                Some(v) => v
                    .parse()
                    .map(Some)
                    .map_err(|_| Error::invalid(format!("{name}={v:?} is not a whole number"))),
            }
        };
        if let Some(n) = num("RECALL_MAX_BODY_CHARS")? {
            self.records.max_body_chars = n;
        }
        if let Some(n) = num("RECALL_LIMIT")? {
            self.recall.limit = n;
        }
        if let Some(n) = num("RECALL_CHUNK_WORDS")? {
            self.index.chunk_words = n;
        }
        if let Some(url) = env("RECALL_SYNC_URL").filter(|v| !v.trim().is_empty()) {
            self.sync.url = Some(url);
        }
        if let Some(model) = env("RECALL_SEMANTIC_MODEL").filter(|v| !v.trim().is_empty()) {
            self.semantic.model = Some(model.into());
        }
        if let Some(v) = env("RECALL_SEMANTIC_HYBRID").filter(|v| !v.trim().is_empty()) {
            self.semantic.hybrid = parse_switch("RECALL_SEMANTIC_HYBRID", &v)?;
        }
        if let Some(v) = env("RECALL_SEMANTIC_MIN_COSINE").filter(|v| !v.trim().is_empty()) {
            self.semantic.min_cosine = v.trim().parse().map_err(|_| {
                Error::invalid(format!(
                    "RECALL_SEMANTIC_MIN_COSINE={v:?} is not a number: give a cosine from -1 to 1, such as 0.5"
                ))
            })?;
        }
        if let Some(v) = env("RECALL_SEMANTIC_HOOK_GATE").filter(|v| !v.trim().is_empty()) {
            self.semantic.hook_gate = Some(v.trim().parse().map_err(|_| {
                Error::invalid(format!(
                    "RECALL_SEMANTIC_HOOK_GATE={v:?} is not a number: give a cosine from -1 to 1, such as 0.25"
                ))
            })?);
        }
        if let Some(v) = env("RECALL_SEMANTIC_MIN_Z").filter(|v| !v.trim().is_empty()) {
            self.semantic.min_z = v.trim().parse().map_err(|_| {
                Error::invalid(format!(
                    "RECALL_SEMANTIC_MIN_Z={v:?} is not a number: give standard deviations from 0 to 100, such as 2"
                ))
            })?;
        }
        if let Some(n) = num("RECALL_SEMANTIC_RESCUE")? {
            self.semantic.rescue = n;
        }
        if let Some(n) = num("RECALL_SEMANTIC_RESCUE_AFTER")? {
            self.semantic.rescue_after = n;
        }
        Ok(())
    }
}

/// Set `[sync] url` in the config file at `path`, keeping everything else
/// in it (comments and order) as it was.
pub fn set_sync_url(path: &Path, url: &str) -> Result<()> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(Error::io("cannot read", path, e)),
    };
    let mut doc: toml_edit::DocumentMut =
        text.parse()
            .map_err(|e: toml_edit::TomlError| Error::Parse {
                path: path.to_path_buf(),
                line: e
                    .span()
                    .map(|s| 1 + text[..s.start.min(text.len())].matches('\n').count())
                    .unwrap_or(1),
                message: format!("invalid config: {}", e.message()),
            })?;
    if !doc.contains_table("sync") {
        doc["sync"] = toml_edit::table();
    }
    doc["sync"]["url"] = toml_edit::value(url);
    crate::store::atomic_write(path, doc.to_string().as_bytes())
}

/// An on/off environment value: `1`, `true`, `on`, `yes` or `0`, `false`,
/// `off`, `no`, in any case.
fn parse_switch(name: &str, v: &str) -> Result<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "on" | "yes" => Ok(true),
        "0" | "false" | "off" | "no" => Ok(false),
        _ => Err(Error::invalid(format!(
            "{name}={v:?} is not on or off: use 1, true, on or yes to turn it on, 0, false, off or no to turn it off"
        ))),
    }
}

/// Environment variables and the keys they set.
const ENV_KEYS: [(&str, &str); 11] = [
    ("RECALL_MAX_BODY_CHARS", "records.max_body_chars"),
    ("RECALL_LIMIT", "recall.limit"),
    ("RECALL_CHUNK_WORDS", "index.chunk_words"),
    ("RECALL_SYNC_URL", "sync.url"),
    ("RECALL_SEMANTIC_MODEL", "semantic.model"),
    ("RECALL_SEMANTIC_HYBRID", "semantic.hybrid"),
    ("RECALL_SEMANTIC_MIN_COSINE", "semantic.min_cosine"),
    ("RECALL_SEMANTIC_MIN_Z", "semantic.min_z"),
    ("RECALL_SEMANTIC_RESCUE", "semantic.rescue"),
    ("RECALL_SEMANTIC_RESCUE_AFTER", "semantic.rescue_after"),
    ("RECALL_SEMANTIC_HOOK_GATE", "semantic.hook_gate"),
];

/// The 1-based line of the dotted `key` in the TOML `text`, if it is
/// there (found with the parser's spans, so dotted keys and inline tables
/// count too).
fn line_of(text: &str, key: &str) -> Option<usize> {
    let root = toml::de::DeTable::parse(text).ok()?;
    let mut value = toml::de::DeValue::Table(root.into_inner());
    let mut span = None;
    for part in key.split('.') {
        let next = value.get(part)?;
        span = Some(next.span());
        value = next.get_ref().clone();
    }
    let start = span?.start.min(text.len());
    Some(1 + text[..start].matches('\n').count())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence_file_then_env() -> Result<()> {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("config.toml");
        assert_eq!(Config::load(&p, |_| None)?, Config::default());
        std::fs::write(&p, "[records]\nmax_body_chars = 500\n[recall]\nlimit = 3\n").unwrap();
        let c = Config::load(&p, |_| None)?;
        assert_eq!((c.records.max_body_chars, c.recall.limit), (500, 3));
        let c = Config::load(&p, |k| (k == "RECALL_LIMIT").then(|| "7".to_string()))?;
        assert_eq!(c.recall.limit, 7);
        Ok(())
    }

    #[test]
    fn typos_are_reported_with_a_line() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("config.toml");
        std::fs::write(&p, "[records]\nmax_body_char = 5\n").unwrap();
        let e = Config::load(&p, |_| None).unwrap_err();
        assert!(e.to_string().contains("config.toml:2"), "{e}");
    }

    fn load_text(text: &str) -> Result<Config> {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("config.toml");
        std::fs::write(&p, text).unwrap();
        Config::load(&p, |_| None)
    }

    /// Regression (docs review, stop 59): keys kept only so older files load
    /// are ignored whatever their value; `overlap_words` at or above
    /// `chunk_words` stopped every command.
    #[test]
    fn r_keys_kept_for_older_files_load_whatever_their_value() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("config.toml");
        std::fs::write(
            &p,
            "[index]\noverlap_words = 200\n[recall.tuning]\nmax_terms = 3\n[sync]\nauthor = \"someone\"\n",
        )
        .unwrap();
        Config::load(&p, |_| None).unwrap();
    }

    /// Regression (issue probe: these were all accepted silently): each bad
    /// value is refused with the file, its line and the valid range.
    #[test]
    fn r_out_of_range_values_are_refused_with_file_line_and_range() {
        let cases = [
            ("[index]\nchunk_words = 0\n", 2, "at least 10"),
            ("\n[recall.tuning]\ncandidates = 0\n", 3, "at least 1"),
            ("[recall.tuning]\nmax_jaccard = nan\n", 2, "from 0 to 1"),
            (
                "[recall.tuning]\nrecord_columns = [1.0, 2.0]\n",
                2,
                "4 weights",
            ),
            ("[recall]\nlimit = 0\n", 2, "at least 1"),
            ("[recall]\nhook_min_score = 1.5\n", 2, "from 0 to 1"),
            ("[recall]\n\nhook_min_coverage = -0.1\n", 3, "from 0 to 1"),
            ("recall.tuning.bm25_share = 2.5\n", 1, "from 0 to 1"),
            ("[recall.tuning]\nlength_norm = 1.5\n", 2, "from 0 to 1"),
            (
                "[recall.tuning]\nticket_length_norm = -0.5\n",
                2,
                "from 0 to 1",
            ),
            ("[recall.tuning]\nproximity = -1\n", 2, "from 0 to 100"),
            ("[recall.tuning]\ntemporal_boost = 11\n", 2, "from 0 to 10"),
            ("[recall.tuning]\nsubject_boost = -1\n", 2, "from 0 to 10"),
            ("[recall.tuning]\nperiod_boost = 10.5\n", 2, "from 0 to 10"),
            // Regression: 100000000 was taken, 0.5 refused, while
            // `--interval` takes 0.1 to 86400.
            (
                "[sync]\ninterval_secs = 100000000\n",
                2,
                "from 0.1 to 86400",
            ),
        ];
        for (text, line, range) in cases {
            let e = load_text(text).unwrap_err().to_string();
            assert!(e.contains(&format!("config.toml:{line}:")), "{text:?}: {e}");
            assert!(e.contains(range), "{text:?}: {e}");
        }
        // Good values load.
        let c = load_text("[recall.tuning]\ncandidates = 5\nmax_jaccard = 0.5\n").unwrap();
        assert_eq!(c.recall.tuning.candidates, 5);
        let c = load_text("[sync]\ninterval_secs = 0.5\n").unwrap();
        assert_eq!(c.sync.interval_secs, 0.5);
        assert_eq!(
            load_text("[sync]\ninterval_secs = 30\n")
                .unwrap()
                .sync
                .interval_secs,
            30.0
        );
    }

    #[test]
    fn semantic_model_is_off_by_default_and_set_by_file_then_env() -> Result<()> {
        assert_eq!(load_text("")?.semantic.model, None);
        let c = load_text("[semantic]\nmodel = \"/m/minilm\"\n")?;
        assert_eq!(c.semantic.model.as_deref(), Some(Path::new("/m/minilm")));
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("config.toml");
        std::fs::write(&p, "[semantic]\nmodel = \"/m/minilm\"\n").unwrap();
        let env = |k: &str| (k == "RECALL_SEMANTIC_MODEL").then(|| "/m/other".to_string());
        let c = Config::load(&p, env)?;
        assert_eq!(c.semantic.model.as_deref(), Some(Path::new("/m/other")));
        let e = load_text("[semantic]\nmodle = \"x\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("config.toml:2"), "{e}");
        Ok(())
    }

    #[test]
    fn hybrid_is_off_by_default_and_set_by_file_then_env() -> Result<()> {
        let c = load_text("")?;
        assert!(!c.semantic.hybrid);
        assert_eq!(c.semantic.rescue(), crate::recall::Rescue::default());
        let text = "[semantic]\nhybrid = true\nmin_cosine = 0.6\nrescue = 2\nrescue_after = 1\n";
        let c = load_text(text)?;
        assert!(c.semantic.hybrid);
        assert_eq!(
            (
                c.semantic.min_cosine,
                c.semantic.rescue,
                c.semantic.rescue_after
            ),
            (0.6, 2, 1)
        );
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("config.toml");
        std::fs::write(&p, text).unwrap();
        for (v, on) in [
            ("0", false),
            ("off", false),
            ("TRUE", true),
            (" yes ", true),
        ] {
            let env = |k: &str| (k == "RECALL_SEMANTIC_HYBRID").then(|| v.to_string());
            assert_eq!(Config::load(&p, env)?.semantic.hybrid, on, "{v}");
        }
        let env = |k: &str| (k == "RECALL_SEMANTIC_HYBRID").then(|| "maybe".to_string());
        let e = Config::load(&p, env).unwrap_err().to_string();
        assert!(
            e.contains("RECALL_SEMANTIC_HYBRID=\"maybe\"") && e.contains("0, false"),
            "{e}"
        );
        let env = |k: &str| (k == "RECALL_SEMANTIC_MIN_COSINE").then(|| "1.5".to_string());
        let e = Config::load(&p, env).unwrap_err().to_string();
        assert!(e.contains("RECALL_SEMANTIC_MIN_COSINE (sets semantic.min_cosine) is 1.5; it must be a number from -1 to 1"), "{e}");
        let e = load_text("[semantic]\n\nhybrid = \"yes\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("config.toml:3"), "{e}");
        let e = load_text("[semantic]\nrescue = 99\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("config.toml:2") && e.contains("semantic.rescue is 99"),
            "{e}"
        );
        Ok(())
    }

    #[test]
    fn an_out_of_range_environment_value_names_the_variable() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("config.toml");
        let e = Config::load(&p, |k| (k == "RECALL_LIMIT").then(|| "0".into())).unwrap_err();
        let e = e.to_string();
        assert!(
            e.contains("RECALL_LIMIT") && e.contains("at least 1"),
            "{e}"
        );
        // Regression: it was blamed on `config.toml:1`, a file that may
        // not even exist.
        assert!(!e.contains("config.toml"), "{e}");
        assert!(e.contains("change or unset RECALL_LIMIT"), "{e}");
    }
}
