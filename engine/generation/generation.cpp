#include "engine/generation/generation.h"

#include "engine/base/input_error.h"

namespace samplescope {

std::vector<std::int64_t> known_prompt_ids(std::span<const PromptWord> prompt) {
    std::vector<std::int64_t> ids;
    for (const auto& word : prompt) {
        if (word.id != kUnknownWord) ids.push_back(word.id);
    }
    return ids;
}

std::string join_token_texts(std::span<const std::string> texts) {
    std::string out;
    for (const auto& text : texts) {
        if (text.empty()) continue;
        const bool attached = text == "." || out.empty();
        if (!attached) out += ' ';
        out += text;
    }
    return out;
}

namespace {

std::vector<std::int64_t> checked_context(const LanguageModel& model, std::span<const PromptWord> prompt,
                                          const GenerationState& state) {
    const auto vocab = static_cast<std::int64_t>(model.vocab_size());
    std::vector<std::int64_t> context;
    context.reserve(prompt.size() + state.generated.size());
    for (std::size_t i = 0; i < prompt.size(); ++i) {
        const std::int64_t id = prompt[i].id;
        if (id != kUnknownWord && (id < 0 || id >= vocab)) {
            throw InputError("prompt_ids", "prompt id " + std::to_string(id) + " at position " + std::to_string(i) +
                                               " is outside [0, " + std::to_string(vocab) + ")");
        }
        context.push_back(id);
    }
    for (std::size_t i = 0; i < state.generated.size(); ++i) {
        const std::int64_t id = state.generated[i];
        if (id < 0 || id >= vocab) {
            throw InputError("output_ids", "generated id " + std::to_string(id) + " at position " + std::to_string(i) +
                                               " is outside [0, " + std::to_string(vocab) + ")");
        }
        context.push_back(id);
    }
    return context;
}

Request make_request(Pipeline pipeline, SamplingParams params, std::span<const PromptWord> prompt,
                     const GenerationState& state) {
    Request request(std::move(pipeline), params, known_prompt_ids(prompt), state.generated);
    request.skip_draws(state.draws);
    if (state.mirostat_mu) request.set_mirostat_mu(*state.mirostat_mu);
    return request;
}

}  // namespace

Generation::Generation(std::shared_ptr<const LanguageModel> model, Pipeline pipeline, SamplingParams params,
                       std::vector<PromptWord> prompt, GenerationOptions options, GenerationState state)
    : model_(std::move(model)),
      prompt_(std::move(prompt)),
      options_(options),
      context_(checked_context(*model_, prompt_, state)),
      request_(make_request(std::move(pipeline), params, prompt_, state)) {}

const std::vector<double>& Generation::next_row() {
    if (!row_ready_) {
        model_->next_logits({context_, prompt_.size()}, row_);
        row_ready_ = true;
    }
    return row_;
}

bool Generation::ended() const {
    const auto end = model_->end_id();
    return options_.stop_at_end && end && context_.size() > prompt_.size() && context_.back() == *end;
}

GenerationStep Generation::step() {
    if (ended()) {
        throw InputError("steps", "the text has ended (" + model_->labels()[static_cast<std::size_t>(context_.back())] +
                                      "); take that token back or start again to go on");
    }
    GenerationStep out;
    out.trace = request_.step_pipeline(next_row());
    out.token = out.trace.trace.token;
    out.text = model_->token_text(out.token);
    out.ends = model_->end_id() == out.token;
    context_.push_back(out.token);
    row_ready_ = false;
    return out;
}

void Generation::set_params(const SamplingParams& params) { request_.set_params(params); }

GenerationState Generation::state() const {
    GenerationState state;
    state.generated.assign(generated().begin(), generated().end());
    state.draws = request_.draws_consumed();
    if (request_.params().mirostat != 0) state.mirostat_mu = request_.mirostat_mu();
    return state;
}

std::string Generation::text() const {
    std::vector<std::string> texts;
    texts.reserve(context_.size());
    for (const auto& word : prompt_) texts.push_back(word.text);
    for (const auto id : generated()) texts.push_back(model_->token_text(id));
    return join_token_texts(texts);
}

std::string Generation::generated_text() const {
    std::vector<std::string> texts;
    for (const auto id : generated()) texts.push_back(model_->token_text(id));
    return join_token_texts(texts);
}

}  // namespace samplescope
