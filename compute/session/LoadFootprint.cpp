#include "compute/session/LoadFootprint.hpp"

#include "compute/engine/Kernels.hpp"
#include "compute/formats/GpuWeightPacking.hpp"
#include "compute/formats/LaneScaleLayout.hpp"
#include "models/formats/TensorNames.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

namespace inferscope::compute {

namespace {

// One weight matrix as Engine::uploadMatrices builds it: its source tensors stacked in order.
// The list follows the engine's (a test compares the estimate with what the engine
// allocated, so a matrix added there and not here fails it).
struct EngineMatrix {
    std::vector<std::string> names;
    std::string label;
    std::uint32_t cols = 0, rows = 0;
    WeightFormat format = WeightFormat::F16; // as requested (may be AsStored)
    std::uint32_t rowGranule = 1;
    bool gateUpPairs = false;
};

std::vector<EngineMatrix> engineMatrices(const models::ModelConfig& c,
                                         const models::WeightStore& store, WeightFormat format) {
    const std::uint32_t qDim = c.heads * c.headDim, kvDim = c.kvHeads * c.headDim;
    auto name = [](std::uint32_t l, const char* suffix) {
        return models::layerTensorName(l, suffix);
    };
    std::vector<EngineMatrix> matrices;
    for (std::uint32_t l = 0; l < c.layers; ++l) {
        matrices.push_back(
            {{name(l, "attn_q.weight"), name(l, "attn_k.weight"), name(l, "attn_v.weight")},
             name(l, "attn_qkv"),
             c.hiddenSize,
             qDim + 2 * kvDim,
             format,
             c.headDim,
             false});
        matrices.push_back({{name(l, "attn_output.weight")},
                            name(l, "attn_output"),
                            qDim,
                            c.hiddenSize,
                            format,
                            1,
                            false});
        matrices.push_back({{name(l, "ffn_gate.weight"), name(l, "ffn_up.weight")},
                            name(l, "ffn_gateup"),
                            c.hiddenSize,
                            2 * c.ffnSize,
                            format,
                            1,
                            true});
        matrices.push_back({{name(l, "ffn_down.weight")},
                            name(l, "ffn_down"),
                            c.ffnSize,
                            c.hiddenSize,
                            format,
                            1,
                            false});
    }
    // A tied head doubles as the embedding table (the lookup reads any format); an untied
    // model keeps its table in f16 (f32 when the head is f32) beside the head in the format.
    const auto embeddingFormat = resolveWeightFormat(&store, {"token_embd.weight"}, format);
    if (store.contains("output.weight")) {
        matrices.push_back(
            {{"token_embd.weight"},
             "token_embd",
             c.hiddenSize,
             c.vocabSize,
             embeddingFormat == WeightFormat::F32 ? WeightFormat::F32 : WeightFormat::F16,
             1,
             false});
        matrices.push_back(
            {{"output.weight"}, "output", c.hiddenSize, c.vocabSize, format, 1, false});
    } else if (c.tiedEmbeddings) {
        matrices.push_back({{"token_embd.weight"},
                            "output (tied)",
                            c.hiddenSize,
                            c.vocabSize,
                            embeddingFormat,
                            1,
                            false});
    }
    return matrices;
}

bool isGgmlBlockFormat(WeightFormat format) {
    return weightFormatInfo(format).packer == WeightPacker::GgmlBlocks;
}

// The host memory Engine::uploadFused holds at its peak for one matrix: f32 copies of the
// parts it dequantizes (block formats read parts of their own type as they are stored), the
// joined rows of a fused plain matrix, the packed layout, one part's quantized copy while it
// packs, a chunk's copy when the matrix is split, and the staging buffer of the upload
// (plain floats go up in slices of at most 8 MiB). `staging`: the device's memory is not
// host-visible, so every upload copies through a staging buffer.
std::uint64_t uploadTransientBytes(const EngineMatrix& m, WeightFormat chosen,
                                   const models::WeightStore& store,
                                   const std::vector<RowRange>& chunks, bool staging) {
    const std::uint64_t cols = m.cols;
    std::uint64_t owned = 0, largestPartRows = 0;
    for (const auto& name : m.names) {
        const auto* tensor = store.find(name);
        const std::uint64_t elements = tensor ? tensor->elements() : 0;
        largestPartRows = std::max(largestPartRows, cols ? elements / cols : 0);
        if (!(isGgmlBlockFormat(chosen) && tensor && formatReadsStoredType(chosen, tensor->type)))
            owned += elements * sizeof(float);
    }
    const std::uint32_t rowsPerOutput = m.gateUpPairs ? 2 : 1;
    std::uint64_t largestChunkRows = 0;
    for (const auto& chunk : chunks)
        largestChunkRows = std::max<std::uint64_t>(largestChunkRows, chunk.count * rowsPerOutput);
    const auto packer = weightFormatInfo(chosen).packer;
    if (packer == WeightPacker::Float32 || packer == WeightPacker::Float16) {
        const std::uint64_t joined = m.names.size() > 1 ? std::uint64_t(m.rows) * cols * 4 : 0;
        const std::uint64_t pair =
            chunks.size() > 1 && m.gateUpPairs ? largestChunkRows * cols * 4 : 0;
        const std::uint64_t rowBytes = plainRowWords(chosen, m.cols) * 4;
        const std::uint64_t sliceRows =
            std::min(std::max<std::uint64_t>(1, (8u << 20) / rowBytes), largestChunkRows);
        return owned + joined + pair + sliceRows * rowBytes * (staging ? 2 : 1);
    }
    const std::uint64_t packed = packedMatrixSize(chosen, m.rows, m.cols).bytes();
    const std::uint64_t partPacked =
        owned ? packedMatrixSize(chosen, std::uint32_t(largestPartRows), m.cols).bytes() : 0;
    const std::uint64_t chunk =
        chunks.size() > 1
            ? packedMatrixSize(chosen, std::uint32_t(largestChunkRows), m.cols).bytes()
            : 0;
    const std::uint64_t upload = chunk + (staging ? (chunks.size() > 1 ? chunk : packed) : 0);
    return owned + packed + std::max(partPacked, upload);
}

std::string withThousands(std::uint64_t value) {
    return groupThousands(std::int64_t(value));
}

// "1.9 GiB", or with the exact counts when both figures would print alike.
std::pair<std::string, std::string> twoFigures(std::uint64_t needed, std::uint64_t available) {
    auto a = humanBytes(double(needed)), b = humanBytes(double(available));
    if (a == b) {
        a += " (" + withThousands(needed) + " bytes)";
        b += " (" + withThousands(available) + " bytes)";
    }
    return {a, b};
}

} // namespace

std::uint64_t LoadFootprint::deviceBytes() const {
    std::uint64_t total = 0;
    for (const auto& part : parts) total += part.deviceBytes;
    return total;
}

std::uint64_t LoadFootprint::hostBytes() const {
    std::uint64_t total = 0;
    for (const auto& part : parts) total += part.hostBytes;
    return total;
}

bool LoadFootprint::fitsDevice() const {
    return !deviceAvailableBytes || deviceBytes() <= *deviceAvailableBytes;
}

bool LoadFootprint::fitsHost() const {
    return !hostAvailableBytes || hostBytes() <= *hostAvailableBytes;
}

std::string LoadFootprint::refusal() const {
    const std::string subject = "cannot load " + (model.empty() ? std::string("the model") : model);
    if (!fitsDevice()) {
        const auto [needed, has] = twoFigures(deviceBytes(), *deviceAvailableBytes);
        return subject + ": needs " + needed + " of device memory for " + weightFormat +
               " weights, KV cache and activations; the device (" + device + ") has " + has;
    }
    if (!fitsHost()) {
        const auto [needed, has] = twoFigures(hostBytes(), *hostAvailableBytes);
        const std::string purpose =
            backend == "cpu"
                ? "the CPU reference's fp32 weights, KV cache and activations"
                : (deviceIsHostMemory ? "the device's buffers (a CPU device: its memory is host "
                                        "memory) and the upload of the " +
                                            weightFormat + " weights"
                                      : "the upload of the " + weightFormat + " weights");
        return subject + ": needs " + needed + " of host memory for " + purpose +
               "; the host has " + has + " available";
    }
    return {};
}

LoadFootprint vulkanLoadFootprint(const models::ModelConfig& c, const models::WeightStore& store,
                                  const EngineOptions& options, const DeviceInfo& device) {
    LoadFootprint footprint;
    footprint.model = c.name;
    footprint.backend = "vulkan";
    footprint.weightFormat = std::string(weightFormatName(options.weightFormat));
    footprint.device = device.name;
    footprint.deviceIsHostMemory = device.type == "cpu";
    // Integrated GPUs and CPU devices map their device-local memory: no staging copy.
    const bool staging = !footprint.deviceIsHostMemory && device.type != "integrated";

    const std::uint64_t qDim = std::uint64_t(c.heads) * c.headDim,
                        kvDim = std::uint64_t(c.kvHeads) * c.headDim;
    // Norm weights, q/k/v biases and RoPE frequencies, as Engine::build uploads them.
    // Q/K norms, post-norms and the windowed / NoPE layers' RoPE tables where the model has them.
    const std::uint64_t ropeTables =
        1 + (c.windowedLayers() ? 1 : 0) + (c.noRopeLayers.empty() ? 0 : 1);
    std::uint64_t weightBytes =
        uploadedVectorBytes(c.hiddenSize) + ropeTables * uploadedVectorBytes(c.headDim / 2) +
        c.layers * (2 * uploadedVectorBytes(c.hiddenSize) +
                    (c.qkvBias ? uploadedVectorBytes(qDim + 2 * kvDim) : 0) +
                    (c.qkNorm ? 2 * uploadedVectorBytes(c.headDim) : 0) +
                    (c.postNorms ? 2 * uploadedVectorBytes(c.hiddenSize) : 0));
    const std::uint64_t limit = options.maxMatrixChunkBytes ? std::min(device.maxBindingBytes(),
                                                                       options.maxMatrixChunkBytes)
                                                            : device.maxBindingBytes();
    // The lane-scale copies of the int4 group and q4_1 matrices, where the kernels read them.
    const bool laneScales =
        options.tuning.value_or(KernelTuning::forDevice(device)).readsLaneScales();
    std::uint64_t largestTransient = 0;
    std::string largestTransientMatrix;
    for (const auto& matrix : engineMatrices(c, store, options.weightFormat)) {
        // As the engine lays it out: one section, or one per run of parts of one format.
        std::vector<std::uint32_t> partRows;
        for (const auto& name : matrix.names) {
            const auto* tensor = store.find(name);
            partRows.push_back(
                tensor && matrix.cols ? std::uint32_t(tensor->elements() / matrix.cols) : 0);
        }
        for (const auto& section :
             planMatrixSections(&store, matrix.names, partRows, matrix.format, matrix.cols, limit,
                                matrix.rowGranule, matrix.gateUpPairs, matrix.label)) {
            const auto chosen = section.format;
            const auto& chunks = section.chunks;
            weightBytes += chunkedMatrixBytes(chosen, matrix.cols, chunks, matrix.gateUpPairs);
            if (laneScales)
                weightBytes +=
                    laneScaleCopyBytes(chosen, matrix.cols, chunks, matrix.gateUpPairs, limit);
            EngineMatrix part = matrix;
            part.names.clear();
            for (auto index : section.parts) part.names.push_back(matrix.names[index]);
            part.rows = section.rows;
            const auto transient = uploadTransientBytes(part, chosen, store, chunks, staging);
            if (transient > largestTransient) {
                largestTransient = transient;
                largestTransientMatrix = matrix.label;
            }
        }
    }
    const auto plan = planEngineBuffers(c, options, device.maxBindingBytes());
    const std::uint64_t positions = std::uint64_t(plan.capacityBlocks) * plan.blockSize;

    footprint.parts.push_back({"weights (" + footprint.weightFormat + ")", weightBytes, 0});
    footprint.parts.push_back(
        {"KV cache (" + withThousands(positions) + " positions, fp16)", plan.kvBytes(c), 0});
    footprint.parts.push_back(
        {"activations and scratch (" + withThousands(plan.maxTokensPerStep) + " tokens per step)",
         plan.scratchBytes(), 0});
    footprint.parts.push_back(
        {"logits (" + withThousands(plan.maxLogitRowsPerStep) + " rows)", plan.logitBytes, 0});
    footprint.parts.push_back(
        {"largest upload transient (" + largestTransientMatrix + ")", 0, largestTransient});
    if (footprint.deviceIsHostMemory)
        footprint.parts.push_back(
            {"device buffers (a CPU device's memory is host memory)", 0, footprint.deviceBytes()});
    return footprint;
}

// Assumes the CPU reference's layout as it is now: cpuBackendFactory dequantizes every
// stored tensor into an f32 copy (models::dequantizeAll) that the ReferenceTransformer keeps
// for the session, after which the file's mapping is only page cache the kernel may drop.
// Its KV cache is f32 and grows with the sequence; one forward holds the step's activations
// (models/reference/ReferenceTransformer.cpp: x, normed, q, k, v, attention, projected, gate
// and up per token; the scores of one position; the final norm and logits of the last row).
// When the reference computes from the mapped weights instead, the weights line becomes the
// stored bytes (which then stay resident) plus f32 copies of the vectors only.
LoadFootprint cpuReferenceLoadFootprint(const models::ModelConfig& c,
                                        const models::WeightStore& store,
                                        const EngineOptions& sizing) {
    LoadFootprint footprint;
    footprint.model = c.name;
    footprint.backend = "cpu";
    footprint.weightFormat = "as-stored";
    const std::uint64_t f32 = sizeof(float);
    // The reference reads matrices from the mapped file as stored and keeps 1-D tensors
    // (norms, biases, rope_freqs) as f32 copies.
    std::uint64_t matrices = 0, vectors = 0;
    for (const auto& [name, tensor] : store.tensors()) {
        if (tensor.shape.size() == 1)
            vectors += tensor.elements() * f32;
        else
            matrices += tensor.data.size();
    }
    const std::uint64_t context = c.contextLength ? c.contextLength : sizing.kvCapacityTokens;
    const std::uint64_t positions = std::min<std::uint64_t>(context, sizing.kvCapacityTokens);
    const std::uint64_t kvDim = std::uint64_t(c.kvHeads) * c.headDim;
    const std::uint64_t qDim = std::uint64_t(c.heads) * c.headDim;
    const std::uint64_t kv = std::uint64_t(c.layers) * 2 * kvDim * positions * f32;
    const std::uint64_t tokens = std::min<std::uint64_t>(positions, sizing.maxTokensPerStep);
    const std::uint64_t perToken = 3ull * c.hiddenSize + 2 * qDim + 2 * kvDim + 2ull * c.ffnSize;
    const std::uint64_t activations =
        (tokens * perToken + positions + c.hiddenSize + c.vocabSize) * f32;
    footprint.parts.push_back({"weights (as stored, mapped from the file)", 0, matrices});
    footprint.parts.push_back({"norms, biases, rope_freqs (fp32)", 0, vectors});
    footprint.parts.push_back(
        {"KV cache (" + withThousands(positions) + " positions, fp32)", 0, kv});
    footprint.parts.push_back(
        {"activations (a prompt of " + withThousands(tokens) + " tokens)", 0, activations});
    return footprint;
}

LoadFootprint estimateLoadFootprint(const models::LoadedModel& model, const BackendChoice& choice,
                                    const MemoryAvailability& available) {
    LoadFootprint footprint;
    if (choice.kind == BackendChoice::Kind::Cpu) {
        footprint = cpuReferenceLoadFootprint(model.config, model.weights);
    } else {
        const auto options = engineOptionsFor(choice);
        const auto devices = listDevices();
        const auto found = std::find_if(devices.begin(), devices.end(), [&](const auto& device) {
            return device.index == choice.deviceIndex;
        });
        if (found == devices.end())
            throw ComputeError("there is no Vulkan device " + std::to_string(choice.deviceIndex) +
                               " (inferscope-cli devices lists them)");
        footprint = vulkanLoadFootprint(model.config, model.weights, options, *found);
        footprint.deviceAvailableBytes =
            available.deviceBytes ? *available.deviceBytes : largestDeviceLocalHeapBytes(*found);
    }
    if (footprint.model.empty()) footprint.model = model.path.filename().string();
    footprint.hostAvailableBytes = available.hostBytes ? available.hostBytes : hostAvailableBytes();
    return footprint;
}

std::uint64_t largestDeviceLocalHeapBytes(const DeviceInfo& device) {
    std::uint64_t largest = 0;
    for (const auto& heap : device.heaps)
        if (heap.deviceLocal) largest = std::max(largest, heap.bytes);
    return largest;
}

std::optional<std::uint64_t> parseMemAvailable(std::string_view meminfo) {
    constexpr std::string_view key = "MemAvailable:";
    const auto at = meminfo.find(key);
    if (at == std::string_view::npos) return std::nullopt;
    auto rest = meminfo.substr(at + key.size());
    const auto digits = rest.find_first_not_of(" \t");
    if (digits == std::string_view::npos) return std::nullopt;
    rest = rest.substr(digits);
    std::uint64_t kib = 0;
    const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), kib);
    if (error != std::errc() || end == rest.data()) return std::nullopt;
    return kib * 1024; // the kernel's "kB" are KiB
}

