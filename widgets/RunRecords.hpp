#pragma once
// The result records live in compute/lab/RunRecords.hpp (a lab job makes them, below Qt); the
// panels name them here in their own namespace, and fold a streaming run's deltas with LiveRun.
#include "compute/lab/RunRecords.hpp"

#include <memory>

namespace inferscope::widgets {

using compute::ActivationRecord;
using compute::ActivationRecordPtr;
using compute::CachingComparison;
using compute::CachingComparisonPtr;
using compute::KernelTime;
using compute::KvSample;
using compute::ModelRecord;
using compute::ModelRecordPtr;
using compute::RunDelta;
using compute::RunDeltaPtr;
using compute::RunRecord;
using compute::RunRecordPtr;

// A streaming run as one panel sees it: the deltas applied in order to a record of its own.
class LiveRun {
public:
    // The record with this delta applied (a run's first delta starts a new record).
    RunRecordPtr apply(const RunDelta& delta) {
        if (delta.first || !record_) record_ = std::make_shared<RunRecord>();
        record_->apply(delta);
        return record_;
    }

private:
    std::shared_ptr<RunRecord> record_;
};

} // namespace inferscope::widgets
