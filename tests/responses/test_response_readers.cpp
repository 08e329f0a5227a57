// The response readers of engine/responses/: every example of
// examples/responses/ read field for field, and bad input of every kind
// refused with one line naming the field and its position.
#include <QtTest>

#include <cmath>
#include <fstream>
#include <sstream>

#include "engine/base/input_error.h"
#include "engine/responses/explain_setup.h"
#include "engine/responses/request_settings.h"
#include "engine/responses/response_loader.h"

using namespace samplescope;

namespace {

const std::string kExamples = std::string(SAMPLESCOPE_TEST_DATA) + "/../../examples/responses/";

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

Response example(const std::string& name, const ResponseLoadOptions& options = {}) {
    return load_response_file(kExamples + name, options);
}

// The one-line message a bad response gets; fails the test when it loads.
QString refusal(const std::string& text, const std::string& source = "bad.json", const ResponseLoadOptions& options = {}) {
    try {
        load_response_bytes(text, source, options);
    } catch (const InputError& error) {
        const QString message = QString::fromUtf8(error.what());
        if (message.contains('\n')) return "MORE THAN ONE LINE: " + message;
        return message;
    }
    return "LOADED";
}

void replace_once(std::string& text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    QVERIFY2(at != std::string::npos, from.c_str());
    text.replace(at, from.size(), to);
}

#define EXPECT_REFUSED(text, ...)                                                              \
    do {                                                                                       \
        const QString message_ = refusal(text);                                                \
        for (const char* part_ : {__VA_ARGS__}) {                                              \
            QVERIFY2(message_.contains(QString::fromUtf8(part_)), qPrintable(message_ + " lacks " + part_)); \
        }                                                                                      \
    } while (0)

}  // namespace

class TestResponseReaders : public QObject {
    Q_OBJECT

private slots:
    void openAiChat() {
        const Response r = example("openai_chat.json");
        QCOMPARE(r.format, ResponseFormat::OpenAiChat);
        QVERIFY(!r.streamed);
        QCOMPARE(r.positions.size(), std::size_t{9});
        QCOMPARE(r.text, std::string("Paris is the capital of France \xE2\x98\x95."));
        // The emoji is two tokens, each a part of its bytes.
        QCOMPARE(r.positions[6].token.bytes, std::string(" \xE2\x98"));
        QCOMPARE(r.positions[7].token.bytes, std::string("\x95"));
        for (const auto& p : r.positions) {
            QCOMPARE(p.top.size(), std::size_t{5});
            QVERIFY(p.token_in_top.has_value());
            QVERIFY(*p.token.value <= 0.0);
            for (std::size_t i = 1; i < p.top.size(); ++i) QVERIFY(*p.top[i - 1].value >= *p.top[i].value);
        }
        QCOMPARE(r.finish_reason, std::string("stop"));
        const RequestSettings request = load_request_settings_file(kExamples + "openai_chat.request.json");
        QCOMPARE(request.top_logprobs.value(), std::int64_t{5});
        QCOMPARE(request.values.size(), std::size_t{2});
    }

    void vllmChatStream() {
        const Response r = example("vllm_chat_stream.txt");
        QVERIFY(r.streamed);
        QCOMPARE(r.positions.size(), std::size_t{8});
        QCOMPARE(r.text, std::string("Once upon a time there lived an owl"));
        // Every list leads with the sampled token, and " there" is not the largest of its own.
        QVERIFY(r.sampled_listed_first);
        QCOMPARE(r.finish_reason, std::string("length"));
    }

    // A vLLM server run with --logprobs-mode processed_logprobs: ids its top_k cut read -9999.0.
    void vllmProcessedChat() {
        const Response r = example("vllm_processed_chat.json");
        QCOMPARE(r.positions.size(), std::size_t{4});
        for (const auto& p : r.positions) QVERIFY(std::isinf(*p.top.back().value) && *p.top.back().value < 0);
        QVERIFY(r.sampled_listed_first);  // "." (rank 2) leads its list
        QVERIFY(r.settings.has_value());
    }

