// `inferscope-cli info` carries the load footprint table (text and JSON) for the backend and
// format asked for, and `generate` refuses a model that does not fit with one clear line and a
// non-zero status before it builds anything.
#include "compute/engine/Backends.hpp"
#include "tests/SyntheticModels.hpp"
#include "tests/app/CliRunner.hpp"

#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

using namespace inferscope;
using inferscope::tests::runCli;

namespace {

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

bool oneLine(const std::string& text) {
    return !text.empty() && text.find('\n') == text.size() - 1;
}

const nlohmann::json* footprintTable(const nlohmann::json& doc) {
    for (const auto& table : doc.at("tables"))
        if (table.at("id") == "load-footprint") return &table;
    return nullptr;
}

// The row whose first cell is `name`.
const nlohmann::json* row(const nlohmann::json& table, const std::string& name) {
    for (const auto& r : table.at("rows"))
        if (r[0] == name) return &r;
    return nullptr;
}

} // namespace

class TestCliFootprint : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string model_;

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        model_ = tests::writeTwoLayerGqaModel(dir_.filePath("synthetic.gguf").toStdString());
    }

    void infoCarriesTheCpuFootprint() {
        const auto r = runCli({"info", model_, "--backend", "cpu", "--json"});
        QVERIFY2(r.status == 0, r.err.c_str());
        const auto doc = nlohmann::json::parse(r.out);
        const auto* table = footprintTable(doc);
        QVERIFY(table);
        const auto* total = row(*table, "total");
        const auto* available = row(*table, "available");
        const auto* fits = row(*table, "fits");
        QVERIFY(total && available && fits);
        QVERIFY((*total)[2].get<std::int64_t>() > 0);
        QVERIFY((*available)[2].get<std::int64_t>() > 0); // MemAvailable
        QCOMPARE((*fits)[2].get<std::string>(), std::string("yes"));

        // What a host of 64 KiB says: the same bytes, and "no".
        const auto small =
            runCli({"info", model_, "--backend", "cpu", "--host-memory", "64KiB", "--json"});
        QVERIFY2(small.status == 0, small.err.c_str());
        const auto smallDoc = nlohmann::json::parse(small.out);
        const auto* smallTable = footprintTable(smallDoc);
        QVERIFY(smallTable);
        QCOMPARE((*row(*smallTable, "total"))[2], (*total)[2]);
        QCOMPARE((*row(*smallTable, "available"))[2].get<std::int64_t>(), std::int64_t(65536));
        QCOMPARE((*row(*smallTable, "fits"))[2].get<std::string>(), std::string("no"));

        const auto text = runCli({"info", model_, "--backend", "cpu"});
        QCOMPARE(text.status, 0);
        QVERIFY(contains(text.out,
                         "Load footprint: CPU reference (weights as stored, fp32 arithmetic)"));
    }

    void infoCarriesTheVulkanFootprint() {
        const auto r = runCli({"info", model_, "--format", "int4-g128", "--json"});
        QVERIFY2(r.status == 0, r.err.c_str());
        const auto doc = nlohmann::json::parse(r.out);
        const auto* table = footprintTable(doc);
        QVERIFY(table);
        if (!contains(table->at("title").get<std::string>(), "int4-g128"))
            QSKIP("no Vulkan device: info showed the CPU reference's footprint");
        QVERIFY(row(*table, "weights (int4-g128)"));
        const auto device = (*row(*table, "total"))[1].get<std::int64_t>();
        QVERIFY(device > 0);
        // fp16 weights weigh more than int4-g128 ones.
        const auto fp16 =
            nlohmann::json::parse(runCli({"info", model_, "--format", "fp16", "--json"}).out);
        QVERIFY((*row(*footprintTable(fp16), "weights (fp16)"))[1].get<std::int64_t>() >
                (*row(*table, "weights (int4-g128)"))[1].get<std::int64_t>());
    }

    void generateRefusesWhatDoesNotFit() {
        const auto host = runCli({"generate", model_, "-p", "hello", "-n", "2", "--backend", "cpu",
                                  "--host-memory", "1MiB"});
        QCOMPARE(host.status, 1);
        QVERIFY2(oneLine(host.err), host.err.c_str());
        QVERIFY2(contains(host.err, "inferscope-cli generate: cannot load"), host.err.c_str());
        QVERIFY2(contains(host.err, "of host memory"), host.err.c_str());
        QVERIFY2(contains(host.err, "the host has 1.0 MiB available"), host.err.c_str());
        QVERIFY(host.out.empty()); // nothing was generated

        const auto fits = runCli({"generate", model_, "-p", "hello", "-n", "2", "--backend", "cpu",
                                  "--greedy", "--host-memory", "64GiB"});
        QVERIFY2(fits.status == 0, fits.err.c_str());

        const auto bad = runCli({"generate", model_, "-p", "hello", "--host-memory", "lots"});
        QCOMPARE(bad.status, 2);
        QVERIFY2(oneLine(bad.err), bad.err.c_str());
    }

    void generateRefusesWhatTheDeviceCannotHold() {
        bool vulkan = false;
        for (const auto& option : compute::availableBackends())
            vulkan |= option.choice.kind == compute::BackendChoice::Kind::Vulkan;
        if (!vulkan) QSKIP("no Vulkan device");
        const auto r =
            runCli({"generate", model_, "-p", "hello", "-n", "2", "--device-memory", "16KiB"});
        QCOMPARE(r.status, 1);
        QVERIFY2(oneLine(r.err), r.err.c_str());
        // Without --format the engine runs the file's own types, as the window does.
        QVERIFY2(
            contains(r.err, "of device memory for as-stored weights, KV cache and activations"),
            r.err.c_str());
        QVERIFY2(contains(r.err, "has 16.0 KiB"), r.err.c_str());
    }
};

QTEST_APPLESS_MAIN(TestCliFootprint)
#include "test_cli_footprint.moc"
