//! Small text utilities shared by records, indexing and recall: slugs, the
//! word splitter that mirrors FTS5's `unicode61` tokenizer, identifier
//! splitting and English stems for the `aux` column.

use std::sync::LazyLock;

use rust_stemmers::{Algorithm, Stemmer};

static STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));

/// Lowercase `s`, collapse every run of non-alphanumerics into one `-`, trim
/// dashes and cut to at most `max` characters.
pub fn slug(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max));
    let (mut dash, mut chars) = (false, 0);
    for c in s.chars() {
        if c.is_alphanumeric() {
            if dash && chars > 0 {
                out.push('-');
                chars += 1;
            }
            dash = false;
            for l in c.to_lowercase() {
                out.push(l);
                chars += 1;
            }
        } else {
            dash = true;
        }
        if chars >= max {
            break;
        }
    }
    let cut: String = out.chars().take(max).collect();
    cut.trim_matches('-').to_string()
}

/// The words of `s` as `unicode61` sees them: maximal runs of alphanumeric
/// characters. Underscores, slashes, colons and dots separate words.
pub fn words(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
}

/// The English stem of a lowercase word.
pub fn stem(word: &str) -> std::borrow::Cow<'_, str> {
    STEMMER.stem(word)
}

/// Parts of a CamelCase word: `HashMap` -> `hash`, `map`;
/// `parseHTTPRequest` -> `parse`, `http`, `request`; `E0502` is kept whole.
/// Returns nothing for a word with a single part. `word` should be one
/// [`words`] item (alphanumeric only).
pub fn camel_parts(word: &str) -> Vec<String> {
    let chars: Vec<char> = word.chars().collect();
    let mut parts = Vec::new();
    let mut start = 0;
    for i in 1..chars.len() {
        let (p, c) = (chars[i - 1], chars[i]);
        let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
        // A plural acronym ends in one `s` (`URLs`, `miRNAs`, `IDs`): that
        // `s` belongs to the capitals before it, it does not start a word.
        let plural = i + 2 == chars.len() && chars[i + 1] == 's';
        // Letters and digits stay together (`utf8`, `E0502`, `sha256`);
        // a capital after a lowercase letter or a digit starts a new part.
        let boundary = ((p.is_lowercase() || p.is_numeric()) && c.is_uppercase())
            || (p.is_uppercase() && c.is_uppercase() && next_lower && !plural);
        if boundary {
            parts.push(chars[start..i].iter().collect::<String>().to_lowercase());
            start = i;
        }
    }
    if parts.is_empty() {
        return parts;
    }
    parts.push(chars[start..].iter().collect::<String>().to_lowercase());
    parts
}

/// Text for the `aux` column: the parts of every CamelCase identifier and the
/// stem of every word whose stem differs from the word. Searching it gives
/// stemmed and identifier-part matches without a porter tokenizer.
pub fn aux_terms(text: &str) -> String {
    let mut out = String::with_capacity(text.len() / 3);
    let mut push = |t: &str| {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(t);
    };
    STEM_CACHE.with_borrow_mut(|cache| {
        for w in words(text) {
            // Only a capital after the first letter can split a word.
            if w.chars().skip(1).any(char::is_uppercase) {
                for part in camel_parts(w) {
                    push(&part);
                }
            }
            if w.len() > 3 && w.chars().all(char::is_alphabetic) {
                if let Some(s) = cache.changed_stem(w) {
                    push(s);
                }
            }
        }
    });
    out
}

/// `f` of the stem of the lowercase word `w`, from the thread's cache (see
/// `STEM_CACHE`). `f` must not stem again.
pub fn with_stem<T>(w: &str, f: impl FnOnce(&str) -> T) -> T {
    STEM_CACHE.with_borrow_mut(|cache| f(cache.changed_stem(w).unwrap_or(w)))
}

thread_local! {
    /// Stemming was a fifth of the indexer's CPU time; words repeat (a
    /// Zipf law), so each indexing thread remembers the stems it computed.
    /// A query stems its own words, plans and scores candidates with them,
    /// and meets the same words in candidate after candidate: it shares
    /// this cache (stemming was a tenth of a query's CPU at 1,000,000
    /// passages).
    static STEM_CACHE: std::cell::RefCell<StemCache> =
        std::cell::RefCell::new(StemCache::default());
}

/// Stems of recently seen words, bounded in size.
#[derive(Default)]
struct StemCache {
    /// Word as written -> its stem when that differs from the lowercase word.
    map: hashbrown::HashMap<Box<str>, Option<Box<str>>, foldhash::fast::RandomState>,
}

impl StemCache {
    /// Entries kept before the cache starts over (a few MB at most).
    const MAX: usize = 50_000;

