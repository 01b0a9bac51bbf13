#pragma once
// What a lab job is told (stop) and tells (how far it is). Every job body in the lab (a
// session's load and generation, each experiment's run) takes one; the window's job runner and
// the CLI fill it in.
#include <atomic>
#include <functional>
#include <stdexcept>
#include <string>

namespace inferscope::compute {

struct JobControl {
    const std::atomic<bool>* cancel = nullptr;
    // stage: one line for a status bar; percent 0-100, or -1 when unknown.
    std::function<void(const std::string& stage, int percent)> progress;

    bool cancelled() const { return cancel && cancel->load(); }
    void report(const std::string& stage, int percent = -1) const {
        if (progress) progress(stage, percent);
    }
    // Throws JobCancelled once cancelled.
    void throwIfCancelled() const;
    // A progress callback for an experiment: reports, then throws JobCancelled once
    // cancelled (it refers to this JobControl, which must outlive it).
    std::function<void(const std::string&, int)> cancellingProgress() const;
};

// Thrown by a job that stopped because its JobControl was cancelled (reports; a generation
// returns its record marked cancelled instead).
struct JobCancelled : std::runtime_error {
    JobCancelled() : std::runtime_error("cancelled") {}
};

} // namespace inferscope::compute
