//! The tools' arguments, as MCP clients really send them.
//!
//! Some clients send every argument as a string: the MCP Inspector CLI
//! sends `limit=2` as `"2"`. Where that is unambiguous it is taken as meant:
//! a whole number may come as a string of digits ([`Whole`]), and a list of
//! words as one string with commas between them or as a JSON list inside a
//! string ([`Words`]). Anything else is refused with a message that names
//! the field and the forms to send, which the server returns as a tool
//! error. So is an argument the tool does not take (`max_results`, a
//! misspelt `qurey`): ignored, the call would answer another question.
//! Each of these types writes a JSON Schema that lists both forms (and
//! `additionalProperties: false`), so what a client reads in `tools/list`
//! is what the server accepts.

use std::borrow::Cow;
use std::marker::PhantomData;

use rmcp::schemars::{self, json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecallParams {
    /// What to look for: the task at hand, a question, an error message or a
    /// ticket's text. Plain words; no query syntax is needed.
    pub query: String,
    /// Most hits to return, 1 to 200 (default 8).
    pub limit: Option<Whole<RecallLimit>>,
    /// Only these kinds of memory: "record" (durable facts), "session"
    /// (past conversations), "ticket". Default: all.
    pub kinds: Option<Words<Kinds>>,
    /// "project" (this codebase), "user" (the person's preferences across
    /// projects) or "all" (default).
    pub scope: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RememberParams {
    /// The fact to keep, in one to three self-contained sentences: a
    /// decision and its reason, a procedure, a principle, an incident and
    /// its fix, or a preference of the user. Never a secret.
    pub text: String,
    /// decisions, procedures, principles, incidents or preferences. Default:
    /// classified from the text.
    pub category: Option<String>,
    /// A stable key; remembering the same key again updates the record.
    /// Default: "agent:" and a slug of the text.
    pub key: Option<String>,
    /// "project" or "user". Default: "user" for a preference, else "project".
    pub scope: Option<String>,
    /// 0-100: how much this should count (default 50).
    pub importance: Option<Whole<Importance>>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IdParams {
    /// A record's id or key (as `list` and `recall` show them).
    pub id: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListParams {
    /// Only this category: decisions, procedures, principles, incidents or
    /// preferences.
    pub category: Option<String>,
    /// "project" or "user". Default: both.
    pub scope: Option<String>,
    /// Most records to return, 1 to 1000 (default 50).
    pub limit: Option<Whole<ListLimit>>,
}

/// An argument's name, for the messages that refuse its value.
pub trait Field {
    const NAME: &'static str;
}

/// The range a whole-number argument must fall in, and an example of it.
pub trait Range: Field {
    const MIN: u64;
    const MAX: u64;
    const EXAMPLE: u64;
}

/// `recall`'s `limit`: the REST API's range for the same thing.
#[derive(Debug)]
pub struct RecallLimit;
impl Field for RecallLimit {
    const NAME: &'static str = "limit";
}
impl Range for RecallLimit {
    const MIN: u64 = 1;
    const MAX: u64 = 200;
    const EXAMPLE: u64 = 8;
}

/// `list`'s `limit`.
#[derive(Debug)]
pub struct ListLimit;
impl Field for ListLimit {
    const NAME: &'static str = "limit";
}
impl Range for ListLimit {
    const MIN: u64 = 1;
    const MAX: u64 = 1000;
    const EXAMPLE: u64 = 50;
}

/// `remember`'s `importance`, the record's own range.
#[derive(Debug)]
pub struct Importance;
impl Field for Importance {
    const NAME: &'static str = "importance";
}
impl Range for Importance {
    const MIN: u64 = 0;
    const MAX: u64 = 100;
    const EXAMPLE: u64 = 50;
}

/// `recall`'s `kinds`.
#[derive(Debug)]
pub struct Kinds;
impl Field for Kinds {
    const NAME: &'static str = "kinds";
}

/// A whole number in `R`'s range, sent as a JSON number (`8`) or as a
/// string of ASCII digits (`"8"`). Signs, fractions, exponents and spaces
/// are refused rather than guessed at.
#[derive(Debug, Clone, Copy)]
pub struct Whole<R> {
    value: u64,
    range: PhantomData<R>,
}

impl<R: Range> Whole<R> {
    pub fn get(self) -> u64 {
        self.value
    }

    fn parse(v: &Value) -> Option<u64> {
        let n = match v {
            Value::Number(n) => n.as_u64()?,
            Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
                s.parse().ok()?
            }
            _ => return None,
        };
        (R::MIN..=R::MAX).contains(&n).then_some(n)
    }
}

impl<'de, R: Range> Deserialize<'de> for Whole<R> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        match Self::parse(&v) {
            Some(value) => Ok(Whole {
                value,
                range: PhantomData,
            }),
            None => Err(D::Error::custom(format!(
                "{} must be a whole number from {} to {}, as a number or a string of digits (such as {ex} or \"{ex}\"); got {}",
                R::NAME,
                R::MIN,
                R::MAX,
                shown(&v),
                ex = R::EXAMPLE,
            ))),
        }
    }
}

impl<R: Range> JsonSchema for Whole<R> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        format!("Whole_{}_{}", R::MIN, R::MAX).into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": ["integer", "string"],
            "minimum": R::MIN,
            "maximum": R::MAX,
            "pattern": "^[0-9]+$",
        })
    }
}

