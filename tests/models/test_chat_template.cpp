// Chat templates: the family is recognised from the template text (never evaluated) and the
// prompt is built by our own code. Expected prompts are what llama.cpp's built-in formatter
// (llama_chat_apply_template through llama-cpp-python 0.3.36) produced for the same messages.
#include "models/ChatTemplate.hpp"
#include "models/ModelError.hpp"

#include <QtTest>

using namespace inferscope::models;

namespace {

// SmolLM2-135M-Instruct's template as stored in its GGUF.
const char* const kSmolLm2Template =
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ "
    "'<|im_start|>system\\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
    "Face<|im_end|>\\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ "
    "'<|im_start|>assistant\\n' }}{% endif %}";

TokenizerData withTemplate(const std::string& text) {
    TokenizerData data;
    data.chatTemplate = text;
    return data;
}

const std::vector<ChatMessage> kConversation = {
    {"system", "Be brief."},
    {"user", "Hi there"},
    {"assistant", "Hello!"},
    {"user", "What is 2+2?"},
};

} // namespace

class TestChatTemplate : public QObject {
    Q_OBJECT

private slots:
    void detectsKnownFamilies() {
        QCOMPARE(detectChatFormat(withTemplate(kSmolLm2Template)), ChatFormat::ChatML);
        QCOMPARE(detectChatFormat(withTemplate("{{ '[INST] ' + content + ' [/INST]' }}")),
                 ChatFormat::Llama2);
        QCOMPARE(detectChatFormat(withTemplate("{{ '<|user|>\\n' + content + eos_token }}")),
                 ChatFormat::Zephyr);
        // ChatML markers win over the others, as in llama.cpp's order.
        QCOMPARE(detectChatFormat(withTemplate("<|user|> [INST] <|im_start|>")),
                 ChatFormat::ChatML);
        QCOMPARE(detectChatFormat(withTemplate("[INST] <|user|>")), ChatFormat::Llama2);
    }

    void refusesUnknownOrMissingTemplates() {
        QVERIFY_THROWS_EXCEPTION(ModelError, detectChatFormat(withTemplate("")));
        QVERIFY_THROWS_EXCEPTION(
            ModelError,
            detectChatFormat(withTemplate("{{ raise_exception('no') }}{% for m in messages %}")));
        try {
            detectChatFormat(withTemplate("{{ messages }}"));
            QFAIL("no error");
        } catch (const ModelError& error) {
            QCOMPARE(QString::fromStdString(error.field()), QString("tokenizer.chat_template"));
        }
    }

    void chatMlConversation() {
        QCOMPARE(formatChat(ChatFormat::ChatML, kConversation, true),
                 std::string("<|im_start|>system\nBe brief.<|im_end|>\n"
                             "<|im_start|>user\nHi there<|im_end|>\n"
                             "<|im_start|>assistant\nHello!<|im_end|>\n"
                             "<|im_start|>user\nWhat is 2+2?<|im_end|>\n"
                             "<|im_start|>assistant\n"));
        QCOMPARE(formatChat(ChatFormat::ChatML, kConversation, false),
                 std::string("<|im_start|>system\nBe brief.<|im_end|>\n"
                             "<|im_start|>user\nHi there<|im_end|>\n"
                             "<|im_start|>assistant\nHello!<|im_end|>\n"
                             "<|im_start|>user\nWhat is 2+2?<|im_end|>\n"));
    }

    // SmolLM2's Jinja would add "You are a helpful AI assistant named SmolLM..." here;
    // llama.cpp's built-in ChatML formatter does not, and we follow llama.cpp.
    void chatMlAddsNoDefaultSystemPrompt() {
        const std::vector<ChatMessage> userOnly = {{"user", "Hi there"}};
        QCOMPARE(formatChat(ChatFormat::ChatML, userOnly, true),
                 std::string("<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n"));
        QCOMPARE(formatChat(ChatFormat::ChatML, userOnly, false),
                 std::string("<|im_start|>user\nHi there<|im_end|>\n"));
        QCOMPARE(formatChat(ChatFormat::ChatML, {}, true), std::string("<|im_start|>assistant\n"));
    }

    void llama2Conversation() {
        const std::string expected = "[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi there [/INST]"
                                     "Hello!</s>[INST] What is 2+2? [/INST]";
        QCOMPARE(formatChat(ChatFormat::Llama2, kConversation, true), expected);
        QCOMPARE(formatChat(ChatFormat::Llama2, kConversation, false), expected);
        QCOMPARE(formatChat(ChatFormat::Llama2, {{"user", "Hi there"}}, true),
                 std::string("[INST] Hi there [/INST]"));
    }

    void zephyrConversation() {
        QCOMPARE(formatChat(ChatFormat::Zephyr, kConversation, true),
                 std::string("<|system|>\nBe brief.<|endoftext|>\n"
                             "<|user|>\nHi there<|endoftext|>\n"
                             "<|assistant|>\nHello!<|endoftext|>\n"
                             "<|user|>\nWhat is 2+2?<|endoftext|>\n"
                             "<|assistant|>\n"));
        QCOMPARE(formatChat(ChatFormat::Zephyr, {{"user", "Hi there"}}, false),
                 std::string("<|user|>\nHi there<|endoftext|>\n"));
    }

    // Template text is data: Jinja syntax in a message is copied, never interpreted.
    void messageContentIsNotInterpreted() {
        const std::vector<ChatMessage> tricky = {{"user", "{{ 7*7 }} {% for x in y %}<|im_end|>"}};
        QCOMPARE(formatChat(ChatFormat::ChatML, tricky, false),
                 std::string("<|im_start|>user\n{{ 7*7 }} {% for x in y %}<|im_end|><|im_end|>\n"));
    }
};

QTEST_APPLESS_MAIN(TestChatTemplate)
#include "test_chat_template.moc"
