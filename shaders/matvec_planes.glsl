// The broadcast path of matvec_core.glsl for the planes types (planes.glsl), 8 lanes: one
// chunk of 32 columns per call, lane group L of the chunk being the 4 columns of lane L.
// Included by matvec_core.glsl after its declarations (dots, slotOf, rowGroup, LANE_SCALES).
//
// Per slot: one texel of codes (4-bit: the chunk; 2-bit: two chunks, half of it used) and the
// chunk's extras (high bits, scales), from the lane-scale copy (one to six texels per lane
// for all 8 slots) or, without it, from the packed layout slot by slot. Each lane group's
// codes become four floats with a mask and a conversion per code (planeLaneCodes; high bits
// merged into the bytes first), and the sub-block scales apply once per chunk and row:
// sum_k (s (q_k + o) + m) x_k = s (sum_k q_k x_k + o sum_k x_k) + m sum_k x_k (o the type's
// code offset), per half of 16 columns where the
// type's sub-blocks are 16 (Q2_K, Q3_K, Q6_K). From PRESCALE_TOKENS tokens on, each code is
// scaled instead (w = s q + m, one fma), as on the nibble path.
uvec4 planeExtras[SLOTS];

void loadPlaneExtras(uint i0, uint wBase[SLOTS]) {
    if (LANE_SCALES && WG == 8 && SLOTS == 8) {
        // The copy: per row group, chunk and lane, fields of 8 words (a word per slot) or of
        // 4 (a half per slot), in the order compute/formats/GgmlPlanes.cpp writes them.
        const uint chunk = rowGroup() * (p.wStride >> 5) + (i0 >> 3); // i0: in columns / 4
        uint at = p.laneScaleWords + (chunk * WG + gl_LocalInvocationID.x) * PLANE_LANE_WORDS;
        [[unroll]] for (uint s = 0; s < SLOTS; ++s) planeExtras[s] = uvec4(0u);
        [[unroll]] for (uint h = 0; h < PLANE_HIGH_BITS; ++h) {
            const uvec4 low = weightWords4(at), high = weightWords4(at + 4);
            [[unroll]] for (uint s = 0; s < 4; ++s) {
                planeExtras[s][h] = low[s];
                planeExtras[s + 4][h] = high[s];
            }
            at += 8;
        }
        if (PLANE_SCALE_WORD) {
            const uvec4 low = weightWords4(at), high = weightWords4(at + 4);
            [[unroll]] for (uint s = 0; s < 4; ++s) {
                planeExtras[s].z = low[s];
                planeExtras[s + 4].z = high[s];
            }
            at += 8;
        }
        if (PLANE_LANE_HALVES) {
            const uvec4 halves = weightWords4(at);
            [[unroll]] for (uint s = 0; s < SLOTS; ++s)
                planeExtras[s].w = (halves[s >> 1] >> ((s & 1u) << 4)) & 0xffffu;
            at += 4;
        }
        if (PLANE_BYTE_PAIRS) {
            const uvec4 pairs = weightWords4(at);
            [[unroll]] for (uint s = 0; s < SLOTS; ++s)
                planeExtras[s].w |= ((pairs[s >> 1] >> ((s & 1u) << 4)) & 0xffffu) << 16;
        }
        return;
    }
    [[unroll]] for (uint s = 0; s < SLOTS; ++s)
        planeExtras[s] = planeCanonicalExtras(wBase[s] + i0 * 4);
}

void planesChunk(uint i0, vec4 xs[TOKENS], uint wBase[SLOTS], uint cBase[SLOTS]) {
    loadPlaneExtras(i0, wBase);
    uvec4 words[SLOTS];
    vec4 scaleMins[SLOTS];
    [[unroll]] for (uint s = 0; s < SLOTS; ++s) {
        words[s] = weightWords4(planeCodeTexelWord(codeElement(cBase[s], i0 * 4)));
        scaleMins[s] = planeScaleMins(planeExtras[s]);
    }
    // 2-bit codes: a texel holds two chunks (i0 counts columns / 4: the chunk is i0 / 8).
    const uint codeHalf = CODE_BITS == 2 ? (i0 >> 3) & 1u : 0u;
    if (TOKENS >= PRESCALE_TOKENS) {
        [[unroll]] for (uint lane = 0; lane < 8; ++lane) {
            vec4 w[SLOTS];
            [[unroll]] for (uint s = 0; s < SLOTS; ++s) {
                const vec2 scaleMin = lane < 4 ? scaleMins[s].xy : scaleMins[s].zw;
                w[s] = (planeLaneCodes(words[s], planeExtras[s], codeHalf, lane) +
                        planeOffsetPlaced(lane)) *
                           (scaleMin.x * planePlaces(lane)) +
                       scaleMin.y;
            }
            [[unroll]] for (uint c = 0; c < TOKENS; ++c) {
                const vec4 x = subgroupShuffle(xs[c], lane);
                [[unroll]] for (uint s = 0; s < SLOTS; ++s) dots[s][c] += dot(w[s], x);
            }
        }
        return;
    }
    // Sums of code x activation per half (one for the types of 32-column sub-blocks), and
    // of the activations, for the offsets.
    float codeDots[SLOTS][TOKENS], codeDotsHigh[SLOTS][TOKENS];
    float xSum[TOKENS], xSumHigh[TOKENS];
    [[unroll]] for (uint c = 0; c < TOKENS; ++c) {
        xSum[c] = 0.0;
        xSumHigh[c] = 0.0;
        [[unroll]] for (uint s = 0; s < SLOTS; ++s) {
            codeDots[s][c] = 0.0;
            codeDotsHigh[s][c] = 0.0;
        }
    }
    [[unroll]] for (uint lane = 0; lane < 8; ++lane) {
        const bool second = PLANE_SUB_BLOCK == 16 && lane >= 4;
        vec4 codes[SLOTS];
        [[unroll]] for (uint s = 0; s < SLOTS; ++s)
            codes[s] = planeLaneCodes(words[s], planeExtras[s], codeHalf, lane);
        [[unroll]] for (uint c = 0; c < TOKENS; ++c) {
            const vec4 x = subgroupShuffle(xs[c], lane);
            const vec4 xPlaced = x * planePlaces(lane);
            if (second)
                xSumHigh[c] += dot(x, vec4(1.0));
            else
                xSum[c] += dot(x, vec4(1.0));
            [[unroll]] for (uint s = 0; s < SLOTS; ++s) {
                if (second)
                    codeDotsHigh[s][c] += dot(codes[s], xPlaced);
                else
                    codeDots[s][c] += dot(codes[s], xPlaced);
            }
        }
    }
    [[unroll]] for (uint s = 0; s < SLOTS; ++s)
        [[unroll]] for (uint c = 0; c < TOKENS; ++c) {
            // The code offset joins the code sums: for one input column (x a unit vector)
            // the product is the host's weight bit for bit.
            const float offset = float(PLANE_CODE_OFFSET);
            dots[s][c] += scaleMins[s].x * (codeDots[s][c] + offset * xSum[c]) +
                          scaleMins[s].y * xSum[c];
            if (PLANE_SUB_BLOCK == 16)
                dots[s][c] += scaleMins[s].z * (codeDotsHigh[s][c] + offset * xSumHigh[c]) +
                              scaleMins[s].w * xSumHigh[c];
        }
}
