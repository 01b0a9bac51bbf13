#include "compute/experiments/quantization/WeightReport.hpp"

#include "models/formats/TensorNames.hpp"
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <stdexcept>
#include <thread>

namespace inferscope::compute::experiments {

namespace {

const char* const kProjectionKinds[] = {"attn_q",   "attn_k", "attn_v",  "attn_output",
                                        "ffn_gate", "ffn_up", "ffn_down"};

struct MatrixResult {
    WeightStatistics statistics;
    std::vector<double> errors;       // per scheme
    std::vector<std::uint64_t> bytes; // per scheme
};

double relativeError(std::span<const float> w, std::span<const float> approx) {
    double difference = 0, norm = 0;
    for (std::size_t i = 0; i < w.size(); ++i) {
        const double d = double(w[i]) - double(approx[i]);
        difference += d * d;
        norm += double(w[i]) * double(w[i]);
    }
    return norm > 0 ? std::sqrt(difference / norm) : (difference > 0 ? INFINITY : 0.0);
}

double median(std::vector<double> values) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

std::string shapeText(const models::StoredTensor& tensor) {
    return std::to_string(tensor.rows()) + " x " + std::to_string(tensor.cols());
}

// Bytes of one tensor under a scheme: matrices are packed with it, vectors (norms, biases)
// stay f32; as-stored keeps the file's bytes for everything.
std::uint64_t tensorBytesUnder(const models::QuantSchemeSpec& spec,
                               const models::StoredTensor& tensor) {
    if (spec.scheme == models::QuantScheme::AsStored) return tensor.data.size();
    if (tensor.shape.size() >= 2 && tensor.rows() > 1)
        return models::packedByteCount(spec, tensor.rows(), tensor.cols());
    return 4 * tensor.elements();
}

} // namespace

WeightStatistics weightStatistics(std::span<const float> weights) {
    WeightStatistics s;
    s.count = weights.size();
    if (weights.empty()) return s;
    double sum = 0, sumAbs = 0, maxAbs = 0;
    for (float w : weights) {
        sum += w;
        sumAbs += std::fabs(w);
        maxAbs = std::max(maxAbs, double(std::fabs(w)));
    }
    s.mean = sum / double(s.count);
    s.meanAbs = sumAbs / double(s.count);
    s.maxAbs = maxAbs;
    double squares = 0; // second pass around the mean: no cancellation
    for (float w : weights) squares += (w - s.mean) * (w - s.mean);
    s.std = std::sqrt(squares / double(s.count));
    for (float w : weights)
        if (std::fabs(w - s.mean) > 6.0 * s.std) ++s.beyondSixSigma;
    return s;
}

std::vector<std::string> projectionMatrixNames(const models::WeightStore& weights) {
    std::vector<std::string> names;
    for (std::uint32_t layer = 0;; ++layer) {
        const std::string prefix = models::layerTensorPrefix(layer);
        bool any = false;
        for (const char* kind : kProjectionKinds) {
            const std::string name = prefix + kind + ".weight";
            if (weights.contains(name)) {
                names.push_back(name);
                any = true;
            }
        }
        if (!any) break;
    }
    return names;
}

std::optional<std::string> canonicalProjectionName(const std::string& name) {
    static const std::regex gguf(
        R"(blk\.(\d+)\.(attn_q|attn_k|attn_v|attn_output|ffn_gate|ffn_up|ffn_down)\.weight)");
    static const std::regex hf(
        R"((?:model\.)?layers\.(\d+)\.(?:self_attn|mlp)\.(q|k|v|o|gate|up|down)_proj\.weight)");
    std::smatch match;
    if (std::regex_match(name, match, gguf)) return name;
    if (std::regex_match(name, match, hf)) {
        static const std::map<std::string, std::string> kinds = {
            {"q", "attn_q"},      {"k", "attn_k"},  {"v", "attn_v"},     {"o", "attn_output"},
            {"gate", "ffn_gate"}, {"up", "ffn_up"}, {"down", "ffn_down"}};
        return "blk." + match[1].str() + "." + kinds.at(match[2].str()) + ".weight";
    }
    return std::nullopt;
}

std::vector<Table> weightErrorReport(const models::LoadedModel& model,
                                     const WeightReportOptions& options) {
    return weightErrorReport(model.weights, options);
}

std::vector<Table> weightErrorReport(const models::WeightStore& weights,
                                     const WeightReportOptions& options) {
    const auto started = std::chrono::steady_clock::now();
    const std::vector<models::QuantSchemeSpec> schemes =
        options.schemes.empty() ? models::standardQuantSchemes() : options.schemes;
    const std::vector<std::string> names = projectionMatrixNames(weights);
    if (names.empty())
        throw std::invalid_argument(
            "the model has no projection matrices (blk.N.attn_q.weight ...)");
    std::optional<std::size_t> chosen;
    if (options.matrix) {
        const auto canonical = canonicalProjectionName(*options.matrix);
        const auto it = canonical ? std::find(names.begin(), names.end(), *canonical) : names.end();
        if (it == names.end())
            throw std::invalid_argument("no projection matrix named '" + *options.matrix +
                                        "' (e.g. blk.0.ffn_down.weight or "
                                        "model.layers.0.mlp.down_proj.weight)");
        chosen = std::size_t(it - names.begin());
    }

    // Whole matrices are shared out to the workers; each result slot is written by one.
    std::vector<MatrixResult> results(names.size());
    std::atomic<std::size_t> next{0};
    std::exception_ptr failure;
    std::mutex failureMutex;
    auto work = [&] {
        try {
            for (std::size_t m = next++; m < names.size(); m = next++) {
                const models::StoredTensor& tensor = weights.at(names[m]);
                const std::vector<float> w = weights.dequantized(names[m]);
                std::vector<float> back(w.size());
                MatrixResult& result = results[m];
                result.statistics = weightStatistics(w);
                for (const auto& spec : schemes) {
                    const models::PackedMatrix packed = models::packTensor(spec, tensor, w);
                    models::dequantizeMatrix(packed, back);
                    result.errors.push_back(relativeError(w, back));
                    result.bytes.push_back(packed.bytes.size());
                }
            }
        } catch (...) {
            std::lock_guard lock(failureMutex);
            if (!failure) failure = std::current_exception();
            next = names.size(); // the others stop after their current matrix
        }
    };
    const unsigned threadCount = std::max(1u, options.threads);
    std::vector<std::jthread> workers;
    for (unsigned t = 1; t < threadCount; ++t) workers.emplace_back(work);
    work();
    workers.clear(); // joins
    if (failure) std::rethrow_exception(failure);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

    std::uint64_t parameters = 0;
    for (const auto& name : names) parameters += weights.at(name).elements();

    Table errors;
    errors.id = "weight-error";
    errors.title = "Relative error ||W - W^|| / ||W|| over " + std::to_string(names.size()) +
                   " projection matrices (" + groupThousands(std::int64_t(parameters)) +
                   " parameters)";
    errors.addColumn("scheme")
        .addColumn("bits/weight", "", 3)
        .addColumn("mean error", "", 4)
        .addColumn("median error", "", 4)
        .addColumn("worst error", "", 4)
        .addColumn("worst matrix")
        .addColumn("projection bytes", "bytes", 0)
        .addColumn("model bytes", "bytes", 0);
    if (chosen) errors.addColumn("error of " + names[*chosen], "", 4);

    std::vector<std::size_t> worstPerScheme(schemes.size(), 0);
    for (std::size_t s = 0; s < schemes.size(); ++s) {
        std::vector<double> perMatrix;
        std::uint64_t projectionBytes = 0;
        for (std::size_t m = 0; m < names.size(); ++m) {
            perMatrix.push_back(results[m].errors[s]);
            projectionBytes += results[m].bytes[s];
            if (results[m].errors[s] > results[worstPerScheme[s]].errors[s]) worstPerScheme[s] = m;
        }
        std::uint64_t modelBytes = 0;
        for (const auto& [name, tensor] : weights.tensors())
            modelBytes += tensorBytesUnder(schemes[s], tensor);
        double mean = 0;
        for (double e : perMatrix) mean += e;
        mean /= double(perMatrix.size());
        const double worst = results[worstPerScheme[s]].errors[s];
        std::vector<Cell> row = {schemes[s].name(),
                                 8.0 * double(projectionBytes) / double(parameters),
                                 mean,
                                 median(perMatrix),
                                 worst,
                                 worst > 0 ? Cell(names[worstPerScheme[s]])
                                           : Cell(std::string("-")),
                                 std::int64_t(projectionBytes),
                                 std::int64_t(modelBytes)};
        if (chosen) row.push_back(results[*chosen].errors[s]);
        errors.addRow(std::move(row));
    }
    char timing[160];
    std::snprintf(timing, sizeof timing, "packed and dequantized on %u thread(s) in %.1f s",
                  threadCount, seconds);
    errors.notes.push_back(timing);
    errors.notes.push_back("bits/weight counts the scales (fp16): 4 + 16/128 = 4.125 for "
                           "int4-g128; model bytes pack every matrix (embeddings too) with the "
                           "scheme and keep norms f32");
    errors.notes.push_back("reference W: the weights as stored in the file, so as-stored is "
                           "exact by definition");

    // Outlier statistics: the worst matrix of each scheme (once each), then the chosen one.
    Table outliers;
    outliers.id = "weight-outliers";
    outliers.title = "Outlier statistics of the worst matrices";
    outliers.addColumn("matrix")
        .addColumn("shape")
        .addColumn("worst under")
        .addColumn("mean |w|", "", 5)
        .addColumn("std", "", 5)
        .addColumn("max |w|", "", 5)
        .addColumn("max/std", "", 1)
        .addColumn("beyond 6 sigma", "", 0)
        .addColumn("of", "", 0)
        .addColumn("share", "%", 3);
    std::vector<std::size_t> listed;
    std::map<std::size_t, std::string> worstUnder;
    for (std::size_t s = 0; s < schemes.size(); ++s) {
        if (results[worstPerScheme[s]].errors[s] == 0) continue;
        const std::size_t m = worstPerScheme[s];
        if (std::find(listed.begin(), listed.end(), m) == listed.end()) listed.push_back(m);
        worstUnder[m] += (worstUnder[m].empty() ? "" : ", ") + schemes[s].name();
    }
    if (chosen && std::find(listed.begin(), listed.end(), *chosen) == listed.end())
        listed.push_back(*chosen);
    for (std::size_t m : listed) {
        const WeightStatistics& st = results[m].statistics;
        outliers.addRow(
            {names[m], shapeText(weights.at(names[m])),
             worstUnder.count(m) ? Cell(worstUnder[m]) : Cell(std::string("(chosen)")), st.meanAbs,
             st.std, st.maxAbs, st.maxOverStd(), std::int64_t(st.beyondSixSigma),
             std::int64_t(st.count),
             100.0 * double(st.beyondSixSigma) / double(std::max<std::uint64_t>(st.count, 1))});
    }
    outliers.notes.push_back("sigma: the matrix's standard deviation; beyond 6 sigma: "
                             "|w - mean| > 6 std");
    return {errors, outliers};
}

} // namespace inferscope::compute::experiments
