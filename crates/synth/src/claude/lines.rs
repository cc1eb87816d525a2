//! The lines of one Claude Code session: the envelope every line carries
//! (parent chain, cwd, session, branch, uuid, timestamp) and each kind of
//! line, from prompts to tool results, with the field layout Claude Code
//! 2.1 writes. Lines are built as text: a corpus of a gigabyte is millions
//! of them.

use std::fmt::Write as _;

use super::Spec;
use crate::words::TOP_DIRS;
use crate::{cap, Draw, Text};

/// `s` as a JSON string, quotes included.
fn js(out: &mut String, s: &str) {
    // Serializing a str cannot fail.
    out.push_str(&serde_json::to_string(s).expect("a str serializes"));
}

/// `2025-06-01T12:34:56.789Z` for unix milliseconds.
fn iso(ms: i64, out: &mut String) {
    // Generated times lie within a few years of 2025.
    let t = jiff::Timestamp::from_millisecond(ms).expect("a time in range");
    let _ = write!(out, "{}", t.strftime("%Y-%m-%dT%H:%M:%S%.3fZ"));
}

/// Writes one session's lines: keeps the envelope and the parent chain.
pub(super) struct Session<'v> {
    pub t: Text<'v>,
    spec: &'v Spec,
    pub out: String,
    parent: Option<String>,
    ts: i64,
    model: &'static str,
}

