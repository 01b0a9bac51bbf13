// The real default model in a lab session on the GPU engine: the first run after a load holds
// no one-off pipeline cost once the session warms up (issue 13 item 3), and a scheme switch
// re-packs in place. Prints time to first token of a cold first run, a warm first run and a
// repeated run, and the switch time; asserts that the runs make the same greedy tokens.
#include "compute/session/LabSession.hpp"
#include "tests/DefaultModel.hpp"
#include "tests/compute/SessionRequests.hpp"

#include <QtTest>

using namespace inferscope;

namespace {
using tests::vulkanAvailable;

compute::GenerationRequest request() {
    return tests::greedyRequest(8, "The capital of France is");
}
} // namespace

class SlowLabSessionDefaultTest : public QObject {
    Q_OBJECT
private slots:
    void warmUpKeepsOneOffCostsOutOfTheFirstRun() {
        INFERSCOPE_DEFAULT_MODEL_OR_SKIP(path);
        if (!vulkanAvailable()) QSKIP("no Vulkan device (lavapipe is enough)");
        compute::LoadOptions options;
        options.choice.kind = compute::BackendChoice::Kind::Vulkan;
        options.choice.weightFormat = "f16";

        options.warmUp = false;
        compute::LabSession cold;
        QVERIFY(cold.load(path, options).has_value());
        const auto coldFirst = cold.generate(request());
        const auto coldAgain = cold.generate(request());

        options.warmUp = true;
        compute::LabSession warm;
        const auto loaded = warm.load(path, options);
        QVERIFY(loaded && loaded->warmupSeconds > 0);
        const auto warmFirst = warm.generate(request());
        QVERIFY(!coldFirst->warm && warmFirst->warm);

        auto ms = [](const compute::RunRecordPtr& run) { return run->prefillSeconds * 1e3; };
        auto firstStepMs = [](const compute::RunRecordPtr& run) {
            return run->stepSeconds.empty() ? 0.0 : run->stepSeconds.front() * 1e3;
        };
        qInfo() << "time to first token (ms): cold first" << ms(coldFirst) << "cold repeated"
                << ms(coldAgain) << "| warm first" << ms(warmFirst) << "| warm-up"
                << loaded->warmupSeconds * 1e3 << "ms";
        qInfo() << "first decode step (ms): cold first" << firstStepMs(coldFirst) << "cold repeated"
                << firstStepMs(coldAgain) << "| warm first" << firstStepMs(warmFirst);
        QCOMPARE(coldAgain->generatedIds, coldFirst->generatedIds);
        QCOMPARE(warmFirst->generatedIds, coldFirst->generatedIds);

        const auto switched = warm.setGenerationFormat("q8_0");
        const auto afterSwitch = warm.generate(request());
        qInfo() << "scheme switch f16 -> q8_0:" << switched.switchSeconds * 1e3
                << "ms re-pack in place, warm-up" << switched.warmupSeconds * 1e3
                << "ms; time to first token after it" << ms(afterSwitch) << "ms";
        QVERIFY(afterSwitch->warm);
        QCOMPARE(afterSwitch->generatedIds.size(), std::size_t(8));
    }
};

QTEST_APPLESS_MAIN(SlowLabSessionDefaultTest)
#include "test_slow_lab_session_default.moc"
