// out[t][row] (=|+=) normScale[t] * dot(W[row], norm(x[t])) + bias[row]
// Variants: RESIDUAL adds into out (the residual stream) and then may record the
// per-dimension max |h| (PROBE, atomically, as float bits: |h| >= 0 orders like uint);
// GATHER reads input row gather[t] (the output head computes only the rows it needs).
layout(constant_id = 6) const bool BIAS = false;
layout(constant_id = 7) const bool RESIDUAL = false;
layout(constant_id = 8) const bool GATHER = false;
layout(constant_id = 9) const bool PROBE = false;

layout(std430, binding = 2) buffer Output { float outValues[]; };
layout(std430, binding = 4) readonly buffer Bias { float bias[]; };
layout(std430, binding = 5) readonly buffer Gather { uint gatherRows[]; };
layout(std430, binding = 6) buffer Probe { uint probeMaxBits[]; };

uint weightRow(uint slot) { return min(slot, p.rows - 1); }
uint rowGroup() { return gl_WorkGroupID.x; }
uint inputRow(uint token) { return GATHER ? gatherRows[token] : token; }

void main() {
    matvecCore();
    if (!laneWrites()) return;
    [[unroll]] for (uint s = 0; s < SLOTS; ++s) {
        const uint row = slotOf(s);
        if (row >= p.rows) continue;
        [[unroll]] for (uint c = 0; c < TOKENS; ++c) {
            const uint token = gl_WorkGroupID.y * TOKENS + c;
            if (token >= p.tokens) continue;
            float value = dots[s][c] * normScale[c];
            const uint column = p.firstRow + row;
            if (BIAS) value += bias[column];
            const uint index = token * p.outStride + column;
            if (RESIDUAL) {
                value += outValues[index];
                if (PROBE)
                    atomicMax(probeMaxBits[p.probeBase + column], floatBitsToUint(abs(value)));
            }
            outValues[index] = value;
        }
    }
}
