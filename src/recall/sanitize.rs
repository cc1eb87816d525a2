//! The one query sanitizer: any text, however hostile, becomes a list of
//! [`Term`]s and then a valid FTS5 `MATCH` expression.
//!
//! Every term is emitted as a double-quoted FTS5 string with inner quotes
//! doubled, so no operator (`AND`, `OR`, `NOT`, `NEAR`, `*`, `^`, `:`, `-`,
//! brackets) in user text is ever interpreted. Terms are OR-ed: a long query
//! never requires every word. Code identifiers, paths and quoted phrases are
//! kept whole as phrases (they match as phrases under `unicode61`), and their
//! parts are added as single words.

use std::collections::HashSet;

use super::stopwords::is_stopword;
use crate::text::{camel_parts, with_stem, words};

/// At most this many distinct terms leave the sanitizer, bounding the
/// memory and planning work of a pasted log or book. Which terms are
/// searched is the planner's cost model's choice (`recall::plan`), not
/// text order: a rare word at the end of a long query is kept.
pub const MAX_TERMS: usize = 4096;

/// A question's words as the question readers see them (`temporal`,
/// `subject`, `period`): whitespace-separated, with the punctuation around
/// each trimmed ("(when)" is "when", "2023?" is "2023"; "I'm" keeps its
/// inner apostrophe), at most [`MAX_TERMS`] of them. No allocation.
pub fn question_words(question: &str) -> impl Iterator<Item = &str> {
    question
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|w| !w.is_empty())
        .take(MAX_TERMS)
}

/// What a term is; identifiers and phrases get a boost in ranking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TermKind {
    /// An ordinary word.
    Word,
    /// A code identifier, path or error code: `parse_config_file`,
    /// `src/a.rs`, `std::io::Error`, `HashMap`, `E0502`.
    Identifier,
    /// A phrase the user put in double quotes.
    Phrase,
    /// The English stem of a word, matched mostly in the `aux` column.
    Stem,
}

/// One search term: lowercase text made of `unicode61` words.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Term {
    pub text: String,
    pub kind: TermKind,
}

impl Term {
    /// The term as an FTS5 string literal.
    pub fn to_fts(&self) -> String {
        fts_string(&self.text)
    }
}

/// Quote `s` as an FTS5 string: `"` around it, inner `"` doubled.
pub fn fts_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    // Control characters (NUL above all: SQLite would end the string
    // there) are never part of a token; drop them.
    for c in s.chars().filter(|c| !c.is_control()) {
        if c == '"' {
            out.push('"');
        }
        out.push(c);
    }
    out.push('"');
    out
}

fn is_identifier(token: &str) -> bool {
    let n = words(token).count();
    let has_sep = token.contains(['_', '/', '.', ':', '-', '\\']);
    let camel = words(token).any(|w| !camel_parts(w).is_empty());
    let code = token.len() >= 4
        && token.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && token.chars().skip(1).all(|c| c.is_ascii_digit());
    (n >= 2 && has_sep) || camel || code
}

/// Split `query` into deduplicated terms, most important kinds first.
pub fn extract_terms(query: &str) -> Vec<Term> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut push = |text: String, kind: TermKind, out: &mut Vec<Term>| {
        if !text.is_empty() && words(&text).next().is_some() && seen.insert(text.clone()) {
            out.push(Term { text, kind });
        }
    };
    // Quoted phrases first.
    let mut rest = String::with_capacity(query.len());
    for (i, part) in query.split('"').enumerate() {
        if i % 2 == 1 && words(part).nth(1).is_some() {
            push(normalise(part), TermKind::Phrase, &mut out);
        }
        rest.push_str(part);
        rest.push(' ');
    }
    let mut plain = Vec::new();
    for raw in rest.split_whitespace() {
        let token = raw.trim_matches(|c: char| !c.is_alphanumeric());
        if token.is_empty() {
            continue;
        }
        // `and/or`, `on/off`: separators between stopwords are prose.
        let all_stop = words(token).all(|w| is_stopword(&w.to_lowercase()));
        if is_identifier(token) && !all_stop {
            push(normalise(token), TermKind::Identifier, &mut out);
            plain.extend(words(token).flat_map(camel_parts));
        }
        plain.extend(words(token).map(str::to_lowercase));
    }
    let meaningful: Vec<&String> = plain
        .iter()
        .filter(|w| !is_stopword(w) && w.chars().count() > 1)
        .collect();
    // A query made only of stopwords still searches for them.
    let chosen: Vec<&String> = if meaningful.is_empty() {
        plain.iter().collect()
    } else {
        meaningful
    };
    for w in chosen {
        push(w.clone(), TermKind::Word, &mut out);
        let s = with_stem(w, |s| {
            (s != w.as_str() && s.chars().count() > 1).then(|| s.to_string())
        });
        if let Some(s) = s {
            push(s, TermKind::Stem, &mut out);
        }
    }
    out.truncate(MAX_TERMS);
    out
}

