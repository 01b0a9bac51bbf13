#include "compute/experiments/speculative/SpeculativeDecoding.hpp"

#include "compute/Stopwatch.hpp"
#include "compute/experiments/softlabels/SoftLabels.hpp"
#include "models/reference/Sampler.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>

namespace inferscope::compute::experiments {

namespace {

bool isCancelled(const std::function<bool()>& cancelled) {
    return cancelled && cancelled();
}

void checkOptions(const SpeculativeOptions& options, std::span<const std::int32_t> prompt) {
    if (options.draftLength == 0) throw std::invalid_argument("the draft length g must be >= 1");
    if (prompt.empty()) throw std::invalid_argument("speculative decoding needs a prompt");
    if (!(options.temperature >= 0) || !std::isfinite(options.temperature))
        throw std::invalid_argument("the temperature must be 0 (greedy) or above");
    if (options.maxNewTokens < 1) throw std::invalid_argument("generate at least one token");
}

// One position's token choice: greedy, or a draw at the temperature.
struct TokenChooser {
    double temperature;
    std::mt19937_64 random;
    std::int32_t choose(std::span<const float> logits, std::vector<double>* distribution) {
        if (temperature == 0) return models::argmax(logits);
        *distribution = softmaxAtTemperature(logits, temperature);
        return drawToken(*distribution, random);
    }
    double uniform() { return std::uniform_real_distribution<double>(0.0, 1.0)(random); }
};

std::span<const float> row(const std::vector<float>& logits, std::size_t index,
                           std::uint32_t vocab) {
    return std::span<const float>(logits).subspan(index * vocab, vocab);
}

// Runs the prompt, all but its last token (which the first step of the loop feeds), so
// every later step of either backend starts with the tokens it has not seen yet.
double feedPromptHead(DecoderBackend& model, std::span<const std::int32_t> prompt) {
    const auto start = Clock::now();
    model.reset();
    if (prompt.size() > 1) model.append(prompt.first(prompt.size() - 1));
    return secondsSince(start);
}

bool keep(std::vector<std::int32_t>& tokens, std::int32_t token, const SpeculativeOptions& o) {
    tokens.push_back(token);
    const bool stop =
        std::find(o.stopTokens.begin(), o.stopTokens.end(), token) != o.stopTokens.end();
    return !stop && std::int32_t(tokens.size()) < o.maxNewTokens;
}

} // namespace

double expectedTokensPerVerification(double alpha, std::uint32_t g) {
    if (alpha >= 1) return g + 1.0;
    return (1 - std::pow(alpha, double(g) + 1)) / (1 - alpha);
}

double speculativeSpeedup(double alpha, std::uint32_t g, double c) {
    return speculativeSpeedupOnDevice(alpha, g, c, 1.0);
}

double speculativeSpeedupOnDevice(double alpha, std::uint32_t g, double c, double v) {
    return expectedTokensPerVerification(alpha, g) / (double(g) * c + v);
}

std::int32_t drawToken(std::span<const double> p, std::mt19937_64& random) {
    double total = 0;
    for (double x : p) total += x;
    if (!(total > 0)) throw std::invalid_argument("a distribution with no mass");
    const double u = std::uniform_real_distribution<double>(0.0, total)(random);
    double sum = 0;
    std::int32_t last = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
        if (p[i] <= 0) continue;
        sum += p[i];
        last = std::int32_t(i);
        if (u < sum) return last;
    }
    return last; // rounding left u at the very top
}

