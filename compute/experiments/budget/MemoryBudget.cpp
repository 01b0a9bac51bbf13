#include "compute/experiments/budget/MemoryBudget.hpp"

#include "compute/ResourcePaths.hpp"
#include "models/ModelError.hpp"
#include "models/formats/StrictJson.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace inferscope::compute::experiments {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string gibText(double gib) {
    char text[32];
    std::snprintf(text, sizeof text, "%g GiB", gib);
    return text;
}

} // namespace

const char* kvVariantName(KvVariant variant) {
    switch (variant) {
    case KvVariant::AsBuilt:
        return "as built";
    case KvVariant::MultiHead:
        return "MHA";
    case KvVariant::MultiQuery:
        return "MQA";
    }
    return "?";
}

KvVariant parseKvVariant(const std::string& name) {
    for (auto v : {KvVariant::AsBuilt, KvVariant::MultiHead, KvVariant::MultiQuery})
        if (name == kvVariantName(v)) return v;
    if (name == "as-built" || name == "gqa" || name == "GQA") return KvVariant::AsBuilt;
    if (name == "mha") return KvVariant::MultiHead;
    if (name == "mqa") return KvVariant::MultiQuery;
    throw std::invalid_argument("unknown attention variant '" + name + "' (as-built, mha or mqa)");
}

ModelShape withVariant(ModelShape shape, KvVariant variant) {
    if (variant == KvVariant::MultiHead) shape.kvHeads = shape.heads;
    if (variant == KvVariant::MultiQuery) shape.kvHeads = 1;
    return shape;
}

std::string attentionKind(const ModelShape& s) {
    if (s.kvHeads == s.heads) return "MHA (" + std::to_string(s.heads) + " KV heads)";
    if (s.kvHeads == 1) return "MQA (1 KV head for " + std::to_string(s.heads) + " query heads)";
    return "GQA (" + std::to_string(s.heads) + " query heads share " + std::to_string(s.kvHeads) +
           " KV heads)";
}

const std::vector<BudgetPrecision>& budgetPrecisions() {
    static const std::vector<BudgetPrecision> all = {{"fp16", 2.0}, {"int8", 1.0}, {"int4", 0.5}};
    return all;
}

BudgetPrecision parseBudgetPrecision(const std::string& name) {
    for (const auto& p : budgetPrecisions())
        if (p.name == name) return p;
    throw std::invalid_argument("unknown precision '" + name + "' (fp16, int8 or int4)");
}

std::uint64_t kvBytesPerToken(const ModelShape& s, double bytesPerElement) {
    return static_cast<std::uint64_t>(
        std::ceil(2.0 * s.layers * s.kvHeads * s.headDim * bytesPerElement));
}

std::uint64_t kvBytesForTokens(const ModelShape& s, double bytesPerElement, std::uint64_t tokens) {
    const double perLayer = 2.0 * s.kvHeads * s.headDim * bytesPerElement;
    const std::uint64_t windowTokens = std::min<std::uint64_t>(tokens, s.slidingWindow);
    return static_cast<std::uint64_t>(
        std::ceil(perLayer * (double(s.globalLayers()) * double(tokens) +
                              double(s.windowedLayers) * double(windowTokens))));
}

std::uint64_t weightBytes(const ModelShape& s, double bytesPerWeight) {
    return static_cast<std::uint64_t>(std::ceil(double(s.parameters) * bytesPerWeight));
}

