#include "app/cli/Output.hpp"

#include <ostream>

namespace inferscope::cli {

models::LoadedModel loadModelArgument(const std::string& argument) {
    return models::loadModel(models::resolveModelPath(argument));
}

void printTables(std::ostream& out, const std::vector<compute::Table>& tables, bool json,
                 nlohmann::json extra) {
    if (json) {
        nlohmann::json doc = std::move(extra);
        doc["tables"] = nlohmann::json::array();
        for (const auto& t : tables) doc["tables"].push_back(compute::toJson(t));
        out << doc.dump(2) << "\n";
        return;
    }
    for (std::size_t i = 0; i < tables.size(); ++i) {
        if (i) out << "\n";
        out << compute::renderText(tables[i]);
    }
}

} // namespace inferscope::cli
