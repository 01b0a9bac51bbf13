// Hostile and mistaken input on the command line: token bytes in JSON, text files that are
// folders, devices or too large, commands run without their arguments, tokenizers that
// `info` must refuse as `generate` does. Each error is one clear message with status 2
// (mistake) or 1 (bad model file).
#include "../models/TinyGgufModel.hpp"
#include "app/cli/Output.hpp"
#include "models/formats/TextFile.hpp"
#include "models/synthetic/SyntheticModel.hpp"
#include "tests/DefaultModel.hpp"
#include "tests/app/CliRunner.hpp"

#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <sstream>

using namespace inferscope;
using inferscope::models::GgufWriter;

namespace {

using inferscope::tests::runCli;

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

} // namespace

class TestCliInput : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::string model_; // a small synthetic GGUF

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        models::SyntheticModelSpec spec;
        spec.layers = 1;
        model_ = dir_.filePath("synthetic.gguf").toStdString();
        models::writeSyntheticGguf(spec, model_);
    }

    // "Grüße aus Köln 🍺": byte-level BPE splits ü, ö and the emoji across tokens, whose bytes
    // alone are not UTF-8. JSON must still come out, with every token's exact bytes.
    void tokenizeJsonGivesEveryTokensBytes() {
        INFERSCOPE_DEFAULT_MODEL_OR_SKIP(model);
        const std::string text = "Grüße aus Köln 🍺";
        const auto r = runCli({"tokenize", model.string(), text, "--json"});
        QCOMPARE(r.status, 0);
        QVERIFY2(r.err.empty(), r.err.c_str());
        const auto doc = nlohmann::json::parse(r.out);
        QCOMPARE(doc.at("text").get<std::string>(), text);
        std::string joined;
        bool partialCharacter = false;
        for (const auto& token : doc.at("tokens")) {
            std::string bytes;
            for (const auto& byte : token.at("bytes")) bytes += static_cast<char>(byte.get<int>());
            // A byte that cannot stand alone is shown escaped, never dropped.
            if (contains(token.at("text").get<std::string>(), "\\x")) partialCharacter = true;
            joined += bytes;
        }
        QCOMPARE(joined, text);
        QVERIFY2(partialCharacter, "expected at least one token holding part of a character");
        QCOMPARE(doc.at("ids").size(), doc.at("tokens").size());
        // The text table escapes the same bytes.
        const auto table = runCli({"tokenize", model.string(), text});
        QCOMPARE(table.status, 0);
        QVERIFY(contains(table.out, "\\x"));
    }

    // Every command's JSON goes through printTables: text cut inside a character (a generated
    // text, a token's text from the file) becomes U+FFFD instead of an exception.
    void jsonOutputNeverFailsOnPartialCharacters() {
        compute::Table table;
        table.id = "t";
        table.title = "half of \xc3\xbc: \xc3";
        table.addColumn("text");
        table.addRow({std::string("\xf0\x9f\x8d")});
        std::ostringstream out;
        cli::printTables(out, {table}, true, {{"text", std::string("K\xc3")}});
        const auto doc = nlohmann::json::parse(out.str());
        QCOMPARE(doc.at("text").get<std::string>(), std::string("K\xef\xbf\xbd"));
        QCOMPARE(doc.at("tables")[0].at("title").get<std::string>(),
                 std::string("half of \xc3\xbc: \xef\xbf\xbd"));
    }

    // One minimum-length rule for the window and the CLI (experiments::perplexityContext): a
    // text of at least 64 tokens is measured with the window shortened to it; less is refused.
    void perplexityFollowsTheSharedLengthRule() {
        const std::string longText = dir_.filePath("long.txt").toStdString();
        {
            std::ofstream file(longText);
            for (int i = 0; i < 12; ++i)
                file << "The cache keeps the keys and values of every earlier token. ";
        }
        const auto measured =
            runCli({"perplexity", model_, longText, "--backend", "cpu", "--ctx", "512", "--json"});
        QVERIFY2(measured.status == 0, measured.err.c_str());
        const auto doc = nlohmann::json::parse(measured.out);
        std::int64_t textTokens = 0, context = 0;
        for (const auto& row : doc.at("tables")[0].at("rows")) {
            if (row[0] == "text tokens") textTokens = row[1].get<std::int64_t>();
            if (row[0] == "context") context = row[1].get<std::int64_t>();
        }
        // Between the minimum and the window asked for: the rule shortens the window.
        QVERIFY2(textTokens >= 64 && textTokens < 512, measured.out.c_str());
        QCOMPARE(context, std::min<std::int64_t>(512, textTokens));

        const std::string shortText = dir_.filePath("short.txt").toStdString();
        std::ofstream(shortText) << "Too short to say much.";
        const auto refused = runCli({"perplexity", model_, shortText, "--backend", "cpu"});
        QCOMPARE(refused.status, 2);
        QVERIFY2(contains(refused.err, "at least 64 tokens"), refused.err.c_str());
        const auto narrow =
            runCli({"perplexity", model_, longText, "--backend", "cpu", "--ctx", "32"});
        QCOMPARE(narrow.status, 2);
        QVERIFY2(contains(narrow.err, "too short"), narrow.err.c_str());
    }

    void textFilesAreCappedAndChecked() {
        const auto zero = runCli({"perplexity", model_, "/dev/zero", "--backend", "cpu"});
        QCOMPARE(zero.status, 2);
        QVERIFY2(contains(zero.err, "/dev/zero: is a character device"), zero.err.c_str());
        const std::string large = dir_.filePath("large.txt").toStdString();
        std::ofstream(large) << "x";
        std::filesystem::resize_file(large, models::kMaxCorpusBytes + 1);
        const auto tooLarge = runCli({"perplexity", model_, large, "--backend", "cpu"});
        QCOMPARE(tooLarge.status, 2);
        QVERIFY2(contains(tooLarge.err, "larger than the 32 MiB"), tooLarge.err.c_str());
        const std::string folder = dir_.path().toStdString();
        const auto dir = runCli({"perplexity", model_, folder, "--backend", "cpu"});
        QCOMPARE(dir.status, 2);
        QVERIFY2(contains(dir.err, folder) && contains(dir.err, "is a folder"), dir.err.c_str());
        QVERIFY(!contains(dir.err, "tokens"));
        const auto missing = runCli({"perplexity", model_, folder + "/none.txt"});
        QCOMPARE(missing.status, 2);
        QVERIFY2(contains(missing.err, "no such file"), missing.err.c_str());

        const auto text = runCli({"report", "quality", model_, "--text", "/dev/zero", "--battery",
                                  "none", "--scheme", "int8-row"});
        QCOMPARE(text.status, 2);
        QVERIFY2(contains(text.err, "/dev/zero: is a character device"), text.err.c_str());
        const auto battery = runCli({"report", "quality", model_, "--battery", "/dev/zero"});
        QCOMPARE(battery.status, 2);
        QVERIFY2(contains(battery.err, "factual battery") &&
                     contains(battery.err, "is a character device"),
                 battery.err.c_str());
        const auto batteryDir = runCli({"report", "quality", model_, "--battery", folder});
        QCOMPARE(batteryDir.status, 2);
        QVERIFY2(contains(batteryDir.err, "is a folder"), batteryDir.err.c_str());
    }

    // A FIFO with no writer would block open() forever; a folder gave raw library errors.
    // Every file a command reads is refused at once with the path and the reason.
    void pipesAndFoldersAreRefusedAtOnceByEveryReader() {
        const std::string fifo = dir_.filePath("no-writer").toStdString();
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        const std::string folder = dir_.path().toStdString();
        struct Case {
            std::string path;
            std::vector<std::string> command;
        };
        std::vector<Case> cases;
        for (const std::string& path : {fifo, folder}) {
            cases.push_back({path, {"perplexity", model_, path, "--backend", "cpu"}});
            cases.push_back({path, {"budget", "--no-detect", "--presets", path}});
            cases.push_back(
                {path, {"report", "quality", model_, "--battery", path, "--scheme", "int8-row"}});
            cases.push_back({path, {"schedule", model_, "--mix", path}});
        }
        // A folder is a safetensors model to these: only the FIFO is refused as a kind.
        cases.push_back({fifo, {"info", fifo}});
        cases.push_back({fifo, {"generate", fifo, "-p", "a", "-n", "1", "--backend", "cpu"}});
        for (const auto& c : cases) {
            const auto r = runCli(c.command);
            const std::string label = c.command[0] + " " + c.path + ": " + r.err;
            QVERIFY2(r.status != 0, label.c_str());
            const std::string kind = c.path == fifo ? "is a named pipe (FIFO)" : "is a folder";
            QVERIFY2(contains(r.err, c.path) && contains(r.err, kind), label.c_str());
            QVERIFY2(!contains(r.err, "basic_filebuf") && !contains(r.err, "filesystem error"),
                     label.c_str());
        }
    }

    void commandsWithoutArgumentsPrintTheirUsage() {
        for (const std::string command :
             {"info", "tokenize", "generate", "perplexity", "bench", "report"}) {
            const auto r = runCli({command});
            QCOMPARE(r.status, 2);
            QVERIFY2(contains(r.err, "  " + command + " "), r.err.c_str());
            QVERIFY2(!contains(r.err, "  devices "), r.err.c_str()); // only that command's
            QVERIFY(r.out.empty());
            const auto help = runCli({command, "--help"});
            QCOMPARE(help.status, 0);
            QVERIFY(contains(help.out, "  " + command + " "));
            QCOMPARE(runCli({"help", command}).out, help.out);
        }
        const auto one = runCli({"tokenize", model_});
        QCOMPARE(one.status, 2);
        QVERIFY2(contains(one.err, "missing TEXT") && contains(one.err, "tokenize MODEL TEXT"),
                 one.err.c_str());
        const auto extra = runCli({"info", model_, "surplus"});
        QCOMPARE(extra.status, 2);
        QVERIFY2(contains(extra.err, "'surplus'"), extra.err.c_str());
        // No command at all is a mistake: usage on stderr; "help" asks for it on stdout.
        const auto none = runCli({});
        QCOMPARE(none.status, 2);
        QVERIFY(none.out.empty() && contains(none.err, "Commands:"));
        const auto help = runCli({"help"});
        QCOMPARE(help.status, 0);
        QVERIFY(contains(help.out, "Commands:") && help.err.empty());
    }

    // --repeats keeps the best of N timed runs; the kernel table is of the first batch listed.
    void benchRepeatsAndTheKernelTablesBatch() {
        const auto bad = runCli({"bench", model_, "--repeats", "0"});
        QCOMPARE(bad.status, 2);
        QVERIFY2(contains(bad.err, "--repeats"), bad.err.c_str());
        const auto r =
            runCli({"bench", model_, "--formats", "fp32,fp16", "--prompts", "4", "--contexts", "4",
                    "--decode", "2", "--batches", "2", "--repeats", "2", "--json"});
        QVERIFY2(r.status == 0, r.err.c_str());
        const auto doc = nlohmann::json::parse(r.out);
        bool decodeSeen = false, kernelsSeen = false; // lavapipe has timestamps
        for (const auto& table : doc.at("tables")) {
            const auto id = table.at("id").get<std::string>();
            kernelsSeen = kernelsSeen || id == "bench-kernels";
            if (id == "bench-kernels") {
                QVERIFY2(contains(table.at("title").get<std::string>(), "batch 2,"),
                         table.at("title").get<std::string>().c_str());
                // The first caption adds up the rows of the first format (time column in us,
                // caption in ms); each format has its rows and its caption.
                QCOMPARE(table.at("notes").size(), std::size_t(2));
                double sumMs = 0;
                for (const auto& row : table.at("rows"))
                    if (row[0] == "fp32") sumMs += row[3].get<double>() / 1e3;
                const auto note = table.at("notes").at(0).get<std::string>();
                const auto at = note.find("add up to ");
                QVERIFY2(at != std::string::npos && contains(note, "untimed step"), note.c_str());
                QVERIFY2(std::abs(std::stod(note.substr(at + 10)) - sumMs) < 0.006, note.c_str());
            }
            if (id == "bench-decode") {
                decodeSeen = true;
                QCOMPARE(table.at("rows").size(), std::size_t(2)); // one per format
                // The note on bits and speed quotes each row's tokens/s as its fastest.
                std::string bytesNote;
                for (const auto& note : table.at("notes"))
                    if (contains(note.get<std::string>(), "by bits per weight (batch 2, C = 4)"))
                        bytesNote = note.get<std::string>();
                QVERIFY2(!bytesNote.empty(), table.at("notes").dump().c_str());
                for (const auto& row : table.at("rows")) {
                    QCOMPARE(row[1].get<int>(), 2); // batch
                    const double tokens = row[3].get<double>();
                    QVERIFY(tokens > 0.0);
                    char fastest[32];
                    std::snprintf(fastest, sizeof fastest, "%.1f", tokens);
                    QVERIFY2(contains(bytesNote, row[0].get<std::string>()) &&
                                 contains(bytesNote, fastest),
                             bytesNote.c_str());
                }
                QVERIFY2(contains(bytesNote, "rdered"), bytesNote.c_str());
            }
        }
        QVERIFY(decodeSeen && kernelsSeen);
    }

    void synthesizeWritesTheChaptersShape() {
        // One layer keeps it to seconds; the type is given in lower case, as the usage shows.
        const std::string file = dir_.filePath("qwen-shape.gguf").toStdString();
        const auto written =
            runCli({"synthesize", "qwen2.5-0.5b", file, "--type", "q4_0", "--layers", "1"});
        QCOMPARE(written.status, 0);
        QVERIFY(written.out.find("Q4_0") != std::string::npos);
        const auto info = runCli({"info", file, "--json"});
        QCOMPARE(info.status, 0);
        QVERIFY(info.out.find("151936") != std::string::npos);
        const auto bad = runCli({"synthesize", "qwen2.5-0.5b", file, "--type", "q5"});
        QVERIFY(bad.status != 0);
        QVERIFY(bad.err.find("--type must be") != std::string::npos);
    }

    // info builds the tokenizer, so it refuses what generate refuses; the error names the
    // file and the field.
    void infoRefusesBrokenTokenizers() {
        QCOMPARE(runCli({"info", model_}).status, 0);
        const std::string folder = dir_.path().toStdString();
        const auto write = [&](const std::string& name, auto change) {
            GgufWriter writer = tiny::writer();
            change(writer);
            const auto path = folder + "/" + name;
            writer.write(path);
            return path;
        };
        const auto badMerge = write("bad-merge.gguf", [](GgufWriter& w) {
            w.setStringArray("tokenizer.ggml.merges", {"a b", "x y"});
        });
        const auto unknownPre = write("unknown-pre.gguf", [](GgufWriter& w) {
            w.set("tokenizer.ggml.pre", std::string("no-such-splitter"));
        });
        const auto bosless = write("bosless.gguf", [](GgufWriter& w) {
            w.set("tokenizer.ggml.add_bos_token", true);
            w.remove("tokenizer.ggml.bos_token_id");
        });
        QCOMPARE(runCli({"info", write("tiny.gguf", [](GgufWriter&) {})}).status, 0);
        for (const auto& [file, field] : std::vector<std::pair<std::string, std::string>>{
                 {badMerge, "tokenizer.ggml.merges"},
                 {unknownPre, "no-such-splitter"},
                 {bosless, "tokenizer.ggml.add_bos_token"}}) {
            const auto r = runCli({"info", file});
            QCOMPARE(r.status, 1);
            QVERIFY2(contains(r.err, "inferscope-cli info: " + file + ": "), r.err.c_str());
            QVERIFY2(contains(r.err, field), r.err.c_str());
            const auto g = runCli({"generate", file, "-p", "ab", "--backend", "cpu"});
            QCOMPARE(g.status, 1);
            QVERIFY2(contains(g.err, file), g.err.c_str());
        }
    }
};

QTEST_APPLESS_MAIN(TestCliInput)
#include "test_cli_input.moc"
