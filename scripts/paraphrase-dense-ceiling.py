#!/usr/bin/env python3
"""The paraphrase set's ceiling for the transformer's dense side alone.

Hybrid recall (issue 38) places at most a few dense rows after the
lexical top 3; this asks how many paraphrase questions the model alone
would answer in its top 5, with no words at all: every stored vector of
the question's project (passages and records, as `recall index` stored
them, quantised) against the question embedded by the numpy reference of
all-MiniLM-L6-v2 (`scripts/reference-embeddings.py`). A gold is found as
`examples/eval.rs paraphrase` finds it: the record whose key is the gold's,
or a passage of the gold session (its sub-agents included) holding the
gold's `contains` string, whitespace collapsed, case ignored.

    cargo build --release --bin recall --example eval --example sqlite_floor
    target/release/examples/eval paraphrase --semantic MODEL --keep-home HOME
    python3 scripts/paraphrase-dense-ceiling.py HOME MODEL

HOME is the eval's kept workspace (its `home/projects/*/index.db` hold the
vectors); MODEL the transformer's folder. Needs numpy, safetensors and
tokenizers. The passages' text is read with `sqlite_floor` (the bundled
SQLite: FTS5 tables written by recall may be newer than Python's).
"""

import importlib.util
import json
import os
import re
import sqlite3
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def reference(model_dir):
    path = os.path.join(HERE, "reference-embeddings.py")
    spec = importlib.util.spec_from_file_location("reference_embeddings", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.Bert(model_dir)


def norm(s):
    return re.sub(r"\s+", " ", s).strip().lower()


def rows_of(index):
    """Every vector of one index: (kind, session id or record key, text)."""
    floor = os.path.join(ROOT, "target", "release", "examples", "sqlite_floor")
    out = subprocess.run(
        [floor, index, "SELECT rowid, json_quote(body) FROM chunks_fts"],
        check=True, capture_output=True, text=True,
    ).stdout
    bodies = {}
    for line in out.splitlines():
        rowid, body = line.split("\t", 1)
        bodies[int(rowid)] = json.loads(body)
    con = sqlite3.connect(f"file:{index}?mode=ro", uri=True)
    rows, vectors = [], []
    for rowid, blob, session in con.execute(
        "SELECT v.rowid, v.v, c.session_id FROM chunk_vectors v JOIN chunks c ON c.rowid = v.rowid"
    ):
        rows.append(("passage", session, norm(bodies.get(rowid, ""))))
        vectors.append(np.frombuffer(blob[4:], dtype=np.int8))
    for blob, key in con.execute(
        "SELECT v.v, r.key FROM record_vectors v JOIN records r ON r.rowid = v.rowid"
    ):
        rows.append(("record", key, ""))
        vectors.append(np.frombuffer(blob[4:], dtype=np.int8))
    m = np.stack(vectors).astype(np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True) + 1e-12
    return rows, m


def is_gold(gold, row):
    kind, owner, text = row
    if "record" in gold:
        return kind == "record" and owner == gold["record"]
    root = owner.split("/agent-")[0]
    return kind == "passage" and root == gold["session"] and norm(gold["contains"]) in text


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    home, model_dir = sys.argv[1], sys.argv[2]
    projects = {}
    base = os.path.join(home, "home", "projects")
    for d in sorted(os.listdir(base)):
        with open(os.path.join(base, d, "project.json")) as f:
            projects[json.load(f)["name"]] = rows_of(os.path.join(base, d, "index.db"))
    with open(os.path.join(ROOT, "testdata", "paraphrase", "questions.jsonl")) as f:
        questions = [json.loads(line) for line in f]
    model = reference(model_dir)
    vectors = model.embed([q["question"] for q in questions])
    found = {"record": [], "passage": []}
    for q, v in zip(questions, vectors):
        rows, m = projects[q["project"]]
        cos = m @ (v / np.linalg.norm(v))
        top = np.argsort(-cos)[:5]
        hit = any(is_gold(g, rows[i]) for i in top for g in q["gold"])
        found["record" if "record" in q["gold"][0] else "passage"].append(hit)
    every = found["record"] + found["passage"]
    print(f"dense alone, top-5 hit rate: {sum(every) / len(every):.3f} ({sum(every)} of {len(every)})")
    for kind, hits in found.items():
        print(f"  {kind} gold: {sum(hits) / len(hits):.3f} ({sum(hits)} of {len(hits)})")


if __name__ == "__main__":
    main()
