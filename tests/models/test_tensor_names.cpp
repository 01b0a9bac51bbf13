// GGUF's per-layer tensor names, built in one place (models/TensorNames).
#include "models/formats/TensorNames.hpp"

#include <QtTest>

using namespace inferscope::models;

class TestTensorNames : public QObject {
    Q_OBJECT
private slots:
    void layerNames() {
        QCOMPARE(layerTensorPrefix(0), std::string("blk.0."));
        QCOMPARE(layerTensorName(29, "attn_q.weight"), std::string("blk.29.attn_q.weight"));
        QCOMPARE(layerTensorName(3, "ffn_norm.weight"), layerTensorPrefix(3) + "ffn_norm.weight");
        QCOMPARE(layerTensorName(4294967295u, "x"), std::string("blk.4294967295.x"));
    }
};

QTEST_GUILESS_MAIN(TestTensorNames)
#include "test_tensor_names.moc"