SpeculativeRun runSpeculative(DecoderBackend& target, DecoderBackend& draft,
                              std::span<const std::int32_t> prompt,
                              const SpeculativeOptions& options) {
    checkOptions(options, prompt);
    const std::uint32_t g = options.draftLength;
    const std::uint32_t vocab = target.vocabSize();
    if (draft.vocabSize() != vocab)
        throw std::invalid_argument("draft and target have different vocabularies");
    SpeculativeRun run;
    run.draftLength = g;
    run.reachedAt.assign(g, 0);
    run.acceptedAt.assign(g, 0);
    run.promptSeconds = feedPromptHead(target, prompt) + feedPromptHead(draft, prompt);

    // The sequence both models agree on; each has seen all of it but its last token(s).
    std::vector<std::int32_t> committed(prompt.begin(), prompt.end());
    TokenChooser chooser{options.temperature, std::mt19937_64(options.seed)};
    std::vector<std::int32_t> proposal(g);
    std::vector<std::vector<double>> q(g); // the draft's distributions (sampling)
    const auto start = Clock::now();
    bool going = true;
    while (going) {
        if (isCancelled(options.cancelled)) {
            run.cancelled = true;
            break;
        }
        // Draft: g tokens, one step each (the first step also feeds what it has not seen).
        auto draftStart = Clock::now();
        std::vector<std::int32_t> feed(committed.begin() + draft.length(), committed.end());
        for (std::uint32_t k = 0; k < g; ++k) {
            const auto logits = draft.append(feed);
            proposal[k] = chooser.choose(logits, &q[k]);
            feed.assign(1, proposal[k]);
        }
        run.draftSeconds += secondsSince(draftStart);

        // Target: its unseen tokens and the whole proposal in one step, all logits.
        const std::uint32_t targetSeen = target.length();
        std::vector<std::int32_t> verify(committed.begin() + targetSeen, committed.end());
        const std::size_t first = verify.size() - 1; // the row that judges proposal[0]
        verify.insert(verify.end(), proposal.begin(), proposal.end());
        const auto verifyStart = Clock::now();
        const auto logits = target.appendAllLogits(verify);
        run.verifySeconds += secondsSince(verifyStart);
        ++run.verifications;

        std::uint32_t accepted = 0;
        std::int32_t next = -1; // the target's own token after the accepted prefix
        std::vector<double> p;
        for (std::uint32_t k = 0; k < g; ++k) {
            const auto judge = row(logits, first + k, vocab);
            ++run.reachedAt[k];
            ++run.proposed;
            bool ok;
            if (options.temperature == 0) {
                next = models::argmax(judge);
                ok = next == proposal[k];
            } else {
                p = softmaxAtTemperature(judge, options.temperature);
                const double pd = p[proposal[k]], qd = q[k][proposal[k]];
                ok = chooser.uniform() < std::min(1.0, pd / qd);
                if (!ok) {
                    // Resample from what the target wants more than the draft offered.
                    for (std::size_t i = 0; i < p.size(); ++i) p[i] = std::max(0.0, p[i] - q[k][i]);
                    next = drawToken(p, chooser.random);
                }
            }
            if (!ok) break;
            ++accepted;
            ++run.acceptedAt[k];
            ++run.accepted;
        }
        if (accepted == g) { // every proposal kept: the target's token after the last one
            const auto last = row(logits, first + g, vocab);
            next = options.temperature == 0 ? models::argmax(last) : chooser.choose(last, &p);
        }

        const std::size_t before = run.tokens.size();
        for (std::uint32_t k = 0; k < accepted && going; ++k)
            going = keep(run.tokens, proposal[k], options);
        if (going) going = keep(run.tokens, next, options);
        committed.insert(committed.end(), run.tokens.begin() + std::ptrdiff_t(before),
                         run.tokens.end());
        // Roll back what was rejected (and what a finished run did not keep): both hold the
        // committed tokens but the last, which neither has seen yet.
        const auto seen = std::uint32_t(committed.size() - 1);
        target.truncate(std::min(target.length(), seen));
        draft.truncate(std::min(draft.length(), seen));
    }
    run.generateSeconds = secondsSince(start);
    return run;
}

