// Weight residency of the Engine: which GPU format each matrix takes, packing the host
// weights (the file's own blocks where a format reads them as stored) and uploading them in
// row chunks, and re-packing in place when the format changes.
#include "compute/engine/EngineParts.hpp"
#include "compute/formats/GpuWeightPacking.hpp"
#include "compute/formats/LaneScaleLayout.hpp"

#include <algorithm>

namespace inferscope::compute {

WeightFormat Engine::resolvedFormat(const std::vector<std::string>& names,
                                    WeightFormat format) const {
    return resolveWeightFormat(store_.get(), names, format);
}

std::uint64_t Engine::matrixChunkLimit() const {
    const std::uint64_t limit = context_->info().maxBindingBytes();
    return options_.maxMatrixChunkBytes ? std::min(limit, options_.maxMatrixChunkBytes) : limit;
}

RowChunkedMatrix Engine::uploadFused(const std::vector<std::string>& names, std::uint32_t cols,
                                     std::uint32_t expectedRows, WeightFormat format,
                                     const std::string& label, std::uint32_t rowGranule,
                                     bool gateUpPairs, LaneScaleOrder laneOrder) {
    std::vector<std::uint32_t> partRows;
    std::uint32_t rows = 0;
    for (const auto& name : names) {
        std::uint64_t elements = 0;
        if (store_) {
            const auto* stored = store_->find(name);
            if (!stored) throw ComputeError("weight '" + name + "' is missing");
            elements = stored->elements();
        } else {
            auto found = hostWeights_->find(name);
            if (found == hostWeights_->end())
                throw ComputeError("weight '" + name + "' is missing");
            elements = found->second.size();
        }
        if (elements % cols != 0)
            throw ComputeError("weight '" + name + "' has " + std::to_string(elements) +
                               " values, not rows of " + std::to_string(cols));
        partRows.push_back(std::uint32_t(elements / cols));
        rows += partRows.back();
    }
    if (rows != expectedRows)
        throw ComputeError("weight '" + names.front() + "' has " +
                           std::to_string(std::uint64_t(rows) * cols) + " values, expected " +
                           std::to_string(std::uint64_t(expectedRows) * cols));
    const auto sections = planMatrixSections(store_.get(), names, partRows, format, cols,
                                             matrixChunkLimit(), rowGranule, gateUpPairs, label);
    RowChunkedMatrix matrix;
    matrix.format = sections.front().format;
    matrix.rows = rows;
    matrix.cols = cols;
    for (const auto& section : sections) {
        std::vector<std::string> sectionNames;
        for (auto index : section.parts) sectionNames.push_back(names[index]);
        uploadSection(matrix, section, sectionNames, label + (sections.size() > 1 ? " part" : ""),
                      gateUpPairs, laneOrder);
    }
    // These tensors' file pages have been read: drop them now rather than when every matrix
    // is up, so a load (or a lab's second engine) holds one matrix of the file at a time.
    if (store_)
        for (const auto& name : names) store_->releaseResidentPages(name);
    return matrix;
}

void Engine::uploadSection(RowChunkedMatrix& matrix, const MatrixSection& section,
                           const std::vector<std::string>& names, const std::string& label,
                           bool gateUpPairs, const LaneScaleOrder& laneOrder) {
    const auto chosen = section.format;
    const std::uint32_t cols = matrix.cols;
    const auto packer = weightFormatInfo(chosen).packer;
    // Plain floats and the lab's schemes dequantize the file's rows a slab at a time.
    const bool readsRowsLazily = packer != WeightPacker::GgmlBlocks;
    std::vector<std::vector<float>> owned(names.size());
    std::vector<MatrixPart> parts;
    for (std::size_t i = 0; i < names.size(); ++i) {
        const auto* stored = store_ ? store_->find(names[i]) : nullptr;
        MatrixPart part;
        if (stored && (readsRowsLazily || formatReadsStoredType(chosen, stored->type))) {
            part.stored = stored; // the file's own codes and scales, or rows dequantized later
        } else if (store_) {
            owned[i] = store_->dequantized(names[i]);
            part.values = owned[i];
        } else {
            part.values = hostWeights_->find(names[i])->second;
        }
        part.rows = std::uint32_t((stored ? stored->elements() : part.values.size()) / cols);
        parts.push_back(part);
    }
    const auto& ranges = section.chunks;
    const std::uint32_t rows = section.rows;
    // Output rows: a gate|up chunk of n outputs holds 2n stored rows.
    const std::uint32_t outputRows = gateUpPairs ? rows / 2 : rows;
    const std::uint32_t rowsPerOutput = gateUpPairs ? 2 : 1;
    const bool whole = ranges.size() == 1 && section.firstRow == 0 && section.rows == matrix.rows;
    auto chunkLabel = [&](const RowRange& range) {
        const std::uint32_t first = section.firstRow + range.first;
        return whole ? label
                     : label + " rows " + std::to_string(first) + "-" +
                           std::to_string(first + range.count - 1);
    };
    auto keepChunk = [&](DeviceMatrix chunk, const RowRange& range) {
        matrix.chunks.push_back(std::move(chunk));
        matrix.firstRows.push_back(section.firstRow + range.first);
    };
    if (packer == WeightPacker::Float32 || packer == WeightPacker::Float16) {
        // Plain floats: rows are independent, so each chunk is filled a slice at a time from
        // its parts' rows. Chunk row i is section row range.first + i; with gate|up pairs the
        // chunk's second half holds the up rows, outputRows further on.
        const auto sectionRows = [&](std::uint32_t first, std::span<float> out) {
            const std::uint32_t end = first + std::uint32_t(out.size() / cols);
            std::uint32_t partFirst = 0;
            for (const auto& part : parts) {
                const std::uint32_t from = std::max(first, partFirst);
                const std::uint32_t to = std::min(end, partFirst + part.rows);
                if (from < to)
                    partRowValues(part, cols, from - partFirst,
                                  out.subspan(std::uint64_t(from - first) * cols,
                                              std::uint64_t(to - from) * cols));
                partFirst += part.rows;
            }
        };
        for (const auto& range : ranges) {
            const auto chunkRows = [&](std::uint32_t first, std::span<float> out) {
                const std::uint32_t count = std::uint32_t(out.size() / cols);
                for (std::uint32_t done = 0; done < count;) {
                    const std::uint32_t row = first + done;
                    const bool up = gateUpPairs && row >= range.count;
                    const std::uint32_t halfEnd = up ? 2 * range.count : range.count;
                    const std::uint32_t n = std::min(count - done, halfEnd - row);
                    const std::uint32_t sectionRow =
                        up ? outputRows + range.first + (row - range.count) : range.first + row;
                    sectionRows(sectionRow,
                                out.subspan(std::uint64_t(done) * cols, std::uint64_t(n) * cols));
                    done += n;
                }
            };
            keepChunk(uploadPlainMatrixRows(*context_, chunkRows, range.count * rowsPerOutput, cols,
                                            chosen, chunkLabel(range)),
                      range);
        }
        return;
    }
    const auto packed = packForGpu(chosen, parts, cols);
    // The packed copy is what the upload reads (or, as stored, a view the upload faults back
    // in from the page cache): the file's pages can go before the device copy is made, so a
    // large table's file pages, packed copy and device copy are never resident at once.
    if (store_)
        for (const auto& name : names) store_->releaseResidentPages(name);
    // The lane-scale copy where the kernels read one and the chunk still fits a binding.
    auto upload = [&](const GpuPackedMatrix& chunk, const std::string& chunkName) {
        const bool copy =
            kernels_->tuning().readsLaneScales() &&
            laneScaleCopyWords(chunk.format, chunk.rows, chunk.cols, matrixChunkLimit()) != 0;
        return uploadPacked(*context_, chunk, chunkName, std::nullopt, copy ? &laneOrder : nullptr);
    };
    if (ranges.size() == 1) {
        keepChunk(upload(packed, chunkLabel(ranges[0])), ranges[0]);
        return;
    }
    for (const auto& range : ranges) {
        std::vector<RowRange> stacked{range};
        if (gateUpPairs) stacked.push_back({outputRows + range.first, range.count});
        keepChunk(upload(stackPackedRows(packed, stacked), chunkLabel(range)), range);
    }
}

void Engine::uploadMatrices(bool keepUnchanged) {
    const auto& c = config_;
    const auto format = options_.weightFormat;
    const auto requestedHead = options_.headFormat.value_or(format);
    const std::uint32_t qDim = c.heads * c.headDim, kvDim = c.kvHeads * c.headDim;
    auto& b = *buffers_;
    // A tied head doubles as the embedding table: the lookup reads one row per token in any
    // format, so the model holds one copy. An untied model's table stays f16 (f32 when the
    // matrices are f32): read a row per token, its format costs memory, not time.
    const bool hasOutput =
        store_ ? store_->contains("output.weight") : hostWeights_->count("output.weight") != 0;
    if (!hasOutput && !c.tiedEmbeddings)
        throw ComputeError("weight 'output.weight' is missing and embeddings are not tied");
    const auto headFormat =
        resolvedFormat({hasOutput ? "output.weight" : "token_embd.weight"}, requestedHead);
    const auto tableFormat =
        !hasOutput ? headFormat
        : resolvedFormat({"token_embd.weight"}, requestedHead) == WeightFormat::F32
            ? WeightFormat::F32
            : WeightFormat::F16;
    const bool keepTable =
        keepUnchanged && !b.embedding.empty() && b.embedding.format == tableFormat;
    const bool keepHead =
        keepUnchanged && !b.outputHead.empty() && b.outputHead.format == headFormat;
    // Free the previous matrices first, so a switch never holds two formats at once.
    for (auto& layer : layers_) {
        layer.qkv = {};
        layer.output = {};
        layer.gateUp = {};
        layer.down = {};
    }
    if (!keepTable) b.embedding = {};
    if (!keepHead) b.outputHead = {};
    matrixInfo_.clear();
    std::uint64_t bytes = 0;
    // One entry per matrix, or per section where a fused matrix's parts take different
    // formats (its chunks of one format are consecutive).
    auto keep = [&](RowChunkedMatrix matrix, const std::string& name) {
        const std::uint32_t chunks = matrix.chunkCount();
        for (std::uint32_t first = 0, end = 0; first < chunks; first = end) {
            const auto sectionFormat = matrix.chunks[first].format;
            WeightMatrixInfo info{
                name, sectionFormat, 0, 0, 0, 0, kernels_->roundsActivations(matrix.chunks[first])};
            for (end = first; end < chunks && matrix.chunks[end].format == sectionFormat; ++end) {
                const auto& chunk = matrix.chunks[end];
                info.parameters += std::uint64_t(chunk.rows) * chunk.cols;
                info.bytes += chunk.bytes();
                info.bytesRead += chunk.bytesRead();
                ++info.chunks;
            }
            if (first != 0 || end != chunks) {
                const std::uint32_t firstRow = matrix.firstRows[first];
                const std::uint32_t lastRow = end < chunks ? matrix.firstRows[end] : matrix.rows;
                info.name +=
                    " rows " + std::to_string(firstRow) + "-" + std::to_string(lastRow - 1);
            }
            matrixInfo_.push_back(info);
        }
        bytes += matrix.bytes();
        return matrix;
    };
    // The table and the head first: the largest matrices, whose file pages and packed host
    // copy come and go while little else of this engine is allocated. Built beside another
    // engine (a speculative draft beside its target) the build's peak is then the weights,
    // not the weights plus those transients (docs/performance-notes.md).
    const std::string tableName = hasOutput ? "token_embd" : "output (tied)";
    RowChunkedMatrix table = keepTable
                                 ? std::move(b.embedding)
                                 : uploadFused({"token_embd.weight"}, c.hiddenSize, c.vocabSize,
                                               hasOutput ? tableFormat : requestedHead, tableName);
    RowChunkedMatrix head;
    if (hasOutput)
        head = keepHead ? std::move(b.outputHead)
                        : uploadFused({"output.weight"}, c.hiddenSize, c.vocabSize, requestedHead,
                                      "output");
    auto name = [](std::uint32_t l, const char* suffix) { return layerName(l, suffix); };
    for (std::uint32_t l = 0; l < c.layers; ++l) {
        auto& layer = layers_[l];
        layer.qkv =
            keep(uploadFused(
                     {name(l, "attn_q.weight"), name(l, "attn_k.weight"), name(l, "attn_v.weight")},
                     c.hiddenSize, qDim + 2 * kvDim, format, name(l, "attn_qkv"), c.headDim, false,
                     // Q/K-norm models project Q|K|V with the plain matvec (rows in order).
                     c.qkNorm ? LaneScaleOrder{SlotRowOrder::Plain}
                              : LaneScaleOrder{SlotRowOrder::RopePairs, c.headDim,
                                               c.ropePairing == models::RopePairing::SplitHalf}),
                 name(l, "attn_qkv"));
        layer.output = keep(uploadFused({name(l, "attn_output.weight")}, qDim, c.hiddenSize, format,
                                        name(l, "attn_output")),
                            name(l, "attn_output"));
        layer.gateUp = keep(uploadFused({name(l, "ffn_gate.weight"), name(l, "ffn_up.weight")},
                                        c.hiddenSize, 2 * c.ffnSize, format, name(l, "ffn_gateup"),
                                        1, true, {SlotRowOrder::GateUpPairs}),
                            name(l, "ffn_gateup"));
        layer.down = keep(uploadFused({name(l, "ffn_down.weight")}, c.ffnSize, c.hiddenSize, format,
                                      name(l, "ffn_down")),
                          name(l, "ffn_down"));
    }
    b.embedding = keep(std::move(table), tableName);
    if (hasOutput) b.outputHead = keep(std::move(head), "output");
    weightBytes_ = vectorBytes_ + bytes;
    // The weights live on the device now: the file's pages need not stay resident.
    if (store_) store_->releaseResidentPages();
}

void Engine::setWeightFormat(WeightFormat format, std::optional<WeightFormat> headFormat) {
    if (format == options_.weightFormat && headFormat == options_.headFormat) return;
    reset();
    const auto previous = options_.weightFormat;
    const auto previousHead = options_.headFormat;
    renewKernels();
    try {
        options_.weightFormat = format;
        options_.headFormat = headFormat;
        uploadMatrices(true);
    } catch (...) {
        options_.weightFormat = previous;
        options_.headFormat = previousHead;
        uploadMatrices(true);
        throw;
    }
    context_->resetPeak();
}

std::string Engine::weightFormatLabel() const {
    std::string label(weightFormatName(weightFormat()));
    if (weightFormat() == WeightFormat::AsStored) {
        std::vector<std::pair<WeightFormat, std::uint64_t>> used; // format, parameters
        for (const auto& m : matrixInfo_) {
            if (m.name == "token_embd") continue; // the lookup table: f16 or f32 in any format
            auto found = std::find_if(used.begin(), used.end(),
                                      [&](const auto& u) { return u.first == m.format; });
            if (found == used.end())
                used.push_back({m.format, m.parameters});
            else
                found->second += m.parameters;
        }
        std::stable_sort(used.begin(), used.end(),
                         [](const auto& a, const auto& b) { return a.second > b.second; });
        for (std::size_t i = 0; i < used.size(); ++i)
            label += (i == 0 ? ": " : " + ") + std::string(weightFormatName(used[i].first));
    }
    if (options_.headFormat && *options_.headFormat != weightFormat())
        label += ", head " + std::string(weightFormatName(*options_.headFormat));
    return label + (roundsActivations() ? ", int8 activations" : "");
}

} // namespace inferscope::compute
