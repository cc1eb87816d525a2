//! Times a question gives relative to now. "What did we change
//! yesterday?", "the bug from last week", "two days ago": developers ask
//! about their own recent work this way. Each phrase is read against the
//! request's `now` (injected, so tests and evaluations read it against
//! their own date) as a span of time, and `search::recall` lifts the hits
//! from that span the way it lifts a named month (`recall::period`, and
//! `Tuning::period_boost`): never a filter, and fading where most
//! candidates are from the span.
//!
//! Phrases: `today`, `yesterday` (and `last night`), `N days ago`; `this
//! week`, `last week`, `N weeks ago` (weeks start on Monday); `this
//! month`, `last month`, `N months ago`; `this year`, `last year`; and
//! `the past week` (month, year): the window of that length up to now. N is
//! written in digits (1 to 99) or as a word (`a`, `one` to `twelve`,
//! `a couple of`). Days are calendar days in UTC, like `recall::period`.

use jiff::civil::Date;
use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan};

/// A span of time, `[start, end)` in unix seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: i64,
    pub end: i64,
}

impl Span {
    /// Whether `secs` falls in this span.
    pub fn contains(&self, secs: i64) -> bool {
        (self.start..self.end).contains(&secs)
    }
}

/// The unit a phrase counts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Day,
    Week,
    Month,
    Year,
}

impl Unit {
    /// The unit a word names: singular, plural or possessive ("week's").
    fn of(word: &str) -> Option<Unit> {
        let w = word.to_ascii_lowercase();
        let w = w
            .strip_suffix("'s")
            .or_else(|| w.strip_suffix("\u{2019}s"))
            .unwrap_or(&w);
        Some(match w.trim_end_matches('s') {
            "day" => Unit::Day,
            "week" => Unit::Week,
            "month" => Unit::Month,
            "year" => Unit::Year,
            _ => return None,
        })
    }

    /// The first day of the unit holding `d`.
    fn start(self, d: Date) -> Date {
        match self {
            Unit::Day => d,
            Unit::Week => d
                .checked_sub(i64::from(d.weekday().to_monday_zero_offset()).days())
                .unwrap_or(d),
            Unit::Month => d.first_of_month(),
            Unit::Year => d.first_of_year(),
        }
    }

    fn span(self, n: i64) -> jiff::Span {
        match self {
            Unit::Day => n.days(),
            Unit::Week => n.weeks(),
            Unit::Month => n.months(),
            Unit::Year => n.years(),
        }
    }
}

/// The spans `question` names relative to `now`, in order, without
/// repeats.
pub fn spans(question: &str, now: Timestamp) -> Vec<Span> {
    let words: Vec<String> = crate::recall::sanitize::question_words(question)
        .map(str::to_ascii_lowercase)
        .collect();
    let today = now.to_zoned(TimeZone::UTC).date();
    let mut out = Vec::new();
    for i in 0..words.len() {
        let Some((unit, back)) = phrase_at(&words, i) else {
            continue;
        };
        let span = match back {
            -1 => window_to(now, unit),
            _ => span_of(today, unit, back),
        };
        if let Some(span) = span {
            if !out.contains(&span) {
                out.push(span);
            }
        }
    }
    out
}

/// The phrase starting at `words[i]`: its unit and how many of them back
/// from the current one (0 for "this week").
fn phrase_at(words: &[String], i: usize) -> Option<(Unit, i64)> {
    let w = |k: usize| words.get(k).map(String::as_str);
    match w(i)? {
        "today" => return Some((Unit::Day, 0)),
        "yesterday" => return Some((Unit::Day, 1)),
        "tonight" => return Some((Unit::Day, 0)),
        "this" => return Some((Unit::of(w(i + 1)?).filter(|u| *u != Unit::Day)?, 0)),
        "last" | "previous" => {
            return match w(i + 1)? {
                "night" => Some((Unit::Day, 1)),
                next => Some((Unit::of(next).filter(|u| *u != Unit::Day)?, 1)),
            }
        }
        // "the past week": the week up to now, not the calendar week
        // before this one (back = -1 marks the window ending now).
        "past" => return Some((Unit::of(w(i + 1)?).filter(|u| *u != Unit::Day)?, -1)),
        _ => {}
    }
    // "N units ago", "a couple of units ago".
    let (n, unit_at) = match (count(w(i)?), w(i + 1), w(i + 2)) {
        (_, Some("couple"), Some("of")) if w(i)? == "a" => (2, i + 3),
        (Some(n), ..) => (n, i + 1),
        _ => return None,
    };
    let unit = Unit::of(w(unit_at)?)?;
    (w(unit_at + 1)? == "ago").then_some((unit, n))
}

