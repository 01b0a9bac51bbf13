// Chat templates: the family is recognised from the template text (never evaluated) and the
// prompt is built by our own code. Expected prompts are what llama.cpp's built-in formatter
// (llama_chat_apply_template through llama-cpp-python 0.3.36) produced for the same messages.
#include "models/ModelError.hpp"
#include "models/tokenizer/ChatTemplate.hpp"

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
        QCOMPARE(detectChatFormat(withTemplate(kSmolLm2Template)).family, ChatFamily::ChatML);
        QCOMPARE(detectChatFormat(withTemplate("{{ '[INST] ' + content + ' [/INST]' }}")).family,
                 ChatFamily::Llama2);
        QCOMPARE(detectChatFormat(withTemplate("{{ '<|user|>\\n' + content + eos_token }}")).family,
                 ChatFamily::Zephyr);
        // ChatML markers win over the others, as in llama.cpp's order.
        QCOMPARE(detectChatFormat(withTemplate("<|user|> [INST] <|im_start|>")).family,
                 ChatFamily::ChatML);
        QCOMPARE(detectChatFormat(withTemplate("[INST] <|user|>")).family, ChatFamily::Llama2);
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
        QCOMPARE(formatChat({ChatFamily::ChatML}, kConversation, true),
                 std::string("<|im_start|>system\nBe brief.<|im_end|>\n"
                             "<|im_start|>user\nHi there<|im_end|>\n"
                             "<|im_start|>assistant\nHello!<|im_end|>\n"
                             "<|im_start|>user\nWhat is 2+2?<|im_end|>\n"
                             "<|im_start|>assistant\n"));
        QCOMPARE(formatChat({ChatFamily::ChatML}, kConversation, false),
                 std::string("<|im_start|>system\nBe brief.<|im_end|>\n"
                             "<|im_start|>user\nHi there<|im_end|>\n"
                             "<|im_start|>assistant\nHello!<|im_end|>\n"
                             "<|im_start|>user\nWhat is 2+2?<|im_end|>\n"));
    }

    // A format without a default system message (llama.cpp's built-in ChatML formatter)
    // adds none.
    void chatMlAddsNoDefaultSystemPrompt() {
        const std::vector<ChatMessage> userOnly = {{"user", "Hi there"}};
        QCOMPARE(formatChat({ChatFamily::ChatML}, userOnly, true),
                 std::string("<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n"));
        QCOMPARE(formatChat({ChatFamily::ChatML}, userOnly, false),
                 std::string("<|im_start|>user\nHi there<|im_end|>\n"));
        QCOMPARE(formatChat({ChatFamily::ChatML}, {}, true),
                 std::string("<|im_start|>assistant\n"));
    }

    void llama2Conversation() {
        const std::string expected = "[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi there [/INST]"
                                     "Hello!</s>[INST] What is 2+2? [/INST]";
        QCOMPARE(formatChat({ChatFamily::Llama2}, kConversation, true), expected);
        QCOMPARE(formatChat({ChatFamily::Llama2}, kConversation, false), expected);
        QCOMPARE(formatChat({ChatFamily::Llama2}, {{"user", "Hi there"}}, true),
                 std::string("[INST] Hi there [/INST]"));
    }

    void zephyrConversation() {
        QCOMPARE(formatChat({ChatFamily::Zephyr}, kConversation, true),
                 std::string("<|system|>\nBe brief.<|endoftext|>\n"
                             "<|user|>\nHi there<|endoftext|>\n"
                             "<|assistant|>\nHello!<|endoftext|>\n"
                             "<|user|>\nWhat is 2+2?<|endoftext|>\n"
                             "<|assistant|>\n"));
        QCOMPARE(formatChat({ChatFamily::Zephyr}, {{"user", "Hi there"}}, false),
                 std::string("<|user|>\nHi there<|endoftext|>\n"));
    }

    // The rule reads SmolLM2's template (never runs it) and finds its default system message;
    // formatChat puts it first unless the caller gave a system message.
    void followsTheTemplatesDefaultSystemMessage() {
        const ChatFormat format = detectChatFormat(withTemplate(kSmolLm2Template));
        QVERIFY(format.defaultSystemMessage.has_value());
        QCOMPARE(
            *format.defaultSystemMessage,
            std::string("You are a helpful AI assistant named SmolLM, trained by Hugging Face"));
        QCOMPARE(formatChat(format, {{"user", "Hi there"}}, true),
                 std::string("<|im_start|>system\nYou are a helpful AI assistant named SmolLM, "
                             "trained by Hugging Face<|im_end|>\n"
                             "<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n"));
        // A system message of the caller's own replaces the default, as in the template.
        QCOMPARE(formatChat(format, kConversation, true),
                 formatChat({ChatFamily::ChatML}, kConversation, true));
    }

    // Qwen2.5 style: the default sits in the else branch of "first message is system",
    // inside the else branch of "tools"; double quotes and .role spellings are the same test.
    void findsDefaultInElseBranches() {
        const char* qwen =
            "{%- if tools %}{{- '<|im_start|>system\\n' }}{%- else %}"
            "{%- if messages[0].role == \"system\" %}"
            "{{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}"
            "{%- else %}{{- '<|im_start|>system\\nYou are Qwen, a \\'helpful\\' "
            "assistant.<|im_end|>\\n' }}{%- endif %}{%- endif %}"
            "{%- for message in messages %}{{ '<|im_start|>' + message.role }}{% endfor %}";
        QCOMPARE(defaultSystemMessage(qwen).value_or("none"),
                 std::string("You are Qwen, a 'helpful' assistant."));
    }

    // Anything the rule does not understand gives no default: conditions of other kinds,
    // expressions that are not one literal, elif chains, unbalanced or unclosed tags.
    void refusesToGuessDefaults() {
        const std::string literal = "{{ '<|im_start|>system\\nHello<|im_end|>\\n' }}";
        QCOMPARE(defaultSystemMessage("{% if messages[0]['role'] != 'system' %}" + literal +
                                      "{% endif %}")
                     .value_or("none"),
                 std::string("Hello"));
        // Unconditional, or under an unknown condition: not a default we can vouch for.
        QVERIFY(!defaultSystemMessage(literal));
        QVERIFY(!defaultSystemMessage("{% if x %}" + literal + "{% endif %}"));
        QVERIFY(!defaultSystemMessage("{% if messages[0]['role'] == 'system' %}" + literal +
                                      "{% endif %}"));
        QVERIFY(!defaultSystemMessage("{% if debug %}{% if messages[0]['role'] != 'system' %}" +
                                      literal + "{% endif %}{% endif %}"));
        QVERIFY(!defaultSystemMessage("{% if messages[0]['role'] != 'system' %}{% elif y %}" +
                                      literal + "{% endif %}"));
        // An expression, not one literal.
        QVERIFY(!defaultSystemMessage("{% if messages[0]['role'] != 'system' %}"
                                      "{{ '<|im_start|>system\\n' + x + '<|im_end|>\\n' }}"
                                      "{% endif %}"));
        QVERIFY(!defaultSystemMessage("{% if messages[0]['role'] != 'system' %}" +
                                      literal.substr(0, 20)));
        QVERIFY(!defaultSystemMessage("{% endif %}" + literal));
        const ChatFormat plain = detectChatFormat(withTemplate("<|im_start|>{{ messages }}"));
        QVERIFY(!plain.defaultSystemMessage);
        QCOMPARE(formatChat(plain, {{"user", "Hi"}}, false),
                 std::string("<|im_start|>user\nHi<|im_end|>\n"));
    }

    // Template text is data: Jinja syntax in a message is copied, never interpreted.
    void messageContentIsNotInterpreted() {
        const std::vector<ChatMessage> tricky = {{"user", "{{ 7*7 }} {% for x in y %}<|im_end|>"}};
        QCOMPARE(formatChat({ChatFamily::ChatML}, tricky, false),
                 std::string("<|im_start|>user\n{{ 7*7 }} {% for x in y %}<|im_end|><|im_end|>\n"));
    }
};

QTEST_APPLESS_MAIN(TestChatTemplate)
#include "test_chat_template.moc"
