#include "models/quant/WeightQuantizer.hpp"

#include "models/quant/NormalFloat4.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>
#include <stdexcept>

namespace inferscope::models {

namespace {

constexpr std::uint32_t kDefaultGroup = 128;
constexpr std::uint32_t kDefaultNf4Block = 64;

bool isFourBit(QuantScheme scheme) {
    return scheme == QuantScheme::Int4PerTensor || scheme == QuantScheme::Int4PerRow ||
           scheme == QuantScheme::Int4PerGroup || scheme == QuantScheme::Nf4;
}

std::uint64_t ceilDiv(std::uint64_t a, std::uint64_t b) {
    return (a + b - 1) / b;
}

std::uint64_t codeBytes(QuantScheme scheme, std::uint64_t elements) {
    switch (scheme) {
    case QuantScheme::Fp32:
        return elements * 4;
    case QuantScheme::Fp16:
        return elements * 2;
    case QuantScheme::Int8PerTensor:
    case QuantScheme::Int8PerRow:
        return elements;
    default:
        return ceilDiv(elements, 2);
    }
}

// How many consecutive elements share one scale.
std::uint64_t scaleRun(const QuantSchemeSpec& spec, std::uint64_t rows, std::uint64_t cols) {
    switch (spec.scheme) {
    case QuantScheme::Int8PerTensor:
    case QuantScheme::Int4PerTensor:
        return std::max<std::uint64_t>(rows * cols, 1);
    case QuantScheme::Int8PerRow:
    case QuantScheme::Int4PerRow:
        return std::max<std::uint64_t>(cols, 1);
    case QuantScheme::Int4PerGroup:
    case QuantScheme::Nf4:
        return spec.groupSize;
    default:
        return 0; // no scales
    }
}

std::uint64_t scaleCount(const QuantSchemeSpec& spec, std::uint64_t rows, std::uint64_t cols) {
    const std::uint64_t run = scaleRun(spec, rows, cols);
    return run ? ceilDiv(rows * cols, run) : 0;
}

void checkSpec(const QuantSchemeSpec& spec) {
    if ((spec.scheme == QuantScheme::Int4PerGroup || spec.scheme == QuantScheme::Nf4) &&
        spec.groupSize == 0)
        throw std::invalid_argument("quantization scheme " + spec.name() +
                                    ": group size must be > 0");
    if (spec.scheme == QuantScheme::AsStored)
        throw std::invalid_argument("the as-stored scheme keeps a file's bytes: use "
                                    "packStoredMatrix on the stored tensor");
}

std::string layoutText(const QuantSchemeSpec& spec, std::uint64_t rows, std::uint64_t cols) {
    const std::uint64_t n = rows * cols;
    const std::string codes = std::to_string(codeBytes(spec.scheme, n));
    const std::string scales = std::to_string(scaleCount(spec, rows, cols));
    const std::string nibbles = "two 4-bit codes per byte, element e (row-major) in byte e/2, "
                                "low nibble for even e";
    switch (spec.scheme) {
    case QuantScheme::Fp32:
        return "f32 row-major, 4 bytes per weight";
    case QuantScheme::Fp16:
        return "fp16 row-major, 2 bytes per weight";
    case QuantScheme::Int8PerTensor:
    case QuantScheme::Int8PerRow:
        return "bytes [0, " + codes + "): int8 codes q in -127..127, row-major; then " + scales +
               " fp16 scale(s) (one per " +
               (spec.scheme == QuantScheme::Int8PerRow ? "row" : "tensor") + "); w = q * scale";
    case QuantScheme::Int4PerTensor:
    case QuantScheme::Int4PerRow:
    case QuantScheme::Int4PerGroup:
        return "bytes [0, " + codes + "): " + nibbles + ", code c = q + 8 with q in -7..7; then " +
               scales + " fp16 scale(s), one per " +
               (spec.scheme == QuantScheme::Int4PerTensor ? std::string("tensor")
                : spec.scheme == QuantScheme::Int4PerRow
                    ? std::string("row")
                    : "group of " + std::to_string(spec.groupSize) +
                          " consecutive weights (group e / " + std::to_string(spec.groupSize) +
                          ")") +
               "; w = (c - 8) * scale";
    case QuantScheme::Nf4:
        return "bytes [0, " + codes + "): " + nibbles + ", code = index of an NF4 level (16, " +
               "ascending, -1..1); then " + scales + " fp16 absmax, one per block of " +
               std::to_string(spec.groupSize) + " consecutive weights (block e / " +
               std::to_string(spec.groupSize) + "); w = level[code] * absmax";
    case QuantScheme::AsStored:
        break;
    }
    return {};
}

void writeHalf(std::uint8_t* dst, std::uint16_t h) {
    dst[0] = std::uint8_t(h & 0xff);
    dst[1] = std::uint8_t(h >> 8);
}

std::uint16_t readHalf(const std::uint8_t* src) {
    return std::uint16_t(src[0] | (std::uint16_t(src[1]) << 8));
}

void setNibble(std::uint8_t* codes, std::uint64_t e, unsigned code) {
    if (e % 2 == 0)
        codes[e / 2] = std::uint8_t((codes[e / 2] & 0xf0) | code);
    else
        codes[e / 2] = std::uint8_t((codes[e / 2] & 0x0f) | (code << 4));
}

unsigned getNibble(const std::uint8_t* codes, std::uint64_t e) {
    return e % 2 == 0 ? codes[e / 2] & 0x0fu : codes[e / 2] >> 4;
}

float absMax(std::span<const float> values) {
    float m = 0.0f;
    for (float v : values) m = std::max(m, std::fabs(v));
    return m;
}

// Symmetric absmax quantization of one run of weights with qmax levels each side.
template <typename Store>
void quantizeRun(std::span<const float> run, int qmax, std::uint8_t* scaleOut, Store store) {
    const std::uint16_t scaleBits = halfRoundedUp(absMax(run) / float(qmax));
    writeHalf(scaleOut, scaleBits);
    const float scale = halfToFloat(scaleBits);
    for (std::size_t i = 0; i < run.size(); ++i) {
        int q = 0;
        if (scale > 0.0f) q = std::clamp(int(std::nearbyint(run[i] / scale)), -qmax, qmax);
        store(i, q);
    }
}

void quantizeNf4Run(std::span<const float> run, std::uint8_t* scaleOut, std::uint8_t* codes,
                    std::uint64_t firstElement) {
    const std::uint16_t absmaxBits = halfRoundedUp(absMax(run));
    writeHalf(scaleOut, absmaxBits);
    const float absmax = halfToFloat(absmaxBits);
    const float inverse = absmax > 0.0f ? 1.0f / absmax : 0.0f;
    // nearestNf4Level inlined as a count of the midpoints below x (branch-free; same ties).
    std::array<float, 15> midpoints{};
    const auto& levels = nf4Levels();
    for (std::size_t i = 0; i < 15; ++i) midpoints[i] = 0.5f * (levels[i] + levels[i + 1]);
    for (std::size_t i = 0; i < run.size(); ++i) {
        const float x = run[i] * inverse;
        unsigned index = 0;
        for (float m : midpoints) index += m < x ? 1u : 0u;
        setNibble(codes, firstElement + i, index);
    }
}

} // namespace

std::string QuantSchemeSpec::name() const {
    switch (scheme) {
    case QuantScheme::Fp32:
        return "fp32";
    case QuantScheme::Fp16:
        return "fp16";
    case QuantScheme::Int8PerTensor:
        return "int8-tensor";
    case QuantScheme::Int8PerRow:
        return "int8-row";
    case QuantScheme::Int4PerTensor:
        return "int4-tensor";
    case QuantScheme::Int4PerRow:
        return "int4-row";
    case QuantScheme::Int4PerGroup:
        return "int4-g" + std::to_string(groupSize);
    case QuantScheme::Nf4:
        return "nf4-b" + std::to_string(groupSize);
    case QuantScheme::AsStored:
        return "as-stored";
    }
    return "?";
}

QuantSchemeSpec parseQuantScheme(std::string_view name) {
    auto sized = [&](std::string_view prefix,
                     QuantScheme scheme) -> std::optional<QuantSchemeSpec> {
        if (name.substr(0, prefix.size()) != prefix) return std::nullopt;
        const std::string_view digits = name.substr(prefix.size());
        std::uint32_t size = 0;
        auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), size);
        if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() ||
            size == 0 || size > (1u << 20))
            return std::nullopt;
        return QuantSchemeSpec{scheme, size};
    };
    if (name == "fp32" || name == "f32") return {QuantScheme::Fp32, 0};
    if (name == "fp16" || name == "f16") return {QuantScheme::Fp16, 0};
    if (name == "int8-tensor") return {QuantScheme::Int8PerTensor, 0};
    if (name == "int8-row") return {QuantScheme::Int8PerRow, 0};
    if (name == "int4-tensor") return {QuantScheme::Int4PerTensor, 0};
    if (name == "int4-row") return {QuantScheme::Int4PerRow, 0};
    if (name == "int4-group") return {QuantScheme::Int4PerGroup, kDefaultGroup};
    if (name == "nf4") return {QuantScheme::Nf4, kDefaultNf4Block};
    if (name == "as-stored") return {QuantScheme::AsStored, 0};
    if (auto spec = sized("int4-g", QuantScheme::Int4PerGroup)) return *spec;
    if (auto spec = sized("nf4-b", QuantScheme::Nf4)) return *spec;
    throw std::invalid_argument("unknown quantization scheme '" + std::string(name) +
                                "' (known: fp32, fp16, int8-tensor, int8-row, int4-tensor, "
                                "int4-row, int4-gN (e.g. int4-g128), nf4-bN (e.g. nf4-b64), "
                                "as-stored)");
}

