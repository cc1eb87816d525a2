//! `recall mcp`'s stdio transport: rmcp's, with a JSON-RPC parse error
//! (-32700) for a line that is not JSON.
//!
//! rmcp drops such a line with a debug log (rust-sdk issue 938: the other
//! SDKs ignore unparsable input, and answering it could start an error storm
//! with a peer that echoes). A client that sent a broken line then waits for
//! an answer that never comes, and JSON-RPC 2.0 asks for a parse error. So a
//! screen sits between stdin and rmcp's reader: it passes every line that is
//! JSON through untouched and turns each other line into a parse error,
//! which goes out through rmcp's own writer so it never interleaves with a
//! response. What a JSON line means (its shape, id and method) stays rmcp's
//! to judge.

use std::future::Future;
use std::io;

use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::async_rw::{AsyncRwTransport, DEFAULT_MAX_LINE_LENGTH};
use rmcp::transport::Transport;
use rmcp::{ErrorData, RoleServer};
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt,
};
use tokio::io::{BufReader, DuplexStream, Stdout};
use tokio::sync::mpsc;

/// How much of the screened input may wait for rmcp to read it.
const PIPE_BYTES: usize = 64 * 1024;

/// rmcp's transport over stdin (screened) and stdout.
pub struct Screened {
    inner: AsyncRwTransport<RoleServer, DuplexStream, Stdout>,
    /// Why each refused line was refused, in order.
    refused: mpsc::UnboundedReceiver<String>,
}

/// The transport for `recall mcp`. Starts the screen on the current tokio
/// runtime; it ends when stdin does.
pub fn transport() -> Screened {
    let (to_rmcp, from_screen) = tokio::io::duplex(PIPE_BYTES);
    let (tx, refused) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        if let Err(e) = screen(tokio::io::stdin(), to_rmcp, tx).await {
            tracing::error!("cannot read stdin: {e}");
        }
    });
    Screened {
        inner: AsyncRwTransport::new_server(from_screen, tokio::io::stdout()),
        refused,
    }
}

/// Copy `input` to `output` line by line, keeping back each line that is not
/// JSON and sending why on `refused`. A line longer than rmcp would read is
/// skipped to its end and refused too.
async fn screen(
    input: impl AsyncRead + Unpin,
    mut output: impl AsyncWrite + Unpin,
    refused: mpsc::UnboundedSender<String>,
) -> io::Result<()> {
    let mut input = BufReader::new(input);
    let mut line = Vec::new();
    loop {
        line.clear();
        let limit = DEFAULT_MAX_LINE_LENGTH as u64;
        let n = (&mut input)
            .take(limit)
            .read_until(b'\n', &mut line)
            .await?;
        if n == 0 {
            return Ok(());
        }
        let verdict = if n as u64 == limit && !line.ends_with(b"\n") {
            skip_line(&mut input).await?;
            Err(format!(
                "the line is not JSON: it is longer than {} MiB",
                DEFAULT_MAX_LINE_LENGTH >> 20
            ))
        } else {
            judge(&line)
        };
        match verdict {
            Ok(()) => output.write_all(&line).await?,
            Err(why) => {
                if refused.send(why).is_err() {
                    // The transport has gone: nobody reads either way.
                    return Ok(());
                }
            }
        }
    }
}

/// Consume input up to and including the next newline.
async fn skip_line(input: &mut (impl AsyncBufRead + Unpin)) -> io::Result<()> {
    loop {
        let buf = input.fill_buf().await?;
        if buf.is_empty() {
            return Ok(());
        }
        match buf.iter().position(|&b| b == b'\n') {
            Some(i) => {
                input.consume(i + 1);
                return Ok(());
            }
            None => {
                let n = buf.len();
                input.consume(n);
            }
        }
    }
}

/// Whether one line (with its newline) is JSON; blank lines pass, as rmcp
/// skips them. A UTF-8 byte order mark is allowed, as rmcp allows it.
fn judge(line: &[u8]) -> Result<(), String> {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(());
    }
    let text = std::str::from_utf8(line)
        .map_err(|e| format!("the line is not JSON: it is not UTF-8 ({e})"))?;
    serde_json::from_str::<serde::de::IgnoredAny>(text)
        .map(drop)
        .map_err(|e| format!("the line is not JSON ({e})"))
}

impl Transport<RoleServer> for Screened {
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        self.inner.send(item)
    }

    /// rmcp polls this inside a `select!` and drops it whenever something
    /// else is ready first, so nothing here may be lost at an `.await`: a
    /// refused line's answer is taken off the channel and handed to a task
    /// of its own in one step, and rmcp's reader keeps a partial line.
    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            tokio::select! {
                // A refused line is answered before anything read after it.
                biased;
                Some(why) = self.refused.recv() => {
                    let error = ErrorData::parse_error(
                        format!("parse error: {why}; send one JSON-RPC message per line, as UTF-8 JSON"),
                        None,
                    );
                    let send = self.inner.send(TxJsonRpcMessage::<RoleServer>::error(error, None));
                    tokio::spawn(async move {
                        if let Err(e) = send.await {
                            tracing::debug!("cannot answer a line that is not JSON: {e}");
                        }
                    });
                }
                message = self.inner.receive() => return message,
            }
        }
    }

    async fn close(&mut self) -> Result<(), io::Error> {
        self.inner.close().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lines_pass_and_others_say_why_not() {
        assert_eq!(judge(b"{\"jsonrpc\": \"2.0\"}\n"), Ok(()));
        assert_eq!(judge(b"\xEF\xBB\xBF[1, 2]\r\n"), Ok(()));
        assert_eq!(judge(b"  \r\n"), Ok(()));
        assert_eq!(judge(b"{\"not\": \"a message\"}"), Ok(()));
        let e = judge(b"hello\n").unwrap_err();
        assert!(e.starts_with("the line is not JSON (expected value"), "{e}");
        let e = judge(b"{\"id\": 1,\n").unwrap_err();
        assert!(e.starts_with("the line is not JSON ("), "{e}");
        let e = judge(b"{} {}\n").unwrap_err();
        assert!(e.contains("trailing characters"), "{e}");
        let e = judge(b"\"\xff\"\n").unwrap_err();
        assert!(
            e.starts_with("the line is not JSON: it is not UTF-8"),
            "{e}"
        );
    }

    #[tokio::test]
    async fn the_screen_keeps_back_what_is_not_json() {
        let input: &[u8] = b"{\"a\": 1}\nnot json\n\n[2]";
        let mut out = Vec::new();
        let (tx, mut rx) = mpsc::unbounded_channel();
        screen(input, &mut out, tx).await.unwrap();
        assert_eq!(out, b"{\"a\": 1}\n\n[2]");
        assert!(rx.recv().await.unwrap().starts_with("the line is not JSON"));
        assert!(rx.recv().await.is_none());
    }
}
