#pragma once
// Perplexity of a token stream by llama.cpp's llama-perplexity rule, for any model that can
// return the logits of every position of a window (the CPU reference, the GPU engine, ...).
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

namespace inferscope::models {

// Logits of every position of `window`, evaluated from an empty cache:
// window.size() rows of vocabSize values.
using WindowLogits = std::function<std::vector<float>(std::span<const std::int32_t> window)>;
// A window evaluated in pieces, so that no more than one piece's logits are held (a window of
// 8,192 tokens over a vocabulary of 49,152 would be 1.6 GB of logits): `restart` starts a new
// window from an empty cache with these tokens, otherwise they follow the ones before; with
// `wantLogits` the logits of each of the tokens (tokens.size() rows), else none.
using WindowPieces = std::function<std::vector<float>(std::span<const std::int32_t> tokens,
                                                      bool restart, bool wantLogits)>;

struct PerplexityOptions {
    std::uint32_t context = 512; // window (chunk) size, llama-perplexity's -c
    // Replaces each chunk's first token when the model adds BOS (tokenizer addBos);
    // nullopt when it does not (SmolLM2).
    std::optional<std::int32_t> bosId;
    std::uint64_t tokenLimit = 0;     // use only the first N tokens; 0: all
    std::uint32_t rowsPerPiece = 256; // scored positions asked for at once (WindowPieces)
    // Called after each chunk with its index (from 0), the chunk count and the running value.
    std::function<void(std::uint32_t chunk, std::uint32_t chunks, double runningPerplexity)>
        progress;
};

struct PerplexityResult {
    double perplexity = 0.0;        // exp(meanNll)
    double meanNll = 0.0;           // mean negative log-likelihood per scored token (nats)
    std::uint64_t scoredTokens = 0; // chunks * (context - 1 - context / 2)
    std::uint32_t chunks = 0;
    std::vector<double> chunkMeanNll; // per chunk, for charts
    // Per scored token, in order: what two runs over the same text are compared on (paired).
    std::vector<double> tokenNll;
};

// Throws std::invalid_argument when there is not one full chunk to score, the context is
// below 3 (nothing to score) or the callback returns the wrong number of logits.
PerplexityResult computePerplexity(std::span<const std::int32_t> tokens, std::uint32_t vocabSize,
                                   const PerplexityOptions& options, const WindowPieces& pieces);
// The same from whole windows (tests, small windows): one call per window.
PerplexityResult computePerplexity(std::span<const std::int32_t> tokens, std::uint32_t vocabSize,
                                   const PerplexityOptions& options, const WindowLogits& logits);

} // namespace inferscope::models
