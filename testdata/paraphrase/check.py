#!/usr/bin/env python3
"""Checks the paraphrase set: every record parses, every gold exists, and
no question shares a distinctive content word with its gold.

    python3 testdata/paraphrase/check.py [--transcripts ../shared/data/agent-transcripts]

Words are compared as SQLite FTS5's `porter unicode61` tokenizer sees them
(what lexical recall matches on), stop words aside. The gold text is the
record's key and body, or, for a session gold, the message holding the
`contains` string: all of it when it is short (up to 1,500 characters),
else 400 characters either side of the string. A shared word counts only
when it is distinctive: found in fewer than 2% of all the corpus's
messages (words such as "test", "agent" or "file" are not). Prints every
overlap and exits 1 when a gold is missing.
"""
import argparse, glob, json, os, re, sqlite3, sys

# A term in at least this share of all messages is not distinctive.
COMMON = 0.02
HERE = os.path.dirname(os.path.abspath(__file__))
STOP = set("""a an the and or but if then else of to in on at by for with from as is are was were be been being
do does did done doing have has had having it its this that these those there here what which who whom whose when where
why how i me my we our us you your he she they them their not no nor so than too very can could would should will
shall may might must just also only own same other some any all each every both few more most such about above after
again against before below between into through during out over under up down off once further until while
let us get got make made use used way thing one two new last first still yet ever never always anything something
whether cannot can't don't doesn't didn't won't isn't aren't wasn't what's it's i'm we're that's there's let's
""".split())

conn = sqlite3.connect(":memory:")
conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61')")
conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'row')")

def terms(text):
    """Porter terms of `text` minus stop words (stop words judged unstemmed)."""
    words = [w for w in re.findall(r"[\w']+", text.lower()) if w not in STOP and not w.isdigit()]
    conn.execute("DELETE FROM t")
    conn.execute("INSERT INTO t(x) VALUES (?)", (" ".join(words),))
    return {r[0] for r in conn.execute("SELECT term FROM v")} - {w for w in STOP}

def records():
    out = {}
    for path in glob.glob(os.path.join(HERE, "records", "*", "*", "*.md")):
        text = open(path).read()
        m = re.match(r"---\n(.*?)\n---\n(.*)", text, re.S)
        assert m, f"{path}: no frontmatter"
        fm = dict(l.split(": ", 1) for l in m.group(1).splitlines())
        key = json.loads(fm["key"]) if fm["key"].startswith('"') else fm["key"]
        proj, cat = path.split(os.sep)[-3:-1]
        assert fm["category"] == cat, f"{path}: category {fm['category']} in folder {cat}"
        out[key] = {"project": proj, "text": key + "\n" + m.group(2), "path": path}
    return out

def message_texts(root):
    """{session id: [message text]} over every .jsonl under `root`."""
    by = {}
    for path in glob.glob(os.path.join(root, "**", "*.jsonl"), recursive=True):
        sid = None
        for line in open(path, errors="replace"):
            try:
                o = json.loads(line)
            except ValueError:
                continue
            if not isinstance(o, dict):
                continue
            if o.get("type") == "session_meta":
                sid = o["payload"].get("id")
            sid = o.get("sessionId") or sid
            texts = []
            msg = o.get("message") if isinstance(o.get("message"), dict) else None
            if msg:
                c = msg.get("content")
                if isinstance(c, str):
                    texts.append(c)
                for b in c if isinstance(c, list) else []:
                    if not isinstance(b, dict):
                        continue
                    if b.get("type") == "text":
                        texts.append(b.get("text", ""))
                    elif b.get("type") == "tool_use":
                        texts.append(json.dumps(b.get("input"), ensure_ascii=False))
                    elif b.get("type") == "tool_result":
                        r = b.get("content")
                        if isinstance(r, list):
                            r = " ".join(x.get("text", "") for x in r if isinstance(x, dict))
                        texts.append(str(r))
            p = o.get("payload") if isinstance(o.get("payload"), dict) else {}
            for b in p.get("content", []) if isinstance(p.get("content"), list) else []:
                if isinstance(b, dict) and "text" in b:
                    texts.append(b["text"])
            for k in ("message", "arguments", "output"):
                if isinstance(p.get(k), str):
                    texts.append(p[k])
            if sid:
                by.setdefault(sid, []).extend(texts)
    return by

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--transcripts", default="../shared/data/agent-transcripts")
    a = ap.parse_args()
    recs = records()
    sess = message_texts(a.transcripts)
    qs = [json.loads(l) for l in open(os.path.join(HERE, "questions.jsonl"))]
    missing, overlaps = 0, []
    used = set()
    # Document frequency of each term over every message of the corpus:
    # a word in COMMON or more of them says nothing about one passage.
    df, n_msgs = {}, 0
    for texts in sess.values():
        for t in texts:
            n_msgs += 1
            for w in terms(t[:20000]):
                df[w] = df.get(w, 0) + 1
    for q in qs:
        gold_text = []
        for g in q["gold"]:
            if "record" in g:
                r = recs.get(g["record"])
                if not r or r["project"] != q["project"]:
                    print(f"{q['id']}: no record {g['record']!r} in {q['project']}"); missing += 1; continue
                used.add(g["record"]); gold_text.append(r["text"])
            else:
                hits = [t for t in sess.get(g["session"], []) if g["contains"] in t]
                if not hits:
                    print(f"{q['id']}: session {g['session']} holds no {g['contains']!r}"); missing += 1; continue
                t = min(hits, key=len)
                if len(t) > 1500:
                    i = t.index(g["contains"]); t = t[max(0, i - 400): i + len(g["contains"]) + 400]
                gold_text.append(t)
            shared = terms(q["question"]) & terms("\n".join(gold_text))
        rare = {w for w in shared if df.get(w, 0) < COMMON * n_msgs}
        if rare:
            overlaps.append((q["id"], sorted(rare), q["question"]))
    for k in sorted(set(recs) - used):
        print(f"record without a question: {k}")
    print(f"{len(qs)} questions, {len(recs)} records, {n_msgs} messages, {missing} missing gold, {len(overlaps)} sharing a distinctive word")
    for i, w, q in overlaps:
        print(f"  {i}: {' '.join(w)}  | {q}")
    sys.exit(1 if missing else 0)

main()
