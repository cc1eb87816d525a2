//! Shell commands as runs: each Codex `[exec]` tool message and each Claude
//! Code `[tool Bash]` call paired with its result, normalised (`cd x &&`,
//! redirections, trailing pipes, noise flags dropped), with its outcome read
//! from the result (failures behind a pipe included, filtered output and
//! rejected calls unknown) and its kind (test, lint, build ...). Procedures
//! and incidents are told from these runs.

use std::sync::LazyLock;

use regex::Regex;

use super::re;
use crate::ingest::model::{Message, Role};

/// What a recognised project command does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Kind {
    Test,
    Lint,
    Format,
    Build,
    Migrate,
    Run,
    Deploy,
}

impl Kind {
    pub(super) fn purpose(self) -> &'static str {
        match self {
            Kind::Test => "run the tests",
            Kind::Lint => "run the linters and static checks",
            Kind::Format => "format the code",
            Kind::Build => "build the project",
            Kind::Migrate => "migrate the database",
            Kind::Run => "start the app locally",
            Kind::Deploy => "deploy",
        }
    }
}

static COMMAND: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:[A-Z][A-Z0-9_]*=\S+\s+)*(?:cargo\s+(?:build|test|nextest|clippy|fmt|check|bench|run)|(?:npm|pnpm|yarn|bun)\s+(?:run\s+\S+|test|build|lint|ci)|npx\s+(?:vitest|jest|tsc|eslint|prettier|playwright)|pytest|python3?\s+-m\s+(?:pytest|unittest|mypy|ruff|black)|uv\s+run\s+\S+|poetry\s+run\s+\S+|tox|nox|make|just|go\s+(?:test|build|vet|run)|mix\s+(?:test|compile|credo|dialyzer|format|ecto\.\S+|phx\.server|ash\.codegen)|\./gradlew|gradle|mvn|dotnet\s+(?:build|test)|bundle\s+exec\s+\S+|rspec|rake|docker\s+(?:build|compose)|ruff|mypy|eslint|tsc|jest|vitest|deno\s+(?:test|task)|swift\s+(?:build|test)|zig\s+build|ctest|terraform\s+apply|kubectl\s+apply|helm\s+(?:upgrade|install))\b",
    )
});

/// The kind of a recognised command, `None` for anything else: the first
/// [`KIND_WORDS`] entry naming a non-flag argument or a `.`/`:`/`-`/`_` part
/// of one (`ecto.migrate`, `test:unit`); anything else recognised is a build.
pub(super) fn command_kind(cmd: &str) -> Option<Kind> {
    if !COMMAND.is_match(cmd) {
        return None;
    }
    let parts: Vec<&str> = cmd
        .split_whitespace()
        .filter(|t| !t.starts_with('-'))
        .flat_map(|t| t.split(['.', ':', '-', '_']))
        .collect();
    let kind = KIND_WORDS
        .iter()
        .find(|(ws, _)| ws.iter().any(|w| parts.contains(w)))
        .map_or(Kind::Build, |(_, k)| *k);
    Some(kind)
}

/// Words that give a command its kind, first match wins.
const KIND_WORDS: [(&[&str], Kind); 7] = [
    (&["fmt", "format", "prettier", "black"], Kind::Format),
    (&["migrate", "migration", "migrations"], Kind::Migrate),
    (
        &[
            "deploy", "apply", "upgrade", "install", "publish", "release",
        ],
        Kind::Deploy,
    ),
    (
        &[
            "test", "tests", "pytest", "jest", "vitest", "rspec", "spec", "nextest", "unittest",
            "ctest", "e2e",
        ],
        Kind::Test,
    ),
    (
        &[
            "clippy",
            "lint",
            "credo",
            "dialyzer",
            "mypy",
            "ruff",
            "tsc",
            "vet",
            "check",
            "typecheck",
            "eslint",
        ],
        Kind::Lint,
    ),
    (&["build", "compile"], Kind::Build),
    (&["server", "run", "start", "dev", "serve", "up"], Kind::Run),
];

static CD_PREFIX: LazyLock<Regex> = LazyLock::new(|| re(r"^(?:cd\s+\S+\s*&&\s*)+"));
static NOISE_SUFFIX: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\s*(?:\d?>&\d|\d?>\s*/dev/null|\|\s*(?:tail|head|grep|rg|less|cat|tee)\b.*|;\s*echo\b.*|\|\|\s*(?:true|echo\b.*)|&&\s*echo\b.*)\s*$",
    )
});