std::optional<std::uint64_t> hostAvailableBytes() {
    std::ifstream file("/proc/meminfo");
    if (!file) return std::nullopt;
    std::ostringstream text;
    text << file.rdbuf();
    return parseMemAvailable(text.str());
}

Table loadFootprintTable(const LoadFootprint& footprint) {
    Table table;
    table.id = "load-footprint";
    const bool cpu = footprint.backend == "cpu";
    table.title = cpu ? "Load footprint: CPU reference (weights as stored, fp32 arithmetic)"
                      : "Load footprint: " + footprint.weightFormat + " on " + footprint.device;
    table.addColumn("part").addColumn("device", "bytes").addColumn("host", "bytes");
    auto bytes = [](std::uint64_t value) { return Cell{std::int64_t(value)}; };
    auto deviceCell = [&](std::uint64_t value) { return cpu ? Cell{} : bytes(value); };
    for (const auto& part : footprint.parts)
        table.addRow({part.what, deviceCell(part.deviceBytes), bytes(part.hostBytes)});
    table.addRow(
        {std::string("total"), deviceCell(footprint.deviceBytes()), bytes(footprint.hostBytes())});
    auto availableCell = [&](const std::optional<std::uint64_t>& value) {
        return value ? bytes(*value) : Cell{std::string("unknown")};
    };
    table.addRow({std::string("available"),
                  cpu ? Cell{} : availableCell(footprint.deviceAvailableBytes),
                  availableCell(footprint.hostAvailableBytes)});
    auto fits = [](bool yes) { return Cell{std::string(yes ? "yes" : "no")}; };
    table.addRow({std::string("fits"), cpu ? Cell{} : fits(footprint.fitsDevice()),
                  fits(footprint.fitsHost())});
    table.notes.push_back(
        "Estimated from the file's shapes before anything is built. Device: every buffer the "
        "engine allocates, against the largest device-local heap. Host: against MemAvailable.");
    if (footprint.deviceIsHostMemory)
        table.notes.push_back("The device is a CPU: its device memory is host memory, so its "
                              "buffers count on the host too.");
    if (cpu)
        table.notes.push_back("The CPU reference is sized for the positions the GPU engine "
                              "reserves (its KV cache grows with the sequence).");
    if (const auto refusal = footprint.refusal(); !refusal.empty())
        table.notes.push_back("Refused: " + refusal);
    return table;
}

} // namespace inferscope::compute
