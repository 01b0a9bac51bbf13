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
        // Text made of token bytes (a generated text cut inside a character, a token's text
        // from a file) may not be valid UTF-8: such bytes become U+FFFD instead of an
        // exception, and the exact bytes are in the ids (and tokenize's byte arrays).
        out << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        return;
    }
    for (std::size_t i = 0; i < tables.size(); ++i) {
        if (i) out << "\n";
        out << compute::renderText(tables[i]);
    }
}

} // namespace inferscope::cli