/// Flags that change nothing about what a command is for.
static NOISE_FLAGS: LazyLock<Regex> =
    LazyLock::new(|| re(r"\s--seed[= ]\d+\b|\s--(?:no-)?colou?r(?:=\w+)?\b"));

/// `raw` without `cd x &&`, redirections, trailing pipes and noise flags
/// (`--seed 0`, `--color`); `None` for multi-line or here-doc commands.
pub(super) fn normalize_command(raw: &str) -> Option<String> {
    let first = raw.trim();
    if first.is_empty() || first.contains('\n') || first.contains("<<") || first.contains("$(") {
        return None;
    }
    let mut cmd = CD_PREFIX.replace(first, "").into_owned();
    loop {
        let next = NOISE_SUFFIX.replace(&cmd, "").trim().to_string();
        if next == cmd {
            break;
        }
        cmd = next;
    }
    let cmd = NOISE_FLAGS.replace_all(&cmd, "");
    let cmd = cmd.split_whitespace().collect::<Vec<_>>().join(" ");
    (!cmd.is_empty()).then_some(cmd)
}

/// One execution of a shell command with its outcome.
#[derive(Debug, Clone)]
pub(super) struct Run {
    pub(super) cmd: String,
    /// Index of the message that issued the command.
    pub(super) call: usize,
    /// Index of the message holding the result.
    pub(super) result: usize,
    pub(super) outcome: Outcome,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    Passed,
    Failed,
    /// Rejected by the user or a tool error unrelated to the command.
    Unknown,
}

/// Every shell command with a known result: Codex `[exec] cmd` tool messages
/// carry their output; a Claude Code `[tool Bash] cmd` line is paired with
/// the Tool message(s) right after its assistant message when the counts
/// match, and a lone call followed directly by the next assistant turn had
/// an empty, successful result.
pub(super) fn command_runs(messages: &[Message]) -> Vec<Run> {
    let mut runs = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        match m.role {
            Role::Tool => {
                if let Some(rest) = m.text.strip_prefix("[exec] ") {
                    let (line, output) = rest.split_once('\n').unwrap_or((rest, ""));
                    push_run(&mut runs, line, i, i, outcome(m.is_error, output));
                }
            }
            Role::Assistant => claude_runs(messages, i, &mut runs),
            _ => {}
        }
    }
    runs
}

fn claude_runs(messages: &[Message], i: usize, runs: &mut Vec<Run>) {
    let calls: Vec<&str> = messages[i]
        .text
        .lines()
        .filter(|l| l.starts_with("[tool "))
        .collect();
    let results: Vec<usize> = (i + 1..messages.len())
        .take_while(|&j| messages[j].role == Role::Tool)
        .collect();
    let next_is_turn = messages
        .get(i + 1)
        .is_some_and(|m| m.role == Role::Assistant);
    if let ([line], [], true) = (calls.as_slice(), results.as_slice(), next_is_turn) {
        // The parser drops empty successful results (errors are always
        // kept), so a lone call answered by the next turn succeeded silently.
        if let Some(cmd) = line.strip_prefix("[tool Bash] ") {
            push_run(runs, cmd, i, i, Outcome::Passed);
        }
        return;
    }
    if calls.len() != results.len() {
        return;
    }
    for (line, &j) in calls.iter().zip(&results) {
        if let Some(cmd) = line.strip_prefix("[tool Bash] ") {
            let m = &messages[j];
            push_run(runs, cmd, i, j, outcome(m.is_error, &m.text));
        }
    }
}

fn push_run(runs: &mut Vec<Run>, raw: &str, call: usize, result: usize, outcome: Outcome) {
    let outcome = match outcome {
        Outcome::Passed if FILTERED.is_match(raw) => Outcome::Unknown,
        o => o,
    };
    if let Some(cmd) = normalize_command(raw) {
        runs.push(Run {
            cmd,
            call,
            result,
            outcome,
        });
    }
}

static FAILURE_TEXT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?m)^\s*(?:error(?:\[E\d+\])?:|FAILED\b|FAIL\b|test result: FAILED|Traceback \(most recent call last\)|npm ERR!|make: \*\*\*)|\b[1-9]\d* (?:tests? )?(?:failures?|failed|errors?)\b|\*\* \(\w+(?:\.\w+)*(?:Error|Exception)\)|\bfound [1-9]\d* [\w ]{0,30}issues?\b|warnings were emitted",
    )
});
/// Output piped through a filter: a clean result proves nothing.
static FILTERED: LazyLock<Regex> = LazyLock::new(|| re(r"\|\s*(?:grep|rg|head|sed|awk)\b"));
static NOT_RUN: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)doesn't want to proceed|tool use was rejected|<tool_use_error>|operation not permitted|interrupted by user",
    )
});

