//! Parsing the times users type: `2026-11-01`, an RFC 3339 timestamp, or a
//! span back from now (`30m`, `12h`, `7d`, `2w`).

use jiff::{civil::Date, Timestamp, ToSpan};

use crate::error::{Error, Result};

/// Parse `s` relative to `now`.
pub fn parse_when(s: &str, now: Timestamp) -> Result<Timestamp> {
    let s = s.trim();
    if let Ok(t) = s.parse::<Timestamp>() {
        return Ok(t);
    }
    if let Ok(d) = s.parse::<Date>() {
        return d
            .to_zoned(jiff::tz::TimeZone::UTC)
            .map(|z| z.timestamp())
            .map_err(|e| Error::invalid(format!("invalid date '{s}': {e}")));
    }
    let bad = || {
        Error::invalid(format!(
            "cannot read the time '{s}': use a date (2026-11-01), an RFC 3339 time (2026-11-01T09:00:00Z), or a span back from now (30m, 12h, 7d, 2w)"
        ))
    };
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?);
    let n: i64 = num.parse().map_err(|_| bad())?;
    let secs = match unit {
        "m" => n * 60,
        "h" => n * 3600,
        "d" => n * 86_400,
        "w" => n * 7 * 86_400,
        _ => return Err(bad()),
    };
    now.checked_sub(secs.seconds()).map_err(|_| bad())
}

/// Parse `s`, an upper bound, relative to `now`: as [`parse_when`], except
/// that a date alone means the whole day (`--until 2026-11-01` keeps that
/// day's hits, up to its last second), as a person reading it means.
pub fn parse_until(s: &str, now: Timestamp) -> Result<Timestamp> {
    match s.trim().parse::<Date>() {
        Ok(d) => d
            .tomorrow()
            .and_then(|next| next.to_zoned(jiff::tz::TimeZone::UTC))
            .and_then(|z| z.timestamp().checked_sub(1.second()))
            .map_err(|e| Error::invalid(format!("invalid date '{s}': {e}"))),
        Err(_) => parse_when(s, now),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        let now: Timestamp = "2026-11-22T12:00:00Z".parse().unwrap();
        assert_eq!(
            parse_when("2026-11-01", now).unwrap().to_string(),
            "2026-11-01T00:00:00Z"
        );
        assert_eq!(
            parse_when("2026-11-01T09:00:00Z", now).unwrap().to_string(),
            "2026-11-01T09:00:00Z"
        );
        assert_eq!(
            parse_when("7d", now).unwrap().to_string(),
            "2026-11-15T12:00:00Z"
        );
        assert_eq!(
            parse_when("12h", now).unwrap().to_string(),
            "2026-11-22T00:00:00Z"
        );
        for bad in ["yesterday", "7y", "", "d"] {
            assert!(parse_when(bad, now).is_err(), "{bad}");
            assert!(parse_until(bad, now).is_err(), "{bad}");
        }
    }

    /// Regression: `--until 2026-11-01` was that day's first second, so
    /// the day itself was left out, and `--since D --until D` found nothing.
    #[test]
    fn a_date_as_an_upper_bound_is_the_whole_day() {
        let now: Timestamp = "2026-11-22T12:00:00Z".parse().unwrap();
        assert_eq!(
            parse_until("2026-11-01", now).unwrap().to_string(),
            "2026-11-01T23:59:59Z"
        );
        for exact in ["2026-11-01T09:00:00Z", "7d"] {
            assert_eq!(
                parse_until(exact, now).unwrap(),
                parse_when(exact, now).unwrap()
            );
        }
    }
}
