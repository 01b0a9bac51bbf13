#pragma once
// The window's names for the lab session's choices: the backend choice with its settings key
// as a QString, and the scheme-report request its panel sends.
#include "compute/engine/Backends.hpp"

#include <QString>
#include <QStringList>

namespace inferscope::gui {

using compute::BackendFactory;
using compute::cpuBackendFactory;
using compute::ResidualObserver;

struct BackendChoice : compute::BackendChoice {
    BackendChoice() = default;
    BackendChoice(const compute::BackendChoice& choice) : compute::BackendChoice(choice) {}
    QString key() const { return QString::fromStdString(compute::BackendChoice::key()); }
    static BackendChoice fromKey(const QString& key) {
        return compute::BackendChoice::fromKey(key.toStdString());
    }
};

// What the quantization lab's reports run over (the schemes are WeightQuantizer names).
struct SchemeReportRequest {
    QStringList schemes;
    bool quality = false;       // false: the weight-error report
    int perplexityTokens = 256; // 0: no perplexity
    int batteryQuestions = 4;   // 0: no battery and no agreement
};

} // namespace inferscope::gui
