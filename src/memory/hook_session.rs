//! What the hooks keep per launcher session, in `<home>/hook-sessions/
//! <hash of the session id>.json` (private, removed once two days quiet):
//! the hits the prompt hook injected into it since it started or was last
//! compacted, so a later prompt leaves them out (see `prompt`); and the
//! project it runs in, noted while its folder exists, so a session whose
//! folder is gone by its end (a git worktree removed before the agent
//! exited, the usual end of a parallel agent's run) is still indexed into
//! its project.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use super::Memory;

/// Session files older than this are removed (see [`prune`]).
const KEEP: Duration = Duration::from_secs(2 * 24 * 3600);

/// How often the session files are scanned for those past [`KEEP`].
const PRUNE_EVERY: Duration = Duration::from_secs(3600);

/// The file whose time is the last scan's.
const PRUNED: &str = ".pruned";

/// What the hooks know of one session.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
pub(super) struct SessionState {
    /// The hits injected since the session started or last compacted
    /// (each as `prompt::given_key` makes it).
    pub shown: BTreeSet<String>,
    /// Tokens injected into the session so far.
    pub tokens: usize,
    /// The folder of the project the session runs in (a worktree's is
    /// its main checkout's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<PathBuf>,
    /// The session id its transcript is indexed under, when read from it:
    /// another one for a resumed Claude Code session, whose file begins
    /// with the session it resumed (see
    /// [`indexed_session_id`](crate::ingest::claude_code::indexed_session_id)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub indexed_as: Option<String>,
}

impl Memory {
    pub(super) fn session_file(&self, session: &str) -> PathBuf {
        let hash = blake3::hash(session.as_bytes()).to_hex();
        self.home
            .root()
            .join("hook-sessions")
            .join(format!("{}.json", &hash[..24]))
    }