SingleModelRun runAlone(DecoderBackend& model, std::span<const std::int32_t> prompt,
                        const SpeculativeOptions& options) {
    checkOptions(options, prompt);
    SingleModelRun run;
    const auto promptStart = Clock::now();
    model.reset();
    auto logits = model.append(prompt);
    run.promptSeconds = secondsSince(promptStart);
    TokenChooser chooser{options.temperature, std::mt19937_64(options.seed)};
    std::vector<double> p;
    const auto start = Clock::now();
    while (true) {
        const std::int32_t token = chooser.choose(logits, &p);
        if (!keep(run.tokens, token, options)) break;
        if (isCancelled(options.cancelled)) {
            run.cancelled = true;
            break;
        }
        const auto stepStart = Clock::now();
        logits = model.append(std::span<const std::int32_t>(&token, 1));
        run.stepSeconds.push_back(secondsSince(stepStart));
    }
    run.generateSeconds = secondsSince(start);
    return run;
}

double DraftAgreement::alpha() const {
    if (agrees.empty()) return 0;
    return double(std::count(agrees.begin(), agrees.end(), true)) / double(agrees.size());
}

DraftAgreement measureAgreement(DecoderBackend& draft, std::span<const std::int32_t> prompt,
                                std::span<const std::int32_t> targetTokens,
                                const std::function<bool()>& cancelled) {
    if (prompt.empty()) throw std::invalid_argument("agreement needs a prompt");
    DraftAgreement result;
    draft.reset();
    auto logits = draft.append(prompt);
    for (std::size_t i = 0; i < targetTokens.size(); ++i) {
        result.agrees.push_back(models::argmax(logits) == targetTokens[i]);
        if (i + 1 == targetTokens.size()) break;
        if (isCancelled(cancelled)) break;
        const auto start = Clock::now();
        logits = draft.append(targetTokens.subspan(i, 1));
        result.stepSeconds.push_back(secondsSince(start));
    }
    return result;
}

double medianOf(std::vector<double> values) {
    if (values.empty()) return 0;
    const auto middle = values.begin() + std::ptrdiff_t(values.size() / 2);
    std::nth_element(values.begin(), middle, values.end());
    if (values.size() % 2) return *middle;
    return (*middle + *std::max_element(values.begin(), middle)) / 2;
}

double SpeculativeStudy::draftCost(const DraftAgreement& draft) const {
    return targetStepSeconds > 0 ? medianOf(draft.stepSeconds) / targetStepSeconds : 0;
}

double SpeculativeStudy::runDraftCost() const {
    double seconds = 0, proposed = 0;
    for (const auto& r : runs)
        if (!r.run.cancelled) {
            seconds += r.run.draftSeconds;
            proposed += r.run.proposed;
        }
    const double step = targetAlone.secondsPerToken();
    if (proposed > 0 && seconds > 0 && step > 0) return seconds / proposed / step;
    const auto* draft = findDraft(runDraft);
    return draft ? draftCost(*draft) : 0;
}

double SpeculativeStudy::measuredSpeedup(const SpeculativeRun& run) const {
    const double alone = targetAlone.secondsPerToken(), speculative = run.secondsPerToken();
    return alone > 0 && speculative > 0 ? alone / speculative : 0;
}

double SpeculativeStudy::verifyCost(const SpeculativeRun& run) const {
    // In steps of the target alone run beside the real runs, the baseline of their measured
    // speedup: on a shared machine the load of the agreement phase may not be theirs.
    const double step =
        targetAlone.secondsPerToken() > 0 ? targetAlone.secondsPerToken() : targetStepSeconds;
    if (!(step > 0) || run.verifications == 0 || run.cancelled) return 0;
    return run.verifySeconds / run.verifications / step;
}

