//! The SessionStart hook's context in the façade: the project's and the
//! user's most important records and the project's last sessions, read
//! from indexes opened read-only with no migration (the hook path), and
//! the check every reading hook makes that the home is there at all.

use super::Memory;
use crate::error::{Error, Result};
use crate::recall::summary::scope_start;
use crate::render::render_session_start;

/// Records shown per scope.
const RECORDS: usize = 12;
/// Recent sessions listed.
const SESSIONS: usize = 5;

impl Memory {
    /// The home exists and is a folder. The reading hooks never create
    /// it, but a missing or unusable one is worth an error: otherwise a
    /// mistyped `RECALL_HOME` would silently recall nothing forever.
    pub fn require_home(&self) -> Result<()> {
        let root = self.home.root();
        match std::fs::metadata(root) {
            Ok(m) if m.is_dir() => Ok(()),
            Ok(_) => Err(Error::invalid(format!(
                "the recall home {} is not a folder; point --home or RECALL_HOME at a folder",
                root.display()
            ))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(Error::NotFound(format!(
                "no recall home at {}: nothing to recall yet; add a record or index a session first",
                root.display()
            ))),
            Err(e) => Err(Error::io("cannot read the recall home", root, e)),
        }
    }

    /// The Markdown a session starts with (empty when there is nothing to
    /// say): the project's records and sessions, then the user's records.
    /// The session starting (`session`, a launcher's id: one resumed or
    /// compacted is already indexed) is not listed among its own past.
    /// Indexes are read as they are: an old one is not upgraded here.
    pub fn session_start(&self, session: Option<&str>) -> Result<String> {
        self.require_home()?;
        let mut opened = Vec::new();
        for dir in [self.project()?.dir, self.home.user()] {
            if let Some(db) = self.open_for_read(&dir, false)? {
                opened.push((dir.scope, db));
            }
        }
        let mut scopes = Vec::new();
        for (scope, db) in &opened {
            scopes.push(db.with_conn(|c| scope_start(c, *scope, RECORDS, SESSIONS, session))?);
        }
        Ok(render_session_start(&scopes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::test_memory;
    use crate::memory::NewRecord;
    use crate::render::SESSION_START_HEADER;
    use crate::store::Scope;

    #[test]
    fn a_missing_home_says_so() {
        let tmp = tempfile::tempdir().unwrap();
        let err = test_memory(tmp.path()).session_start(None).unwrap_err();
        assert!(matches!(err, Error::NotFound(_)), "{err}");
        assert!(err.to_string().starts_with("no recall home at "), "{err}");
    }

    #[test]
    fn a_home_that_is_a_file_says_so() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("home"), b"").unwrap();
        let err = test_memory(tmp.path()).require_home().unwrap_err();
        assert!(matches!(err, Error::Invalid(_)), "{err}");
        assert!(err.to_string().contains("is not a folder"), "{err}");
    }

    #[test]
    fn an_empty_home_starts_with_nothing() -> Result<()> {
        let tmp = tempfile::tempdir().unwrap();
        let mem = test_memory(tmp.path());
        mem.ensure_scope(Scope::Project)?;
        assert_eq!(mem.session_start(None)?, "");
        Ok(())
    }

    #[test]
    fn project_records_come_before_the_user_s() -> Result<()> {
        let tmp = tempfile::tempdir().unwrap();
        let mem = test_memory(tmp.path());
        mem.upsert_in(
            Scope::User,
            NewRecord::decision("tabs", "I indent with tabs."),
        )?;
        mem.upsert_in(Scope::Project, NewRecord::decision("pnpm", "We use pnpm."))?;
        let text = mem.session_start(None)?;
        assert!(text.starts_with(SESSION_START_HEADER), "{text}");
        let project = text.find("### Project memory\n- **pnpm**").expect(&text);
        let user = text.find("### Your preferences\n- **tabs**").expect(&text);
        assert!(project < user, "{text}");
        Ok(())
    }
}
