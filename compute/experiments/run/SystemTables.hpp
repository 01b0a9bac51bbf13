#pragma once
// What the lab runs on and what it reads, as tables: the Vulkan devices (`inferscope-cli
// devices`) and a text's tokens (`inferscope-cli tokenize`).
#include "compute/Table.hpp"
#include "compute/vulkan/VulkanContext.hpp"
#include "models/tokenizer/Tokenizer.hpp"

#include <cstdint>
#include <vector>

namespace inferscope::compute::experiments {

// "devices": index, name, type, API version, largest heap, subgroup size, shared memory.
Table devicesTable(const std::vector<DeviceInfo>& devices);
// "tokens": position, id, the token as stored and its bytes, both escaped where they are not
// printable (a token may hold part of a multi-byte character).
Table tokensTable(const models::Tokenizer& tokenizer, const std::vector<std::int32_t>& ids);

} // namespace inferscope::compute::experiments
