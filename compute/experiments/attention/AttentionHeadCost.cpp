#include "compute/experiments/attention/AttentionHeadCost.hpp"

#include "compute/vulkan/Buffer.hpp"
#include "compute/vulkan/CommandRecorder.hpp"
#include "compute/vulkan/Pipeline.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>

namespace inferscope::compute::experiments {

namespace {

struct HeadPush {
    std::uint32_t n;
    std::uint32_t rowBegin;
    std::uint32_t headDim;
    float scale;
};

std::vector<float> randomMatrix(std::uint32_t rows, std::uint32_t cols, std::mt19937& rng) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> values(std::size_t(rows) * cols);
    for (auto& x : values) x = normal(rng);
    return values;
}

} // namespace

std::vector<float> attentionHeadRowReference(const std::vector<float>& q,
                                             const std::vector<float>& k,
                                             const std::vector<float>& v, std::uint32_t n,
                                             std::uint32_t headDim, std::uint32_t row) {
    // Query row `row` attends to keys 0..row: q needs row + 1 rows, k and v n rows.
    const std::size_t d = headDim;
    if (headDim == 0 || row >= n || q.size() < (std::size_t(row) + 1) * d ||
        k.size() < std::size_t(n) * d || v.size() < std::size_t(n) * d)
        throw std::invalid_argument("attention row reference: row " + std::to_string(row) + " of " +
                                    std::to_string(n) + " needs " + std::to_string(row + 1) +
                                    " query rows and " + std::to_string(n) +
                                    " key and value rows of " + std::to_string(headDim));
    const double scale = 1.0 / std::sqrt(double(headDim));
    std::vector<double> scores(row + 1);
    double maxScore = -std::numeric_limits<double>::infinity();
    for (std::uint32_t j = 0; j <= row; ++j) {
        double dot = 0;
        for (std::uint32_t d = 0; d < headDim; ++d)
            dot += double(q[std::size_t(row) * headDim + d]) * k[std::size_t(j) * headDim + d];
        scores[j] = dot * scale;
        maxScore = std::max(maxScore, scores[j]);
    }
    double sum = 0;
    for (auto& s : scores) sum += (s = std::exp(s - maxScore));
    std::vector<float> out(headDim);
    for (std::uint32_t d = 0; d < headDim; ++d) {
        double acc = 0;
        for (std::uint32_t j = 0; j <= row; ++j) acc += scores[j] * v[std::size_t(j) * headDim + d];
        out[d] = float(acc / sum);
    }
    return out;
}