double SpeculativeStudy::verifyCostAt(std::uint32_t g) const {
    std::map<std::uint32_t, double> measured; // g -> v(g), the last run of a g
    for (const auto& r : runs)
        if (const double v = verifyCost(r.run); v > 0) measured[r.run.draftLength] = v;
    if (measured.empty()) return 0;
    if (auto exact = measured.find(g); exact != measured.end()) return exact->second;
    // Below the shortest run, or one run only: its value (a verification of fewer positions
    // costs no more).
    if (g < measured.begin()->first || measured.size() == 1) return measured.begin()->second;
    auto upper = measured.lower_bound(g);
    if (upper != measured.end()) { // between two runs: on the line through them
        const auto lower = std::prev(upper);
        const double slope = (upper->second - lower->second) / double(upper->first - lower->first);
        return lower->second + slope * (double(g) - double(lower->first));
    }
    // Beyond the longest run: along the line through the last two, never falling (noise in
    // two short runs can tilt it down; more positions do not verify faster).
    const auto last = std::prev(measured.end()), before = std::prev(last);
    const double slope =
        std::max(0.0, (last->second - before->second) / double(last->first - before->first));
    return last->second + slope * (double(g) - double(last->first));
}

const DraftAgreement* SpeculativeStudy::findDraft(const std::string& scheme) const {
    for (const auto& d : drafts)
        if (d.scheme == scheme) return &d;
    return nullptr;
}

namespace {

// The draft length (1..8) with the best predicted speedup, and that speedup.
std::pair<std::uint32_t, double> bestDraftLength(double alpha, double c) {
    std::pair<std::uint32_t, double> best{1, speculativeSpeedup(alpha, 1, c)};
    for (std::uint32_t g = 2; g <= 8; ++g) {
        const double s = speculativeSpeedup(alpha, g, c);
        if (s > best.second) best = {g, s};
    }
    return best;
}

// A chunk of tokens a backend is fed in the timed part, and whether it returns every row's
// logits (a verification) or the last (a step).
struct StepShape {
    std::uint32_t tokens = 1;
    bool allLogits = false;
};

// Feeds a backend, untimed, every shape its timed steps will have, each behind a cached
// token, so that no measured step pays for building a pipeline (on lavapipe the first
// verification of 5 positions built four, about 0.2 s inside v(4)).
void warmUp(DecoderBackend& model, std::span<const std::int32_t> prompt,
            const std::vector<StepShape>& shapes) {
    model.reset();
    model.append(prompt.first(1));
    for (const auto& shape : shapes) {
        const std::vector<std::int32_t> tokens(shape.tokens, prompt.front());
        if (shape.allLogits)
            model.appendAllLogits(tokens);
        else
            model.append(tokens);
        model.truncate(1);
    }
    model.reset();
}

} // namespace

