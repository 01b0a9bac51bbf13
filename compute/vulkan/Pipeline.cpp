#include "compute/vulkan/Pipeline.hpp"

#include "shaders/EmbeddedShaders.hpp"

namespace inferscope::compute {

namespace {
constexpr std::uint32_t kSetsPerPool = 64;
}

std::span<const std::uint32_t> embeddedShader(const std::string& name) {
    for (const auto& shader : shaders::allShaders()) {
        if (shader.name == name) return shader.spirv;
    }
    throw ComputeError("no embedded shader named '" + name + "' (shaders/" + name +
                       ".comp missing from the build)");
}

Pipeline::Pipeline(const VulkanContext& context, const std::string& shaderName,
                   std::uint32_t bindingCount, std::uint32_t pushConstantBytes,
                   std::vector<std::uint32_t> specialization)
    : context_(context), name_(shaderName), bindingCount_(bindingCount),
      pushConstantBytes_(pushConstantBytes) {
    const auto spirv = embeddedShader(shaderName);
    try {
        std::vector<vk::DescriptorSetLayoutBinding> bindings;
        for (std::uint32_t i = 0; i < bindingCount; ++i) {
            bindings.push_back({.binding = i,
                                .descriptorType = vk::DescriptorType::eStorageBuffer,
                                .descriptorCount = 1,
                                .stageFlags = vk::ShaderStageFlagBits::eCompute});
        }
        setLayout_ = context.device().createDescriptorSetLayout(
            {.bindingCount = bindingCount, .pBindings = bindings.data()});
        const vk::PushConstantRange range{.stageFlags = vk::ShaderStageFlagBits::eCompute,
                                          .offset = 0,
                                          .size = pushConstantBytes};
        const vk::DescriptorSetLayout setLayout = *setLayout_;
        layout_ = context.device().createPipelineLayout(
            {.setLayoutCount = 1,
             .pSetLayouts = &setLayout,
             .pushConstantRangeCount = pushConstantBytes ? 1u : 0u,
             .pPushConstantRanges = pushConstantBytes ? &range : nullptr});

        auto module = context.device().createShaderModule(
            {.codeSize = spirv.size_bytes(), .pCode = spirv.data()});
        std::vector<vk::SpecializationMapEntry> entries;
        for (std::uint32_t i = 0; i < specialization.size(); ++i) {
            entries.push_back({.constantID = i,
                               .offset = static_cast<std::uint32_t>(i * sizeof(std::uint32_t)),
                               .size = sizeof(std::uint32_t)});
        }
        const vk::SpecializationInfo specInfo{
            .mapEntryCount = static_cast<std::uint32_t>(entries.size()),
            .pMapEntries = entries.data(),
            .dataSize = specialization.size() * sizeof(std::uint32_t),
            .pData = specialization.data()};
        const vk::ComputePipelineCreateInfo createInfo{
            .stage = {.stage = vk::ShaderStageFlagBits::eCompute,
                      .module = *module,
                      .pName = "main",
                      .pSpecializationInfo = entries.empty() ? nullptr : &specInfo},
            .layout = *layout_};
        pipeline_ = context.device().createComputePipeline(nullptr, createInfo);
    } catch (...) {
        rethrowVulkanError("building pipeline '" + shaderName + "'");
    }
}

vk::DescriptorSet Pipeline::descriptorSet(std::span<const BufferBinding> bindings) {
    if (bindings.size() != bindingCount_) {
        throw ComputeError("pipeline '" + name_ + "' takes " + std::to_string(bindingCount_) +
                           " buffers, got " + std::to_string(bindings.size()));
    }
    Key key;
    key.reserve(bindings.size() * 3);
    for (const auto& b : bindings) {
        if (!b.buffer || !*b.buffer) {
            throw ComputeError("pipeline '" + name_ + "': an empty buffer was bound");
        }
        key.push_back(reinterpret_cast<std::uint64_t>(static_cast<VkBuffer>(b.buffer->handle())));
        key.push_back(b.offset);
        key.push_back(b.range);
    }
    if (auto found = sets_.find(key); found != sets_.end()) return found->second;

    try {
        if (pools_.empty() || setsInLastPool_ == kSetsPerPool) {
            const vk::DescriptorPoolSize size{.type = vk::DescriptorType::eStorageBuffer,
                                              .descriptorCount = kSetsPerPool * bindingCount_};
            pools_.push_back(context_.device().createDescriptorPool(
                {.flags = vk::DescriptorPoolCreateFlagBits::eFreeDescriptorSet,
                 .maxSets = kSetsPerPool,
                 .poolSizeCount = 1,
                 .pPoolSizes = &size}));
            setsInLastPool_ = 0;
        }
        const vk::DescriptorSetLayout setLayout = *setLayout_;
        auto allocated = context_.device().allocateDescriptorSets(
            {.descriptorPool = *pools_.back(), .descriptorSetCount = 1, .pSetLayouts = &setLayout});
        ++setsInLastPool_;
        const vk::DescriptorSet set = *allocated.front();
        ownedSets_.push_back(std::move(allocated.front()));

        std::vector<vk::DescriptorBufferInfo> infos;
        for (const auto& b : bindings) {
            infos.push_back({.buffer = b.buffer->handle(), .offset = b.offset, .range = b.range});
        }
        std::vector<vk::WriteDescriptorSet> writes;
        for (std::uint32_t i = 0; i < bindingCount_; ++i) {
            writes.push_back({.dstSet = set,
                              .dstBinding = i,
                              .descriptorCount = 1,
                              .descriptorType = vk::DescriptorType::eStorageBuffer,
                              .pBufferInfo = &infos[i]});
        }
        context_.device().updateDescriptorSets(writes, {});
        sets_.emplace(std::move(key), set);
        return set;
    } catch (...) {
        rethrowVulkanError("allocating a descriptor set for '" + name_ + "'");
    }
}

} // namespace inferscope::compute