    void openAiCompletionWithItsRequest() {
        const Response r = example("openai_completion.json");
        QCOMPARE(r.format, ResponseFormat::OpenAiCompletion);
        QCOMPARE(r.positions.size(), std::size_t{6});
        // A step without logprobs: null and null.
        QVERIFY(!r.positions[3].token.value);
        QVERIFY(r.positions[3].top.empty());
        QVERIFY(r.settings.has_value());
        SamplingParams params;
        apply_request_settings(*r.settings, params);
        QCOMPARE(params.temperature, 0.6);
        QCOMPARE(params.min_p, 0.05);
        // vLLM's legacy lists hold the sampled token too: N + 1 entries at most.
        QVERIFY(r.positions[0].top.size() <= 4);
    }

    void llamaCppForms() {
        const Response current = example("llamacpp_completion.json");
        QCOMPARE(current.format, ResponseFormat::LlamaCpp);
        QCOMPARE(current.mode, std::string("n_probs"));
        QCOMPARE(current.positions[0].token.id.value(), std::int64_t{20517});
        // llama.cpp's stand-in for log(0), -FLT_MAX, reads as -inf.
        QVERIFY(std::isinf(*current.positions[1].top.back().value));
        QCOMPARE(current.positions[2].token.bytes, std::string(" \xE2\x98"));
        QCOMPARE(current.text, std::string("Bonjour \xE2\x98\x95!"));
        QVERIFY(current.settings.has_value());
        QVERIFY(current.settings->samplers.has_value());

        const Response stream = example("llamacpp_post_sampling_stream.txt");
        QVERIFY(stream.streamed);
        QCOMPARE(stream.mode, std::string("post_sampling_probs"));
        QCOMPARE(stream.positions.size(), std::size_t{3});
        QCOMPARE(stream.finish_reason, std::string("eos"));
        QVERIFY(stream.settings->post_sampling_probs.value());

        const Response old = example("llamacpp_legacy.json");
        QCOMPARE(old.format, ResponseFormat::LlamaCppLegacy);
        // "byte: \xe2" is the one byte it names.
        QCOMPARE(old.positions[2].token.bytes, std::string("\xE2"));
        QCOMPARE(old.text, std::string("Hi \xE2\x98\x95"));
        QVERIFY(old.positions[0].token.value.has_value());  // taken from its entry among probs
    }

    void vllmRequestOutput() {
        const Response r = example("vllm_request_output.json");
        QCOMPARE(r.format, ResponseFormat::VllmOffline);
        QCOMPARE(r.mode, std::string("raw_logprobs"));
        QCOMPARE(r.positions.size(), std::size_t{5});
        QCOMPARE(r.positions[3].rank.value(), std::int64_t{7});
        QCOMPARE(r.prompt_ids.size(), std::size_t{4});
        QVERIFY(r.settings.has_value());
    }

    void hfRows() {
        const Response logits = example("hf_logits.safetensors");
        QCOMPARE(logits.format, ResponseFormat::HfRows);
        QCOMPARE(logits.mode, std::string("output_logits"));
        QCOMPARE(logits.vocab_size().value(), std::size_t{16});
        QCOMPARE(logits.positions.size(), std::size_t{7});
        QCOMPARE(logits.prompt_ids.size(), std::size_t{3});
        ResponseLoadOptions options;
        options.logprobs_mode = "output_scores";
        options.generated_ids = {10, 4, 5, 7, 3, 8, 9};
        const Response scores = example("hf_scores.npy", options);
        QCOMPARE(scores.mode, std::string("output_scores"));
        QCOMPARE(scores.positions[4].token.id.value(), std::int64_t{3});
        // An .npy does not say which of generate()'s outputs it holds.
        options.logprobs_mode.clear();
        QVERIFY_THROWS_EXCEPTION(InputError, example("hf_scores.npy", options));
        // Ids and rows must agree, and ids must be in the vocabulary.
        options.logprobs_mode = "output_scores";
        options.generated_ids = {10, 4};
        QVERIFY_THROWS_EXCEPTION(InputError, example("hf_scores.npy", options));
        options.generated_ids = {10, 4, 5, 7, 3, 8, 16};
        try {
            example("hf_scores.npy", options);
            QFAIL("an id outside the vocabulary loaded");
        } catch (const InputError& error) {
            QVERIFY(QString(error.what()).contains("outside the vocabulary [0, 16)"));
        }
    }

