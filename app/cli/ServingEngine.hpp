#pragma once
// What `batch` and `schedule` share: a lab session whose Vulkan engine holds enough KV cache
// for the many sequences they run (up to a quarter of the device's largest memory heap).
#include "app/cli/Backends.hpp"
#include "compute/session/LabSession.hpp"

#include <cstdint>
#include <memory>
#include <string>

namespace inferscope::cli {

struct ServingSession {
    std::unique_ptr<compute::LabSession> session;
    std::uint32_t kvCapacityTokens = 0;
    std::string capNote; // non-empty when the device memory cut the wanted capacity
};

// Loads MODEL into a session whose engine has room for `sequences` sequences of `positions`
// positions each (capped by device memory, said in capNote).
ServingSession openServingSession(const std::string& model, const BackendArguments& backend,
                                  std::uint32_t sequences, std::uint32_t positions);

} // namespace inferscope::cli
