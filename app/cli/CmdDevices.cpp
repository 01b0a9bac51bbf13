#include "app/cli/Arguments.hpp"
#include "app/cli/Commands.hpp"
#include "app/cli/Output.hpp"
#include "compute/vulkan/VulkanContext.hpp"

namespace inferscope::cli {

int runDevices(const CommandArgs& args, std::ostream& out) {
    Arguments a(args, {{}, {"--json"}, {}});
    if (!a.positionals().empty()) throw UsageError("usage: devices [--json]");
    auto devices = compute::listDevices();
    compute::Table t;
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
                  compute::apiVersionString(d.apiVersion), static_cast<std::int64_t>(memory),
                  static_cast<std::int64_t>(d.subgroupSize),
                  static_cast<std::int64_t>(d.maxSharedMemoryBytes)});
    }
    if (devices.empty())
        t.notes.push_back("No Vulkan device found: install mesa-vulkan-drivers "
                          "for the lavapipe CPU device.");
    printTables(out, {t}, a.flag("--json"));
    return 0;
}

} // namespace inferscope::cli
