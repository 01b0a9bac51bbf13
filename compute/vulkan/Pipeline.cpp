#include "compute/vulkan/Pipeline.hpp"

#include "shaders/EmbeddedShaders.hpp"

#include <vulkan/vulkan_format_traits.hpp>

#include <array>

namespace inferscope::compute {

namespace {
constexpr std::uint32_t kSetsPerPool = 64;
}

vk::DescriptorType Pipeline::descriptorType(std::uint32_t binding) const {
    return isTexelBinding(binding) ? vk::DescriptorType::eUniformTexelBuffer
                                   : vk::DescriptorType::eStorageBuffer;
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
                   std::vector<std::uint32_t> specialization, std::vector<vk::Format> texelFormats)
    : context_(context), name_(shaderName), bindingCount_(bindingCount),
      pushConstantBytes_(pushConstantBytes), texelFormats_(std::move(texelFormats)) {
    const auto spirv = embeddedShader(shaderName);
    try {
        std::vector<vk::DescriptorSetLayoutBinding> bindings;
        for (std::uint32_t i = 0; i < bindingCount; ++i) {
            bindings.push_back({.binding = i,
                                .descriptorType = descriptorType(i),
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

std::uint64_t Pipeline::texelRange(std::uint32_t binding, const BufferBinding& b) const {
    const std::uint64_t texelBytes = vk::blockSize(texelFormats_[binding]);
    const std::uint64_t range = b.range == VK_WHOLE_SIZE ? b.buffer->size() - b.offset : b.range;
    const std::uint64_t texels = range / texelBytes;
    if (texels > context_.info().maxTexelBufferElements) {
        throw ComputeError("pipeline '" + name_ + "': buffer '" + b.buffer->label() + "' holds " +
                           std::to_string(texels) + " texels, more than this device's limit of " +
                           std::to_string(context_.info().maxTexelBufferElements));
    }
    return texels * texelBytes;
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
        key.push_back(b.buffer->serial()); // not the handle: see Buffer::serial
        key.push_back(b.offset);
        key.push_back(b.range);
    }
    // A binding's texel format is fixed, so the buffers alone name the set (and its views).
    if (auto found = sets_.find(key); found != sets_.end()) return found->second;

    // Views first: a range over the device's texel limit is refused before a set is taken.
    std::vector<vk::BufferView> views(bindingCount_);
    for (std::uint32_t i = 0; i < bindingCount_; ++i) {
        if (!isTexelBinding(i)) continue;
        views[i] = bindings[i].buffer->texelView(texelFormats_[i], bindings[i].offset,
                                                 texelRange(i, bindings[i]));
    }
    try {
        if (pools_.empty() || setsInLastPool_ == kSetsPerPool) {
            const std::array<vk::DescriptorPoolSize, 2> sizes{
                vk::DescriptorPoolSize{.type = vk::DescriptorType::eStorageBuffer,
                                       .descriptorCount = kSetsPerPool * bindingCount_},
                vk::DescriptorPoolSize{.type = vk::DescriptorType::eUniformTexelBuffer,
                                       .descriptorCount = kSetsPerPool * bindingCount_}};
            pools_.push_back(context_.device().createDescriptorPool(
                {.flags = vk::DescriptorPoolCreateFlagBits::eFreeDescriptorSet,
                 .maxSets = kSetsPerPool,
                 .poolSizeCount = static_cast<std::uint32_t>(sizes.size()),
                 .pPoolSizes = sizes.data()}));
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
            const bool texel = isTexelBinding(i);
            writes.push_back({.dstSet = set,
                              .dstBinding = i,
                              .descriptorCount = 1,
                              .descriptorType = descriptorType(i),
                              .pBufferInfo = texel ? nullptr : &infos[i],
                              .pTexelBufferView = texel ? &views[i] : nullptr});
        }
        context_.device().updateDescriptorSets(writes, {});
        sets_.emplace(std::move(key), set);
        return set;
    } catch (...) {
        rethrowVulkanError("allocating a descriptor set for '" + name_ + "'");
    }
}

} // namespace inferscope::compute
