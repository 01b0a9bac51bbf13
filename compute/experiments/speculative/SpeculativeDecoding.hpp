#pragma once
// Chapter item 12, speculative decoding: a cheap draft (the same model in a lab quantization
// scheme) proposes g tokens, the target verifies all of them in one step (the logits of every
// position of the chunk), the longest agreeing prefix plus the target's own next token is
// kept, and the rejected positions are rolled back from both caches. Greedy output is the
// target's, token for token; with sampling, the modified acceptance rule (accept d with
// min(1, p(d)/q(d)), else draw from max(0, p - q) normalised) keeps the target's distribution
// (Leviathan et al.). Whether it pays depends on two numbers this file measures: the
// acceptance rate alpha (the draft's greedy agreement with the target given the target's own
// context, the chapter's agreement column) and the draft's cost c per token as a fraction of
// the target's, both on this device.
#include "compute/Table.hpp"
#include "compute/engine/DecoderBackend.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace inferscope::compute::experiments {

// Tokens kept per verification with draft length g when each draft token is accepted with
// probability alpha independently: (1 - alpha^(g+1)) / (1 - alpha); g + 1 at alpha = 1.
double expectedTokensPerVerification(double alpha, std::uint32_t draftLength);
// Net speedup over the target alone when a draft step costs c target steps and the
// verification costs one: expectedTokensPerVerification / (g c + 1).
double speculativeSpeedup(double alpha, std::uint32_t draftLength, double draftCost);
// The same on a device where verifying g + 1 positions costs verifyCost target steps (about
// one on a memory-bound GPU, as the chapter assumes; more where the step is compute-bound):
// expectedTokensPerVerification / (g c + v(g)).
double speculativeSpeedupOnDevice(double alpha, std::uint32_t draftLength, double draftCost,
                                  double verifyCost);

// One draw from a distribution (probabilities summing to 1, or to any positive total).
std::int32_t drawToken(std::span<const double> probabilities, std::mt19937_64& random);

struct SpeculativeOptions {
    std::uint32_t draftLength = 4; // g
    std::int32_t maxNewTokens = 64;
    double temperature = 0; // 0: greedy; > 0: softmax(logits / T), no top-k or top-p
    std::uint64_t seed = 0;
    std::vector<std::int32_t> stopTokens; // generation ends after one of these
    std::function<bool()> cancelled;
};

struct SpeculativeRun {
    std::uint32_t draftLength = 0;
    std::vector<std::int32_t> tokens; // generated (the prompt not included)
    std::uint32_t verifications = 0;  // target steps after the prompt
    std::uint32_t proposed = 0;       // draft tokens the target checked
    std::uint32_t accepted = 0;
    // Per draft index k = 1..g: proposals whose first k - 1 tokens were accepted (so token k
    // was checked), and those whose token k was accepted too.
    std::vector<std::uint32_t> reachedAt, acceptedAt;
    double promptSeconds = 0; // both backends over the prompt
    double draftSeconds = 0;  // draft steps after the prompt
    double verifySeconds = 0; // target steps after the prompt
    double generateSeconds = 0;
    bool cancelled = false;
    double acceptance() const { return proposed ? double(accepted) / proposed : 0; }
    double tokensPerVerification() const {
        return verifications ? double(tokens.size()) / verifications : 0;
    }
    double secondsPerToken() const { return tokens.empty() ? 0 : generateSeconds / tokens.size(); }
};

// Both backends start empty (reset here). Throws std::invalid_argument for g = 0, an empty
// prompt or a temperature below 0.
SpeculativeRun runSpeculative(DecoderBackend& target, DecoderBackend& draft,
                              std::span<const std::int32_t> prompt,
                              const SpeculativeOptions& options);

// The target alone (the baseline), greedy or sampled at options.temperature with its seed,
// one token per step, with every decode step's seconds.
struct SingleModelRun {
    std::vector<std::int32_t> tokens;
    std::vector<double> stepSeconds; // decode steps after the prompt
    double promptSeconds = 0;
    double generateSeconds = 0; // first token to last (the prompt step's logits give the first)
    bool cancelled = false;
    // Per decode step: the first token came with the prompt.
    double secondsPerToken() const {
        return stepSeconds.empty() ? 0 : generateSeconds / stepSeconds.size();
    }
};
SingleModelRun runAlone(DecoderBackend& model, std::span<const std::int32_t> prompt,
                        const SpeculativeOptions& options);

// The draft given the target's context: the prompt, then the target's tokens one decode step
// at a time; at each position, does the draft's greedy token equal the target's?
struct DraftAgreement {
    std::string scheme;
    std::vector<bool> agrees;        // per generated position
    std::vector<double> stepSeconds; // the draft's decode steps
    std::uint64_t weightBytes = 0;   // on the device
    std::uint64_t deviceBytes = 0;   // everything its backend holds there
    double alpha() const;
};
DraftAgreement measureAgreement(DecoderBackend& draft, std::span<const std::int32_t> prompt,
                                std::span<const std::int32_t> targetTokens,
                                const std::function<bool()>& cancelled = {});

