#include "compute/experiments/serving/PrefixSharing.hpp"

#include "compute/Stopwatch.hpp"
#include <algorithm>
#include <stdexcept>

namespace inferscope::compute::experiments {

namespace {

// Feeds each sequence its first input, then decodes greedily until every one has `tokens`
// outputs; the first output comes from the prefill step. Adds to the run's prefill figures.
void prefillAndDecode(Engine& engine, const std::vector<SequenceInput>& firstInputs,
                      std::uint32_t tokens, PrefixSharingRun& run,
                      const std::function<void()>& afterPrefill = {}) {
    const auto start = Clock::now();
    auto step = engine.step(firstInputs);
    run.prefillSeconds += secondsSince(start);
    for (const auto& input : firstInputs) run.prefillTokens += std::uint32_t(input.tokens.size());
    run.blocksAfterPrefill = engine.kvCache().usedBlocks();
    if (afterPrefill) afterPrefill();
    run.outputs.assign(firstInputs.size(), {});
    for (std::size_t i = 0; i < firstInputs.size(); ++i)
        run.outputs[i].push_back(step.sequences[i].argmax.back());
    for (std::uint32_t t = 1; t < tokens; ++t) {
        std::vector<SequenceInput> inputs;
        for (std::size_t i = 0; i < firstInputs.size(); ++i)
            inputs.push_back({firstInputs[i].sequence, {run.outputs[i].back()}});
        step = engine.step(inputs);
        for (std::size_t i = 0; i < firstInputs.size(); ++i)
            run.outputs[i].push_back(step.sequences[i].argmax.back());
    }
    run.blocksAtEnd = engine.kvCache().usedBlocks();
}
} // namespace

PrefixSharingResult
comparePrefixSharing(Engine& engine, const std::vector<std::int32_t>& prefix,
                     const std::vector<std::vector<std::int32_t>>& tails,
                     std::uint32_t outputTokens,
                     const std::function<void(const std::string&, int)>& progress) {
    if (tails.empty())
        throw std::invalid_argument("prefix sharing needs at least one request (0 were asked)");
    if (prefix.empty()) throw std::invalid_argument("prefix sharing needs a non-empty prefix");
    if (outputTokens == 0)
        throw std::invalid_argument("prefix sharing needs at least one output token");
    const auto& cache = engine.kvCache();
    const auto n = std::uint32_t(tails.size());
    const std::uint32_t blockSize = cache.blockSize();
    std::uint64_t blocksNeeded = 0;
    std::uint32_t tailTokens = 0;
    for (std::size_t i = 0; i < tails.size(); ++i) {
        if (tails[i].empty())
            throw std::invalid_argument("prefix sharing: request " + std::to_string(i + 1) +
                                        " has no tokens after the prefix");
        // The last output token is never fed back, so it takes no position.
        const std::uint64_t positions = prefix.size() + tails[i].size() + outputTokens - 1;
        if (positions > cache.maxPositionsPerSequence())
            throw std::invalid_argument(
                "prefix sharing: request " + std::to_string(i + 1) + " needs " +
                std::to_string(positions) + " positions, more than the " +
                std::to_string(cache.maxPositionsPerSequence()) + " a sequence can hold");
        blocksNeeded += (positions + blockSize - 1) / blockSize;
        tailTokens += std::uint32_t(tails[i].size());
    }
    // The shared run holds one more sequence (the prefix) while it forks.
    if (n + 1 > cache.maxSequences())
        throw std::invalid_argument("prefix sharing: " + std::to_string(n) +
                                    " requests and the prefix exceed the engine's " +
                                    std::to_string(cache.maxSequences()) + " sequences");
    if (blocksNeeded > cache.capacityBlocks())
        throw std::invalid_argument("prefix sharing: " + std::to_string(n) +
                                    " requests without sharing need " +
                                    std::to_string(blocksNeeded) + " KV blocks; the cache has " +
                                    std::to_string(cache.capacityBlocks()));

    PrefixSharingResult result;
    result.requests = n;
    result.prefixTokens = std::uint32_t(prefix.size());
    result.blockSize = blockSize;
    result.outputTokens = outputTokens;
    result.tailTokens = tailTokens;
    // Only whole blocks can be shared: the partial last one would be written by each fork.
    result.sharedPositions = result.prefixTokens / blockSize * blockSize;
    auto report = [&](const std::string& stage, int percent) {
        if (progress) progress(stage, percent);
    };
    const SequenceId prefixSequence = SequenceId(n) + 1;
    auto requestOf = [n](SequenceId id) {
        return id >= 1 && id <= n ? KvOwner{"request " + std::to_string(id), std::int32_t(id - 1)}
                                  : KvOwner{"prefix", -1};
    };

    const auto savedProbes = engine.probes();
    engine.setProbes({});
    engine.reset();
    try {
        report("Prefix sharing: the prefix once, forked into " + std::to_string(n) + " requests",
               0);
        const auto shared = std::ptrdiff_t(result.sharedPositions);
        if (shared > 0) {
            const auto start = Clock::now();
            engine.step({{prefixSequence, {prefix.begin(), prefix.begin() + shared}}});
            result.shared.prefillSeconds += secondsSince(start);
            result.shared.prefillTokens += result.sharedPositions;
            for (std::uint32_t i = 0; i < n; ++i)
                if (engine.forkSequence(prefixSequence, SequenceId(i) + 1) !=
                    result.sharedPositions)
                    throw std::logic_error("prefix sharing: a fork shared an unexpected length");
            engine.release(prefixSequence); // the forks hold its blocks now
        }
        std::vector<SequenceInput> rest;
        for (std::uint32_t i = 0; i < n; ++i) {
            SequenceInput input{SequenceId(i) + 1, {prefix.begin() + shared, prefix.end()}};
            input.tokens.insert(input.tokens.end(), tails[i].begin(), tails[i].end());
            rest.push_back(std::move(input));
        }
        prefillAndDecode(engine, rest, outputTokens, result.shared, [&] {
            result.sharedSnapshot =
                snapshotKvCache(engine.kvCache(), "prefix sharing, after prefill", -1, n,
                                engine.kvCache().maxPositionsPerSequence(), requestOf);
        });
        engine.reset();

        report("Prefix sharing: each request prefills its whole prompt", 50);
        std::vector<SequenceInput> whole;
        for (std::uint32_t i = 0; i < n; ++i) {
            SequenceInput input{SequenceId(i) + 1, prefix};
            input.tokens.insert(input.tokens.end(), tails[i].begin(), tails[i].end());
            whole.push_back(std::move(input));
        }
        prefillAndDecode(engine, whole, outputTokens, result.unshared);
    } catch (...) {
        engine.reset();
        engine.setProbes(savedProbes);
        throw;
    }
    engine.reset();
    engine.setProbes(savedProbes);
    for (std::uint32_t i = 0; i < n; ++i)
        result.identicalOutputs += result.shared.outputs[i] == result.unshared.outputs[i];
    report("Prefix sharing: done", 100);
    return result;
}

Table prefixSharingTable(const PrefixSharingResult& r) {
    Table t;
    t.id = "prefix-sharing";
    t.title = "Prefix sharing: " + std::to_string(r.requests) + " requests with a common " +
              std::to_string(r.prefixTokens) + "-token prompt, " + std::to_string(r.outputTokens) +
              " greedy tokens each";
    t.addColumn("run")
        .addColumn("prefix positions shared per request")
        .addColumn("KV blocks after prefill")
        .addColumn("KV blocks at the end")
        .addColumn("prefill tokens computed")
        .addColumn("prefill time", "ms", 1)
        .addColumn("outputs identical");
    const std::string identical =
        std::to_string(r.identicalOutputs) + " of " + std::to_string(r.requests);
    t.addRow({std::string("with forkSequence"), std::int64_t(r.sharedPositions),
              std::int64_t(r.shared.blocksAfterPrefill), std::int64_t(r.shared.blocksAtEnd),
              std::int64_t(r.shared.prefillTokens), r.shared.prefillSeconds * 1e3, identical});
    t.addRow({std::string("without (each prefills all)"), std::int64_t(0),
              std::int64_t(r.unshared.blocksAfterPrefill), std::int64_t(r.unshared.blocksAtEnd),
              std::int64_t(r.unshared.prefillTokens), r.unshared.prefillSeconds * 1e3, identical});
    const auto sharedBlocks = r.blockSize ? r.sharedPositions / r.blockSize : 0;
    t.notes.push_back("Only full blocks are shared: " + std::to_string(sharedBlocks) +
                      " blocks of " + std::to_string(r.blockSize) + " positions of the " +
                      std::to_string(r.prefixTokens) +
                      "-token prefix are prefilled once and held by every request (reference "
                      "count " +
                      std::to_string(r.requests) +
                      "); the rest of the prefix sits in a partly filled block each request "
                      "writes itself.");
    t.notes.push_back("Saved: (requests - 1) x shared positions = " +
                      std::to_string((r.requests ? r.requests - 1 : 0) * r.sharedPositions) +
                      " prefill tokens and " +
                      std::to_string((r.requests ? r.requests - 1 : 0) * sharedBlocks) +
                      " KV blocks.");
    return t;
}

} // namespace inferscope::compute::experiments
