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
    /// Ranking knobs (`[recall.tuning]`).
    pub tuning: crate::recall::Tuning,
}

impl Default for RecallConfig {
    fn default() -> Self {
        RecallConfig {
            limit: 10,
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
}

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            chunk_words: 150,
            overlap_words: None,
            tool_output_cap: 2000,
            ticket_words: 300,
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
    /// Timeout of the external command.
    pub timeout_secs: u64,
}

impl Default for ExtractConfig {
    fn default() -> Self {
        ExtractConfig {
            idle_hours: 12.0,
            max_age_days: 30.0,
            max_sessions: 64,
            command: None,
            timeout_secs: 60,
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
}

impl Config {
    /// Load `path` if it exists, then apply `RECALL_*` overrides from `env`.
    pub fn load(path: &Path, env: impl Fn(&str) -> Option<String>) -> Result<Config> {
        let mut cfg = match std::fs::read_to_string(path) {
            Ok(text) => toml::from_str(&text).map_err(|e| {
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
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                Config::default()
            }
            Err(e) => return Err(Error::io("cannot read", path, e)),
        };
        cfg.apply_env(env)?;
        Ok(cfg)
    }

    fn apply_env(&mut self, env: impl Fn(&str) -> Option<String>) -> Result<()> {
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
        Ok(())
    }
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
}
