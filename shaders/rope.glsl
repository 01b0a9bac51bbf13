// RoPE: rotates the pair (x0, x1) by position * invFrequency[j]. The table already holds
// any scaling (linear, llama3), so scaled and unscaled models are the same code.
vec2 rotatePair(float x0, float x1, float angle) {
    const float c = cos(angle);
    const float s = sin(angle);
    return vec2(x0 * c - x1 * s, x0 * s + x1 * c);
}

// The two rows of head `head`'s pair j: adjacent (2j, 2j+1) or split-half (j, j + d/2).
uvec2 ropePairRows(uint head, uint j, uint headDim, bool splitHalf) {
    const uint base = head * headDim;
    return splitHalf ? uvec2(base + j, base + j + headDim / 2) : uvec2(base + 2 * j, base + 2 * j + 1);
}