    // The same response whole, as a JSON array of chunks, and as the string of its stream.
    void streamsEqualTheirWholeResponse() {
        const std::string stream = read_text(kExamples + "vllm_chat_stream.txt");
        const Response a = load_response_bytes(stream, "s.txt");
        std::string as_string = "{\"request\": {\"top_k\": 2}, \"response\": " + nlohmann::json(stream).dump() + "}";
        const Response b = load_response_bytes(as_string, "s.json");
        QCOMPARE(a.text, b.text);
        QCOMPARE(b.settings->values.size(), std::size_t{1});
    }

    void badJsonAndStreams() {
        const std::string chat = read_text(kExamples + "openai_chat.json");
        EXPECT_REFUSED(chat.substr(0, chat.size() / 2), "bad.json", "malformed JSON at byte", "ends early");
        EXPECT_REFUSED("{\"choices\": [{\"logprobs\": {\"content\": [{\"token\": \"a\", \"logprob\": NaN}]}}]}", "NaN");
        // A stream cut inside a chunk, and one that stops before its end.
        const std::string stream = read_text(kExamples + "vllm_chat_stream.txt");
        const auto cut = stream.find("\" lived\"");
        const auto line = 1 + std::count(stream.begin(), stream.begin() + static_cast<std::ptrdiff_t>(cut), '\n');
        const QString cut_message = refusal(stream.substr(0, cut), "s.txt");
        QVERIFY2(cut_message.contains(QString("line %1: malformed JSON").arg(line)), qPrintable(cut_message));
        const auto last = stream.rfind("data: {");
        QVERIFY(refusal(stream.substr(0, last), "s.txt").contains("stops before its end"));
        EXPECT_REFUSED(std::string(70, '[') + std::string(70, ']'), "nested more than 64 levels");
        EXPECT_REFUSED("{\"choices\": [{\"index\": 0, \"logprobs\": null}]}", "choices[0].logprobs", "did not ask for logprobs");
        EXPECT_REFUSED("{\"foo\": 1}", "not a response with logprobs");
    }

    void badNumbers() {
        std::string chat = read_text(kExamples + "openai_chat.json");
        std::string positive = chat;
        replace_once(positive, "\"logprob\": -0.0847956", "\"logprob\": 0.0847956");
        EXPECT_REFUSED(positive, "choices[0].logprobs.content[0]", "a log probability is at most 0");
        std::string llama = read_text(kExamples + "llamacpp_post_sampling_stream.txt");
        replace_once(llama, "\"prob\": 0.7404", "\"prob\": 1.7404");
        QVERIFY(refusal(llama, "l.txt").contains("a probability is in [0, 1]"));
        EXPECT_REFUSED("{\"choices\": [{\"index\": 0, \"logprobs\": {\"content\": [{\"token\": \"a\", \"logprob\": -1, "
                       "\"bytes\": [97, 800]}]}}]}",
                       "choices[0].logprobs.content[0].bytes[1] must be a byte");
    }

