#include "compute/experiments/serve/OpenAiServer.hpp"

#include "compute/experiments/serve/CompletionChannel.hpp"
#include "compute/experiments/serve/OpenAiRequest.hpp"

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <arpa/inet.h>
#include <chrono>
#include <sys/socket.h>

namespace inferscope::compute::experiments {

namespace {
using Json = nlohmann::json;
using namespace std::chrono_literals;

// httplib's server listens with a backlog of 5 connections (fixed in the shared library):
// 64 clients connecting at once overflow it and some fail to read an answer. Listening
// again on the bound socket widens the queue (Linux allows it), through the one member
// httplib keeps for subclasses.
class WideBacklogServer : public httplib::Server {
public:
    void widenBacklog() { ::listen(svr_sock_, SOMAXCONN); }
};

void sendError(httplib::Response& res, const ApiError& error) {
    res.status = error.status();
    res.set_content(error.json(), "application/json");
}

// Compares without stopping at the first difference, so timing tells nothing about the key.
bool sameSecret(const std::string& given, const std::string& expected) {
    unsigned char differ = given.size() == expected.size() ? 0 : 1;
    const std::size_t n = std::min(given.size(), expected.size());
    for (std::size_t i = 0; i < n; ++i) differ |= (unsigned char)(given[i] ^ expected[i]);
    return differ == 0;
}

struct ResponseShape {
    bool chat = false;
    std::string id, model;
    std::int64_t created = 0;

