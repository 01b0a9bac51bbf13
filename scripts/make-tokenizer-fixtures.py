#!/opt/refvenv/bin/python
"""Writes the tokenizer fixtures: what llama.cpp (an independent implementation, through
llama-cpp-python) makes of a set of awkward strings, so our tokenizers can be checked id by id.

  tests/data/tokenizer-smollm2.json   byte-level BPE, pre-tokenizer "smollm": the default model
                                      (SmolLM2-135M-Instruct) tokenizes STRINGS; and, under
                                      "idsByPreTokenizer", the same vocabulary and merges
                                      written into vocab-only GGUFs that name another split
                                      rule (gpt-2, default, llama-bpe, qwen2).
  tests/data/tokenizer-spm-vocab.gguf a small SentencePiece-style vocabulary (vocab only, no
                                      tensors) built here: no small real SPM-vocabulary GGUF is
                                      shipped by a package we can install. Its pieces are learned
                                      from the corpus with plain BPE (score = minus merge step),
                                      plus <unk>, <s>, </s>, the 256 <0xXX> byte tokens and two
                                      ChatML control tokens.
  tests/data/tokenizer-spm.json       that vocabulary (so tests need no GGUF reader) and
                                      llama.cpp's ids for STRINGS and SPM_EXTRA_STRINGS.

Every string is tokenized with add_bos=False, special=True (control tokens written in the text
become single tokens); a few are also recorded with add_bos=True under "withBos".

CI never runs this; rerun it by hand when the model or llama.cpp changes:
  /opt/refvenv/bin/python scripts/make-tokenizer-fixtures.py
"""
import argparse
import collections
import json
import os
import pathlib
import tempfile

import gguf
from llama_cpp import Llama, __version__ as llama_cpp_version

CACHE = pathlib.Path(os.environ.get("INFERSCOPE_CACHE", pathlib.Path.home() / ".cache/inferscope"))
DEFAULT_MODEL = CACHE / "models/SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_CORPUS = CACHE / "corpus/ruth-kjv.txt"
REPO = pathlib.Path(__file__).resolve().parent.parent
DATA = REPO / "tests/data"

STRINGS = [
    # empty and single characters
    "",
    " ",
    "a",
    "\n",
    "\t",
    "\r\n",
    "7",
    "é",
    # ASCII prose
    "Hello world",
    "Hello, world! How are you today?",
    "The quick brown fox jumps over the lazy dog.",
    "Now it came to pass in the days when the judges ruled, that there was a famine in the land.",
    "I'm sure they'll say we've done what you'd expect; it's John's.",
    "SHOUTING WORDS AND CamelCase and snake_case_names",
    "don't DON'T Don'T 'quoted' ''double''",
    # leading / trailing / runs of whitespace
    " leading space",
    "trailing space ",
    "  two leading spaces",
    "trailing spaces   ",
    "many     spaces     between",
    "hello123 world  \n\n",
    "line one\nline two\n\nline four\n",
    "\n\n\n",
    "a\r\nb\r\n\r\nc",
    "   \n   \n",
    "tab\tseparated\tvalues\t\t",
    " \t \n \t",
    # digits and numbers
    "0123456789",
    "In 1969, 600,000 people saw 3.14159 and 2.71828.",
    "12345678901234567890",
    "+1 (555) 123-4567",
    "version 1.2.3-rc4",
    "x²+y³=z⁴ and ½ of Ⅻ",
    "٣٤٥ and ४५६",
    # accents and European languages
    "Café naïve résumé façade",
    "Über den Wolken muss die Freiheit wohl grenzenlos sein. Straße, Größe, Äpfel.",
    "À bientôt ! Où est la bibliothèque ? C'est l'été, n'est-ce pas ?",
    "Rødgrød med fløde. Æblet, søen og blåbær på Ærø.",
    "¿Dónde está el niño? ¡Mañana!",
    "Ελληνικά και Русский язык",
    "e\u0301 decomposed accent",
    # CJK and other scripts
    "你好，世界！",
    "日本語のテキストとカタカナ、ひらがな。",
    "한국어 문장입니다.",
    "مرحبا بالعالم",
    "שלום עולם",
    "हिन्दी पाठ",
    "ภาษาไทย",
    # emoji
    "I love 🍕 and 🎉!",
    "👍🏽 thumbs",
    "👨‍👩‍👧‍👦 family",
    "🏳️‍🌈 flag",
    "❤️❤️❤️",
    # code
    "def add(a, b):\n\treturn a + b\n",
    "int main() {\n    printf(\"%d\\n\", 42);\n    return 0;\n}\n",
    "if (x <= 10 && y != 3) { z += x * y; }",
    "SELECT * FROM users WHERE id = 7;",
    "<div class=\"note\">Hello &amp; bye</div>",
    "https://example.com/path?q=1&r=two#frag",
    "#!/bin/bash\nfor f in *.txt; do echo \"$f\"; done",
    "a_b-c.d/e\\f|g~h^i`j",
    "======== ---- ____ ....",
    # special tokens written literally
    "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n",
    "<|endoftext|>",
    "text<|im_end|>more",
    "<|im_start|><|im_start|>",
    "<|im_start",
    "< |im_end| >",
    "<file_sep><filename>main.py",
    # unusual whitespace and control characters
    "a\u00a0b",
    "x\u00a0\u3000y",
    "a\u0085\u0085b",
    "a\u2028b\u2029c",
    "zero\u200bwidth",
    "mongolian\u180e's\r\n\u180e",  # U+180E is not White_Space (PCRE2's \s says it is)
    "bom\ufeffhere",
    "\u001c\u001d\u001e\u001f sep",
    "nul\u0000byte",
    "mixed 中文 and English 123 together!",
]

