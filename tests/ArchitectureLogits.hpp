#pragma once
// tests/data/architecture-logits.json (scripts/make-architecture-fixtures.py): llama.cpp's
// logits for the tiny fixture of each newer architecture, read once, and the check every
// implementation of ours meets against them.
//
// Tolerance: every logit within `relative` x (1 + the row's largest |logit|) and the same
// top-1. llama.cpp's CPU backend computes in f32 with the same f32 weights and an f32 KV cache;
// what still differs is summation order and its GELU (it may read a table of f16 results), so
// gemma3 sits furthest from it; the fixture's 4-decimal rounding adds 5e-5. The CPU reference
// is held to 2e-4 (it came within 4e-5 x (1 + max) when this was written), the Vulkan engine,
// which keeps K and V in f16, to LogitComparison's 2e-3.
#include "models/reference/Sampler.hpp"

#include <nlohmann/json.hpp>

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace inferscope::tests {

struct ArchitectureLogits {
    std::string generator;
    std::vector<std::int32_t> tokens;
    std::vector<std::size_t> positions;
    // Per shape ("tiny-gemma3"): per recorded position, the whole vocabulary's logits.
    std::map<std::string, std::vector<std::vector<float>>> logits;
};

inline const ArchitectureLogits& architectureLogits() {
    static const ArchitectureLogits fixture = [] {
        std::ifstream in(INFERSCOPE_TEST_DATA "/architecture-logits.json");
        const auto json = nlohmann::json::parse(in);
        ArchitectureLogits f;
        f.generator = json.at("generator").get<std::string>();
        f.tokens = json.at("tokens").get<std::vector<std::int32_t>>();
        f.positions = json.at("positions").get<std::vector<std::size_t>>();
        for (const auto& [shape, model] : json.at("models").items())
            for (std::size_t position : f.positions)
                f.logits[shape].push_back(
                    model.at("logits").at(std::to_string(position)).get<std::vector<float>>());
        return f;
    }();
    return fixture;
}

// `ours` holds one row of `vocab` logits per token of the fixture's prompt. Returns the
// largest error relative to the allowed one (> 1 fails; 1e9 for a different top-1).
inline double compareWithLlamaCpp(const std::string& shape, const std::vector<float>& ours,
                                  std::uint32_t vocab, double relative) {
    const auto& fixture = architectureLogits();
    const auto& rows = fixture.logits.at(shape);
    double worst = 0.0;
    for (std::size_t i = 0; i < fixture.positions.size(); ++i) {
        const std::vector<float>& expected = rows[i];
        const std::span<const float> row(ours.data() + fixture.positions[i] * vocab, vocab);
        if (expected.size() != vocab) return 1e9;
        float scale = 0.0f;
        for (float v : expected) scale = std::max(scale, std::abs(v));
        const double allowed = relative * (1.0 + scale);
        for (std::uint32_t t = 0; t < vocab; ++t)
            worst = std::max(worst, std::abs(double(row[t]) - double(expected[t])) / allowed);
        if (models::argmax(row) != models::argmax(expected)) {
            qWarning("%s position %zu: top-1 %d, llama.cpp %d", shape.c_str(), fixture.positions[i],
                     models::argmax(row), models::argmax(expected));
            return 1e9;
        }
    }
    return worst;
}

} // namespace inferscope::tests