    Json usage(const CompletionUsage& u) const {
        return {{"prompt_tokens", u.promptTokens},
                {"completion_tokens", u.completionTokens},
                {"total_tokens", u.promptTokens + u.completionTokens},
                {"prompt_tokens_details", {{"cached_tokens", u.sharedPromptTokens}}}};
    }
    Json base() const {
        return {{"id", id},
                {"object", chat ? "chat.completion.chunk" : "text_completion"},
                {"created", created},
                {"model", model}};
    }
    // One streamed chunk: text and/or the finish reason.
    Json chunk(const std::string& text, const std::string& finish, bool firstChat) const {
        Json choice = {{"index", 0},
                       {"logprobs", nullptr},
                       {"finish_reason", finish.empty() ? Json(nullptr) : Json(finish)}};
        if (chat) {
            Json delta = Json::object();
            if (firstChat) delta["role"] = "assistant";
            if (!text.empty() || firstChat) delta["content"] = text;
            choice["delta"] = delta;
        } else {
            choice["text"] = text;
        }
        Json out = base();
        out["choices"] = Json::array({choice});
        return out;
    }
    Json whole(const std::string& text, const std::string& finish, const CompletionUsage& u) const {
        Json choice = {{"index", 0}, {"logprobs", nullptr}, {"finish_reason", finish}};
        if (chat)
            choice["message"] = {{"role", "assistant"}, {"content", text}};
        else
            choice["text"] = text;
        Json out = base();
        out["object"] = chat ? "chat.completion" : "text_completion";
        out["choices"] = Json::array({choice});
        out["usage"] = usage(u);
        return out;
    }
};

std::string sse(const Json& data) {
    return "data: " + data.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n\n";
}

// OpenAI's finish reasons; a cancelled or failed request has none of its own.
std::string finishName(FinishReason reason) {
    return reason == FinishReason::Length ? "length" : "stop";
}
} // namespace

bool isLoopbackHost(const std::string& host) {
    if (host == "localhost" || host == "::1") return true;
    in_addr address{};
    if (inet_pton(AF_INET, host.c_str(), &address) == 1)
        return (ntohl(address.s_addr) >> 24) == 127;
    return false;
}

OpenAiServer::OpenAiServer(ServingLoop& loop, const models::Tokenizer& tokenizer,
                           std::optional<models::ChatFormat> chatFormat,
                           OpenAiServerOptions options)
    : loop_(loop), tokenizer_(tokenizer), chatFormat_(std::move(chatFormat)),
      options_(std::move(options)), server_(std::make_unique<WideBacklogServer>()),
      stopping_(std::make_shared<std::atomic<bool>>(false)),
      created_(std::chrono::duration_cast<std::chrono::seconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count()) {
    checkServerOptions(options_);
    const std::uint32_t threads = options_.connectionThreads
                                      ? options_.connectionThreads
                                      : loop_.options().slotCount + loop_.options().maxWaiting + 8;
    // httplib takes ownership of the queue it is handed (a raw pointer by its interface).
    server_->new_task_queue = [threads] {
        return std::make_unique<httplib::ThreadPool>(threads).release();
    };
    server_->set_payload_max_length(options_.maxBodyBytes);
    route();
}

OpenAiServer::~OpenAiServer() {
    stop();
}

void checkServerOptions(const OpenAiServerOptions& options) {
    if (!isLoopbackHost(options.host) && options.apiKey.empty())
        throw std::invalid_argument("--host " + options.host +
                                    " is reachable from other machines: give an API key "
                                    "(--api-key KEY) so only those who have it can send requests");
    if (options.port < 0 || options.port > 65535)
        throw std::invalid_argument("--port must be 0..65535");
}

std::string OpenAiServer::baseUrl() const {
    const bool ipv6 = options_.host.find(':') != std::string::npos;
    return "http://" + (ipv6 ? "[" + options_.host + "]" : options_.host) + ":" +
           std::to_string(port_);
}

int OpenAiServer::start() {
    if (options_.port == 0) {
        port_ = server_->bind_to_any_port(options_.host);
        if (port_ <= 0) throw std::runtime_error("cannot bind " + options_.host + " to any port");
    } else {
        if (!server_->bind_to_port(options_.host, options_.port))
            throw std::runtime_error("cannot bind " + options_.host + ":" +
                                     std::to_string(options_.port) +
                                     " (in use, or not an address of this machine)");
        port_ = options_.port;
    }
    static_cast<WideBacklogServer&>(*server_).widenBacklog();
    listener_ = std::thread([this] { server_->listen_after_bind(); });
    return port_;
}

void OpenAiServer::stop() {
    stopping_->store(true);
    if (server_) server_->stop();
    if (listener_.joinable()) listener_.join();
}

void OpenAiServer::route() {
    auto& server = *server_;
    server.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
        if (options_.apiKey.empty() || req.path == "/health")
            return httplib::Server::HandlerResponse::Unhandled;
        const auto header = req.get_header_value("Authorization");
        if (sameSecret(header, "Bearer " + options_.apiKey))
            return httplib::Server::HandlerResponse::Unhandled;
        sendError(res, ApiError(401, "authentication_error", "invalid_api_key",
                                header.empty() ? "this server needs an API key: send "
                                                 "'Authorization: Bearer KEY'"
                                               : "the API key is not this server's"));
        return httplib::Server::HandlerResponse::Handled;
    });
    // Errors httplib answers itself (413 over the body limit, 404 no route) in OpenAI's shape.
    server.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return;
        if (res.status == 413)
            sendError(res, ApiError(413, "invalid_request_error", "body_too_large",
                                    "the request body is over this server's limit of " +
                                        std::to_string(options_.maxBodyBytes) + " bytes"));
        else if (res.status == 404)
            sendError(res, ApiError(404, "invalid_request_error", "not_found",
                                    "no route " + req.method + " " + req.path));
        else
            sendError(res, ApiError(res.status, "invalid_request_error", {},
                                    "HTTP " + std::to_string(res.status)));
    });
    server.set_exception_handler(
        [](const httplib::Request&, httplib::Response& res, std::exception_ptr error) {
            std::string message = "internal error";
            try {
                std::rethrow_exception(error);
            } catch (const std::exception& e) {
                message = e.what();
            } catch (...) {
            }
            sendError(res, ApiError(500, "server_error", {}, message));
        });
    server.Get("/health", [](const httplib::Request&, httplib::Response& res) {
        res.set_content(R"({"status":"ok"})", "application/json");
    });
    server.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
        Json model = {{"id", options_.modelName},
                      {"object", "model"},
                      {"created", created_},
                      {"owned_by", "inferscope"},
                      {"max_model_len", loop_.contextTokens()}};
        res.set_content(Json{{"object", "list"}, {"data", Json::array({model})}}.dump(),
                        "application/json");
    });
    server.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
        res.set_content(prometheusText(loop_.snapshot()->metrics, options_.modelName),
                        "text/plain; version=0.0.4");
    });
    auto completion = [this](CompletionEndpoint endpoint) {
        return [this, endpoint](const httplib::Request& req, httplib::Response& res) {
            ParsedCompletion parsed;
            try {
                parsed = parseCompletionRequest(req.body, endpoint, tokenizer_, chatFormat_,
                                                loop_.contextTokens());
            } catch (const ApiError& error) {
                return sendError(res, error);
            }
            auto channel = std::make_shared<CompletionChannel>();
            parsed.request.onEvent = CompletionChannel::feed(channel);
            std::uint64_t id = 0;
            try {
                id = loop_.submit(std::move(parsed.request));
            } catch (const QueueFullError& error) {
                return sendError(res,
                                 ApiError(429, "rate_limit_exceeded", "queue_full", error.what()));
            } catch (const LoopStoppedError& error) {
                return sendError(res, ApiError(503, "server_error", "shutting_down", error.what()));
            } catch (const std::invalid_argument& error) {
                return sendError(res, invalidRequest(error.what()));
            }
            ResponseShape shape;
            shape.chat = parsed.chat;
            shape.id = (parsed.chat ? "chatcmpl-" : "cmpl-") + std::to_string(id);
            shape.model = options_.modelName;
            shape.created = created_;
            if (!parsed.stream) {
                std::string text;
                for (;;) {
                    for (const auto& event : channel->take(100ms)) {
                        text += event.text;
                        if (event.finish == FinishReason::None) continue;
                        if (event.finish == FinishReason::Cancelled ||
                            event.finish == FinishReason::Error)
                            return sendError(
                                res, ApiError(event.finish == FinishReason::Error ? 500 : 503,
                                              "server_error", {},
                                              event.error.empty() ? "the request was cancelled"
                                                                  : event.error));
                        res.set_content(
                            shape.whole(text, finishName(event.finish), event.usage).dump(),
                            "application/json");
                        return;
                    }
                    if (stopping_->load()) loop_.cancel(id);
                }
            }
            const bool includeUsage = parsed.includeUsage;
            auto first = std::make_shared<bool>(true);
            auto stopping = stopping_;
            res.set_header("Cache-Control", "no-cache");
            res.set_chunked_content_provider(
                "text/event-stream",
                [this, channel, shape, includeUsage, first, stopping, id](std::size_t,
                                                                          httplib::DataSink& sink) {
                    auto write = [&](const std::string& data) {
                        return sink.write(data.data(), data.size());
                    };
                    for (const auto& event : channel->take(100ms)) {
                        const bool last = event.finish != FinishReason::None;
                        if (!event.text.empty() || (shape.chat && *first) || last) {
                            Json chunk;
                            if (last && event.finish != FinishReason::Stop &&
                                event.finish != FinishReason::Length) {
                                // Cancelled (shutdown) or failed: an error event ends it.
                                chunk = Json::parse(ApiError(503, "server_error", {},
                                                             event.error.empty()
                                                                 ? "the request was cancelled"
                                                                 : event.error)
                                                        .json());
                            } else {
                                chunk = shape.chunk(event.text,
                                                    last ? finishName(event.finish) : "", *first);
                                if (includeUsage) chunk["usage"] = nullptr;
                            }
                            *first = false;
                            if (!write(sse(chunk))) {
                                loop_.cancel(id); // the client is gone
                                return false;
                            }
                        }
                        if (!last) continue;
                        if (includeUsage) {
                            Json usage = shape.base();
                            usage["choices"] = Json::array();
                            usage["usage"] = shape.usage(event.usage);
                            if (!write(sse(usage))) return false;
                        }
                        write("data: [DONE]\n\n");
                        sink.done();
                        return true;
                    }
                    if (stopping->load()) loop_.cancel(id);
                    return true;
                },
                [this, id](bool success) {
                    if (!success) loop_.cancel(id);
                });
        };
    };
    server.Post("/v1/completions", completion(CompletionEndpoint::Completions));
    server.Post("/v1/chat/completions", completion(CompletionEndpoint::ChatCompletions));
}

} // namespace inferscope::compute::experiments
