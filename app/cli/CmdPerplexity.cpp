#include "app/cli/Arguments.hpp"
#include "app/cli/Backends.hpp"
#include "app/cli/Commands.hpp"
#include "app/cli/Output.hpp"
#include "compute/experiments/QualityReport.hpp"
#include "compute/session/LabSession.hpp"
#include "models/formats/TextFile.hpp"
#include "models/reference/Perplexity.hpp"
#include "models/tokenizer/Tokenizer.hpp"

#include <chrono>
#include <iostream>

namespace inferscope::cli {

int runPerplexity(const CommandArgs& args, std::ostream& out) {
    OptionSpec spec{{"--ctx", "--tokens"}, {"--json", "--quiet"}, {}};
    addBackendOptions(spec);
    Arguments a(args, spec);
    const BackendArguments backend = backendArguments(a);
    a.requirePositionals({"MODEL", "FILE"});
    std::filesystem::path file = a.positional(1, "FILE") == "default"
                                     ? models::defaultCorpusPath()
                                     : std::filesystem::path(a.positional(1, "FILE"));
    auto context = static_cast<std::uint32_t>(a.integer("--ctx", 512, 4, 1 << 20));
    auto tokenLimit = static_cast<std::uint64_t>(a.integer("--tokens", 0, 0, 1LL << 40));
    // Capped: a folder, /dev/zero or a huge file gets one clear error
    // (models/formats/TextFile.hpp).
    std::string text = models::readTextFile(file);

    // The lab session builds the backend (no warm-up: nothing here is timed per token).
    compute::LabSession session;
    compute::LoadOptions load;
    load.choice = backend.choice;
    load.warmUp = false;
    session.load(models::resolveModelPath(a.positional(0, "MODEL")), load);
    if (!backend.useCache) session.setCached(false);
    const auto& model = session.model();
    if (model.config.contextLength && context > model.config.contextLength)
        throw UsageError("--ctx " + std::to_string(context) + " exceeds the model's context of " +
                         std::to_string(model.config.contextLength));
    const auto& tokenizer = session.tokenizer();
    auto tokens = tokenizer.encode(text, true, false);
    // The window's rule too: at least 64 tokens, the window shortened to a shorter text.
    try {
        context = compute::experiments::perplexityContext(tokens.size(), context);
    } catch (const std::invalid_argument& error) {
        throw UsageError(file.string() + ": " + error.what());
    }

    models::PerplexityOptions options;
    options.context = context;
    if (model.tokenizer.addBos) options.bosId = tokenizer.bos();
    options.tokenLimit = tokenLimit;
    bool quiet = a.flag("--quiet") || a.flag("--json");
    options.progress = [&](std::uint32_t chunk, std::uint32_t chunks, double running) {
        if (!quiet)
            std::cerr << "chunk " << chunk + 1 << "/" << chunks << ": running perplexity "
                      << running << "\n";
    };
    auto start = std::chrono::steady_clock::now();
    auto result = models::computePerplexity(tokens, model.config.vocabSize, options,
                                            [&](std::span<const std::int32_t> window) {
                                                session.backend().reset();
                                                return session.backend().appendAllLogits(window);
                                            });
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    compute::Table t;
    t.id = "perplexity";
    t.title = "Perplexity of " + file.filename().string();
    t.addColumn("property").addColumn("value");
    t.columns[1].precision = 4;
    t.addRow({std::string("perplexity"), result.perplexity});
    t.addRow({std::string("mean NLL (nats/token)"), result.meanNll});
    t.addRow({std::string("text tokens"), static_cast<std::int64_t>(tokens.size())});
    t.addRow({std::string("context"), static_cast<std::int64_t>(context)});
    t.addRow({std::string("chunks"), static_cast<std::int64_t>(result.chunks)});
    t.addRow({std::string("scored tokens"), static_cast<std::int64_t>(result.scoredTokens)});
    t.addRow({std::string("backend"), session.backendName()});
    t.addRow({std::string("seconds"), seconds});
    t.notes.push_back("Rule: non-overlapping chunks of the context size; the second half of each "
                      "chunk is scored (as llama.cpp's llama-perplexity does).");
    printTables(out, {t}, a.flag("--json"));
    return 0;
}

} // namespace inferscope::cli
