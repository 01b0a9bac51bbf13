#include "compute/experiments/speculative/SpeculativeLab.hpp"

#include "compute/engine/VulkanBackend.hpp"
#include "compute/formats/GpuWeightPacking.hpp"
#include "compute/lab/SessionEngineLease.hpp"

#include <optional>

namespace inferscope::compute::experiments {

namespace {
void requireKernel(const std::string& name, const char* what) {
    if (!weightFormatFromName(name))
        throw std::invalid_argument(std::string("no GPU kernel for the ") + what + " '" + name +
                                    "' (one of " + weightFormatNames() + ")");
}
// The target's head as the file stores it where that takes fewer bits than the target's
// format: the exact values, in less memory (the default model's tied Q8_0 head: 30 MB, not
// 57 in fp16). Otherwise it follows the format. A draft's head is always in the draft's
// format: its cost is part of what the draft saves.
std::optional<WeightFormat> targetHeadFormat(const models::LoadedModel& model,
                                             const std::string& target) {
    const auto* head = model.weights.find("output.weight");
    if (!head) head = model.weights.find("token_embd.weight");
    const auto format = weightFormatFromName(target);
    if (!head || !format) return std::nullopt;
    const std::uint32_t cols = model.config.hiddenSize;
    const double storedBits = weightFormatInfo(formatForStoredType(head->type)).bitsForRows(cols);
    return storedBits < weightFormatInfo(*format).bitsForRows(cols)
               ? std::optional(WeightFormat::AsStored)
               : std::nullopt;
}
// A draft is fed one or two tokens a step. Its prompt runs in the same small tiles, so it never
// builds the prefill pipelines that only its prompt would use: on lavapipe about 30 MB of
// compiled code, held beside the target's (docs/performance-notes.md).
KernelTuning withStepTilesOnly(KernelTuning tuning) {
    tuning.prefillTokens = 2;
    tuning.int8PrefillTokens = 0;
    tuning.prefillSlots = tuning.decodeSlots;
    return tuning;
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
    const auto targetHead = targetHeadFormat(*model, study.targetFormat);
    // The device's kernel tuning: the session engine's, else that of the first engine built
    // (the target).
    std::optional<KernelTuning> deviceTuning;
    if (session) deviceTuning = session->tuning();
    const auto ownEngine = [model, options, longest,
                            &deviceTuning](std::optional<WeightFormat> head, bool draft) {
        return [model, options, head, longest, draft, &deviceTuning](const std::string& name) {
            auto engineOptions = options;
            engineOptions.weightFormat = *weightFormatFromName(name);
            engineOptions.headFormat = head;
            // Logits of at most g + 1 rows a step (a verification): 64 rows would hold 12 MB.
            engineOptions.maxLogitRowsPerStep = longest + 1;
            if (draft && deviceTuning) engineOptions.tuning = withStepTilesOnly(*deviceTuning);
            auto built = std::make_shared<Engine>(*model, engineOptions);
            if (!deviceTuning) deviceTuning = built->tuning();
            FormatBackend result;
            result.weightBytes = built->memory().weightBytes;
            result.deviceBytes = built->memory().deviceBytes;
            result.owned = std::make_unique<VulkanBackend>(std::move(built));
            result.backend = result.owned.get();
            return result;
        };
    };
    const FormatBackendFactory ownTarget = ownEngine(targetHead, false);
    const FormatBackendFactory ownDraft = ownEngine(options.headFormat, true);
    const bool lendSession = session && !session->tuning().int8Activations &&
                             session->kvCache().maxPositionsPerSequence() >= positions &&
                             session->kvCache().capacityBlocks() * session->kvCache().blockSize() >=
                                 positions + options.blockSize;
    std::optional<SessionEngineLease> lease;
    const FormatBackendFactory sessionEngine = [&](const std::string& name) {
        lease.emplace(lab, *session);
        FormatBackend result;
        result.backend =
            &lease->repack(*weightFormatFromName(name), targetHead, options.kvCapacityTokens);
        result.weightBytes = session->memory().weightBytes;
        result.deviceBytes = session->memory().deviceBytes;
        return result;
    };
    auto studyOptions = study;
    studyOptions.progress = control.cancellingProgress();
    studyOptions.cancelled = [&control] { return control.cancelled(); };
    auto result =
        runSpeculativeStudy(lendSession ? sessionEngine : ownTarget, ownDraft, ids, studyOptions);
    if (lease) lease->giveBack();
    if (result.cancelled) throw JobCancelled();
    return std::make_shared<const SpeculativeStudy>(std::move(result));
}

std::vector<Table> SpeculativeLab::tables(const Result& result) {
    return result ? speculativeTables(*result) : std::vector<Table>{};
}

} // namespace inferscope::compute::experiments
