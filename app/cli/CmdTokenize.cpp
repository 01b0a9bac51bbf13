#include "app/cli/Arguments.hpp"
#include "app/cli/Commands.hpp"
#include "app/cli/Output.hpp"
#include "compute/experiments/run/SystemTables.hpp"
#include "models/tokenizer/PrintableBytes.hpp"
#include "models/tokenizer/Tokenizer.hpp"

#include <nlohmann/json.hpp>
#include <ostream>

namespace inferscope::cli {

static int runTokenize(const CommandArgs& args, std::ostream& out) {
    Arguments a(args, {{}, {"--json", "--no-special"}, {}});
    a.requirePositionals({"MODEL", "TEXT"});
    auto model = loadModelArgument(a.positional(0, "MODEL"));
    models::Tokenizer tokenizer(model.tokenizer);
    const std::string& text = a.positional(1, "TEXT");
    auto ids = tokenizer.encode(text, !a.flag("--no-special"), true);

    const auto t = compute::experiments::tokensTable(tokenizer, ids);
    // JSON gives each token's exact bytes besides (the table escapes what is not printable).
    nlohmann::json tokens = nlohmann::json::array();
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const std::string bytes = tokenizer.pieceBytes(ids[i]);
        nlohmann::json byteArray = nlohmann::json::array();
        for (unsigned char byte : bytes) byteArray.push_back(byte);
        tokens.push_back({{"id", ids[i]},
                          {"token", models::printableBytes(tokenizer.tokenText(ids[i]))},
                          {"text", models::printableBytes(bytes)},
                          {"bytes", byteArray}});
    }
    nlohmann::json extra = {{"text", text}, {"ids", ids}, {"tokens", tokens}};
    printTables(out, {t}, a.flag("--json"), extra);
    return 0;
}

extern const CliCommand tokenizeCommand{
    "tokenize",
    "  tokenize MODEL TEXT [--no-special]\n"
    "                                   token ids, pieces and their bytes\n",
    runTokenize};

} // namespace inferscope::cli
