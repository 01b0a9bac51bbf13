#pragma once
// What a run records of the residual stream (chapter items 9 and 10), one floor below both the
// session that records it and the experiments that read it: every value after every layer at
// every prompt position, and the tables the window's activation panels draw from it.
#include "compute/Table.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace inferscope::compute {

struct ResidualRecording {
    std::uint32_t layers = 0;
    std::uint32_t positions = 0;
    std::uint32_t hidden = 0;
    std::vector<float> values; // [layer][position][dimension]

    std::span<const float> at(std::uint32_t layer, std::uint32_t position) const {
        return {values.data() + (std::size_t(layer) * positions + position) * hidden, hidden};
    }
};

// What the window's activation panels show for one record, computed by the lab job that made
// the record (its worker thread), so a panel only draws tables: the reductions over the
// residual stream and the level counts never run on the event loop
// (experiments::activationPanelTables makes them).
struct ActivationPanelTables {
    std::uint32_t topDimensions = 0;        // the K of `layers`
    Table layers;                           // activationLayers
    Table persistence;                      // outlierPersistence
    std::vector<Table> histograms;          // [layer] activationHistogram (empty layer: none)
    std::uint32_t levelsTopK = 0;           // the K of `levels`; 0: no recording
    std::vector<std::vector<Table>> levels; // [layer] levelsByDimension, then activationReport's
                                            // "activation-levels", "activation-levels-per-dim"
};

} // namespace inferscope::compute
