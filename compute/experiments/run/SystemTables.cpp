#include "compute/experiments/run/SystemTables.hpp"

#include "models/tokenizer/PrintableBytes.hpp"

#include <algorithm>

namespace inferscope::compute::experiments {

Table devicesTable(const std::vector<DeviceInfo>& devices) {
    Table t;
    t.id = "devices";
    t.title = "Vulkan devices (choose with --device N or INFERSCOPE_DEVICE=N; a discrete GPU "
              "is preferred)";
    t.addColumn("index")
        .addColumn("name")
        .addColumn("type")
        .addColumn("API")
        .addColumn("memory", "bytes")
        .addColumn("subgroup")
        .addColumn("shared memory", "bytes");
    for (const auto& d : devices) {
        std::uint64_t memory = 0;
        for (const auto& heap : d.heaps) memory = std::max(memory, heap.bytes);
        t.addRow({static_cast<std::int64_t>(d.index), d.name, d.type,
                  apiVersionString(d.apiVersion), static_cast<std::int64_t>(memory),
                  static_cast<std::int64_t>(d.subgroupSize),
                  static_cast<std::int64_t>(d.maxSharedMemoryBytes)});
    }
    if (devices.empty())
        t.notes.push_back("No Vulkan device found: install mesa-vulkan-drivers "
                          "for the lavapipe CPU device.");
    return t;
}

Table tokensTable(const models::Tokenizer& tokenizer, const std::vector<std::int32_t>& ids) {
    Table t;
    t.id = "tokens";
    t.title = std::to_string(ids.size()) + " tokens";
    t.addColumn("position").addColumn("id").addColumn("token").addColumn("bytes");
    for (std::size_t i = 0; i < ids.size(); ++i)
        t.addRow({static_cast<std::int64_t>(i), static_cast<std::int64_t>(ids[i]),
                  models::printableBytes(tokenizer.tokenText(ids[i])),
                  models::printableBytes(tokenizer.pieceBytes(ids[i]))});
    return t;
}

} // namespace inferscope::compute::experiments
