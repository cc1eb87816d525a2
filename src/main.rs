//! The `recall` binary: parse, log, run, map the result to an exit code.

use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Log output a process writes to a stderr nobody may read (a hook's, an
/// MCP server's) at the default level: past this, lines are dropped, so a
/// client that never drains the pipe (64 KiB) cannot stall the process.
const STDERR_LOG_CAP: usize = 16 * 1024;

/// Bytes of log written to stderr so far.
static LOGGED: AtomicUsize = AtomicUsize::new(0);

/// stderr for log lines, capped at [`STDERR_LOG_CAP`] bytes when `capped`.
struct LogStderr {
    capped: bool,
}

/// A log line that cannot be written (a client closed our stderr) is
/// dropped, never an error: tracing reports a writer's error with
/// `eprintln!`, which panics on a closed stderr, and the panic would end
/// the task that logged, such as the MCP handler about to answer a bad
/// request, leaving its client waiting forever.
impl Write for LogStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.capped {
            let before = LOGGED.fetch_add(buf.len(), Ordering::Relaxed);
            if before >= STDERR_LOG_CAP {
                return Ok(buf.len());
            }
            if before + buf.len() > STDERR_LOG_CAP {
                let mut err = std::io::stderr().lock();
                let _ = err.write_all(buf).and_then(|()| {
                    err.write_all(b"recall: further log lines dropped (16 KiB written; RECALL_LOG=warn shows them all)\n")
                });
                return Ok(buf.len());
            }
        }
        let _ = std::io::stderr().write_all(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

fn main() -> ExitCode {
    // SAFETY: the first statement of `main`: no other thread exists yet.
    unsafe { recall::store::configure_process() };
    // A level the user chose is theirs in full; the default one, to a
    // stderr that is not a terminal, is capped.
    let chosen = std::env::var_os("RECALL_LOG").is_some() || std::env::var_os("RUST_LOG").is_some();
    let capped = !chosen && !std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing_subscriber::fmt()
        .with_writer(move || LogStderr { capped })
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("RECALL_LOG")
                .or_else(|_| tracing_subscriber::EnvFilter::try_from_default_env())
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_ansi(
            std::io::IsTerminal::is_terminal(&std::io::stderr())
                && std::env::var_os("NO_COLOR").is_none(),
        )
        .with_target(false)
        // No timestamps on lines (`without_time` would drop span timings too).
        .with_timer(())
        // Each phase is a span; at debug level its close line gives the
        // time it took (`time.busy`).
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .init();
    // Test builds only (the dev-dependency turns fail points on): the
    // `FAILPOINTS` variable stops a run where a crash would.
    let _failpoints = fail::has_failpoints().then(fail::FailScenario::setup);
    match recall::cli::run() {
        Ok(code) => ExitCode::from(code),
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "recall: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
