#version 450
// Index of the largest logit of each row (the lowest index among equals, like a CPU loop
// with a strict >). One workgroup per row: lanes stride the row, then two reductions.
#include "common.glsl"

// Rows of a multiple of 4 logits: read as vec4 texels, one 16-byte load per lane where
// lavapipe reads a storage buffer lane by lane (a decode step's argmax over 49152 logits
// took 0.45 ms that way, default model, two cores).
layout(constant_id = 2) const bool TEXELS = false;

layout(push_constant) uniform Params {
    uint cols;
    uint stride;
    uint rows;
} p;

layout(std430, binding = 0) readonly buffer Logits { float logits[]; };
layout(std430, binding = 1) writeonly buffer Result { uint argmaxIndex[]; };
layout(binding = 2) uniform samplerBuffer logitTexels; // binding 0's buffer, with TEXELS

shared uint indexScratch[gl_WorkGroupSize.x];

float best = -3.4e38;
uint bestIndex = 0xffffffffu;
// Each lane sees its columns in increasing order: strict > keeps the first of equals.
void consider(float value, uint index) {
    if (value > best) {
        best = value;
        bestIndex = index;
    }
}

void main() {
    const uint row = gl_WorkGroupID.x;
    uint first = 0u; // the columns before it went through texels
    if (TEXELS) {
        const uint rowTexel = row * (p.stride >> 2);
        const uint texels = p.cols >> 2;
        for (uint t = gl_LocalInvocationID.x; t < texels; t += WG) {
            const vec4 v = texelFetch(logitTexels, int(rowTexel + t));
            [[unroll]] for (uint j = 0; j < 4; ++j) consider(v[j], 4 * t + j);
        }
        first = texels * 4;
    }
    // The whole row, or the 1-3 columns the texels left.
    for (uint i = first + gl_LocalInvocationID.x; i < p.cols; i += WG)
        consider(logits[row * p.stride + i], i);
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