/// Longest first line read as a title, in characters.
const MAX_TITLE_CHARS: usize = 200;

/// The title of a question of several lines, when it has one: a first
/// line that is a Markdown heading (`# Crash on start`) or a `title:`
/// line, or a first line of at most `MAX_TITLE_CHARS` (200) followed by a
/// blank line, with more text after it. A ticket pasted as a question is
/// its title, then its description. A question whose lines are one
/// wrapped sentence (a pasted paragraph, a prompt typed over several
/// lines) has no title: its first line is no more its subject than its
/// second.
pub fn title_line(query: &str) -> Option<&str> {
    let query = query.trim_start();
    let (first, rest) = query.split_once('\n')?;
    if rest.trim().is_empty() {
        return None;
    }
    let first = first.trim();
    let fits = |t: &str| !t.is_empty() && t.chars().count() <= MAX_TITLE_CHARS;
    if let Some(heading) = first.strip_prefix('#') {
        let heading = heading.trim_start_matches('#');
        // `#tag` is a word, not a heading.
        if heading.starts_with(' ') {
            return Some(heading.trim()).filter(|t| fits(t));
        }
    }
    let labelled = first
        .get(..6)
        .filter(|p| p.eq_ignore_ascii_case("title:"))
        .map(|_| first[6..].trim());
    if let Some(t) = labelled {
        return Some(t).filter(|t| fits(t));
    }
    let blank_after = rest.lines().next().is_some_and(|l| l.trim().is_empty());
    (blank_after && fits(first)).then_some(first)
}

