// Shared by every kernel: extensions, the workgroup width (specialization constant 0) and
// a workgroup sum that uses subgroup operations when the device has them
// (specialization constant 1), else a shared-memory tree.
#extension GL_EXT_shader_16bit_storage : require
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_arithmetic : enable
#extension GL_KHR_shader_subgroup_shuffle : enable
// [[unroll]] marks the kernels' loops over slots, tokens, lanes and head dimensions, whose
// counts the specialization constants fix: lavapipe otherwise keeps the arrays those loops
// index, the per-slot sums above all, in stack memory, with a masked blend per update;
// unrolled, they live in registers (a 64-token prompt 1.34-1.6x faster on one core).
#extension GL_EXT_control_flow_attributes : enable

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const bool SUBGROUP_REDUCE = true;

const uint WG = gl_WorkGroupSize.x;
shared float reduceScratch[gl_WorkGroupSize.x];

// Sum of v over the workgroup, returned to every lane. Call from uniform control flow.
float workgroupSum(float v) {
    if (SUBGROUP_REDUCE) {
        float s = subgroupAdd(v);
        if (gl_NumSubgroups == 1) return s;
        barrier();
        if (subgroupElect()) reduceScratch[gl_SubgroupID] = s;
        barrier();
        float total = 0.0;
        for (uint i = 0; i < gl_NumSubgroups; ++i) total += reduceScratch[i];
        return total;
    }
    barrier();
    reduceScratch[gl_LocalInvocationID.x] = v;
    barrier();
    for (uint width = WG / 2; width > 0; width /= 2) {
        if (gl_LocalInvocationID.x < width) {
            reduceScratch[gl_LocalInvocationID.x] += reduceScratch[gl_LocalInvocationID.x + width];
        }
        barrier();
    }
    return reduceScratch[0];
}

float workgroupMax(float v) {
    if (SUBGROUP_REDUCE) {
        float s = subgroupMax(v);
        if (gl_NumSubgroups == 1) return s;
        barrier();
        if (subgroupElect()) reduceScratch[gl_SubgroupID] = s;
        barrier();
        float best = reduceScratch[0];
        for (uint i = 1; i < gl_NumSubgroups; ++i) best = max(best, reduceScratch[i]);
        return best;
    }
    barrier();
    reduceScratch[gl_LocalInvocationID.x] = v;
    barrier();
    for (uint width = WG / 2; width > 0; width /= 2) {
        if (gl_LocalInvocationID.x < width) {
            reduceScratch[gl_LocalInvocationID.x] =
                max(reduceScratch[gl_LocalInvocationID.x],
                    reduceScratch[gl_LocalInvocationID.x + width]);
        }
        barrier();
    }
    return reduceScratch[0];
}