double medianOf(std::vector<double> values);

// A backend in a weight format, with what it holds on the device (0 where it cannot tell):
// one of its own (`owned`), or one lent for the study (the session's engine re-packed).
struct FormatBackend {
    std::unique_ptr<DecoderBackend> owned;
    DecoderBackend* backend = nullptr; // owned.get() or the lent one
    std::uint64_t weightBytes = 0;
    std::uint64_t deviceBytes = 0;
};
using FormatBackendFactory = std::function<FormatBackend(const std::string& format)>;

struct SpeculativeStudyOptions {
    std::string targetFormat = "fp16";
    std::vector<std::string> draftFormats = {"int8-row", "int4-g128", "nf4-b64", "int4-tensor"};
    std::uint32_t positions = 144; // generated positions for alpha and the step times
    std::vector<std::uint32_t> runDraftLengths = {2, 4, 8};
    std::int32_t runTokens = 64; // tokens of each real run (and of the target alone)
    std::string runDraft;        // empty: the draft with the best predicted speedup
    double temperature = 0;
    std::uint64_t seed = 0;
    std::function<void(const std::string& stage, int percent)> progress;
    std::function<bool()> cancelled;
};

struct SpeculativeRunSummary {
    SpeculativeRun run;
    bool identicalToTarget = false; // greedy: the same tokens as the target alone
};

// Everything the tables and the panel show, kept whole.
struct SpeculativeStudy {
    std::string target; // "fp16 on <device>"
    std::uint64_t targetWeightBytes = 0, targetDeviceBytes = 0;
    std::vector<std::int32_t> promptIds;
    double targetStepSeconds = 0; // median decode step of the target alone
    std::vector<DraftAgreement> drafts;
    std::string runDraft; // the draft of the real runs
    double temperature = 0;
    SingleModelRun targetAlone; // runTokens tokens, the baseline of the real runs
    std::vector<SpeculativeRunSummary> runs;
    bool cancelled = false;

    double draftCost(const DraftAgreement& draft) const; // median step / target's median step
    // c as the real runs paid it: their draft seconds per proposed token over the target alone's
    // step beside them (v(g)'s baseline; a shared machine's load in the agreement phase may not
    // be theirs); the run draft's draftCost without runs.
    double runDraftCost() const;
    // Seconds per token of the target alone over a real run's (0 when either is unknown).
    double measuredSpeedup(const SpeculativeRun& run) const;
    const DraftAgreement* findDraft(const std::string& scheme) const;
    // v(g): a real run's mean verification step over the target alone's step beside the runs
    // (their speedup's baseline; the agreement phase's median step without it), 0 when
    // either is unknown.
    double verifyCost(const SpeculativeRun& run) const;
    // v(g) for any g from the real runs: measured where g ran, on the line between the two
    // runs around it; below the shortest run (or with one run) that run's value; beyond the
    // longest, along the line through the last two, never falling; 0 without runs.
    double verifyCostAt(std::uint32_t draftLength) const;
};
using SpeculativeStudyPtr = std::shared_ptr<const SpeculativeStudy>;

// Builds the target once (makeTarget(options.targetFormat)) and each draft (makeDraft) while
// the target stays resident, measures alpha and c per draft over `positions` greedy target
// tokens, then runs the chosen draft for real at each draft length. Throws
// std::invalid_argument for a bad option (g = 0, no drafts, ...).
SpeculativeStudy runSpeculativeStudy(const FormatBackendFactory& makeTarget,
                                     const FormatBackendFactory& makeDraft,
                                     std::span<const std::int32_t> promptIds,
                                     const SpeculativeStudyOptions& options);

// Tables "speculative-acceptance" (per draft: memory beside the target's, alpha, step time, c,
// the best g and its predicted speedup), "speculative-formula" (g = 1..8 for the run's draft:
// predicted tokens per verification and speedup, the chapter's and this device's from v(g),
// beside the measured ones),
// "speculative-runs" (each real run: tokens, verifications, acceptance, wall time, speedup
// over the target alone, identical or not) and "speculative-positions" (per draft index of
// the longest run: how often it was reached and accepted, beside alpha^(k-1)).
std::vector<Table> speculativeTables(const SpeculativeStudy& study);
// The formula table's note that says in numbers why the chapter's prediction (verification
// costs one target step) and this device's (it costs v(g)) part, per g that ran; empty
// without runs.
std::string speculativeVerifyNote(const SpeculativeStudy& study);

} // namespace inferscope::compute::experiments
