#pragma once
// The real-model checks (test_slow_*) need the default model that scripts/setup places.
// Without it they skip, unless INFERSCOPE_REQUIRE_MODEL is set (scripts/test, and so CI,
// sets it): then a missing model is a failure, so CI cannot pass by skipping them.
#include "models/LoadedModel.hpp"
#include "models/ModelError.hpp"

#include <QtTest>
#include <cstdlib>
#include <filesystem>
#include <optional>

namespace inferscope::tests {

// The default model's path, or nullopt with the reason it cannot be used.
inline std::optional<std::filesystem::path> findDefaultModel(QString& reason) {
    try {
        auto path = models::resolveModelPath("default");
        if (std::filesystem::exists(path)) return path;
        reason = QString::fromStdString("default model missing: " + path.string());
    } catch (const models::ModelError& error) {
        reason = QString::fromUtf8(error.what());
    }
    return std::nullopt;
}

} // namespace inferscope::tests

// Declares `std::filesystem::path var` holding the default model, or skips (fails when
// INFERSCOPE_REQUIRE_MODEL is set) the calling test function.
#define INFERSCOPE_DEFAULT_MODEL_OR_SKIP(var)                                                      \
    std::filesystem::path var;                                                                     \
    do {                                                                                           \
        QString reason_;                                                                           \
        auto found_ = ::inferscope::tests::findDefaultModel(reason_);                              \
        if (!found_) {                                                                             \
            if (std::getenv("INFERSCOPE_REQUIRE_MODEL"))                                           \
                QFAIL(qPrintable("INFERSCOPE_REQUIRE_MODEL is set: " + reason_));                  \
            QSKIP(qPrintable(reason_ + " (run scripts/setup; set INFERSCOPE_REQUIRE_MODEL to "     \
                                       "make this a failure)"));                                   \
        }                                                                                          \
        var = *found_;                                                                             \
    } while (false)