std::vector<QuantSchemeSpec> standardQuantSchemes() {
    return {{QuantScheme::Fp32, 0},
            {QuantScheme::Fp16, 0},
            {QuantScheme::Int8PerTensor, 0},
            {QuantScheme::Int8PerRow, 0},
            {QuantScheme::Int4PerTensor, 0},
            {QuantScheme::Int4PerRow, 0},
            {QuantScheme::Int4PerGroup, kDefaultGroup},
            {QuantScheme::Int4PerGroup, kDefaultNf4Block},
            {QuantScheme::Nf4, kDefaultNf4Block},
            {QuantScheme::AsStored, 0}};
}

double PackedMatrix::bitsPerWeight() const {
    return elements() ? 8.0 * double(bytes.size()) / double(elements()) : 0.0;
}

std::uint16_t halfRoundedUp(float value) {
    if (!(value >= 0.0f)) throw std::invalid_argument("halfRoundedUp: value must be >= 0");
    if (value > 65504.0f) throw std::range_error("scale does not fit in fp16 (> 65504)");
    std::uint16_t bits = floatToHalf(value);
    // Non-negative halves are ordered like their bit patterns, so the next one up is bits + 1.
    if (halfToFloat(bits) < value) ++bits;
    return bits;
}

std::uint64_t packedByteCount(const QuantSchemeSpec& spec, std::uint64_t rows, std::uint64_t cols) {
    checkSpec(spec);
    return codeBytes(spec.scheme, rows * cols) + 2 * scaleCount(spec, rows, cols);
}

