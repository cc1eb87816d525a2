#!/usr/bin/env python3
"""Reference vectors for the transformer test (issue 38 item 5).

    python3 scripts/reference-embeddings.py MODEL_DIR [--out FILE]

MODEL_DIR is an all-MiniLM-L6-v2 folder as `scripts/get-model.sh` fills it
(model.safetensors, config.json, tokenizer.json). FILE defaults to
testdata/semantic/reference-minilm.json, which the Rust test
`semantic::tests::the_transformer_matches_the_reference_vectors` reads.
Needs numpy, safetensors and tokenizers (pip install numpy safetensors
tokenizers); not torch.

What it computes is sentence-transformers' pipeline for this model (the
modules.json of the model: Transformer, Pooling, Normalize), written out
with numpy from the BERT architecture rather than run through torch, so it
shares no code with the candle model recall runs:

- WordPiece ids from tokenizer.json ([CLS] text [SEP]), cut to
  `max_seq_length` tokens, special tokens included (sentence_bert_config.json;
  256 when the folder does not have it, as recall assumes);
- embeddings: word + position + token type (all 0), then LayerNorm;
- `num_hidden_layers` encoder layers: multi-head self-attention over the
  real tokens (padding gets -inf before the softmax), output projection,
  residual, LayerNorm; feed-forward with the exact (erf) GELU, residual,
  LayerNorm;
- the mean of the last layer over the real tokens, scaled to unit length.

Arithmetic is float64 on the float32 weights. The sentences go through as
one padded batch, so the attention mask is exercised. Before writing, the
script checks its own output: unit vectors, each sentence the same alone
as in the batch, "hello world" as fastembed pins it, and a paraphrase
closer than unrelated text.
"""
import argparse
import hashlib
import json
import math
import os
import sys

import numpy as np
import tokenizers
from safetensors.numpy import load_file
from tokenizers import Tokenizer

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_OUT = os.path.normpath(
    os.path.join(
        os.path.dirname(os.path.abspath(__file__)),
        "..",
        "testdata",
        "semantic",
        "reference-minilm.json",
    )
)

# One short, one ordinary, one far past 256 word pieces, one with
# punctuation and non-ASCII text, one code.
LONG = " ".join(
    [
        "The release process starts when the maintainers tag a commit on the",
        "main branch after every check has passed; the build server then",
        "compiles the binaries for each supported platform, signs them, and",
        "uploads them to the staging bucket where a second job verifies the",
        "checksums against the manifest before anything is published.",
    ]
    * 4
    + [
        "Only after a person has read the changelog, tried the installer on",
        "a clean machine and confirmed that the upgrade keeps existing data",
        "does the release move from staging to the public download page.",
    ]
)
SENTENCES = [
    "how do we ship a release?",
    "Deploys go through make ship-it from the release branch once the tests pass.",
    LONG,
    "Café «crème» — naïve façade; 東京で会議 (3 p.m.?!) … 🚀 ≥ 99% ✓",
    'fn main() { let v: Vec<u32> = (0..10).map(|i| i * 2).collect(); println!("{v:?}"); }',
]
# For the self-check only: a paraphrase of SENTENCES[0] and unrelated text.
PARAPHRASE = "What are the steps to publish a new version?"
UNRELATED = "My cat likes to sleep on the windowsill in the afternoon."
# The first five values of "hello world" as fastembed's test suite pins
# them for this model (qdrant/fastembed, tests/test_text_onnx_embeddings.py,
# CANONICAL_VECTOR_VALUES; fastembed runs an ONNX export of the model with
# mean pooling): a check against an implementation this script shares
# nothing with.
HELLO_WORLD = [-0.034478, 0.03102, 0.00673, 0.02611, -0.039362]


def max_seq_length(model_dir, config):
    """sentence_bert_config.json's max_seq_length, else 256, never past
    the position table."""
    path = os.path.join(model_dir, "sentence_bert_config.json")
    n = 256
    if os.path.exists(path):
        with open(path) as f:
            n = json.load(f).get("max_seq_length", n)
    return min(n, config["max_position_embeddings"])


