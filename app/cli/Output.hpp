#pragma once
// Shared by the commands: resolving MODEL arguments and printing Tables as text or JSON.
#include "compute/Table.hpp"
#include "models/LoadedModel.hpp"

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <vector>

namespace inferscope::cli {

models::LoadedModel loadModelArgument(const std::string& argument);
void printTables(std::ostream& out, const std::vector<compute::Table>& tables, bool json,
                 nlohmann::json extra = nlohmann::json::object());

} // namespace inferscope::cli
