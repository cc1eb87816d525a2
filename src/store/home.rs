//! Resolving the home folder: `--home`, then `RECALL_HOME`, then
//! `$XDG_DATA_HOME/recall`, then `~/.local/share/recall`.

use std::path::PathBuf;

use crate::error::{Error, Result};

/// Resolve the home folder from an explicit flag and the environment.
///
/// `env` is a lookup function so tests need not touch the process
/// environment.
pub fn resolve_home(
    flag: Option<PathBuf>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<PathBuf> {
    if let Some(p) = flag {
        return Ok(p);
    }
    let nonempty = |k: &str| env(k).filter(|v| !v.is_empty());
    if let Some(p) = nonempty("RECALL_HOME") {
        return Ok(PathBuf::from(p));
    }
    if let Some(p) = nonempty("XDG_DATA_HOME") {
        return Ok(PathBuf::from(p).join("recall"));
    }
    if let Some(h) = nonempty("HOME") {
        return Ok(PathBuf::from(h).join(".local/share/recall"));
    }
    Err(Error::invalid(
        "cannot find a home for recall: set --home, RECALL_HOME or HOME",
    ))
}

/// The user's home folder (`$HOME`), read through `env` like
/// [`resolve_home`], so a test or a caller with its own environment gets
/// its own answer.
pub fn user_home(env: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    env("HOME").filter(|v| !v.is_empty()).map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn precedence() {
        let all = [
            ("RECALL_HOME", "/r"),
            ("XDG_DATA_HOME", "/x"),
            ("HOME", "/h"),
        ];
        assert_eq!(
            resolve_home(Some("/f".into()), env(&all)).unwrap(),
            PathBuf::from("/f")
        );
        assert_eq!(resolve_home(None, env(&all)).unwrap(), PathBuf::from("/r"));
        assert_eq!(
            resolve_home(None, env(&all[1..])).unwrap(),
            PathBuf::from("/x/recall")
        );
        assert_eq!(
            resolve_home(None, env(&all[2..])).unwrap(),
            PathBuf::from("/h/.local/share/recall")
        );
        assert!(resolve_home(None, env(&[])).is_err());
    }

    #[test]
    fn empty_values_are_ignored() {
        let e = [("RECALL_HOME", ""), ("HOME", "/h")];
        assert_eq!(
            resolve_home(None, env(&e)).unwrap(),
            PathBuf::from("/h/.local/share/recall")
        );
    }
}
