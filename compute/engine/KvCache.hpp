#pragma once
// Bookkeeping of the paged KV cache (the GPU buffers live in the Engine): fixed-size blocks
// of positions, a free list, reference-counted blocks so sequences can share a prefix, and
// one block table per sequence. Block b holds the same positions in every global layer.
// Sliding-window layers (configureWindow) draw from a second pool with a second block table
// per sequence: a query at position p reads only p - window + 1 .. p there, so blocks wholly
// older than that go back to the window pool, and those layers stop growing at the window.
#include <cstdint>
#include <map>
#include <vector>

namespace inferscope::compute {

using SequenceId = std::uint64_t;

class KvCache {
public:
    KvCache(std::uint32_t layers, std::uint32_t kvHeads, std::uint32_t headDim,
            std::uint32_t blockSize, std::uint32_t capacityBlocks, std::uint32_t maxSequences,
            std::uint32_t maxBlocksPerSequence, std::uint32_t bytesPerElement = 2);
    // Layers of different shapes: bytes of one position's K and V per layer.
    KvCache(std::vector<std::uint64_t> bytesPerPositionByLayer, std::uint32_t blockSize,
            std::uint32_t capacityBlocks, std::uint32_t maxSequences,
            std::uint32_t maxBlocksPerSequence);

    std::uint32_t blockSize() const { return blockSize_; }
    std::uint32_t capacityBlocks() const { return capacityBlocks_; }
    std::uint32_t freeBlocks() const { return std::uint32_t(freeList_.size()); }
    std::uint32_t usedBlocks() const { return capacityBlocks_ - freeBlocks(); }
    std::uint32_t maxSequences() const { return maxSequences_; }
    std::uint32_t maxBlocksPerSequence() const { return maxBlocksPerSequence_; }
    std::uint32_t maxPositionsPerSequence() const { return maxBlocksPerSequence_ * blockSize_; }

    // The cache's own accounting, per layer: one position's K and V in each layer (kv heads x
    // head dim x 2 x element bytes; layers may differ), times the positions written (used),
    // the positions of the blocks handed out (allocated) or of every block (reserved).
    std::uint32_t layers() const { return std::uint32_t(bytesPerPositionByLayer_.size()); }
    const std::vector<std::uint64_t>& bytesPerPositionByLayer() const {
        return bytesPerPositionByLayer_;
    }
    std::vector<std::uint64_t> usedBytesByLayer() const;
    std::vector<std::uint64_t> allocatedBytesByLayer() const;
    std::vector<std::uint64_t> reservedBytesByLayer() const;
    // KV bytes per token: the sum over layers (the chapter's formula,
    // models::ModelConfig::kvBytesPerToken, as this cache stores it).
    std::uint64_t kvBytesPerToken() const;
    std::uint64_t usedBytes() const;      // all layers
    std::uint64_t allocatedBytes() const; // all layers
    std::uint64_t reservedBytes() const;  // all layers
    std::uint32_t usedPositions() const;  // written positions, a shared block counted once

    bool contains(SequenceId id) const { return sequences_.count(id) != 0; }
    // Creates the sequence (empty) if needed; returns its slot (row of the block tables).
    std::uint32_t slotOf(SequenceId id);
    std::uint32_t length(SequenceId id) const;
    // Makes room for positions [0, newLength); throws ComputeError when the cache is full
    // or the sequence would exceed its block table.
    void reserve(SequenceId id, std::uint32_t newLength);
    // Shares all of `source`'s full blocks with a new sequence `target` (prefix sharing):
    // their reference counts rise, no data moves. Returns the positions shared.
    std::uint32_t forkPrefix(SequenceId source, SequenceId target);
    // Drops the sequence and returns blocks no other sequence holds to the free list.
    void release(SequenceId id);
    // Shortens a sequence (uncached mode recomputes from position 0; speculative decoding
    // rolls back rejected draft tokens): blocks past the new length go back to the free list,
    // so the accounting stays exact. Throws ComputeError rather than cut inside a shared block.
    void truncate(SequenceId id, std::uint32_t newLength);
    void clear();

    const std::vector<std::uint32_t>& blockTable(SequenceId id) const;

    // --- Sliding-window layers ---
    // windowedLayers[l]: layer l keeps only `window` positions, in a pool of
    // windowCapacityBlocks blocks (its buffers' size). Call on an empty cache.
    void configureWindow(std::vector<bool> windowedLayers, std::uint32_t window,
                         std::uint32_t windowCapacityBlocks);
    bool hasWindow() const { return window_ != 0; }
    std::uint32_t window() const { return window_; }
    bool windowed(std::uint32_t layer) const {
        return layer < windowedLayers_.size() && windowedLayers_[layer];
    }
    std::uint32_t windowCapacityBlocks() const { return windowCapacityBlocks_; }
    std::uint32_t windowUsedBlocks() const {
        return windowCapacityBlocks_ - std::uint32_t(windowFreeList_.size());
    }
    // Before positions [first, end) of a sequence are computed: its windowed blocks wholly
    // below first + 1 - window go back to the window pool (no query from `first` on reads
    // them), blocks up to `end` are taken. Throws ComputeError when the window pool is full.
    void reserveWindow(SequenceId id, std::uint32_t first, std::uint32_t end);
    // The windowed layers' block table of a sequence, released entries as block 0 (never
    // read: they lie outside every window still to come).
    std::vector<std::uint32_t> windowBlockTable(SequenceId id) const;
    // Positions at the start of the sequence the windowed layers no longer hold.
    std::uint32_t windowReleasedPositions(SequenceId id) const;
    std::uint32_t referenceCount(std::uint32_t block) const { return refCounts_.at(block); }
    std::vector<SequenceId> sequenceIds() const;

private:
    struct Sequence {
        std::uint32_t slot = 0;
        std::uint32_t length = 0;
        std::vector<std::uint32_t> blocks;
        std::vector<std::uint32_t> windowBlocks; // logical block -> window pool block
        std::uint32_t windowReleased = 0;        // leading window blocks given back
    };
    const Sequence& sequence(SequenceId id) const;
    void dropBlock(std::uint32_t block);
    void dropWindowBlock(std::uint32_t block);
    std::uint32_t windowUsedPositions() const;

    std::vector<bool> windowedLayers_;
    std::uint32_t window_ = 0, windowCapacityBlocks_ = 0;
    std::vector<std::uint32_t> windowFreeList_;
    std::vector<std::uint32_t> windowRefCounts_;

    std::vector<std::uint64_t> bytesPerPositionByLayer_;
    std::uint32_t blockSize_, capacityBlocks_;
    std::uint32_t maxSequences_, maxBlocksPerSequence_;
    std::vector<std::uint32_t> freeList_;
    std::vector<std::uint32_t> refCounts_;
    std::vector<std::uint32_t> freeSlots_;
    std::map<SequenceId, Sequence> sequences_;
};

} // namespace inferscope::compute
