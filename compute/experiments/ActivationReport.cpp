#include "compute/experiments/ActivationReport.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace inferscope::compute::experiments {

namespace {

constexpr int kInt8Max = 127;
constexpr int kInt4Max = 7;
constexpr std::size_t kBarWidth = 40;

// Dimensions ordered by descending value (ties: lower dimension first).
std::vector<std::uint32_t> dimensionsByValue(const std::vector<float>& values) {
    std::vector<std::uint32_t> order(values.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return values[a] > values[b]; });
    return order;
}

float medianOf(std::vector<float> values) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 ? values[n / 2] : 0.5f * (values[n / 2 - 1] + values[n / 2]);
}

float percentileOf(std::vector<float> values, double fraction) {
    if (values.empty()) return 0;
    const std::size_t index =
        std::min(values.size() - 1, std::size_t(fraction * double(values.size())));
    std::nth_element(values.begin(), values.begin() + std::ptrdiff_t(index), values.end());
    return values[index];
}

std::string joinDims(const std::vector<std::uint32_t>& dims) {
    std::string text;
    for (std::uint32_t d : dims) text += (text.empty() ? "" : ", ") + std::to_string(d);
    return text;
}

std::string fixed(double value, int digits) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
    return buffer;
}

} // namespace

ResidualRecording recordResidualStream(models::ReferenceTransformer& transformer,
                                       std::span<const std::int32_t> tokens) {
    const auto& config = transformer.config();
    ResidualRecording recording;
    recording.layers = config.layers;
    recording.positions = std::uint32_t(tokens.size());
    recording.hidden = config.hiddenSize;
    recording.values.assign(std::size_t(recording.layers) * recording.positions * recording.hidden,
                            0.0f);
    // Clears the observer however forward() ends, so it never outlives `recording`.
    struct ObserverReset {
        models::ReferenceTransformer& transformer;
        ~ObserverReset() { transformer.setResidualObserver({}); }
    } reset{transformer};
    transformer.setResidualObserver(
        [&](std::uint32_t layer, std::uint32_t position, std::span<const float> values) {
            if (layer >= recording.layers || position >= recording.positions ||
                values.size() != recording.hidden)
                return;
            std::copy(values.begin(), values.end(),
                      recording.values.begin() +
                          std::ptrdiff_t((std::size_t(layer) * recording.positions + position) *
                                         recording.hidden));
        });
    auto cache = transformer.newCache();
    transformer.forward(tokens, cache);
    return recording;
}

std::vector<std::vector<float>> residualMaxPerDimension(const ResidualRecording& recording) {
    std::vector<std::vector<float>> maxima(recording.layers,
                                           std::vector<float>(recording.hidden, 0.0f));
    for (std::uint32_t layer = 0; layer < recording.layers; ++layer)
        for (std::uint32_t p = 0; p < recording.positions; ++p) {
            const auto h = recording.at(layer, p);
            for (std::uint32_t d = 0; d < recording.hidden; ++d)
                maxima[layer][d] = std::max(maxima[layer][d], std::fabs(h[d]));
        }
    return maxima;
}

std::uint32_t distinctLevels(std::span<const float> values, float scale, int qmax) {
    if (values.empty()) return 0;
    if (!(scale > 0)) return 1;
    std::vector<bool> used(std::size_t(2 * qmax + 1), false);
    for (float v : values) {
        const int q = std::clamp(int(std::nearbyint(v / scale)), -qmax, qmax);
        used[std::size_t(q + qmax)] = true;
    }
    return std::uint32_t(std::count(used.begin(), used.end(), true));
}