/// A count written in digits (1 to 99) or as a word.
fn count(word: &str) -> Option<i64> {
    const WORDS: [&str; 13] = [
        "a", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve",
    ];
    if let Some(i) = WORDS.iter().position(|w| *w == word) {
        return Some(i.max(1) as i64);
    }
    let n: i64 = word.parse().ok()?;
    (1..=99).contains(&n).then_some(n)
}

/// One `unit` up to `now`: "the past week" on a Wednesday runs from the
/// Wednesday before.
fn window_to(now: Timestamp, unit: Unit) -> Option<Span> {
    let start = now.to_zoned(TimeZone::UTC).checked_sub(unit.span(1)).ok()?;
    Some(Span {
        start: start.timestamp().as_second(),
        end: now.as_second() + 1,
    })
}

/// The unit `back` units before the one holding `today`.
fn span_of(today: Date, unit: Unit, back: i64) -> Option<Span> {
    let start = unit.start(today).checked_sub(unit.span(back)).ok()?;
    let start = unit.start(start);
    let end = start.checked_add(unit.span(1)).ok()?;
    let secs =
        |d: Date| -> Option<i64> { Some(d.to_zoned(TimeZone::UTC).ok()?.timestamp().as_second()) };
    Some(Span {
        start: secs(start)?,
        end: secs(end)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Wednesday 2026-11-25, 15:00 UTC.
    fn now() -> Timestamp {
        "2026-11-25T15:00:00Z".parse().unwrap()
    }

    fn at(s: &str) -> i64 {
        s.parse::<Timestamp>().unwrap().as_second()
    }

    fn span(start: &str, end: &str) -> Span {
        Span {
            start: at(start),
            end: at(end),
        }
    }

    #[test]
    fn days() {
        let day = |d: &str, e: &str| span(&format!("{d}T00:00:00Z"), &format!("{e}T00:00:00Z"));
        assert_eq!(
            spans("What did we change yesterday?", now()),
            [day("2026-11-24", "2026-11-25")]
        );
        assert_eq!(
            spans("the fix from today", now()),
            [day("2026-11-25", "2026-11-26")]
        );
        assert_eq!(
            spans("the bug two days ago", now()),
            [day("2026-11-23", "2026-11-24")]
        );
        assert_eq!(
            spans("what broke 3 days ago and last night", now()),
            [
                day("2026-11-22", "2026-11-23"),
                day("2026-11-24", "2026-11-25")
            ]
        );
        assert_eq!(
            spans("a couple of days ago", now()),
            [day("2026-11-23", "2026-11-24")]
        );
    }

    #[test]
    fn weeks_months_and_years() {
        let day = |d: &str, e: &str| span(&format!("{d}T00:00:00Z"), &format!("{e}T00:00:00Z"));
        // Weeks start on Monday: 2026-11-23 is this week's.
        assert_eq!(
            spans("the bug from last week", now()),
            [day("2026-11-16", "2026-11-23")]
        );
        assert_eq!(
            spans("this week's deploy", now()),
            [day("2026-11-23", "2026-11-30")]
        );
        assert_eq!(
            spans("two weeks ago", now()),
            [day("2026-11-09", "2026-11-16")]
        );
        assert_eq!(
            spans("the outage last month", now()),
            [day("2026-10-01", "2026-11-01")]
        );
        assert_eq!(
            spans("3 months ago", now()),
            [day("2026-08-01", "2026-09-01")]
        );
        assert_eq!(
            spans("what we decided last year", now()),
            [day("2025-01-01", "2026-01-01")]
        );
        // Across a year's start: January's "last month" is December.
        let jan: Timestamp = "2027-01-10T08:00:00Z".parse().unwrap();
        assert_eq!(spans("last month", jan), [day("2026-12-01", "2027-01-01")]);
    }

    #[test]
    fn the_past_week_ends_now() {
        assert_eq!(
            spans("what changed in the past week?", now()),
            [span("2026-11-18T15:00:00Z", "2026-11-25T15:00:01Z")]
        );
        assert_eq!(
            spans("the past month", now()),
            [span("2026-10-25T15:00:00Z", "2026-11-25T15:00:01Z")]
        );
    }

    #[test]
    fn words_that_are_not_times() {
        for q in [
            "the last test",
            "this function",
            "a day in the life",
            "two days",
            "days ago",
            "last days of the port",
            "the 300 days ago column",
            "",
        ] {
            assert!(spans(q, now()).is_empty(), "{q}");
        }
    }

    #[test]
    fn a_span_holds_its_times() {
        let s = spans("yesterday", now())[0];
        assert!(s.contains(at("2026-11-24T00:00:00Z")));
        assert!(s.contains(at("2026-11-24T23:59:59Z")));
        assert!(!s.contains(at("2026-11-25T00:00:00Z")));
        assert!(!s.contains(at("2026-11-23T23:59:59Z")));
    }
}
