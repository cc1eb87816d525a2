//! Periods a question names. "What did we decide about the cache in March
//! 2024?", "Where was Dave in August 2023?", "How many times did she go to
//! the beach in 2023?": the answer was most likely said in that period. In
//! LoCoMo, 85% of the evidence for a question that names a month and a
//! year was said in that month, where 13% of all messages were; for a
//! month alone it is 96 of 96. `search::recall` lifts the hits whose time
//! falls in a named period (`Tuning::period_boost`), in the answer-type
//! form: where most candidates are from that period, the lift fades. The
//! time is never a filter; `--since` and `--until` are.
//!
//! A period is a calendar month of a year ("March 2024", "December 4,
//! 2023": a named day counts as its month, since a message often tells of
//! its day a few days later), a month in any year ("in June"), or a year
//! ("in 2023"). "May" counts only next to a day or a year or after a
//! preposition ("in", "of", "during", "early", "late", "since", "by" …),
//! since it is mostly a verb, and a bare number counts as a year only
//! after a preposition ("in 2023", not "2000 rows"). A hit's time is its
//! message's (else its session's start); a record's or a ticket's is when
//! it was last updated. Times are compared in UTC. The question is read
//! as words (`sanitize::question_words`), with no regex: this runs on
//! every query.

use jiff::tz::TimeZone;
use jiff::Timestamp;

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// Words after which "may" is the month and a number is a year.
const PREPOSITIONS: &[&str] = &[
    "in",
    "of",
    "during",
    "early",
    "mid",
    "late",
    "since",
    "until",
    "by",
    "before",
    "after",
    "from",
    "between",
    "throughout",
];

/// A span of time a question names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Period {
    /// The year, or any year.
    pub year: Option<i16>,
    /// The month (1-12), or the whole year.
    pub month: Option<i8>,
}

impl Period {
    /// Whether `secs` (unix seconds) falls in this period.
    pub fn contains(&self, secs: i64) -> bool {
        let Ok(t) = Timestamp::from_second(secs) else {
            return false;
        };
        let date = t.to_zoned(TimeZone::UTC).date();
        self.year.is_none_or(|y| y == date.year()) && self.month.is_none_or(|m| m == date.month())
    }
}

/// The periods `question` names, in order, without repeats.
pub fn named(question: &str) -> Vec<Period> {
    let words: Vec<&str> = crate::recall::sanitize::question_words(question).collect();
    let mut out: Vec<Period> = Vec::new();
    let mut i = 0;
    while i < words.len() {
        match period_at(&words, i) {
            Some((period, next)) => {
                if !out.contains(&period) {
                    out.push(period);
                }
                i = next;
            }
            None => i += 1,
        }
    }
    out
}

/// The period named from `words[i]` on, and the index of the word after
/// it: a month with the day and year that follow it ("March 2024",
/// "December 4, 2023", "3 June, 2023"), or a year after a preposition.
fn period_at(words: &[&str], i: usize) -> Option<(Period, usize)> {
    let before = i.checked_sub(1).map(|p| words[p]);
    let after_preposition =
        before.is_some_and(|w| PREPOSITIONS.iter().any(|p| w.eq_ignore_ascii_case(p)));
    if let Some(y) = year(words[i]) {
        // "in 2023", not "2000 rows".
        let period = Period {
            year: Some(y),
            month: None,
        };
        return after_preposition.then_some((period, i + 1));
    }
    let m = month(words[i])?;
    let mut next = i + 1;
    let day_after = words.get(next).copied().and_then(day).is_some();
    if day_after {
        next += 1;
    }
    let y = words.get(next).copied().and_then(year);
    if y.is_some() {
        next += 1;
    }
    let day_before = before.and_then(day).is_some();
    let a_date = m != 5 || day_after || day_before || y.is_some() || after_preposition;
    a_date.then_some((
        Period {
            year: y,
            month: Some(m),
        },
        next,
    ))
}

