//! Lenient field types for the transcript parsers ([`LStr`], [`LBool`],
//! [`LI64`], [`StrList`], [`ObjOr`], [`ObjList`], [`Content`]): custom
//! `Deserialize` impls that read what they understand and skip anything
//! else without failing the whole line, so a single oddly typed field never
//! loses a message. Strings borrow from the input when they contain no
//! escapes. Nothing here needs serde_json's `raw_value` feature.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::values::is_blank;
// ---------------------------------------------------------------------------
// Lenient field types
// ---------------------------------------------------------------------------

/// Visitor methods that accept every non-string JSON value as `$junk`,
/// draining arrays and objects.
macro_rules! accept_non_strings_as {
    ($junk:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($junk)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($junk)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($junk)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($junk)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($junk)
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($junk)
        }
    };
}

/// Visitor methods that drain arrays and objects and return `$junk`.
macro_rules! accept_containers_as {
    ($junk:expr) => {
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok($junk)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok($junk)
        }
    };
}

/// Visitor methods that accept strings as `$junk`.
macro_rules! accept_strings_as {
    ($junk:expr) => {
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok($junk)
        }
    };
}

/// A string field that tolerates any JSON type: anything but a string reads
/// as `None`. Borrows from the input when the string has no escapes.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct LStr<'a>(pub Option<Cow<'a, str>>);

impl<'a> LStr<'a> {
    /// The string, if the field was a string.
    pub fn get(&self) -> Option<&str> {
        self.0.as_deref()
    }

    /// The string if it is present and not blank.
    pub fn non_blank(&self) -> Option<&str> {
        self.get().filter(|s| !is_blank(s))
    }
}

struct LStrVisitor;

impl<'de> Visitor<'de> for LStrVisitor {
    type Value = LStr<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(LStr(Some(Cow::Borrowed(v))))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(LStr(Some(Cow::Owned(v.to_owned()))))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(LStr(Some(Cow::Owned(v))))
    }

    accept_non_strings_as!(LStr(None));
    accept_containers_as!(LStr(None));
}

impl<'de: 'a, 'a> Deserialize<'de> for LStr<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LStrVisitor)
    }
}

/// A boolean field that reads `true` only from JSON `true`; any other value
/// (or absence) is `false`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct LBool(pub bool);

struct LBoolVisitor;

impl<'de> Visitor<'de> for LBoolVisitor {
    type Value = LBool;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(LBool(v))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(LBool(false))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(LBool(false))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(LBool(false))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(LBool(false))
    }
    accept_strings_as!(LBool(false));
    accept_containers_as!(LBool(false));
}

impl<'de> Deserialize<'de> for LBool {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LBoolVisitor)
    }
}

/// An integer field; anything that is not an integer fitting `i64` is `None`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct LI64(pub Option<i64>);

struct LI64Visitor;

impl<'de> Visitor<'de> for LI64Visitor {
    type Value = LI64;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(LI64(Some(v)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(LI64(i64::try_from(v).ok()))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(LI64(None))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(LI64(None))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(LI64(None))
    }
    accept_strings_as!(LI64(None));
    accept_containers_as!(LI64(None));
}

impl<'de> Deserialize<'de> for LI64 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LI64Visitor)
    }
}

/// A string or an array of strings (a command line): non-string elements and
/// other types are dropped.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct StrList<'a>(pub Vec<Cow<'a, str>>);

struct StrListVisitor;

impl<'de> Visitor<'de> for StrListVisitor {
    type Value = StrList<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(StrList(vec![Cow::Borrowed(v)]))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(StrList(vec![Cow::Owned(v.to_owned())]))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(LStr(s)) = seq.next_element::<LStr<'de>>()? {
            out.extend(s);
        }
        Ok(StrList(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(StrList::default())
    }

    accept_non_strings_as!(StrList::default());
}

impl<'de: 'a, 'a> Deserialize<'de> for StrList<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrListVisitor)
    }
}

/// A field expected to be a JSON object: `Obj(T)` when it is, otherwise
/// `NotObject` naming what was found (for a problem message).
#[derive(Debug, Clone, PartialEq)]
pub enum ObjOr<T> {
    /// The field was an object.
    Obj(T),
    /// The field was something else: "a string", "an array", "null", ...
    NotObject(&'static str),
}

impl<T> ObjOr<T> {
    /// The object, if it was one (by value).
    pub fn into_obj(self) -> Option<T> {
        match self {
            ObjOr::Obj(t) => Some(t),
            ObjOr::NotObject(_) => None,
        }
    }

    /// The object, if it was one.
    pub fn as_obj(&self) -> Option<&T> {
        match self {
            ObjOr::Obj(t) => Some(t),
            ObjOr::NotObject(_) => None,
        }
    }
}

struct ObjOrVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjOrVisitor<T> {
    type Value = ObjOr<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        T::deserialize(de::value::MapAccessDeserializer::new(map)).map(ObjOr::Obj)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(ObjOr::NotObject("an array"))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(ObjOr::NotObject("a boolean"))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(ObjOr::NotObject("a number"))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(ObjOr::NotObject("a number"))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(ObjOr::NotObject("a number"))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(ObjOr::NotObject("null"))
    }
    accept_strings_as!(ObjOr::NotObject("a string"));
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ObjOr<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ObjOrVisitor(PhantomData))
    }
}

/// A list of objects that tolerates any JSON: elements that are not
/// objects are counted in `skipped` and dropped; anything but an array
/// reads as an empty list.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjList<T> {
    /// The elements that were objects, in order.
    pub items: Vec<T>,
    /// Elements that were not objects.
    pub skipped: usize,
}

impl<T> Default for ObjList<T> {
    fn default() -> Self {
        ObjList {
            items: Vec::new(),
            skipped: 0,
        }
    }
}