    // A token and its own entry among the alternatives must agree.
    void tokensMatchTheirAlternatives() {
        std::string chat = read_text(kExamples + "openai_chat.json");
        // The token " is" says -0.05 while its entry says otherwise.
        const auto at = chat.find("\"token\": \" is\"");
        const auto value = chat.find("\"logprob\": ", at);
        const auto end = chat.find(',', value);
        chat.replace(value, end - value, "\"logprob\": -0.05");
        EXPECT_REFUSED(chat, "choices[0].logprobs.content[1]", "but its entry among the alternatives has");
        // A token above the lowest alternative that is not among them.
        const std::string absent =
            "{\"choices\": [{\"index\": 0, \"finish_reason\": \"stop\", \"logprobs\": {\"content\": [{\"token\": \"x\", "
            "\"logprob\": -0.1, \"top_logprobs\": [{\"token\": \"a\", \"logprob\": -0.5}, {\"token\": \"b\", "
            "\"logprob\": -2.0}]}]}}]}";
        EXPECT_REFUSED(absent, "content[0]", "above the lowest alternative shown", "not among the alternatives");
        // Its entry at -9999 (-inf) while it says -0.94 (a fuzz finding: a finite and an infinite number differ).
        const std::string against_inf =
            "{\"choices\": [{\"index\": 0, \"finish_reason\": \"stop\", \"logprobs\": {\"content\": [{\"token\": \".\", "
            "\"logprob\": -0.94, \"top_logprobs\": [{\"token\": \".\", \"logprob\": -9999.0}]}]}}]}";
        EXPECT_REFUSED(against_inf, "content[0]", "has -0.94 but its entry among the alternatives has -inf");
        // llama.cpp: the same id twice, and an id whose number differs.
        std::string llama = read_text(kExamples + "llamacpp_completion.json");
        std::string twice = llama;
        replace_once(twice, "\"id\": 9906", "\"id\": 13347");
        EXPECT_REFUSED(twice, "completion_probabilities[0]", "id 13347 twice");
        // vLLM: a rank that more listed ids contradict.
        std::string vllm = read_text(kExamples + "vllm_request_output.json");
        replace_once(vllm, "\"rank\": 7", "\"rank\": 2");
        EXPECT_REFUSED(vllm, "outputs[0].logprobs[3]", "has rank 2 but 4 listed ids");
        // Legacy arrays of different lengths.
        std::string legacy = read_text(kExamples + "openai_completion.json");
        replace_once(legacy, "\"token_logprobs\": [", "\"token_logprobs\": [-0.1, ");
        EXPECT_REFUSED(legacy, "choices[0].logprobs.token_logprobs has 7 entries for 6 tokens");
    }

    void idsOutsideTheVocabulary() {
        const Response r = example("vllm_request_output.json");
        try {
            response_detail::check_ids(r, 1000);
            QFAIL("ids beyond V = 1000 passed");
        } catch (const InputError& error) {
            QVERIFY(QString(error.what()).contains("outputs[0].logprobs[0]: id 21831 is outside the vocabulary [0, 1000)"));
        }
        EXPECT_REFUSED("{\"outputs\": [{\"token_ids\": [-3], \"logprobs\": [{\"-3\": {\"logprob\": -0.1}}]}]}", "not a token id");
    }

    void badRequests() {
        const auto body = [](const std::string& text) {
            return read_request_settings(nlohmann::ordered_json::parse(text), "req.json", "request");
        };
        try {
            body("{\"top_p\": 1.5}");
            QFAIL("top_p 1.5 passed");
        } catch (const InputError& error) {
            QVERIFY(QString(error.what()).contains("req.json: request.top_p is not valid"));
        }
        QVERIFY_THROWS_EXCEPTION(InputError, body("{\"temperature\": \"hot\"}"));
        QVERIFY_THROWS_EXCEPTION(InputError, body("{\"top_k\": 2.5}"));
        QVERIFY_THROWS_EXCEPTION(InputError, body("{\"logprobs_mode\": \"cooked\"}"));
        QCOMPARE(body("{\"top_k\": -1}").values.front().second, 0.0);  // vLLM's "all"
        QVERIFY(body("{\"temperature\": null, \"model\": \"m\"}").values.empty());
        QCOMPARE(body("{\"logit_bias\": {\"50256\": -100}}").unmodelled.size(), std::size_t{1});
    }

    void modesAgreeWithTheFile() {
        const Response r = example("llamacpp_post_sampling_stream.txt");
        ExplainRequest request;
        request.logprobs_mode = "n_probs";
        QVERIFY_THROWS_EXCEPTION(InputError, resolve_explain(r, request));
        request.logprobs_mode = "no_such_mode";
        ResponseLoadOptions options;
        options.logprobs_mode = "no_such_mode";
        QVERIFY_THROWS_EXCEPTION(InputError, example("openai_chat.json", options));
        // With a logit mode the numbers are read as logits: positive ones pass.
        std::string chat = read_text(kExamples + "openai_chat.json");
        for (auto at = chat.find("-0.0847956"); at != std::string::npos; at = chat.find("-0.0847956")) chat.erase(at, 1);
        options.logprobs_mode = "raw_logits";
        QVERIFY(!load_response_bytes(chat, "c.json", options).normalised);
    }
};

QTEST_APPLESS_MAIN(TestResponseReaders)
#include "test_response_readers.moc"
