// Resources travel with the program (issue 49, item 9): the data of resources/ is embedded
// in the binaries, byte for byte, so a copy of inferscope-cli in a folder of its own, away
// from the build and the source tree and without INFERSCOPE_RESOURCES, still finds the model
// presets and the factual battery. The variable stays an override.
#include "compute/ResourcePaths.hpp"
#include "compute/experiments/budget/MemoryBudget.hpp"
#include "models/formats/TextFile.hpp"

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <set>

using namespace inferscope;

class TestCliResources : public QObject {
    Q_OBJECT

private slots:
    void everyResourceIsEmbeddedByteForByte() {
        std::set<std::string> onDisk;
        for (const auto& entry : std::filesystem::directory_iterator(
                 std::filesystem::path(INFERSCOPE_SOURCE_DIR) / "resources"))
            if (entry.path().extension() == ".json")
                onDisk.insert(entry.path().filename().string());
        QVERIFY(onDisk.count("model-presets.json") && onDisk.count("factual-battery.json"));
        std::set<std::string> embedded;
        for (const auto& resource : compute::embeddedResources()) {
            const std::string name(resource.name);
            embedded.insert(name);
            const auto file = models::readTextFile(std::filesystem::path(INFERSCOPE_SOURCE_DIR) /
                                                   "resources" / name);
            QVERIFY2(resource.bytes == file, name.c_str());
        }
        QVERIFY(embedded == onDisk);
    }

    void theVariableOverridesAndAMissingFileThereIsAnError() {
        QTemporaryDir dir;
        std::ofstream(dir.filePath("model-presets.json").toStdString())
            << R"({"presets": [{"name": "Override-1B", "layers": 4, "heads": 8, "kv_heads": 2,
                 "head_dim": 64, "parameters": 1000000000}]})";
        qputenv("INFERSCOPE_RESOURCES", dir.path().toUtf8());
        const auto presets = compute::experiments::shippedModelPresets();
        QCOMPARE(presets.size(), std::size_t(1));
        QCOMPARE(QString::fromStdString(presets[0].name), QString("Override-1B"));
        QVERIFY_THROWS_EXCEPTION(models::TextFileError,
                                 compute::shippedResource("factual-battery.json"));
        qunsetenv("INFERSCOPE_RESOURCES");
        const auto shipped = compute::shippedResource("factual-battery.json");
        QVERIFY(shipped);
        QVERIFY(shipped->source.ends_with("(built in)"));
    }

    // A copy of the program alone in a temporary folder, run from there.
    void aCopyOfTheProgramElsewhereRunsBudget() {
        QTemporaryDir dir;
        const QString copy = dir.filePath("inferscope-cli");
        QVERIFY(QFile::copy(INFERSCOPE_CLI_EXECUTABLE, copy));
        QProcess cli;
        auto environment = QProcessEnvironment::systemEnvironment();
        environment.remove("INFERSCOPE_RESOURCES");
        cli.setProcessEnvironment(environment);
        cli.setWorkingDirectory(dir.path());
        cli.start(copy, {"budget", "--no-detect"});
        QVERIFY(cli.waitForFinished(60000));
        const QString out = QString::fromUtf8(cli.readAllStandardOutput());
        const QString err = QString::fromUtf8(cli.readAllStandardError());
        QVERIFY2(cli.exitCode() == 0, qPrintable(err));
        QVERIFY2(out.contains("Llama-2-70B"), qPrintable(out));
    }
};

QTEST_GUILESS_MAIN(TestCliResources)
#include "test_cli_resources.moc"