/// The month a word names (1-12): its full name in any case.
fn month(word: &str) -> Option<i8> {
    let i = MONTHS.iter().position(|m| word.eq_ignore_ascii_case(m))?;
    i8::try_from(i + 1).ok()
}

/// A day of the month: 1-31, optionally with st, nd, rd or th.
fn day(word: &str) -> Option<i8> {
    let digits = word.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &word[digits.len()..];
    if !(suffix.is_empty()
        || ["st", "nd", "rd", "th"]
            .iter()
            .any(|s| suffix.eq_ignore_ascii_case(s)))
    {
        return None;
    }
    if digits.is_empty() || digits.len() > 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let d: i8 = digits.parse().ok()?;
    (1..=31).contains(&d).then_some(d)
}

/// A year from 1900 to 2099, written as four digits.
fn year(word: &str) -> Option<i16> {
    if word.len() != 4 || !word.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let y: i16 = word.parse().ok()?;
    (1900..=2099).contains(&y).then_some(y)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(year: Option<i16>, month: Option<i8>) -> Period {
        Period { year, month }
    }

    #[test]
    fn months_days_and_years_in_a_question() {
        assert_eq!(
            named("What did John share with Tim in January 2024?"),
            [p(Some(2024), Some(1))]
        );
        assert_eq!(
            named("What was Sam doing on December 4, 2023?"),
            [p(Some(2023), Some(12))]
        );
        assert_eq!(
            named("When did Melanie go camping in June?"),
            [p(None, Some(6))]
        );
        assert_eq!(
            named("What did Maria start, as mentioned on 3 June, 2023?"),
            [p(Some(2023), Some(6))]
        );
        assert_eq!(
            named("How often did she swim in 2023?"),
            [p(Some(2023), None)]
        );
        assert_eq!(
            named("between 2022 and in 2023"),
            [p(Some(2022), None), p(Some(2023), None)]
        );
        assert_eq!(
            named("between April 5, 2024 and April 9"),
            [p(Some(2024), Some(4)), p(None, Some(4))]
        );
        assert_eq!(named("march 2024 or MARCH 2024"), [p(Some(2024), Some(3))]);
    }

    #[test]
    fn may_the_verb_is_not_a_month() {
        assert!(named("May I ask what you may know?").is_empty());
        assert_eq!(named("What happened in May?"), [p(None, Some(5))]);
        assert_eq!(named("the release on May 3rd"), [p(None, Some(5))]);
        assert_eq!(named("May 2023 was busy"), [p(Some(2023), Some(5))]);
        assert_eq!(named("What did she do on 3 May?"), [p(None, Some(5))]);
        assert_eq!(named("the 2nd of May"), [p(None, Some(5))]);
    }

    #[test]
    fn numbers_that_are_not_dates() {
        assert!(named("How many of the 300 tests failed on port 8080?").is_empty());
        assert!(named("Why is error 1234567 raised?").is_empty());
        // A bare number in the years' range is no year without a preposition.
        assert!(named("Why do 2000 rows take 2048 tokens on port 2049?").is_empty());
        assert!(named("").is_empty());
        // A number after a month that is no day is not read as one.
        assert_eq!(named("June 45 items"), [p(None, Some(6))]);
    }

    #[test]
    fn a_period_holds_its_times() {
        // 2024-03-15T12:00:00Z and 2023-03-01T00:00:00Z.
        let (mar_2024, mar_2023) = (1_710_504_000, 1_677_628_800);
        assert!(p(Some(2024), Some(3)).contains(mar_2024));
        assert!(!p(Some(2024), Some(3)).contains(mar_2023));
        assert!(p(None, Some(3)).contains(mar_2023));
        assert!(p(Some(2023), None).contains(mar_2023));
        assert!(!p(Some(2023), Some(4)).contains(mar_2023));
        assert!(!p(None, Some(1)).contains(i64::MAX));
    }
}