    /// The stem of `word` if it differs from the lowercase word.
    fn changed_stem(&mut self, word: &str) -> Option<&str> {
        if self.map.len() >= Self::MAX && !self.map.contains_key(word) {
            self.map.clear();
        }
        self.map
            .entry_ref(word)
            .or_insert_with(|| {
                let lower = word.to_lowercase();
                let s = stem(&lower);
                (s != lower).then(|| Box::from(s.as_ref()))
            })
            .as_deref()
    }
}

/// Rough token count: four characters a token, rounded up.
pub fn estimate_tokens(s: &str) -> usize {
    s.chars().count().div_ceil(4)
}

/// Cut `s` to at most `max` characters on a char boundary.
pub fn truncate_chars(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// `s` cut to at most `max` characters, at the end of a word when one
/// ends in its second half, with `…` appended when anything was cut (so a
/// shown line never ends mid-word without saying so).
pub fn shorten_at_word(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    let cut = truncate_chars(s, max);
    if cut.len() == s.len() {
        return std::borrow::Cow::Borrowed(s);
    }
    let at_word = cut
        .char_indices()
        .rev()
        .find(|&(_, c)| c.is_whitespace())
        .map(|(i, _)| &cut[..i])
        .filter(|w| w.chars().count() * 2 >= max)
        .unwrap_or(cut);
    std::borrow::Cow::Owned(format!("{}…", at_word.trim_end()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortened_text_ends_at_a_word_and_says_it_was_cut() {
        assert_eq!(shorten_at_word("short enough", 20), "short enough");
        assert_eq!(
            shorten_at_word("the quick brown fox jumps", 12),
            "the quick…"
        );
        // One long word: cut inside it rather than keep almost nothing.
        assert_eq!(shorten_at_word("a supercalifragilistic", 10), "a supercal…");
    }

    #[test]
    fn slug_collapses_and_trims() {
        assert_eq!(slug("  Use PNPM, not npm!! ", 60), "use-pnpm-not-npm");
        assert_eq!(slug("a/b_c::d", 60), "a-b-c-d");
        assert_eq!(slug("x".repeat(100).as_str(), 60).len(), 60);
        assert_eq!(slug("ab-cd-ef", 3), "ab");
        assert_eq!(slug("!!!", 10), "");
    }

    #[test]
    fn camel_parts_split_identifiers() {
        assert_eq!(camel_parts("HashMap"), ["hash", "map"]);
        assert_eq!(
            camel_parts("parseHTTPRequest"),
            ["parse", "http", "request"]
        );
        assert!(camel_parts("E0502").is_empty());
        assert!(camel_parts("lowercase").is_empty());
        assert_eq!(camel_parts("utf8Decoder"), ["utf8", "decoder"]);
        // A plural acronym keeps its `s`: not `get ur ls`, `mi rn as`.
        assert_eq!(camel_parts("getURLs"), ["get", "urls"]);
        assert_eq!(camel_parts("miRNAs"), ["mi", "rnas"]);
        assert!(camel_parts("IDs").is_empty());
        assert!(camel_parts("DCs").is_empty());
        assert_eq!(camel_parts("HTTPServer"), ["http", "server"]);
        assert_eq!(camel_parts("HTTPSocks"), ["http", "socks"]);
        // Only a final lone `s` is a plural; `As` inside a word starts one.
        assert_eq!(camel_parts("parseASTs"), ["parse", "asts"]);
        assert_eq!(camel_parts("ToASet"), ["to", "a", "set"]);
    }

    #[test]
    fn aux_has_parts_and_stems() {
        let a = aux_terms("ConfigLoader failed while parsing configurations");
        assert!(a.contains("config loader"), "{a}");
        assert!(a.contains("pars"), "{a}");
        assert!(a.contains("configur"), "{a}");
    }

    /// The plain definition of the `aux` text, without the fast paths.
    fn aux_reference(text: &str) -> String {
        let mut out: Vec<String> = Vec::new();
        for w in words(text) {
            out.extend(camel_parts(w));
            if w.len() > 3 && w.chars().all(|c| c.is_alphabetic()) {
                let lower = w.to_lowercase();
                let s = stem(&lower);
                if s != lower {
                    out.push(s.into_owned());
                }
            }
        }
        out.join(" ")
    }

    proptest::proptest! {
        #[test]
        fn aux_matches_its_plain_definition(
            text in "([A-Za-zÀ-ÿ0-9]{1,12}[ _./-]){0,40}",
        ) {
            // Twice: the second call reads the stem cache.
            proptest::prop_assert_eq!(aux_terms(&text), aux_reference(&text));
            proptest::prop_assert_eq!(aux_terms(&text), aux_reference(&text));
        }
    }

    #[test]
    fn truncate_on_char_boundary() {
        assert_eq!(truncate_chars("héllo", 2), "hé");
        assert_eq!(truncate_chars("hi", 5), "hi");
    }
}
