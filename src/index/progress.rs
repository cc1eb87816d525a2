//! A progress bar on a TTY (indicatif), nothing otherwise.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Batch progress: a bar on stderr when it is a terminal, silent otherwise.
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A bar of `len` steps, drawn only when `enabled` and stderr is a TTY.
    pub fn new(len: u64, what: &str, enabled: bool) -> Progress {
        use std::io::IsTerminal;
        if !enabled || !std::io::stderr().is_terminal() {
            return Progress { bar: None };
        }
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template(&format!(
            "{{spinner}} {what} {{pos}}/{{len}} [{{bar:30}}] {{per_sec}} {{msg}}"
        ))
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        Progress { bar: Some(bar) }
    }

    /// A bar counting bytes (MB/s), with a message for files and chunks.
    pub fn bytes(total: u64, enabled: bool) -> Progress {
        use std::io::IsTerminal;
        if !enabled || !std::io::stderr().is_terminal() {
            return Progress { bar: None };
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template(
            "{spinner} indexing {bytes}/{total_bytes} [{bar:30}] {bytes_per_sec} {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        Progress { bar: Some(bar) }
    }

    /// A silent progress.
    pub fn hidden() -> Progress {
        Progress { bar: None }
    }

    pub fn inc(&self, n: u64) {
        if let Some(b) = &self.bar {
            b.inc(n);
        }
    }

    pub fn set_message(&self, msg: String) {
        if let Some(b) = &self.bar {
            b.set_message(msg);
        }
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
