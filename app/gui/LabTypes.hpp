#pragma once
// The window's names for the lab session's choices: the backend choice with its settings key
// as a QString.
#include "compute/engine/Backends.hpp"

#include <QString>

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

} // namespace inferscope::gui
