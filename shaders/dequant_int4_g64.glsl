// Weight format int4-g64: one fp16 scale per 64 consecutive weights.
#define INT4_GROUP_SHIFT 6
#include "int4_group.glsl"
