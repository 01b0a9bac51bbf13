// The CPU reference against llama.cpp (tests/data/architecture-logits.json, made by
// scripts/make-architecture-fixtures.py) on the tiny qwen3, gemma3, phi3 and smollm3 fixtures,
// synthesized here exactly as the script synthesized them, read from the GGUF and from the HF
// folder of the same weights. Tolerance: tests/ArchitectureLogits.hpp.
#include "models/LoadedModel.hpp"
#include "models/reference/ReferenceTransformer.hpp"
#include "models/synthetic/SyntheticShapes.hpp"
#include "tests/ArchitectureLogits.hpp"

#include <QTemporaryDir>
#include <QtTest>

using namespace inferscope;

class TestArchitectureLogits : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

private slots:
    void referenceMatchesLlamaCpp_data() {
        QTest::addColumn<QString>("shape");
        QTest::addColumn<bool>("folder");
        for (const char* shape : {"tiny-qwen3", "tiny-gemma3", "tiny-phi3", "tiny-smollm3"}) {
            QTest::newRow((std::string(shape) + " gguf").c_str()) << QString(shape) << false;
            QTest::newRow((std::string(shape) + " hf").c_str()) << QString(shape) << true;
        }
    }
    void referenceMatchesLlamaCpp() {
        QFETCH(QString, shape);
        QFETCH(bool, folder);
        QVERIFY(tests::architectureLogits().generator.find("llama.cpp") != std::string::npos);
        const auto spec = *models::syntheticShape(shape.toStdString(), models::TensorType::F32);
        const std::string path = dir_.filePath(shape + (folder ? "-hf" : ".gguf")).toStdString();
        if (folder)
            models::writeSyntheticSafetensors(spec, path);
        else
            models::writeSyntheticGguf(spec, path);
        const auto model = models::loadModel(path);
        const models::ReferenceTransformer reference(model.config, model.weights, 2);
        auto cache = reference.newCache();
        const auto logits = reference.forward(tests::architectureLogits().tokens, cache, true);
        const double worst =
            tests::compareWithLlamaCpp(shape.toStdString(), logits, model.config.vocabSize, 2e-4);
        qInfo("%s %s: largest error %.3f of the allowed", qPrintable(shape), folder ? "hf" : "gguf",
              worst);
        QVERIFY2(worst <= 1.0, qPrintable(QString("worst %1").arg(worst)));
    }
};

QTEST_GUILESS_MAIN(TestArchitectureLogits)
#include "test_architecture_logits.moc"
