//! The record types: categories, frontmatter fields and the record itself.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::store::Scope;

macro_rules! string_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $var:ident => $s:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum $name { $($(#[$vdoc])* #[serde(rename = $s)] $var),+ }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$var),+];
            /// The lowercase name used in files, flags and JSON.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$var => $s),+ }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = Error;
            fn from_str(s: &str) -> Result<Self> {
                match s {
                    $($s => Ok($name::$var),)+
                    _ => Err(Error::invalid(format!(
                        "unknown {} '{}': expected one of {}",
                        stringify!($name).to_lowercase(),
                        s,
                        [$($s),+].join(", ")
                    ))),
                }
            }
        }
    };
}

string_enum!(
    /// The five kinds of durable fact.
    Category {
        Decisions => "decisions",
        Procedures => "procedures",
        Principles => "principles",
        Incidents => "incidents",
        Preferences => "preferences",
    }
);

string_enum!(
    /// Who wrote a record.
    Source {
        /// A person, with `recall record add` or by hand.
        Manual => "manual",
        /// The extract pipeline.
        Auto => "auto",
        /// An agent, through the CLI.
        Agent => "agent",
    }
);

string_enum!(
    /// Whether a record takes part in recall.
    Status {
        Active => "active",
        Archived => "archived",
    }
);

string_enum!(
    /// Whether a fact is meant to last.
    Temporal {
        Permanent => "permanent",
        Temporary => "temporary",
    }
);

/// Where an extracted record came from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Origin {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extractor: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extractor_version: Option<String>,
    /// Unknown origin fields survive a rewrite.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_yaml_ng::Value>,
}

fn default_importance() -> u8 {
    50
}

/// `importance`, whose errors say what a person writes there, not a Rust
/// type ("expected u8"); the range is checked with the other fields.
fn importance<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<u8, D::Error> {
    struct Whole;
    impl serde::de::Visitor<'_> for Whole {
        type Value = u8;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a whole number from 0 to 100")
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> std::result::Result<u8, E> {
            u8::try_from(v).map_err(|_| E::invalid_value(serde::de::Unexpected::Unsigned(v), &self))
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> std::result::Result<u8, E> {
            u8::try_from(v).map_err(|_| E::invalid_value(serde::de::Unexpected::Signed(v), &self))
        }
    }
    d.deserialize_u64(Whole)
}

/// `pinned`: `true` or `false`, and, since people write YAML's older
/// spellings by hand, `yes`/`no` and `on`/`off` (YAML 1.2, which the
/// parser reads, takes those for text, and the record would be skipped).
fn yes_no<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<bool, D::Error> {
    struct YesNo;
    impl serde::de::Visitor<'_> for YesNo {
        type Value = bool;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("true or false")
        }
        fn visit_bool<E: serde::de::Error>(self, v: bool) -> std::result::Result<bool, E> {
            Ok(v)
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<bool, E> {
            match v.to_ascii_lowercase().as_str() {
                "yes" | "y" | "on" => Ok(true),
                "no" | "n" | "off" => Ok(false),
                _ => Err(E::invalid_value(serde::de::Unexpected::Str(v), &self)),
            }
        }
    }
    d.deserialize_any(YesNo)
}

/// `confidence`, likewise: a number from 0 to 1.
fn confidence<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<f64, D::Error> {
    struct Share;
    impl serde::de::Visitor<'_> for Share {
        type Value = f64;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a number from 0 to 1")
        }
        fn visit_f64<E: serde::de::Error>(self, v: f64) -> std::result::Result<f64, E> {
            Ok(v)
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> std::result::Result<f64, E> {
            Ok(v as f64)
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> std::result::Result<f64, E> {
            Ok(v as f64)
        }
    }
    d.deserialize_f64(Share)
}
/// `created`, `updated` and `expires`: a time as recall writes it
/// (`2026-11-01T09:30:00Z`), or, in a file written by hand, a date
/// (`2026-11-01`) or a time without an offset, both read as UTC.
fn when<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Timestamp, D::Error> {
    let text = String::deserialize(d)?;
    parse_when(&text).ok_or_else(|| {
        serde::de::Error::invalid_value(
            serde::de::Unexpected::Str(&text),
            &"a time such as 2026-11-01T09:30:00Z, or a date such as 2026-11-01",
        )
    })
}