BudgetSolution solveBudget(std::uint64_t deviceBytes, std::uint64_t weights,
                           std::uint64_t kvPerToken, std::uint64_t reserveBytes,
                           std::uint32_t contextPerUser) {
    if (kvPerToken == 0) throw std::invalid_argument("memory budget: zero KV bytes per token");
    if (contextPerUser == 0) throw std::invalid_argument("memory budget: zero context per user");
    BudgetSolution s;
    s.deviceBytes = deviceBytes;
    s.weightBytes = weights;
    s.kvBytesPerToken = kvPerToken;
    s.freeBytes = std::int64_t(deviceBytes) - std::int64_t(weights) - std::int64_t(reserveBytes);
    // Floor towards minus infinity, so a model that does not fit shows a negative budget.
    s.contextTokens =
        static_cast<std::int64_t>(std::floor(double(s.freeBytes) / double(kvPerToken)));
    s.users = s.contextTokens > 0 ? s.contextTokens / contextPerUser : 0;
    return s;
}

BudgetSolution solveBudget(std::uint64_t deviceBytes, std::uint64_t weights,
                           const ModelShape& shape, double kvBytesPerElement,
                           std::uint64_t reserveBytes, std::uint32_t contextPerUser) {
    BudgetSolution s = solveBudget(deviceBytes, weights, kvBytesPerToken(shape, kvBytesPerElement),
                                   reserveBytes, contextPerUser);
    if (shape.windowedLayers == 0 || s.freeBytes < 0) return s;
    // Past the window a token adds only the global layers' bytes: the longest sequence is
    // the window plus what the rest buys at that rate (no limit without global layers).
    const std::uint64_t free = std::uint64_t(s.freeBytes);
    const std::uint64_t atWindow = kvBytesForTokens(shape, kvBytesPerElement, shape.slidingWindow);
    if (free >= atWindow) {
        const double perGlobalToken =
            2.0 * shape.kvHeads * shape.headDim * kvBytesPerElement * shape.globalLayers();
        s.contextTokens =
            perGlobalToken > 0
                ? std::int64_t(shape.slidingWindow) +
                      std::int64_t(std::floor(double(free - atWindow) / perGlobalToken))
                : std::numeric_limits<std::int64_t>::max();
    }
    const std::uint64_t perUser = kvBytesForTokens(shape, kvBytesPerElement, contextPerUser);
    s.users = perUser ? std::int64_t(free / perUser) : 0;
    return s;
}

std::vector<ModelShape> parseModelPresets(const std::string& text, const std::string& source) {
    nlohmann::json root;
    try {
        root = models::parseStrictJson(text, source);
    } catch (const std::exception& e) {
        throw std::invalid_argument(std::string("model presets: ") + e.what());
    }
    auto fail = [&](const std::string& where, const std::string& why) {
        throw std::invalid_argument("model presets " + source + ": " + where + ": " + why);
    };
    if (!root.is_object() || !root.contains("presets") || !root["presets"].is_array())
        fail("top level", "expected an object with a \"presets\" array");
    std::vector<ModelShape> shapes;
    const auto& list = root["presets"];
    if (list.empty()) fail("presets", "the list is empty");
    for (std::size_t i = 0; i < list.size(); ++i) {
        const auto& entry = list[i];
        std::string where = "preset " + std::to_string(i + 1);
        if (!entry.is_object()) fail(where, "expected an object");
        if (entry.contains("name") && entry["name"].is_string())
            where += " (\"" + entry["name"].get<std::string>() + "\")";
        for (const auto& [key, value] : entry.items()) {
            static const std::vector<std::string> known = {
                "name",       "layers",          "heads",          "kv_heads", "head_dim",
                "parameters", "windowed_layers", "sliding_window", "note"};
            if (std::find(known.begin(), known.end(), key) == known.end())
                fail(where, "unknown field \"" + key + "\"");
        }
        ModelShape s;
        if (!entry.contains("name") || !entry["name"].is_string() ||
            entry["name"].get<std::string>().empty())
            fail(where, "\"name\" must be a non-empty string");
        s.name = entry["name"].get<std::string>();
        auto positive = [&](const char* field, std::uint64_t max) -> std::uint64_t {
            if (!entry.contains(field)) fail(where, std::string("missing \"") + field + "\"");
            const auto& v = entry[field];
            if (!v.is_number_integer() || v.get<std::int64_t>() <= 0 ||
                v.get<std::uint64_t>() > max)
                fail(where, std::string("\"") + field + "\" must be a whole number from 1 to " +
                                std::to_string(max));
            return v.get<std::uint64_t>();
        };
        s.layers = std::uint32_t(positive("layers", 4096));
        s.heads = std::uint32_t(positive("heads", 4096));
        s.kvHeads = std::uint32_t(positive("kv_heads", 4096));
        s.headDim = std::uint32_t(positive("head_dim", 4096));
        s.parameters = positive("parameters", 100'000'000'000'000ull);
        if (entry.contains("windowed_layers") != entry.contains("sliding_window"))
            fail(where, "\"windowed_layers\" and \"sliding_window\" go together");
        if (entry.contains("windowed_layers")) {
            s.windowedLayers = std::uint32_t(positive("windowed_layers", 4096));
            s.slidingWindow = std::uint32_t(positive("sliding_window", 1u << 24));
            if (s.windowedLayers > s.layers) fail(where, "\"windowed_layers\" exceeds \"layers\"");
        }
        if (s.kvHeads > s.heads || s.heads % s.kvHeads != 0)
            fail(where, "\"heads\" (" + std::to_string(s.heads) +
                            ") must be a multiple of \"kv_heads\" (" + std::to_string(s.kvHeads) +
                            ")");
        shapes.push_back(s);
    }
    return shapes;
}

