#include "models/reference/Perplexity.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace inferscope::models {

// The rule of llama.cpp's llama-perplexity (tools/perplexity/perplexity.cpp, perplexity()):
// - the text is tokenized once (BOS in front only if the vocabulary adds it) and cut into
//   n = tokens / ctx non-overlapping chunks of ctx tokens; the tail is dropped;
// - when the vocabulary adds BOS, each chunk's first token is replaced by BOS;
// - each chunk is evaluated from an empty KV cache, and only its second half is scored
//   ("so the model always has some context"): the logits at positions first = ctx/2 ..
//   ctx-2 predict the token after each, ctx - 1 - ctx/2 tokens per chunk;
// - PPL = exp(sum of -log softmax(logits)[next token] / scored tokens).
// llama-perplexity insists on two chunks; one is allowed here so short texts and token limits
// still give a number.
namespace {

// Rows start .. start + count - 1 of the logits of `window` (a chunk, BOS already in place).
using WindowRows = std::function<std::vector<float>(std::span<const std::int32_t> window,
                                                    std::size_t start, std::size_t count)>;

PerplexityResult perplexityFromRows(std::span<const std::int32_t> tokens, std::uint32_t vocabSize,
                                    const PerplexityOptions& options, std::size_t rowsPerCall,
                                    const WindowRows& windowRows) {
    const std::size_t ctx = options.context;
    if (ctx < 3) throw std::invalid_argument("perplexity context must be at least 3 tokens");
    if (vocabSize == 0) throw std::invalid_argument("perplexity needs a vocabulary size");
    std::size_t available = tokens.size();
    if (options.tokenLimit) available = std::min<std::size_t>(available, options.tokenLimit);
    const std::size_t chunks = available / ctx;
    if (chunks == 0)
        throw std::invalid_argument("perplexity needs at least " + std::to_string(ctx) +
                                    " tokens, got " + std::to_string(available));
    const std::size_t first = ctx / 2;

    PerplexityResult result;
    result.chunks = static_cast<std::uint32_t>(chunks);
    double totalNll = 0.0; // thousands of terms: summed in double
    std::vector<std::int32_t> window(ctx);
    for (std::size_t chunk = 0; chunk < chunks; ++chunk) {
        const auto begin = tokens.begin() + std::ptrdiff_t(chunk * ctx);
        std::copy(begin, begin + std::ptrdiff_t(ctx), window.begin());
        if (options.bosId) window[0] = *options.bosId;
        double chunkNll = 0.0;
        for (std::size_t start = first; start + 1 < ctx; start += rowsPerCall) {
            const std::size_t count = std::min(rowsPerCall, ctx - 1 - start);
            const std::vector<float> rows = windowRows(window, start, count);
            if (rows.size() != count * std::size_t(vocabSize))
                throw std::invalid_argument("window logits: expected " +
                                            std::to_string(count * std::size_t(vocabSize)) +
                                            " values, got " + std::to_string(rows.size()));
            for (std::size_t r = 0; r < count; ++r) {
                const std::size_t position = start + r;
                const float* row = &rows[r * vocabSize];
                // The target is the original next token (only position 0 was replaced by BOS).
                const std::int32_t target = begin[std::ptrdiff_t(position + 1)];
                if (target < 0 || std::uint32_t(target) >= vocabSize)
                    throw std::invalid_argument("token id " + std::to_string(target) +
                                                " outside the vocabulary");
                // -log softmax(row)[target] = log(sum exp(row - max)) - (row[target] - max).
                const float maxLogit = *std::max_element(row, row + vocabSize);
                double sum = 0.0;
                for (std::size_t i = 0; i < vocabSize; ++i)
                    sum += std::exp(double(row[i] - maxLogit));
                const double nll = std::log(sum) - double(row[target] - maxLogit);
                result.tokenNll.push_back(nll);
                chunkNll += nll;
            }
        }
        const std::size_t scored = ctx - 1 - first;
        totalNll += chunkNll;
        result.scoredTokens += scored;
        result.chunkMeanNll.push_back(chunkNll / double(scored));
        if (options.progress)
            options.progress(static_cast<std::uint32_t>(chunk), result.chunks,
                             std::exp(totalNll / double(result.scoredTokens)));
    }
    result.meanNll = totalNll / double(result.scoredTokens);
    result.perplexity = std::exp(result.meanNll);
    return result;
}

} // namespace

PerplexityResult computePerplexity(std::span<const std::int32_t> tokens, std::uint32_t vocabSize,
                                   const PerplexityOptions& options, const WindowPieces& pieces) {
    const std::size_t first = options.context / 2;
    // The first half is context only; the scored half follows it in pieces (the window's last
    // token predicts nothing inside it, so it is not run).
    const WindowRows rows = [&](std::span<const std::int32_t> window, std::size_t start,
                                std::size_t count) {
        if (start == first) pieces(window.first(first), true, false);
        return pieces(window.subspan(start, count), false, true);
    };
    return perplexityFromRows(tokens, vocabSize, options,
                              std::max<std::uint32_t>(1, options.rowsPerPiece), rows);
}

PerplexityResult computePerplexity(std::span<const std::int32_t> tokens, std::uint32_t vocabSize,
                                   const PerplexityOptions& options, const WindowLogits& logits) {
    const WindowRows rows = [&](std::span<const std::int32_t> window, std::size_t start,
                                std::size_t count) -> std::vector<float> {
        const std::vector<float> all = logits(window);
        if (all.size() != window.size() * std::size_t(vocabSize))
            throw std::invalid_argument("window logits: expected " +
                                        std::to_string(window.size() * std::size_t(vocabSize)) +
                                        " values, got " + std::to_string(all.size()));
        return {all.begin() + std::ptrdiff_t(start * vocabSize),
                all.begin() + std::ptrdiff_t((start + count) * vocabSize)};
    };
    // One call per window: every scored row at once.
    return perplexityFromRows(tokens, vocabSize, options, options.context, rows);
}

} // namespace inferscope::models
