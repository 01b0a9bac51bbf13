#pragma once
// The result records live in compute/session/RunRecords.hpp (a LabSession makes them, below Qt);
// the panels name them here in their own namespace.
#include "compute/session/RunRecords.hpp"

namespace inferscope::widgets {

using compute::ActivationRecord;
using compute::ActivationRecordPtr;
using compute::CachingComparison;
using compute::CachingComparisonPtr;
using compute::KernelTime;
using compute::KvSample;
using compute::ModelRecord;
using compute::ModelRecordPtr;
using compute::RunRecord;
using compute::RunRecordPtr;

} // namespace inferscope::widgets