std::vector<Table> activationReport(const ResidualRecording& recording,
                                    const ActivationReportOptions& options) {
    if (recording.layers == 0 || recording.positions == 0 || recording.hidden == 0 ||
        recording.values.size() !=
            std::size_t(recording.layers) * recording.positions * recording.hidden)
        throw std::invalid_argument("activation report: empty or inconsistent recording");
    const std::uint32_t layer = options.layer.value_or(2 * recording.layers / 3);
    if (layer >= recording.layers)
        throw std::invalid_argument("layer " + std::to_string(layer) +
                                    " out of range (the model has " +
                                    std::to_string(recording.layers) + " layers, 0-based)");
    const std::uint32_t topK = options.topK;
    if (topK == 0 || topK >= recording.hidden)
        throw std::invalid_argument("--top must be between 1 and " +
                                    std::to_string(recording.hidden - 1));

    const auto maxima = residualMaxPerDimension(recording);
    std::vector<std::vector<std::uint32_t>> topPerLayer(recording.layers);
    std::vector<std::uint32_t> layersInTop(recording.hidden, 0);
    for (std::uint32_t l = 0; l < recording.layers; ++l) {
        auto order = dimensionsByValue(maxima[l]);
        order.resize(topK);
        topPerLayer[l] = order;
        for (std::uint32_t d : order) ++layersInTop[d];
    }

    // Per layer.
    Table layers;
    layers.id = "activation-layers";
    layers.title = "Residual stream: per-dimension max |h| over " +
                   std::to_string(recording.positions) + " positions, per layer";
    layers.addColumn("layer", "", 0)
        .addColumn("top dimension", "", 0)
        .addColumn("max |h|", "", 2)
        .addColumn("median dim max |h|", "", 3)
        .addColumn("max/median", "", 1)
        .addColumn("top " + std::to_string(topK) + " dimensions");
    for (std::uint32_t l = 0; l < recording.layers; ++l) {
        const float top = maxima[l][topPerLayer[l][0]];
        const float med = medianOf(maxima[l]);
        layers.addRow({std::int64_t(l), std::int64_t(topPerLayer[l][0]), double(top), double(med),
                       med > 0 ? Cell(double(top / med)) : Cell(), joinDims(topPerLayer[l])});
    }
    layers.notes.push_back("layer L: the residual stream after block L (0-based)");

    // Histogram at the chosen layer: [0, 1), [1, 2), [2, 4), ... up to the bin holding the max.
    const std::vector<float>& at = maxima[layer];
    const float largest = *std::max_element(at.begin(), at.end());
    std::vector<double> edges = {0.0, 1.0};
    while (edges.back() <= largest) edges.push_back(edges.back() * 2);
    std::vector<std::int64_t> counts(edges.size() - 1, 0);
    for (float v : at) {
        std::size_t bin = 0;
        while (bin + 1 < counts.size() && v >= edges[bin + 1]) ++bin;
        ++counts[bin];
    }
    Table histogram;
    histogram.id = "activation-histogram";
    histogram.title = "Layer " + std::to_string(layer) + ": the " +
                      std::to_string(recording.hidden) + " per-dimension maxima of |h|";
    histogram.addColumn("from", "", 0)
        .addColumn("to", "", 0)
        .addColumn("bar")
        .addColumn("dimensions", "", 0);
    for (std::size_t b = 0; b < counts.size(); ++b)
        histogram.addRow(
            {std::int64_t(edges[b]), std::int64_t(edges[b + 1]),
             std::string(std::min<std::size_t>(std::size_t(counts[b]), kBarWidth), '#'),
             counts[b]});
    histogram.notes.push_back("one # per dimension, at most " + std::to_string(kBarWidth));

    // Top dimensions and their persistence across layers.
    const auto orderAtLayer = dimensionsByValue(at);
    Table top;
    top.id = "activation-top-dims";
    top.title = "Top " + std::to_string(topK) + " dimensions at layer " + std::to_string(layer) +
                ", and how many layers have them in their top " + std::to_string(topK);
    top.addColumn("rank", "", 0)
        .addColumn("dimension", "", 0)
        .addColumn("max |h| here", "", 2)
        .addColumn("peak max |h|", "", 2)
        .addColumn("peak layer", "", 0)
        .addColumn("layers in top " + std::to_string(topK), "", 0)
        .addColumn("of layers", "", 0);
    // The chosen layer's top K, then other dimensions that are in some layer's top K, by how
    // often (at most K of those).
    std::vector<std::uint32_t> listed(orderAtLayer.begin(), orderAtLayer.begin() + topK);
    std::vector<std::uint32_t> others;
    for (std::uint32_t d = 0; d < recording.hidden; ++d)
        if (layersInTop[d] > 0 && std::find(listed.begin(), listed.end(), d) == listed.end())
            others.push_back(d);
    std::stable_sort(others.begin(), others.end(), [&](std::uint32_t a, std::uint32_t b) {
        return layersInTop[a] > layersInTop[b];
    });
    if (others.size() > topK) others.resize(topK);
    listed.insert(listed.end(), others.begin(), others.end());
    for (std::size_t i = 0; i < listed.size(); ++i) {
        const std::uint32_t d = listed[i];
        std::uint32_t peakLayer = 0;
        for (std::uint32_t l = 1; l < recording.layers; ++l)
            if (maxima[l][d] > maxima[peakLayer][d]) peakLayer = l;
        top.addRow({i < topK ? Cell(std::int64_t(i + 1)) : Cell(), std::int64_t(d), double(at[d]),
                    double(maxima[peakLayer][d]), std::int64_t(peakLayer),
                    std::int64_t(layersInTop[d]), std::int64_t(recording.layers)});
    }

    // Level counts at the chosen layer with one tensor-wide scale, and with the top K excluded.
    std::vector<bool> excluded(recording.hidden, false);
    for (std::uint32_t i = 0; i < topK; ++i) excluded[orderAtLayer[i]] = true;
    std::vector<float> all, kept;
    std::vector<std::vector<float>> perDimension(recording.hidden);
    all.reserve(std::size_t(recording.positions) * recording.hidden);
    for (std::uint32_t p = 0; p < recording.positions; ++p) {
        const auto h = recording.at(layer, p);
        for (std::uint32_t d = 0; d < recording.hidden; ++d) {
            all.push_back(h[d]);
            if (!excluded[d]) kept.push_back(h[d]);
            perDimension[d].push_back(h[d]);
        }
    }
    const float absmaxAll = largest;
    const float absmaxKept = at[orderAtLayer[topK]];

    Table levels;
    levels.id = "activation-levels";
    levels.title = "Layer " + std::to_string(layer) +
                   ": distinct quantization levels used with one tensor-wide absmax scale";
    levels.addColumn("format")
        .addColumn("dimensions")
        .addColumn("absmax", "", 4)
        .addColumn("scale", "", 4)
        .addColumn("levels used", "", 0)
        .addColumn("of", "", 0)
        .addColumn("scale ratio", "x", 1);
    struct Format {
        const char* name;
        int qmax;
        std::int64_t available;
    };
    const Format formats[] = {{"INT8", kInt8Max, 256}, {"INT4", kInt4Max, 16}};
    for (const auto& f : formats) {
        const float scaleAll = absmaxAll / float(f.qmax);
        const float scaleKept = absmaxKept / float(f.qmax);
        levels.addRow({std::string(f.name), std::string("all"), double(absmaxAll), double(scaleAll),
                       std::int64_t(distinctLevels(all, scaleAll, f.qmax)), f.available, Cell()});
        levels.addRow({std::string(f.name), "without top " + std::to_string(topK),
                       double(absmaxKept), double(scaleKept),
                       std::int64_t(distinctLevels(kept, scaleKept, f.qmax)), f.available,
                       scaleKept > 0 ? Cell(double(scaleAll / scaleKept)) : Cell()});
    }
    std::vector<float> magnitudes(all.size());
    std::transform(all.begin(), all.end(), magnitudes.begin(),
                   [](float v) { return std::fabs(v); });
    levels.notes.push_back(
        "scale = absmax / qmax (INT8 qmax 127, INT4 qmax 7), q = round(h / scale)");
    levels.notes.push_back("typical |h| over the tensor: median " +
                           fixed(percentileOf(magnitudes, 0.5), 3) + ", 99th percentile " +
                           fixed(percentileOf(magnitudes, 0.99), 3));
    levels.notes.push_back("excluded: dimensions " +
                           joinDims({orderAtLayer.begin(), orderAtLayer.begin() + topK}) +
                           " (the top " + std::to_string(topK) + " at this layer)");

    // Per dimension.
    Table perDim;
    perDim.id = "activation-levels-per-dim";
    perDim.title = "Layer " + std::to_string(layer) + ": levels used per dimension over " +
                   std::to_string(recording.positions) + " positions";
    perDim.addColumn("dimension", "", 0)
        .addColumn("which")
        .addColumn("max |h|", "", 2)
        .addColumn("INT8 levels, tensor scale", "", 0)
        .addColumn("INT8 levels, top excluded", "", 0)
        .addColumn("INT4 levels, tensor scale", "", 0)
        .addColumn("INT4 levels, top excluded", "", 0);
    auto addDimension = [&](std::uint32_t d, std::string which) {
        std::vector<Cell> row;
        row.reserve(7);
        row.emplace_back(std::int64_t(d));
        row.emplace_back(std::move(which));
        row.emplace_back(double(at[d]));
        for (const auto& f : formats) {
            const auto tensorWide =
                distinctLevels(perDimension[d], absmaxAll / float(f.qmax), f.qmax);
            row.emplace_back(std::int64_t(tensorWide));
            if (excluded[d]) {
                row.emplace_back(std::monostate());
            } else {
                const auto withoutTop =
                    distinctLevels(perDimension[d], absmaxKept / float(f.qmax), f.qmax);
                row.emplace_back(std::int64_t(withoutTop));
            }
        }
        perDim.addRow(std::move(row));
    };
    for (std::uint32_t i = 0; i < topK; ++i)
        addDimension(orderAtLayer[i], "top " + std::to_string(i + 1));
    // Percentiles of max |h| over dimensions, counted from the smallest.
    const std::size_t last = recording.hidden - 1;
    const std::pair<const char*, std::size_t> picks[] = {
        {"90th percentile", last - std::size_t(0.9 * double(last))},
        {"median", last - last / 2},
        {"10th percentile", last - std::size_t(0.1 * double(last))}};
    for (const auto& [which, rank] : picks) addDimension(orderAtLayer[rank], which);
    return {layers, histogram, top, levels, perDim};
}

} // namespace inferscope::compute::experiments