struct ObjListVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjListVisitor<T> {
    type Value = ObjList<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut list = ObjList::default();
        while let Some(item) = seq.next_element::<ObjOr<T>>()? {
            match item {
                ObjOr::Obj(t) => list.items.push(t),
                ObjOr::NotObject(_) => list.skipped += 1,
            }
        }
        Ok(list)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(ObjList::default())
    }

    accept_non_strings_as!(ObjList::default());
    accept_strings_as!(ObjList::default());
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ObjList<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ObjListVisitor(PhantomData))
    }
}

/// Message content: a plain string, a list of blocks `B` (each possibly not
/// an object), or something else (`Other`: null, number, object).
#[derive(Debug, Clone, PartialEq)]
pub enum Content<'a, B> {
    /// Plain string content.
    Text(Cow<'a, str>),
    /// A list of blocks, each an object or not.
    Blocks(Vec<ObjOr<B>>),
    /// Any other JSON value (object, number, null, ...).
    Other,
}

struct ContentVisitor<B>(PhantomData<B>);

impl<'de, B: Deserialize<'de>> Visitor<'de> for ContentVisitor<B> {
    type Value = Content<'de, B>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Content::Text(Cow::Borrowed(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Content::Text(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Content::Text(Cow::Owned(v)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(1));
        while let Some(b) = seq.next_element::<ObjOr<B>>()? {
            blocks.push(b);
        }
        Ok(Content::Blocks(blocks))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Content::Other)
    }

    accept_non_strings_as!(Content::Other);
}

impl<'de: 'a, 'a, B: Deserialize<'de>> Deserialize<'de> for Content<'a, B> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ContentVisitor(PhantomData))
    }
}

/// A `{type, text}` content block (Claude `text`, Codex `input_text` /
/// `output_text`).
#[derive(Debug, Default, Clone, PartialEq, serde::Deserialize)]
#[serde(default)]
pub struct TextPart<'a> {
    /// The block's `type`.
    #[serde(rename = "type", borrow)]
    pub kind: LStr<'a>,
    /// The block's `text`.
    #[serde(borrow)]
    pub text: LStr<'a>,
}

impl<'a, B> Content<'a, B> {
    /// Joins the content into one string (borrowed for plain-string
    /// content) with `text_of` picking the text of
    /// each object block (non-objects are skipped; see
    /// [`Content::non_objects`]).
    pub fn join<'s>(
        &'s self,
        sep: &str,
        text_of: impl Fn(&'s B) -> Option<&'s str>,
    ) -> Cow<'s, str> {
        match self {
            Content::Text(t) => Cow::Borrowed(t.as_ref()),
            Content::Blocks(blocks) => {
                let mut out = String::new();
                for t in blocks.iter().filter_map(|b| b.as_obj().and_then(&text_of)) {
                    if !out.is_empty() {
                        out.push_str(sep);
                    }
                    out.push_str(t);
                }
                Cow::Owned(out)
            }
            Content::Other => Cow::Borrowed(""),
        }
    }

    /// How many blocks were not JSON objects, and the first one's kind.
    pub fn non_objects(&self) -> Option<(usize, &'static str)> {
        let Content::Blocks(blocks) = self else {
            return None;
        };
        let mut bad = blocks.iter().filter_map(|b| match b {
            ObjOr::NotObject(k) => Some(*k),
            ObjOr::Obj(_) => None,
        });
        let first = bad.next()?;
        Some((1 + bad.count(), first))
    }
}

/// The text of a [`TextPart`] whose type is `text`, `input_text` or
/// `output_text`.
pub fn text_part<'s>(p: &'s TextPart<'_>) -> Option<&'s str> {
    match p.kind.get() {
        Some("text" | "input_text" | "output_text") => p.text.get(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, serde::Deserialize)]
    #[serde(default)]
    struct Probe<'a> {
        #[serde(borrow)]
        s: LStr<'a>,
        b: LBool,
        n: LI64,
        #[serde(borrow)]
        l: StrList<'a>,
        #[serde(borrow)]
        o: Option<ObjOr<TextPart<'a>>>,
        #[serde(borrow)]
        c: Option<Content<'a, TextPart<'a>>>,
    }

    fn probe(json: &str) -> Probe<'_> {
        match serde_json::from_str(json) {
            Ok(p) => p,
            Err(e) => panic!("{json}: {e}"),
        }
    }

    #[test]
    fn lenient_fields_accept_any_type() {
        let p = probe(r#"{"s":[1,{"a":2}],"b":"yes","n":"3","l":{"x":1},"o":"str","c":5}"#);
        assert_eq!(p.s.get(), None);
        assert!(!p.b.0);
        assert_eq!(p.n.0, None);
        assert!(p.l.0.is_empty());
        assert_eq!(p.o, Some(ObjOr::NotObject("a string")));
        assert_eq!(p.c, Some(Content::Other));
    }

    #[test]
    fn lenient_fields_read_their_type_and_borrow() {
        let p = probe(
            r#"{"s":"plain","b":true,"n":-4,"l":["a",1,"b"],"o":{"type":"text","text":"t"},"c":["x",{"type":"text","text":"y\nz"}]}"#,
        );
        assert!(matches!(p.s.0, Some(Cow::Borrowed("plain"))));
        assert!(p.b.0);
        assert_eq!(p.n.0, Some(-4));
        assert_eq!(p.l.0, vec!["a", "b"]);
        assert_eq!(
            p.o.and_then(|o| o.as_obj().and_then(|t| t.text.0.clone())),
            Some("t".into())
        );
        let c = p.c.unwrap_or(Content::Other);
        assert_eq!(c.join("|", text_part), "y\nz");
        assert_eq!(c.non_objects(), Some((1, "a string")));
    }
}
