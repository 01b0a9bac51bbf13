#version 450
// Chapter item 1, second half: per query row, a causal softmax over its stored scores
// (keys 0..row), written back in place as probabilities (as an eager implementation does),
// then the weighted sum of values. One workgroup per row; the lanes stride over the row for
// its max, its exponentials and their sum, then each lane owns one output dimension.
layout(local_size_x = 64) in;

layout(push_constant) uniform Params {
    uint n;
    uint rowBegin;
    uint headDim; // at most 64 (one lane per dimension)
    float scale;  // unused here; the same push block as attention_head_scores
} p;

layout(std430, binding = 0) buffer Scores { float s[]; };
layout(std430, binding = 1) readonly buffer Values { float v[]; }; // n x headDim
layout(std430, binding = 2) writeonly buffer Output { float o[]; }; // rows x headDim

shared float partial[64];

float reduceMax(float x) {
    partial[gl_LocalInvocationID.x] = x;
    barrier();
    for (uint width = 32; width > 0; width /= 2) {
        if (gl_LocalInvocationID.x < width)
            partial[gl_LocalInvocationID.x] =
                max(partial[gl_LocalInvocationID.x], partial[gl_LocalInvocationID.x + width]);
        barrier();
    }
    float result = partial[0];
    barrier();
    return result;
}

float reduceSum(float x) {
    partial[gl_LocalInvocationID.x] = x;
    barrier();
    for (uint width = 32; width > 0; width /= 2) {
        if (gl_LocalInvocationID.x < width)
            partial[gl_LocalInvocationID.x] += partial[gl_LocalInvocationID.x + width];
        barrier();
    }
    float result = partial[0];
    barrier();
    return result;
}

void main() {
    const uint r = gl_WorkGroupID.x;
    const uint row = p.rowBegin + r;
    const uint lane = gl_LocalInvocationID.x;
    const uint base = r * p.n;
    float m = -3.402823e38;
    for (uint j = lane; j <= row; j += 64) m = max(m, s[base + j]);
    m = reduceMax(m);
    float sum = 0.0;
    for (uint j = lane; j <= row; j += 64) {
        const float e = exp(s[base + j] - m);
        s[base + j] = e;
        sum += e;
    }
    sum = reduceSum(sum); // its barriers also make every lane's writes above visible
    memoryBarrierBuffer();
    barrier();
    if (lane < p.headDim) {
        float acc = 0.0;
        for (uint j = 0; j <= row; ++j) acc += s[base + j] * v[j * p.headDim + lane];
        o[r * p.headDim + lane] = acc / sum;
    }
}
