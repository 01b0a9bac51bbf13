// What Q4_K and Q5_K share: d, dmin and the 6-bit scales and mins of their 8 sub-blocks of 32
// in the record's first 16 bytes. Included after planes.glsl.
// Scale and min j (0..7) of the 12 packed bytes after d and dmin (as ggml packs them: bytes
// 0-3 / 4-7 the low six bits of scales / mins 0-3 and the top two bits of 4-7, bytes 8-11
// the low four bits of scale and min 4-7).
uvec2 kQuantScaleMin(uint e, uint j) {
    if (j < 4)
        return uvec2(recordByte(e, 4u + j) & 63u, recordByte(e, 8u + j) & 63u);
    const uint packed = recordByte(e, 8u + j);
    return uvec2((packed & 15u) | ((recordByte(e, j) >> 6) << 4),
                 (packed >> 4) | ((recordByte(e, 4u + j) >> 6) << 4));
}
uvec4 planeCanonicalExtras(uint e) {
    uvec4 extras = planeCanonicalHigh(e);
    extras.z = planeRecordWord(e, 0u);
    const uvec2 scaleMin = kQuantScaleMin(e, planeChunkInGroup(e));
    extras.w = (scaleMin.x | (scaleMin.y << 8)) << 16;
    return extras;
}
// w = d sc q - dmin m, sc and m the sub-block's 6-bit scale and min.
vec4 planeScaleMins(uvec4 extras) {
    const vec2 dm = unpackHalf2x16(extras.z);
    const float scale = dm.x * float((extras.w >> 16) & 0xffu);
    const float offset = -(dm.y * float(extras.w >> 24));
    return vec4(scale, offset, scale, offset);
}
