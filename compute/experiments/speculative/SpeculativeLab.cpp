#include "compute/experiments/speculative/SpeculativeLab.hpp"

#include "compute/engine/VulkanBackend.hpp"
#include "compute/lab/SessionEngineLease.hpp"

#include <optional>

namespace inferscope::compute::experiments {

namespace {
void requireKernel(const std::string& name, const char* what) {
    if (!weightFormatFromName(name))
        throw std::invalid_argument(std::string("no GPU kernel for the ") + what + " '" + name +
                                    "' (one of " + weightFormatNames() + ")");
}
} // namespace

SpeculativeLab::Result SpeculativeLab::run(LabContext& lab, const Request& request,
                                           const JobControl& control) {
    // The drafts are engines of their own on the session engine's device (or, for a session
    // loaded without a backend, the request's). The target is the session's engine re-packed
    // into the target format where it can be (it then needs no second copy of the model on the
    // device); an engine of its own where the session rounds activations to int8 or its
    // sequences are too short.
    EngineOptions options = request.engine.value_or(EngineOptions{});
    Engine* session = nullptr;
    if (lab.hasBackend()) {
        session = &requireGpuEngine(lab, "speculative decoding");
        options = session->options();
    }
    const auto& study = request.study;
    for (const auto& name : study.draftFormats) requireKernel(name, "draft scheme");
    requireKernel(study.targetFormat, "target format");
    if (!study.runDraft.empty()) requireKernel(study.runDraft, "draft scheme");
    std::uint32_t longest = 1;
    for (auto g : study.runDraftLengths) longest = std::max(longest, g);
    PromptSpec prompt;
    prompt.prompt = request.prompt;
    prompt.chat = request.chat;
    // The context must hold the longest run plus one draft that may be rolled back.
    prompt.maxNewTokens = std::int32_t(
        std::max<std::uint32_t>(study.positions, std::uint32_t(study.runTokens)) + longest);
    const auto ids = lab.promptIds(prompt);

    // Each engine of the lab's own holds only its weights and a KV cache for one sequence.
    options.probes = {};
    options.cached = true;
    options.maxSequences = 1;
    options.maxContextPerSequence = 0;
    const std::uint32_t positions = std::uint32_t(ids.size()) + std::uint32_t(prompt.maxNewTokens);
    options.kvCapacityTokens =
        (positions + options.blockSize) / options.blockSize * options.blockSize;
    const auto model = lab.sharedModel();
    const FormatBackendFactory ownEngine = [model, options](const std::string& name) {
        auto engineOptions = options;
        engineOptions.weightFormat = *weightFormatFromName(name);
        auto built = std::make_shared<Engine>(*model, engineOptions);
        FormatBackend result;
        result.weightBytes = built->memory().weightBytes;
        result.deviceBytes = built->memory().deviceBytes;
        result.owned = std::make_unique<VulkanBackend>(std::move(built));
        result.backend = result.owned.get();
        return result;
    };
    const bool lendSession = session && !session->tuning().int8Activations &&
                             session->kvCache().maxPositionsPerSequence() >= positions &&
                             session->kvCache().capacityBlocks() * session->kvCache().blockSize() >=
                                 positions + options.blockSize;
    std::optional<SessionEngineLease> lease;
    const FormatBackendFactory sessionEngine = [&](const std::string& name) {
        lease.emplace(lab, *session);
        FormatBackend result;
        result.backend = &lease->repack(*weightFormatFromName(name), options.headFormat);
        result.weightBytes = session->memory().weightBytes;
        result.deviceBytes = session->memory().deviceBytes;
        return result;
    };
    auto studyOptions = study;
    studyOptions.progress = control.cancellingProgress();
    studyOptions.cancelled = [&control] { return control.cancelled(); };
    auto result =
        runSpeculativeStudy(lendSession ? sessionEngine : ownEngine, ownEngine, ids, studyOptions);
    if (lease) lease->giveBack();
    if (result.cancelled) throw JobCancelled();
    return std::make_shared<const SpeculativeStudy>(std::move(result));
}

std::vector<Table> SpeculativeLab::tables(const Result& result) {
    return result ? speculativeTables(*result) : std::vector<Table>{};
}

} // namespace inferscope::compute::experiments