SpeculativeStudy runSpeculativeStudy(const FormatBackendFactory& makeTarget,
                                     const FormatBackendFactory& makeDraft,
                                     std::span<const std::int32_t> promptIds,
                                     const SpeculativeStudyOptions& options) {
    if (options.draftFormats.empty()) throw std::invalid_argument("no draft scheme to measure");
    if (options.positions < 2) throw std::invalid_argument("measure at least 2 positions");
    if (options.runTokens < 1) throw std::invalid_argument("a real run needs at least 1 token");
    for (auto g : options.runDraftLengths)
        if (g == 0) throw std::invalid_argument("the draft length g must be >= 1");
    if (promptIds.empty()) throw std::invalid_argument("speculative decoding needs a prompt");
    if (!(options.temperature >= 0) || !std::isfinite(options.temperature))
        throw std::invalid_argument("the temperature must be 0 (greedy) or above");
    const auto report = [&](const std::string& stage, int percent) {
        if (options.progress) options.progress(stage, percent);
    };

    SpeculativeStudy study;
    study.promptIds.assign(promptIds.begin(), promptIds.end());
    study.temperature = options.temperature;
    const std::size_t stages = options.draftFormats.size() + 2;
    report("Building the target (" + options.targetFormat + ")", 0);
    auto target = makeTarget(options.targetFormat);
    study.target = target.backend->name();
    study.targetWeightBytes = target.weightBytes;
    study.targetDeviceBytes = target.deviceBytes;
    // The target steps alone (one token) and verifies g + 1 positions for each g run.
    std::vector<StepShape> targetShapes{{1, false}};
    for (auto g : options.runDraftLengths) targetShapes.push_back({g + 1, true});
    warmUp(*target.backend, promptIds, targetShapes);

    report("Target: " + std::to_string(options.positions) + " greedy positions", 5);
    SpeculativeOptions greedy;
    greedy.maxNewTokens = std::int32_t(options.positions);
    greedy.cancelled = options.cancelled;
    const auto reference = runAlone(*target.backend, promptIds, greedy);
    if (reference.cancelled) {
        study.cancelled = true;
        return study;
    }
    study.targetStepSeconds = medianOf(reference.stepSeconds);

    for (std::size_t i = 0; i < options.draftFormats.size(); ++i) {
        const auto& scheme = options.draftFormats[i];
        report("Draft " + scheme + ": agreement over the target's context",
               int(100 * (i + 1) / stages));
        auto draft = makeDraft(scheme); // built while the target stays resident
        warmUp(*draft.backend, promptIds, {{1, false}});
        auto agreement =
            measureAgreement(*draft.backend, promptIds, reference.tokens, options.cancelled);
        agreement.scheme = scheme;
        agreement.weightBytes = draft.weightBytes;
        agreement.deviceBytes = draft.deviceBytes;
        study.drafts.push_back(std::move(agreement));
        if (isCancelled(options.cancelled)) {
            study.cancelled = true;
            return study;
        }
    }

    study.runDraft = options.runDraft;
    if (study.runDraft.empty()) {
        double best = -1;
        for (const auto& d : study.drafts) {
            const double s = bestDraftLength(d.alpha(), study.draftCost(d)).second;
            if (s > best) best = s, study.runDraft = d.scheme;
        }
    }
    report("Real runs with the " + study.runDraft + " draft", int(100 * (stages - 1) / stages));
    auto draft = makeDraft(study.runDraft);
    // A draft steps one token at a time, or two after a verification that kept all g.
    warmUp(*draft.backend, promptIds, {{1, false}, {2, false}});
    SpeculativeOptions run;
    run.maxNewTokens = options.runTokens;
    run.temperature = options.temperature;
    run.seed = options.seed;
    run.cancelled = options.cancelled;
    study.targetAlone = runAlone(*target.backend, promptIds, run);
    for (auto g : options.runDraftLengths) {
        report("Speculative run, g = " + std::to_string(g), int(100 * (stages - 1) / stages));
        run.draftLength = g;
        SpeculativeRunSummary summary;
        summary.run = runSpeculative(*target.backend, *draft.backend, promptIds, run);
        summary.identicalToTarget = summary.run.tokens == study.targetAlone.tokens;
        const bool cancelled = summary.run.cancelled;
        study.runs.push_back(std::move(summary));
        if (cancelled) {
            study.cancelled = true;
            break;
        }
    }
    if (options.progress) options.progress("Done", 100);
    return study;
}

std::string speculativeVerifyNote(const SpeculativeStudy& s) {
    const auto* draft = s.findDraft(s.runDraft);
    if (!draft) return {};
    const double alpha = draft->alpha(), c = s.runDraftCost();
    std::string costs, compared;
    for (const auto& r : s.runs) {
        const double v = s.verifyCost(r.run);
        if (!(v > 0)) continue;
        const std::uint32_t g = r.run.draftLength;
        const std::string at = "g = " + std::to_string(g);
        costs += (costs.empty() ? "" : ", ") + at + ": " + fixed(v, 2);
        compared += (compared.empty() ? "" : "; ") + at + ": " +
                    fixed(speculativeSpeedupOnDevice(alpha, g, c, v), 2) + "x with v(g), " +
                    fixed(speculativeSpeedup(alpha, g, c), 2) + "x with 1, measured " +
                    fixed(s.measuredSpeedup(r.run), 2) + "x";
    }
    if (costs.empty()) return {};
    return "Why the two predictions part: verifying g + 1 positions costs v(g) target decode "
           "steps here (" +
           costs +
           "), where the chapter's formula assumes a memory-bound GPU that pays about one step "
           "for it. Predicted over (g c + v(g)) against over (g c + 1): " +
           compared + ".";
}

