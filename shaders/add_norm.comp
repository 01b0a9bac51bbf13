#version 450
// Post-norm residual add (gemma3): h[t] += RMSNorm(y[t]) * w, where y is a block's output
// (attention's projection or the FFN's down projection) written by a plain matvec. PROBE
// records the per-dimension max |h| as the residual matvec does (float bits, atomically).
// One workgroup per token: a workgroup sum of y^2, then lanes stride the row.
#include "common.glsl"

layout(constant_id = 2) const bool PROBE = false;

layout(push_constant) uniform Params {
    uint cols;      // hidden size
    uint stride;    // elements per row of y and h
    uint tokens;
    float eps;
    uint probeBase; // this layer's slots in the probe
} p;

layout(std430, binding = 0) readonly buffer Block { float blockOut[]; };
layout(std430, binding = 1) readonly buffer NormWeight { float weight[]; };
layout(std430, binding = 2) buffer Hidden { float hidden[]; };
layout(std430, binding = 3) buffer Probe { uint probeMaxBits[]; };

void main() {
    const uint token = gl_WorkGroupID.x;
    const uint base = token * p.stride;
    float partial = 0.0;
    for (uint i = gl_LocalInvocationID.x; i < p.cols; i += WG)
        partial += blockOut[base + i] * blockOut[base + i];
    const float scale = inversesqrt(workgroupSum(partial) / float(p.cols) + p.eps);
    for (uint i = gl_LocalInvocationID.x; i < p.cols; i += WG) {
        const float value = hidden[base + i] + blockOut[base + i] * scale * weight[i];
        hidden[base + i] = value;
        if (PROBE) atomicMax(probeMaxBits[p.probeBase + i], floatBitsToUint(abs(value)));
    }
}
