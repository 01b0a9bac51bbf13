#include "app/cli/Arguments.hpp"
#include "app/cli/Commands.hpp"
#include "app/cli/Output.hpp"
#include "compute/experiments/run/SystemTables.hpp"

namespace inferscope::cli {

static int runDevices(const CommandArgs& args, std::ostream& out) {
    Arguments a(args, {{}, {"--json"}, {}});
    if (!a.positionals().empty()) throw UsageError("usage: devices [--json]");
    auto devices = compute::listDevices();
    const auto t = compute::experiments::devicesTable(devices);
    printTables(out, {t}, a.flag("--json"));
    return 0;
}

extern const CliCommand devicesCommand{
    "devices", "  devices                          Vulkan devices and their properties\n",
    runDevices, false};

} // namespace inferscope::cli
