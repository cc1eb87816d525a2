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
//! to judge, with one exception: rmcp answers a `tools/call` or
//! `resources/read` whose params it cannot read (arguments that are not an
//! object, no uri) with "method not found" (-32601) and the method's name
//! alone, which tells the agent the method does not exist. The screen
//! answers those with invalid params (-32602), the request's id and what
//! to send. It also answers a message with an id but no method (nor a
//! result or an error, as a response to the server would have), which rmcp
//! refuses as an invalid request without the id, so the client never learns
//! which of its requests failed.

use std::future::Future;
use std::io;

use rmcp::model::{NumberOrString, RequestId};
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
    refused: mpsc::UnboundedReceiver<Refused>,
}

/// Why a line was kept back from rmcp.
#[derive(Debug, PartialEq)]
enum Refused {
    /// Not JSON: a parse error (-32700), with no id.
    NotJson(String),
    /// A request whose params cannot be read: invalid params (-32602),
    /// to its id.
    BadParams { id: RequestId, why: String },
    /// A message with an id but no method, result or error: an invalid
    /// request (-32600), to its id.
    NoMethod { id: RequestId },
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
    refused: mpsc::UnboundedSender<Refused>,
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
        // A string cut inside an emoji is sent as a lone `\ud83d`, which
        // JSON's grammar allows and serde (rmcp's too) refuses: mended to
        // U+FFFD, the request is answered instead of failing without its
        // id, which leaves the client waiting.
        let line = crate::ingest::surrogate::mend(&line);
        let verdict = if n as u64 == limit && !line.ends_with(b"\n") {
            skip_line(&mut input).await?;
            Err(Refused::NotJson(format!(
                "the line is not JSON: it is longer than {} MiB",
                DEFAULT_MAX_LINE_LENGTH >> 20
            )))
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

/// Whether one line (with its newline) is JSON, and not a request whose
/// params rmcp would misreport (see the module doc); blank lines pass, as
/// rmcp skips them. A UTF-8 byte order mark is allowed, as rmcp allows it.
fn judge(line: &[u8]) -> Result<(), Refused> {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(());
    }
    let text = std::str::from_utf8(line)
        .map_err(|e| Refused::NotJson(format!("the line is not JSON: it is not UTF-8 ({e})")))?;
    let message: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| Refused::NotJson(format!("the line is not JSON ({e})")))?;
    let id = match message.get("id") {
        Some(serde_json::Value::String(s)) => NumberOrString::String(s.as_str().into()),
        Some(n) => match n.as_i64() {
            Some(n) => NumberOrString::Number(n),
            None => return Ok(()),
        },
        None => return Ok(()),
    };
    let Some(method) = message.get("method").and_then(serde_json::Value::as_str) else {
        // A response to a request of the server's has a result or an error.
        return match message.get("result").or(message.get("error")) {
            Some(_) => Ok(()),
            None => Err(Refused::NoMethod { id }),
        };
    };
    match bad_params(method, message.get("params")) {
        Some(why) => Err(Refused::BadParams { id, why }),
        None => Ok(()),
    }
}

