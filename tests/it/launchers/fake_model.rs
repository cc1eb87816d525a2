//! A fake model server on loopback that speaks just enough of each
//! launcher's API: Anthropic's Messages (Claude Code), OpenAI's Responses
//! (Codex) and Gemini's generateContent. It logs every request and answers
//! from the request alone: while fewer tool results are in the
//! conversation than the script has tool calls, it calls the next tool
//! (when the launcher offers it); then it answers with the script's text.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

/// What the fake model does in a conversation.
#[derive(Debug, Clone, Default)]
pub struct Script {
    /// recall's tools to call in turn (`recall`, `remember`), with their
    /// arguments.
    pub tools: Vec<(String, Value)>,
    /// The answer once the tools have been called.
    pub answer: String,
}

/// One request the launcher made.
#[derive(Debug, Clone)]
pub struct Logged {
    pub method: String,
    pub path: String,
    pub body: Value,
}

impl Logged {
    /// The request body as text, for looking for what reached the model.
    pub fn text(&self) -> String {
        self.body.to_string()
    }
}

#[derive(Default)]
struct State {
    script: Script,
    log: Vec<Logged>,
}

/// A running fake model; stopped when dropped.
pub struct FakeModel {
    pub addr: SocketAddr,
    state: Arc<Mutex<State>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FakeModel {
    pub fn start(script: Script) -> FakeModel {
        let state = Arc::new(Mutex::new(State {
            script,
            log: Vec::new(),
        }));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (ready_tx, ready) = std::sync::mpsc::channel();
        let shared = state.clone();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                ready_tx.send(listener.local_addr().unwrap()).unwrap();
                let app = axum::Router::new().fallback(
                    move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
                        let state = shared.clone();
                        async move { handle(&state, method, uri, headers, body) }
                    },
                );
                axum::serve(listener, app)
                    .with_graceful_shutdown(async {
                        let _ = stopped.await;
                    })
                    .await
                    .unwrap();
            });
        });
        let addr = ready.recv().unwrap();
        FakeModel {
            addr,
            state,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Logged> {
        self.state.lock().unwrap().log.clone()
    }

    /// The model requests (not preconnects or token counts).
    pub fn model_requests(&self) -> Vec<Logged> {
        self.requests()
            .into_iter()
            .filter(|r| r.method == "POST" && !r.body.is_null())
            .filter(|r| {
                let p = r.path.split('?').next().unwrap_or("");
                p.ends_with("/messages")
                    || p.ends_with("/responses")
                    || p.ends_with(":generateContent")
                    || p.ends_with(":streamGenerateContent")
            })
            .collect()
    }
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn handle(
    state: &Mutex<State>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let path = uri.path().to_string();
    let script = {
        let mut s = state.lock().unwrap();
        s.log.push(Logged {
            method: method.to_string(),
            path: uri.to_string(),
            body: body.clone(),
        });
        s.script.clone()
    };
    if method != Method::POST {
        return json_response(json!({}));
    }
    if path.ends_with("/count_tokens") {
        return json_response(json!({"input_tokens": 42}));
    }
    if path.starts_with("/v1/messages") {
        return anthropic::answer(&script, &body);
    }
    if path.ends_with("/responses") {
        let compaction = headers
            .get("x-codex-turn-metadata")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|m| m.contains("\"compaction\""));
        return openai::answer(&script, &body, compaction);
    }
    if path.contains(":streamGenerateContent") || path.contains(":generateContent") {
        return gemini::answer(&script, &body, path.contains(":stream"));
    }
    (StatusCode::NOT_FOUND, "the fake model does not serve this").into_response()
}

fn json_response(v: Value) -> Response {
    axum::Json(v).into_response()
}

/// `events` as a server-sent event stream: `event: NAME` lines when named.
fn sse(events: &[(Option<&str>, Value)]) -> Response {
    let mut out = String::new();
    for (name, data) in events {
        if let Some(n) = name {
            out.push_str(&format!("event: {n}\n"));
        }
        out.push_str(&format!("data: {data}\n\n"));
    }
    (
        [
            ("content-type", "text/event-stream"),
            ("cache-control", "no-cache"),
        ],
        out,
    )
        .into_response()
}

/// The offered tool whose name ends with `tool` in recall's server, as
/// the launcher names it.
fn offered<'a>(names: impl Iterator<Item = &'a str>, tool: &str) -> Option<String> {
    names
        .filter(|n| n.contains("recall"))
        .find(|n| {
            *n == tool || n.ends_with(&format!("__{tool}")) || n.ends_with(&format!("_{tool}"))
        })
        .map(str::to_owned)
}

/// The next scripted call, given how many tool results the conversation
/// holds, and the names the launcher offers.
fn next_call<'a>(
    script: &Script,
    results: usize,
    names: impl Iterator<Item = &'a str>,
) -> Option<(String, Value)> {
    let (tool, args) = script.tools.get(results)?;
    offered(names, tool).map(|name| (name, args.clone()))
}

mod anthropic {
    use super::*;

