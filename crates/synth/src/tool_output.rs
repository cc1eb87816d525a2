//! What tools print in a coding agent's transcript: test runs, grep hits,
//! directory listings, git logs, compiler output and errors, big blobs of
//! base64 or minified JSON, and now and then a credential-shaped string
//! (so the secret scanner has work on every corpus).

use std::fmt::Write as _;

use crate::text::{alnum, hex};
use crate::words::{NOUNS, PROJECTS};
use crate::{Draw, Text};

impl Text<'_> {
    /// Shell output of about `bytes` bytes, in one of six shapes.
    pub fn bash_output(&mut self, s: &mut String, bytes: usize) {
        let end = s.len() + bytes;
        match self.rng.usize(..6) {
            0 => self.test_run(s, bytes, end),
            1 => {
                while s.len() < end {
                    let (f, l) = (self.file(), self.rng.usize(1..=2000));
                    let _ = write!(s, "{f}:{l}:");
                    self.code_line(s, 1);
                    s.push('\n');
                }
            }
            2 => {
                while s.len() < end {
                    let r = &mut self.rng;
                    let _ = write!(
                        s,
                        "-rw-r--r--  1 dev dev {:>7} Jan {:>2} 1{}:{:02} ",
                        r.u32(..200_000),
                        r.u32(1..=31),
                        r.u32(..10),
                        r.u32(..60)
                    );
                    s.push_str(self.file());
                    s.push('\n');
                }
            }
            3 => {
                while s.len() < end {
                    hex(&mut self.rng, s, 7);
                    s.push(' ');
                    self.sentence(s);
                    s.push('\n');
                }
            }
            4 => self.build_log(s, end),
            _ => {
                while s.len() < end {
                    self.sentence(s);
                    s.push('\n');
                }
            }
        }
    }

    /// `cargo test` output up to `end`.
    fn test_run(&mut self, s: &mut String, bytes: usize, end: usize) {
        let n = (bytes / 45).max(1);
        let _ = writeln!(s, "running {n} tests");
        while s.len() < end {
            let ok = if self.rng.chance(30) { "FAILED" } else { "ok" };
            let (a, b) = (self.rng.pick(&NOUNS), self.rng.pick(&NOUNS));
            let _ = writeln!(s, "test {a}::{b}::{} ... {ok}", self.ident());
        }
        let _ = write!(
            s,
            "\ntest result: ok. {n} passed; 0 failed; 0 ignored; finished in {}.{:02}s",
            self.rng.u32(..60),
            self.rng.u32(..100)
        );
    }

    /// `cargo build` output up to `end`, with a warning now and then.
    fn build_log(&mut self, s: &mut String, end: usize) {
        while s.len() < end {
            let (a, b) = (self.rng.pick(&NOUNS), self.rng.pick(&NOUNS));
            let (x, y) = (self.rng.u32(..30), self.rng.u32(..20));
            let _ = writeln!(s, "   Compiling {a}-{b} v0.{x}.{y}");
            if self.rng.chance(100) {
                let (i, f) = (self.ident(), self.file());
                let (l, c) = (self.rng.u32(1..=900), self.rng.u32(1..=80));
                let _ = write!(s, "warning: unused variable: `{i}`\n  --> {f}:{l}:{c}\n");
            }
        }
        let _ = write!(
            s,
            "    Finished `release` profile [optimized] target(s) in {}.{:02}s",
            self.rng.u32(..200),
            self.rng.u32(..100)
        );
    }

    /// A failed command: an exit code and one to four compiler errors.
    pub fn error_output(&mut self, s: &mut String) {
        let _ = writeln!(s, "Exit code {}", self.rng.pick(&[1, 2, 101, 127]));
        for _ in 0..self.rng.usize(1..=4) {
            let _ = write!(s, "error[E0{}]: ", self.rng.u32(100..=799));
            self.sentence(s);
            let f = self.file();
            let (l, c) = (self.rng.u32(1..=900), self.rng.u32(1..=80));
            let _ = write!(s, "\n  --> {f}:{l}:{c}\n   |\n{l:>3}| ");
            self.code_line(s, 0);
            s.push_str("\n   |     ^^^^^^ ");
            self.sentence(s);
            s.push_str("\n\n");
        }
        let _ = write!(
            s,
            "error: could not compile `{}` due to previous error",
            self.rng.pick(PROJECTS)
        );
    }

    /// A big, noisy blob of about `bytes` bytes: base64 or minified JSON.
    pub fn blob(&mut self, s: &mut String, bytes: usize) {
        if self.rng.chance(500) {
            const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
            for i in 0..bytes {
                if i > 0 && i % 76 == 0 {
                    s.push('\n');
                }
                s.push(char::from(self.rng.pick(B64)));
            }
            return;
        }
        s.push('{');
        let end = s.len() + bytes;
        while s.len() < end {
            let i = self.ident();
            let (a, b) = (self.rng.pick(&NOUNS), self.rng.pick(&NOUNS));
            let n = self.rng.u32(..1 << 20);
            let _ = write!(s, "\"{i}\":{{\"{a}\":{n},\"{b}\":\"");
            hex(&mut self.rng, s, 16);
            s.push_str("\"},");
        }
        s.push_str("\"end\":0}");
    }

    /// Four times in a thousand, a credential-shaped string on a line of
    /// its own: an AWS key id, a GitHub token or a database URL password.
    pub fn maybe_secret(&mut self, s: &mut String) {
        if !self.rng.chance(4) {
            return;
        }
        match self.rng.usize(..3) {
            0 => {
                s.push_str("\nexport AWS_ACCESS_KEY_ID=AKIA");
                const U: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
                for _ in 0..16 {
                    s.push(char::from(self.rng.pick(U)));
                }
            }
            1 => {
                s.push_str("\nremote: using token ghp_");
                alnum(&mut self.rng, s, 36);
            }
            _ => {
                s.push_str("\nDATABASE_URL=postgres://app:");
                alnum(&mut self.rng, s, 14);
                s.push_str("@db.internal:5432/app");
            }
        }
        s.push('\n');
    }
}