# Strings that matter for the SentencePiece rules in particular (spaces, byte fallback).
SPM_EXTRA_STRINGS = [
    "<s>",
    "</s>",
    "<s>Hello</s>",
    "Hello <s> world",
    "<unk>",
    " ",
    "  ",
    "▁",
    "Naomi and Ruth went unto Bethlehem",
    "the LORD",
]

WITH_BOS = ["", "Hello world", " leading space", "<|im_start|>user\nHi<|im_end|>\n"]


def tokenize_all(llm, strings, add_bos=False):
    return [llm.tokenize(s.encode("utf-8"), add_bos=add_bos, special=True) for s in strings]


# The other split rules we support, checked with SmolLM2's vocabulary and merges under each
# rule's name (llama.cpp applies the rule the file names, whatever the vocabulary).
OTHER_PRE_TOKENIZERS = ["gpt-2", "default", "llama-bpe", "qwen2"]


def write_vocab_gguf(path, tokenizer_model, tokens, types, pre=None, merges=None, scores=None,
                     add_bos=False, add_space_prefix=False):
    writer = gguf.GGUFWriter(str(path), "llama")
    # The minimal llama hyper-parameters llama.cpp reads before it loads a vocabulary.
    writer.add_name("inferscope-tokenizer-test-vocab")
    writer.add_context_length(256)
    writer.add_embedding_length(64)
    writer.add_block_count(1)
    writer.add_feed_forward_length(128)
    writer.add_head_count(4)
    writer.add_head_count_kv(4)
    writer.add_rope_dimension_count(16)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_vocab_size(len(tokens))
    writer.add_tokenizer_model(tokenizer_model)
    if pre is not None:
        writer.add_tokenizer_pre(pre)
    writer.add_token_list(tokens)
    if scores is not None:
        writer.add_token_scores(scores)
    writer.add_token_types(types)
    if merges is not None:
        writer.add_token_merges(merges)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_unk_token_id(0)
    writer.add_add_bos_token(add_bos)
    writer.add_add_eos_token(False)
    writer.add_add_space_prefix(add_space_prefix)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def ids_under_other_rules(model_path):
    reader = gguf.GGUFReader(str(model_path))
    fields = reader.fields
    tokens = fields["tokenizer.ggml.tokens"].contents()
    types = [int(t) for t in fields["tokenizer.ggml.token_type"].contents()]
    merges = fields["tokenizer.ggml.merges"].contents()
    result = {}
    with tempfile.TemporaryDirectory() as folder:
        for pre in OTHER_PRE_TOKENIZERS:
            path = pathlib.Path(folder) / f"vocab-{pre}.gguf"
            write_vocab_gguf(path, "gpt2", tokens, types, pre=pre, merges=merges)
            llm = Llama(model_path=str(path), vocab_only=True, verbose=False)
            result[pre] = tokenize_all(llm, STRINGS)
    return result


