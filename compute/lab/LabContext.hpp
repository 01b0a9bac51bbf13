#pragma once
// What a lab's job sees of the session it runs in: the loaded model, its tokenizer and chat
// format, the backend that runs it, and what the session measures once per load. Every
// experiment's job is run(LabContext&, const Request&, const JobControl&); LabSession
// (compute/session) implements this, so an experiment never names the session's own type and
// a new experiment is its own files, not one more member of the session.
#include "compute/engine/DecoderBackend.hpp"
#include "compute/lab/ActivationRecording.hpp"
#include "models/LoadedModel.hpp"
#include "models/tokenizer/ChatTemplate.hpp"
#include "models/tokenizer/Tokenizer.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace inferscope::compute {

class Engine;

// A prompt as a lab asks for it.
struct PromptSpec {
    std::string prompt;
    // When set: the prompt as token ids, used as they are (no template, no tokenizer), e.g. a
    // prompt of exactly P tokens for an operation count.
    std::vector<std::int32_t> promptTokenIds;
    bool chat = true; // wrap the prompt in the model's chat template
    std::string systemPrompt;
    // The tokens that will follow the prompt: the prompt and these must fit the context.
    std::int32_t maxNewTokens = 64;
};

class LabContext {
public:
    virtual ~LabContext() = default;

    // Each of these throws std::invalid_argument("no model is loaded") without a model.
    virtual bool hasModel() const = 0;
    virtual const models::LoadedModel& model() const = 0;
    virtual std::shared_ptr<const models::LoadedModel> sharedModel() const = 0;
    virtual const models::Tokenizer& tokenizer() const = 0;
    virtual const std::optional<models::ChatFormat>& chatFormat() const = 0;
    // The backend that generates; backend() throws std::logic_error for a session loaded
    // without one (the CLI's reports that build engines of their own).
    virtual bool hasBackend() const = 0;
    virtual DecoderBackend& backend() = 0;
    // The prompt as token ids: the chat template applied, checked against the vocabulary and
    // against the context with room for maxNewTokens. Throws std::invalid_argument.
    virtual std::vector<std::int32_t> promptIds(const PromptSpec& prompt) const = 0;
    // The streaming read bandwidth of the backend's Vulkan device in bytes/s, measured the
    // first time a lab asks after a load (0 without a Vulkan backend).
    virtual double readBandwidth() = 0;
    // The prompt's residual stream on the CPU reference over the stored tensors (a reference
    // made once per load, no fp32 copy of the weights).
    virtual std::shared_ptr<const ResidualRecording>
    recordResidualStream(const std::vector<std::int32_t>& ids) = 0;
    // A lab re-packed the backend's engine and gave its weights back (the scheme labs): its
    // pipelines are new, so the session warms them up again before its next timed run.
    virtual void engineRepacked() = 0;
};

// The Vulkan engine behind the context's backend, or std::invalid_argument saying that `what`
// (e.g. "the batching sweep") runs on the Vulkan engine and the backend in use does not.
Engine& requireGpuEngine(LabContext& lab, const std::string& what);
// The engine when the context has a Vulkan backend, else nullptr.
Engine* gpuEngineOf(LabContext& lab);

} // namespace inferscope::compute
