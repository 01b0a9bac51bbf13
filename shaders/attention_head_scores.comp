#version 450
// Chapter item 1, one attention head written out the textbook way: the score matrix
// S[r][j] = q[rowBegin + r] . k[j] * scale for every query row from rowBegin and every key j,
// stored in a buffer (the n x n matrix an uncached step builds; one 1 x n row when cached).
// Keys after a row's own position are masked by the softmax kernel, not skipped here, so the
// bytes written are exactly rows x n floats. Keys are stored transposed (dimension-major), so
// neighbouring lanes (neighbouring keys) read neighbouring words: on a CPU device a SIMD load.
layout(local_size_x = 16, local_size_y = 16) in;

layout(push_constant) uniform Params {
    uint n;        // keys (and the sequence length)
    uint rowBegin; // first query row: 0 uncached, n - 1 cached
    uint headDim;
    float scale; // 1 / sqrt(headDim)
} p;

layout(std430, binding = 0) readonly buffer Queries { float q[]; }; // n x headDim
layout(std430, binding = 1) readonly buffer Keys { float kT[]; };   // headDim x n
layout(std430, binding = 2) writeonly buffer Scores { float s[]; }; // (n - rowBegin) x n

void main() {
    const uint j = gl_GlobalInvocationID.x;
    const uint r = gl_GlobalInvocationID.y;
    const uint row = p.rowBegin + r;
    if (j >= p.n || row >= p.n) return;
    float dot = 0.0;
    for (uint d = 0; d < p.headDim; ++d) dot += q[row * p.headDim + d] * kT[d * p.n + j];
    s[r * p.n + j] = dot * p.scale;
}
