// compute::LabSession on small synthetic models: a scheme switch re-packs in place without
// opening the model file again; quality per scheme does not depend on the generation format;
// one rule for the perplexity text; per-scheme progress with a time estimate; the KV panel's
// per-layer bytes come from the cache's own accounting; a warm-up keeps one-off costs out; a
// Vulkan run's activation record comes from its own prefill.
#include "compute/experiments/quantization/QualityReport.hpp"
#include "compute/experiments/quantization/QuantizationLabs.hpp"
#include "compute/session/LabSession.hpp"
#include "models/synthetic/SyntheticModel.hpp"
#include "tests/compute/SessionRequests.hpp"

#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <fstream>

using namespace inferscope;

namespace {

using tests::vulkanAvailable;
using tests::vulkanChoice;

// These runs also record max |h| per layer, as the window's runs do.
compute::GenerationRequest greedy(std::int32_t tokens) {
    auto request = tests::greedyRequest(tokens);
    request.collectActivations = true;
    return request;
}

// A text long enough for the perplexity rule, written next to the model.
std::filesystem::path writeText(const QTemporaryDir& dir) {
    const auto path = std::filesystem::path(dir.filePath("text.txt").toStdString());
    std::ofstream out(path);
    for (int i = 0; i < 40; ++i) out << "the quick brown fox jumps over the lazy dog. ";
    return path;
}

} // namespace