class Bert:
    """A BERT encoder with sentence-transformers' mean pooling."""

    def __init__(self, model_dir):
        with open(os.path.join(model_dir, "config.json")) as f:
            self.config = json.load(f)
        c = self.config
        if c.get("hidden_act") != "gelu":
            sys.exit(f"hidden_act {c.get('hidden_act')!r}: only the exact GELU is written here")
        if c.get("position_embedding_type", "absolute") != "absolute":
            sys.exit("only absolute position embeddings are written here")
        weights = load_file(os.path.join(model_dir, "model.safetensors"))
        # Some exports prefix every name with "bert.".
        self.w = {
            k[len("bert."):] if k.startswith("bert.") else k: v.astype(np.float64)
            for k, v in weights.items()
        }
        self.eps = c["layer_norm_eps"]
        self.heads = c["num_attention_heads"]
        self.layers = c["num_hidden_layers"]
        self.max_tokens = max_seq_length(model_dir, c)
        self.tokenizer = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
        # tokenizer.json carries its own truncation and fixed padding (128
        # for this model); sentence-transformers overrides both.
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=self.max_tokens)

    def layer_norm(self, x, name):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        y = (x - mean) / np.sqrt(var + self.eps)
        return y * self.w[name + ".weight"] + self.w[name + ".bias"]

    def dense(self, x, name):
        # torch's Linear: weight is (out, in).
        return x @ self.w[name + ".weight"].T + self.w[name + ".bias"]

    def attention(self, x, mask, p):
        batch, seq, hidden = x.shape
        d = hidden // self.heads

        def split(t):
            return t.reshape(batch, seq, self.heads, d).transpose(0, 2, 1, 3)

        q = split(self.dense(x, p + ".attention.self.query"))
        k = split(self.dense(x, p + ".attention.self.key"))
        v = split(self.dense(x, p + ".attention.self.value"))
        scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d)
        # Padding keys are never attended to.
        scores = np.where(mask[:, None, None, :] > 0, scores, -np.inf)
        scores -= scores.max(-1, keepdims=True)
        probs = np.exp(scores)
        probs /= probs.sum(-1, keepdims=True)
        context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, seq, hidden)
        out = self.dense(context, p + ".attention.output.dense")
        return self.layer_norm(out + x, p + ".attention.output.LayerNorm")

    def feed_forward(self, x, p):
        h = self.dense(x, p + ".intermediate.dense")
        h = 0.5 * h * (1.0 + ERF(h / math.sqrt(2.0)))
        out = self.dense(h, p + ".output.dense")
        return self.layer_norm(out + x, p + ".output.LayerNorm")

    def tokenize(self, texts):
        encodings = self.tokenizer.encode_batch(texts)
        seq = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(texts), seq), dtype=np.int64)
        mask = np.zeros((len(texts), seq), dtype=np.float64)
        for i, e in enumerate(encodings):
            ids[i, : len(e.ids)] = e.ids
            mask[i, : len(e.ids)] = 1.0
        return ids, mask

    def embed(self, texts):
        ids, mask = self.tokenize(texts)
        seq = ids.shape[1]
        x = (
            self.w["embeddings.word_embeddings.weight"][ids]
            + self.w["embeddings.position_embeddings.weight"][:seq][None, :, :]
            + self.w["embeddings.token_type_embeddings.weight"][0][None, None, :]
        )
        x = self.layer_norm(x, "embeddings.LayerNorm")
        for n in range(self.layers):
            p = f"encoder.layer.{n}"
            x = self.feed_forward(self.attention(x, mask, p), p)
        summed = (x * mask[:, :, None]).sum(1)
        mean = summed / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        return mean / np.maximum(np.linalg.norm(mean, axis=1, keepdims=True), 1e-12)


# numpy has no erf; math.erf element by element is exact and fast enough.
ERF = np.vectorize(math.erf, otypes=[np.float64])


def self_check(model, vectors):
    """The properties a right encoder has, checked before anything is
    written."""
    norms = np.linalg.norm(vectors, axis=1)
    assert np.allclose(norms, 1.0, atol=1e-9), norms
    for i, text in enumerate(SENTENCES):
        alone = model.embed([text])[0]
        cos = float(alone @ vectors[i])
        assert cos > 1 - 1e-9, f"batch and alone differ for {text[:40]!r}: {cos}"
    hello = model.embed(["hello world"])[0][:5]
    assert np.allclose(hello, HELLO_WORLD, atol=1e-5), hello
    q, para, other = model.embed([SENTENCES[0], PARAPHRASE, UNRELATED])
    close, far = float(q @ para), float(q @ other)
    print(f"self-check: paraphrase {close:.4f}, unrelated {far:.4f}", file=sys.stderr)
    assert close > far + 0.2, (close, far)


def to_json(doc):
    """`doc` as indented JSON with each vector on one line, so the file
    reads and diffs by sentence."""
    text = json.dumps(doc, ensure_ascii=False, indent=1)
    for s in doc["sentences"]:
        spread = json.dumps(s["vector"], indent=1)
        spread = "\n".join("   " + line if i else line for i, line in enumerate(spread.splitlines()))
        assert spread in text
        text = text.replace(spread, json.dumps(s["vector"]), 1)
    return text + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model_dir")
    ap.add_argument("--out", default=DEFAULT_OUT)
    args = ap.parse_args()
    model = Bert(args.model_dir)
    vectors = model.embed(SENTENCES)
    self_check(model, vectors)
    with open(os.path.join(args.model_dir, "model.safetensors"), "rb") as f:
        weights_sha256 = hashlib.sha256(f.read()).hexdigest()
    lengths = [len(e.ids) for e in model.tokenizer.encode_batch(SENTENCES)]
    doc = {
        "model": MODEL_NAME,
        "weights_sha256": weights_sha256,
        "made_by": (
            "scripts/reference-embeddings.py: sentence-transformers' pipeline for the model "
            "(BERT encoder, mean pooling over the attention mask, unit length) written in numpy "
            f"from the published architecture, float64 on the float32 weights, tokens cut to "
            f"{model.max_tokens} (special tokens included); numpy {np.__version__}, "
            f"tokenizers {tokenizers.__version__}; not sentence-transformers or torch"
        ),
        "sentences": [
            {
                "text": text,
                "tokens": n,
                "vector": [round(float(x), 6) for x in v],
            }
            for text, n, v in zip(SENTENCES, lengths, vectors)
        ],
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(to_json(doc))
    for text, n in zip(SENTENCES, lengths):
        print(f"{n:4} tokens  {text[:60]!r}", file=sys.stderr)
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