fn when_opt<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<Timestamp>, D::Error> {
    #[derive(Deserialize)]
    struct Wrapped(#[serde(deserialize_with = "when")] Timestamp);
    Ok(Option::<Wrapped>::deserialize(d)?.map(|Wrapped(t)| t))
}

fn parse_when(text: &str) -> Option<Timestamp> {
    let t = text.trim();
    let utc = |dt: jiff::civil::DateTime| dt.to_zoned(jiff::tz::TimeZone::UTC).ok();
    t.parse::<Timestamp>()
        .ok()
        .or_else(|| {
            t.parse::<jiff::civil::DateTime>()
                .ok()
                .and_then(utc)
                .map(|z| z.timestamp())
        })
        .or_else(|| {
            let day = t.parse::<jiff::civil::Date>().ok()?;
            utc(day.to_datetime(jiff::civil::Time::midnight())).map(|z| z.timestamp())
        })
}

fn default_confidence() -> f64 {
    1.0
}
fn is_false(b: &bool) -> bool {
    !*b
}

/// The YAML frontmatter of a record file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Frontmatter {
    pub id: String,
    pub key: String,
    pub category: Category,
    pub scope: Scope,
    pub source: Source,
    #[serde(deserialize_with = "when")]
    pub created: Timestamp,
    #[serde(deserialize_with = "when")]
    pub updated: Timestamp,
    #[serde(default, skip_serializing_if = "is_false", deserialize_with = "yes_no")]
    pub pinned: bool,
    #[serde(default = "default_importance", deserialize_with = "importance")]
    pub importance: u8,
    #[serde(default = "Status::default_active")]
    pub status: Status,
    #[serde(default = "Temporal::default_permanent")]
    pub temporal: Temporal,
    #[serde(
        default,
        deserialize_with = "when_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub expires: Option<Timestamp>,
    #[serde(default = "default_confidence", deserialize_with = "confidence")]
    pub confidence: f64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keywords: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
    /// Keys this version does not know survive a rewrite.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_yaml_ng::Value>,
}

impl Status {
    fn default_active() -> Status {
        Status::Active
    }
}

impl Temporal {
    fn default_permanent() -> Temporal {
        Temporal::Permanent
    }
}

/// A record: frontmatter plus the fact as a Markdown body.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub meta: Frontmatter,
    pub body: String,
}

impl Record {
    /// A person wrote this record's text: an extracted (`auto`) or an
    /// agent's (`agent`) record becomes `manual`, so neither extraction
    /// nor an agent (here, or on another host through sync) overwrites it.
    pub fn mark_edited_by_hand(&mut self) {
        if matches!(self.meta.source, Source::Auto | Source::Agent) {
            self.meta.source = Source::Manual;
        }
    }

    /// This host wrote the record: the sync provenance it was pulled with
    /// (`origin.host`, `origin.author`) no longer says who wrote what it
    /// holds, and would credit the teammate with this host's change. The
    /// extraction's origin (session, messages) stays.
    pub fn written_here(&mut self) {
        if let Some(o) = self.meta.origin.as_mut() {
            o.extra.remove("host");
            o.extra.remove("author");
            if *o == Origin::default() {
                self.meta.origin = None;
            }
        }
    }

    /// A record's text as stored: trimmed, with Windows line ends made
    /// `\n` (a file saved with CRLF, text piped from a Windows tool), so
    /// the text shown and injected holds no stray `\r`.
    pub fn clean_body(body: &str) -> String {
        body.trim().replace("\r\n", "\n")
    }

    /// A new record with defaults for everything but the essentials.
    pub fn new(
        key: &str,
        category: Category,
        scope: Scope,
        source: Source,
        body: &str,
        now: Timestamp,
    ) -> Record {
        Record {
            meta: Frontmatter {
                id: new_id(key, now),
                key: key.to_string(),
                category,
                scope,
                source,
                created: now,
                updated: now,
                pinned: false,
                importance: default_importance(),
                status: Status::Active,
                temporal: Temporal::Permanent,
                expires: None,
                confidence: default_confidence(),
                aliases: vec![],
                keywords: vec![],
                origin: None,
                extra: BTreeMap::new(),
            },
            body: Record::clean_body(body),
        }
    }

    /// The teammate's host this record was pulled from (`origin.host`,
    /// written by `recall sync`), if any.
    pub fn origin_host(&self) -> Option<&str> {
        self.meta.origin.as_ref()?.extra.get("host")?.as_str()
    }

    /// Whether recall should consider this record at `now`.
    pub fn is_live(&self, now: Timestamp) -> bool {
        self.meta.status == Status::Active && self.meta.expires.is_none_or(|e| e > now)
    }
}

/// A readable, unique id: the key's slug plus six hex digits of a hash of
/// the key and the creation time. The id names the record's file, so the
/// slug is built from the key with its secrets redacted.
fn new_id(key: &str, now: Timestamp) -> String {
    let mut slug = crate::secrets::redacted_slug(key, 48);
    if slug.is_empty() {
        slug.push('r');
    }
    let h = blake3::hash(format!("{key}\0{}", now.as_nanosecond()).as_bytes()).to_hex();
    format!("{slug}-{}", &h[..6])
}
