#!/usr/bin/env python3
"""Writes tests/data/hf-tokenizers.json: small tokenizer.json files built and trained with the
Hugging Face `tokenizers` library (an independent implementation), and what that library makes
of a set of strings, ids and decoded text, so tests/models/test_hf_tokenizer_fixtures can check
our reader and tokenizer id by id.

Each case is a tokenizer layout that real models ship:
  byte-level-nfc      GPT-2 byte-level BPE behind an NFC normalizer (as Qwen2's tokenizer.json)
  sentencepiece-nfc   Llama-2's legacy layout: NFC, Prepend/Replace "▁" normalizers, byte
                      fallback, the Replace/ByteFallback/Fuse/Strip decoder
  metaspace           a Metaspace pre-tokenizer (prepend "first", no split), Llama-3-era Mistral
                      and Llama-2 files' newer layout, with the same decoder
The strings include decomposed (NFD) text, which NFC must compose before the merges apply.

CI never runs this. Rerun it by hand when the library changes:
  scripts/make-hf-tokenizer-fixtures.py
It makes its own virtual environment under ~/.cache/inferscope/tokenizers-venv.
"""
import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
VENV = pathlib.Path.home() / ".cache" / "inferscope" / "tokenizers-venv"
OUT = ROOT / "tests" / "data" / "hf-tokenizers.json"

# Training text: the perplexity corpus's opening (written by scripts/setup) and accented words
# written precomposed, so the merges hold composed letters that only NFC input reaches.
ACCENTED = [
    "Café au lait, crème brûlée, résumé, naïve façade, déjà vu, fiancée.",
    "Æbleskiver på Østergade, blåbær og rødgrød med fløde i Århus.",
    "Größe, Straße, Übermut, schön, Fräulein, Müller, Köln.",
    "Ångström, señor, mañana, São Paulo, coração, über café résumé.",
] * 8

STRINGS = [
    "Hello world",
    "café",
    "cafe\u0301",  # NFD: e + combining acute
    "A\u030angstro\u0308m",  # NFD Ångström
    "re\u0301sume\u0301 and cre\u0300me bru\u0302le\u0301e",
    "Sa\u0303o Paulo, man\u0303ana",
    "\u1100\u1161\u11a8 Hangul jamo composes",
    "Ruth said, Intreat me not to leave thee.",
    "  two leading spaces",
    "tabs\tand\nnewlines\n\n",
    "digits 1234567 and 3.14",
    "emoji \U0001F600 and ﬁ ligature (NFC keeps it)",
    "Ω ohm sign vs Ω omega",
    "",
    "<s>special first",
    "before<s>after</s> and again",
]


def ensure_venv():
    python = VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    probe = subprocess.run([str(python), "-c", "import tokenizers"], capture_output=True)
    if probe.returncode != 0:
        subprocess.run([str(python), "-m", "pip", "install", "-q", "tokenizers"], check=True)
    return python


def corpus_lines():
    corpus = pathlib.Path.home() / ".cache" / "inferscope" / "corpus" / "ruth-kjv.txt"
    lines = corpus.read_text(encoding="utf-8").splitlines()[:200] if corpus.exists() else []
    return [line for line in lines if line.strip()] + ACCENTED


def build(kind, lines):
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    if kind == "byte-level-nfc":
        tokenizer = Tokenizer(models.BPE())
        tokenizer.normalizer = normalizers.NFC()
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
        tokenizer.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            vocab_size=700,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            special_tokens=["<|endoftext|>"],
            show_progress=False,
        )
        tokenizer.train_from_iterator(lines, trainer)
        return tokenizer

    # SentencePiece-style: train on "▁"-marked text, then rebuild the model with the 256 byte
    # tokens and byte fallback, as Llama-2's tokenizer.json has them.
    marked = Tokenizer(models.BPE(unk_token="<unk>"))
    if kind == "sentencepiece-nfc":
        marked.normalizer = normalizers.Sequence(
            [normalizers.NFC(), normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")]
        )
    else:
        marked.pre_tokenizer = pre_tokenizers.Metaspace(
            replacement="▁", prepend_scheme="first", split=False
        )
    trainer = trainers.BpeTrainer(
        vocab_size=500, special_tokens=["<unk>", "<s>", "</s>"], show_progress=False
    )
    marked.train_from_iterator(lines, trainer)
    state = json.loads(marked.to_str())
    vocab = state["model"]["vocab"]
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in state["model"]["merges"]]
    for byte in range(256):
        vocab.setdefault(f"<0x{byte:02X}>", len(vocab))
    tokenizer = Tokenizer(
        models.BPE(vocab=vocab, merges=merges, unk_token="<unk>", byte_fallback=True, fuse_unk=True)
    )
    tokenizer.add_special_tokens(["<unk>", "<s>", "</s>"])
    tokenizer.normalizer = marked.normalizer
    tokenizer.pre_tokenizer = marked.pre_tokenizer
    # Both layouts decode as Llama's files do (a Metaspace decoder would print byte tokens
    # as "<0xCC>" text: no model with byte fallback ships it).
    tokenizer.decoder = decoders.Sequence(
        [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)]
    )
    return tokenizer


def main():
    python = ensure_venv()
    if pathlib.Path(sys.prefix).resolve() != VENV.resolve():
        os.execv(str(python), [str(python), __file__])
    import tokenizers

    lines = corpus_lines()
    cases = []
    for kind in ["byte-level-nfc", "sentencepiece-nfc", "metaspace"]:
        tokenizer = build(kind, lines)
        entries = []
        for text in STRINGS:
            ids = tokenizer.encode(text, add_special_tokens=False).ids  # specials in the text still match
            entries.append({
                "text": text,
                "ids": ids,
                "decoded": tokenizer.decode(ids, skip_special_tokens=True),
                "decodedWithSpecials": tokenizer.decode(ids, skip_special_tokens=False),
            })
        cases.append({"name": kind, "tokenizer": json.loads(tokenizer.to_str()), "strings": entries})
    fixture = {
        "generator": "scripts/make-hf-tokenizer-fixtures.py",
        "library": "tokenizers " + tokenizers.__version__,
        "cases": cases,
    }
    OUT.write_text(json.dumps(fixture, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes, {len(cases)} tokenizers)")


if __name__ == "__main__":
    main()
