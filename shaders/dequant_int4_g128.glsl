// Weight format int4-g128: one fp16 scale per 128 consecutive weights.
#define INT4_GROUP_SHIFT 7
#include "int4_group.glsl"
