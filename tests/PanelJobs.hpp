#pragma once
// What the widget tests of job-running panels start from: the panel attached to a real job
// runner, and a model loaded on the Vulkan engine (lavapipe).
#include "tests/TestTime.hpp"
#include "widgets/LabJobs.hpp"
#include "widgets/LabPanel.hpp"
#include "widgets/PanelContext.hpp"

#include <QSignalSpy>
#include <QTest>

namespace inferscope::tests {

inline void attachPanel(widgets::LabJobs& jobs, widgets::LabPanel& panel) {
    widgets::PanelContext context; // panels keep what they need of it
    context.jobs = &jobs;
    panel.attach(context);
}

// Loads `model` on the Vulkan backend and waits until the load job has finished, so the
// panel's run button is free; false when that did not happen in time.
inline bool loadOnVulkan(widgets::LabJobs& jobs, const QString& model) {
    compute::BackendChoice vulkan;
    vulkan.kind = compute::BackendChoice::Kind::Vulkan;
    QSignalSpy loaded(&jobs, &widgets::LabJobs::modelLoaded);
    QSignalSpy finished(&jobs, &widgets::LabJobs::jobFinished);
    const quint64 job = jobs.load(model, vulkan);
    return job != 0 && QTest::qWaitFor(
                           [&] {
                               for (const auto& call : finished)
                                   if (call.at(0).toULongLong() == job) return loaded.count() == 1;
                               return false;
                           },
                           scaledMs(60000));
}

} // namespace inferscope::tests
