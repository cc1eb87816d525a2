//! Who is syncing and what: this host's id, and a project's team identity.
//!
//! A host id is made once per home (`<home>/host.json`): the machine's name
//! plus six random hex digits, so two laptops both called `dev` stay apart.
//! A project's team identity is what makes two clones at different paths on
//! different hosts one shared project: the normalised `origin` remote
//! (`git@github.com:acme/app.git` and `https://github.com/acme/app` are both
//! `github.com/acme/app`), or a name the user gives.

use std::path::Path;
use std::process::Command;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::store::{atomic_write, Home};

#[derive(Debug, Serialize, Deserialize)]
struct HostFile {
    id: String,
}

/// This host's id: `sync.host` from the config if set, else the one kept
/// in `<home>/host.json`, made on first use.
pub fn host_id(home: &Home, configured: Option<&str>) -> Result<String> {
    if let Some(h) = configured.map(str::trim).filter(|h| !h.is_empty()) {
        return check_name("sync.host", h).map(str::to_string);
    }
    let path = home.root().join("host.json");
    match std::fs::read(&path) {
        Ok(bytes) => {
            let f: HostFile = serde_json::from_slice(&bytes).map_err(|e| Error::Parse {
                path: path.clone(),
                line: e.line(),
                message: format!("invalid host file: {e}; delete it and a new host id is made"),
            })?;
            return Ok(f.id);
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io("cannot read", path, e)),
    }
    home.ensure()?;
    let mut name = crate::text::slug(&machine_name(), 24);
    if name.is_empty() {
        name.push_str("host");
    }
    let id = format!("{name}-{}", &uuid::Uuid::new_v4().simple().to_string()[..6]);
    atomic_write(
        &path,
        &serde_json::to_vec_pretty(&HostFile { id: id.clone() })?,
    )?;
    Ok(id)
}

/// This machine's host name (empty when the system gives none).
pub fn machine_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname writes at
    // most that many bytes and we read up to the first NUL.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return String::new();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// A team or host name: printable, no whitespace, at most 200 bytes.
pub fn check_name<'a>(what: &str, name: &'a str) -> Result<&'a str> {
    let ok = !name.is_empty()
        && name.len() <= 200
        && name.chars().all(|c| !c.is_whitespace() && !c.is_control());
    if ok {
        Ok(name)
    } else {
        Err(Error::invalid(format!(
            "{what} '{}' is not a usable name: use up to 200 characters without spaces (for example acme/app)",
            name.escape_debug()
        )))
    }
}

/// The team identity of the git repository at `root`, from its `origin`
/// remote; `None` when it has none (or git is not installed).
pub fn team_from_git(root: &Path) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["config", "--get", "remote.origin.url"])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    normalise_remote(String::from_utf8_lossy(&out.stdout).trim())
}

/// `host/owner/repo` from any of git's remote spellings: scheme URLs
/// (`https://`, `ssh://`, `git://`, with users and ports), and scp-style
/// `user@host:owner/repo`. Lowercased, without `.git` or slashes at the
/// ends. Local paths have no host and give `None`.
pub fn normalise_remote(remote: &str) -> Option<String> {
    let r = remote.trim();
    let (host, path) = if r.contains("://") {
        let u = url::Url::parse(r).ok()?;
        (u.host_str()?.to_string(), u.path().to_string())
    } else {
        let (left, path) = r.split_once(':')?;
        if left.contains('/') || path.starts_with("//") {
            return None;
        }
        let host = left.rsplit_once('@').map_or(left, |(_, h)| h);
        (host.to_string(), path.to_string())
    };
    let path = path.trim_matches('/');
    let path = path
        .strip_suffix(".git")
        .unwrap_or(path)
        .trim_end_matches('/');
    if host.is_empty() || path.is_empty() {
        return None;
    }
    Some(format!("{host}/{path}").to_lowercase())
}

/// The server-side name of one person's user scope.
pub fn user_project(author: &str) -> String {
    format!("user:{author}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_one_remote_is_one_team() {
        let want = Some("github.com/acme/app".to_string());
        for r in [
            "git@github.com:acme/app.git",
            "https://github.com/acme/app",
            "https://github.com/acme/app.git/",
            "ssh://git@github.com:22/acme/app.git",
            "git://github.com/Acme/App",
            "https://user:token@github.com/acme/app",
            "github.com:acme/app",
        ] {
            assert_eq!(normalise_remote(r), want, "{r}");
        }
        assert_ne!(normalise_remote("git@github.com:acme/api.git"), want);
        assert_eq!(normalise_remote("/srv/git/app.git"), None);
        assert_eq!(normalise_remote("../app"), None);
    }

    #[test]
    fn a_host_id_is_made_once() -> Result<()> {
        let t = tempfile::tempdir().unwrap();
        let home = Home::new(t.path().join("h"));
        let a = host_id(&home, None)?;
        assert_eq!(a, host_id(&home, None)?);
        assert!(a.len() > 7, "{a}");
        assert_eq!(host_id(&home, Some("ci-runner-3"))?, "ci-runner-3");
        assert!(host_id(&home, Some("two words")).is_err());
        Ok(())
    }
}
