#pragma once
// Chat prompt formatting. The GGUF chat template is untrusted Jinja text: it is never
// evaluated. We recognise known template families (ChatML: <|im_start|>role\n...<|im_end|>)
// by their markers and format them with our own code; anything else is refused.
#include "models/tokenizer/TokenizerData.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace inferscope::models {

struct ChatMessage {
    std::string role; // "system", "user", "assistant"
    std::string content;
};

enum class ChatFamily { ChatML, Llama2, Zephyr };

struct ChatFormat {
    ChatFormat(ChatFamily chatFamily = ChatFamily::ChatML,
               std::optional<std::string> defaultSystem = std::nullopt)
        : family(chatFamily), defaultSystemMessage(std::move(defaultSystem)) {}

    ChatFamily family = ChatFamily::ChatML;
    // The system message the model's own template puts first when a conversation starts
    // without one (SmolLM2: "You are a helpful AI assistant named SmolLM, ..."); none if the
    // template has no such fixed text or we cannot tell safely (see defaultSystemMessage).
    std::optional<std::string> defaultSystemMessage;

    bool operator==(const ChatFormat&) const = default;
};

// Which known family the template text belongs to, and its default system message;
// throws ModelError if the family is none we know.
ChatFormat detectChatFormat(const TokenizerData& tokenizer);
// The ChatML system turn a template writes when the conversation has no system message of
// its own, found by reading (never running) the template: a {{ }} expression that is one
// string literal "<|im_start|>system\n TEXT <|im_end|>\n" whose innermost {% if %} is
// "messages[0]['role'] != 'system'" (optionally "loop.first and ..."), or the {% else %}
// branch of "messages[0]['role'] == 'system'"; enclosing ifs may only be "loop.first" or
// the else branch of "tools" (we never pass tools). Anything else gives nullopt.
std::optional<std::string> defaultSystemMessage(std::string_view templateText);

// Messages in the family's layout. A conversation (non-empty) that does not start with a
// system message gets the format's default system message first, as the template would.
std::string formatChat(const ChatFormat& format, const std::vector<ChatMessage>& messages,
                       bool addAssistantPrompt);

} // namespace inferscope::models
