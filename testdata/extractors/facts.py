#!/usr/bin/env python3
"""Fake `command` extractor for the integration tests (tests/it/extract_cli/).

Reads one extract request (JSON) on stdin and prints a facts response.
Everything it does is driven by environment variables, all optional:

  FAKE_EXTRACT_LOG         append one JSON line per call:
                           {"session", "transcript_chars", "existing", "max_facts"}
                           (one O_APPEND write, safe across concurrent runs)
  FAKE_EXTRACT_DUMP        a folder; the whole request is saved there as <session>.json
  FAKE_EXTRACT_SLEEP_MS    sleep this long before answering
  FAKE_EXTRACT_GATE        a path; when the session id equals
  FAKE_EXTRACT_GATE_SESSION, wait (at most 30 s) until that path exists
  FAKE_EXTRACT_FACTS       a file whose content is printed as the response;
                           "{{session}}" in it is replaced by the session id
                           (default: {"facts": []})
"""
import json
import os
import sys
import time

req = json.load(sys.stdin)
sid = req["session"]["id"]

log = os.environ.get("FAKE_EXTRACT_LOG")
if log:
    line = json.dumps(
        {
            "session": sid,
            "transcript_chars": len(req["transcript"]),
            "existing": len(req["existing"]),
            "max_facts": req["max_facts"],
        }
    )
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.write(fd, (line + "\n").encode())
    os.close(fd)

dump = os.environ.get("FAKE_EXTRACT_DUMP")
if dump:
    os.makedirs(dump, exist_ok=True)
    with open(os.path.join(dump, sid + ".json"), "w", encoding="utf-8") as f:
        json.dump(req, f)

gate = os.environ.get("FAKE_EXTRACT_GATE")
if gate and sid == os.environ.get("FAKE_EXTRACT_GATE_SESSION"):
    deadline = time.time() + 30
    while not os.path.exists(gate) and time.time() < deadline:
        time.sleep(0.02)

ms = int(os.environ.get("FAKE_EXTRACT_SLEEP_MS", "0") or "0")
if ms:
    time.sleep(ms / 1000.0)

path = os.environ.get("FAKE_EXTRACT_FACTS")
if path:
    with open(path, encoding="utf-8") as f:
        sys.stdout.write(f.read().replace("{{session}}", sid))
else:
    sys.stdout.write('{"facts": []}')
