#include "compute/engine/KvCache.hpp"

#include "compute/vulkan/VulkanContext.hpp"

#include <algorithm>
#include <string>

namespace inferscope::compute {

namespace {
std::vector<std::uint64_t> uniformLayers(std::uint32_t layers, std::uint32_t kvHeads,
                                         std::uint32_t headDim, std::uint32_t bytesPerElement) {
    if (!layers || !kvHeads || !headDim || !bytesPerElement)
        throw ComputeError("KV cache: every size must be positive");
    return std::vector<std::uint64_t>(layers, 2ull * kvHeads * headDim * bytesPerElement);
}

std::uint64_t sum(const std::vector<std::uint64_t>& values) {
    std::uint64_t total = 0;
    for (auto v : values) total += v;
    return total;
}

} // namespace

KvCache::KvCache(std::uint32_t layers, std::uint32_t kvHeads, std::uint32_t headDim,
                 std::uint32_t blockSize, std::uint32_t capacityBlocks, std::uint32_t maxSequences,
                 std::uint32_t maxBlocksPerSequence, std::uint32_t bytesPerElement)
    : KvCache(uniformLayers(layers, kvHeads, headDim, bytesPerElement), blockSize, capacityBlocks,
              maxSequences, maxBlocksPerSequence) {}

KvCache::KvCache(std::vector<std::uint64_t> bytesPerPositionByLayer, std::uint32_t blockSize,
                 std::uint32_t capacityBlocks, std::uint32_t maxSequences,
                 std::uint32_t maxBlocksPerSequence)
    : bytesPerPositionByLayer_(std::move(bytesPerPositionByLayer)), blockSize_(blockSize),
      capacityBlocks_(capacityBlocks), maxSequences_(maxSequences),
      maxBlocksPerSequence_(maxBlocksPerSequence) {
    const bool emptyLayer =
        std::find(bytesPerPositionByLayer_.begin(), bytesPerPositionByLayer_.end(), 0u) !=
        bytesPerPositionByLayer_.end();
    if (bytesPerPositionByLayer_.empty() || emptyLayer || !blockSize || !capacityBlocks ||
        !maxSequences || !maxBlocksPerSequence) {
        throw ComputeError("KV cache: every size must be positive");
    }
    clear();
}

std::uint64_t KvCache::kvBytesPerToken() const {
    return sum(bytesPerPositionByLayer_);
}

std::uint32_t KvCache::usedPositions() const {
    // Positions held, counting a shared block once: per block, the most positions any
    // holder has written into it.
    std::map<std::uint32_t, std::uint32_t> filled;
    for (const auto& [id, s] : sequences_) {
        for (std::uint32_t i = 0; i < s.blocks.size(); ++i) {
            const std::uint32_t inBlock =
                std::min(blockSize_, s.length > i * blockSize_ ? s.length - i * blockSize_ : 0);
            auto& f = filled[s.blocks[i]];
            f = std::max(f, inBlock);
        }
    }
    std::uint32_t positions = 0;
    for (const auto& [block, count] : filled) positions += count;
    return positions;
}

namespace {
// Per layer: the global count, or the window pool's for windowed layers.
std::vector<std::uint64_t> byLayer(const std::vector<std::uint64_t>& perPosition,
                                   const std::vector<bool>& windowed, std::uint64_t global,
                                   std::uint64_t windowPositions) {
    std::vector<std::uint64_t> bytes(perPosition.size());
    for (std::size_t l = 0; l < bytes.size(); ++l)
        bytes[l] = perPosition[l] * (l < windowed.size() && windowed[l] ? windowPositions : global);
    return bytes;
}
} // namespace

std::uint32_t KvCache::windowUsedPositions() const {
    std::map<std::uint32_t, std::uint32_t> filled;
    for (const auto& [id, s] : sequences_) {
        for (std::uint32_t i = s.windowReleased; i < s.windowBlocks.size(); ++i) {
            const std::uint32_t inBlock =
                std::min(blockSize_, s.length > i * blockSize_ ? s.length - i * blockSize_ : 0);
            auto& f = filled[s.windowBlocks[i]];
            f = std::max(f, inBlock);
        }
    }
    std::uint32_t positions = 0;
    for (const auto& [block, count] : filled) positions += count;
    return positions;
}

std::vector<std::uint64_t> KvCache::usedBytesByLayer() const {
    return byLayer(bytesPerPositionByLayer_, windowedLayers_, usedPositions(),
                   hasWindow() ? windowUsedPositions() : 0);
}

std::vector<std::uint64_t> KvCache::allocatedBytesByLayer() const {
    return byLayer(bytesPerPositionByLayer_, windowedLayers_,
                   std::uint64_t(usedBlocks()) * blockSize_,
                   std::uint64_t(windowUsedBlocks()) * blockSize_);
}

std::vector<std::uint64_t> KvCache::reservedBytesByLayer() const {
    return byLayer(bytesPerPositionByLayer_, windowedLayers_,
                   std::uint64_t(capacityBlocks_) * blockSize_,
                   std::uint64_t(windowCapacityBlocks_) * blockSize_);
}

std::uint64_t KvCache::usedBytes() const {
    return sum(usedBytesByLayer());
}

std::uint64_t KvCache::allocatedBytes() const {
    return sum(allocatedBytesByLayer());
}

std::uint64_t KvCache::reservedBytes() const {
    return sum(reservedBytesByLayer());
}

std::uint32_t KvCache::slotOf(SequenceId id) {
    if (auto found = sequences_.find(id); found != sequences_.end()) return found->second.slot;
    if (freeSlots_.empty()) {
        throw ComputeError("too many sequences at once (at most " + std::to_string(maxSequences_) +
                           "); release finished ones");
    }
    Sequence s;
    s.slot = freeSlots_.back();
    freeSlots_.pop_back();
    sequences_.emplace(id, s);
    return s.slot;
}

const KvCache::Sequence& KvCache::sequence(SequenceId id) const {
    auto found = sequences_.find(id);
    if (found == sequences_.end()) {
        throw ComputeError("unknown sequence " + std::to_string(id) + " in the KV cache");
    }
    return found->second;
}

std::uint32_t KvCache::length(SequenceId id) const {
    auto found = sequences_.find(id);
    return found == sequences_.end() ? 0 : found->second.length;
}

void KvCache::reserve(SequenceId id, std::uint32_t newLength) {
    slotOf(id);
    auto& s = sequences_.at(id);
    const std::uint32_t blocksNeeded = (newLength + blockSize_ - 1) / blockSize_;
    if (blocksNeeded > maxBlocksPerSequence_) {
        throw ComputeError("sequence " + std::to_string(id) + " would reach " +
                           std::to_string(newLength) + " positions, more than the " +
                           std::to_string(maxPositionsPerSequence()) +
                           " this engine's block tables hold");
    }
    // Shared blocks are never written: forkPrefix shares only full blocks, so new
    // positions always land in blocks this sequence owns alone.
    while (s.blocks.size() < blocksNeeded) {
        if (freeList_.empty()) {
            throw ComputeError("KV cache full: " + std::to_string(capacityBlocks_) + " blocks of " +
                               std::to_string(blockSize_) +
                               " positions are all in use; release sequences or build the "
                               "engine with a larger KV capacity");
        }
        const std::uint32_t block = freeList_.back();
        freeList_.pop_back();
        refCounts_[block] = 1;
        s.blocks.push_back(block);
    }
    s.length = std::max(s.length, newLength);
}

std::uint32_t KvCache::forkPrefix(SequenceId source, SequenceId target) {
    const Sequence& from = sequence(source);
    if (contains(target)) throw ComputeError("fork target sequence already exists");
    std::uint32_t fullBlocks = from.length / blockSize_;
    // Windowed layers: the target's next query (at the shared length) reads the window
    // before it; where the source no longer holds all of that, nothing is shared.
    const std::uint32_t sharedLength = fullBlocks * blockSize_;
    const std::uint32_t windowFirst =
        hasWindow() && sharedLength + 1 > window_ ? (sharedLength + 1 - window_) / blockSize_ : 0;
    if (hasWindow() && windowFirst < from.windowReleased) fullBlocks = 0;
    std::vector<std::uint32_t> shared(from.blocks.begin(), from.blocks.begin() + fullBlocks);
    std::vector<std::uint32_t> sharedWindow;
    if (hasWindow() && fullBlocks > 0)
        sharedWindow.assign(from.windowBlocks.begin(), from.windowBlocks.begin() + fullBlocks);
    slotOf(target);
    auto& to = sequences_.at(target);
    for (auto block : shared) ++refCounts_[block];
    to.blocks = std::move(shared);
    to.windowReleased = std::min(from.windowReleased, fullBlocks);
    for (std::uint32_t i = to.windowReleased; i < sharedWindow.size(); ++i)
        ++windowRefCounts_[sharedWindow[i]];
    to.windowBlocks = std::move(sharedWindow);
    to.length = fullBlocks * blockSize_;
    return to.length;
}

void KvCache::dropBlock(std::uint32_t block) {
    if (refCounts_[block] == 0) throw ComputeError("KV cache: block released twice");
    if (--refCounts_[block] == 0) freeList_.push_back(block);
}

void KvCache::release(SequenceId id) {
    auto found = sequences_.find(id);
    if (found == sequences_.end()) return;
    // Last block first, as truncate does: the free list hands them out again in order, so a
    // sequence's blocks stay one ascending run (the attention kernels stream each kv head's
    // run, shaders/kv_cache.glsl).
    const auto& blocks = found->second.blocks;
    for (auto block = blocks.rbegin(); block != blocks.rend(); ++block) dropBlock(*block);
    const auto& window = found->second.windowBlocks;
    for (std::size_t i = window.size(); i-- > found->second.windowReleased;)
        dropWindowBlock(window[i]);
    freeSlots_.push_back(found->second.slot);
    sequences_.erase(found);
}

void KvCache::truncate(SequenceId id, std::uint32_t newLength) {
    auto found = sequences_.find(id);
    if (found == sequences_.end()) return;
    auto& s = found->second;
    const std::uint32_t keep = (newLength + blockSize_ - 1) / blockSize_;
    // A block kept in part is written again from newLength on: never one another sequence
    // shares (forkPrefix shares whole blocks, which must stay as they are).
    if (newLength % blockSize_ != 0 && keep <= s.blocks.size() &&
        refCounts_.at(s.blocks[keep - 1]) > 1)
        throw ComputeError("KV cache: cutting sequence " + std::to_string(id) + " to " +
                           std::to_string(newLength) +
                           " positions would overwrite a block another sequence shares");
    // Windowed layers must still hold the window before the new length (the next query's).
    if (hasWindow() && newLength > 0 && newLength < s.length) {
        const std::uint32_t needed = newLength + 1 > window_ ? newLength + 1 - window_ : 0;
        if (needed < s.windowReleased * blockSize_)
            throw ComputeError("KV cache: cutting sequence " + std::to_string(id) + " to " +
                               std::to_string(newLength) +
                               " positions reaches back past what its sliding-window layers "
                               "still hold (positions from " +
                               std::to_string(s.windowReleased * blockSize_) + ")");
    }
    while (s.blocks.size() > keep) {
        dropBlock(s.blocks.back());
        s.blocks.pop_back();
    }
    while (s.windowBlocks.size() > std::max(keep, s.windowReleased)) {
        dropWindowBlock(s.windowBlocks.back());
        s.windowBlocks.pop_back();
    }
    if (newLength == 0) {
        s.windowBlocks.clear();
        s.windowReleased = 0;
    }
    s.length = std::min(s.length, newLength);
}

void KvCache::configureWindow(std::vector<bool> windowedLayers, std::uint32_t window,
                              std::uint32_t windowCapacityBlocks) {
    if (!sequences_.empty()) throw ComputeError("KV cache: configure the window while empty");
    if (windowedLayers.size() != layers() || window == 0 || windowCapacityBlocks == 0)
        throw ComputeError("KV cache: a window needs one flag per layer and positive sizes");
    windowedLayers_ = std::move(windowedLayers);
    window_ = window;
    windowCapacityBlocks_ = windowCapacityBlocks;
    clear();
}

void KvCache::dropWindowBlock(std::uint32_t block) {
    if (windowRefCounts_[block] == 0) throw ComputeError("KV cache: window block released twice");
    if (--windowRefCounts_[block] == 0) windowFreeList_.push_back(block);
}

void KvCache::reserveWindow(SequenceId id, std::uint32_t first, std::uint32_t end) {
    if (!hasWindow()) return;
    auto& s = sequences_.at(id);
    const std::uint32_t keepFrom = first + 1 > window_ ? (first + 1 - window_) / blockSize_ : 0;
    while (s.windowReleased < keepFrom && s.windowReleased < s.windowBlocks.size()) {
        dropWindowBlock(s.windowBlocks[s.windowReleased]);
        s.windowBlocks[s.windowReleased++] = 0;
    }
    const std::uint32_t blocksNeeded = (end + blockSize_ - 1) / blockSize_;
    // Blocks below the window were never needed (a prompt longer than the window, prefilled
    // in chunks): they count as released without being taken.
    while (s.windowBlocks.size() < std::min(keepFrom, blocksNeeded)) {
        s.windowBlocks.push_back(0);
        s.windowReleased = std::uint32_t(s.windowBlocks.size());
    }
    while (s.windowBlocks.size() < blocksNeeded) {
        if (windowFreeList_.empty())
            throw ComputeError("KV cache full in the sliding-window layers: " +
                               std::to_string(windowCapacityBlocks_) + " blocks of " +
                               std::to_string(blockSize_) + " positions are all in use");
        const std::uint32_t block = windowFreeList_.back();
        windowFreeList_.pop_back();
        windowRefCounts_[block] = 1;
        s.windowBlocks.push_back(block);
    }
}

std::vector<std::uint32_t> KvCache::windowBlockTable(SequenceId id) const {
    return sequence(id).windowBlocks; // released entries already hold 0
}

std::uint32_t KvCache::windowReleasedPositions(SequenceId id) const {
    return sequence(id).windowReleased * blockSize_;
}

void KvCache::clear() {
    sequences_.clear();
    freeList_.clear();
    // Hand out low block numbers first (pop_back takes the end).
    for (std::uint32_t b = capacityBlocks_; b-- > 0;) freeList_.push_back(b);
    refCounts_.assign(capacityBlocks_, 0);
    windowFreeList_.clear();
    for (std::uint32_t b = windowCapacityBlocks_; b-- > 0;) windowFreeList_.push_back(b);
    windowRefCounts_.assign(windowCapacityBlocks_, 0);
    freeSlots_.clear();
    for (std::uint32_t s = maxSequences_; s-- > 0;) freeSlots_.push_back(s);
}

const std::vector<std::uint32_t>& KvCache::blockTable(SequenceId id) const {
    return sequence(id).blocks;
}

std::vector<SequenceId> KvCache::sequenceIds() const {
    std::vector<SequenceId> ids;
    for (const auto& [id, s] : sequences_) ids.push_back(id);
    return ids;
}

} // namespace inferscope::compute
