#include "compute/experiments/serving/SchedulerLab.hpp"

#include "compute/experiments/bench/Bench.hpp"
#include "compute/experiments/serving/PrefixSharing.hpp"

namespace inferscope::compute::experiments {

const char* const kPrefixSystemPrompt =
    "You are the teaching assistant of an inference lab. Answer in one or two short "
    "sentences, in plain words, and say so when you are not sure. The student is "
    "learning what makes serving a language model cheap: batching, the KV cache and its "
    "blocks, quantized weights and speculative decoding.";

std::span<const char* const> prefixQuestions() {
    static const char* const questions[] = {
        "What is a KV cache?",        "Why does batching help?",
        "What is a block table?",     "What does prefill compute?",
        "Why is decoding slow?",      "What is continuous batching?",
        "What does quantization do?", "What is speculative decoding?"};
    return questions;
}

std::vector<ServingRequest> servingRequests(const LabContext& lab,
                                            const SchedulingRequest& request) {
    std::vector<ServingRequest> requests;
    if (request.mixFile) {
        for (const auto& entry : loadRequestMix(*request.mixFile)) {
            auto ids = lab.tokenizer().encode(entry.prompt, true, false);
            if (ids.empty())
                throw std::invalid_argument("a prompt of the mix file encodes to no tokens");
            requests.push_back({std::move(ids), entry.outputTokens});
        }
        return requests;
    }
    if (request.promptTokens == 0)
        throw std::invalid_argument("each generated request needs at least one prompt token");
    const auto lengths = skewedLengths(request.mix);
    const auto vocab = lab.model().config.vocabSize;
    for (std::size_t i = 0; i < lengths.size(); ++i)
        requests.push_back(
            {benchPrompt(request.promptTokens, vocab, 1000 + std::uint32_t(i)), lengths[i]});
    return requests;
}

SchedulerLab::Result SchedulerLab::run(LabContext& lab, const Request& request,
                                       const JobControl& control) {
    auto& engine = requireGpuEngine(lab, "the scheduler comparison");
    if (request.slotCount == 0)
        throw std::invalid_argument("the scheduler needs at least one slot");
    const auto requests = servingRequests(lab, request);
    SchedulerOptions options;
    options.slotCount = request.slotCount;
    options.verifyRequests = request.verifyRequests;
    options.simulateRequests = request.simulateRequests;
    options.simulateSlots = request.simulateSlots;
    options.mix = request.mix;
    options.chunkTokens = request.chunkTokens;
    options.progress = control.cancellingProgress();
    options.onTimeline = request.onTimeline;
    auto result = compareSchedulers(engine, requests, options);
    std::string prefixNote;
    if (request.prefixRequests > 0) {
        const auto& tokenizer = lab.tokenizer();
        const auto prefix = tokenizer.encode(kPrefixSystemPrompt, true, false);
        const auto questions = prefixQuestions();
        std::vector<std::vector<std::int32_t>> tails;
        std::size_t longest = 0;
        for (std::uint32_t i = 0; i < request.prefixRequests; ++i) {
            tails.push_back(tokenizer.encode(" Question " + std::to_string(i + 1) + ": " +
                                                 questions[i % questions.size()],
                                             false, false));
            longest = std::max(longest, prefix.size() + tails.back().size() +
                                            std::size_t(request.prefixOutputTokens));
        }
        // The demo's shared system prompt is fixed; a model whose context cannot hold it
        // still gets the scheduling tables, with the demo left out and said so.
        const std::size_t room = engine.kvCache().maxPositionsPerSequence();
        if (longest > room) {
            prefixNote = "Prefix sharing left out: its requests need " + std::to_string(longest) +
                         " positions and a sequence holds " + std::to_string(room) + " here.";
        } else {
            result.prefixSharing = comparePrefixSharing(
                engine, prefix, tails, request.prefixOutputTokens, control.cancellingProgress());
            result.blockSnapshots.push_back(result.prefixSharing->sharedSnapshot);
        }
    }
    auto tables = schedulerTables(result);
    if (!prefixNote.empty() && !tables.empty()) tables.front().notes.push_back(prefixNote);
    return tables;
}

} // namespace inferscope::compute::experiments