    pub fn answer(script: &Script, body: &Value) -> Response {
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        let results = messages
            .iter()
            .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
            .filter(|b| b["type"] == "tool_result")
            .count();
        let tools = body["tools"].as_array().cloned().unwrap_or_default();
        let names = tools.iter().filter_map(|t| t["name"].as_str());
        let model = body["model"].as_str().unwrap_or("fake");
        let call = next_call(script, results, names);
        if body["stream"] != json!(true) {
            let content = match &call {
                Some((name, args)) => {
                    json!([{"type": "tool_use", "id": format!("toolu_{results}"), "name": name, "input": args}])
                }
                None => json!([{"type": "text", "text": script.answer}]),
            };
            return json_response(json!({
                "id": "msg_fake", "type": "message", "role": "assistant", "model": model,
                "content": content,
                "stop_reason": if call.is_some() { "tool_use" } else { "end_turn" },
                "usage": {"input_tokens": 10, "output_tokens": 5}
            }));
        }
        let (block, delta, stop) = match &call {
            Some((name, args)) => (
                json!({"type": "tool_use", "id": format!("toolu_{results}"), "name": name, "input": {}}),
                json!({"type": "input_json_delta", "partial_json": args.to_string()}),
                "tool_use",
            ),
            None => (
                json!({"type": "text", "text": ""}),
                json!({"type": "text_delta", "text": script.answer}),
                "end_turn",
            ),
        };
        sse(&[
            (
                Some("message_start"),
                json!({"type": "message_start", "message": {
                    "id": format!("msg_fake_{results}"), "type": "message", "role": "assistant",
                    "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
                    "usage": {"input_tokens": 10, "output_tokens": 1,
                              "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}}),
            ),
            (
                Some("content_block_start"),
                json!({"type": "content_block_start", "index": 0, "content_block": block}),
            ),
            (
                Some("content_block_delta"),
                json!({"type": "content_block_delta", "index": 0, "delta": delta}),
            ),
            (
                Some("content_block_stop"),
                json!({"type": "content_block_stop", "index": 0}),
            ),
            (
                Some("message_delta"),
                json!({"type": "message_delta",
                       "delta": {"stop_reason": stop, "stop_sequence": null},
                       "usage": {"output_tokens": 5}}),
            ),
            (Some("message_stop"), json!({"type": "message_stop"})),
        ])
    }
}

mod openai {
    use super::*;

    pub fn answer(script: &Script, body: &Value, compaction: bool) -> Response {
        let input = body["input"].as_array().cloned().unwrap_or_default();
        let results = input
            .iter()
            .filter(|i| i["type"] == "function_call_output")
            .count();
        // Codex offers an MCP server's tools as a namespace.
        let mut names = Vec::new();
        for t in body["tools"].as_array().into_iter().flatten() {
            match (t["type"].as_str(), t["name"].as_str()) {
                (Some("namespace"), Some(ns)) => {
                    for inner in t["tools"].as_array().into_iter().flatten() {
                        if let Some(n) = inner["name"].as_str() {
                            names.push(format!("{ns}__{n}"));
                        }
                    }
                }
                (_, Some(n)) => names.push(n.to_owned()),
                _ => {}
            }
        }
        let call = if compaction {
            None
        } else {
            next_call(script, results, names.iter().map(String::as_str))
        };
        let item = match &call {
            Some((name, args)) => {
                let (ns, tool) = name.rsplit_once("__").unwrap_or(("", name));
                json!({"type": "function_call", "id": format!("fc_{results}"),
                       "call_id": format!("call_{results}"), "namespace": ns, "name": tool,
                       "arguments": args.to_string(), "status": "completed"})
            }
            None => {
                let text = if compaction {
                    "Summary of the work so far."
                } else {
                    script.answer.as_str()
                };
                json!({"type": "message", "id": "msg_fake", "role": "assistant",
                       "status": "completed",
                       "content": [{"type": "output_text", "text": text, "annotations": []}]})
            }
        };
        let mut added = item.clone();
        if added["type"] == "message" {
            added["content"] = json!([]);
            added["status"] = json!("in_progress");
        }
        sse(&[
            (
                Some("response.created"),
                json!({"type": "response.created",
                       "response": {"id": "resp_fake", "status": "in_progress"}}),
            ),
            (
                Some("response.output_item.added"),
                json!({"type": "response.output_item.added", "output_index": 0, "item": added}),
            ),
            (
                Some("response.output_item.done"),
                json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
            ),
            (
                Some("response.completed"),
                json!({"type": "response.completed", "response": {
                    "id": "resp_fake", "status": "completed",
                    "usage": {"input_tokens": 130, "input_tokens_details": {"cached_tokens": 0},
                              "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 0},
                              "total_tokens": 150}}}),
            ),
        ])
    }
}

mod gemini {
    use super::*;

    pub fn answer(script: &Script, body: &Value, stream: bool) -> Response {
        let contents = body["contents"].as_array().cloned().unwrap_or_default();
        let results = contents
            .iter()
            .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
            .filter(|p| p.get("functionResponse").is_some())
            .count();
        let names: Vec<String> = body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|t| {
                t["functionDeclarations"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .filter_map(|f| f["name"].as_str().map(str::to_owned))
            .collect();
        // A call that is not streamed is Gemini CLI's router, asking how
        // hard the prompt is (0.61) or which model to use, as JSON.
        let call = if stream {
            next_call(script, results, names.iter().map(String::as_str))
        } else {
            None
        };
        let config = body["generationConfig"].to_string();
        let part = match (&call, stream) {
            (Some((name, args)), _) => json!({"functionCall": {"name": name, "args": args}}),
            (None, true) => json!({"text": script.answer}),
            (None, false) if config.contains("complexity_score") => json!({"text": json!({
                "complexity_reasoning": "a simple request", "complexity_score": 10}).to_string()}),
            (None, false) => json!({"text": json!({
                "reasoning": "a simple request", "model_choice": "flash"}).to_string()}),
        };
        let chunk = json!({
            "candidates": [{"content": {"role": "model", "parts": [part]},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                              "totalTokenCount": 15},
            "modelVersion": "fake"
        });
        if stream {
            sse(&[(None, chunk)])
        } else {
            json_response(chunk)
        }
    }
}