/// What is wrong with the params of a request rmcp would answer with
/// "method not found".
fn bad_params(method: &str, params: Option<&serde_json::Value>) -> Option<String> {
    use serde_json::Value;
    let params = params.and_then(Value::as_object);
    match method {
        "tools/call" => {
            let Some(p) = params.filter(|p| p.get("name").is_some_and(Value::is_string)) else {
                return Some(
                    "tools/call needs params {\"name\": TOOL, \"arguments\": {...}}: the tool's name is missing or not a string".into(),
                );
            };
            match p.get("arguments") {
                None | Some(Value::Null | Value::Object(_)) => None,
                Some(_) => Some(
                    "tools/call's params.arguments must be an object of the tool's arguments, such as {\"query\": \"deploy\"}".into(),
                ),
            }
        }
        "resources/read" => {
            let uri = params
                .and_then(|p| p.get("uri"))
                .is_some_and(Value::is_string);
            (!uri).then(|| {
                "resources/read needs params {\"uri\": URI}, such as memory://summary or memory://records/ID".into()
            })
        }
        _ => None,
    }
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
                Some(refused) = self.refused.recv() => {
                    let (error, id) = match refused {
                        Refused::NotJson(why) => (ErrorData::parse_error(
                            format!("parse error: {why}; send one JSON-RPC message per line, as UTF-8 JSON"),
                            None,
                        ), None),
                        Refused::BadParams { id, why } => (ErrorData::invalid_params(why, None), Some(id)),
                        Refused::NoMethod { id } => (ErrorData::invalid_request(
                            "invalid request: no method; a request is {\"jsonrpc\": \"2.0\", \"id\": ID, \"method\": NAME, \"params\": {...}}",
                            None,
                        ), Some(id)),
                    };
                    let send = self.inner.send(TxJsonRpcMessage::<RoleServer>::error(error, id));
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
        let not_json = |line: &[u8]| match judge(line) {
            Err(Refused::NotJson(e)) => e,
            other => panic!("{other:?}"),
        };
        let e = not_json(b"hello\n");
        assert!(e.starts_with("the line is not JSON (expected value"), "{e}");
        let e = not_json(b"{\"id\": 1,\n");
        assert!(e.starts_with("the line is not JSON ("), "{e}");
        let e = not_json(b"{} {}\n");
        assert!(e.contains("trailing characters"), "{e}");
        let e = not_json(b"\"\xff\"\n");
        assert!(
            e.starts_with("the line is not JSON: it is not UTF-8"),
            "{e}"
        );
    }

    /// Regression: rmcp answered these with -32601 "tools/call", as if
    /// the method did not exist.
    #[test]
    fn requests_whose_params_rmcp_cannot_read_say_what_to_send() {
        let bad = |line: &str| match judge(line.as_bytes()) {
            Err(Refused::BadParams { id, why }) => (id, why),
            other => panic!("{line}: {other:?}"),
        };
        let (id, why) = bad(
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"list","arguments":"x"}}"#,
        );
        assert_eq!(id, NumberOrString::Number(7));
        assert!(why.contains("arguments must be an object"), "{why}");
        let (id, why) = bad(r#"{"jsonrpc":"2.0","id":"r1","method":"resources/read","params":{}}"#);
        assert_eq!(id, NumberOrString::String("r1".into()));
        assert!(why.contains("memory://summary"), "{why}");
        let (_, why) =
            bad(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}"#);
        assert!(why.contains("name"), "{why}");
        for fine in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"memory://summary"}}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"no"}}"#,
        ] {
            assert_eq!(judge(fine.as_bytes()), Ok(()), "{fine}");
        }
    }

    /// Regression: rmcp answered these -32600 without the id.
    #[test]
    fn a_request_without_a_method_is_answered_to_its_id() {
        for (line, want) in [
            (r#"{"jsonrpc":"2.0","id":4}"#, NumberOrString::Number(4)),
            (
                r#"{"jsonrpc":"2.0","id":"q","method":5}"#,
                NumberOrString::String("q".into()),
            ),
        ] {
            match judge(line.as_bytes()) {
                Err(Refused::NoMethod { id }) => assert_eq!(id, want, "{line}"),
                other => panic!("{line}: {other:?}"),
            }
        }
    }

    #[tokio::test]
    async fn the_screen_keeps_back_what_is_not_json() {
        let input: &[u8] = b"{\"a\": 1}\nnot json\n\n[2]";
        let mut out = Vec::new();
        let (tx, mut rx) = mpsc::unbounded_channel();
        screen(input, &mut out, tx).await.unwrap();
        assert_eq!(out, b"{\"a\": 1}\n\n[2]");
        let Some(Refused::NotJson(why)) = rx.recv().await else {
            panic!("not refused")
        };
        assert!(why.starts_with("the line is not JSON"), "{why}");
        assert!(rx.recv().await.is_none());
    }

    /// Regression (review, stop 62): a request whose string held a lone
    /// UTF-16 surrogate (an emoji cut in half) got a parse error without
    /// its id, so the client waited for an answer that never came.
    #[tokio::test]
    async fn r_a_lone_surrogate_is_mended_and_the_request_passes() {
        let input: &[u8] =
            b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\",\"params\":{\"q\":\"tabs \\ud83d\"}}\n";
        let mut out = Vec::new();
        let (tx, mut rx) = mpsc::unbounded_channel();
        screen(input, &mut out, tx).await.unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["params"]["q"], "tabs \u{fffd}");
        assert!(rx.recv().await.is_none());
    }
}
