// What a step reads back besides its logits (ProbeOptions): the kernels' GPU times, the
// per-layer max |h| of the residual stream and the copy of its rows.
#include "compute/engine/EngineParts.hpp"

#include <algorithm>

namespace inferscope::compute {

void Engine::readBackProbes(const CommandRecorder& recorder, std::uint32_t rows,
                            std::size_t firstRow, StepProbes& probes) {
    const auto& c = config_;
    auto& b = *buffers_;
    if (options_.probes.kernelTimings)
        for (const auto& timing : recorder.timings())
            addKernelTime(probes.kernels, {timing.label, 1, timing.microseconds});
    if (options_.probes.residualMax) {
        // The probe accumulates over the step's chunks; the last read wins.
        const auto bits = b.residualMax.read<float>(std::size_t(c.layers) * b.hiddenStride);
        for (std::uint32_t l = 0; l < c.layers; ++l)
            std::copy_n(bits.begin() + std::ptrdiff_t(l) * b.hiddenStride, c.hiddenSize,
                        probes.residualMax[l].begin());
    }
    if (options_.probes.residualStream) {
        // Layer l's rows sit at [l][row] of the readback buffer, rows hiddenStride floats apart.
        const std::uint64_t layerBytes = std::uint64_t(rows) * b.hiddenStride * 4;
        std::vector<float> layerRows(std::size_t(rows) * b.hiddenStride);
        for (std::uint32_t l = 0; l < c.layers; ++l) {
            b.residualStream.download(layerRows.data(), layerBytes, l * layerBytes);
            for (std::uint32_t i = 0; i < rows; ++i)
                std::copy_n(
                    layerRows.begin() + std::ptrdiff_t(i) * b.hiddenStride, c.hiddenSize,
                    probes.residualStream.begin() +
                        std::ptrdiff_t((std::size_t(l) * probes.residualStreamRows + firstRow + i) *
                                       c.hiddenSize));
        }
    }
}

} // namespace inferscope::compute
