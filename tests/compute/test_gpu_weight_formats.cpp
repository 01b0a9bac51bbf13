// Every quantization scheme as a GPU weight format (compute/GpuWeightPacking):
// - host pack -> GPU dequantize equals the host dequantizer *exactly*: a matrix-matrix
//   product with the identity (x = unit vectors) returns every weight w * 1 + 0 * others,
//   which is exact in f32, so any difference is a layout or codebook bug. Shapes cover rows
//   that need padding (cols 100 -> stride 128), groups that cross rows (576 with g128), fused
//   matrices whose parts carry their own per-tensor scales, and GGUF Q4_0 / Q4_1 / Q8_0 from
//   the file's own bytes; both the CPU-device layout and the GPU (split-columns) layout run.
// - a whole forward pass (prefill + greedy decode) of the engine with quantized weights
//   against the CPU reference given the same quantized-then-dequantized weights (per source
//   tensor, models::WeightQuantizer), after switching formats at run time with
//   Engine::setWeightFormat. Tolerance as in test_vulkan_engine: the GPU keeps K/V in f16,
//   so |gpu - cpu| <= 2e-3 * (1 + max|cpu logit| of the row), and the same top-1 at every
//   position.
// - bits per weight of the GPU buffers against the host packer's.
// The validation layer (INFERSCOPE_VALIDATION=1 from CTest) must report no error.
#include "compute/engine/Engine.hpp"
#include "compute/engine/Kernels.hpp"
#include "compute/formats/DeviceCodeLayout.hpp"
#include "compute/formats/GpuWeightPacking.hpp"
#include "models/LoadedModel.hpp"
#include "models/formats/TensorType.hpp"
#include "models/quant/GgmlQuantize.hpp"
#include "models/quant/LlamaQuantMix.hpp"
#include "models/quant/WeightQuantizer.hpp"
#include "models/reference/ReferenceTransformer.hpp"
#include "models/synthetic/SyntheticModel.hpp"
#include "shaders/EmbeddedShaders.hpp"
#include "tests/compute/LogitComparison.hpp"

#include <QTemporaryDir>
#include <QtTest>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <set>

using namespace inferscope;
using namespace inferscope::compute;

using inferscope::tests::compareLogits;

namespace {

std::vector<float> randomWeights(std::size_t n, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, 0.05f);
    std::vector<float> values(n);
    for (auto& v : values) v = dist(rng);
    // A few outliers, so per-tensor and per-row scales differ from per-group ones.
    for (std::size_t i = 7; i < n; i += 997) values[i] *= 12.0f;
    return values;
}

const std::vector<WeightFormat>& quantizedFormats() {
    static const std::vector<WeightFormat> formats = {
        WeightFormat::Int8Tensor, WeightFormat::Int8Row,  WeightFormat::Int4Tensor,
        WeightFormat::Int4Row,    WeightFormat::Int4G128, WeightFormat::Int4G64,
        WeightFormat::Nf4,        WeightFormat::Q4_0,     WeightFormat::Q4_1,
        WeightFormat::Q8_0};
    return formats;
}

// The GGUF types in the planes layout (compute/formats/GgmlPlanes.hpp), and bf16.
const std::vector<WeightFormat>& planeFormats() {
    static const std::vector<WeightFormat> formats = {
        WeightFormat::Q5_0,   WeightFormat::Q5_1, WeightFormat::IQ4_NL, WeightFormat::Q2_K,
        WeightFormat::Q3_K,   WeightFormat::Q4_K, WeightFormat::Q5_K,   WeightFormat::Q6_K,
        WeightFormat::IQ4_XS, WeightFormat::BF16};
    return formats;
}

bool ggmlFormat(WeightFormat format) {
    return weightFormatInfo(format).packer == WeightPacker::GgmlBlocks;
}

models::TensorType ggmlTypeOf(WeightFormat format) {
    return *weightFormatInfo(format).storedType;
}

// Elements per block of a GGUF format's type (32 or 256).
std::uint32_t ggmlBlock(WeightFormat format) {
    return models::tensorTypeTraits(ggmlTypeOf(format)).blockElements;
}

} // namespace

