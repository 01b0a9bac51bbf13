#version 450
// Index of the largest logit of each row (the lowest index among equals, like a CPU loop
// with a strict >). One workgroup per row: lanes stride the row, then two reductions.
#include "common.glsl"

layout(push_constant) uniform Params {
    uint cols;
    uint stride;
    uint rows;
} p;

layout(std430, binding = 0) readonly buffer Logits { float logits[]; };
layout(std430, binding = 1) writeonly buffer Result { uint argmaxIndex[]; };

shared uint indexScratch[gl_WorkGroupSize.x];

void main() {
    const uint row = gl_WorkGroupID.x;
    float best = -3.4e38;
    uint bestIndex = 0xffffffffu;
    for (uint i = gl_LocalInvocationID.x; i < p.cols; i += WG) {
        const float value = logits[row * p.stride + i];
        if (value > best) {
            best = value;
            bestIndex = i;
        }
    }
    const float rowBest = workgroupMax(best);
    uint candidate = best == rowBest ? bestIndex : 0xffffffffu;
    if (SUBGROUP_REDUCE && gl_NumSubgroups == 1) {
        candidate = subgroupMin(candidate);
    } else {
        barrier();
        indexScratch[gl_LocalInvocationID.x] = candidate;
        barrier();
        if (gl_LocalInvocationID.x == 0) {
            for (uint i = 1; i < WG; ++i) candidate = min(candidate, indexScratch[i]);
        }
    }
    if (gl_LocalInvocationID.x == 0) argmaxIndex[row] = candidate;
}
