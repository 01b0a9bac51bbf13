// Fused FFN input: RMSNorm (prologue) -> gate and up rows (one matrix: gate rows, then up
// rows) -> SwiGLU: out[t][i] = silu(gate_i) * up_i, or with GELU GeGLU (gemma3):
// gelu_tanh(gate_i) * up_i. Each lane computes both rows of i.
// A row chunk holds gate and up rows of outputs [p.firstRow, p.firstRow + p.rows / 2).
layout(constant_id = 6) const bool GELU = false;
layout(std430, binding = 2) writeonly buffer Activations { float activations[]; };

// 0.5 x (1 + tanh(u)), u = sqrt(2 / pi) (x + 0.044715 x^3), written as x sigmoid(2u): one
// exp, no cancellation, and large |x| saturates instead of overflowing.
float geluTanh(float x) {
    const float u = 0.7978845608028654 * (x + 0.044715 * x * x * x);
    return x / (1.0 + exp(-2.0 * u));
}

uint ffnSize() { return p.rows / 2; }
uint weightRow(uint slot) {
    const uint i = min(slot / 2, ffnSize() - 1);
    return (slot & 1) == 0 ? i : i + ffnSize();
}
uint rowGroup() { return gl_WorkGroupID.x; }
uint inputRow(uint token) { return token; }

void main() {
    matvecCore();
    if (!laneWrites()) return;
    [[unroll]] for (uint s = 0; s < SLOTS; s += 2) {
        const uint i = slotOf(s) / 2;
        if (i >= ffnSize()) continue;
        [[unroll]] for (uint c = 0; c < TOKENS; ++c) {
            const uint token = gl_WorkGroupID.y * TOKENS + c;
            if (token >= p.tokens) continue;
            const float gate = dots[s][c] * normScale[c];
            const float up = dots[s + 1][c] * normScale[c];
            const float activated = GELU ? geluTanh(gate) : gate / (1.0 + exp(-gate));
            activations[token * p.outStride + p.firstRow + i] = activated * up;
        }
    }
}
