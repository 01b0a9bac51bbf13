#pragma once
// What every panel is given when the window builds it: the job runner (its records to draw,
// its jobs to start), the selection every panel observes, and the prompt the window's controls
// describe now (for the labs that run the user's prompt).
#include "compute/session/LabSession.hpp"

#include <functional>

namespace inferscope::widgets {

class LabJobs;
class LabSelection;

struct PanelContext {
    LabJobs* jobs = nullptr;
    LabSelection* selection = nullptr;
    std::function<compute::GenerationRequest()> prompt;
    // Asks the window to generate with this weight format (it owns the backend choice); true
    // when the GPU engine runs it (a switch in place, or the next load).
    std::function<bool(const QString& format)> requestGenerationFormat;
};

} // namespace inferscope::widgets
