#pragma once
// A compute pipeline built from an embedded SPIR-V shader (shaders/*.comp) by name.
// One descriptor-set layout style for every kernel: bindings 0..n-1 are storage buffers,
// except those given a texel format, which are uniform texel buffers (views of the bound
// range; lavapipe gathers texels with vector loads but reads storage buffers lane by lane);
// sizes travel as push constants; workgroup shapes and variants as specialization
// constants (constant_id i = specialization[i]; id 0 is the workgroup width by convention).
// Descriptor sets are cached per distinct set of bound buffers: after the first step of a
// run nothing is allocated per token.
#include "compute/vulkan/Buffer.hpp"

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace inferscope::compute {

struct BufferBinding {
    const Buffer* buffer = nullptr;
    std::uint64_t offset = 0;
    std::uint64_t range = VK_WHOLE_SIZE;
};

class Pipeline {
public:
    Pipeline(const VulkanContext& context, const std::string& shaderName,
             std::uint32_t bindingCount, std::uint32_t pushConstantBytes,
             std::vector<std::uint32_t> specialization = {},
             std::vector<vk::Format> texelFormats = {});
    Pipeline(const Pipeline&) = delete;
    Pipeline& operator=(const Pipeline&) = delete;

    const std::string& name() const { return name_; }
    std::uint32_t bindingCount() const { return bindingCount_; }
    std::uint32_t pushConstantBytes() const { return pushConstantBytes_; }
    bool isTexelBinding(std::uint32_t binding) const {
        return binding < texelFormats_.size() && texelFormats_[binding] != vk::Format::eUndefined;
    }
    vk::Pipeline handle() const { return *pipeline_; }
    vk::PipelineLayout layout() const { return *layout_; }
    // The cached descriptor set for these buffers (allocated and written on first use).
    vk::DescriptorSet descriptorSet(std::span<const BufferBinding> bindings);
    std::size_t cachedSets() const { return sets_.size(); }

private:
    vk::DescriptorType descriptorType(std::uint32_t binding) const;
    // The bound range as whole texels, at most the device's texel-buffer limit.
    std::uint64_t texelRange(std::uint32_t binding, const BufferBinding& b) const;
    using Key = std::vector<std::uint64_t>;
    const VulkanContext& context_;
    std::string name_;
    std::uint32_t bindingCount_;
    std::uint32_t pushConstantBytes_;
    std::vector<vk::Format> texelFormats_; // per binding; eUndefined: a storage buffer
    vk::raii::DescriptorSetLayout setLayout_{nullptr};
    vk::raii::PipelineLayout layout_{nullptr};
    vk::raii::Pipeline pipeline_{nullptr};
    std::vector<vk::raii::DescriptorPool> pools_;
    std::uint32_t setsInLastPool_ = 0;
    std::vector<vk::raii::DescriptorSet> ownedSets_;
    std::map<Key, vk::DescriptorSet> sets_;
};

// SPIR-V of an embedded shader, or a ComputeError naming the missing shader.
std::span<const std::uint32_t> embeddedShader(const std::string& name);

} // namespace inferscope::compute
