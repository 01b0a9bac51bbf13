#include "compute/experiments/bench/BenchLab.hpp"

#include "compute/experiments/bench/Bench.hpp"
#include "compute/experiments/bench/BytesOrder.hpp"
#include "compute/experiments/bench/ProbeOverhead.hpp"
#include "compute/vulkan/BandwidthProbe.hpp"
#include "compute/vulkan/DispatchProbe.hpp"
#include "compute/vulkan/SpinBarrierProbe.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <stdexcept>

namespace inferscope::compute::experiments {

BenchLab::Result BenchLab::run(LabContext& lab, const Request& request, const JobControl& control) {
    if (request.formats.empty()) throw std::invalid_argument("no weight format to measure");
    if (request.prompts.empty() || request.contexts.empty() || request.batches.empty())
        throw std::invalid_argument("no prompt length, context or batch to measure");
    const auto& config = lab.model().config;
    const std::uint32_t maxBatch =
        *std::max_element(request.batches.begin(), request.batches.end());
    const std::uint32_t longest =
        std::max(*std::max_element(request.prompts.begin(), request.prompts.end()),
                 *std::max_element(request.contexts.begin(), request.contexts.end()) +
                     request.decodeSteps + 4);
    if (config.contextLength && longest > config.contextLength)
        throw std::invalid_argument("prompt/context lengths exceed the model's context of " +
                                    std::to_string(config.contextLength));

    Table prompt, decode, kernels, overhead, device;
    prompt.id = "bench-prompt";
    prompt.title = "Prompt processing (prefill of P tokens, fresh cache)";
    prompt.addColumn("format")
        .addColumn("P")
        .addColumn("tokens/s", "", 1)
        .addColumn("time", "ms", 2)
        .addColumn("dispatches");
    decode.id = "bench-decode";
    decode.title = "Decode (greedy steps after a context of C tokens)";
    decode.addColumn("format")
        .addColumn("batch")
        .addColumn("C")
        .addColumn("tokens/s", "", 2)
        .addColumn("step", "ms", 2)
        .addColumn("dispatches per step")
        .addColumn("weights read", "GB/s", 2)
        .addColumn("roofline", "tokens/s", 1)
        .addColumn("of roofline", "%", 1)
        .addColumn("dispatch floor", "ms", 2)
        .addColumn("bound with dispatches", "tokens/s", 1)
        .addColumn("of that bound", "%", 1);
    kernels.id = "bench-kernels";
    kernels.title = "Per-kernel GPU time of one decode step (timestamps, batch " +
                    std::to_string(request.batches.front()) +
                    ", C = " + std::to_string(request.contexts.front()) + ")";
    kernels.addColumn("format")
        .addColumn("kernel")
        .addColumn("dispatches")
        .addColumn("time", "us", 1)
        .addColumn("share", "%", 1);
    overhead.id = "bench-probe-overhead";
    overhead.title = "Probe overhead (decode step, batch 1)";
    overhead.addColumn("format")
        .addColumn("probe")
        .addColumn("step", "ms", 3)
        .addColumn("relative to no probes", "x", 3);
    device.id = "bench-device";
    device.title = "Device";
    device.addColumn("property").addColumn("value");
    device.columns[1].precision = -1;

    double bandwidth = 0;
    double dispatchMicroseconds = 0;
    // Per decode row (batch, C): every format's tokens/s, for the note on bytes and speed.
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<FormatDecodeSpeed>> speedsByRow;
    // Every format's engine stays loaded, so that the timed repeats can take turns
    // (runBenchInterleaved): the machine's drift then slows every format alike.
    struct FormatRun {
        std::string name;
        std::unique_ptr<Engine> engine;
        double weightBytes = 0;
        double bitsPerWeight = 0;
        std::vector<std::vector<Cell>> promptRows, decodeRows, kernelRows;
    };
    std::vector<FormatRun> runs;
    for (const auto& formatName : request.formats) {
        auto format = weightFormatFromName(formatName);
        if (!format)
            throw std::invalid_argument("unknown weight format '" + formatName +
                                        "' (known: " + weightFormatNames() + ")");
        EngineOptions options = request.engine;
        options.weightFormat = *format;
        options.kvCapacityTokens =
            std::max<std::uint32_t>(options.kvCapacityTokens, longest * maxBatch + 64);
        options.maxSequences = std::max(options.maxSequences, maxBatch);
        control.report("uploading weights as " + formatName);
        auto engine = std::make_unique<Engine>(lab.model(), options);
        if (bandwidth == 0) {
            control.report("measuring read bandwidth");
            const auto measured = measureReadBandwidth(engine->context());
            bandwidth = measured.gigabytesPerSecond;
            device.addRow({std::string("name"), engine->context().info().name});
            device.addRow({std::string("type"), engine->context().info().type});
            device.addRow({std::string("measured read bandwidth (GB/s)"), bandwidth});
            device.addRow({std::string("read bandwidth measured as"), measured.method()});
            control.report("measuring the dispatch floor");
            dispatchMicroseconds = measureDispatchFloor(engine->context()).microsecondsPerDispatch;
            device.addRow({std::string("dispatch floor (us per dispatch)"), dispatchMicroseconds});
            control.report("measuring a wait inside one dispatch");
            const auto spin = measureSpinBarrier(engine->context());
            if (spin.measured)
                device.addRow({"wait between phases inside one dispatch (us per phase, " +
                                   std::to_string(spin.workgroups) + " workgroups spinning)",
                               spin.microsecondsPerPhase});
            else
                device.addRow({std::string("wait between phases inside one dispatch"),
                               "not measured: " + spin.reason});
        }
        const double weightBytes = double(matrixBytesPerDecodeStep(*engine));
        double parameters = 0;
        for (const auto& m : engine->weightMatrices())
            if (m.name != "token_embd") parameters += double(m.parameters);
        device.addRow({"matrix bytes read per step (" + formatName + ")",
                       static_cast<std::int64_t>(weightBytes)});
        const double bitsPerWeight = parameters > 0 ? 8.0 * weightBytes / parameters : 0.0;
        device.addRow({"bits per weight (" + formatName + ")", bitsPerWeight});
        std::size_t rounding = 0;
        for (const auto& m : engine->weightMatrices()) rounding += m.roundsActivations ? 1 : 0;
        device.addRow({"activations (" + formatName + ")",
                       rounding == 0
                           ? std::string("float")
                           : "int8 per 32 columns in " + std::to_string(rounding) + " of " +
                                 std::to_string(engine->weightMatrices().size()) +
                                 " matrices (--int8-activations)"});
        runs.push_back({formatName, std::move(engine), weightBytes, bitsPerWeight, {}, {}, {}});
    }
    std::vector<Engine*> engines;
    for (auto& run : runs) engines.push_back(run.engine.get());
    const std::string turns = runs.size() > 1 ? " (formats taking turns)" : "";

    for (auto p : request.prompts) {
        control.report("prompt " + std::to_string(p) + turns);
        const auto results = runBenchInterleaved(engines, {.promptTokens = p,
                                                           .decodeTokens = 0,
                                                           .batch = 1,
                                                           .kernelBreakdown = false,
                                                           .repeats = request.repeats});
        for (std::size_t f = 0; f < runs.size(); ++f)
            runs[f].promptRows.push_back(
                {runs[f].name, static_cast<std::int64_t>(p), results[f].promptTokensPerSecond,
                 results[f].promptSeconds * 1e3,
                 static_cast<std::int64_t>(results[f].dispatchesPerPrefill)});
    }
    bool breakdownDone = !request.kernelBreakdown;
    for (auto b : request.batches) {
        for (auto c : request.contexts) {
            control.report("decode batch " + std::to_string(b) + " context " + std::to_string(c) +
                           turns);
            const bool breakdown = !breakdownDone && b == request.batches.front();
            const auto results = runBenchInterleaved(engines, {.promptTokens = c,
                                                               .decodeTokens = request.decodeSteps,
                                                               .batch = b,
                                                               .kernelBreakdown = breakdown,
                                                               .repeats = request.repeats});
            for (std::size_t f = 0; f < runs.size(); ++f) {
                auto& run = runs[f];
                const auto& r = results[f];
                // Each step reads every weight once whatever the batch: the bound is per step.
                const double rooflineTokens = bandwidth * 1e9 / run.weightBytes * b;
                // The bound with the fixed cost of the step's dispatches added to the reads.
                const double floorMs =
                    double(r.dispatchesPerDecodeStep) * dispatchMicroseconds / 1e3;
                const double boundTokens =
                    b / (run.weightBytes / (bandwidth * 1e9) + floorMs / 1e3);
                run.decodeRows.push_back(
                    {run.name, static_cast<std::int64_t>(b), static_cast<std::int64_t>(c),
                     r.decodeTokensPerSecond, r.decodeStepMilliseconds,
                     static_cast<std::int64_t>(r.dispatchesPerDecodeStep),
                     run.weightBytes * r.decodeTokensPerSecond / b / 1e9, rooflineTokens,
                     100.0 * r.decodeTokensPerSecond / rooflineTokens, floorMs, boundTokens,
                     100.0 * r.decodeTokensPerSecond / boundTokens});
                speedsByRow[{b, c}].push_back({run.name, run.bitsPerWeight, r.decodeTokensPerSecond,
                                               r.slowestDecodeTokensPerSecond});
                if (breakdown) {
                    double total = 0;
                    for (const auto& k : r.decodeKernels) total += k.microseconds;
                    for (const auto& k : r.decodeKernels)
                        run.kernelRows.push_back(
                            {run.name, k.kernel, static_cast<std::int64_t>(k.dispatches),
                             k.microseconds, total > 0 ? 100.0 * k.microseconds / total : 0.0});
                    if (total > 0)
                        kernels.notes.push_back(timestampCostNote(
                            total / 1e3, r.decodeStepMilliseconds, r.dispatchesPerDecodeStep));
                }
            }
            breakdownDone = breakdownDone || breakdown;
        }
    }
    for (auto& run : runs) {
        for (auto& row : run.promptRows) prompt.addRow(std::move(row));
        for (auto& row : run.decodeRows) decode.addRow(std::move(row));
        for (auto& row : run.kernelRows) kernels.addRow(std::move(row));
        control.report(run.name + ": probe overhead");
        // 64 prompt tokens and 16 steps, or what a shorter context holds.
        const std::uint32_t room = run.engine->kvCache().maxPositionsPerSequence();
        const std::uint32_t context = std::max(1u, std::min(64u, room / 2));
        const std::uint32_t steps = std::max(1u, std::min(16u, room - context));
        for (const auto& cost : measureProbeOverhead(*run.engine, context, steps))
            overhead.addRow(
                {run.name, cost.probe, cost.decodeStepMilliseconds, cost.relativeToNone});
    }
    decode.notes.push_back("roofline = measured read bandwidth / matrix bytes x batch: a decode "
                           "step reads every weight matrix once, whatever the batch.");
    decode.notes.push_back("dispatch floor = dispatches per step x the measured cost of a "
                           "near-empty dispatch behind a barrier (the device table); the bound "
                           "with dispatches adds it to the read time.");
    for (const auto& [row, speeds] : speedsByRow) {
        const auto note = bytesOrderNote(
            "batch " + std::to_string(row.first) + ", C = " + std::to_string(row.second), speeds);
        if (!note.empty()) decode.notes.push_back(note);
    }
    Result tables{device, prompt, decode};
    if (!kernels.rows.empty()) tables.push_back(kernels);
    tables.push_back(overhead);
    return tables;
}

} // namespace inferscope::compute::experiments
