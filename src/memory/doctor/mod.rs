//! `recall doctor` as data: [`Memory::doctor`] checks the home, the user
//! scope and the current project, and returns each problem with its fix
//! ([`Finding`]) in a [`Checkup`] the front end prints. What it checks is
//! split along its data: the files (modes, record files, temporary files:
//! `files.rs`) and the index (schema, integrity, term statistics, drift:
//! `index.rs`). Doctor reports; it never migrates or repairs.

mod files;
mod index;

use std::path::PathBuf;

use super::Memory;
use crate::error::Result;
use crate::store::{Scope, ScopeDir};

/// One problem and its fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// What is wrong, and where.
    pub what: String,
    /// The command or step that fixes it.
    pub fix: String,
}

/// How one scope came out of the check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScopeHealth {
    /// The scope's folder does not exist: nothing to check.
    Empty,
    /// Checked. `problems` counts this scope's findings; `read_only` says
    /// its index could only be read (a read-only home), so FTS integrity
    /// was not checked.
    Checked { problems: usize, read_only: bool },
}

/// One scope doctor looked at.
#[derive(Debug, Clone)]
pub struct ScopeCheck {
    pub scope: Scope,
    pub root: PathBuf,
    pub index: PathBuf,
    pub health: ScopeHealth,
}

/// What [`Memory::doctor`] found.
#[derive(Debug)]
pub struct Checkup {
    /// The user scope, then the current project when there is one.
    pub scopes: Vec<ScopeCheck>,
    /// Every problem, in the order found: the home's first, then each
    /// scope's.
    pub findings: Vec<Finding>,
    /// The names of the home's other projects, which were not checked.
    /// Listing them happens after the checks and can fail on its own (an
    /// unreadable `projects/`): the findings are still worth showing.
    pub unchecked: Result<Vec<String>>,
}

impl Checkup {
    /// No problem found.
    pub fn is_healthy(&self) -> bool {
        self.findings.is_empty()
    }
}

impl Memory {
    /// Check the home, the user scope and the current project (when one
    /// resolves), and name the home's projects that were not checked.
    pub fn doctor(&self) -> Checkup {
        let mut dirs = vec![self.home.user()];
        let project = self.project().ok();
        if let Some(p) = &project {
            dirs.push(p.dir.clone());
        }
        let mut findings = Vec::new();
        files::check_mode(self.home.root(), 0o700, &mut findings);
        files::check_logs(&self.home.root().join("logs"), &mut findings);
        // A project whose project.json does not read is invisible to
        // `project list`, `--project NAME` and `reindex --all-projects`.
        for (path, e) in crate::store::Project::unreadable(&self.home) {
            findings.push(Finding {
                what: format!(
                    "{} cannot be read ({e}), so `project list`, `--project NAME` and `reindex --all-projects` do not see this project",
                    path.display()
                ),
                fix: "fix the file, or remove it and run `recall reindex` in the project's folder, which writes it again (then `recall sync --share` again if it was shared)".into(),
            });
        }
        let scopes = dirs
            .iter()
            .map(|dir| self.check_scope(dir, &mut findings))
            .collect();
        if let Some(p) = &project {
            self.check_semantic(&p.dir, &mut findings);
        }
        self.check_sync_remote(&mut findings);
        let checked = project.map(|p| p.info.id);
        let unchecked = self.projects().map(|all| {
            all.into_iter()
                .filter(|p| Some(&p.id) != checked.as_ref())
                .map(|p| p.name)
                .collect()
        });
        Checkup {
            scopes,
            findings,
            unchecked,
        }
    }

    /// `[sync] url` (or `RECALL_SYNC_URL`): one that does not read as a
    /// PostgreSQL URL fails every sync, hooks' background ones silently.
    fn check_sync_remote(&self, out: &mut Vec<Finding>) {
        if self.config.sync.url.is_none() {
            return;
        }
        if let Err(e) = self.sync_remote(&|k| std::env::var(k).ok()) {
            out.push(Finding {
                what: format!("every sync fails: {e}"),
                fix: format!(
                    "fix `[sync] url` in {} (or RECALL_SYNC_URL), or set it again with `recall sync --init postgres://USER@HOST:PORT/DATABASE`",
                    self.home.root().join("config.toml").display()
                ),
            });
        }
    }

