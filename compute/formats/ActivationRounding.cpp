#include "compute/formats/ActivationRounding.hpp"

#include <algorithm>
#include <cmath>

namespace inferscope::compute {

std::vector<float> roundActivationsInt8(std::span<const float> row) {
    std::vector<float> rounded(row.size());
    // std::nearbyint rounds half to even in the default rounding mode, as GLSL roundEven.
    for (std::size_t begin = 0; begin < row.size(); begin += kActivationChunk) {
        const std::size_t end = std::min(row.size(), begin + kActivationChunk);
        float amax = 0.0f;
        for (std::size_t i = begin; i < end; ++i) amax = std::max(amax, std::fabs(row[i]));
        const float scale = amax / 127.0f;
        const float inverse = amax > 0.0f ? 127.0f / amax : 0.0f;
        for (std::size_t i = begin; i < end; ++i)
            rounded[i] = std::nearbyint(row[i] * inverse) * scale;
    }
    return rounded;
}

} // namespace inferscope::compute
