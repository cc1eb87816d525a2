#!/usr/bin/env python3
"""What the prompt hook's semantic gate would leave out on LoCoMo, a set
its value was not chosen on (stop 55).

    python3 scripts/gate-heldout-locomo.py MODEL_DIR [--every N]

MODEL_DIR is an all-MiniLM-L6-v2 folder (`bash scripts/get-model.sh DIR`).
Needs numpy, safetensors and tokenizers, as scripts/reference-embeddings.py,
whose numpy model it runs (the same vectors as recall's candle model).

For each LoCoMo question with evidence (every Nth, default 4: the numpy
model is slow), it takes the gold evidence turns and the turns plain FTS5
ranks in its top 5 that are not gold (`speaker: text` per row, porter
unicode61, the question's words OR-ed, as ../shared/data/README.md's floor),
and prints, for gates 0.2 to 0.35, the share of each whose cosine with the
question is at or above the gate, and the share of questions that keep at
least one gold turn. A gate that separates keeps the gold and leaves out
the rest. Turns stand in for the hook's passages, which hold a few turns
each, so the figures are an estimate.
"""
import argparse
import importlib.util
import json
import os
import re
import sqlite3
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
LOCOMO = os.path.join(HERE, "..", "..", "shared", "data", "locomo", "locomo10.json")
GATES = [0.2, 0.25, 0.3, 0.35]


def reference_model(model_dir):
    spec = importlib.util.spec_from_file_location(
        "reference", os.path.join(HERE, "reference-embeddings.py")
    )
    ref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ref)
    return ref.Bert(model_dir)


def questions(path):
    """(question, gold turn ids, non-gold FTS5 top-5 ids, turn texts)."""
    with open(path) as f:
        data = json.load(f)
    out = []
    for conv in data:
        turns = {}
        for key, session in conv["conversation"].items():
            if re.fullmatch(r"session_\d+", key):
                for t in session:
                    turns[t["dia_id"]] = f'{t["speaker"]}: {t["text"]}'
        db = sqlite3.connect(":memory:")
        db.execute(
            "CREATE VIRTUAL TABLE t USING fts5(id UNINDEXED, x, tokenize='porter unicode61')"
        )
        db.executemany("INSERT INTO t VALUES (?, ?)", list(turns.items()))
        for q in conv["qa"]:
            ids = re.split(r"[;\s]+", " ".join(q.get("evidence", [])))
            gold = [e for e in ids if re.fullmatch(r"D\d+:\d+", e) and e in turns]
            words = sorted(set(re.findall(r"\w+", q["question"].lower())))
            if not gold or not words:
                continue
            # Each word quoted as an FTS5 string: the question's text is
            # never read as query syntax.
            match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
            top = [
                r[0]
                for r in db.execute(
                    "SELECT id FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 5", (match,)
                )
            ]
            out.append((q["question"], gold, [i for i in top if i not in gold], turns))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model_dir")
    ap.add_argument("--every", type=int, default=4, help="take every Nth question")
    ap.add_argument("--locomo", default=LOCOMO)
    args = ap.parse_args()
    model = reference_model(args.model_dir)
    rows = questions(args.locomo)[:: args.every]
    print(f"{len(rows)} questions", file=sys.stderr)

    def embed(texts):
        vectors = []
        for i in range(0, len(texts), 64):
            vectors.extend(model.embed(texts[i : i + 64]))
        return np.array(vectors)

    qv = embed([r[0] for r in rows])
    gold, other, best = [], [], []
    for n, ((_, g, o, turns), v) in enumerate(zip(rows, qv)):
        g_cos = embed([turns[i] for i in g]) @ v
        gold.extend(g_cos.tolist())
        best.append(float(g_cos.max()))
        if o:
            other.extend((embed([turns[i] for i in o]) @ v).tolist())
        if n % 100 == 0:
            print(n, file=sys.stderr, flush=True)
    gold, other, best = np.array(gold), np.array(other), np.array(best)
    print("| gate | gold turns kept | questions keeping a gold turn | non-gold top-5 turns kept |")
    print("|---:|---:|---:|---:|")
    for gate in GATES:
        print(
            f"| {gate} | {np.mean(gold >= gate):.3f} (of {len(gold)}) "
            f"| {np.mean(best >= gate):.3f} (of {len(best)}) "
            f"| {np.mean(other >= gate):.3f} (of {len(other)}) |"
        )


if __name__ == "__main__":
    main()
