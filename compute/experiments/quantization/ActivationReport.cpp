#include "compute/experiments/quantization/ActivationReport.hpp"

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

Table activationLayers(const std::vector<std::vector<float>>& maxima, std::uint32_t topK,
                       std::uint32_t positions) {
    Table layers;
    layers.id = "activation-layers";
    layers.title = "Residual stream: per-dimension max |h| over " + std::to_string(positions) +
                   " positions, per layer";
    layers.addColumn("layer", "", 0)
        .addColumn("top dimension", "", 0)
        .addColumn("max |h|", "", 2)
        .addColumn("median dim max |h|", "", 3)
        .addColumn("max/median", "", 1)
        .addColumn("top " + std::to_string(topK) + " dimensions");
    for (std::uint32_t l = 0; l < maxima.size(); ++l) {
        if (maxima[l].empty()) continue;
        auto order = dimensionsByValue(maxima[l]);
        order.resize(std::min<std::size_t>(topK, order.size()));
        const float top = maxima[l][order[0]];
        const float med = medianOf(maxima[l]);
        layers.addRow({std::int64_t(l), std::int64_t(order[0]), double(top), double(med),
                       med > 0 ? Cell(double(top / med)) : Cell(), joinDims(order)});
    }
    layers.notes.push_back("layer L: the residual stream after block L (0-based)");
    return layers;
}

// One binning rule for chapter item 9, used by the window and the CLI alike: octaves,
// [0, 1), [1, 2), [2, 4), ... up to the bin that holds the largest value. Why octaves: the
// maxima span three to four decades (typical dimensions below 8, one near 1,580 in the
// chapter's model), so equal-width bins would put every typical dimension into the first
// bin; doubling bins are log-scaled, read as plain numbers, and match the chapter's printed
// histogram bin for bin ("nothing in three octaves"). Everything below 1 shares the first
// bin, zeros included, because below 1 no dimension is an outlier.
Table activationHistogram(const std::vector<std::vector<float>>& maxima, std::uint32_t layer) {
    if (layer >= maxima.size() || maxima[layer].empty())
        throw std::invalid_argument("activation histogram: layer " + std::to_string(layer) +
                                    " out of range");
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
    histogram.title = "Layer " + std::to_string(layer) + ": the " + std::to_string(at.size()) +
                      " per-dimension maxima of |h|";
    histogram.addColumn("from", "", 0)
        .addColumn("to", "", 0)
        .addColumn("bar")
        .addColumn("dimensions", "", 0);
    for (std::size_t b = 0; b < counts.size(); ++b)
        histogram.addRow(
            {std::int64_t(edges[b]), std::int64_t(edges[b + 1]),
             std::string(std::min<std::size_t>(std::size_t(counts[b]), kBarWidth), '#'),
             counts[b]});
    histogram.notes.push_back("octave bins: [0, 1), [1, 2), [2, 4), ...; one # per dimension, "
                              "at most " +
                              std::to_string(kBarWidth));
    return histogram;
}

Table outlierPersistence(const std::vector<std::vector<float>>& layers, int dimensions) {
    Table t;
    t.id = "outlier-persistence";
    t.title = "Top dimensions across layers (max |h| / layer median)";
    t.addColumn("layer", "", 0);
    if (layers.empty() || layers.front().empty() || dimensions <= 0) return t;
    const std::size_t hidden = layers.front().size();
    const std::size_t k = std::min<std::size_t>(std::size_t(dimensions), hidden);
    std::vector<int> timesInTop(hidden, 0);
    std::vector<float> peak(hidden, 0.0f);
    std::vector<double> medians;
    for (const auto& values : layers) {
        const auto order = dimensionsByValue(values);
        for (std::size_t i = 0; i < std::min(k, order.size()); ++i)
            if (order[i] < hidden) ++timesInTop[order[i]];
        for (std::size_t d = 0; d < std::min(hidden, values.size()); ++d)
            peak[d] = std::max(peak[d], values[d]);
        medians.push_back(double(medianOf(values)));
    }
    std::vector<std::size_t> chosen(hidden);
    std::iota(chosen.begin(), chosen.end(), 0);
    std::stable_sort(chosen.begin(), chosen.end(), [&](std::size_t a, std::size_t b) {
        if (timesInTop[a] != timesInTop[b]) return timesInTop[a] > timesInTop[b];
        return peak[a] > peak[b];
    });
    chosen.resize(k);
    for (std::size_t d : chosen) t.addColumn("dim " + std::to_string(d), "x", 1);
    for (std::size_t layer = 0; layer < layers.size(); ++layer) {
        std::vector<Cell> row;
        row.reserve(chosen.size() + 1);
        row.emplace_back(static_cast<std::int64_t>(layer));
        for (std::size_t d : chosen) {
            const double value = d < layers[layer].size() ? layers[layer][d] : 0.0;
            row.emplace_back(medians[layer] > 0 ? value / medians[layer] : 0.0);
        }
        t.addRow(std::move(row));
    }
    return t;
}