def make_smollm2(model_path):
    llm = Llama(model_path=str(model_path), vocab_only=True, verbose=False)
    out = {
        "generator": "scripts/make-tokenizer-fixtures.py",
        "llamaCppPython": llama_cpp_version,
        "call": "Llama(vocab_only=True).tokenize(utf8, add_bos=False, special=True)",
        "model": model_path.name,
        "strings": STRINGS,
        "ids": tokenize_all(llm, STRINGS),
        "withBos": {"strings": WITH_BOS, "ids": tokenize_all(llm, WITH_BOS, add_bos=True)},
        "idsByPreTokenizer": ids_under_other_rules(model_path),
    }
    path = DATA / "tokenizer-smollm2.json"
    path.write_text(json.dumps(out, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {path} ({len(STRINGS)} strings)")


# --- a small SentencePiece-style vocabulary --------------------------------------------------

SPACE = "\u2581"


def learn_pieces(corpus_text, merges):
    """Plain BPE over words (SentencePiece style: a word carries its leading '▁').
    Returns the base characters and the learned pieces in merge order."""
    words = collections.Counter(SPACE + w for w in corpus_text.split())
    vocab = {tuple(w): n for w, n in words.items()}
    base = sorted({c for w in vocab for c in w})
    pieces = []
    for _ in range(merges):
        pairs = collections.Counter()
        for symbols, n in vocab.items():
            for a, b in zip(symbols, symbols[1:]):
                pairs[(a, b)] += n
        if not pairs:
            break
        (a, b), _ = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))
        merged = a + b
        pieces.append(merged)
        new_vocab = {}
        for symbols, n in vocab.items():
            out, i = [], 0
            while i < len(symbols):
                if i + 1 < len(symbols) and symbols[i] == a and symbols[i + 1] == b:
                    out.append(merged)
                    i += 2
                else:
                    out.append(symbols[i])
                    i += 1
            new_vocab[tuple(out)] = new_vocab.get(tuple(out), 0) + n
        vocab = new_vocab
    return base, pieces


def build_spm_vocab(corpus_path):
    text = corpus_path.read_text(encoding="utf-8")
    base, pieces = learn_pieces(text, 400)
    tokens, scores, types = [], [], []

    def add(piece, score, token_type):
        if piece in tokens:
            return
        tokens.append(piece)
        scores.append(float(score))
        types.append(int(token_type))

    T = gguf.TokenType
    add("<unk>", 0.0, T.UNKNOWN)
    add("<s>", 0.0, T.CONTROL)
    add("</s>", 0.0, T.CONTROL)
    for b in range(256):
        add(f"<0x{b:02X}>", 0.0, T.BYTE)
    # Single characters score low; merged pieces score higher the earlier they were learned,
    # which is the order SentencePiece-BPE (and llama.cpp's SPM tokenizer) merges them in.
    for i, c in enumerate([SPACE] + [c for c in base if c != SPACE]):
        add(c, -1000.0 - i, T.NORMAL)
    for i, piece in enumerate(pieces):
        add(piece, -float(i), T.NORMAL)
    add("<|im_start|>", 0.0, T.CONTROL)
    add("<|im_end|>", 0.0, T.CONTROL)
    return tokens, scores, types


def make_spm(corpus_path):
    tokens, scores, types = build_spm_vocab(corpus_path)
    gguf_path = DATA / "tokenizer-spm-vocab.gguf"
    write_vocab_gguf(gguf_path, "llama", tokens, types, scores=scores, add_bos=True,
                     add_space_prefix=True)
    llm = Llama(model_path=str(gguf_path), vocab_only=True, verbose=False)
    strings = STRINGS + SPM_EXTRA_STRINGS
    out = {
        "generator": "scripts/make-tokenizer-fixtures.py",
        "llamaCppPython": llama_cpp_version,
        "call": "Llama(vocab_only=True).tokenize(utf8, add_bos=False, special=True)",
        "vocab": {
            "tokens": tokens,
            "scores": scores,
            "tokenTypes": types,
            "bosId": 1,
            "eosId": 2,
            "unknownId": 0,
            "addBos": True,
            "addSpacePrefix": True,
        },
        "strings": strings,
        "ids": tokenize_all(llm, strings),
        "withBos": {"strings": WITH_BOS, "ids": tokenize_all(llm, WITH_BOS, add_bos=True)},
    }
    path = DATA / "tokenizer-spm.json"
    path.write_text(json.dumps(out, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {gguf_path} ({len(tokens)} tokens) and {path} ({len(strings)} strings)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=pathlib.Path, default=DEFAULT_MODEL)
    parser.add_argument("--corpus", type=pathlib.Path, default=DEFAULT_CORPUS)
    args = parser.parse_args()
    make_smollm2(args.model)
    make_spm(args.corpus)


if __name__ == "__main__":
    main()
