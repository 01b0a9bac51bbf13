#include "compute/experiments/batching/BatchingLab.hpp"

namespace inferscope::compute::experiments {

BatchingLab::Result BatchingLab::run(LabContext& lab, const Request& request,
                                     const JobControl& control) {
    auto& engine = requireGpuEngine(lab, "the batching sweep");
    control.report("Measuring read bandwidth", 0);
    BatchSweepOptions options;
    options.batches = request.batches;
    options.context = request.context;
    options.steps = request.steps;
    options.exactnessSequences = request.exactnessSequences;
    options.readBytesPerSecond = lab.readBandwidth();
    options.progress = control.cancellingProgress();
    return batchSweepTables(runBatchSweep(engine, options));
}

} // namespace inferscope::compute::experiments
