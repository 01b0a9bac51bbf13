#include "compute/experiments/serve/OpenAiRequest.hpp"

#include "models/ModelError.hpp"
#include "models/formats/StrictJson.hpp"

#include <nlohmann/json.hpp>

namespace inferscope::compute::experiments {

namespace {
using Json = nlohmann::json;

// OpenAI accepts at most four stop sequences.
constexpr std::size_t kMaxStops = 4;
constexpr std::size_t kMaxMessages = 1024;

const char* typeName(const Json& value) {
    return value.type_name();
}

ApiError wrongType(const std::string& field, const char* wanted, const Json& value) {
    return invalidRequest("'" + field + "' must be " + wanted + ", not " + typeName(value), field,
                          "invalid_type");
}

std::optional<std::int64_t> integerField(const Json& body, const std::string& field) {
    const auto it = body.find(field);
    if (it == body.end() || it->is_null()) return std::nullopt;
    if (!it->is_number_integer()) throw wrongType(field, "an integer", *it);
    return it->get<std::int64_t>();
}

std::optional<double> numberField(const Json& body, const std::string& field, double low,
                                  double high) {
    const auto it = body.find(field);
    if (it == body.end() || it->is_null()) return std::nullopt;
    if (!it->is_number()) throw wrongType(field, "a number", *it);
    const double value = it->get<double>();
    if (!(value >= low && value <= high))
        throw invalidRequest("'" + field + "' must be between " + Json(low).dump() + " and " +
                                 Json(high).dump() + ", not " + it->dump(),
                             field);
    return value;
}

bool boolField(const Json& object, const std::string& field, const std::string& path) {
    const auto it = object.find(field);
    if (it == object.end() || it->is_null()) return false;
    if (!it->is_boolean()) throw wrongType(path, "a boolean", *it);
    return it->get<bool>();
}

std::string messageText(const Json& content, const std::string& path) {
    if (content.is_string()) return content.get<std::string>();
    if (!content.is_array()) throw wrongType(path, "a string or an array of text parts", content);
    std::string text;
    for (std::size_t i = 0; i < content.size(); ++i) {
        const auto& part = content[i];
        const std::string partPath = path + "[" + std::to_string(i) + "]";
        if (!part.is_object()) throw wrongType(partPath, "an object", part);
        const auto type = part.find("type");
        if (type == part.end() || !type->is_string() || *type != "text")
            throw invalidRequest("'" + partPath + ".type' must be \"text\" (this model reads text)",
                                 partPath + ".type");
        const auto value = part.find("text");
        if (value == part.end() || !value->is_string())
            throw invalidRequest("'" + partPath + ".text' must be a string", partPath + ".text",
                                 "invalid_type");
        text += value->get<std::string>();
    }
    return text;
}

std::vector<std::int32_t> chatPrompt(const Json& body, const models::Tokenizer& tokenizer,
                                     const std::optional<models::ChatFormat>& chatFormat) {
    const auto it = body.find("messages");
    if (it == body.end()) throw invalidRequest("'messages' is required", "messages", "missing");
    if (!it->is_array()) throw wrongType("messages", "an array", *it);
    if (it->empty() || it->size() > kMaxMessages)
        throw invalidRequest(
            "'messages' must hold 1 to " + std::to_string(kMaxMessages) + " messages", "messages");
    if (!chatFormat)
        throw invalidRequest("this model has no chat template InferScope recognises; use "
                             "/v1/completions",
                             "messages", "unsupported");
    std::vector<models::ChatMessage> messages;
    for (std::size_t i = 0; i < it->size(); ++i) {
        const auto& message = (*it)[i];
        const std::string path = "messages[" + std::to_string(i) + "]";
        if (!message.is_object()) throw wrongType(path, "an object", message);
        const auto role = message.find("role");
        if (role == message.end() || !role->is_string())
            throw invalidRequest("'" + path + ".role' must be a string", path + ".role",
                                 "invalid_type");
        const auto name = role->get<std::string>();
        if (name != "system" && name != "user" && name != "assistant" && name != "developer")
            throw invalidRequest("'" + path + ".role' must be system, user or assistant, not \"" +
                                     name + "\"",
                                 path + ".role");
        const auto content = message.find("content");
        if (content == message.end())
            throw invalidRequest("'" + path + ".content' is required", path + ".content",
                                 "missing");
        messages.push_back(
            {name == "developer" ? "system" : name, messageText(*content, path + ".content")});
    }
    return tokenizer.encode(models::formatChat(*chatFormat, messages, true), true, true);
}

std::vector<std::int32_t> completionPrompt(const Json& body, const models::Tokenizer& tokenizer) {
    const auto it = body.find("prompt");
    if (it == body.end()) throw invalidRequest("'prompt' is required", "prompt", "missing");
    if (it->is_string()) return tokenizer.encode(it->get<std::string>(), true, true);
    if (it->is_array() && it->size() == 1 && (*it)[0].is_string())
        return tokenizer.encode((*it)[0].get<std::string>(), true, true);
    if (it->is_array() && !it->empty() && (*it)[0].is_number_integer()) {
        std::vector<std::int32_t> ids;
        for (std::size_t i = 0; i < it->size(); ++i) {
            const auto& id = (*it)[i];
            if (!id.is_number_integer())
                throw wrongType("prompt[" + std::to_string(i) + "]", "a token id", id);
            const auto value = id.get<std::int64_t>();
            if (value < 0 || value >= tokenizer.vocabSize())
                throw invalidRequest(
                    "'prompt[" + std::to_string(i) + "]' = " + std::to_string(value) +
                        " is outside the vocabulary of " + std::to_string(tokenizer.vocabSize()),
                    "prompt");
            ids.push_back(std::int32_t(value));
        }
        return ids;
    }
    throw invalidRequest("'prompt' must be a string, an array of one string or an array of "
                         "token ids (one prompt per request)",
                         "prompt", "invalid_type");
}
} // namespace

std::string ApiError::json() const {
    Json error = {{"message", what()},
                  {"type", type_},
                  {"param", param_.empty() ? Json(nullptr) : Json(param_)},
                  {"code", code_.empty() ? Json(nullptr) : Json(code_)}};
    return Json{{"error", error}}.dump();
}

ApiError invalidRequest(const std::string& message, const std::string& param,
                        const std::string& code) {
    return ApiError(400, "invalid_request_error", code, message, param);
}

ParsedCompletion parseCompletionRequest(std::string_view body, CompletionEndpoint endpoint,
                                        const models::Tokenizer& tokenizer,
                                        const std::optional<models::ChatFormat>& chatFormat,
                                        std::uint32_t contextTokens,
                                        std::uint32_t defaultMaxTokens) {
    Json json;
    try {
        models::StrictJsonOptions options;
        options.field = "request body";
        json = models::parseStrictJson(body, "request", options);
    } catch (const models::ModelError& error) {
        throw invalidRequest(std::string("the body is not valid JSON: ") + error.what(), {},
                             "invalid_json");
    }
    if (!json.is_object())
        throw invalidRequest("the body must be a JSON object", {}, "invalid_json");
    ParsedCompletion parsed;
    parsed.chat = endpoint == CompletionEndpoint::ChatCompletions;
    if (const auto model = json.find("model"); model != json.end() && !model->is_null()) {
        if (!model->is_string()) throw wrongType("model", "a string", *model);
        parsed.model = model->get<std::string>();
    }
    if (auto n = integerField(json, "n"); n && *n != 1)
        throw invalidRequest("'n' must be 1 (one choice per request)", "n");
    parsed.stream = boolField(json, "stream", "stream");
    if (const auto options = json.find("stream_options");
        options != json.end() && !options->is_null()) {
        if (!options->is_object()) throw wrongType("stream_options", "an object", *options);
        parsed.includeUsage = boolField(*options, "include_usage", "stream_options.include_usage");
    }
    auto& request = parsed.request;
    if (auto t = numberField(json, "temperature", 0.0, 2.0)) request.temperature = float(*t);
    if (auto p = numberField(json, "top_p", 0.0, 1.0)) {
        if (*p <= 0.0) throw invalidRequest("'top_p' must be above 0", "top_p");
        request.topP = float(*p);
    }
    if (auto seed = integerField(json, "seed")) request.seed = std::uint64_t(*seed);
    request.ignoreEos = boolField(json, "ignore_eos", "ignore_eos");
    if (const auto stop = json.find("stop"); stop != json.end() && !stop->is_null()) {
        if (stop->is_string()) {
            request.stop.push_back(stop->get<std::string>());
        } else if (stop->is_array()) {
            if (stop->size() > kMaxStops)
                throw invalidRequest("'stop' holds at most 4 strings", "stop");
            for (std::size_t i = 0; i < stop->size(); ++i) {
                if (!(*stop)[i].is_string())
                    throw wrongType("stop[" + std::to_string(i) + "]", "a string", (*stop)[i]);
                request.stop.push_back((*stop)[i].get<std::string>());
            }
        } else {
            throw wrongType("stop", "a string or an array of strings", *stop);
        }
    }
    std::optional<std::int64_t> maxTokens;
    std::string maxField = "max_tokens";
    if (parsed.chat)
        if (auto m = integerField(json, "max_completion_tokens")) {
            maxTokens = m;
            maxField = "max_completion_tokens";
        }
    if (!maxTokens) maxTokens = integerField(json, "max_tokens");
    if (maxTokens && *maxTokens <= 0)
        throw invalidRequest(
            "'" + maxField + "' must be at least 1, not " + std::to_string(*maxTokens), maxField);

    request.prompt =
        parsed.chat ? chatPrompt(json, tokenizer, chatFormat) : completionPrompt(json, tokenizer);
    if (request.prompt.empty())
        throw invalidRequest("the prompt encodes to no tokens",
                             parsed.chat ? "messages" : "prompt");
    const auto promptTokens = std::uint64_t(request.prompt.size());
    if (promptTokens >= contextTokens)
        throw invalidRequest("the prompt has " + std::to_string(promptTokens) +
                                 " tokens; this server's context holds " +
                                 std::to_string(contextTokens) +
                                 " positions per request, the prompt and its output together",
                             parsed.chat ? "messages" : "prompt", "context_length_exceeded");
    if (maxTokens && promptTokens + std::uint64_t(*maxTokens) > contextTokens)
        throw invalidRequest("the prompt's " + std::to_string(promptTokens) + " tokens and " +
                                 maxField + " " + std::to_string(*maxTokens) + " need " +
                                 std::to_string(promptTokens + std::uint64_t(*maxTokens)) +
                                 " positions; this server's context holds " +
                                 std::to_string(contextTokens) + " per request",
                             maxField, "context_length_exceeded");
    request.maxTokens = maxTokens ? std::uint32_t(*maxTokens)
                                  : std::uint32_t(std::min<std::uint64_t>(
                                        defaultMaxTokens, contextTokens - promptTokens));
    return parsed;
}

} // namespace inferscope::compute::experiments