std::vector<AttentionHeadPoint>
measureAttentionHead(const VulkanContext& context, const AttentionHeadOptions& options,
                     const std::function<void(std::uint32_t)>& progress) {
    const std::uint32_t d = options.headDim;
    if (d == 0 || d > 64)
        throw std::invalid_argument("attention head: head dimension must be 1 to 64");
    if (options.lengths.empty()) throw std::invalid_argument("attention head: no lengths");
    const std::uint64_t bindingLimit = context.info().maxBindingBytes();
    for (auto n : options.lengths) {
        if (n < 2) throw std::invalid_argument("attention head: a length must be at least 2");
        if (std::uint64_t(n) * n * 4 > bindingLimit)
            throw std::invalid_argument(
                "attention head: the " + std::to_string(n) + " x " + std::to_string(n) +
                " score matrix needs " + humanBytes(double(n) * n * 4) +
                ", more than one storage binding may span on " + context.info().name + " (" +
                humanBytes(double(bindingLimit)) + ")");
    }

    std::mt19937 rng(options.seed);
    std::vector<AttentionHeadPoint> points;
    for (auto n : options.lengths) {
        if (progress) progress(n);
        const auto q = randomMatrix(n, d, rng), k = randomMatrix(n, d, rng),
                   v = randomMatrix(n, d, rng);
        auto upload = [&](const std::vector<float>& values, const char* label) {
            Buffer buffer(context, values.size() * sizeof(float), BufferKind::DeviceLocal, label);
            buffer.upload(std::span<const float>(values));
            return buffer;
        };
        std::vector<float> kT(k.size()); // the scores kernel reads keys dimension-major
        for (std::uint32_t j = 0; j < n; ++j)
            for (std::uint32_t i = 0; i < d; ++i)
                kT[std::size_t(i) * n + j] = k[std::size_t(j) * d + i];
        Buffer qBuffer = upload(q, "head queries"), kBuffer = upload(kT, "head keys"),
               vBuffer = upload(v, "head values");
        AttentionHeadPoint point;
        point.length = n;
        point.uncachedScoreBytes = std::uint64_t(n) * n * sizeof(float);
        point.cachedScoreBytes = std::uint64_t(n) * sizeof(float);
        // Every buffer of both modes lives as long as the pipelines that bind it: a pipeline
        // caches descriptor sets by buffer handle, and a freed handle can come back.
        struct Mode {
            std::uint32_t rowBegin = 0;
            Buffer scores, out;
        };
        Mode uncachedMode, cachedMode;
        cachedMode.rowBegin = n - 1;
        for (Mode* mode : {&uncachedMode, &cachedMode}) {
            const std::uint32_t rows = n - mode->rowBegin;
            mode->scores = Buffer(context, std::uint64_t(rows) * n * sizeof(float),
                                  BufferKind::DeviceLocal, "head scores");
            mode->out = Buffer(context, std::uint64_t(rows) * d * sizeof(float),
                               BufferKind::Readback, "head output");
        }
        Pipeline scoresKernel(context, "attention_head_scores", 3, sizeof(HeadPush));
        Pipeline valuesKernel(context, "attention_head_values", 3, sizeof(HeadPush));
        CommandRecorder recorder(context, 8);

        // One mode: rows [rowBegin, n) -> scores -> outputs; the best wall time of the timed
        // runs after one untimed warm-up, then the outputs for the check.
        auto run = [&](Mode& mode, double& bestMs) {
            const std::uint32_t rows = n - mode.rowBegin;
            const HeadPush push{n, mode.rowBegin, d, float(1.0 / std::sqrt(double(d)))};
            bestMs = std::numeric_limits<double>::infinity();
            // A run of over a second is timed once after the warm-up: repeats would add
            // nothing but minutes.
            int timedRuns = std::max(1, options.repeats);
            for (int r = 0; r <= timedRuns; ++r) {
                recorder.begin();
                recorder.dispatch(scoresKernel, {{&qBuffer}, {&kBuffer}, {&mode.scores}}, push,
                                  (n + 15) / 16, (rows + 15) / 16, 1, "scores");
                recorder.dispatch(valuesKernel, {{&mode.scores}, {&vBuffer}, {&mode.out}}, push,
                                  rows, 1, 1, "softmax x values");
                recorder.submitAndWait();
                const double ms = recorder.lastSubmitMicroseconds() / 1e3;
                if (r == 0 && ms > 1000) timedRuns = 1;
                if (r > 0) bestMs = std::min(bestMs, ms);
            }
            return mode.out.read<float>(std::size_t(rows) * d);
        };
        const auto uncachedOut = run(uncachedMode, point.uncachedMilliseconds);
        const auto cachedOut = run(cachedMode, point.cachedMilliseconds);

        // The check: the last row both ways, and spread rows of the uncached run.
        auto error = [&](const std::vector<float>& gpu, std::size_t gpuRow, std::uint32_t row) {
            const auto cpu = attentionHeadRowReference(q, k, v, n, d, row);
            float worst = 0;
            for (std::uint32_t i = 0; i < d; ++i)
                worst = std::max(worst, std::fabs(gpu[gpuRow * d + i] - cpu[i]));
            return worst;
        };
        point.cachedMaxError = error(cachedOut, 0, n - 1);
        const std::uint32_t checks =
            options.checkedRows == 0 ? n : std::min(n, std::max(2u, options.checkedRows));
        for (std::uint32_t c = 0; c < checks; ++c) {
            const auto row = std::uint32_t(std::uint64_t(c) * (n - 1) / (checks - 1));
            point.uncachedMaxError = std::max(point.uncachedMaxError, error(uncachedOut, row, row));
        }
        point.checkedRows = checks;
        points.push_back(point);
    }
    return points;
}

Table attentionHeadTable(const std::vector<AttentionHeadPoint>& points, std::uint32_t headDim,
                         const std::string& device) {
    Table t;
    t.id = "attention-head";
    t.title = "One attention head (dim " + std::to_string(headDim) +
              "), one generation step both ways on " + device;
    t.addColumn("n", "tokens")
        .addColumn("uncached scores", "bytes")
        .addColumn("cached scores", "bytes")
        .addColumn("uncached", "ms", 3)
        .addColumn("cached", "ms", 3)
        .addColumn("time ratio", "x", 1)
        .addColumn("max error uncached", "", -1)
        .addColumn("max error cached", "", -1);
    bool allWithin = true;
    for (const auto& p : points) {
        t.addRow({std::int64_t(p.length), std::int64_t(p.uncachedScoreBytes),
                  std::int64_t(p.cachedScoreBytes), p.uncachedMilliseconds, p.cachedMilliseconds,
                  p.cachedMilliseconds > 0 ? p.uncachedMilliseconds / p.cachedMilliseconds : 0.0,
                  double(p.uncachedMaxError), double(p.cachedMaxError)});
        allWithin = allWithin && p.uncachedMaxError <= kAttentionHeadTolerance &&
                    p.cachedMaxError <= kAttentionHeadTolerance;
    }
    t.notes.push_back("Uncached: the n x n score matrix is written, then read by a causal "
                      "softmax and the weighted sum of values, for every row. Cached: the same "
                      "two kernels for the new token's 1 x n row only. Best wall time of the "
                      "timed runs (one when a run takes over a second), after an untimed "
                      "warm-up (pipelines already built).");
    t.notes.push_back(
        std::string(allWithin ? "Every" : "NOT every") + " checked output is within 1e-4" +
        " of a CPU loop in double precision (the cached row, and " +
        (points.empty() ? std::string("0") : std::to_string(points.front().checkedRows)) +
        " rows spread over each uncached matrix).");
    return t;
}

} // namespace inferscope::compute::experiments
