#include "compute/vulkan/StreamReadKernel.hpp"

#include <algorithm>

namespace inferscope::compute {

StreamReadKernel::StreamReadKernel(const VulkanContext& context, std::uint64_t bytes,
                                   std::uint32_t workgroup, std::uint32_t lanes, bool contiguous)
    : source_(context, bytes, BufferKind::DeviceLocal, "stream read source"),
      sums_(context, std::uint64_t(lanes) * sizeof(float), BufferKind::DeviceLocal,
            "stream read sums"),
      pipeline_(context, "stream_read", 2, sizeof(Push), {workgroup, contiguous ? 1u : 0u},
                {vk::Format::eR32G32B32A32Sfloat}),
      recorder_(context, 8), push_{static_cast<std::uint32_t>(bytes / 16), lanes},
      groups_((lanes + workgroup - 1) / workgroup) {
    // Device memory starts undefined; the first pass also creates the pipeline's state.
    recorder_.begin();
    recorder_.fill(source_, 0x3f800000u); // 1.0f
    recordPass();
    recorder_.submitAndWait();
}

void StreamReadKernel::recordPass() {
    recorder_.dispatch(pipeline_, {{&source_}, {&sums_}}, push_, groups_);
}

std::vector<double> StreamReadKernel::submitSeconds(std::uint32_t passes, int repeats) {
    std::vector<double> seconds;
    for (int r = 0; r < std::max(1, repeats); ++r) {
        recorder_.begin();
        for (std::uint32_t i = 0; i < passes; ++i) recordPass();
        recorder_.submitAndWait();
        seconds.push_back(recorder_.lastSubmitMicroseconds() / 1e6);
    }
    return seconds;
}

double StreamReadKernel::bestSubmitSeconds(std::uint32_t passes, int repeats) {
    const auto seconds = submitSeconds(passes, repeats);
    return *std::min_element(seconds.begin(), seconds.end());
}

} // namespace inferscope::compute