Table levelsByDimension(const ResidualRecording& recording, std::uint32_t layer,
                        std::uint32_t topK) {
    if (layer >= recording.layers)
        throw std::invalid_argument("layer " + std::to_string(layer) + " is out of range");
    const std::uint32_t hidden = recording.hidden, positions = recording.positions;
    // Each dimension's values over the prompt, and its max |h|.
    std::vector<std::vector<float>> columns(hidden, std::vector<float>(positions));
    std::vector<float> maxAbs(hidden, 0.0f);
    for (std::uint32_t p = 0; p < positions; ++p) {
        auto row = recording.at(layer, p);
        for (std::uint32_t d = 0; d < hidden; ++d) {
            columns[d][p] = row[d];
            maxAbs[d] = std::max(maxAbs[d], std::fabs(row[d]));
        }
    }
    const auto order = dimensionsByValue(maxAbs);
    const std::uint32_t k = std::min(topK, hidden);
    float all = 0, rest = 0;
    for (std::uint32_t rank = 0; rank < hidden; ++rank) {
        all = std::max(all, maxAbs[order[rank]]);
        if (rank >= k) rest = std::max(rest, maxAbs[order[rank]]);
    }

    Table t;
    t.id = "activation-levels-by-dimension";
    t.title = "Quantization levels used per dimension, layer " + std::to_string(layer) + " (top " +
              std::to_string(k) + " excluded vs one scale)";
    t.addColumn("rank", "", 0)
        .addColumn("dimension", "", 0)
        .addColumn("max |h|", "", 4)
        .addColumn("int8 one scale", "", 0)
        .addColumn("int8 top-k excluded", "", 0)
        .addColumn("int4 one scale", "", 0)
        .addColumn("int4 top-k excluded", "", 0);
    for (std::uint32_t rank = 0; rank < hidden; ++rank) {
        const auto d = order[rank];
        const auto& values = columns[d];
        Cell int8Excluded, int4Excluded;
        if (rank >= k) {
            int8Excluded = std::int64_t{distinctLevels(values, rest / float(kInt8Max), kInt8Max)};
            int4Excluded = std::int64_t{distinctLevels(values, rest / float(kInt4Max), kInt4Max)};
        }
        t.addRow(
            {std::int64_t{rank}, std::int64_t{d}, double(maxAbs[d]),
             std::int64_t{distinctLevels(values, all / float(kInt8Max), kInt8Max)}, int8Excluded,
             std::int64_t{distinctLevels(values, all / float(kInt4Max), kInt4Max)}, int4Excluded});
    }
    t.notes.push_back("one scale: absmax " + fixed(all, 4) + " over every dimension; top-k " +
                      "excluded: absmax " + fixed(rest, 4) + " over the rest");
    t.notes.push_back("a dimension can use at most " + std::to_string(positions) +
                      " levels: one per recorded position");
    return t;
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
    std::vector<std::uint32_t> layersInTop(recording.hidden, 0);
    for (std::uint32_t l = 0; l < recording.layers; ++l) {
        auto order = dimensionsByValue(maxima[l]);
        order.resize(topK);
        for (std::uint32_t d : order) ++layersInTop[d];
    }

    Table layers = activationLayers(maxima, topK, recording.positions);

    Table histogram = activationHistogram(maxima, layer);
    const std::vector<float>& at = maxima[layer];
    const float largest = *std::max_element(at.begin(), at.end());

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
    levels.notes.push_back("ceiling: " + std::to_string(recording.positions) +
                           " positions, so one dimension uses at "
                           "most " +
                           std::to_string(recording.positions) + " levels and the tensor at most " +
                           std::to_string(std::size_t(recording.positions) * recording.hidden) +
                           " values");
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

ActivationPanelTables activationPanelTables(const std::vector<std::vector<float>>& maxima,
                                            std::uint32_t positions,
                                            const ResidualRecording* recording,
                                            std::uint32_t topDimensions, std::uint32_t levelsTopK) {
    ActivationPanelTables tables;
    tables.topDimensions = topDimensions;
    tables.layers = activationLayers(maxima, topDimensions, positions);
    tables.persistence = outlierPersistence(maxima);
    tables.histograms.resize(maxima.size());
    for (std::uint32_t l = 0; l < maxima.size(); ++l)
        if (!maxima[l].empty()) tables.histograms[l] = activationHistogram(maxima, l);
    if (recording && recording->layers > 0 && recording->positions > 0 && levelsTopK > 0 &&
        levelsTopK < recording->hidden) {
        tables.levelsTopK = levelsTopK;
        tables.levels.resize(recording->layers);
        for (std::uint32_t l = 0; l < recording->layers; ++l) {
            auto& layer = tables.levels[l];
            layer.push_back(levelsByDimension(*recording, l, levelsTopK));
            ActivationReportOptions options;
            options.layer = l;
            options.topK = levelsTopK;
            for (auto& table : activationReport(*recording, options))
                if (table.id == "activation-levels" || table.id == "activation-levels-per-dim")
                    layer.push_back(std::move(table));
        }
    }
    return tables;
}

} // namespace inferscope::compute::experiments