    /// What the hooks noted for `session` (nothing, for one never seen or
    /// a file that does not parse).
    pub(super) fn read_session(&self, session: &str) -> SessionState {
        std::fs::read(self.session_file(session))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    /// Best effort: a hook never fails because its state was not saved.
    pub(super) fn write_session(&self, session: &str, state: &SessionState) {
        let path = self.session_file(session);
        let Some(dir) = path.parent() else { return };
        let written = serde_json::to_vec(state)
            .map_err(crate::Error::from)
            .and_then(|bytes| crate::store::replace_cache_file(&path, &bytes));
        if let Err(e) = written {
            tracing::debug!("hook session state not saved: {e}");
            return;
        }
        prune(dir);
    }

    /// The project's folder, for a session not yet noted in one.
    pub(super) fn note_project(&self, state: &mut SessionState) {
        if state.project.is_none() {
            state.project = self.project().ok().and_then(|p| p.info.root);
        }
    }

    /// For the hooks: note the project `session` runs in and, from its
    /// Claude Code `transcript`, the id that is indexed under (read once,
    /// when the file has one); with `compacted`, forget the hits it was
    /// given, since its context was replaced by a summary (or cleared) and
    /// they are no longer in front of the agent. Best effort, and only in
    /// a home that exists.
    pub fn note_session(&self, session: &str, compacted: bool, transcript: Option<&Path>) {
        if !self.home.root().is_dir() {
            return;
        }
        let mut state = self.read_session(session);
        let had = (
            state.project.is_some(),
            state.shown.is_empty(),
            state.indexed_as.is_some(),
        );
        self.note_project(&mut state);
        if compacted {
            state.shown.clear();
        }
        if state.indexed_as.is_none() {
            state.indexed_as = transcript.and_then(crate::ingest::claude_code::indexed_session_id);
        }
        let now = (
            state.project.is_some(),
            state.shown.is_empty(),
            state.indexed_as.is_some(),
        );
        if had != now {
            self.write_session(session, &state);
        }
    }

    /// The id `session`'s passages are indexed under, as noted by
    /// [`Memory::note_session`]: its own, unless it resumed another.
    pub fn indexed_as(&self, session: &str) -> String {
        self.read_session(session)
            .indexed_as
            .unwrap_or_else(|| session.to_string())
    }

    /// This memory in the project `session` was noted in, when the folder
    /// it was opened in is gone (and no project was named): a worktree
    /// removed before the session ended.
    pub fn for_session(&self, session: &str) -> Option<Memory> {
        if self.project_name.is_some() || self.cwd.exists() {
            return None;
        }
        let root = self.read_session(session).project.filter(|r| r.is_dir())?;
        Some(Memory {
            cwd: root,
            ..self.clone()
        })
    }
}

/// Remove session files nobody wrote for [`KEEP`], at most once per
/// [`PRUNE_EVERY`]: the marker file `.pruned` holds the time of the last
/// scan, so a prompt costs one `stat` however many files there are.
fn prune(dir: &Path) {
    let marker = dir.join(PRUNED);
    let now = SystemTime::now();
    let age = |m: std::io::Result<std::fs::Metadata>| {
        m.and_then(|m| m.modified())
            .map(|t| now.duration_since(t).unwrap_or_default())
    };
    if age(std::fs::metadata(&marker)).is_ok_and(|a| a < PRUNE_EVERY) {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        if e.file_name() != PRUNED && age(e.metadata()).is_ok_and(|a| a > KEEP) {
            let _ = std::fs::remove_file(e.path());
        }
    }
    // Its time set, not left to whether truncating an empty file sets it.
    if let Err(e) = std::fs::File::create(&marker).and_then(|f| f.set_modified(now)) {
        tracing::debug!("hook session files: cannot mark the scan: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Result;
    use crate::memory::prompt::tests::setup;

    #[test]
    fn a_new_session_removes_the_files_of_sessions_gone_quiet() -> Result<()> {
        let (_t, mem) = setup();
        mem.prompt_context("walrus cache", Some("old"))?;
        mem.prompt_context("walrus cache", Some("current"))?;
        let dir = mem.home.root().join("hook-sessions");
        let marker = dir.join(PRUNED);
        assert!(marker.exists(), "the first session's start scanned");
        let set_age = |p: &Path, age: Duration| {
            let f = std::fs::File::options().write(true).open(p).unwrap();
            f.set_modified(SystemTime::now() - age).unwrap();
        };
        let quiet = KEEP + Duration::from_secs(60);
        let old = mem.session_file("old");
        set_age(&old, quiet);
        // Whatever the directory holds goes at that age, a stray file too.
        let stray = dir.join("stray.tmp");
        std::fs::write(&stray, b"").unwrap();
        set_age(&stray, quiet);
        // Within the hour of the last scan, no prompt scans: not one of a
        // session under way,
        mem.prompt_context("walrus again", Some("current"))?;
        assert!(old.exists() && stray.exists());
        // nor a new session's.
        mem.prompt_context("walrus cache", Some("new"))?;
        assert!(old.exists() && stray.exists());
        // A prompt after the hour removes both, keeps the rest, and marks
        // its scan.
        set_age(&marker, PRUNE_EVERY + Duration::from_secs(60));
        mem.prompt_context("walrus cache", Some("newer"))?;
        assert!(!old.exists() && !stray.exists());
        for s in ["current", "new", "newer"] {
            assert!(mem.session_file(s).exists(), "{s}");
        }
        let scanned = std::fs::metadata(&marker).unwrap().modified().unwrap();
        assert!(
            SystemTime::now()
                .duration_since(scanned)
                .unwrap_or_default()
                < PRUNE_EVERY
        );
        Ok(())
    }

    #[test]
    fn the_session_file_holds_no_session_id_and_is_private() -> Result<()> {
        let (_t, mem) = setup();
        mem.prompt_context("walrus cache", Some("secret-session-id"))?;
        let dir = mem.home.root().join("hook-sessions");
        let names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != PRUNED)
            .collect();
        assert_eq!(names.len(), 1);
        assert!(!names[0].contains("secret"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.join(&names[0]))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        Ok(())
    }
}