impl<'v> Session<'v> {
    pub fn new(t: Text<'v>, spec: &'v Spec, model: &'static str) -> Session<'v> {
        Session {
            t,
            spec,
            out: String::with_capacity(spec.target + 512 * 1024),
            parent: None,
            ts: spec.start_ms,
            model,
        }
    }

    fn tick(&mut self, lo: i64, hi: i64) {
        self.ts += self.t.rng.i64(lo..=hi);
    }

    /// Opens a line: the common envelope up to (not including) `type`.
    fn open(&mut self) {
        let o = &mut self.out;
        o.push_str("{\"parentUuid\":");
        match &self.parent {
            Some(p) => js(o, p),
            None => o.push_str("null"),
        }
        let _ = write!(o, ",\"isSidechain\":{}", self.spec.agent_id.is_some());
        o.push_str(",\"userType\":\"external\",\"cwd\":");
        js(o, &self.spec.cwd);
        o.push_str(",\"sessionId\":");
        js(o, &self.spec.session_id);
        o.push_str(",\"version\":\"2.1.39\",\"gitBranch\":");
        js(o, &self.spec.branch);
        if let Some(a) = &self.spec.agent_id {
            o.push_str(",\"agentId\":");
            js(o, a);
        }
        o.push(',');
    }

    /// Closes a line with its uuid and timestamp (+ extra trailing fields).
    fn close(&mut self, extra: &str) -> String {
        let uuid = self.t.uuid();
        self.out.push_str(",\"uuid\":");
        js(&mut self.out, &uuid);
        self.out.push_str(",\"timestamp\":\"");
        iso(self.ts, &mut self.out);
        self.out.push('"');
        self.out.push_str(extra);
        self.out.push_str("}\n");
        self.parent = Some(uuid.clone());
        uuid
    }

    pub fn snapshot(&mut self) {
        let id = self.t.uuid();
        let o = &mut self.out;
        o.push_str("{\"type\":\"file-history-snapshot\",\"messageId\":");
        js(o, &id);
        o.push_str(",\"snapshot\":{\"messageId\":");
        js(o, &id);
        o.push_str(",\"trackedFileBackups\":{},\"timestamp\":\"");
        iso(self.ts, o);
        o.push_str("\"},\"isSnapshotUpdate\":false}\n");
    }

    pub fn user_prompt(&mut self, words: usize) {
        self.tick(2_000, 120_000);
        let mut text = String::new();
        self.t.markdown(&mut text, words);
        self.open();
        self.out
            .push_str("\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":");
        if self.t.rng.chance(700) {
            js(&mut self.out, &text);
        } else {
            self.out.push_str("[{\"type\":\"text\",\"text\":");
            js(&mut self.out, &text);
            self.out.push_str("}]");
        }
        self.out.push('}');
        self.close("");
    }

    /// One assistant line carrying one content block (already JSON).
    fn assistant(&mut self, msg_id: &str, req_id: &str, block: &str) -> String {
        self.tick(200, 9_000);
        self.open();
        self.out.push_str("\"message\":{\"model\":");
        js(&mut self.out, self.model);
        self.out.push_str(",\"id\":");
        js(&mut self.out, msg_id);
        self.out
            .push_str(",\"type\":\"message\",\"role\":\"assistant\",\"content\":[");
        self.out.push_str(block);
        let r = &mut self.t.rng;
        let (i, c, cr, o) = (
            r.u32(1..=12),
            r.u32(..20_000),
            r.u32(10_000..=180_000),
            r.u32(1..=3_000),
        );
        let _ = write!(
            self.out,
            "],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{{\"input_tokens\":{i},\"cache_creation_input_tokens\":{c},\"cache_read_input_tokens\":{cr},\"cache_creation\":{{\"ephemeral_5m_input_tokens\":{c},\"ephemeral_1h_input_tokens\":0}},\"output_tokens\":{o},\"service_tier\":\"standard\"}}}},\"requestId\":"
        );
        js(&mut self.out, req_id);
        self.out.push_str(",\"type\":\"assistant\"");
        self.close("")
    }

    /// `n` progress lines of a running Bash call.
    fn progress(&mut self, tool_id: &str, n: usize) {
        for k in 0..n {
            self.tick(500, 5_000);
            let mut partial = String::new();
            let bytes = self.t.rng.usize(40..=600);
            self.t.bash_output(&mut partial, bytes);
            self.open();
            self.out
                .push_str("\"type\":\"progress\",\"data\":{\"type\":\"bash_progress\",\"output\":");
            js(&mut self.out, &partial);
            self.out.push_str(",\"fullOutput\":");
            js(&mut self.out, &partial);
            let _ = write!(
                self.out,
                ",\"elapsedTimeSeconds\":{},\"totalLines\":{}}},\"toolUseID\":\"bash-progress-{k}\",\"parentToolUseID\":",
                k * 3 + 3,
                partial.lines().count()
            );
            js(&mut self.out, tool_id);
            self.close("");
        }
    }

    /// One API response (thinking?, text?, tool uses) and the tool results.
    /// Returns whether the turn ended (no tool call).
    pub fn assistant_turn(&mut self) -> bool {
        let msg_id = self.t.id("msg_01", 22);
        let req_id = self.t.id("req_011", 17);
        let mut block = String::new();
        if self.t.rng.chance(250) {
            let mut text = String::new();
            let n = self.t.rng.usize(20..=250);
            self.t.markdown(&mut text, n);
            block.push_str("{\"type\":\"thinking\",\"thinking\":");
            js(&mut block, &text);
            block.push_str(",\"signature\":\"");
            crate::text::alnum(&mut self.t.rng, &mut block, 300);
            block.push_str("\"}");
            self.assistant(&msg_id, &req_id, &block);
        }
        if self.t.rng.chance(650) {
            let mut text = String::new();
            // Mostly short, sometimes long.
            let n = self.t.rng.log_uniform(8, 700);
            self.t.markdown(&mut text, n);
            block.clear();
            block.push_str("{\"type\":\"text\",\"text\":");
            js(&mut block, &text);
            block.push('}');
            self.assistant(&msg_id, &req_id, &block);
        }
        let tools = match self.t.rng.usize(..10) {
            0..=2 => 0,
            3..=7 => 1,
            _ => self.t.rng.usize(2..=4),
        };
        let mut calls = Vec::new();
        for _ in 0..tools {
            let tool_id = self.t.id("toolu_01", 22);
            let (kind, input) = self.tool_input();
            block.clear();
            block.push_str("{\"type\":\"tool_use\",\"id\":");
            js(&mut block, &tool_id);
            block.push_str(",\"name\":");
            js(&mut block, kind);
            let _ = write!(block, ",\"input\":{input}}}");
            let line = self.assistant(&msg_id, &req_id, &block);
            calls.push((tool_id, kind, line));
        }
        for (tool_id, kind, line) in calls {
            if kind == "Bash" {
                let n = self.t.rng.usize(..4);
                self.progress(&tool_id, n);
            }
            self.tool_result(&tool_id, kind, &line);
        }
        tools == 0
    }

    /// A tool call: its name and its `input` object as JSON.
    fn tool_input(&mut self) -> (&'static str, String) {
        let mut s = String::new();
        let cwd = &self.spec.cwd;
        let t = &mut self.t;
        let kind = match t.rng.usize(..20) {
            0..=7 => {
                let cmd = match t.rng.usize(..6) {
                    0 => format!("cargo test {} -- --nocapture", t.ident()),
                    1 => format!("rg -n \"{}\" {}", t.ident(), t.rng.pick(TOP_DIRS)),
                    2 => "git status --short && git diff --stat".to_string(),
                    3 => format!("ls -la {}", t.rng.pick(TOP_DIRS)),
                    4 => "git log --oneline -20".to_string(),
                    _ => format!("cargo build --release 2>&1 | tail -{}", t.rng.u32(5..=80)),
                };
                let mut desc = String::new();
                t.sentence(&mut desc);
                s.push_str("{\"command\":");
                js(&mut s, &cmd);
                s.push_str(",\"description\":");
                js(&mut s, &desc);
                s.push('}');
                "Bash"
            }
            8..=12 => {
                s.push_str("{\"file_path\":");
                js(&mut s, &format!("{cwd}/{}", t.file()));
                s.push('}');
                "Read"
            }
            13..=16 => {
                let (mut old, mut new) = (String::new(), String::new());
                let n = t.rng.usize(1..=12);
                t.code(&mut old, n, 0);
                let n = t.rng.usize(1..=16);
                t.code(&mut new, n, 0);
                s.push_str("{\"replace_all\":false,\"file_path\":");
                js(&mut s, &format!("{cwd}/{}", t.file()));
                s.push_str(",\"old_string\":");
                js(&mut s, &old);
                s.push_str(",\"new_string\":");
                js(&mut s, &new);
                s.push('}');
                "Edit"
            }
            17..=18 => {
                let (p, d) = (t.ident(), t.rng.pick(TOP_DIRS));
                let _ = write!(
                    s,
                    "{{\"pattern\":\"{p}\",\"path\":\"{d}\",\"output_mode\":\"content\"}}"
                );
                "Grep"
            }
            _ => {
                let mut p = String::new();
                let n = t.rng.usize(40..=200);
                t.markdown(&mut p, n);
                s.push_str("{\"description\":\"Explore the codebase\",\"prompt\":");
                js(&mut s, &p);
                s.push('}');
                "Task"
            }
        };
        (kind, s)
    }

    /// The result of a tool call: what it printed (or its error), as the
    /// user line and as the structured `toolUseResult` duplicate.
    fn tool_result(&mut self, tool_id: &str, kind: &str, assistant_uuid: &str) {
        self.tick(100, 60_000);
        let p = self.spec.profile;
        let r = &mut self.t.rng;
        let error = r.chance(p.error_per_mille);
        let big = !error && r.chance(p.big_per_mille);
        let size = if big {
            r.log_uniform(30_000, 400_000)
        } else {
            r.log_uniform(p.out_min, p.out_max)
        };
        // Stay near the file's target (the output is written twice).
        let left = self.spec.target.saturating_sub(self.out.len());
        let size = size.min((left / 3).max(100));
        let (out, raw_file) = self.tool_output(kind, error, big, size);
        self.open();
        let o = &mut self.out;
        o.push_str(
            "\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"tool_use_id\":",
        );
        js(o, tool_id);
        o.push_str(",\"type\":\"tool_result\",\"content\":");
        if kind == "Task" {
            o.push_str("[{\"type\":\"text\",\"text\":");
            js(o, &out);
            o.push_str("}]");
        } else {
            js(o, &out);
        }
        if error {
            o.push_str(",\"is_error\":true");
        }
        o.push_str("}]}");
        let mut extra = String::from(",\"toolUseResult\":");
        self.structured(&mut extra, kind, error, &out, raw_file);
        extra.push_str(",\"sourceToolAssistantUUID\":");
        js(&mut extra, assistant_uuid);
        self.close(&extra);
    }

    /// What a tool of `kind` printed: `size` bytes or so, and for `Read`
    /// the file's raw text as well.
    fn tool_output(
        &mut self,
        kind: &str,
        error: bool,
        big: bool,
        size: usize,
    ) -> (String, Option<String>) {
        let t = &mut self.t;
        let mut out = String::new();
        if error {
            t.error_output(&mut out);
            return (out, None);
        }
        let mut raw_file = None;
        match kind {
            "Read" => {
                let mut raw = String::new();
                t.code(&mut raw, (size / 90).max(3), 0);
                for (i, l) in raw.lines().enumerate() {
                    let _ = writeln!(out, "{:>6}\u{2192}{l}", i + 1);
                }
                raw_file = Some(raw);
            }
            "Edit" => {
                let _ = writeln!(out, "The file {} has been updated. Here's the result of running `cat -n` on a snippet of the edited file:", t.file());
                let (n, start) = (t.rng.usize(5..=15), t.rng.usize(1..=800));
                t.code(&mut out, n, start);
            }
            "Grep" => {
                for _ in 0..(size / 30).max(1) {
                    out.push_str(t.file());
                    out.push('\n');
                }
            }
            "Task" => t.markdown(&mut out, size / 6),
            _ if big && t.rng.chance(150) => t.blob(&mut out, size),
            _ => t.bash_output(&mut out, size),
        }
        t.maybe_secret(&mut out);
        (out, raw_file)
    }

    /// The `toolUseResult` object Claude Code writes beside a result.
    fn structured(
        &mut self,
        extra: &mut String,
        kind: &str,
        error: bool,
        out: &str,
        raw: Option<String>,
    ) {
        if error {
            js(extra, &format!("Error: {out}"));
            return;
        }
        match (kind, raw) {
            ("Read", Some(raw)) => {
                extra.push_str("{\"type\":\"text\",\"file\":{\"filePath\":");
                js(extra, self.t.file());
                extra.push_str(",\"content\":");
                js(extra, &raw);
                let n = raw.lines().count();
                let _ = write!(
                    extra,
                    ",\"numLines\":{n},\"startLine\":1,\"totalLines\":{n}}}}}"
                );
            }
            ("Bash", _) => {
                extra.push_str("{\"stdout\":");
                js(extra, out);
                extra.push_str(",\"stderr\":\"\",\"interrupted\":false,\"isImage\":false}");
            }
            _ => {
                extra.push_str("{\"status\":\"completed\",\"content\":");
                js(extra, out);
                extra.push('}');
            }
        }
    }

    /// A `turn_duration` system line.
    pub fn system(&mut self) {
        self.tick(10, 500);
        self.open();
        let ms = self.t.rng.u32(..600_000);
        let _ = write!(
            self.out,
            "\"type\":\"system\",\"subtype\":\"turn_duration\",\"durationMs\":{ms},\"isMeta\":false"
        );
        self.close("");
    }

    /// A summary line naming the last line as its leaf.
    pub fn summary(&mut self) {
        let mut text = String::new();
        for i in 0..self.t.rng.usize(4..=9) {
            if i > 0 {
                text.push(' ');
            }
            text.push_str(&cap(self.t.english()));
        }
        self.out.push_str("{\"type\":\"summary\",\"summary\":");
        js(&mut self.out, &text);
        self.out.push_str(",\"leafUuid\":");
        let leaf = self.parent.clone().unwrap_or_default();
        js(&mut self.out, &leaf);
        self.out.push_str("}\n");
    }
}
