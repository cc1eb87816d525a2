//! What a session did, as its commits say: the subject line of each
//! `git commit` an agent ran through its shell tool.
//!
//! A session's first prompt is often a template ("Work on bead X. Run bd
//! show X …") or a question that says little of the outcome; the commits
//! it made name the work done. The parsers hand every shell command they
//! read to [`commit_subject`], and the session keeps the subjects found
//! (`SessionMeta::did`), which its passages are then shown under.
//!
//! Only a command that holds a `git commit` with its message inline is
//! read: `-m MSG`, `-mMSG`, `--message MSG`, `--message=MSG`, `-am MSG`,
//! or the message in a here-document (`-m "$(cat <<'EOF' … EOF)"`, the
//! form Claude Code writes). A commit whose message is in a file or an
//! editor gives nothing.

use std::sync::LazyLock;

use regex::Regex;

use super::transcript::TITLE_CAP;
use super::values;

/// `git` where a command starts (the start, a new line, or after `;`,
/// `&&`, `||`, `|` or `(`), its global options that take a value (`-C
/// path`, `-c k=v`), then `commit` as a word.
static GIT_COMMIT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|[;&|(\n])\s*git(?:\s+-[Cc]\s+\S+)*\s+commit(?:\s|$)").expect("valid regex")
});

/// A here-document's start: `<<EOF`, `<<'EOF'`, `<<"EOF"`, `<<-EOF`.
static HEREDOC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"<<-?\s*['"]?([A-Za-z_][A-Za-z0-9_]*)['"]?[^\n]*\n"#).expect("valid regex")
});

/// The subject line of the first `git commit` in `command` that carries
/// its message inline, one line of at most 80 characters (`TITLE_CAP`).
pub fn commit_subject(command: &str) -> Option<String> {
    let m = GIT_COMMIT.find(command)?;
    let rest = &command[m.end()..];
    let subject = heredoc_subject(rest)
        .map(str::to_string)
        .or_else(|| flag_subject(rest))?;
    let subject = subject.trim();
    (!subject.is_empty()).then(|| values::title(subject, TITLE_CAP))
}

/// The first line of a here-document that opens on the commit's own
/// line after a message flag (`-m`, `--message`, or `-F -`, which reads
/// it): one opened later in the script belongs to another command.
fn heredoc_subject(rest: &str) -> Option<&str> {
    let line_end = rest.find('\n')?;
    let start = HEREDOC.captures(rest)?;
    let opening = start.get(0)?;
    let before = &rest[..opening.start()];
    if opening.start() > line_end
        || !(before.contains("-m") || before.contains("--message") || before.contains("-F"))
    {
        return None;
    }
    let delimiter = start.get(1)?.as_str();
    rest[opening.end()..]
        .lines()
        .take_while(|l| l.trim() != delimiter)
        .find(|l| !l.trim().is_empty())
}

/// The message of `-m`, `-mMSG`, `--message`, `--message=MSG` or a
/// bundle ending in `m` (`-am`) among the words of the commit's command,
/// up to the next shell operator.
fn flag_subject(rest: &str) -> Option<String> {
    // The commit's line, or more when a quoted message runs over several
    // lines (`-m "subject` newline `body"`). shlex reads quotes, not shell
    // syntax: an operator is a word of its own only when spaced, as agents
    // write them.
    let line = rest.lines().next().unwrap_or_default();
    let words = shlex::split(line).or_else(|| shlex::split(rest))?;
    let mut words = words.into_iter();
    while let Some(w) = words.next() {
        if matches!(w.as_str(), "&&" | "||" | ";" | "|" | "&") {
            return None;
        }
        if w == "--message" {
            return words.next().map(first_line);
        }
        if let Some(m) = w.strip_prefix("--message=") {
            return Some(first_line(m.to_string()));
        }
        if let Some(flags) = w.strip_prefix('-').filter(|f| !f.starts_with('-')) {
            if let Some(at) = flags.find('m') {
                let glued = &flags[at + 1..];
                if flags[..at].chars().all(|c| c.is_ascii_alphabetic()) {
                    return if glued.is_empty() {
                        words.next().map(first_line)
                    } else {
                        Some(first_line(glued.to_string()))
                    };
                }
            }
        }
    }
    None
}

fn first_line(s: String) -> String {
    s.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_messages_in_each_form() {
        let cases = [
            (r#"git commit -m "fix: the parser""#, "fix: the parser"),
            (r#"git commit -m 'one' -m 'two'"#, "one"),
            (
                r#"git add -A && git commit -am "wip: tidy up" && git push"#,
                "wip: tidy up",
            ),
            (r#"git commit --message="feat: x y""#, "feat: x y"),
            (r#"git commit --message "feat: z""#, "feat: z"),
            (r#"git commit -q -mquick"#, "quick"),
            (r#"git -C /repo commit -m "in a folder""#, "in a folder"),
            (r#"cd x; git commit -m "after cd""#, "after cd"),
            (
                "git commit -m \"subject\n\nbody line\"\ngit push",
                "subject",
            ),
        ];
        for (cmd, want) in cases {
            assert_eq!(commit_subject(cmd).as_deref(), Some(want), "{cmd}");
        }
    }

    #[test]
    fn a_here_document_gives_its_first_line() {
        let cmd = "git add lib/a.ex && git commit -m \"$(cat <<'EOF'\nfeat: add OTEL bootstrap\n\nLonger body with \"quotes\".\n\nCo-Authored-By: Claude\nEOF\n)\"";
        assert_eq!(
            commit_subject(cmd).as_deref(),
            Some("feat: add OTEL bootstrap")
        );
        let unquoted = "git commit -F - <<EOF\nchore: bump\nEOF";
        assert_eq!(commit_subject(unquoted).as_deref(), Some("chore: bump"));
    }

    #[test]
    fn commands_that_commit_nothing_inline_give_nothing() {
        for cmd in [
            "git status",
            "git commit",
            "git commit --amend --no-edit",
            "git commit -F msg.txt",
            "git log --grep commit -m",
            "echo git commit -m later",
            "cat <<'EOF'\nnot a commit\nEOF\ngit commit",
            "git commit -m \"unbalanced",
            "git commit -m \"\"",
            "grep -r 'git commit -a' docs",
        ] {
            assert_eq!(commit_subject(cmd), None, "{cmd}");
        }
    }

    #[test]
    fn a_long_subject_is_one_capped_line() {
        let long = format!("git commit -m \"{}\"", "word ".repeat(60));
        let got = commit_subject(&long).unwrap();
        assert!(got.chars().count() <= TITLE_CAP + 1, "{got}");
        assert!(!got.contains('\n'));
    }
}
