// One device rule (issue 49, item 6): --device and INFERSCOPE_DEVICE are read by the same
// rule (compute/vulkan/DeviceChoice) in every command, the Vulkan context and the window's
// --backend vulkan:N; a number past the devices or a word is refused naming the devices,
// never run on device 0 without a word.
#include "app/gui/CommandLine.hpp"
#include "compute/vulkan/DeviceChoice.hpp"
#include "models/synthetic/SyntheticModel.hpp"
#include "tests/app/CliRunner.hpp"

#include <QTemporaryDir>
#include <QtTest>

using namespace inferscope;

namespace {

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

} // namespace

class TestGuiDeviceChoice : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::string model_;
    std::string firstDevice_; // "0 llvmpipe (...) (cpu)": how refusals list the devices

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        qunsetenv("INFERSCOPE_DEVICE");
        models::SyntheticModelSpec spec;
        spec.layers = 1;
        model_ = dir_.filePath("synthetic.gguf").toStdString();
        models::writeSyntheticGguf(spec, model_);
        const auto devices = compute::listDevices();
        QVERIFY(!devices.empty());
        firstDevice_ = "0 " + devices.front().name;
    }

    void theRuleAcceptsDigitsNamingADevice() {
        auto list = [] { return std::string("0 test (cpu)"); };
        QCOMPARE(compute::parseDeviceIndex("0", "--device", 2, list), 0u);
        QCOMPARE(compute::parseDeviceIndex("1", "--device", 2, list), 1u);
        for (const char* bad : {"2", "99", "abc", "-1", "", "1x", " 1", "99999999999"}) {
            try {
                compute::parseDeviceIndex(bad, "INFERSCOPE_DEVICE", 2, list);
                QFAIL(bad);
            } catch (const compute::DeviceChoiceError& e) {
                const std::string what = e.what();
                QVERIFY2(what.starts_with("INFERSCOPE_DEVICE: ") &&
                             contains(what, "(devices: 0 test (cpu)"),
                         what.c_str());
            }
        }
    }

    void everyCommandRefusesABadDeviceOption() {
        const std::vector<std::vector<std::string>> commands{
            {"generate", model_, "-p", "a", "-n", "1"},
            {"info", model_},
            {"budget"},
            {"attention", "--lengths", "8", "--repeats", "1"},
            {"bench", model_}};
        for (const auto& command : commands)
            for (const std::string bad : {"99", "abc"}) {
                auto args = command;
                args.insert(args.end(), {"--device", bad});
                const auto r = tests::runCli(args);
                const std::string label = command[0] + " --device " + bad + ": " + r.err;
                QVERIFY2(r.status == 2, label.c_str());
                QVERIFY2(contains(r.err, "--device: ") && contains(r.err, firstDevice_),
                         label.c_str());
            }
    }

    void theEnvironmentIsCheckedTheSameWay() {
        for (const char* bad : {"99", "abc"}) {
            qputenv("INFERSCOPE_DEVICE", bad);
            for (const auto& command : std::vector<std::vector<std::string>>{
                     {"generate", model_, "-p", "a", "-n", "1"}, {"info", model_}}) {
                const auto r = tests::runCli(command);
                const std::string label = command[0] + " INFERSCOPE_DEVICE=" + bad + ": " + r.err;
                QVERIFY2(r.status == 2, label.c_str());
                QVERIFY2(contains(r.err, "INFERSCOPE_DEVICE: ") && contains(r.err, firstDevice_),
                         label.c_str());
            }
            QVERIFY_THROWS_EXCEPTION(compute::DeviceChoiceError, compute::VulkanContext{});
            QString error;
            gui::parseCommandLine({"inferscope", "--run"}, &error);
            QVERIFY2(error.contains("INFERSCOPE_DEVICE"), qPrintable(error));
        }
        // A valid number is used, by the CLI and the window alike.
        qputenv("INFERSCOPE_DEVICE", "0");
        QCOMPARE(tests::runCli({"generate", model_, "-p", "a", "-n", "1"}).status, 0);
        QString error;
        const auto options = gui::parseCommandLine({"inferscope", "--run"}, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(options.backend, QString("vulkan:0"));
        qunsetenv("INFERSCOPE_DEVICE");
        gui::parseCommandLine({"inferscope", "--backend", "vulkan:99"}, &error);
        QVERIFY2(error.contains("--backend vulkan:N") &&
                     error.contains(QString::fromStdString(firstDevice_)),
                 qPrintable(error));
    }
};

QTEST_MAIN(TestGuiDeviceChoice)
#include "test_gui_device_choice.moc"
