#pragma once
// The OpenAI-compatible HTTP face of the serving loop (cpp-httplib): POST /v1/completions
// and /v1/chat/completions (whole answers, or server-sent events streamed as the loop makes
// tokens), GET /v1/models, /health and /metrics (Prometheus text). Safe on a classroom
// network: loopback unless a host is given, and then only with an API key; bodies over a
// limit, malformed JSON, wrong field types, prompts over the context and a full queue get
// OpenAI-style errors. A client that goes away mid-stream has its request cancelled.
#include "compute/experiments/serve/ServingLoop.hpp"
#include "models/tokenizer/ChatTemplate.hpp"
#include "models/tokenizer/Tokenizer.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>

namespace httplib {
class Server;
}

namespace inferscope::compute::experiments {

struct OpenAiServerOptions {
    std::string host = "127.0.0.1";
    int port = 8080;    // 0: any free port (port() says which)
    std::string apiKey; // required (Authorization: Bearer KEY) when not empty
    std::string modelName = "inferscope";
    std::size_t maxBodyBytes = 1u << 20;
    // Connections answered at once (each stream holds one): 0 picks slots + waiting + 8.
    std::uint32_t connectionThreads = 0;
};

// Whether `host` names this machine only (127.0.0.0/8, ::1, localhost).
bool isLoopbackHost(const std::string& host);
// Throws std::invalid_argument for a host other than loopback without an API key, or a port
// outside 0..65535: what the server refuses, for callers that refuse before any work.
void checkServerOptions(const OpenAiServerOptions& options);

class OpenAiServer {
public:
    // Throws std::invalid_argument as checkServerOptions.
    OpenAiServer(ServingLoop& loop, const models::Tokenizer& tokenizer,
                 std::optional<models::ChatFormat> chatFormat, OpenAiServerOptions options);
    ~OpenAiServer(); // stop()
    OpenAiServer(const OpenAiServer&) = delete;
    OpenAiServer& operator=(const OpenAiServer&) = delete;

    // Binds the address and serves on a thread of its own; returns the port. Throws
    // std::runtime_error when the address cannot be bound.
    int start();
    // Stops accepting, ends open streams and joins the threads. Idempotent.
    void stop();
    int port() const { return port_; }
    // "http://host:port" once started (an IPv6 host in brackets).
    std::string baseUrl() const;
    const OpenAiServerOptions& options() const { return options_; }

private:
    void route();
    ServingLoop& loop_;
    const models::Tokenizer& tokenizer_;
    std::optional<models::ChatFormat> chatFormat_;
    OpenAiServerOptions options_;
    std::unique_ptr<httplib::Server> server_;
    std::shared_ptr<std::atomic<bool>> stopping_;
    std::thread listener_;
    int port_ = 0;
    std::int64_t created_ = 0; // seconds since the epoch, for the "created" fields
};

} // namespace inferscope::compute::experiments
