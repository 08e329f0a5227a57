// How fast a response is read and explained: a 4,096-token OpenAI chat
// response with 20 alternatives per token (whole, and streamed as data:
// chunks), read and explained under vLLM's pipeline with temperature,
// top-k, top-p and min-p on, next to the yardstick of parsing the same text
// with nlohmann::json alone (the least any JSON reader does). Figures go to
// docs/responses.md; nothing here fails on timing.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string_view>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/responses/explain_setup.h"
#include "engine/responses/response_loader.h"

namespace {

constexpr int kTokens = 4096;
constexpr int kAlternatives = 20;

// A chat response whose numbers look like a model's: a peaked distribution at each position.
struct Texts {
    std::string whole;
    std::string stream;

    Texts() {
        std::mt19937_64 random(5);
        nlohmann::ordered_json content = nlohmann::ordered_json::array();
        std::string stream_text;
        for (int t = 0; t < kTokens; ++t) {
            std::vector<double> logits(kAlternatives);
            for (auto& x : logits) x = std::normal_distribution<double>(0.0, 2.5)(random);
            std::sort(logits.begin(), logits.end(), std::greater<>());
            double sum = 0.0;
            for (const double x : logits) sum += std::exp(x);
            sum /= 0.97;  // the 20 hold 97% of the mass
            const int chosen = static_cast<int>(random() % 4);
            nlohmann::ordered_json item;
            const auto entry = [&](int i) {
                const std::string token = " tok" + std::to_string(t) + "_" + std::to_string(i);
                nlohmann::ordered_json e;
                e["token"] = token;
                e["logprob"] = static_cast<float>(logits[i] - std::log(sum));
                e["bytes"] = std::vector<int>(token.begin(), token.end());
                return e;
            };
            item = entry(chosen);
            item["top_logprobs"] = nlohmann::ordered_json::array();
            for (int i = 0; i < kAlternatives; ++i) item["top_logprobs"].push_back(entry(i));
            content.push_back(item);
            nlohmann::ordered_json chunk;
            chunk["id"] = "chatcmpl-bench";
            chunk["object"] = "chat.completion.chunk";
            chunk["choices"] = {{{"index", 0}, {"delta", {{"content", item["token"]}}}, {"logprobs", {{"content", {item}}}},
                                 {"finish_reason", t + 1 == kTokens ? nlohmann::ordered_json("length") : nlohmann::ordered_json()}}};
            stream_text += "data: " + chunk.dump() + "\n\n";
        }
        stream = stream_text + "data: [DONE]\n\n";
        nlohmann::ordered_json document;
        document["id"] = "chatcmpl-bench";
        document["object"] = "chat.completion";
        document["choices"] = {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", ""}}},
                                {"logprobs", {{"content", content}}}, {"finish_reason", "length"}}};
        whole = document.dump();
    }
};

const Texts& texts() {
    static const Texts instance;
    return instance;
}

samplescope::ExplainRequest request() {
    samplescope::ExplainRequest out;
    out.pipeline = "vllm";
    out.flags = {{samplescope::Param::Temperature, 0.8},
                 {samplescope::Param::TopK, 40},
                 {samplescope::Param::TopP, 0.9},
                 {samplescope::Param::MinP, 0.05}};
    return out;
}

void parse_only(benchmark::State& state, const std::string& text) {
    for (auto _ : state) {
        auto document = nlohmann::ordered_json::parse(text);
        benchmark::DoNotOptimize(document);
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}

// The stream's yardstick: each data line parsed on its own.
void parse_lines(benchmark::State& state, const std::string& text) {
    for (auto _ : state) {
        std::size_t start = 0;
        while (start < text.size()) {
            const std::size_t end = text.find('\n', start);
            const std::string_view line(text.data() + start, (end == std::string::npos ? text.size() : end) - start);
            if (line.size() > 6 && line.substr(0, 6) == "data: " && line != "data: [DONE]") {
                auto chunk = nlohmann::ordered_json::parse(line.substr(6));
                benchmark::DoNotOptimize(chunk);
            }
            start = end == std::string::npos ? text.size() : end + 1;
        }
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}

void read_only(benchmark::State& state, const std::string& text, const char* name) {
    for (auto _ : state) {
        auto response = samplescope::load_response_bytes(text, name);
        benchmark::DoNotOptimize(response.positions.data());
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}

void read_and_explain(benchmark::State& state, const std::string& text, const char* name) {
    std::size_t excluded = 0;
    for (auto _ : state) {
        const auto response = samplescope::load_response_bytes(text, name);
        const auto setup = samplescope::resolve_explain(response, request());
        const auto explanation = samplescope::explain_response(response, setup.settings);
        excluded = explanation.excluded;
        benchmark::DoNotOptimize(explanation.tokens.data());
    }
    state.counters["excluded"] = static_cast<double>(excluded);
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}

void explain_only(benchmark::State& state) {
    const auto response = samplescope::load_response_bytes(texts().whole, "bench.json");
    const auto setup = samplescope::resolve_explain(response, request());
    for (auto _ : state) {
        auto explanation = samplescope::explain_response(response, setup.settings);
        benchmark::DoNotOptimize(explanation.tokens.data());
    }
}

BENCHMARK_CAPTURE(parse_only, whole_yardstick, texts().whole)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(read_only, whole, texts().whole, "bench.json")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(read_and_explain, whole, texts().whole, "bench.json")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(parse_lines, stream_yardstick, texts().stream)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(read_and_explain, stream, texts().stream, "bench.txt")->Unit(benchmark::kMillisecond);
BENCHMARK(explain_only)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