    /// `[semantic] model` and the project's vectors. Hybrid recall and the
    /// prompt hook's gate pass over what they cannot use and say so only
    /// in their debug logs, so doctor says it: a model that does not
    /// load, an index with no vectors, vectors another model made (a
    /// cosine across two models' spaces means nothing), and a gate with
    /// no model.
    fn check_semantic(&self, project: &ScopeDir, out: &mut Vec<Finding>) {
        let config = self.home.root().join("config.toml");
        let Some(path) = self.semantic_model() else {
            // Every query warns of this on stderr; doctor says it too.
            if self.config.semantic.hybrid {
                out.push(Finding {
                    what: format!(
                        "{}: `[semantic] hybrid = true` but no `[semantic] model`, so recall runs on words alone",
                        config.display()
                    ),
                    fix: format!(
                        "{}, then run `recall index`; or set `hybrid = false`",
                        crate::semantic::locate::HOW_TO_GET
                    ),
                });
            }
            if self.config.semantic.hook_gate.is_some() {
                out.push(Finding {
                    what: format!(
                        "{}: `[semantic] hook_gate` is set but no `[semantic] model`, so the prompt hook has no gate",
                        config.display()
                    ),
                    fix: format!(
                        "{}, then run `recall index`; or remove `hook_gate`",
                        crate::semantic::locate::HOW_TO_GET
                    ),
                });
            }
            return;
        };
        let identity = match super::semantic::loaded(&path, self.home.root()) {
            Ok((_, identity)) => identity,
            Err(e) => {
                out.push(Finding {
                    what: format!(
                        "`[semantic] model` does not load, so recall runs on words alone: {e}"
                    ),
                    fix: format!(
                        "point `[semantic] model` in {} (or RECALL_SEMANTIC_MODEL) at a model folder; `recall model check` loads it and says what is wrong",
                        config.display()
                    ),
                });
                return;
            }
        };
        let index = project.index_path();
        if !index.exists() {
            return;
        }
        let uses = if self.config.semantic.hook_gate.is_some() {
            "hybrid recall rescues nothing and `[semantic] hook_gate` leaves nothing out"
        } else {
            "hybrid recall rescues nothing"
        };
        let fix = "run `recall index` again on what this project indexed (for example `recall index --claude-code`): with `[semantic] model` set it embeds every passage and record, those of files it has already read included";
        match index::semantic_model(&index) {
            None => out.push(Finding {
                what: format!("{} holds no vectors, so {uses}", index.display()),
                fix: fix.into(),
            }),
            Some(made) if made != identity => out.push(Finding {
                what: format!(
                    "{}'s vectors were made by another model ({made}) than `[semantic] model` ({identity}), so {uses}",
                    index.display()
                ),
                fix: fix.into(),
            }),
            Some(_) => {}
        }
    }

