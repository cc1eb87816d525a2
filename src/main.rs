//! The `recall` binary: parse, log, run, map the result to an exit code.

use std::process::ExitCode;

fn main() -> ExitCode {
    // SAFETY: the first statement of `main`: no other thread exists yet.
    unsafe { recall::store::configure_process() };
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
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
            eprintln!("recall: {e:#}");
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
