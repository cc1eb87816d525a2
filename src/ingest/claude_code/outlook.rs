//! What only the whole of a Claude Code file tells the parse of one of its
//! parts ([`Outlook`]: the title and which summaries resolve), and the
//! cheap two-pass scan over the file that makes it ([`OutlookScan`]).

use std::collections::HashSet;

use super::Line;
use crate::ingest::transcript::TITLE_CAP;
use crate::ingest::values;

/// What only the whole file tells the parse of one part: the title its
/// `custom-title` and summary lines give, and the summaries that resolve.
/// Made by an [`OutlookScan`] of the file, which holds a few summaries, not
/// a set of every line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outlook {
    /// The last `custom-title`, else the text of the last resolved summary.
    pub(super) title: Option<String>,
    /// The `leafUuid`s that are the uuid of a line of the file.
    pub(super) leaves: HashSet<String>,
}

/// Two passes over the lines of a whole file (in blocks of complete lines,
/// with lines that hold NUL bytes blanked) that make its [`Outlook`]:
/// [`OutlookScan::titles`] over every block, then, when
/// [`OutlookScan::needs_leaves`], [`OutlookScan::leaves`] over every block
/// again. Only lines that hold the words looked for are parsed.
#[derive(Debug, Default)]
pub struct OutlookScan {
    custom_title: Option<String>,
    /// `(leafUuid, summary)` of every summary line, in file order.
    summaries: Vec<(String, String)>,
    /// Matches any leaf of `summaries`.
    leaf_finder: Option<regex::bytes::Regex>,
    resolved: HashSet<String>,
}

impl OutlookScan {
    /// First pass: the `custom-title` and `summary` lines of a block.
    pub fn titles(&mut self, block: &[u8]) {
        let custom = memchr::memmem::find(block, b"custom-title").is_some();
        if !custom && memchr::memmem::find(block, b"summary").is_none() {
            return;
        }
        for line in block.split(|&b| b == b'\n') {
            let wanted = memchr::memmem::find(line, b"custom-title").is_some()
                || memchr::memmem::find(line, b"summary").is_some();
            let Some(mut l) = wanted.then(|| decode_line(line)).flatten() else {
                continue;
            };
            match l.kind.get() {
                Some("custom-title") => {
                    if let Some(t) = l.custom_title.non_blank() {
                        self.custom_title = Some(values::title(t, TITLE_CAP));
                    }
                }
                Some("summary") if l.summary.non_blank().is_some() => {
                    if let Some(leaf) = l.leaf_uuid.non_blank() {
                        let text = l.summary.0.take().unwrap_or_default().into_owned();
                        self.summaries.push((leaf.to_owned(), text));
                    }
                }
                _ => {}
            }
        }
    }

    /// Whether a second pass is needed: there are summaries to resolve.
    pub fn needs_leaves(&mut self) -> bool {
        if self.summaries.is_empty() {
            return false;
        }
        let alternatives: Vec<String> = self
            .summaries
            .iter()
            .map(|(leaf, _)| regex::escape(leaf))
            .collect();
        // Only escaped literals: the pattern is valid, its size bounded by
        // the summaries a file holds.
        self.leaf_finder = regex::bytes::Regex::new(&alternatives.join("|")).ok();
        self.leaf_finder.is_some()
    }

    /// Second pass: the lines whose `uuid` is a summary's leaf.
    pub fn leaves(&mut self, block: &[u8]) {
        let Some(finder) = &self.leaf_finder else {
            return;
        };
        let mut next_line = 0;
        for m in finder.find_iter(block) {
            if m.start() < next_line {
                continue;
            }
            let start = memchr::memrchr(b'\n', &block[..m.start()]).map_or(0, |i| i + 1);
            let end = memchr::memchr(b'\n', &block[m.end()..]).map_or(block.len(), |i| m.end() + i);
            next_line = end;
            if let Some(uuid) = decode_line(&block[start..end]).and_then(|l| l.uuid.0) {
                self.resolved.insert(uuid.into_owned());
            }
        }
    }

    /// The outlook of the file scanned.
    pub fn finish(self) -> Outlook {
        let leaves: HashSet<String> = self
            .summaries
            .iter()
            .filter(|(leaf, _)| self.resolved.contains(leaf))
            .map(|(leaf, _)| leaf.clone())
            .collect();
        let summary = self
            .summaries
            .iter()
            .rev()
            .find(|(leaf, _)| leaves.contains(leaf))
            .map(|(_, text)| values::title(text, TITLE_CAP));
        Outlook {
            title: self.custom_title.or(summary),
            leaves,
        }
    }
}

/// One line decoded as [`read_lines`](crate::ingest::lines::read_lines) decodes
/// it (a first-line BOM aside): `None` when it is not a JSON object.
fn decode_line(line: &[u8]) -> Option<Line<'_>> {
    let text = std::str::from_utf8(line).ok()?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if !text.trim_start().starts_with('{') {
        return None;
    }
    serde_json::from_str(text).ok()
}