fn outcome(is_error: bool, output: &str) -> Outcome {
    if NOT_RUN.is_match(output) {
        Outcome::Unknown
    } else if is_error || FAILURE_TEXT.is_match(output) {
        Outcome::Failed
    } else {
        Outcome::Passed
    }
}

/// Whether a command line names files (a one-off invocation, not a procedure).
pub(super) fn names_files(cmd: &str) -> bool {
    cmd.split_whitespace().skip(1).any(|t| {
        !t.starts_with('-')
            && (t.contains('/')
                || t.contains("::")
                || t.rsplit_once('.').is_some_and(|(_, e)| {
                    (1..=5).contains(&e.len()) && e.chars().all(char::is_alphabetic)
                }))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::rules::extract;
    use crate::extract::rules::test_transcripts::{asst, of, run, tool};
    use crate::records::Category;

    #[test]
    fn pipe_masked_failures_count_as_failures() {
        assert_eq!(
            outcome(false, "Finished in 0.3s\n12 tests, 2 failures"),
            Outcome::Failed
        );
        assert_eq!(outcome(false, "12 tests, 0 failures"), Outcome::Passed);
        assert_eq!(
            outcome(true, "The user doesn't want to proceed with this tool use."),
            Outcome::Unknown
        );
    }

    #[test]
    fn codex_exec_messages_are_runs() {
        let msgs = [
            tool("c1", "[exec] make build\nok", false),
            tool("c2", "[exec] make build\nok", false),
        ];
        let p = extract(&msgs);
        assert_eq!(of(&p, Category::Procedures)[0].evidence, ["c1", "c2"]);
    }

    #[test]
    fn silent_success_and_mismatched_results() {
        // A lone Bash call answered directly by the next turn had an empty,
        // successful result (the parser drops those).
        let msgs = [
            asst("a1", "[tool Bash] mix compile --warnings-as-errors 2>&1"),
            asst(
                "a2",
                "Clean compile.\n[tool Bash] mix compile --warnings-as-errors",
            ),
            asst("a3", "Clean again."),
        ];
        let c = extract(&msgs);
        let p = of(&c, Category::Procedures);
        assert_eq!(p.len(), 1, "{c:?}");
        assert_eq!(
            p[0].text,
            "To build the project, run `mix compile --warnings-as-errors`."
        );
        assert_eq!(p[0].evidence, ["a1", "a2"]);
        // Two calls, one result: unpaired, so nothing is known.
        let msgs = [
            asst("b1", "[tool Bash] make test\n[tool Bash] make lint"),
            tool("b2", "ok", false),
            asst("b3", "[tool Bash] make test\n[tool Bash] make lint"),
            tool("b4", "ok", false),
        ];
        assert!(extract(&msgs).is_empty());
    }

    #[test]
    fn grep_filtered_output_proves_nothing() {
        let mut msgs = Vec::new();
        msgs.extend(run("1", "cargo clippy 2>&1 | grep warning", "", false));
        msgs.extend(run("2", "cargo clippy 2>&1 | grep warning", "", false));
        assert!(of(&extract(&msgs), Category::Procedures).is_empty());
    }

    #[test]
    fn normalize_strips_noise() {
        assert_eq!(
            normalize_command("cd /x && mix test 2>&1 | tail -5").as_deref(),
            Some("mix test")
        );
        assert_eq!(normalize_command("git commit -m \"$(cat <<'EOF'"), None);
        assert_eq!(command_kind("mix credo --strict"), Some(Kind::Lint));
        assert_eq!(command_kind("npm run build"), Some(Kind::Build));
        assert_eq!(command_kind("mix ecto.migrate"), Some(Kind::Migrate));
        assert_eq!(
            command_kind("mix dialyzer --format short"),
            Some(Kind::Lint)
        );
        assert_eq!(command_kind("cargo run --release"), Some(Kind::Run));
        assert_eq!(command_kind("git push"), None);
        assert_eq!(
            normalize_command("mix test --seed 0").as_deref(),
            Some("mix test")
        );
        assert!(names_files("mix test test/a_test.exs"));
        assert!(!names_files("cargo test --all-targets"));
    }
}