    fn check_scope(&self, dir: &ScopeDir, out: &mut Vec<Finding>) -> ScopeCheck {
        let health = if dir.root.exists() {
            let before = out.len();
            let limits = self.limits();
            files::check_scope_files(dir, &limits, out);
            let read_only = index::check_index(dir, &limits, out);
            ScopeHealth::Checked {
                problems: out.len() - before,
                read_only,
            }
        } else {
            ScopeHealth::Empty
        };
        ScopeCheck {
            scope: dir.scope,
            root: dir.root.clone(),
            index: dir.index_path(),
            health,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{test_memory, test_memory_with_record};

    /// A memory with one project record, and that record's file.
    fn with_record() -> (tempfile::TempDir, Memory, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let (mem, file) = test_memory_with_record(tmp.path());
        (tmp, mem, file)
    }

    /// Whether a finding's text says `needle`.
    fn says(c: &Checkup, needle: &str) -> bool {
        c.findings.iter().any(|f| f.what.contains(needle))
    }

    #[test]
    fn a_home_that_does_not_exist_is_empty_and_healthy() {
        let tmp = tempfile::tempdir().unwrap();
        let c = test_memory(tmp.path()).doctor();
        assert!(c.is_healthy(), "{:?}", c.findings);
        let health: Vec<_> = c.scopes.iter().map(|s| s.health.clone()).collect();
        assert_eq!(health, [ScopeHealth::Empty, ScopeHealth::Empty]);
        assert_eq!(c.unchecked.unwrap(), Vec::<String>::new());
    }

    #[test]
    fn a_project_with_records_passes() {
        let (_tmp, mem, _) = with_record();
        let c = mem.doctor();
        assert!(c.is_healthy(), "{:?}", c.findings);
        assert_eq!(
            c.scopes[1].health,
            ScopeHealth::Checked {
                problems: 0,
                read_only: false
            }
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_readable_record_file_is_a_finding_of_its_scope() {
        use std::os::unix::fs::PermissionsExt;
        let (_tmp, mem, file) = with_record();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let c = mem.doctor();
        assert_eq!(c.findings.len(), 1, "{:?}", c.findings);
        assert!(c.findings[0].what.contains("other users can read"));
        assert_eq!(c.findings[0].fix, format!("chmod 600 {}", file.display()));
        assert!(matches!(
            c.scopes[1].health,
            ScopeHealth::Checked { problems: 1, .. }
        ));
    }

    #[test]
    fn an_index_that_is_not_a_database_needs_a_full_reindex() {
        let (_tmp, mem, _) = with_record();
        std::fs::write(mem.project().unwrap().dir.index_path(), [b'x'; 8192]).unwrap();
        let c = mem.doctor();
        let rebuild = c.findings.iter().any(|f| f.fix == index::REBUILD);
        assert!(rebuild, "{:?}", c.findings);
    }

    #[test]
    fn an_index_from_a_newer_recall_says_upgrade() {
        let (_tmp, mem, _) = with_record();
        let c = rusqlite::Connection::open(mem.project().unwrap().dir.index_path()).unwrap();
        c.pragma_update(None, "user_version", crate::store::SCHEMA_VERSION + 1)
            .unwrap();
        drop(c);
        let c = mem.doctor();
        assert!(says(&c, "newer than this recall"), "{:?}", c.findings);
    }

    /// Regression: a record file that does not parse was reported, and
    /// then counted again as "not indexed" with `recall reindex` as the
    /// fix, which cannot index it: one finding, with the fix that works,
    /// whether the file never had a row or broke after it was indexed.
    #[test]
    fn a_record_file_that_does_not_parse_is_not_drift() {
        let (_tmp, mem, src) = with_record();
        let body = std::fs::read_to_string(&src).unwrap();
        let broken = body.replace("importance: 50", "importance: [oops");
        assert_ne!(broken, body);
        std::fs::write(src.with_file_name("by-hand.md"), &broken).unwrap();
        std::fs::write(&src, &broken).unwrap();
        let c = mem.doctor();
        assert!(!says(&c, "not indexed"), "{:?}", c.findings);
        let invalid = c
            .findings
            .iter()
            .filter(|f| f.what.contains("invalid frontmatter"));
        assert_eq!(invalid.count(), 2, "{:?}", c.findings);
    }

    #[test]
    fn a_record_file_added_by_hand_is_drift() {
        let (_tmp, mem, src) = with_record();
        let copy = src.with_file_name("by-hand.md");
        let body = std::fs::read_to_string(&src).unwrap();
        std::fs::write(&copy, body.replace("use-pnpm", "by-hand")).unwrap();
        let c = mem.doctor();
        assert!(says(&c, "1 record file(s) not indexed"), "{:?}", c.findings);
    }

    /// Regression: a sync url that is not a PostgreSQL URL passed every
    /// check while every sync failed.
    #[test]
    fn a_sync_url_that_does_not_read_is_a_finding() {
        let (_tmp, mut mem, _) = with_record();
        for bad in ["", "http://example.com"] {
            mem.config.sync.url = Some(bad.into());
            let c = mem.doctor();
            assert!(says(&c, "every sync fails"), "{bad}: {:?}", c.findings);
        }
        mem.config.sync.url = Some("postgres://u@db:5432/team".into());
        assert!(mem.doctor().is_healthy());
    }

    /// A semantic gate with no model, or no vectors in the project's
    /// index, is a gate that leaves nothing out: doctor says which and how
    /// to fix it.
    #[test]
    fn a_semantic_gate_without_a_model_or_vectors_is_a_finding() {
        let (tmp, mut mem, _) = with_record();
        mem.config.semantic.hook_gate = Some(0.25);
        let c = mem.doctor();
        assert!(says(&c, "no `[semantic] model`"), "{:?}", c.findings);
        // Regression: hybrid on with no model passed every check.
        mem.config.semantic.hook_gate = None;
        mem.config.semantic.hybrid = true;
        let c = mem.doctor();
        assert!(
            says(&c, "`[semantic] hybrid = true` but no `[semantic] model`"),
            "{:?}",
            c.findings
        );
        mem.config.semantic.hybrid = false;
        mem.config.semantic.hook_gate = Some(0.25);
        let model = tmp.path().join("model");
        std::fs::create_dir(&model).unwrap();
        crate::semantic::table::tests::tiny_model(&model, false);
        mem.config.semantic.model = Some(model);
        let c = mem.doctor();
        assert!(
            says(&c, "holds no vectors, so hybrid recall rescues nothing and `[semantic] hook_gate` leaves nothing out"),
            "{:?}",
            c.findings
        );
        assert_eq!(c.findings.len(), 1, "{:?}", c.findings);
        mem.config.semantic.hook_gate = None;
        mem.config.semantic.model = None;
        assert!(mem.doctor().is_healthy());
    }

    /// A configured model that does not load, and vectors another model
    /// made, leave hybrid recall with nothing to compare, silently but for
    /// a debug log: doctor names each, with the fix, and is quiet once the
    /// index's vectors are the configured model's.
    #[test]
    fn a_model_that_does_not_load_or_made_no_vectors_here_is_a_finding() {
        let (tmp, mut mem, _) = with_record();
        let model = tmp.path().join("model");
        mem.config.semantic.model = Some(model.clone());
        let c = mem.doctor();
        assert!(
            says(&c, "`[semantic] model` does not load"),
            "{:?}",
            c.findings
        );
        assert!(
            c.findings
                .iter()
                .any(|f| f.fix.contains("recall model check")),
            "{:?}",
            c.findings
        );
        assert_eq!(
            c.findings.len(),
            1,
            "no vectors finding beside it: {:?}",
            c.findings
        );

        std::fs::create_dir(&model).unwrap();
        crate::semantic::table::tests::tiny_model(&model, false);
        let index = mem.project().unwrap().dir.index_path();
        let set = |made: &str| {
            rusqlite::Connection::open(&index)
                .unwrap()
                .execute(
                    "INSERT INTO meta (key, value) VALUES ('semantic_model', ?1)
                     ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    [made],
                )
                .unwrap();
        };
        set("static dim=4 blake3=00");
        let c = mem.doctor();
        assert!(
            says(&c, "were made by another model (static dim=4 blake3=00)"),
            "{:?}",
            c.findings
        );
        assert!(
            c.findings[0].fix.contains("recall index"),
            "{:?}",
            c.findings
        );

        let (m, dir) = crate::semantic::Model::load(&model).unwrap();
        set(&crate::semantic::identity(&m, &dir).unwrap());
        assert!(mem.doctor().is_healthy(), "{:?}", mem.doctor().findings);
    }

    #[test]
    fn the_other_projects_are_named() {
        let tmp = tempfile::tempdir().unwrap();
        let mem = test_memory(tmp.path());
        mem.ensure_scope(Scope::Project).unwrap();
        mem.with_project("web")
            .ensure_scope(Scope::Project)
            .unwrap();
        assert_eq!(mem.doctor().unchecked.unwrap(), ["web"]);
    }
}
