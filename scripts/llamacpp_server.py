"""llama.cpp's OpenAI-compatible server (the `llama_cpp.server` module of llama-cpp-python),
started for scripts/replay-vs-llamacpp, with one addition: --ignore-eos.

    python llamacpp_server.py [--ignore-eos] --model FILE --host 127.0.0.1 --port P ...

Every other argument goes to `python -m llama_cpp.server` unchanged. The replay client asks
each server for exactly max_tokens tokens (`ignore_eos`, as vLLM's serving benchmark does);
llama-cpp-python's server has no such request field and drops it. With --ignore-eos every
completion here masks the end-of-generation tokens (logit -inf before sampling), so both
servers make the same number of tokens per request and the comparison is of equal work.
Run in the llama-cpp-python environment; not part of the test suite.
"""

import sys

import numpy as np


def mask_end_of_generation():
    import llama_cpp

    create_completion = llama_cpp.Llama.create_completion
    end_tokens = {}  # id(Llama) -> its end-of-generation token ids

    def with_end_masked(self, *args, **kwargs):
        if id(self) not in end_tokens:
            vocab = self._model.vocab
            end_tokens[id(self)] = np.array(
                [t for t in range(self.n_vocab()) if llama_cpp.llama_vocab_is_eog(vocab, t)],
                dtype=np.intc)
        ends = end_tokens[id(self)]
        n_vocab = self.n_vocab()

        def mask(_input_ids, scores):
            # The custom sampler runs first in the chain: the whole vocabulary in id order.
            if scores.shape[0] != n_vocab:
                raise RuntimeError(f"--ignore-eos: {scores.shape[0]} logits, not {n_vocab}")
            scores[ends] = -np.inf
            return scores

        processors = list(kwargs.get("logits_processor") or [])
        kwargs["logits_processor"] = llama_cpp.LogitsProcessorList(processors + [mask])
        return create_completion(self, *args, **kwargs)

    llama_cpp.Llama.create_completion = with_end_masked


def main():
    if "--ignore-eos" in sys.argv:
        sys.argv.remove("--ignore-eos")
        mask_end_of_generation()
    from llama_cpp.server.__main__ import main as serve

    sys.argv[0] = "llama_cpp.server"
    serve()


if __name__ == "__main__":
    main()
