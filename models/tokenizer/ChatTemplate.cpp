#include "models/tokenizer/ChatTemplate.hpp"

#include "models/ModelError.hpp"

#include <algorithm>

namespace inferscope::models {

namespace {

std::string_view trim(std::string_view text) {
    const auto isSpace = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
    while (!text.empty() && isSpace(text.front())) text.remove_prefix(1);
    while (!text.empty() && isSpace(text.back())) text.remove_suffix(1);
    return text;
}

// The inside of a {{ }} or {% %} tag without Jinja's whitespace-control marks.
std::string_view tagBody(std::string_view inside) {
    if (!inside.empty() && (inside.front() == '-' || inside.front() == '+'))
        inside.remove_prefix(1);
    if (!inside.empty() && (inside.back() == '-' || inside.back() == '+')) inside.remove_suffix(1);
    return trim(inside);
}

// The value of an expression that is exactly one quoted string literal, else nullopt.
std::optional<std::string> stringLiteral(std::string_view expression) {
    if (expression.size() < 2 || (expression.front() != '\'' && expression.front() != '"'))
        return std::nullopt;
    const char quote = expression.front();
    std::string value;
    std::size_t pos = 1;
    for (; pos < expression.size() && expression[pos] != quote; ++pos) {
        char c = expression[pos];
        if (c == '\\') {
            if (++pos == expression.size()) return std::nullopt;
            switch (expression[pos]) {
            case 'n':
                c = '\n';
                break;
            case 't':
                c = '\t';
                break;
            case 'r':
                c = '\r';
                break;
            case '\\':
            case '\'':
            case '"':
                c = expression[pos];
                break;
            default:
                return std::nullopt; // an escape we do not need to understand
            }
        }
        value += c;
    }
    if (pos + 1 != expression.size()) return std::nullopt; // unclosed, or more after it
    return value;
}

// A condition with spaces removed, double quotes as single and ".role" as "['role']", so
// that the few spellings of the same test compare equal.
std::string normalizeCondition(std::string_view condition) {
    std::string out;
    for (char c : condition) {
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
        out += c == '"' ? '\'' : c;
    }
    for (std::size_t at; (at = out.find(".role")) != std::string::npos;)
        out.replace(at, 5, "['role']");
    return out;
}

struct IfFrame {
    std::string condition; // normalized; empty after an {% elif %} (we do not follow those)
    bool inElse = false;
};

constexpr std::string_view kFirstIsNotSystem = "messages[0]['role']!='system'";
constexpr std::string_view kFirstIsSystem = "messages[0]['role']=='system'";

// Whether the innermost frame says "the conversation has no system message of its own".
bool meansNoSystemMessage(const IfFrame& frame) {
    std::string condition = frame.condition;
    for (std::string_view extra : {"loop.firstand", "andloop.first"}) {
        if (condition.starts_with(extra))
            condition.erase(0, extra.size());
        else if (condition.ends_with(extra))
            condition.erase(condition.size() - extra.size());
    }
    return frame.inElse ? condition == kFirstIsSystem : condition == kFirstIsNotSystem;
}

// Enclosing conditions that hold for every conversation we format.
bool alwaysHoldsForUs(const IfFrame& frame) {
    if (!frame.inElse) return frame.condition == "loop.first";
    return frame.condition == "tools" || frame.condition == "toolsisdefined" ||
           frame.condition == "toolsisdefinedandtools";
}

} // namespace

std::optional<std::string> defaultSystemMessage(std::string_view text) {
    constexpr std::string_view turnStart = "<|im_start|>system\n";
    constexpr std::string_view turnEnd = "<|im_end|>";
    std::vector<IfFrame> frames;
    std::optional<std::string> found;
    for (std::size_t pos = 0; (pos = text.find('{', pos)) != std::string_view::npos;) {
        if (pos + 1 >= text.size()) break;
        const char kind = text[pos + 1];
        const std::string_view close = kind == '{'   ? "}}"
                                       : kind == '%' ? "%}"
                                       : kind == '#' ? "#}"
                                                     : "";
        if (close.empty()) {
            ++pos;
            continue;
        }
        const std::size_t end = text.find(close, pos + 2);
        if (end == std::string_view::npos) return std::nullopt; // malformed: trust nothing
        const std::string_view body = tagBody(text.substr(pos + 2, end - pos - 2));
        pos = end + 2;
        if (kind == '%') {
            const std::string_view keyword = body.substr(0, body.find_first_of(" \t\n\r"));
            if (keyword == "if") {
                frames.push_back({normalizeCondition(body.substr(2)), false});
            } else if (keyword == "elif" && !frames.empty()) {
                frames.back() = {"", false};
            } else if (keyword == "else" && !frames.empty()) {
                frames.back().inElse = true;
            } else if (keyword == "endif") {
                if (frames.empty()) return std::nullopt;
                frames.pop_back();
            }
        } else if (kind == '{') {
            const auto literal = stringLiteral(body);
            if (!literal || !literal->starts_with(turnStart)) continue;
            std::string_view turn = *literal;
            turn.remove_prefix(turnStart.size());
            if (turn.ends_with("\n")) turn.remove_suffix(1);
            if (!turn.ends_with(turnEnd)) continue;
            turn.remove_suffix(turnEnd.size());
            if (turn.find("<|im_") != std::string_view::npos) continue;
            if (frames.empty() || !meansNoSystemMessage(frames.back())) continue;
            if (!std::all_of(frames.begin(), frames.end() - 1, alwaysHoldsForUs)) continue;
            if (found && *found != turn) return std::nullopt; // two different defaults
            found = std::string(turn);
        }
    }
    return found;
}

ChatFormat detectChatFormat(const TokenizerData& tokenizer) {
    // Recognised by marker text only, in llama.cpp's order of precedence; the Jinja itself
    // is never evaluated.
    const std::string& text = tokenizer.chatTemplate;
    const auto contains = [&](const char* marker) {
        return text.find(marker) != std::string::npos;
    };
    if (contains("<|im_start|>")) return {ChatFamily::ChatML, defaultSystemMessage(text)};
    if (contains("[INST]")) return {ChatFamily::Llama2, std::nullopt};
    if (contains("<|user|>")) return {ChatFamily::Zephyr, std::nullopt};
    throw ModelError(tokenizer.source, "tokenizer.chat_template", std::nullopt,
                     text.empty() ? "the model has no chat template"
                                  : "the chat template is of no family we know (ChatML, "
                                    "Llama 2 [INST], Zephyr <|user|>)");
}

std::string formatChat(const ChatFormat& format, const std::vector<ChatMessage>& input,
                       bool addAssistantPrompt) {
    std::vector<ChatMessage> messages;
    // As the model's template does (llama.cpp's built-in formatter does not): a conversation
    // without a system message of its own starts with the template's default one.
    if (format.defaultSystemMessage && !input.empty() && input.front().role != "system")
        messages.push_back({"system", *format.defaultSystemMessage});
    messages.insert(messages.end(), input.begin(), input.end());
    std::string prompt;
    switch (format.family) {
    case ChatFamily::ChatML:
        // As llama.cpp's built-in ChatML formatter (llama_chat_apply_template): the messages
        // as given (plus the default system message above).
        for (const ChatMessage& message : messages) {
            prompt += "<|im_start|>" + message.role + "\n" + message.content + "<|im_end|>\n";
        }
        if (addAssistantPrompt) prompt += "<|im_start|>assistant\n";
        break;
    case ChatFamily::Llama2: {
        // llama.cpp's "llama2-sys" variant: "[INST] <<SYS>>\n{system}\n<</SYS>>\n\n{user}
        // [/INST]{assistant}</s>[INST] ..."; the tokenizer adds the first BOS. The prompt
        // always ends ready for the assistant, so addAssistantPrompt changes nothing.
        bool insideTurn = true;
        prompt += "[INST] ";
        for (const ChatMessage& message : messages) {
            if (!insideTurn) {
                prompt += "[INST] ";
                insideTurn = true;
            }
            if (message.role == "system") {
                prompt += "<<SYS>>\n" + message.content + "\n<</SYS>>\n\n";
            } else if (message.role == "user") {
                prompt += message.content + " [/INST]";
            } else {
                prompt += message.content + "</s>";
                insideTurn = false;
            }
        }
        break;
    }
    case ChatFamily::Zephyr:
        // As llama.cpp's Zephyr formatter: "<|role|>\n{content}<|endoftext|>\n".
        for (const ChatMessage& message : messages) {
            prompt += "<|" + message.role + "|>\n" + message.content + "<|endoftext|>\n";
        }
        if (addAssistantPrompt) prompt += "<|assistant|>\n";
        break;
    }
    return prompt;
}

} // namespace inferscope::models