PackedMatrix packMatrix(const QuantSchemeSpec& spec, std::span<const float> weights,
                        std::uint64_t rows, std::uint64_t cols) {
    checkSpec(spec);
    const std::uint64_t n = rows * cols;
    if (cols != 0 && n / cols != rows) throw std::invalid_argument("packMatrix: size overflows");
    if (weights.size() != n)
        throw std::invalid_argument("packMatrix: " + std::to_string(weights.size()) +
                                    " weights for a " + std::to_string(rows) + " x " +
                                    std::to_string(cols) + " matrix");
    for (float w : weights)
        if (!std::isfinite(w)) throw std::invalid_argument("packMatrix: non-finite weight");

    PackedMatrix packed;
    packed.scheme = spec;
    packed.rows = rows;
    packed.cols = cols;
    packed.layout = layoutText(spec, rows, cols);
    const std::uint64_t codesSize = codeBytes(spec.scheme, n);
    packed.bytes.assign(packedByteCount(spec, rows, cols), 0);
    std::uint8_t* codes = packed.bytes.data();
    std::uint8_t* scales = codes + codesSize;

    switch (spec.scheme) {
    case QuantScheme::Fp32:
        if (n) std::memcpy(codes, weights.data(), n * 4); // the host is little-endian
        return packed;
    case QuantScheme::Fp16:
        for (std::uint64_t e = 0; e < n; ++e) writeHalf(codes + 2 * e, floatToHalf(weights[e]));
        return packed;
    case QuantScheme::Nf4: {
        const std::uint64_t run = spec.groupSize;
        for (std::uint64_t first = 0, s = 0; first < n; first += run, ++s)
            quantizeNf4Run(weights.subspan(first, std::min(run, n - first)), scales + 2 * s, codes,
                           first);
        return packed;
    }
    case QuantScheme::AsStored:
        break; // refused by checkSpec
    default: {
        const bool fourBit = isFourBit(spec.scheme);
        const int qmax = fourBit ? 7 : 127;
        const std::uint64_t run = scaleRun(spec, rows, cols);
        for (std::uint64_t first = 0, s = 0; first < n; first += run, ++s) {
            auto values = weights.subspan(first, std::min(run, n - first));
            if (fourBit)
                quantizeRun(values, qmax, scales + 2 * s, [&](std::size_t i, int q) {
                    setNibble(codes, first + i, unsigned(q + 8));
                });
            else
                quantizeRun(values, qmax, scales + 2 * s, [&](std::size_t i, int q) {
                    codes[first + i] = std::uint8_t(std::int8_t(q));
                });
        }
        // An odd element count leaves the last high nibble unused: make it code 8 (zero).
        if (fourBit && n % 2 == 1) setNibble(codes, n, 8);
        return packed;
    }
    }
    return packed;
}

