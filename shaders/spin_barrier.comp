#version 450
// The cost of a wait between phases inside one dispatch: the workgroups of one dispatch
// each arrive on a counter once per phase and spin until every workgroup has arrived, what a
// persistent kernel would do where the engine now ends a dispatch and starts the next
// (compute/vulkan/SpinBarrierProbe.hpp). Only meaningful when the workgroups run at the same
// time; when they do not (lavapipe with its thread pool off runs them one after the other),
// the spin runs out of its budget and says so in `gaveUp`, so the host never reports it.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) coherent buffer Arrivals {
    uint arrived;
    uint gaveUp;
};
layout(push_constant) uniform Push {
    uint phases;
    uint workgroups;
    uint spinBudget; // outer spin turns over the whole run, 16 counter reads each
} p;

void main() {
    // llvmpipe ends every loop once an invocation has taken 65535 loop turns in all (its loop
    // limiter), so the phases and the spin turns share that budget: the host keeps
    // phases + spinBudget below it, and the reads inside one turn are unrolled.
    uint budget = p.spinBudget;
    for (uint phase = 1u; phase <= p.phases; ++phase) {
        if (gl_LocalInvocationIndex == 0u) {
            atomicAdd(arrived, 1u);
            const uint target = phase * p.workgroups;
            uint seen = 0u;
            while (budget > 0u) {
                [[unroll]] for (uint i = 0u; i < 16u; ++i) seen = max(seen, atomicOr(arrived, 0u));
                if (seen >= target) break;
                --budget;
            }
            if (seen < target) atomicAdd(gaveUp, 1u);
        }
        subgroupBarrier();
    }
}
