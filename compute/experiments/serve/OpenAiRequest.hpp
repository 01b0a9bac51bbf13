#pragma once
// The body of an OpenAI-style completion request (POST /v1/completions or
// /v1/chat/completions) read strictly: duplicate keys, deep nesting, wrong field types and
// values out of range are ApiErrors (HTTP 400) naming the field; a chat request's messages
// go through the model's chat template; the prompt is checked against the context.
#include "compute/experiments/serve/CompletionRequest.hpp"
#include "models/tokenizer/ChatTemplate.hpp"
#include "models/tokenizer/Tokenizer.hpp"

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace inferscope::compute::experiments {

// An error as OpenAI's API reports it: {"error": {"message", "type", "param", "code"}}.
class ApiError : public std::runtime_error {
public:
    ApiError(int status, std::string type, std::string code, const std::string& message,
             std::string param = {})
        : std::runtime_error(message), status_(status), type_(std::move(type)),
          code_(std::move(code)), param_(std::move(param)) {}
    int status() const { return status_; }
    const std::string& type() const { return type_; }
    const std::string& code() const { return code_; }
    const std::string& param() const { return param_; }
    std::string json() const;

private:
    int status_;
    std::string type_, code_, param_;
};

// A 400 invalid_request_error about `param`.
ApiError invalidRequest(const std::string& message, const std::string& param = {},
                        const std::string& code = "invalid_value");

struct ParsedCompletion {
    CompletionRequest request; // without its callback
    bool chat = false;
    bool stream = false;
    bool includeUsage = false; // stream_options.include_usage
    std::string model;         // as asked (empty: not given)
};

enum class CompletionEndpoint { Completions, ChatCompletions };

// Throws ApiError. contextTokens: positions one request may hold (prompt + max_tokens); a
// request without max_tokens gets what the context leaves after the prompt, at most
// defaultMaxTokens.
ParsedCompletion parseCompletionRequest(std::string_view body, CompletionEndpoint endpoint,
                                        const models::Tokenizer& tokenizer,
                                        const std::optional<models::ChatFormat>& chatFormat,
                                        std::uint32_t contextTokens,
                                        std::uint32_t defaultMaxTokens = 256);

} // namespace inferscope::compute::experiments
