//! Procedures as skills: the `SKILL.md` files agents load playbooks from
//! (Claude Code reads `.claude/skills/<name>/SKILL.md`: YAML frontmatter
//! with `name` and `description`, then the instructions).
//!
//! Pure functions: which procedures belong to one task (`propose`), a
//! skill's name and text (`render`), and the checks a launcher applies
//! when it loads one (`parse`). Writing, and refusing to overwrite a
//! person's edits, is the façade's (`Memory::promote`).

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::records::Record;

/// Longest skill name a launcher takes.
pub const NAME_MAX: usize = 64;
/// Longest description a launcher takes.
pub const DESCRIPTION_MAX: usize = 1024;
/// Two procedures share a task when this share of their content words
/// (Jaccard) is common.
const SAME_TASK: f64 = 0.25;

/// A skill: what `SKILL.md` holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skill {
    pub name: String,
    pub description: String,
    /// The instructions (Markdown).
    pub body: String,
}

/// A playbook proposed from procedures: a skill and the records it came
/// from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Proposal {
    pub skill: Skill,
    pub sources: Vec<String>,
}

/// The frontmatter a launcher reads.
#[derive(Serialize, Deserialize)]
struct Front {
    name: String,
    description: String,
}

/// A valid skill name from `text`: lowercase letters, digits and single
/// hyphens, at most [`NAME_MAX`] characters, never naming the vendors the
/// launchers reserve ("claude", "anthropic"). Empty when nothing is left.
pub fn name_from(text: &str) -> String {
    let slug = crate::secrets::redacted_slug(text, NAME_MAX * 2);
    let ascii: String = slug
        .split('-')
        .map(|w| {
            w.chars()
                .filter(char::is_ascii_alphanumeric)
                .collect::<String>()
        })
        .filter(|w| !w.is_empty() && *w != "claude" && *w != "anthropic")
        .collect::<Vec<_>>()
        .join("-");
    let mut out = String::new();
    for w in ascii.split('-') {
        if out.len() + w.len() + usize::from(!out.is_empty()) > NAME_MAX {
            // A first word longer than a name is cut, not dropped.
            if out.is_empty() {
                out.extend(w.chars().take(NAME_MAX));
            }
            break;
        }
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(w);
    }
    out
}

/// Whether `name` is one a launcher accepts.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= NAME_MAX
        && name.split('-').all(|w| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
        && !name.contains("claude")
        && !name.contains("anthropic")
}

/// What a procedure is for, as a person would say it: the `X` of its
/// text's "To X, run …" (how extracted procedures read), else its key
/// without the `auto:` or `agent:` prefix recall gives generated keys, its
/// hyphens as spaces. The flag says whether it is a verb phrase ("build
/// the project") rather than a topic ("release tag").
fn task(r: &Record) -> (String, bool) {
    let first = first_sentence(&r.body);
    let to = first
        .strip_prefix("To ")
        .or_else(|| first.strip_prefix("to "))
        .and_then(|rest| rest.split_once(','))
        .map(|(x, _)| x.trim())
        .filter(|x| (2..=80).contains(&x.chars().count()) && !x.contains(['`', '.', ';', ':']));
    if let Some(x) = to {
        return (x.to_string(), true);
    }
    let key = r.meta.key.as_str();
    let key = ["auto:", "agent:"]
        .iter()
        .find_map(|p| key.strip_prefix(p))
        .unwrap_or(key);
    let topic = key.replace(['-', '_', ':'], " ");
    (
        topic.split_whitespace().collect::<Vec<_>>().join(" "),
        false,
    )
}

/// `a`, `a or b`, `a, b or c`.
fn listed(items: &[String], last: &str) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., tail] => format!("{} {last} {tail}", init.join(", ")),
    }
}

/// The skill's name from its tasks, most important first: the first
/// task's words, then " and " and the words of the second that the first
/// does not hold, articles left out (`build-project-and-run-tests`,
/// `release-notes-and-tag`).
fn name_of(tasks: &[(String, bool)]) -> String {
    const ARTICLES: [&str; 3] = ["the", "a", "an"];
    let mut words: Vec<String> = Vec::new();
    for (i, (t, _)) in tasks.iter().take(2).enumerate() {
        let new: Vec<String> = t
            .split_whitespace()
            .map(str::to_lowercase)
            .filter(|w| !ARTICLES.contains(&w.as_str()) && !words.contains(w))
            .collect();
        if i > 0 && !new.is_empty() {
            words.push("and".into());
        }
        words.extend(new);
    }
    name_from(&words.join(" "))
}