/// Lowercase, keep only what `unicode61` would keep, one space between words.
fn normalise(s: &str) -> String {
    words(s)
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The FTS5 expression for `terms`: every term quoted, OR-ed. `None` when
/// there is nothing to search for.
pub fn to_match(terms: &[Term]) -> Option<String> {
    if terms.is_empty() {
        return None;
    }
    Some(
        terms
            .iter()
            .map(Term::to_fts)
            .collect::<Vec<_>>()
            .join(" OR "),
    )
}

/// The FTS5 expression that holds every group of `groups`: each group's
/// terms quoted and OR-ed, the groups AND-ed. `None` when a group is
/// empty or there is none.
pub fn to_match_all(groups: &[Vec<Term>]) -> Option<String> {
    let parts: Option<Vec<String>> = groups
        .iter()
        .map(|g| to_match(g).map(|m| format!("({m})")))
        .collect();
    parts.filter(|p| !p.is_empty()).map(|p| p.join(" AND "))
}

/// Sanitize arbitrary text straight to a MATCH expression.
pub fn sanitize(query: &str) -> Option<String> {
    to_match(&extract_terms(query))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rusqlite::Connection;

    fn db() -> Connection {
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch(
            "CREATE VIRTUAL TABLE t USING fts5(body, aux, tokenize='unicode61 remove_diacritics 2');
             INSERT INTO t VALUES('the parse_config_file function in src/config/loader.rs returns std::io::Error E0502', '');
             INSERT INTO t VALUES('HashMap config loader', 'hash map');",
        )
        .unwrap();
        c
    }

    fn count(c: &Connection, q: &str) -> rusqlite::Result<i64> {
        match sanitize(q) {
            None => Ok(0),
            Some(m) => c.query_row("SELECT count(*) FROM t WHERE t MATCH ?1", [m], |r| r.get(0)),
        }
    }

    #[test]
    fn to_match_all_ands_groups_of_quoted_terms() {
        let t = |s: &str| Term {
            text: s.into(),
            kind: TermKind::Word,
        };
        assert_eq!(
            to_match_all(&[vec![t("deploy"), t("deploys")], vec![t("a\"b")]]).as_deref(),
            Some(r#"("deploy" OR "deploys") AND ("a""b")"#)
        );
        assert_eq!(to_match_all(&[]), None);
        assert_eq!(to_match_all(&[vec![]]), None);
        let c = db();
        let n: i64 = c
            .query_row(
                "SELECT count(*) FROM t WHERE t MATCH ?1",
                [to_match_all(&[vec![t("hashmap")], vec![t("loader")]]).unwrap()],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(n, 1);
    }

    #[test]
    fn identifiers_match_whole_and_by_parts() {
        let c = db();
        assert_eq!(count(&c, "parse_config_file").unwrap(), 2); // phrase + 'config'
        assert_eq!(count(&c, "src/config/loader.rs").unwrap(), 2);
        assert_eq!(count(&c, "std::io::Error").unwrap(), 1);
        assert_eq!(count(&c, "E0502").unwrap(), 1);
        assert_eq!(count(&c, "hash").unwrap(), 1);
        let t = extract_terms("fix parse_config_file now");
        assert_eq!(
            t[0],
            Term {
                text: "parse config file".into(),
                kind: TermKind::Identifier
            }
        );
    }

    #[test]
    fn a_title_is_the_first_of_several_lines() {
        assert_eq!(
            title_line("Crash on start\n\nTrace: ..."),
            Some("Crash on start")
        );
        assert_eq!(
            title_line("\n  Crash on start  \r\n\r\nmore"),
            Some("Crash on start")
        );
        assert_eq!(
            title_line("## Crash on start\nTrace: ..."),
            Some("Crash on start")
        );
        assert_eq!(
            title_line("Title: Crash on start\nTrace: ..."),
            Some("Crash on start")
        );
        assert_eq!(title_line("one line only"), None);
        assert_eq!(title_line("one line\n   \n"), None);
        assert_eq!(title_line(&format!("{}\n\nbody", "x".repeat(201))), None);
        // Issue 39 item 6: one sentence wrapped over lines has no title,
        // nor does a hashtag.
        assert_eq!(
            title_line("the checkout service hangs when the\nredis pool is exhausted under load"),
            None
        );
        assert_eq!(title_line("#redis pool\nexhausted"), None);
    }

    #[test]
    fn hostile_operators_are_inert() {
        let c = db();
        for q in [
            "\"",
            "\"\"\"",
            "a AND",
            "OR OR NOT",
            "NEAR(a b)",
            "col:value",
            "-x",
            "^start",
            "(((",
            "*",
            "{body}: x",
            "emoji 🦀 crab",
            "",
            "   ",
            "NOT parse",
            "x\0y",
        ] {
            count(&c, q).unwrap_or_else(|e| panic!("{q:?}: {e}"));
        }
        // As an operator, `NOT parse` is a syntax error; here NOT is a
        // (stop)word and the query finds the row with `parse`.
        assert_eq!(count(&c, "NOT parse").unwrap(), 1);
        assert_eq!(count(&c, "parse NOT hash").unwrap(), 2);
    }

    #[test]
    fn long_queries_are_or_not_and() {
        let c = db();
        let q =
            "we should look at why the config loader breaks when deploying to staging on friday";
        assert!(count(&c, q).unwrap() >= 1);
    }

    #[test]
    fn huge_input_is_capped() {
        let q = "word ".repeat(20_000) + &(0..5000).map(|i| format!("w{i} ")).collect::<String>();
        let t = extract_terms(&q);
        assert!(t.len() <= MAX_TERMS);
        count(&db(), &q).unwrap();
    }

    /// Regression: "and/or" became the identifier `and or`, the only term
    /// left after planning, and the query found nothing.
    #[test]
    fn r_slash_joined_stopwords_are_not_identifiers() {
        let t = extract_terms("Has Tim been to North Carolina and/or Tennesee?");
        assert!(t.iter().all(|t| t.text != "and or"), "{t:?}");
        assert!(t.iter().any(|t| t.text == "tim"));
        assert!(extract_terms("src/a.rs")
            .iter()
            .any(|t| t.kind == TermKind::Identifier));
    }

    /// Regression: a plural acronym was split like `HTTPRequest`, so
    /// `PRs` searched `rs`, `IDs` `ds` and `miRNAs` `rn` and `as`: two
    /// letters that match unrelated text.
    #[test]
    fn r_plural_acronyms_are_not_split_into_letters() {
        let t = extract_terms("Merge the PRs, list the IDs and count the miRNAs in dLNs");
        let texts: Vec<&str> = t.iter().map(|t| t.text.as_str()).collect();
        for junk in ["rs", "ds", "rn", "as", "ns"] {
            assert!(!texts.contains(&junk), "{junk}: {texts:?}");
        }
        for kept in ["prs", "ids", "mirnas", "rnas", "dlns", "lns"] {
            assert!(texts.contains(&kept), "{kept}: {texts:?}");
        }
    }

    #[test]
    fn stopword_only_queries_still_search() {
        assert!(!extract_terms("the").is_empty());
        assert!(extract_terms("the parser").iter().all(|t| t.text != "the"));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        #[test]
        fn sanitizer_never_produces_an_invalid_match(q in "\\PC{0,200}") {
            let c = db();
            prop_assert!(count(&c, &q).is_ok());
        }

        #[test]
        fn arbitrary_bytes_never_error(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let q = String::from_utf8_lossy(&bytes);
            let c = db();
            prop_assert!(count(&c, &q).is_ok());
        }

        #[test]
        fn operator_soup_never_errors(parts in proptest::collection::vec(
            prop_oneof![Just("AND"), Just("OR"), Just("NOT"), Just("NEAR"), Just("\""), Just("*"),
                        Just("("), Just(")"), Just(":"), Just("^"), Just("-"), Just("+"), Just("{"),
                        Just("}"), Just("a"), Just("b_c"), Just("x/y.rs")], 0..30)) {
            let q = parts.join(" ");
            let c = db();
            prop_assert!(count(&c, &q).is_ok());
        }
    }
}
