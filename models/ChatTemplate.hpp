#pragma once
// Chat prompt formatting. The GGUF chat template is untrusted Jinja text: it is never
// evaluated. We recognise known template families (ChatML: <|im_start|>role\n...<|im_end|>)
// by their markers and format them with our own code; anything else is refused.
#include "models/TokenizerData.hpp"

#include <string>
#include <vector>

namespace inferscope::models {

struct ChatMessage {
    std::string role; // "system", "user", "assistant"
    std::string content;
};

enum class ChatFormat { ChatML, Llama2, Zephyr };

// Which known family the template text belongs to; throws ModelError if none.
ChatFormat detectChatFormat(const TokenizerData& tokenizer);
std::string formatChat(ChatFormat format, const std::vector<ChatMessage>& messages,
                       bool addAssistantPrompt);

} // namespace inferscope::models
