#version 450
// Memory-bandwidth probe: reads a buffer once with vec4 loads and writes one sum per lane
// (so the reads cannot be optimised away). The buffer is read as a texel buffer, the way
// the matrix kernels read their weights (shaders/quant_codes.glsl), so the roofline uses
// the bandwidth those kernels can reach. CONTIGUOUS: each lane streams its own long
// stretch (CPU devices such as lavapipe, where a lane is a SIMD element); otherwise lanes
// read neighbouring vec4s (GPUs: coalesced loads).
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const bool CONTIGUOUS = true;

layout(binding = 0) uniform samplerBuffer source;
layout(std430, binding = 1) writeonly buffer Sums { float sums[]; };
layout(push_constant) uniform Push {
    uint vec4Count;
    uint lanes;
} p;

void main() {
    const uint lane = gl_GlobalInvocationID.x;
    if (lane >= p.lanes) return;
    vec4 acc = vec4(0.0);
    if (CONTIGUOUS) {
        const uint per = (p.vec4Count + p.lanes - 1) / p.lanes;
        const uint begin = lane * per;
        const uint end = min(begin + per, p.vec4Count);
        for (uint i = begin; i < end; ++i) acc += texelFetch(source, int(i));
    } else {
        for (uint i = lane; i < p.vec4Count; i += p.lanes) acc += texelFetch(source, int(i));
    }
    sums[lane] = acc.x + acc.y + acc.z + acc.w;
}