/// The description: when to use the skill, in words a person would use
/// ("Use when you need to build the project or run the tests: …"), at
/// most [`DESCRIPTION_MAX`] characters on one line.
fn description(records: &[&Record], tasks: &[(String, bool)]) -> String {
    let mut verbs: Vec<String> = Vec::new();
    let mut topics: Vec<String> = Vec::new();
    for (t, verb) in tasks {
        let list = if *verb { &mut verbs } else { &mut topics };
        if !list.contains(t) {
            list.push(t.clone());
        }
    }
    let first = records
        .iter()
        .map(|r| first_sentence(&r.body))
        .find(|s| !s.is_empty())
        .unwrap_or_default();
    let text = match (verbs.is_empty(), topics.is_empty()) {
        (false, true) => format!(
            "Use when you need to {}: the steps and commands this project uses.",
            listed(&verbs, "or")
        ),
        (true, _) => format!("Use when working on {}: {first}", listed(&topics, "or")),
        (false, false) => format!(
            "Use when you need to {}, or when working on {}: the steps and commands this project uses.",
            listed(&verbs, "or"),
            listed(&topics, "or")
        ),
    };
    crate::text::truncate_chars(&text.replace('\n', " "), DESCRIPTION_MAX).to_string()
}

fn first_sentence(body: &str) -> String {
    let line = body
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let end = line
        .char_indices()
        .find(|&(i, c)| c == '.' && line[i + 1..].starts_with(' '))
        .map_or(line.len(), |(i, _)| i + 1);
    line[..end].to_string()
}

/// A task as a heading: its first letter capitalised.
fn heading(task: &str) -> String {
    let mut c = task.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// A playbook from the records of one task, most important first: a
/// title, then each task as a section holding the full text of every
/// record about it (records of the same task share a section; a playbook
/// of one task is its title and text).
fn playbook(records: &[&Record]) -> Skill {
    let tasks: Vec<(String, bool)> = records.iter().map(|r| task(r)).collect();
    let mut name = name_of(&tasks);
    if name.is_empty() {
        name = name_from(&records[0].meta.id);
    }
    let mut sections: Vec<(String, Vec<&str>)> = Vec::new();
    for (r, (t, _)) in records.iter().zip(&tasks) {
        let h = heading(t);
        match sections.iter_mut().find(|(s, _)| *s == h) {
            Some((_, bodies)) => bodies.push(r.body.trim()),
            None => sections.push((h, vec![r.body.trim()])),
        }
    }
    let body = match sections.as_slice() {
        [(h, bodies)] => format!("# {h}\n\n{}\n", bodies.join("\n\n")),
        _ => {
            let titles: Vec<String> = sections.iter().map(|(h, _)| h.to_lowercase()).collect();
            let mut body = format!("# {}\n", heading(&listed(&titles, "and")));
            for (h, bodies) in &sections {
                body.push_str(&format!("\n## {h}\n\n{}\n", bodies.join("\n\n")));
            }
            body
        }
    };
    Skill {
        name,
        description: description(records, &tasks),
        body,
    }
}

/// One record as a skill.
pub fn from_record(r: &Record) -> Skill {
    playbook(&[r])
}

/// Group procedures into tasks (records whose content words overlap by
/// a quarter or more, transitively) and propose one skill per task,
/// most important first, each named and described from what its
/// procedures are for, its body holding every record's steps.
pub fn propose(records: &[Record]) -> Vec<Proposal> {
    let words: Vec<BTreeSet<String>> = records.iter().map(content_words).collect();
    let mut group: Vec<usize> = (0..records.len()).collect();
    fn root(g: &mut [usize], mut i: usize) -> usize {
        while g[i] != i {
            g[i] = g[g[i]];
            i = g[i];
        }
        i
    }
    for i in 0..records.len() {
        for j in i + 1..records.len() {
            if jaccard(&words[i], &words[j]) >= SAME_TASK {
                let (a, b) = (root(&mut group, i), root(&mut group, j));
                group[a.max(b)] = a.min(b);
            }
        }
    }
    let mut tasks: Vec<Vec<&Record>> = Vec::new();
    let mut index = std::collections::HashMap::new();
    for (i, r) in records.iter().enumerate() {
        let g = root(&mut group, i);
        let t = *index.entry(g).or_insert_with(|| {
            tasks.push(Vec::new());
            tasks.len() - 1
        });
        tasks[t].push(r);
    }
    for t in &mut tasks {
        t.sort_by(|a, b| {
            b.meta
                .importance
                .cmp(&a.meta.importance)
                .then(a.meta.key.cmp(&b.meta.key))
        });
    }
    tasks.sort_by(|a, b| {
        b[0].meta
            .importance
            .cmp(&a[0].meta.importance)
            .then(a[0].meta.key.cmp(&b[0].meta.key))
    });
    let mut out: Vec<Proposal> = Vec::new();
    for t in tasks {
        let mut skill = playbook(&t);
        if skill.name.is_empty() {
            continue;
        }
        // Two tasks may read alike: each proposal is promoted by its name,
        // so names are unique.
        let base = skill.name.clone();
        let mut n = 2;
        while out.iter().any(|p| p.skill.name == skill.name) {
            let suffix = format!("-{n}");
            let keep = NAME_MAX - suffix.len();
            skill.name = format!(
                "{}{suffix}",
                base[..base.len().min(keep)].trim_end_matches('-')
            );
            n += 1;
        }
        out.push(Proposal {
            skill,
            sources: t.iter().map(|r| r.meta.id.clone()).collect(),
        });
    }
    out
}

fn content_words(r: &Record) -> BTreeSet<String> {
    let text = format!("{} {} {}", r.meta.key, r.meta.keywords.join(" "), r.body);
    crate::text::words(&text)
        .map(str::to_lowercase)
        .filter(|w| w.len() > 2 && !crate::recall::is_stopword(w))
        .map(|w| crate::text::stem(&w).into_owned())
        .collect()
}

fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let inter = a.intersection(b).count();
    let union = a.len() + b.len() - inter;
    if union == 0 {
        0.0
    } else {
        inter as f64 / union as f64
    }
}

