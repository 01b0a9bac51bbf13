#include "app/cli/Arguments.hpp"
#include "app/cli/Commands.hpp"
#include "app/cli/Output.hpp"
#include "models/Tokenizer.hpp"

#include <nlohmann/json.hpp>
#include <ostream>

namespace inferscope::cli {

namespace {
// Shows a piece so that spaces, newlines and partial UTF-8 are visible in a terminal.
std::string visiblePiece(const std::string& bytes) {
    std::string out;
    for (unsigned char ch : bytes) {
        if (ch == '\n') out += "\\n";
        else if (ch == '\t') out += "\\t";
        else if (ch == '\r') out += "\\r";
        else if (ch < 0x20) {
            char buffer[8];
            std::snprintf(buffer, sizeof buffer, "\\x%02x", ch);
            out += buffer;
        } else out += static_cast<char>(ch);
    }
    return out;
}
} // namespace

int runTokenize(const CommandArgs& args, std::ostream& out) {
    Arguments a(args, {{}, {"--json", "--no-special"}, {}});
    if (a.positionals().size() != 2) throw UsageError("usage: tokenize MODEL TEXT [--json]");
    auto model = loadModelArgument(a.positional(0, "MODEL"));
    models::Tokenizer tokenizer(model.tokenizer);
    const std::string& text = a.positional(1, "TEXT");
    auto ids = tokenizer.encode(text, !a.flag("--no-special"), true);

    compute::Table t;
    t.id = "tokens";
    t.title = std::to_string(ids.size()) + " tokens";
    t.addColumn("position").addColumn("id").addColumn("token").addColumn("bytes");
    for (std::size_t i = 0; i < ids.size(); ++i)
        t.addRow({static_cast<std::int64_t>(i), static_cast<std::int64_t>(ids[i]),
                  tokenizer.tokenText(ids[i]), visiblePiece(tokenizer.pieceBytes(ids[i]))});
    nlohmann::json extra = {{"text", text}, {"ids", ids}};
    printTables(out, {t}, a.flag("--json"), extra);
    return 0;
}

} // namespace inferscope::cli
