// Parity with llama.cpp on its own files: the default model requantized by llama.cpp's
// quantizer to Q3_K_M, Q4_K_M, Q5_K_M and Q6_K (scripts/make-quant-fixtures.py keeps them in
// the cache's quant-fixtures/ folder and records in tests/data/quant-fixtures.json what
// llama.cpp computes on them). The Vulkan engine reads each as stored (every matrix in its
// stored type's format, Q|K|V in sections where attn_v's type differs) and must give:
// - perplexity on the corpus (llama-perplexity's rule, ctx 512, every chunk) within 0.1% of
//   llama.cpp on an f32 copy of the same file ("exact": the file's values, every tensor
//   dequantized by gguf-py; ours differ by the f16 KV cache). Measured: -0.001% to -0.011%.
//   llama.cpp as it runs the file ("native") rounds activations to 8 bits in its quantized
//   dot products (q8_0 / q8_1 per 32, q8_K per 256), which moves its own perplexity by
//   +0.54% (Q4_K_M) to +0.98% (Q5_K_M) from the exact one; ours is reported against it, not
//   held to it: no exact reader of the file can be within 0.5% of both.
// - the 20 largest last-position logits of a short prompt within 0.05 + 1% of llama.cpp's
//   exact ones, with the same top token.
// The files are llama.cpp's bytes (its quantizer searches scales in ways ours does not), and
// CI never builds llama.cpp: without them in the cache each file's check skips, naming the
// script. A file whose SHA-256 differs from the fixture's is a failure, not a skip.
#include "compute/engine/BackendPerplexity.hpp"
#include "compute/engine/Engine.hpp"
#include "compute/engine/VulkanBackend.hpp"
#include "models/LoadedModel.hpp"
#include "models/formats/TextFile.hpp"
#include "models/reference/Perplexity.hpp"
#include "models/tokenizer/Tokenizer.hpp"

#include "tests/DefaultModel.hpp"
#include <QCryptographicHash>
#include <QFile>
#include <QtTest>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <fstream>

using namespace inferscope;

class TestSlowQuantParity : public QObject {
    Q_OBJECT
    nlohmann::json fixture_;
    std::string corpus_;

    static QString sha256(const std::filesystem::path& path) {
        QFile file(QString::fromStdString(path.string()));
        if (!file.open(QIODevice::ReadOnly)) return {};
        QCryptographicHash hash(QCryptographicHash::Sha256);
        hash.addData(&file);
        return QString::fromLatin1(hash.result().toHex());
    }

private slots:
    void initTestCase() {
        INFERSCOPE_DEFAULT_MODEL_OR_SKIP(path);
        std::ifstream in(INFERSCOPE_TEST_DATA "/quant-fixtures.json");
        QVERIFY2(in, "tests/data/quant-fixtures.json is missing");
        fixture_ = nlohmann::json::parse(in);
        corpus_ = models::readTextFile(models::defaultCorpusPath());
    }

    void requantizedFilesMatchLlamaCpp_data() {
        QTest::addColumn<QString>("preset");
        for (const auto& [preset, file] : fixture_.at("files").items())
            QTest::newRow(preset.c_str()) << QString::fromStdString(preset);
    }

    void requantizedFilesMatchLlamaCpp() {
        QFETCH(QString, preset);
        const auto& entry = fixture_.at("files").at(preset.toStdString());
        const auto path =
            models::cacheDirectory() / "quant-fixtures" / entry.at("file").get<std::string>();
        if (!std::filesystem::exists(path))
            QSKIP(qPrintable(QString::fromStdString(
                path.string() + " is absent: scripts/make-quant-fixtures.py writes it with "
                                "llama.cpp's quantizer (CI does not build llama.cpp)")));
        QCOMPARE(sha256(path), QString::fromStdString(entry.at("sha256").get<std::string>()));

        const auto start = std::chrono::steady_clock::now();
        const auto model = models::loadModel(path);
        compute::EngineOptions options;
        options.weightFormat = compute::WeightFormat::AsStored;
        auto engine = std::make_shared<compute::Engine>(model, options);
        qInfo("%s: %s", entry.at("file").get<std::string>().c_str(),
              engine->weightFormatLabel().c_str());
        for (const auto& info : engine->weightMatrices())
            QVERIFY2(info.format != compute::WeightFormat::F16 || info.name == "token_embd",
                     info.name.c_str());
        compute::VulkanBackend backend(engine);

        // Perplexity by the CLI's path: our tokenizer, llama-perplexity's windows.
        const auto& ppl = entry.at("perplexity");
        const auto tokenizer = models::Tokenizer(model.tokenizer);
        const auto tokens = tokenizer.encode(corpus_, true, false);
        models::PerplexityOptions ppOptions;
        ppOptions.context = ppl.at("ctx").get<std::uint32_t>();
        if (model.tokenizer.addBos) ppOptions.bosId = tokenizer.bos();
        const auto result = compute::backendPerplexity(backend, tokens, ppOptions);
        const auto exactChunks = ppl.at("exactChunkMeanNll").get<std::vector<double>>();
        QCOMPARE(std::size_t(result.chunks), exactChunks.size());
        const double exact = ppl.at("exact").get<double>();
        const double native = ppl.at("native").get<double>();
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        qInfo("%s perplexity: ours %.4f, llama.cpp exact %.4f (%+.3f%%), native %.4f (%+.3f%%); "
              "%u chunks, %.1f s with the load",
              qPrintable(preset), result.perplexity, exact,
              100.0 * (result.perplexity / exact - 1.0), native,
              100.0 * (result.perplexity / native - 1.0), result.chunks, seconds);
        QVERIFY(std::fabs(result.perplexity / exact - 1.0) <= 0.001);
        // Per chunk too: each window's mean NLL within 2e-3 nats of llama.cpp's exact one.
        for (std::size_t c = 0; c < exactChunks.size(); ++c)
            QVERIFY2(std::fabs(result.chunkMeanNll[c] - exactChunks[c]) <= 2e-3,
                     qPrintable(QString("chunk %1: ours %2, llama.cpp exact %3")
                                    .arg(c)
                                    .arg(result.chunkMeanNll[c])
                                    .arg(exactChunks[c])));

        // The first logits of a short prompt (its ids from llama.cpp's tokenizer).
        const auto& last = entry.at("lastLogits");
        const auto ids = last.at("promptIds").get<std::vector<std::int32_t>>();
        QCOMPARE(tokenizer.encode(last.at("prompt").get<std::string>(), true, false), ids);
        backend.reset();
        const auto logits = backend.append(ids);
        const auto topIds = last.at("topIds").get<std::vector<std::int32_t>>();
        const auto topLogits = last.at("topLogits").get<std::vector<double>>();
        double worst = 0.0;
        for (std::size_t i = 0; i < topIds.size(); ++i) {
            const double ours = logits[std::size_t(topIds[i])];
            worst = std::max(worst, std::fabs(ours - topLogits[i]));
            QVERIFY2(std::fabs(ours - topLogits[i]) <= 0.05 + 0.01 * std::fabs(topLogits[i]),
                     qPrintable(QString("token %1: ours %2, llama.cpp %3")
                                    .arg(topIds[i])
                                    .arg(ours)
                                    .arg(topLogits[i])));
        }
        const auto best = std::max_element(logits.begin(), logits.end()) - logits.begin();
        QCOMPARE(std::int32_t(best), topIds.front());
        qInfo("%s last logits: top 20 within %.4f of llama.cpp exact", qPrintable(preset), worst);
    }
};

QTEST_APPLESS_MAIN(TestSlowQuantParity)
#include "test_slow_quant_parity.moc"