/// `SKILL.md` text: YAML frontmatter, then the body and where it came
/// from.
pub fn render(skill: &Skill, sources: &[String]) -> Result<String> {
    if !valid_name(&skill.name) {
        return Err(Error::invalid(format!(
            "'{}' is not a skill name: use lowercase letters, digits and hyphens, at most {NAME_MAX} characters",
            skill.name
        )));
    }
    let front = serde_yaml_ng::to_string(&Front {
        name: skill.name.clone(),
        description: skill.description.clone(),
    })
    .map_err(|e| Error::invalid(format!("cannot write the skill's frontmatter: {e}")))?;
    Ok(format!(
        "---\n{front}---\n\n{}\n\n_From recall: {}._\n",
        skill.body.trim(),
        sources.join(", ")
    ))
}

/// Read `SKILL.md` text as a launcher does: frontmatter with a valid name
/// and a description, then a body.
pub fn parse(text: &str) -> Result<Skill> {
    let rest = text
        .strip_prefix("---\n")
        .ok_or_else(|| Error::invalid("a SKILL.md starts with `---` frontmatter"))?;
    let (front, body) = rest
        .split_once("\n---\n")
        .ok_or_else(|| Error::invalid("the SKILL.md frontmatter has no closing `---`"))?;
    let f: Front = serde_yaml_ng::from_str(front)
        .map_err(|e| Error::invalid(format!("the SKILL.md frontmatter is not valid: {e}")))?;
    if !valid_name(&f.name) {
        return Err(Error::invalid(format!(
            "'{}' is not a valid skill name",
            f.name
        )));
    }
    if f.description.trim().is_empty() || f.description.chars().count() > DESCRIPTION_MAX {
        return Err(Error::invalid(format!(
            "a skill description is 1 to {DESCRIPTION_MAX} characters"
        )));
    }
    Ok(Skill {
        name: f.name,
        description: f.description,
        body: body.trim().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{Category, Source};
    use crate::store::Scope;

    fn rec(key: &str, body: &str, importance: u8) -> Record {
        let mut r = Record::new(
            key,
            Category::Procedures,
            Scope::Project,
            Source::Manual,
            body,
            jiff::Timestamp::from_second(1_700_000_000).unwrap(),
        );
        r.meta.importance = importance;
        r
    }

    #[test]
    fn names_are_what_launchers_accept() {
        assert_eq!(
            name_from("Release: cut a tag & push"),
            "release-cut-a-tag-push"
        );
        assert_eq!(name_from("Ask Claude to review"), "ask-to-review");
        assert_eq!(name_from(&"x".repeat(300)), "x".repeat(NAME_MAX));
        assert_eq!(name_from(&format!("deploy {}", "y".repeat(70))), "deploy");
        assert_eq!(name_from("日本語"), "");
        for ok in ["release", "cut-a-tag", "a1"] {
            assert!(valid_name(ok), "{ok}");
        }
        for bad in [
            "",
            "Release",
            "a--b",
            "-a",
            "a_b",
            "claude-tips",
            &"a".repeat(65),
        ] {
            assert!(!valid_name(bad), "{bad}");
        }
    }

    #[test]
    fn a_skill_reads_back_as_a_launcher_reads_it() -> Result<()> {
        let r = rec(
            "release",
            "Cut a release: tag with `git tag vX.Y.Z`. Then push the tag.\n\n1. make dist\n2. upload",
            60,
        );
        let skill = from_record(&r);
        let text = render(&skill, std::slice::from_ref(&r.meta.id))?;
        let back = parse(&text)?;
        assert_eq!(back.name, "release");
        assert_eq!(
            back.description,
            "Use when working on release: Cut a release: tag with `git tag vX.Y.Z`."
        );
        assert!(
            back.body
                .starts_with(&format!("# Release\n\n{}", r.body.trim())),
            "{}",
            back.body
        );
        Ok(())
    }

    #[test]
    fn procedures_of_one_task_make_one_playbook() {
        let records = [
            rec(
                "release-tag",
                "Tag the release with git tag and push the release tag.",
                50,
            ),
            rec(
                "release-notes",
                "Write release notes from the git tag log before the release.",
                70,
            ),
            rec(
                "db-backup",
                "Back up the Postgres database nightly with pg_dump.",
                40,
            ),
        ];
        let p = propose(&records);
        assert_eq!(p.len(), 2, "{p:#?}");
        assert_eq!(p[0].skill.name, "release-notes-and-tag");
        assert_eq!(p[0].sources.len(), 2);
        assert!(p[0].skill.body.contains("## Release tag"));
        assert_eq!(p[1].skill.name, "db-backup");
    }

    /// Issue 37 item 14: extracted procedures (`auto:` keys, "To X, run
    /// `cmd`." texts) made a playbook named after the first key,
    /// `auto-build-the-project-mix-compile`, described as "Use when working
    /// on auto:build-…".
    #[test]
    fn r37_a_playbook_of_extracted_procedures_is_named_for_what_they_do() {
        let mut build = rec(
            "auto:build-the-project-mix-compile",
            "To build the project, run `mix compile`.",
            50,
        );
        build.meta.source = Source::Auto;
        let mut test = rec(
            "auto:run-the-tests-mix-test",
            "To run the tests, run `mix test`.",
            50,
        );
        test.meta.source = Source::Auto;
        let again = rec(
            "tests-twice",
            "To run the tests, run `mix test --trace` twice.",
            40,
        );
        let p = propose(&[build, test, again]);
        assert_eq!(p.len(), 1, "{p:#?}");
        let s = &p[0].skill;
        assert_eq!(s.name, "build-project-and-run-tests");
        assert_eq!(
            s.description,
            "Use when you need to build the project or run the tests: the steps and commands this project uses."
        );
        assert_eq!(
            s.body,
            "# Build the project and run the tests\n\n## Build the project\n\n\
             To build the project, run `mix compile`.\n\n## Run the tests\n\n\
             To run the tests, run `mix test`.\n\nTo run the tests, run `mix test --trace` twice.\n"
        );
        assert_eq!(p[0].sources.len(), 3);
    }
}
