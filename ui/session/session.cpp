#include "ui/session/session.h"

#include <algorithm>

#include "engine/base/input_error.h"
#include "engine/pipelines/sampler.h"
#include "engine/io/token_display.h"
#include "engine/core/token_history.h"
#include "ui/common/cpu_state.h"
#include "ui/common/examples.h"

namespace samplescope::ui {

namespace {

SamplingParams withSeed(SamplingParams params) {
    if (!params.seed) params.seed = 0;
    return params;
}

}  // namespace

Session::Session(QObject* parent)
    : QObject(parent),
      state_{std::make_shared<const std::vector<double>>(workedExample().logits), std::make_shared<const TokenLabels>(),
             nullptr, {}, nullptr, 0, QString(), Request(withSeed(workedExample().params)), std::nullopt} {}

void Session::replaceLogits(std::vector<double> logits, std::vector<std::string> labels) {
    check_logits(logits);
    if (!labels.empty()) labels.resize(logits.size());
    state_.logits = std::make_shared<const std::vector<double>>(std::move(logits));
    relabel(std::move(labels));
}

// What every view shows: the vocabulary's readable label where it names the
// id, else the row's own label made readable (visible spaces and controls).
void Session::relabel(std::vector<std::string> row_labels) {
    std::vector<std::string> display;
    state_.label_warnings.clear();
    if (state_.vocabulary) {
        samplescope::VocabularyLabels from_vocabulary = token_labels(*state_.vocabulary, vocabSize());
        display = std::move(from_vocabulary.labels);
        state_.label_warnings = std::move(from_vocabulary.warnings);
    }
    if (!row_labels.empty()) {
        display.resize(vocabSize());
        for (std::size_t id = 0; id < row_labels.size() && id < display.size(); ++id) {
            if (display[id].empty() && !row_labels[id].empty()) display[id] = visible_text(row_labels[id]);
        }
    }
    state_.labels = std::make_shared<const TokenLabels>(std::move(row_labels), std::move(display));
}

// A row of another size may leave history ids out of range: those ids are
// dropped from the history (the history panel shows what remains).
void Session::keepHistoryInRange() {
    const auto in_range = [this](std::vector<std::int64_t> ids) {
        std::erase_if(ids, [this](std::int64_t id) { return id < 0 || static_cast<std::size_t>(id) >= vocabSize(); });
        return ids;
    };
    const auto prompt = in_range(state_.request.prompt_ids());
    const auto output = in_range(state_.request.output_ids());
    if (prompt.size() != state_.request.prompt_ids().size() || output.size() != state_.request.output_ids().size()) {
        const std::uint64_t draws = state_.request.draws_consumed();
        state_.request = Request(state_.request.params(), prompt, output);
        state_.request.skip_draws(draws);
        emit historyChanged();
    }
}

void Session::setLogits(std::vector<double> logits, std::vector<std::string> labels, const QString& source) {
    replaceLogits(std::move(logits), std::move(labels));
    state_.matrix.reset();
    state_.matrix_row = 0;
    state_.source = source;
    keepHistoryInRange();
    emit logitsChanged();
}

void Session::setMatrix(LogitsMatrix matrix, const QString& source) {
    if (matrix.rows == 0) throw InputError("logits", source.toStdString() + ": the file holds no rows");
    const bool carries_history = !matrix.prompt_ids.empty() || !matrix.output_ids.empty();
    if (carries_history) {
        try {
            check_history_ids(matrix.prompt_ids, matrix.cols, "prompt_ids");
            check_history_ids(matrix.output_ids, matrix.cols, "output_ids");
        } catch (const InputError& error) {
            throw InputError(error.field(), source.toStdString() + ": " + error.what());
        }
    }
    replaceLogits(matrix.row(0), matrix.labels);
    state_.matrix = std::make_shared<const LogitsMatrix>(std::move(matrix));
    state_.matrix_row = 0;
    state_.source = source;
    if (carries_history) {
        // The file's ids are the request's history: a fresh request on the same seed.
        state_.request = Request(state_.request.params(), state_.matrix->prompt_ids, state_.matrix->output_ids);
        state_.mirostat_mu.reset();
        emit historyChanged();
    } else {
        keepHistoryInRange();
    }
    emit logitsChanged();
}

void Session::setMatrixRow(std::size_t row) {
    if (!state_.matrix || row >= state_.matrix->rows) {
        throw InputError("row", "row " + std::to_string(row) + " is outside [0, " + std::to_string(matrixRows()) + ")");
    }
    replaceLogits(state_.matrix->row(row), state_.matrix->labels);
    state_.matrix_row = row;
    keepHistoryInRange();
    emit logitsChanged();
}

void Session::setLogit(std::size_t id, double value) {
    if (id >= vocabSize()) return;
    std::vector<double> logits(*state_.logits);
    logits[id] = value;
    replaceLogits(std::move(logits), state_.labels->raw());
    emit logitsChanged();
}

void Session::setLabel(std::size_t id, const std::string& label) {
    if (id >= vocabSize()) return;
    std::vector<std::string> labels = state_.labels->raw();
    if (labels.empty()) labels.resize(vocabSize());
    labels[id] = label;
    relabel(std::move(labels));
    emit logitsChanged();
}

void Session::insertTokens(std::size_t at, std::size_t count, double value) {
    at = std::min(at, vocabSize());
    std::vector<double> logits(*state_.logits);
    logits.insert(logits.begin() + static_cast<std::ptrdiff_t>(at), count, value);
    std::vector<std::string> labels = state_.labels->raw();
    if (!labels.empty()) labels.insert(labels.begin() + static_cast<std::ptrdiff_t>(at), count, std::string());
    replaceLogits(std::move(logits), std::move(labels));
    state_.matrix.reset();
    emit logitsChanged();
}

void Session::removeTokens(std::vector<std::size_t> ids) {
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    std::erase_if(ids, [this](std::size_t id) { return id >= vocabSize(); });
    if (ids.empty()) return;
    std::vector<double> logits;
    std::vector<std::string> labels;
    const auto& old_labels = state_.labels->raw();
    std::size_t next = 0;
    for (std::size_t id = 0; id < vocabSize(); ++id) {
        if (next < ids.size() && ids[next] == id) {
            ++next;
            continue;
        }
        logits.push_back((*state_.logits)[id]);
        if (!old_labels.empty()) labels.push_back(old_labels[id]);
    }
    replaceLogits(std::move(logits), std::move(labels));
    state_.matrix.reset();
    keepHistoryInRange();
    emit logitsChanged();
}

void Session::setParams(const SamplingParams& params) {
    const SamplingParams wanted = withSeed(params);
    validate(wanted);
    if (wanted.seed != state_.request.params().seed) {
        state_.request = Request(wanted, state_.request.prompt_ids(), state_.request.output_ids());
        state_.mirostat_mu.reset();
        emit historyChanged();
    } else {
        state_.request.set_params(wanted);
    }
    emit paramsChanged();
}

void Session::setHistory(std::vector<std::int64_t> prompt_ids, std::vector<std::int64_t> output_ids) {
    check_history_ids(prompt_ids, vocabSize(), "prompt_ids");
    check_history_ids(output_ids, vocabSize(), "output_ids");
    const std::uint64_t draws = state_.request.draws_consumed();
    state_.request = Request(state_.request.params(), std::move(prompt_ids), std::move(output_ids));
    state_.request.skip_draws(draws);
    emit historyChanged();
}

void Session::loadExample(const Example& example) {
    const SamplingParams params = withSeed(example.params);
    validate(params);
    replaceLogits(example.logits, example.labels);
    state_.matrix.reset();
    state_.matrix_row = 0;
    state_.source = QString::fromStdString(example.name);
    state_.request = Request(params, example.prompt_ids, example.output_ids);
    state_.mirostat_mu.reset();
    emit logitsChanged();
    emit paramsChanged();
    emit historyChanged();
}

void Session::showGenerationStep(std::shared_ptr<const std::vector<double>> row, std::shared_ptr<const TokenLabels> labels,
                                 const QString& source, std::vector<std::int64_t> prompt_ids,
                                 std::vector<std::int64_t> output_ids, std::uint64_t draws) {
    check_logits(*row);
    check_history_ids(prompt_ids, row->size(), "prompt_ids");
    check_history_ids(output_ids, row->size(), "output_ids");
    Request request(state_.request.params(), std::move(prompt_ids), std::move(output_ids));
    request.skip_draws(draws);
    const bool relabelled = state_.vocabulary != nullptr;
    state_.logits = std::move(row);
    state_.labels = std::move(labels);
    state_.vocabulary.reset();
    state_.label_warnings.clear();
    state_.matrix.reset();
    state_.matrix_row = 0;
    state_.source = source;
    state_.request = std::move(request);
    state_.mirostat_mu.reset();  // the contract's pipeline, which a generation here runs, has no mirostat
    emit logitsChanged();
    if (relabelled) emit labelsChanged();
    emit historyChanged();
}

void Session::setVocabulary(std::shared_ptr<const Vocabulary> vocabulary) {
    state_.vocabulary = std::move(vocabulary);
    relabel(state_.labels->raw());
    emit labelsChanged();
}

void Session::clearVocabulary() {
    if (!state_.vocabulary) return;
    setVocabulary(nullptr);
}

SampleTrace Session::step() {
    clearUpperVectorState();
    SampleTrace trace = state_.request.step(*state_.logits);
    emit historyChanged();
    return trace;
}

void Session::skipDraws(std::uint64_t n) {
    state_.request.skip_draws(n);
    emit historyChanged();
}

void Session::restore(const State& state) {
    state_ = state;
    emit logitsChanged();
    emit labelsChanged();
    emit paramsChanged();
    emit historyChanged();
}

void Session::resetRequest() {
    state_.request.reset();
    state_.mirostat_mu.reset();
    emit historyChanged();
}

}  // namespace samplescope::ui