class GpuWeightFormatsTest : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::unique_ptr<VulkanContext> context_;
    std::vector<std::unique_ptr<Kernels>> variants_;
    std::unique_ptr<CommandRecorder> recorder_;
    std::uint32_t engineValidationErrors_ = 0;

    // The GPU's copy of a packed matrix, read back through one matrix-matrix product with
    // the identity (the register-tiled prefill variant): result[r * cols + c] = W[r][c].
    std::vector<float> readBack(Kernels& kernels, const DeviceMatrix& matrix) {
        const std::uint32_t rows = matrix.rows, cols = matrix.cols, stride = matrix.stride;
        std::vector<float> identity(std::size_t(cols) * stride, 0.0f);
        for (std::uint32_t c = 0; c < cols; ++c) identity[std::size_t(c) * stride + c] = 1.0f;
        Buffer input(*context_, identity.size() * 4, BufferKind::DeviceLocal, "identity");
        input.upload(std::span<const float>(identity));
        Buffer output(*context_, std::size_t(cols) * rows * 4, BufferKind::Readback, "columns");
        MatvecArgs args;
        args.weights = &matrix;
        args.input = &input;
        args.inputStride = stride;
        args.output = &output;
        args.outputStride = rows;
        args.tokens = cols;
        recorder_->begin();
        kernels.matvec(*recorder_, args, "readback");
        recorder_->submitAndWait();
        const auto columns = output.read<float>(std::size_t(cols) * rows);
        std::vector<float> result(std::size_t(rows) * cols);
        for (std::uint32_t c = 0; c < cols; ++c)
            for (std::uint32_t r = 0; r < rows; ++r)
                result[std::size_t(r) * cols + c] = columns[std::size_t(c) * rows + r];
        return result;
    }

    // Compares bit for bit (as floats: +0 == -0); reports the first difference.
    static bool sameValues(const std::vector<float>& gpu, const std::vector<float>& host,
                           std::uint32_t cols, const std::string& what) {
        if (gpu.size() != host.size()) {
            qWarning("%s: %zu values, expected %zu", what.c_str(), gpu.size(), host.size());
            return false;
        }
        for (std::size_t i = 0; i < gpu.size(); ++i) {
            if (gpu[i] != host[i]) {
                qWarning("%s: weight (%zu, %zu) gpu %.9g host %.9g", what.c_str(), i / cols,
                         i % cols, gpu[i], host[i]);
                return false;
            }
        }
        return true;
    }

    struct Shape {
        std::vector<std::uint32_t> partRows;
        std::uint32_t cols;
    };

    void checkExact(WeightFormat format, const Shape& shape, bool fromStoredBytes,
                    std::uint32_t seed, std::uint32_t rowBlock) {
        const auto name = std::string(weightFormatName(format)) + " " +
                          std::to_string(shape.partRows.size()) + " part(s) x " +
                          std::to_string(shape.cols) + (fromStoredBytes ? " (stored bytes)" : "");
        std::vector<std::vector<float>> values;
        std::vector<std::vector<std::uint8_t>> storedBytes;
        std::vector<models::StoredTensor> stored(shape.partRows.size());
        std::vector<MatrixPart> parts;
        std::vector<float> expected;
        for (std::size_t i = 0; i < shape.partRows.size(); ++i) {
            const std::uint32_t rows = shape.partRows[i];
            values.push_back(
                randomWeights(std::size_t(rows) * shape.cols, seed + std::uint32_t(i)));
            MatrixPart part{values.back(), rows, nullptr};
            if (fromStoredBytes) {
                storedBytes.push_back(models::quantizeGgml(ggmlTypeOf(format), values.back()));
            }
            parts.push_back(part);
        }
        for (std::size_t i = 0; i < parts.size(); ++i) {
            if (fromStoredBytes) {
                // A tensor as a GGUF file holds it: the GPU must read these very codes.
                stored[i].name = "w" + std::to_string(i);
                stored[i].type = ggmlTypeOf(format);
                stored[i].shape = {shape.cols, shape.partRows[i]};
                stored[i].data = storedBytes[i];
                parts[i] = MatrixPart{{}, shape.partRows[i], &stored[i]};
            }
            const auto host = referenceDequantized(format, values[i], shape.partRows[i], shape.cols,
                                                   fromStoredBytes ? &stored[i] : nullptr);
            expected.insert(expected.end(), host.begin(), host.end());
        }
        const auto packed = packForGpu(format, parts, shape.cols);
        // The code order (compute/formats/DeviceCodeLayout.hpp) with every kernel variant,
        // where the row block divides the rows (the default picks row-major elsewhere).
        QCOMPARE(uploadPacked(*context_, packed, "W").rowBlock,
                 packed.rows % kInterleavedRowBlock ? 0u : kInterleavedRowBlock);
        if (rowBlock && packed.rows % rowBlock) return;
        checkReadBack(uploadPacked(*context_, packed, "W " + name, rowBlock), format, shape,
                      expected, name + (rowBlock ? " interleaved" : " row-major"));
    }

    void checkReadBack(const DeviceMatrix& matrix, WeightFormat format, const Shape& shape,
                       const std::vector<float>& expected, const std::string& name) {
        QCOMPARE(std::uint64_t(matrix.rows) * matrix.cols, std::uint64_t(expected.size()));
        // Group formats read rows of 64k weights with the "_aligned" kernels, others without.
        const bool grouped = format == WeightFormat::Int4G128 || format == WeightFormat::Int4G64 ||
                             format == WeightFormat::Nf4;
        QCOMPARE(matrix.alignedGroups, grouped && shape.cols % 64 == 0);
        for (std::size_t v = 0; v < variants_.size(); ++v) {
            const auto gpu = readBack(*variants_[v], matrix);
            QVERIFY2(sameValues(gpu, expected, shape.cols, name + " variant " + std::to_string(v)),
                     name.c_str());
        }
        // The decode variant (one token per dispatch): the first column.
        {
            const std::uint32_t rows = matrix.rows;
            std::vector<float> x(matrix.stride, 0.0f);
            x[0] = 1.0f;
            Buffer input(*context_, x.size() * 4, BufferKind::DeviceLocal, "e0");
            input.upload(std::span<const float>(x));
            Buffer output(*context_, std::size_t(rows) * 4, BufferKind::Readback, "column 0");
            MatvecArgs args;
            args.weights = &matrix;
            args.input = &input;
            args.inputStride = matrix.stride;
            args.output = &output;
            args.outputStride = rows;
            args.tokens = 1;
            for (auto& variant : variants_) {
                recorder_->begin();
                variant->matvec(*recorder_, args, "column 0");
                recorder_->submitAndWait();
                const auto column = output.read<float>(rows);
                for (std::uint32_t r = 0; r < rows; ++r) {
                    if (column[r] != expected[std::size_t(r) * shape.cols]) {
                        QFAIL(qPrintable(QString::fromStdString(name) +
                                         QString(": decode row %1 differs").arg(r)));
                    }
                }
            }
        }
        // The embedding lookup (a tied head doubles as the table): whole rows, exactly, and
        // zeros in the padding columns, where a format with offsets would put its minimum.
        {
            const std::vector<std::uint32_t> ids = {matrix.rows - 1, 0, matrix.rows / 2, 0};
            Buffer idBuffer(*context_, ids.size() * 4, BufferKind::DeviceLocal, "ids");
            idBuffer.upload(std::span<const std::uint32_t>(ids));
            const std::uint32_t stride = matrix.stride;
            Buffer output(*context_, ids.size() * stride * 4, BufferKind::Readback, "rows");
            for (auto& variant : variants_) {
                recorder_->begin();
                variant->embed(*recorder_, matrix, idBuffer, output, stride,
                               std::uint32_t(ids.size()));
                recorder_->submitAndWait();
                const auto rows = output.read<float>(ids.size() * stride);
                for (std::size_t t = 0; t < ids.size(); ++t)
                    for (std::uint32_t c = 0; c < stride; ++c) {
                        const float want =
                            c < shape.cols ? expected[std::size_t(ids[t]) * shape.cols + c] : 0.0f;
                        if (rows[t * stride + c] != want)
                            QFAIL(qPrintable(QString::fromStdString(name) +
                                             QString(": embedding row %1 column %2: %3, not %4")
                                                 .arg(ids[t])
                                                 .arg(c)
                                                 .arg(rows[t * stride + c])
                                                 .arg(want)));
                    }
            }
        }
    }

    // The weights the GPU computes with, per source tensor, for the reference transformer.
    static models::ReferenceWeights quantizedReference(const models::ReferenceWeights& weights,
                                                       const models::ModelConfig& config,
                                                       WeightFormat format) {
        models::ReferenceWeights result = weights;
        for (auto& [name, values] : result) {
            if (name.find("norm") != std::string::npos || name.find("bias") != std::string::npos ||
                name.find("rope") != std::string::npos)
                continue;
            if (name == "token_embd.weight") {
                // The embedding table stays f16 (the head is untied in these models).
                for (auto& v : values) v = models::halfToFloat(models::floatToHalf(v));
                continue;
            }
            const std::uint32_t cols = name.find("ffn_down") != std::string::npos ? config.ffnSize
                                       : name.find("attn_output") != std::string::npos
                                           ? config.heads * config.headDim
                                           : config.hiddenSize;
            values =
                referenceDequantized(format, values, std::uint32_t(values.size() / cols), cols);
        }
        return result;
    }

    void compareForward(Engine& engine, const models::ReferenceTransformer& reference,
                        const std::vector<std::int32_t>& prompt, std::uint32_t decode,
                        const std::string& what) {
        const auto vocab = reference.config().vocabSize;
        auto cache = reference.newCache();
        const auto cpuPrompt = reference.forward(prompt, cache, true);
        auto step = engine.step({{1, prompt}}, true);
        QVERIFY2(compareLogits(step.sequences[0].logits, cpuPrompt, vocab, what + " prefill") <=
                     1.0,
                 what.c_str());
        std::int32_t next = step.sequences[0].argmax.back();
        for (std::uint32_t i = 0; i < decode; ++i) {
            const std::vector<std::int32_t> one = {next};
            const auto cpu = reference.forward(one, cache);
            auto gpu = engine.step({{1, one}});
            QVERIFY2(compareLogits(gpu.sequences[0].logits, cpu, vocab, what + " decode") <= 1.0,
                     what.c_str());
            QCOMPARE(gpu.sequences[0].argmax[0], models::argmax(cpu));
            next = gpu.sequences[0].argmax[0];
        }
        engine.release(1);
    }

    // Hidden 80 and FFN 144 pad to 128 / 192 columns; groups of 64 and 128 cross rows, and
    // each fused part (Q, K, V / gate, up) is a whole number of groups. Untied head.
    static models::SyntheticModelSpec oddShapeSpec(std::uint64_t seed) {
        models::SyntheticModelSpec spec;
        spec.layers = 2;
        spec.hiddenSize = 80;
        spec.heads = 5;
        spec.kvHeads = 1;
        spec.headDim = 16;
        spec.ffnSize = 144;
        spec.vocabSize = 300;
        spec.tiedEmbeddings = false;
        spec.outlierDims = {3, 41};
        spec.seed = seed;
        return spec;
    }

    static std::vector<std::int32_t> prompt(std::uint32_t count, std::uint32_t vocab,
                                            std::uint32_t seed) {
        std::vector<std::int32_t> tokens;
        for (std::uint32_t i = 0; i < count; ++i)
            tokens.push_back(std::int32_t((i * 7919u + seed * 104729u + 13u) % vocab));
        return tokens;
    }

    void checkEngineValidation(const Engine& engine) {
        const auto& log = engine.context().validationLog();
        for (const auto& m : log.messages()) qWarning("%s", m.c_str());
        engineValidationErrors_ += log.errors();
        QCOMPARE(log.errors(), 0u);
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        context_ = std::make_unique<VulkanContext>();
        const auto native = KernelTuning::forDevice(context_->info());
        variants_.push_back(std::make_unique<Kernels>(*context_, native));
        // The GPU layout (lanes split a row, reduce at the end) forced on this device.
        auto split = native;
        split.splitColumns = true;
        split.broadcastInput = false;
        split.workgroup = std::max(4u, context_->info().subgroupSize);
        variants_.push_back(std::make_unique<Kernels>(*context_, split));
        recorder_ = std::make_unique<CommandRecorder>(*context_);
        qInfo("device: %s, validation %s", context_->info().name.c_str(),
              context_->validationEnabled() ? "on" : "off");
    }

    void names() {
        for (auto format : allWeightFormats()) {
            const auto name = weightFormatName(format);
            QCOMPARE(weightFormatFromName(name), std::optional<WeightFormat>(format));
        }
        // The lab's scheme names (models::QuantSchemeSpec::name) resolve to the same formats.
        for (const auto& spec : models::standardQuantSchemes()) {
            const auto found = weightFormatFromName(spec.name());
            QVERIFY2(found.has_value(), spec.name().c_str());
        }
        QCOMPARE(weightFormatFromName("int4-group"), std::optional(WeightFormat::Int4G128));
        QVERIFY(!weightFormatFromName("int3"));
    }

    // The format table against the build's generated kernels, the lab's quantizer and the
    // packers: one name per format (the lab's), old spellings as aliases only, every matrix
    // kernel embedded for every format (and no kernel for a format the table lacks), and the
    // table's bits per weight what the packer really produces.
    void registry() {
        std::set<std::string> embedded;
        for (const auto& shader : shaders::allShaders()) embedded.emplace(shader.name);
        std::set<std::string> expected;
        const char* kernels[] = {"matvec_", "ffn_gateup_", "qkv_rope_", "embed_"};
        for (const auto& info : weightFormatTable()) {
            const std::string name(info.name);
            QCOMPARE(weightFormatFromName(name), std::optional(info.format));
            QCOMPARE(weightFormatName(info.format), info.name);
            if (!info.alias.empty()) {
                QCOMPARE(findWeightFormat(info.alias), &info);
                QVERIFY(info.alias != info.name);
            }
            if (info.labScheme) {
                QCOMPARE(info.labScheme->name(), name);
                QCOMPARE(models::parseQuantScheme(name), *info.labScheme);
            }
            QVERIFY(weightFormatNames().find(name) != std::string::npos);
            if (info.packer == WeightPacker::PerMatrix) continue;
            for (const char* kernel : kernels) {
                expected.insert(kernel + std::string(info.shader));
                if (info.alignedVariant)
                    expected.insert(kernel + std::string(info.shader) + "_aligned");
            }
            // 64 rows of 4096 weights: bitsForRows counts the per-row scales; the group
            // formats' few extra scales (for padding columns) stay within 0.01 bits.
            const std::uint32_t rows = 64, cols = 4096;
            const auto values = randomWeights(std::size_t(rows) * cols, 11);
            const MatrixPart part{values, rows, nullptr};
            const auto packed = packForGpu(info.format, std::span(&part, 1), cols);
            const double bits = 32.0 * double(packed.words.size()) / (double(rows) * cols);
            QVERIFY2(std::fabs(bits - info.bitsForRows(cols)) < 0.01,
                     qPrintable(QString("%1: packed %2 bits, table %3")
                                    .arg(name.c_str())
                                    .arg(bits)
                                    .arg(info.bitsForRows(cols))));
            QCOMPARE(packed.alignedGroups, info.alignedVariant);
        }
        for (const auto& name : embedded) {
            for (const char* kernel : kernels) {
                if (name.rfind(kernel, 0) == 0)
                    QVERIFY2(expected.count(name), ("kernel for no format: " + name).c_str());
            }
        }
        for (const auto& name : expected)
            QVERIFY2(embedded.count(name), ("kernel not embedded: " + name).c_str());
        // Old spellings are accepted, only the canonical names are printed.
        QCOMPARE(weightFormatFromName("f16"), std::optional(WeightFormat::F16));
        QCOMPARE(weightFormatName(WeightFormat::F16), std::string_view("fp16"));
        QCOMPARE(weightFormatFromName("nf4"), std::optional(WeightFormat::Nf4));
        QCOMPARE(weightFormatName(WeightFormat::Nf4), std::string_view("nf4-b64"));
        QCOMPARE(formatForStoredType(models::TensorType::Q4_1), WeightFormat::Q4_1);
        QCOMPARE(formatForStoredType(models::TensorType::BF16), WeightFormat::BF16);
        // Every type the reader supports runs as stored in a format of its own.
        for (auto type : models::supportedTensorTypes()) {
            const auto format = formatForStoredType(type);
            QVERIFY(formatReadsStoredType(format, type));
            QVERIFY2(
                weightFormatInfo(format).name ==
                    [&] {
                        std::string lower(models::tensorTypeName(type));
                        for (auto& ch : lower) ch = char(std::tolower(ch));
                        return lower == "f32"   ? std::string("fp32")
                               : lower == "f16" ? std::string("fp16")
                                                : lower;
                    }(),
                std::string(models::tensorTypeName(type)).c_str());
        }
        QVERIFY(formatReadsStoredType(WeightFormat::F16, models::TensorType::F16));
        QVERIFY(!formatReadsStoredType(WeightFormat::Int8Row, models::TensorType::Q8_0));
    }

    // The lab's schemes pack a slab of rows at a time, dequantizing stored bytes per slab (a
    // tied head is never whole in f32): every slab size gives the words of one slab, with
    // groups crossing rows (100 and 96 columns), fused parts and odd row counts.
    void labSchemesPackTheSameWordsInAnySlab() {
        std::uint32_t seed = 500;
        for (auto format : quantizedFormats()) {
            if (!weightFormatInfo(format).labScheme) continue;
            for (const Shape& shape : {Shape{{64, 29}, 100}, Shape{{77}, 96}, Shape{{33}, 576}}) {
                std::vector<std::vector<float>> values;
                std::vector<std::vector<std::uint8_t>> storedBytes;
                std::vector<models::StoredTensor> stored(shape.partRows.size());
                std::vector<MatrixPart> fromValues, fromStored;
                for (std::size_t i = 0; i < shape.partRows.size(); ++i) {
                    const std::uint32_t rows = shape.partRows[i];
                    values.push_back(randomWeights(std::size_t(rows) * shape.cols, seed++));
                    fromValues.push_back({values.back(), rows, nullptr});
                }
                for (std::size_t i = 0; i < shape.partRows.size(); ++i) {
                    const bool q8 = shape.cols % 32 == 0;
                    const auto type = q8 ? models::TensorType::Q8_0 : models::TensorType::F32;
                    storedBytes.push_back(
                        q8 ? models::quantizeGgml(type, values[i])
                           : std::vector<std::uint8_t>(
                                 reinterpret_cast<const std::uint8_t*>(values[i].data()),
                                 reinterpret_cast<const std::uint8_t*>(values[i].data() +
                                                                       values[i].size())));
                    stored[i].name = "w" + std::to_string(i);
                    stored[i].type = type;
                    stored[i].shape = {shape.cols, shape.partRows[i]};
                    stored[i].data = storedBytes[i];
                    fromStored.push_back({{}, shape.partRows[i], &stored[i]});
                }
                const auto name =
                    std::string(weightFormatName(format)) + " x " + std::to_string(shape.cols);
                const auto whole = packForGpu(format, fromValues, shape.cols);
                for (std::uint64_t slab : {1ull, 700ull, 5000ull}) {
                    QVERIFY2(packForGpu(format, fromValues, shape.cols, slab).words == whole.words,
                             (name + ", slab " + std::to_string(slab)).c_str());
                }
                // From the stored bytes, a slab at a time: the words of their dequantized
                // values packed whole.
                std::vector<std::vector<float>> dequantized;
                std::vector<MatrixPart> fromDequantized;
                for (std::size_t i = 0; i < stored.size(); ++i) {
                    dequantized.emplace_back(values[i].size());
                    models::dequantize(stored[i].type, stored[i].data, dequantized.back());
                    fromDequantized.push_back({dequantized.back(), shape.partRows[i], nullptr});
                }
                const auto storedWhole = packForGpu(format, fromDequantized, shape.cols);
                QVERIFY2(packForGpu(format, fromStored, shape.cols, 700).words == storedWhole.words,
                         (name + " from stored bytes").c_str());
            }
        }
    }

    // One function per code order and group of formats, so each fits its CTest part on an
    // empty shader cache.
    void dequantizeExactlyRowMajor() { dequantizeEveryFormat(0, quantizedFormats()); }
    void dequantizeExactlyInterleaved() {
        dequantizeEveryFormat(kInterleavedRowBlock, quantizedFormats());
    }
    void dequantizePlanesRowMajor() { dequantizeEveryFormat(0, planeFormats()); }
    void dequantizePlanesInterleaved() {
        dequantizeEveryFormat(kInterleavedRowBlock, planeFormats());
    }

    // Takes the order, so QtTest does not run it as a test function of its own.
    void dequantizeEveryFormat(std::uint32_t rowBlock, const std::vector<WeightFormat>& formats) {
        std::uint32_t seed = 100;
        for (auto format : formats) {
            std::vector<Shape> shapes;
            if (ggmlFormat(format) && ggmlBlock(format) == 256) {
                // Super-blocks of 256: rows of whole super-blocks; fused parts; 96 rows; and
                // from values, super-blocks across rows of 576 (12 and 4 + 8 rows).
                shapes = {{{13}, 256}, {{16, 8, 8}, 512}, {{96}, 256}, {{12}, 576}, {{4, 8}, 576}};
            } else if (ggmlFormat(format)) {
                // GGUF blocks need whole blocks of 32 per row; 96 pads to 128. 96 rows: three
                // row blocks of the interleaved order.
                shapes = {{{13}, 96}, {{16, 8, 8}, 64}, {{96}, 96}};
            } else {
                // 576 with groups of 128: groups cross rows; 100: padded rows (stride 128)
                // and groups crossing rows; fused parts keep their own per-tensor scales;
                // 32 and 64 rows: one and two row blocks of the interleaved order.
                shapes = {{{9}, 576}, {{23}, 100}, {{16, 8, 8}, 64}, {{32, 32}, 100}};
            }
            for (const auto& shape : shapes) {
                checkExact(format, shape, false, seed++, rowBlock);
                if (QTest::currentTestFailed()) return;
                if (ggmlFormat(format) && shape.cols % ggmlBlock(format) == 0) {
                    checkExact(format, shape, true, seed++, rowBlock);
                    if (QTest::currentTestFailed()) return;
                }
            }
        }
    }

    // Blocks llama.cpp's quantizer wrote (tests/data/quant-fixtures.json, with gguf-py's
    // values): as stored, every GPU format reads them to the same floats bit for bit.
    void dequantizeLlamaCppBlocks() {
        std::ifstream in(INFERSCOPE_TEST_DATA "/quant-fixtures.json");
        QVERIFY2(in, "tests/data/quant-fixtures.json is missing");
        const auto fixture = nlohmann::json::parse(in);
        std::size_t checked = 0;
        for (const auto& block : fixture.at("blocks")) {
            const std::string typeName = block.at("type");
            std::optional<models::TensorType> type;
            for (auto t : models::supportedTensorTypes())
                if (models::tensorTypeName(t) == typeName) type = t;
            QVERIFY2(type.has_value(), typeName.c_str());
            const std::string hex = block.at("hex");
            std::vector<std::uint8_t> bytes(hex.size() / 2);
            for (std::size_t i = 0; i < bytes.size(); ++i)
                bytes[i] = std::uint8_t(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
            const auto expected = block.at("values").get<std::vector<float>>();
            // The two blocks as one row.
            models::StoredTensor stored;
            stored.name = typeName;
            stored.type = *type;
            stored.shape = {expected.size(), 1};
            stored.data = bytes;
            const auto format = formatForStoredType(*type);
            const MatrixPart part{{}, 1, &stored};
            const auto packed =
                packForGpu(format, std::span(&part, 1), std::uint32_t(expected.size()));
            checkReadBack(uploadPacked(*context_, packed, "llama.cpp " + typeName), format,
                          Shape{{1}, std::uint32_t(expected.size())}, expected,
                          "llama.cpp " + typeName);
            if (QTest::currentTestFailed()) return;
            ++checked;
        }
        QVERIFY(checked >= 12);
    }

    // The interleaved code order on a hand-checked case: 4 rows of two 16-byte units
    // (unit u of row r holds words 100 + 8r + 4u ...) in blocks of 2 rows.
    void deviceCodeOrder() {
        std::vector<std::uint32_t> rowMajor(4 * 8);
        for (std::uint32_t i = 0; i < rowMajor.size(); ++i) rowMajor[i] = 100 + i;
        const auto words = interleaveCodeRows(rowMajor, 4, 8, 2);
        // Units in device order: r0u0 r1u0 r0u1 r1u1 | r2u0 r3u0 r2u1 r3u1.
        const std::vector<std::uint32_t> rowUnit = {0, 2, 1, 3, 4, 6, 5, 7};
        QCOMPARE(words.size(), rowMajor.size());
        for (std::size_t u = 0; u < rowUnit.size(); ++u)
            for (std::uint32_t k = 0; k < 4; ++k)
                QCOMPARE(words[u * 4 + k], 100 + rowUnit[u] * 4 + k);
        QCOMPARE(interleaveCodeRows(rowMajor, 4, 8, 0), rowMajor);
        QVERIFY_THROWS_EXCEPTION(ComputeError, interleaveCodeRows(rowMajor, 4, 8, 3));
        QVERIFY_THROWS_EXCEPTION(ComputeError, interleaveCodeRows(rowMajor, 4, 8, 8));
        QVERIFY_THROWS_EXCEPTION(ComputeError, interleaveCodeRows(rowMajor, 2, 8, 2));
        QVERIFY_THROWS_EXCEPTION(ComputeError, interleaveCodeRows(rowMajor, 4, 6, 2));
        // What uploads pick: interleaved on CPU devices where the block divides the rows.
        DeviceInfo cpu, gpu;
        cpu.type = "cpu";
        gpu.type = "discrete";
        QCOMPARE(codeRowBlockFor(cpu, 576), kInterleavedRowBlock);
        QCOMPARE(codeRowBlockFor(cpu, 80), 0u);
        QCOMPARE(codeRowBlockFor(gpu, 576), 0u);
    }

    void refusesShapesTheLayoutCannotHold() {
        const auto values = randomWeights(10 * 30, 3);
        const MatrixPart part{values, 10, nullptr};
        QVERIFY_THROWS_EXCEPTION(ComputeError,
                                 packForGpu(WeightFormat::Q4_0, std::span(&part, 1), 30));
        QVERIFY_THROWS_EXCEPTION(ComputeError,
                                 packForGpu(WeightFormat::Q5_0, std::span(&part, 1), 30));
        // Super-blocks need rows of a multiple of 256 (as every such file has), or from values
        // rows of a multiple of 64 and parts of whole super-blocks.
        const auto wide = randomWeights(4 * 96, 3);
        const MatrixPart widePart{wide, 4, nullptr};
        QVERIFY_THROWS_EXCEPTION(ComputeError,
                                 packForGpu(WeightFormat::Q4_K, std::span(&widePart, 1), 96));
        const auto rows = randomWeights(3 * 64, 3);
        const MatrixPart partial{rows, 3, nullptr};
        QVERIFY_THROWS_EXCEPTION(ComputeError,
                                 packForGpu(WeightFormat::IQ4_XS, std::span(&partial, 1), 64));
        QVERIFY_THROWS_EXCEPTION(ComputeError,
                                 packForGpu(WeightFormat::Int4G128, std::span(&part, 1), 30));
        // A fused part that is not a whole number of groups would shift its successors'.
        const auto first = randomWeights(3 * 64, 4), second = randomWeights(5 * 64, 5);
        const MatrixPart fused[] = {{first, 3, nullptr}, {second, 5, nullptr}};
        QVERIFY_THROWS_EXCEPTION(ComputeError, packForGpu(WeightFormat::Int4G128, fused, 64));
    }

    void bitsPerWeightOfGpuBuffers() {
        // SmolLM2's matrix shapes: the GPU layout costs what the host packer costs, plus at
        // most a few padding words (and int8/int4 per tensor: one scale per row).
        struct Expect {
            WeightFormat format;
            models::QuantSchemeSpec spec;
        };
        using models::QuantScheme;
        const Expect expects[] = {{WeightFormat::Int8Tensor, {QuantScheme::Int8PerTensor, 0}},
                                  {WeightFormat::Int8Row, {QuantScheme::Int8PerRow, 0}},
                                  {WeightFormat::Int4Tensor, {QuantScheme::Int4PerTensor, 0}},
                                  {WeightFormat::Int4Row, {QuantScheme::Int4PerRow, 0}},
                                  {WeightFormat::Int4G128, {QuantScheme::Int4PerGroup, 128}},
                                  {WeightFormat::Int4G64, {QuantScheme::Int4PerGroup, 64}},
                                  {WeightFormat::Nf4, {QuantScheme::Nf4, 64}}};
        const std::uint32_t shapes[][2] = {{576, 576}, {1536, 576}, {576, 1536}};
        for (const auto& e : expects) {
            for (const auto& s : shapes) {
                const auto values = randomWeights(std::size_t(s[0]) * s[1], 9);
                const MatrixPart part{values, s[0], nullptr};
                const auto packed = packForGpu(e.format, std::span(&part, 1), s[1]);
                const double elements = double(s[0]) * s[1];
                const double gpuBits = 8.0 * double(packed.words.size() * 4) / elements;
                const double hostBits =
                    8.0 * double(models::packedByteCount(e.spec, s[0], s[1])) / elements;
                qInfo("%-12s %4u x %4u: host %.4f bits/weight, GPU buffer %.4f",
                      std::string(weightFormatName(e.format)).c_str(), s[0], s[1], hostBits,
                      gpuBits);
                QVERIFY(gpuBits >= hostBits);
                const double perRowScale = e.spec.scheme == QuantScheme::Int8PerTensor ||
                                                   e.spec.scheme == QuantScheme::Int4PerTensor
                                               ? 16.0 / s[1]
                                               : 0.0;
                QVERIFY(gpuBits - hostBits <= perRowScale + 0.002);
            }
        }
        // The chapter's figure: int4 with fp16 scales per 128 weights is 4.125 bits.
        const auto values = randomWeights(std::size_t(1536) * 576, 10);
        const MatrixPart part{values, 1536, nullptr};
        const auto packed = packForGpu(WeightFormat::Int4G128, std::span(&part, 1), 576);
        QVERIFY(std::abs(8.0 * double(packed.words.size() * 4) / (1536.0 * 576) - 4.125) < 0.001);
    }

    void forwardPassPerFormatWithRuntimeSwitch() {
        const auto spec = oddShapeSpec(21);
        const auto path = std::filesystem::path(dir_.path().toStdString()) / "odd.gguf";
        models::writeSyntheticGguf(spec, path);
        const auto model = models::loadModel(path);
        const auto weights = models::dequantizeAll(model.weights);
        EngineOptions options;
        options.weightFormat = WeightFormat::F16;
        Engine engine(model.config, weights, options);
        std::uint32_t seed = 1;
        for (auto format : quantizedFormats()) {
            if (ggmlFormat(format)) continue; // GGUF blocks need rows of 32k: below
            engine.setWeightFormat(format);
            QCOMPARE(engine.weightFormat(), format);
            for (const auto& info : engine.weightMatrices()) {
                if (info.name != "token_embd") QCOMPARE(info.format, format);
            }
            models::ReferenceTransformer reference(
                model.config, quantizedReference(weights, model.config, format), 2);
            compareForward(engine, reference, prompt(19, 300, seed++), 6,
                           std::string(weightFormatName(format)));
            if (QTest::currentTestFailed()) return;
        }
        checkEngineValidation(engine);
    }

    void forwardPassGgmlFormatsAndAsStored() {
        // Matrices stored as Q4_1 in the file: "as stored" reads the file's codes; q4_0 and
        // q8_0 re-quantize them (from the dequantized f32), as the formats do for any file.
        models::SyntheticModelSpec spec;
        spec.layers = 2;
        spec.hiddenSize = 64;
        spec.heads = 4;
        spec.kvHeads = 2;
        spec.headDim = 16;
        spec.ffnSize = 96;
        spec.vocabSize = 300;
        spec.tiedEmbeddings = false;
        spec.seed = 31;
        spec.weightType = models::TensorType::Q4_1;
        const auto path = std::filesystem::path(dir_.path().toStdString()) / "q4_1.gguf";
        models::writeSyntheticGguf(spec, path);
        const auto model = models::loadModel(path);
        const auto weights = models::dequantizeAll(model.weights);
        EngineOptions options;
        options.weightFormat = WeightFormat::AsStored;
        Engine engine(model, options);
        for (const auto& info : engine.weightMatrices()) {
            if (info.name != "token_embd") QCOMPARE(info.format, WeightFormat::Q4_1);
        }
        QCOMPARE(engine.weightFormatLabel(), std::string("as-stored: q4_1"));
        // The file's values are what "as stored" computes with (the table rounds to f16).
        models::ReferenceTransformer asStored(
            model.config, quantizedReference(weights, model.config, WeightFormat::F32), 2);
        compareForward(engine, asStored, prompt(21, 300, 3), 6, "as-stored");
        for (auto format : {WeightFormat::Q4_0, WeightFormat::Q8_0, WeightFormat::Q4_1}) {
            engine.setWeightFormat(format);
            models::ReferenceTransformer reference(
                model.config, quantizedReference(weights, model.config, format), 2);
            compareForward(engine, reference, prompt(17, 300, 4), 6,
                           std::string(weightFormatName(format)));
            if (QTest::currentTestFailed()) return;
        }
        checkEngineValidation(engine);
    }

    // llama.cpp's Q4_K_M mix (models/quant/LlamaQuantMix.hpp) as stored: rows of 256 take
    // Q4_K, layer 1's attn_v and ffn_down Q6_K (so its Q|K|V holds two formats: one section
    // each), the head Q6_K; rows of 96 fall back to Q5_0 and Q8_0, as SmolLM2's and
    // Qwen2.5's rows do. Then every planes format (and bf16) switched in at run time.
    void forwardPassMixedFilesAsStored() {
        struct Mix {
            std::uint32_t hidden, heads, headDim, ffn;
            models::QuantPreset preset;
        };
        const Mix mixes[] = {{256, 4, 64, 512, models::QuantPreset::Q4_K_M},
                             {96, 3, 32, 256, models::QuantPreset::Q4_K_M},
                             {256, 4, 64, 512, models::QuantPreset::Q3_K_M},
                             {256, 4, 64, 512, models::QuantPreset::Q5_K_M}};
        std::uint32_t seed = 50;
        for (const auto& mix : mixes) {
            models::SyntheticModelSpec spec;
            spec.layers = 2;
            spec.hiddenSize = mix.hidden;
            spec.heads = mix.heads;
            spec.kvHeads = 1;
            spec.headDim = mix.headDim;
            spec.ffnSize = mix.ffn;
            spec.vocabSize = 300;
            // Untied: the reference holds one token_embd, which the GPU's table rounds to f16.
            spec.tiedEmbeddings = false;
            spec.seed = seed++;
            spec.typeMix = mix.preset;
            const std::string what =
                std::string(models::quantPresetName(mix.preset)) + " " + std::to_string(mix.hidden);
            const auto path = std::filesystem::path(dir_.path().toStdString()) /
                              ("mix-" + std::to_string(seed) + ".gguf");
            models::writeSyntheticGguf(spec, path);
            const auto model = models::loadModel(path);
            EngineOptions options;
            options.weightFormat = WeightFormat::AsStored;
            Engine engine(model, options);
            // Every matrix (or section) in its stored type's format, none in f16.
            std::set<WeightFormat> used;
            bool split = false;
            for (const auto& info : engine.weightMatrices()) {
                if (info.name == "token_embd") continue;
                used.insert(info.format);
                QVERIFY2(info.format != WeightFormat::F16, (what + " " + info.name).c_str());
                split = split || info.name.find(" rows ") != std::string::npos;
            }
            QVERIFY2(split, (what + ": layer 1's Q|K|V in two sections").c_str());
            qInfo("%s: %s", what.c_str(), engine.weightFormatLabel().c_str());
            const auto weights = models::dequantizeAll(model.weights);
            models::ReferenceTransformer asStored(
                model.config, quantizedReference(weights, model.config, WeightFormat::F32), 2);
            compareForward(engine, asStored, prompt(21, 300, seed), 6, what + " as stored");
            if (QTest::currentTestFailed()) return;
            checkEngineValidation(engine);
        }
    }

    // Rows of 256 (whole super-blocks) and of 192 (super-blocks across rows, from values).
    void forwardPassPlaneFormatsWithRuntimeSwitch() {
        for (std::uint32_t hidden : {256u, 192u}) {
            forwardPassPlaneFormats(hidden);
            if (QTest::currentTestFailed()) return;
        }
    }

    void forwardPassPlaneFormats(std::uint32_t hidden) {
        models::SyntheticModelSpec spec;
        spec.layers = 2;
        spec.hiddenSize = hidden;
        spec.heads = hidden / 64;
        spec.kvHeads = 1;
        spec.headDim = 64;
        spec.ffnSize = 2 * hidden;
        spec.vocabSize = 300;
        spec.tiedEmbeddings = false;
        spec.seed = 61;
        const auto path = std::filesystem::path(dir_.path().toStdString()) /
                          ("planes-" + std::to_string(hidden) + ".gguf");
        models::writeSyntheticGguf(spec, path);
        const auto model = models::loadModel(path);
        const auto weights = models::dequantizeAll(model.weights);
        Engine engine(model, {});
        std::uint32_t seed = 7;
        for (auto format : planeFormats()) {
            engine.setWeightFormat(format);
            for (const auto& info : engine.weightMatrices())
                if (info.name != "token_embd") QCOMPARE(info.format, format);
            models::ReferenceTransformer reference(
                model.config, quantizedReference(weights, model.config, format), 2);
            compareForward(engine, reference, prompt(17, 300, seed++), 4,
                           std::string(weightFormatName(format)));
            if (QTest::currentTestFailed()) return;
        }
        checkEngineValidation(engine);
        if (hidden % 256 == 0) return;
        // Super-blocks across rows, in row chunks: every chunk starts on a super-block.
        for (auto format : {WeightFormat::Q4_K, WeightFormat::Q3_K}) {
            EngineOptions options;
            options.weightFormat = format;
            std::uint64_t smallest = ~0ull;
            {
                Engine whole(model, options);
                for (const auto& info : whole.weightMatrices())
                    smallest = std::min(smallest, info.bytes);
            }
            options.maxMatrixChunkBytes = smallest / 2;
            Engine chunked(model, options);
            for (const auto& info : chunked.weightMatrices())
                QVERIFY2(info.chunks > 1, info.name.c_str());
            models::ReferenceTransformer reference(
                model.config, quantizedReference(weights, model.config, format), 2);
            compareForward(chunked, reference, prompt(13, 300, seed++), 3,
                           std::string(weightFormatName(format)) + " in chunks");
            if (QTest::currentTestFailed()) return;
            checkEngineValidation(chunked);
        }
    }

    void forwardPassInRowChunks() {
        // Every matrix forced into row chunks (as a 151,936-token vocabulary is on a device
        // whose binding spans 128 MiB): the same logits as the reference in every format, on
        // the odd shape (padding, groups across rows) and on a Q4_1 file read as stored.
        struct Case {
            WeightFormat format;
            bool ggml;
        };
        const Case cases[] = {{WeightFormat::F32, false},        {WeightFormat::F16, false},
                              {WeightFormat::Int8Tensor, false}, {WeightFormat::Int4Row, false},
                              {WeightFormat::Int4G128, false},   {WeightFormat::Nf4, false},
                              {WeightFormat::Q4_0, true},        {WeightFormat::Q8_0, true},
                              {WeightFormat::Q5_0, true},        {WeightFormat::AsStored, true}};
        const auto odd = oddShapeSpec(23);
        auto blocks = odd;
        blocks.hiddenSize = 64;
        blocks.heads = 4;
        blocks.kvHeads = 2;
        blocks.ffnSize = 96;
        blocks.weightType = models::TensorType::Q4_1;
        const auto folder = std::filesystem::path(dir_.path().toStdString());
        models::writeSyntheticGguf(odd, folder / "chunks-odd.gguf");
        models::writeSyntheticGguf(blocks, folder / "chunks-q4_1.gguf");
        const auto oddModel = models::loadModel(folder / "chunks-odd.gguf");
        const auto blockModel = models::loadModel(folder / "chunks-q4_1.gguf");
        std::uint32_t seed = 1;
        for (const auto& test : cases) {
            const auto& model = test.ggml ? blockModel : oddModel;
            const auto weights = models::dequantizeAll(model.weights);
            const std::string name(weightFormatName(test.format));
            EngineOptions options;
            options.weightFormat = test.format;
            // Half the smallest matrix of the unsplit engine: every matrix splits.
            std::uint64_t smallest = ~0ull;
            {
                Engine whole(model, options);
                for (const auto& info : whole.weightMatrices()) {
                    QCOMPARE(info.chunks, 1u);
                    smallest = std::min(smallest, info.bytes);
                }
            }
            options.maxMatrixChunkBytes = smallest / 2;
            Engine engine(model, options);
            for (const auto& info : engine.weightMatrices())
                QVERIFY2(info.chunks > 1,
                         qPrintable(QString::fromStdString(name + " " + info.name)));
            const auto gpuFormat =
                test.format == WeightFormat::AsStored ? WeightFormat::F32 : test.format;
            // f32 keeps an f32 table; every other format reads an f16 one.
            models::ReferenceTransformer reference(
                model.config,
                test.format == WeightFormat::F32
                    ? weights
                    : quantizedReference(weights, model.config, gpuFormat),
                2);
            compareForward(engine, reference, prompt(19, 300, seed++), 6, name + " in chunks");
            if (QTest::currentTestFailed()) return;
            // A decode step pays one dispatch per chunk.
            const auto step = engine.step({{2, {5}}});
            QCOMPARE(step.probes.dispatches, engine.dispatchesPerDecodeToken());
            QVERIFY(engine.dispatchesPerDecodeToken() > 1 + 5 * model.config.layers + 2);
            checkEngineValidation(engine);
        }
    }

    void weightBytesFollowTheFormat() {
        models::SyntheticModelSpec spec;
        spec.tiedEmbeddings = true;
        spec.seed = 41;
        const auto path = std::filesystem::path(dir_.path().toStdString()) / "tied.gguf";
        models::writeSyntheticGguf(spec, path);
        const auto model = models::loadModel(path);
        Engine engine(model, {});
        const auto f16Bytes = engine.memory().weightBytes;
        engine.setWeightFormat(WeightFormat::Int4G64);
        const auto int4Bytes = engine.memory().weightBytes;
        std::uint64_t sum = 0;
        for (const auto& info : engine.weightMatrices()) sum += info.bytes;
        QVERIFY(sum < int4Bytes); // plus norms and RoPE frequencies
        QVERIFY(int4Bytes < f16Bytes);
        // Tied embeddings: the head in the format doubles as the lookup table.
        QCOMPARE(engine.weightMatrices().back().name, std::string("output (tied)"));
        QVERIFY(std::none_of(engine.weightMatrices().begin(), engine.weightMatrices().end(),
                             [](const auto& m) { return m.name == "token_embd"; }));
        engine.setWeightFormat(WeightFormat::F16);
        QCOMPARE(engine.memory().weightBytes, f16Bytes);
        checkEngineValidation(engine);
    }

    void cleanupTestCase() {
        recorder_.reset();
        variants_.clear();
        const auto messages = context_->validationLog().messages();
        for (const auto& m : messages) qWarning("%s", m.c_str());
        QCOMPARE(context_->validationLog().errors(), 0u);
        QCOMPARE(engineValidationErrors_, 0u);
        context_.reset();
    }
};

QTEST_APPLESS_MAIN(GpuWeightFormatsTest)
#include "test_gpu_weight_formats.moc"