std::vector<Table> speculativeTables(const SpeculativeStudy& s) {
    std::vector<Table> tables;
    const auto mib = [](std::uint64_t bytes) { return double(bytes) / (1024.0 * 1024.0); };

    Table acceptance;
    acceptance.id = "speculative-acceptance";
    acceptance.title = "Draft acceptance and cost per scheme (target " + s.target + ")";
    acceptance.addColumn("draft")
        .addColumn("draft weights", "MiB", 1)
        .addColumn("target + draft on device", "MiB", 1)
        .addColumn("agreeing positions")
        .addColumn("positions")
        .addColumn("alpha", "", 3)
        .addColumn("draft step", "ms", 2)
        .addColumn("target step", "ms", 2)
        .addColumn("c (draft / target)", "", 3)
        .addColumn("best g")
        .addColumn("predicted speedup at best g", "x", 2);
    for (const auto& d : s.drafts) {
        const double c = s.draftCost(d);
        const auto [g, speedup] = bestDraftLength(d.alpha(), c);
        acceptance.addRow({d.scheme, mib(d.weightBytes), mib(s.targetDeviceBytes + d.deviceBytes),
                           std::int64_t(std::count(d.agrees.begin(), d.agrees.end(), true)),
                           std::int64_t(d.agrees.size()), d.alpha(), 1e3 * medianOf(d.stepSeconds),
                           1e3 * s.targetStepSeconds, c, std::int64_t(g), speedup});
    }
    acceptance.notes.push_back(
        "alpha: the draft's greedy token equals the target's at each position, both given the "
        "target's own tokens as context (the chapter's agreement column); c: median decode step "
        "of the draft over the target's, measured here after an untimed warm-up.");
    acceptance.notes.push_back("Both models are resident at once: target " +
                               fixed(mib(s.targetDeviceBytes), 1) + " MiB on the device (" +
                               fixed(mib(s.targetWeightBytes), 1) + " MiB of weights).");
    tables.push_back(std::move(acceptance));

    const auto* runDraft = s.findDraft(s.runDraft);
    if (!runDraft) return tables;
    const double alpha = runDraft->alpha(), c = s.runDraftCost();
    Table formula;
    formula.id = "speculative-formula";
    formula.title = "Tokens per verification and speedup over g, draft " + s.runDraft + " (alpha " +
                    fixed(alpha, 3) + ", c " + fixed(c, 3) + ")";
    formula.addColumn("g")
        .addColumn("predicted tokens per verification", "", 2)
        .addColumn("measured tokens per verification", "", 2)
        .addColumn("predicted speedup", "x", 2)
        .addColumn("verify cost v(g)", "target steps", 2)
        .addColumn("predicted on this device", "x", 2)
        .addColumn("measured speedup", "x", 2);
    for (std::uint32_t g = 1; g <= 8; ++g) {
        Cell measuredTokens, measuredSpeedup;
        for (const auto& r : s.runs) {
            if (r.run.draftLength != g || r.run.cancelled) continue;
            measuredTokens = r.run.tokensPerVerification();
            measuredSpeedup = s.measuredSpeedup(r.run);
        }
        const double v = s.verifyCostAt(g);
        formula.addRow({std::int64_t(g), expectedTokensPerVerification(alpha, g), measuredTokens,
                        speculativeSpeedup(alpha, g, c), v > 0 ? Cell(v) : Cell(),
                        v > 0 ? Cell(speculativeSpeedupOnDevice(alpha, g, c, v)) : Cell(),
                        measuredSpeedup});
    }
    formula.notes.push_back("predicted: (1 - alpha^(g+1)) / (1 - alpha) tokens per verification, "
                            "and that over (g c + 1) for the speedup, which assumes one "
                            "verification of g + 1 positions costs one target step; c: the "
                            "draft's seconds per proposed token in the real runs over the target "
                            "alone's step beside them (the acceptance table's c is the agreement "
                            "phase's, which compares the drafts).");
    if (const std::string why = speculativeVerifyNote(s); !why.empty())
        formula.notes.push_back(why);
    tables.push_back(std::move(formula));

    Table runs;
    runs.id = "speculative-runs";
    runs.title = "Real speculative runs, draft " + s.runDraft +
                 (s.temperature > 0 ? ", sampled at T = " + fixed(s.temperature, 2) : ", greedy");
    runs.addColumn("g")
        .addColumn("tokens")
        .addColumn("verifications")
        .addColumn("acceptance", "", 3)
        .addColumn("tokens per verification", "", 2)
        .addColumn("verify step / target step", "x", 2)
        .addColumn("draft time", "s", 3)
        .addColumn("verify time", "s", 3)
        .addColumn("wall", "s", 3)
        .addColumn("per token", "ms", 2)
        .addColumn("target alone per token", "ms", 2)
        .addColumn("speedup", "x", 2)
        .addColumn("same tokens as the target alone");
    for (const auto& r : s.runs) {
        const auto& run = r.run;
        runs.addRow({std::int64_t(run.draftLength), std::int64_t(run.tokens.size()),
                     std::int64_t(run.verifications), run.acceptance(), run.tokensPerVerification(),
                     s.verifyCost(run), run.draftSeconds, run.verifySeconds, run.generateSeconds,
                     1e3 * run.secondsPerToken(), 1e3 * s.targetAlone.secondsPerToken(),
                     s.measuredSpeedup(run),
                     std::string(s.temperature > 0     ? "n/a (sampled)"
                                 : r.identicalToTarget ? "yes"
                                                       : "NO")});
    }
    runs.notes.push_back("wall: after the prompt, to the last token; per token: wall over the "
                         "tokens generated, and the target alone's mean decode step; speedup = "
                         "target alone per token / per token (below 1: "
                         "speculation lost time on this device).");
    tables.push_back(std::move(runs));

    const SpeculativeRunSummary* longest = nullptr;
    for (const auto& r : s.runs)
        if (!longest || r.run.draftLength > longest->run.draftLength) longest = &r;
    if (longest && longest->run.verifications > 0) {
        const auto& run = longest->run;
        Table positions;
        positions.id = "speculative-positions";
        positions.title = "Acceptance per draft position, g = " + std::to_string(run.draftLength);
        positions.addColumn("draft position")
            .addColumn("reached")
            .addColumn("accepted")
            .addColumn("accepted when reached", "", 3)
            .addColumn("share of proposals reaching it", "", 3)
            .addColumn("alpha^(k-1) predicted", "", 3);
        for (std::uint32_t k = 0; k < run.draftLength; ++k) {
            const double reached = run.reachedAt[k];
            positions.addRow({std::int64_t(k + 1), std::int64_t(run.reachedAt[k]),
                              std::int64_t(run.acceptedAt[k]),
                              reached > 0 ? run.acceptedAt[k] / reached : 0.0,
                              reached / run.verifications, std::pow(alpha, double(k))});
        }
        // Position k is checked only when the k - 1 before it were accepted.
        const std::uint32_t g = run.draftLength;
        positions.notes.push_back("The last draft position was checked in " +
                                  std::to_string(run.reachedAt[g - 1]) + " of " +
                                  std::to_string(run.verifications) + " verifications (" +
                                  fixed(100.0 * run.reachedAt[g - 1] / run.verifications, 1) +
                                  "%); alpha^" + std::to_string(g - 1) + " predicts " +
                                  fixed(100.0 * std::pow(alpha, g - 1.0), 1) + "%.");
        tables.push_back(std::move(positions));
    }
    return tables;
}

} // namespace inferscope::compute::experiments
