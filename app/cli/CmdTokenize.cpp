#include "app/cli/Arguments.hpp"
#include "app/cli/Commands.hpp"
#include "app/cli/Output.hpp"
#include "models/tokenizer/PrintableBytes.hpp"
#include "models/tokenizer/Tokenizer.hpp"

#include <nlohmann/json.hpp>
#include <ostream>

namespace inferscope::cli {

int runTokenize(const CommandArgs& args, std::ostream& out) {
    Arguments a(args, {{}, {"--json", "--no-special"}, {}});
    a.requirePositionals({"MODEL", "TEXT"});
    auto model = loadModelArgument(a.positional(0, "MODEL"));
    models::Tokenizer tokenizer(model.tokenizer);
    const std::string& text = a.positional(1, "TEXT");
    auto ids = tokenizer.encode(text, !a.flag("--no-special"), true);

    // A token's bytes may be part of a multi-byte character: the table shows them escaped
    // (models::printableBytes), and JSON gives the exact bytes as an array besides.
    compute::Table t;
    t.id = "tokens";
    t.title = std::to_string(ids.size()) + " tokens";
    t.addColumn("position").addColumn("id").addColumn("token").addColumn("bytes");
    nlohmann::json tokens = nlohmann::json::array();
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const std::string bytes = tokenizer.pieceBytes(ids[i]);
        const std::string token = models::printableBytes(tokenizer.tokenText(ids[i]));
        const std::string printable = models::printableBytes(bytes);
        t.addRow(
            {static_cast<std::int64_t>(i), static_cast<std::int64_t>(ids[i]), token, printable});
        nlohmann::json byteArray = nlohmann::json::array();
        for (unsigned char byte : bytes) byteArray.push_back(byte);
        tokens.push_back(
            {{"id", ids[i]}, {"token", token}, {"text", printable}, {"bytes", byteArray}});
    }
    nlohmann::json extra = {{"text", text}, {"ids", ids}, {"tokens", tokens}};
    printTables(out, {t}, a.flag("--json"), extra);
    return 0;
}

} // namespace inferscope::cli