PackedMatrix packStoredMatrix(const StoredTensor& tensor) {
    if (tensor.shape.size() != 2)
        throw std::invalid_argument("as-stored packing needs a matrix; " + tensor.name + " has " +
                                    std::to_string(tensor.shape.size()) + " dimensions");
    const auto expected = tensorBytes(tensor.type, tensor.elements());
    if (!expected || *expected != tensor.data.size())
        throw std::invalid_argument("as-stored packing: " + tensor.name +
                                    " holds the wrong number of bytes for its type and shape");
    PackedMatrix packed;
    packed.scheme = {QuantScheme::AsStored, 0};
    packed.rows = tensor.rows();
    packed.cols = tensor.cols();
    packed.storedType = tensor.type;
    packed.bytes.assign(tensor.data.begin(), tensor.data.end());
    const auto traits = tensorTypeTraits(tensor.type);
    packed.layout = "the file's " + std::string(traits.name) + " bytes, row-major: blocks of " +
                    std::to_string(traits.blockElements) + " weights in " +
                    std::to_string(traits.blockBytes) + " bytes (GGUF block layout)";
    return packed;
}

PackedMatrix packTensor(const QuantSchemeSpec& spec, const StoredTensor& tensor,
                        std::span<const float> dequantized) {
    if (spec.scheme == QuantScheme::AsStored) return packStoredMatrix(tensor);
    return packMatrix(spec, dequantized, tensor.rows(), tensor.cols());
}

void dequantizeMatrix(const PackedMatrix& packed, std::span<float> out) {
    const std::uint64_t n = packed.elements();
    if (out.size() != n) throw std::invalid_argument("dequantizeMatrix: output size mismatch");
    const QuantSchemeSpec& spec = packed.scheme;
    if (spec.scheme == QuantScheme::AsStored) {
        dequantize(packed.storedType, packed.bytes, out);
        return;
    }
    if (packed.bytes.size() != packedByteCount(spec, packed.rows, packed.cols))
        throw std::invalid_argument("dequantizeMatrix: packed size does not match the scheme");
    const std::uint8_t* codes = packed.bytes.data();
    const std::uint8_t* scales = codes + codeBytes(spec.scheme, n);
    const std::uint64_t run = scaleRun(spec, packed.rows, packed.cols);

    switch (spec.scheme) {
    case QuantScheme::Fp32:
        if (n) std::memcpy(out.data(), codes, n * 4);
        return;
    case QuantScheme::Fp16:
        for (std::uint64_t e = 0; e < n; ++e) out[e] = halfToFloat(readHalf(codes + 2 * e));
        return;
    case QuantScheme::Int8PerTensor:
    case QuantScheme::Int8PerRow:
        for (std::uint64_t first = 0, s = 0; first < n; first += run, ++s) {
            const float scale = halfToFloat(readHalf(scales + 2 * s));
            const std::uint64_t end = std::min(first + run, n);
            for (std::uint64_t e = first; e < end; ++e)
                out[e] = float(std::int8_t(codes[e])) * scale;
        }
        return;
    case QuantScheme::Nf4: {
        const auto& levels = nf4Levels();
        for (std::uint64_t first = 0, s = 0; first < n; first += run, ++s) {
            const float absmax = halfToFloat(readHalf(scales + 2 * s));
            const std::uint64_t end = std::min(first + run, n);
            for (std::uint64_t e = first; e < end; ++e)
                out[e] = levels[getNibble(codes, e)] * absmax;
        }
        return;
    }
    default: // the INT4 schemes
        for (std::uint64_t first = 0, s = 0; first < n; first += run, ++s) {
            const float scale = halfToFloat(readHalf(scales + 2 * s));
            const std::uint64_t end = std::min(first + run, n);
            for (std::uint64_t e = first; e < end; ++e)
                out[e] = float(int(getNibble(codes, e)) - 8) * scale;
        }
        return;
    }
}

std::vector<float> dequantizeMatrix(const PackedMatrix& packed) {
    std::vector<float> out(packed.elements());
    dequantizeMatrix(packed, out);
    return out;
}

} // namespace inferscope::models
