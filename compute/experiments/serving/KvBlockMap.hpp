#pragma once
// Chapter item 7, the paged KV cache seen from inside: snapshots of the engine's block
// bookkeeping (compute/engine/KvCache) taken during a run, and the vLLM-style figures they
// give: blocks per sequence, the partly filled last block of each, free blocks, blocks shared
// by a prefix with their reference counts, used token slots against allocated ones (internal
// fragmentation), and what reserving every slot's maximum context up front would have cost.
#include "compute/Table.hpp"
#include "compute/engine/KvCache.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace inferscope::compute::experiments {

struct KvSequenceBlocks {
    SequenceId sequence = 0;
    std::string owner; // what the sequence is ("request 12", "prefix")
    std::int32_t slot = -1;
    std::uint32_t length = 0;          // positions written
    std::vector<std::uint32_t> blocks; // its block table, in position order
    // Positions in its last block: length - (blocks - 1) x blockSize (0 without blocks).
    std::uint32_t lastBlockFill(std::uint32_t blockSize) const;
};

struct KvBlockSnapshot {
    std::string label; // "step 41 (peak blocks)", ...
    std::int32_t step = -1;
    std::uint32_t blockSize = 0;
    std::uint32_t capacityBlocks = 0;
    std::uint32_t freeBlocks = 0;
    std::uint32_t usedPositions = 0; // written positions, a shared block counted once
    // What a cache without paging would hold: `reservedSlots` sequences of the longest
    // context each (blocks rounded up), whether written or not.
    std::uint32_t reservedSlots = 0;
    std::uint32_t maxContextPositions = 0;
    std::vector<KvSequenceBlocks> sequences;    // by sequence id
    std::vector<std::uint32_t> referenceCounts; // per block, 0 = free

    std::uint32_t usedBlocks() const { return capacityBlocks - freeBlocks; }
    std::uint32_t allocatedPositions() const { return usedBlocks() * blockSize; }
    std::uint32_t sharedBlocks() const; // reference count > 1
    // (allocated - used) / allocated, in %: the empty tails of last blocks.
    double internalFragmentationPercent() const;
    std::uint64_t reservedPositions() const;
};

// Who a sequence is and which slot it holds; an empty owner is named by its id.
struct KvOwner {
    std::string owner;
    std::int32_t slot = -1;
};
using KvOwnerOf = std::function<KvOwner(SequenceId)>;

// The cache as it is now. reservedSlots x maxContextPositions is the no-paging comparison.
KvBlockSnapshot snapshotKvCache(const KvCache& cache, std::string label, std::int32_t step,
                                std::uint32_t reservedSlots, std::uint32_t maxContextPositions,
                                const KvOwnerOf& ownerOf = {});

// Steps worth a snapshot from the blocks held at each step: the peak (first one) and
// `evenly` more spread over the run, ascending, without repeats.
std::vector<std::uint32_t> snapshotSteps(const std::vector<std::uint32_t>& blocksPerStep,
                                         std::uint32_t evenly = 3);

// "kv-block-map" (one row per snapshot), "kv-block-tables" (each sequence's block table per
// snapshot) and "kv-block-cells" (per snapshot, every block: owner, fill, reference count;
// what the panel draws). Nothing when there are no snapshots.
std::vector<Table> kvBlockMapTables(const std::vector<KvBlockSnapshot>& snapshots);

} // namespace inferscope::compute::experiments