std::vector<ModelShape> loadModelPresets(const std::filesystem::path& path) {
    std::string text;
    try {
        text = models::readStrictJsonFile(path).dump();
    } catch (const std::exception& e) {
        throw std::invalid_argument(std::string("model presets: ") + e.what());
    }
    return parseModelPresets(text, path.string());
}

std::vector<ModelShape> shippedModelPresets() {
    auto path = findResource("model-presets.json");
    if (!path)
        throw std::invalid_argument("model presets: resources/model-presets.json not found "
                                    "(set INFERSCOPE_RESOURCES to the resources folder)");
    return loadModelPresets(*path);
}

ModelShape shapeOf(const models::ModelConfig& c, std::uint64_t parameters,
                   const std::string& name) {
    ModelShape s;
    s.name = name;
    s.layers = c.layers;
    s.heads = c.heads;
    s.kvHeads = c.kvHeads;
    s.headDim = c.headDim;
    s.parameters = parameters;
    s.loaded = true;
    s.windowedLayers = c.windowedLayers();
    s.slidingWindow = c.windowedLayers() ? c.slidingWindow : 0;
    return s;
}

std::vector<Table> memoryBudgetTables(const std::vector<ModelShape>& shapes, const BudgetQuery& q) {
    if (shapes.empty()) throw std::invalid_argument("memory budget: no model shapes");
    if (q.contextPerUser == 0)
        throw std::invalid_argument("memory budget: the context per user must be at least 1");
    const auto kv = parseBudgetPrecision(q.kvPrecision);
    std::vector<BudgetPrecision> precisions;
    for (const auto& name : q.precisions) precisions.push_back(parseBudgetPrecision(name));
    if (precisions.empty()) throw std::invalid_argument("memory budget: no weight precision");

    std::vector<Table> tables;
    Table perToken;
    perToken.id = "kv-bytes-per-token";
    perToken.title = "KV cache per token = 2 (K,V) x layers x KV heads x head dim x " + kv.name +
                     " bytes, by attention variant";
    perToken.addColumn("model")
        .addColumn("layers")
        .addColumn("query heads")
        .addColumn("head dim")
        .addColumn("as built", "bytes")
        .addColumn("as built KV heads")
        .addColumn("MHA", "bytes")
        .addColumn("MQA", "bytes");
    for (const auto& s : shapes) {
        perToken.addRow(
            {s.name, std::int64_t(s.layers), std::int64_t(s.heads), std::int64_t(s.headDim),
             std::int64_t(kvBytesPerToken(s, kv.bytesPerElement)), std::int64_t(s.kvHeads),
             std::int64_t(
                 kvBytesPerToken(withVariant(s, KvVariant::MultiHead), kv.bytesPerElement)),
             std::int64_t(
                 kvBytesPerToken(withVariant(s, KvVariant::MultiQuery), kv.bytesPerElement))});
    }
    perToken.notes.push_back("The cache depends only on the total of resident tokens: 32 users "
                             "x 2,048 tokens and 128 x 512 hold the same bytes.");
    for (const auto& s : shapes)
        if (s.windowedLayers)
            perToken.notes.push_back(
                s.name + ": " + std::to_string(s.windowedLayers) + " of " +
                std::to_string(s.layers) + " layers keep only the last " +
                groupThousands(s.slidingWindow) +
                " tokens (sliding window): past that a token adds " +
                groupThousands(std::int64_t(std::ceil(2.0 * s.kvHeads * s.headDim *
                                                      kv.bytesPerElement * s.globalLayers()))) +
                " bytes, not the per-token figure above, and the budget counts it so.");
    tables.push_back(std::move(perToken));

    std::vector<std::pair<std::string, std::uint64_t>> devices;
    for (double gib : q.deviceGiB) {
        if (!(gib > 0) || gib > 1e6)
            throw std::invalid_argument("memory budget: device size " + std::to_string(gib) +
                                        " GiB is not a size");
        devices.emplace_back(gibText(gib), std::uint64_t(gib * kGiB));
    }
    if (q.detectedDevice) devices.push_back(*q.detectedDevice);
    for (const auto& [deviceName, deviceBytes] : devices) {
        Table t;
        t.id = "memory-budget-" + deviceName;
        for (auto& ch : t.id)
            if (ch == ' ' || ch == '(' || ch == ')' || ch == ',') ch = '-';
        t.title = "Memory budget on " + deviceName +
                  ": weights + KV per token x tokens <= " + humanBytes(double(deviceBytes)) +
                  " (KV " + kv.name + ", " + kvVariantName(q.variant) + ", " +
                  groupThousands(q.contextPerUser) + " tokens per user)";
        t.addColumn("model")
            .addColumn("weights")
            .addColumn("attention")
            .addColumn("weight bytes", "bytes")
            .addColumn("KV per token", "bytes")
            .addColumn("left for KV", "bytes")
            .addColumn("context tokens")
            .addColumn("users at context")
            .addColumn("fits");
        for (const auto& base : shapes) {
            const auto s = withVariant(base, q.variant);
            for (const auto& p : precisions) {
                const auto solution =
                    solveBudget(deviceBytes, weightBytes(s, p.bytesPerElement), s,
                                kv.bytesPerElement, q.reserveBytes, q.contextPerUser);
                t.addRow({s.name, p.name, attentionKind(s), std::int64_t(solution.weightBytes),
                          std::int64_t(solution.kvBytesPerToken), solution.freeBytes,
                          solution.contextTokens, solution.users,
                          std::string(solution.freeBytes < 0 ? "no: weights too big"
                                      : solution.users == 0  ? "no user at this context"
                                                             : "yes")});
            }
        }
        t.notes.push_back("context tokens = floor((device - weights - reserve " +
                          humanBytes(double(q.reserveBytes)) +
                          ") / KV per token); negative "
                          "means the weights alone do not fit. users = floor(context tokens / " +
                          groupThousands(q.contextPerUser) + ").");
        t.notes.push_back("Weights at exactly 2, 1 or 0.5 bytes per parameter: block formats "
                          "add their scales (q8_0 8.5 bits, q4_0 4.5), and a runtime needs "
                          "activations and its own buffers, so real headroom is smaller.");
        tables.push_back(std::move(t));
    }
    return tables;
}

} // namespace inferscope::compute::experiments
