//! Answer type for questions about time. A question that asks *when*
//! ("When did we move the cache to Redis?", "What year did she graduate?")
//! is answered by a text that says when: "last week", "yesterday", "in
//! March", "2024-05-03", "two days ago". Such texts are rare in a history
//! (about one message in ten in LoCoMo) and common among the answers to
//! these questions (seven in ten), so `search::recall` lifts the hits that
//! mention a time, for those questions only (`Tuning::temporal_boost`).
//! This is answer-type matching, as question-answering retrieval has long
//! done it; both sides are word patterns, no date is parsed. The question
//! side runs on every query and compiles nothing; the text side is a regex
//! compiled on first use, so only for questions that ask when: 0.8 ms to
//! compile and 0.5 ms for BEAM merged's 100 candidates (73 KB). It runs
//! on lowercased text and is ASCII-only (`-u`): with Unicode word
//! boundaries a text holding one non-ASCII letter took the slow engine,
//! 100 times slower, and case folding doubled the compile time.

use std::sync::LazyLock;

use regex::Regex;

const UNITS: &str = r"(?:minute|hour|day|night|week|weekend|month|year|decade)s?";
const WEEKDAYS: &str = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day";
/// Month names; "May" only with a day or year next to it, since "may" is
/// mostly a verb.
const MONTHS: &str =
    r"(?:january|february|march|april|june|july|august|september|october|november|december)";
const SEASONS: &str = r"(?:spring|summer|autumn|fall|winter)";

/// A time in a text: a day word, a relative span, a weekday, a month, a
/// season with a determiner, a year, a date or a clock time.
static MENTIONS_TIME: LazyLock<Regex> = LazyLock::new(|| {
    let pattern = format!(
        r"(?x-u)
        \b(?:yesterday|today|tonight|tomorrow|recently|lately)\b
        | \b(?:last|next|this|past|coming|previous|earlier\s+this|later\s+this)\s+(?:{UNITS}|{WEEKDAYS}|{MONTHS}|{SEASONS}|morning|afternoon|evening)\b
        | \b(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|few|several|couple\s+of|\d+)\s+(?:{UNITS})\s+(?:ago|back|earlier|later|before|from\s+now)\b
        | \bthe\s+other\s+day\b
        | \b{WEEKDAYS}s?\b
        | \b{MONTHS}\b
        | \bmay\s+\d{{1,2}}(?:st|nd|rd|th)?\b | \b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?may\b | \bmay\s+(?:19|20)\d\d\b
        | \b(?:in|of|since|during)\s+(?:the\s+)?{SEASONS}\b
        | \b(?:19|20)\d\d\b
        | \b\d{{1,2}}[/.]\d{{1,2}}[/.]\d{{2,4}}\b
        | \b\d{{1,2}}(?::\d\d)?\s*[ap]\.?m\b"
    );
    Regex::new(&pattern).expect("a valid pattern")
});

/// Auxiliaries after which "when" asks a question ("when did", "when
/// was"), rather than joining two clauses ("what did he do when he …").
const WHEN_AUX: &[&str] = &[
    "did", "was", "were", "is", "are", "will", "would", "do", "does", "has", "have", "had", "can",
    "could", "should",
];
/// What "what" or "which" asks for in a question about time.
const WHEN_NOUNS: &[&str] = &[
    "year", "years", "month", "months", "date", "dates", "day", "days", "week", "weeks", "time",
];

/// Whether `question` asks when something happened: it starts with
/// "when", asks "when did …" (was, is, will …) anywhere, asks for a year,
/// month, date, day or time ("what year", "which day"), or "how long ago"
/// or "since when". Runs on every query, so it reads whitespace-separated
/// words and compiles nothing.
pub fn asks_when(question: &str) -> bool {
    let words: Vec<&str> = crate::recall::sanitize::question_words(question).collect();
    let is = |w: &str, lower: &str| w.eq_ignore_ascii_case(lower);
    let any_of = |w: &str, set: &[&str]| set.iter().any(|s| is(w, s));
    words.first().is_some_and(|w| is(w, "when"))
        || words.windows(2).any(|p| {
            (is(p[0], "when") && any_of(p[1], WHEN_AUX))
                || (any_of(p[0], &["what", "which"]) && any_of(p[1], WHEN_NOUNS))
                || (is(p[0], "since") && is(p[1], "when"))
        })
        || words
            .windows(3)
            .any(|t| is(t[0], "how") && is(t[1], "long") && is(t[2], "ago"))
}

/// Whether `text` says when: see [`MENTIONS_TIME`].
pub fn mentions_time(text: &str) -> bool {
    MENTIONS_TIME.is_match(&text.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_about_time() {
        for q in [
            "When did Caroline go to the support group?",
            "  when was the cache moved to Redis",
            "Do you remember when did we pin the toolchain?",
            "What year did Melanie start painting?",
            "Which month was the outage?",
            "How long ago was the migration?",
            "WHAT YEAR did the outage happen",
            "(when) was it?",
        ] {
            assert!(asks_when(q), "{q}");
        }
        for q in [
            "What did John do when he lost his job?",
            "How do I run the migrations?",
            "Whenever the build fails, what should I check?",
            "What time-outs does the checkout use?",
        ] {
            assert!(!asks_when(q), "{q}");
        }
    }

    #[test]
    fn texts_that_say_when() {
        for t in [
            "I had a blast last week with my friends",
            "We moved it yesterday.",
            "a couple of weeks ago the build broke",
            "It shipped 3 days ago",
            "The meeting is on Friday",
            "We met in March",
            "since the summer",
            "Released on May 3",
            "her opening on May 3rd at the gallery",
            "the 2nd of May",
            "back in 2019",
            "deadline 05/11/2024",
            "standup at 9:30am",
            "the other day I saw it",
        ] {
            assert!(mentions_time(t), "{t}");
        }
        for t in [
            "You may want to restart the pool.",
            "The summer intern fixed it",
            "Port 8080 is open",
            "We need 2 days of work for this",
            "Call the parse_date function",
            "",
        ] {
            assert!(!mentions_time(t), "{t}");
        }
    }
}
