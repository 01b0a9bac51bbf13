#include "models/ChatTemplate.hpp"

#include "models/ModelError.hpp"

namespace inferscope::models {

ChatFormat detectChatFormat(const TokenizerData& tokenizer) {
    // Recognised by marker text only, in llama.cpp's order of precedence; the Jinja itself
    // is never evaluated.
    const std::string& text = tokenizer.chatTemplate;
    const auto contains = [&](const char* marker) {
        return text.find(marker) != std::string::npos;
    };
    if (contains("<|im_start|>")) return ChatFormat::ChatML;
    if (contains("[INST]")) return ChatFormat::Llama2;
    if (contains("<|user|>")) return ChatFormat::Zephyr;
    throw ModelError("", "tokenizer.chat_template", std::nullopt,
                     text.empty() ? "the model has no chat template"
                                  : "the chat template is of no family we know (ChatML, "
                                    "Llama 2 [INST], Zephyr <|user|>)");
}

std::string formatChat(ChatFormat format, const std::vector<ChatMessage>& messages,
                       bool addAssistantPrompt) {
    std::string prompt;
    switch (format) {
    case ChatFormat::ChatML:
        // As llama.cpp's built-in ChatML formatter (llama_chat_apply_template): the messages
        // exactly as given. SmolLM2-Instruct's Jinja would also put a default system prompt
        // ("You are a helpful AI assistant named SmolLM, trained by Hugging Face") first when
        // the first message is not a system message; llama.cpp does not, and neither do we:
        // a caller who wants it passes it as the system message.
        for (const ChatMessage& message : messages) {
            prompt += "<|im_start|>" + message.role + "\n" + message.content + "<|im_end|>\n";
        }
        if (addAssistantPrompt) prompt += "<|im_start|>assistant\n";
        break;
    case ChatFormat::Llama2: {
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
    case ChatFormat::Zephyr:
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
