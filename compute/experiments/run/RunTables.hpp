#pragma once
// The measured tables of one generation (chapter items 4 and 5), built from the plain run
// records. They are the one
// source for the window's panels (which draw them) and the CLI's `generate` (which prints
// them); what a caption may claim about them is in RunEvidence.
#include "compute/Table.hpp"
#include "compute/lab/RunRecords.hpp"

namespace inferscope::compute::experiments {

// "timings": one row for the prefill, then one per decode step: phase, tokens fed, tokens in
// the sequence afterwards, index of the generated token it produced, time; a note with time
// to first token and tokens/s. No rows (and no notes) before the run has a first token.
Table timingsTable(const RunRecord& run);

// "kernel-timings": one row per kernel, in the order the decode step runs them, then the
// prefill-only ones: dispatches and microseconds in the prefill and in the last decode step,
// the kernel's share of that step, and its mean over every decode step (empty without
// profiled decode steps). No rows when the run was not profiled.
Table kernelTimingsTable(const RunRecord& run);

// "kv-cache-growth": one row per sample: tokens held, bytes measured, and the formula at
// fp32 and fp16, then the bytes allocated in whole blocks and the blocks in use (paged
// caches; else 0).
Table kvCacheGrowthTable(const RunRecord& run);
// "kv-cache-per-layer": at the run's last sample, one row per layer: bytes written and bytes
// allocated (no rows when the backend does not count per layer).
Table kvCachePerLayerTable(const RunRecord& run);

} // namespace inferscope::compute::experiments