/// A list of words, sent as a JSON list (`["record", "session"]`), as one
/// string with commas between the words (`"record,session"`, or `"record"`
/// for one), or as a JSON list inside a string (`"[\"record\"]"`). Words
/// are trimmed and empty ones dropped; what each word may be is the tool's
/// to check.
#[derive(Debug, Clone)]
pub struct Words<F> {
    words: Vec<String>,
    field: PhantomData<F>,
}

impl<F: Field> Words<F> {
    pub fn into_vec(self) -> Vec<String> {
        self.words
    }

    fn parse(v: &Value) -> Option<Vec<String>> {
        let words: Vec<String> = match v {
            Value::Array(items) => items
                .iter()
                .map(|i| i.as_str().map(str::to_string))
                .collect::<Option<_>>()?,
            Value::String(s) if s.trim_start().starts_with('[') => serde_json::from_str(s).ok()?,
            Value::String(s) => s.split(',').map(str::to_string).collect(),
            _ => return None,
        };
        Some(
            words
                .into_iter()
                .map(|w| w.trim().to_string())
                .filter(|w| !w.is_empty())
                .collect(),
        )
    }
}

impl<'de, F: Field> Deserialize<'de> for Words<F> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        match Self::parse(&v) {
            Some(words) => Ok(Words {
                words,
                field: PhantomData,
            }),
            None => Err(D::Error::custom(format!(
                "{} must be a list of strings, or one string with the values separated by commas (such as [\"record\", \"session\"] or \"record,session\"); got {}",
                F::NAME,
                shown(&v),
            ))),
        }
    }
}

impl<F: Field> JsonSchema for Words<F> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "Words".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": ["array", "string"],
            "items": {"type": "string"},
        })
    }
}

/// A refused value as JSON, cut short: it is echoed back in a message.
fn shown(v: &Value) -> String {
    const MAX_CHARS: usize = 40;
    let s = v.to_string();
    match s.char_indices().nth(MAX_CHARS) {
        Some((end, _)) => format!("{}...", &s[..end]),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn whole(v: Value) -> Result<u64, String> {
        serde_json::from_value::<Whole<RecallLimit>>(v)
            .map(Whole::get)
            .map_err(|e| e.to_string())
    }

    fn words(v: Value) -> Result<Vec<String>, String> {
        serde_json::from_value::<Words<Kinds>>(v)
            .map(Words::into_vec)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_whole_number_may_be_a_string_of_digits() {
        assert_eq!(whole(json!(2)), Ok(2));
        assert_eq!(whole(json!("2")), Ok(2));
        assert_eq!(whole(json!("200")), Ok(200));
    }

    #[test]
    fn anything_else_is_refused_with_the_forms_to_send() {
        for v in [
            json!(0),
            json!("0"),
            json!(201),
            json!(-1),
            json!("-1"),
            json!("+2"),
            json!(" 2"),
            json!("2.0"),
            json!(2.5),
            json!(""),
            json!("two"),
            json!(true),
            json!([2]),
            json!("99999999999999999999999"),
        ] {
            let e = whole(v.clone()).unwrap_err();
            assert!(
                e.starts_with("limit must be a whole number from 1 to 200, as a number or a string of digits (such as 8 or \"8\"); got "),
                "{v}: {e}"
            );
        }
        let e = whole(json!("x".repeat(100))).unwrap_err();
        assert!(e.ends_with(&format!("got \"{}...", "x".repeat(39))), "{e}");
    }

    #[test]
    fn a_list_of_words_may_be_one_string() {
        let both = Ok(vec!["record".to_string(), "session".to_string()]);
        assert_eq!(words(json!(["record", "session"])), both);
        assert_eq!(words(json!("record,session")), both);
        assert_eq!(words(json!(" record , session, ")), both);
        assert_eq!(words(json!("[\"record\", \"session\"]")), both);
        assert_eq!(words(json!("record")), Ok(vec!["record".to_string()]));
        assert_eq!(words(json!("")), Ok(vec![]));
        for v in [json!(5), json!([1, 2]), json!("[not json"), json!({"a": 1})] {
            let e = words(v.clone()).unwrap_err();
            assert!(e.starts_with("kinds must be a list of strings"), "{v}: {e}");
        }
    }

    #[test]
    fn schemas_list_both_forms() {
        let s = schemars::schema_for!(RecallParams);
        let limit = &s.as_value()["properties"]["limit"];
        assert_eq!(
            limit["type"],
            json!(["integer", "string", "null"]),
            "{limit}"
        );
        assert_eq!(limit["minimum"], 1);
        assert_eq!(limit["maximum"], 200);
        let kinds = &s.as_value()["properties"]["kinds"];
        assert_eq!(kinds["type"], json!(["array", "string", "null"]), "{kinds}");
    }
}