class TestLabSession : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        models::SyntheticModelSpec spec;
        spec.layers = 3;
        spec.hiddenSize = 128;
        spec.heads = 4;
        spec.kvHeads = 2;
        spec.headDim = 32;
        spec.ffnSize = 256;
        spec.vocabSize = 400;
        spec.outlierDims = {7, 90};
        model_ = dir_.filePath("synthetic.gguf").toStdString();
        models::writeSyntheticGguf(spec, model_);
        text_ = writeText(dir_);
    }

    void perplexityRuleIsShared() {
        namespace ex = compute::experiments;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ex::perplexityContext(63, 512));
        QCOMPARE(ex::perplexityContext(64, 512), 64u);
        QCOMPARE(ex::perplexityContext(2048, 512), 512u);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ex::perplexityContext(2048, 32));
        QVERIFY(!ex::estimatedSecondsLeft({}, 3).has_value());
        const std::vector<double> done{2.0, 4.0};
        QCOMPARE(*ex::estimatedSecondsLeft(done, 3), 9.0);
    }

    void qualityReportsPerSchemeProgress() {
        compute::LabSession session(compute::cpuBackendFactory());
        QVERIFY(session.load(model_, {}).has_value());
        compute::experiments::QualityRequest request;
        request.schemes = {models::parseQuantScheme("fp32"), models::parseQuantScheme("int4-row")};
        request.text = text_;
        request.perplexityTokens = 64;
        request.batteryQuestions = 0;
        std::vector<std::string> lines;
        compute::JobControl control;
        control.progress = [&](const std::string& line, int) { lines.push_back(line); };
        const auto tables = compute::experiments::QualityReportLab::run(session, request, control);
        QCOMPARE(tables.front().rows.size(), std::size_t(2));
        bool second = false, estimate = false;
        for (const auto& line : lines) {
            second |= line.find("Scheme 2 of 2: int4-row") != std::string::npos;
            estimate |= line.find("left") != std::string::npos;
        }
        QVERIFY(second);
        QVERIFY(estimate); // from the first scheme's measured time

        request.perplexityTokens = 63; // the window and the CLI refuse the same texts
        std::ofstream(text_.string() + ".short") << "too short";
        request.text = text_.string() + ".short";
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 compute::experiments::QualityReportLab::run(session, request, {}));
    }

    void cpuRunsRecordKvPerLayer() {
        compute::LabSession session(compute::cpuBackendFactory());
        QVERIFY(session.load(model_, {}).has_value());
        const auto run = session.generate(greedy(5));
        QCOMPARE(run->generatedIds.size(), std::size_t(5));
        QCOMPARE(run->kvUsedPerLayer.size(), std::size_t(3));
        // fp32 K and V of every position the sequence holds, per layer.
        const std::uint64_t perPosition = 2ull * 2 * 32 * 4;
        for (auto bytes : run->kvUsedPerLayer)
            QCOMPARE(bytes, perPosition * std::uint64_t(run->kvSamples.back().tokens));
    }

    // One clock per figure: the deltas a run streams, applied in order, give the step times
    // and KV samples of its final record (the generation loop measured both), and the text
    // streamed token by token is the final text.
    void streamedDeltasAddUpToTheFinalRecord() {
        std::vector<compute::BackendChoice> choices{compute::BackendChoice{}};
        if (vulkanAvailable()) choices.push_back(vulkanChoice("fp32"));
        for (const auto& choice : choices) {
            compute::LabSession session;
            compute::LoadOptions options;
            options.choice = choice;
            QVERIFY(session.load(model_, options).has_value());
            compute::RunRecord streamed;
            std::size_t deltas = 0;
            std::string text;
            compute::GenerationEvents events;
            events.progress = [&](compute::RunDeltaPtr delta) {
                QCOMPARE(delta->first, deltas == 0);
                streamed.apply(*delta);
                ++deltas;
            };
            events.text = [&](const std::string& piece) { text += piece; };
            auto request = greedy(24);
            request.kernelTimings = choice.kind == compute::BackendChoice::Kind::Vulkan;
            const auto final = session.generate(request, events);
            QVERIFY(deltas >= 1);
            QCOMPARE(final->stepSeconds.size(), std::size_t(23));
            // The last tokens may come after the last delta (at most every 40 ms): every
            // streamed figure is the final record's, in order.
            QVERIFY(streamed.stepSeconds.size() <= final->stepSeconds.size());
            for (std::size_t i = 0; i < streamed.stepSeconds.size(); ++i)
                QCOMPARE(streamed.stepSeconds[i], final->stepSeconds[i]);
            QCOMPARE(streamed.prefillSeconds, final->prefillSeconds);
            QVERIFY(streamed.kvSamples.size() <= final->kvSamples.size());
            for (std::size_t i = 0; i < streamed.kvSamples.size(); ++i) {
                QCOMPARE(streamed.kvSamples[i].tokens, final->kvSamples[i].tokens);
                QCOMPARE(streamed.kvSamples[i].bytes, final->kvSamples[i].bytes);
            }
            QCOMPARE(streamed.promptTokens, final->promptTokens);
            // Streamed in whole characters: at most an unfinished one (3 bytes) held back.
            QVERIFY(final->text.compare(0, text.size(), text) == 0);
            QVERIFY(final->text.size() - text.size() <= 3);
            if (request.kernelTimings) {
                QVERIFY(!streamed.decodeKernelsTotal.empty());
                for (const auto& kernel : streamed.decodeKernelsTotal)
                    QVERIFY(kernel.dispatches > 0 && kernel.microseconds > 0);
                // Each record counts one entry per profiled decode step, so a spread over them.
                const compute::RunRecord* records[] = {&streamed, final.get()};
                for (const auto* record : records) {
                    for (const auto& kernel : record->decodeKernelsTotal) {
                        QCOMPARE(std::size_t(kernel.steps), record->stepSeconds.size());
                        QVERIFY(kernel.squaredStepMicroseconds > 0);
                    }
                    QCOMPARE(record->decodeStepGpuMicroseconds.size(), record->stepSeconds.size());
                }
                for (std::size_t i = 0; i < streamed.decodeStepGpuMicroseconds.size(); ++i)
                    QCOMPARE(streamed.decodeStepGpuMicroseconds[i],
                             final->decodeStepGpuMicroseconds[i]);
            }
        }
    }

    void schemeSwitchInPlaceReadsNoFile() {
        if (!vulkanAvailable()) QSKIP("no Vulkan device (lavapipe is enough)");
        // A copy of the model that disappears after the load: a switch that opened the file
        // again would fail.
        const auto copy = std::filesystem::path(dir_.filePath("vanishing.gguf").toStdString());
        std::filesystem::copy_file(model_, copy, std::filesystem::copy_options::overwrite_existing);
        compute::LabSession session;
        compute::LoadOptions options;
        options.choice = vulkanChoice("f16");
        const auto loaded = session.load(copy, options);
        QVERIFY(loaded.has_value());
        QVERIFY(loaded->warmupSeconds > 0); // warmed at load, untimed
        std::filesystem::remove(copy);
        QVERIFY(!std::filesystem::exists(copy));

        const auto switched = session.setGenerationFormat("int8-row");
        QCOMPARE(session.generationFormat(), std::string("int8-row"));
        QVERIFY(switched.switchSeconds > 0);
        QVERIFY(switched.warmupSeconds > 0);
        QVERIFY2(switched.backend.find("int8") != std::string::npos, switched.backend.c_str());
        qInfo() << "scheme switch f16 -> int8-row:" << switched.switchSeconds * 1e3
                << "ms re-pack, warm-up" << switched.warmupSeconds * 1e3 << "ms";
        const auto run = session.generate(greedy(6));
        QVERIFY(run->warm);

        // The same tokens as a session loaded in that format from the file itself.
        compute::LabSession fresh;
        options.choice = vulkanChoice("int8-row");
        QVERIFY(fresh.load(model_, options).has_value());
        QCOMPARE(fresh.generate(greedy(6))->generatedIds, run->generatedIds);

        // KV per layer from the engine's cache accounting: f16 K and V per position and layer.
        const std::uint64_t perPosition = 2ull * 2 * 32 * 2;
        QCOMPARE(run->kvUsedPerLayer.size(), std::size_t(3));
        for (auto bytes : run->kvUsedPerLayer)
            QCOMPARE(bytes, perPosition * std::uint64_t(run->kvSamples.back().tokens));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, session.setGenerationFormat("int3"));
    }

    // The window's activation record comes from the Vulkan run itself (the prefill copies
    // its residual rows): it equals the CPU reference's recording of the same prompt within
    // the engine-vs-reference tolerance (2e-3 * (1 + |h|)), its max |h| is the record's, and
    // the panels' tables come with it, computed from it.
    void vulkanRunRecordsItsOwnResidualStream() {
        if (!vulkanAvailable()) QSKIP("no Vulkan device (lavapipe is enough)");
        compute::LabSession session;
        compute::LoadOptions options;
        options.choice = vulkanChoice("fp32");
        QVERIFY(session.load(model_, options).has_value());
        auto request = greedy(4);
        request.recordResidualStream = true;
        std::vector<compute::ActivationRecordPtr> records;
        compute::GenerationEvents events;
        events.activations = [&](compute::ActivationRecordPtr r) { records.push_back(r); };
        const auto run = session.generate(request, events);
        QCOMPARE(records.size(), std::size_t(2)); // max |h| at the prefill, then the stream
        QVERIFY(!records.front()->recording);
        const auto& record = *records.back();
        QVERIFY(record.recording);
        const auto& recording = *record.recording;
        const auto expected = session.recordResidualStream(run->promptIds);
        QCOMPARE(recording.layers, 3u);
        QCOMPARE(recording.hidden, 128u);
        QCOMPARE(recording.positions, std::uint32_t(run->promptIds.size()));
        QCOMPARE(recording.positions, expected->positions);
        QCOMPARE(recording.values.size(), expected->values.size());
        for (std::size_t i = 0; i < recording.values.size(); ++i)
            QVERIFY2(std::abs(recording.values[i] - expected->values[i]) <=
                         2e-3f * (1 + std::abs(expected->values[i])),
                     qPrintable(QString("value %1: %2 vs %3")
                                    .arg(i)
                                    .arg(recording.values[i])
                                    .arg(expected->values[i])));
        QCOMPARE(compute::experiments::residualMaxPerDimension(recording), record.maxAbsPerLayer);

        QVERIFY(record.panelTables);
        const auto& tables = *record.panelTables;
        QCOMPARE(tables.levels.size(), std::size_t(3));
        for (std::uint32_t l = 0; l < 3; ++l) {
            const auto levels =
                compute::experiments::levelsByDimension(recording, l, tables.levelsTopK);
            QCOMPARE(tables.levels[l].size(), std::size_t(3));
            QVERIFY(tables.levels[l][0].rows == levels.rows);
            QCOMPARE(
                tables.histograms[l].rows.size(),
                compute::experiments::activationHistogram(record.maxAbsPerLayer, l).rows.size());
        }
    }

    void qualityDoesNotDependOnTheGenerationFormat() {
        if (!vulkanAvailable()) QSKIP("no Vulkan device (lavapipe is enough)");
        compute::LabSession session;
        compute::LoadOptions options;
        options.choice = vulkanChoice("f16");
        options.warmUp = false;
        QVERIFY(session.load(model_, options).has_value());
        compute::experiments::QualityRequest request;
        request.schemes = {models::parseQuantScheme("fp32"),
                           models::parseQuantScheme("int4-tensor"),
                           models::parseQuantScheme("nf4")};
        request.text = text_;
        request.perplexityTokens = 64;
        request.batteryQuestions = 1;
        const auto first = compute::experiments::QualityReportLab::run(session, request, {});
        session.setGenerationFormat("nf4");
        const auto second = compute::experiments::QualityReportLab::run(session, request, {});
        QCOMPARE(first.size(), second.size());
        const auto& a = first.front();
        const auto& b = second.front();
        QCOMPARE(a.rows.size(), std::size_t(3));
        QCOMPARE(a.rows.size(), b.rows.size());
        for (std::size_t r = 0; r < a.rows.size(); ++r)
            QVERIFY2(a.rows[r] == b.rows[r], ("row " + std::to_string(r)).c_str());
        // And the schemes differ from each other: each ran from its own weights.
        QVERIFY(a.rows[0][2] != a.rows[1][2]);
    }

private:
    QTemporaryDir dir_;
    std::string model_;
    std::filesystem::path text_;
};

QTEST_APPLESS_MAIN(TestLabSession)
#include "test_lab_session.moc"
