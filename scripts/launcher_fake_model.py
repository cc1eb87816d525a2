#!/usr/bin/env python3
"""A fake model on loopback for scripts/bench-launchers.sh (stdlib only).

    python3 scripts/launcher_fake_model.py --port-file F --log L [--text T]

Answers at once, with the text T, the three APIs the launchers speak:
  Claude Code  POST /v1/messages              Anthropic Messages, SSE
  Codex        POST /v1/responses             OpenAI Responses, SSE
  Gemini CLI   POST /v1beta/models/M:generateContent         (router, JSON)
               POST /v1beta/models/M:streamGenerateContent   (turn, SSE)
Anything else (Claude Code's HEAD / preconnect, count_tokens) gets 200 {}.

Every request is appended to L as one JSON line {"method", "path", "body"}
(body as sent, text). L is opened per request, so the caller can move it
aside between runs and get one log per run.
"""
import argparse
import json
import os
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ARGS = None


def sse(event, data):
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n"


def anthropic(body, text):
    """Claude Code: one text block, end_turn."""
    usage = {"input_tokens": 10, "output_tokens": 5,
             "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    message = {"id": "msg_" + uuid.uuid4().hex[:24], "type": "message", "role": "assistant",
               "model": body.get("model", "fake"), "stop_sequence": None}
    if not body.get("stream"):
        return "application/json", json.dumps({
            **message, "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn", "usage": usage})
    return "text/event-stream", "".join([
        sse("message_start", {"type": "message_start", "message": {
            **message, "content": [], "stop_reason": None, "usage": usage}}),
        sse("content_block_start", {"type": "content_block_start", "index": 0,
                                    "content_block": {"type": "text", "text": ""}}),
        sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                    "delta": {"type": "text_delta", "text": text}}),
        sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        sse("message_delta", {"type": "message_delta",
                              "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                              "usage": {"output_tokens": 5}}),
        sse("message_stop", {"type": "message_stop"}),
    ])


def responses(text):
    """Codex: one assistant message; output_item.done and completed are required."""
    rid, mid = "resp_" + uuid.uuid4().hex[:12], "msg_" + uuid.uuid4().hex[:12]
    item = {"type": "message", "id": mid, "role": "assistant", "status": "in_progress", "content": []}
    done = {**item, "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
    return "text/event-stream", "".join([
        sse("response.created", {"type": "response.created",
                                 "response": {"id": rid, "status": "in_progress"}}),
        sse("response.output_item.added", {"type": "response.output_item.added",
                                           "output_index": 0, "item": item}),
        sse("response.output_text.delta", {"type": "response.output_text.delta", "item_id": mid,
                                           "output_index": 0, "content_index": 0, "delta": text}),
        sse("response.output_item.done", {"type": "response.output_item.done",
                                          "output_index": 0, "item": done}),
        sse("response.completed", {"type": "response.completed", "response": {
            "id": rid, "status": "completed", "usage": usage}}),
    ])


def gemini(path, body, text):
    """Gemini CLI: the router asks for JSON (complexity score), the turn streams."""
    if "complexity_score" in json.dumps(body.get("generationConfig") or {}):
        text = json.dumps({"complexity_reasoning": "fake", "complexity_score": 10})
    answer = {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                              "finishReason": "STOP", "index": 0}],
              "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 5,
                                "totalTokenCount": 105},
              "modelVersion": "gemini-2.5-flash"}
    if path.endswith(":streamGenerateContent"):
        return "text/event-stream", sse(None, answer)
    return "application/json", json.dumps(answer)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *_):
        pass

    def reply(self, ctype, data):
        data = data.encode()
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode("utf-8", "replace")
        path = self.path.split("?")[0]
        with open(ARGS.log, "a") as f:
            f.write(json.dumps({"method": self.command, "path": self.path, "body": raw}) + "\n")
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {}
        if path.endswith("/v1/messages"):
            return self.reply(*anthropic(body, ARGS.text))
        if path.endswith("/responses"):
            return self.reply(*responses(ARGS.text))
        if path.endswith((":generateContent", ":streamGenerateContent")):
            return self.reply(*gemini(path, body, ARGS.text))
        return self.reply("application/json", "{}")

    def do_GET(self):
        with open(ARGS.log, "a") as f:
            f.write(json.dumps({"method": self.command, "path": self.path, "body": ""}) + "\n")
        self.reply("application/json", "{}")

    do_HEAD = do_GET


def main():
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--text", default="Fake answer: deploy with the fake.")
    ARGS = ap.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", ARGS.port), Handler)
    server.daemon_threads = True
    with open(ARGS.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(ARGS.port_file + ".tmp", ARGS.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
