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
      logits_(std::make_shared<const std::vector<double>>(workedExample().logits)),
      labels_(std::make_shared<const TokenLabels>()),
      request_(withSeed(workedExample().params)) {}

void Session::replaceLogits(std::vector<double> logits, std::vector<std::string> labels) {
    check_logits(logits);
    if (!labels.empty()) labels.resize(logits.size());
    logits_ = std::make_shared<const std::vector<double>>(std::move(logits));
    relabel(std::move(labels));
}

// What every view shows: the vocabulary's readable label where it names the
// id, else the row's own label made readable (visible spaces and controls).
void Session::relabel(std::vector<std::string> row_labels) {
    std::vector<std::string> display;
    label_warnings_.clear();
    if (vocabulary_) {
        samplescope::VocabularyLabels from_vocabulary = token_labels(*vocabulary_, vocabSize());
        display = std::move(from_vocabulary.labels);
        label_warnings_ = std::move(from_vocabulary.warnings);
    }
    if (!row_labels.empty()) {
        display.resize(vocabSize());
        for (std::size_t id = 0; id < row_labels.size() && id < display.size(); ++id) {
            if (display[id].empty() && !row_labels[id].empty()) display[id] = visible_text(row_labels[id]);
        }
    }
    labels_ = std::make_shared<const TokenLabels>(std::move(row_labels), std::move(display));
}

// A row of another size may leave history ids out of range: those ids are
// dropped from the history (the history panel shows what remains).
void Session::keepHistoryInRange() {
    const auto in_range = [this](std::vector<std::int64_t> ids) {
        std::erase_if(ids, [this](std::int64_t id) { return id < 0 || static_cast<std::size_t>(id) >= vocabSize(); });
        return ids;
    };
    const auto prompt = in_range(request_.prompt_ids());
    const auto output = in_range(request_.output_ids());
    if (prompt.size() != request_.prompt_ids().size() || output.size() != request_.output_ids().size()) {
        const std::uint64_t draws = request_.draws_consumed();
        request_ = Request(request_.params(), prompt, output);
        request_.skip_draws(draws);
        emit historyChanged();
    }
}

void Session::setLogits(std::vector<double> logits, std::vector<std::string> labels, const QString& source) {
    replaceLogits(std::move(logits), std::move(labels));
    matrix_.reset();
    matrix_row_ = 0;
    source_ = source;
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
    matrix_ = std::make_shared<const LogitsMatrix>(std::move(matrix));
    matrix_row_ = 0;
    source_ = source;
    if (carries_history) {
        // The file's ids are the request's history: a fresh request on the same seed.
        request_ = Request(request_.params(), matrix_->prompt_ids, matrix_->output_ids);
        mirostat_mu_.reset();
        emit historyChanged();
    } else {
        keepHistoryInRange();
    }
    emit logitsChanged();
}

void Session::setMatrixRow(std::size_t row) {
    if (!matrix_ || row >= matrix_->rows) {
        throw InputError("row", "row " + std::to_string(row) + " is outside [0, " + std::to_string(matrixRows()) + ")");
    }
    replaceLogits(matrix_->row(row), matrix_->labels);
    matrix_row_ = row;
    keepHistoryInRange();
    emit logitsChanged();
}

void Session::setLogit(std::size_t id, double value) {
    if (id >= vocabSize()) return;
    std::vector<double> logits(*logits_);
    logits[id] = value;
    replaceLogits(std::move(logits), labels_->raw());
    emit logitsChanged();
}

void Session::setLabel(std::size_t id, const std::string& label) {
    if (id >= vocabSize()) return;
    std::vector<std::string> labels = labels_->raw();
    if (labels.empty()) labels.resize(vocabSize());
    labels[id] = label;
    relabel(std::move(labels));
    emit logitsChanged();
}

void Session::insertTokens(std::size_t at, std::size_t count, double value) {
    at = std::min(at, vocabSize());
    std::vector<double> logits(*logits_);
    logits.insert(logits.begin() + static_cast<std::ptrdiff_t>(at), count, value);
    std::vector<std::string> labels = labels_->raw();
    if (!labels.empty()) labels.insert(labels.begin() + static_cast<std::ptrdiff_t>(at), count, std::string());
    replaceLogits(std::move(logits), std::move(labels));
    matrix_.reset();
    emit logitsChanged();
}

void Session::removeTokens(std::vector<std::size_t> ids) {
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    std::erase_if(ids, [this](std::size_t id) { return id >= vocabSize(); });
    if (ids.empty()) return;
    std::vector<double> logits;
    std::vector<std::string> labels;
    const auto& old_labels = labels_->raw();
    std::size_t next = 0;
    for (std::size_t id = 0; id < vocabSize(); ++id) {
        if (next < ids.size() && ids[next] == id) {
            ++next;
            continue;
        }
        logits.push_back((*logits_)[id]);
        if (!old_labels.empty()) labels.push_back(old_labels[id]);
    }
    replaceLogits(std::move(logits), std::move(labels));
    matrix_.reset();
    keepHistoryInRange();
    emit logitsChanged();
}

void Session::setParams(const SamplingParams& params) {
    const SamplingParams wanted = withSeed(params);
    validate(wanted);
    if (wanted.seed != request_.params().seed) {
        request_ = Request(wanted, request_.prompt_ids(), request_.output_ids());
        mirostat_mu_.reset();
        emit historyChanged();
    } else {
        request_.set_params(wanted);
    }
    emit paramsChanged();
}

void Session::setHistory(std::vector<std::int64_t> prompt_ids, std::vector<std::int64_t> output_ids) {
    check_history_ids(prompt_ids, vocabSize(), "prompt_ids");
    check_history_ids(output_ids, vocabSize(), "output_ids");
    const std::uint64_t draws = request_.draws_consumed();
    request_ = Request(request_.params(), std::move(prompt_ids), std::move(output_ids));
    request_.skip_draws(draws);
    emit historyChanged();
}

void Session::loadExample(const Example& example) {
    const SamplingParams params = withSeed(example.params);
    validate(params);
    replaceLogits(example.logits, example.labels);
    matrix_.reset();
    matrix_row_ = 0;
    source_ = QString::fromStdString(example.name);
    request_ = Request(params, example.prompt_ids, example.output_ids);
    mirostat_mu_.reset();
    emit logitsChanged();
    emit paramsChanged();
    emit historyChanged();
}

void Session::setVocabulary(std::shared_ptr<const Vocabulary> vocabulary) {
    vocabulary_ = std::move(vocabulary);
    relabel(labels_->raw());
    emit labelsChanged();
}

void Session::clearVocabulary() {
    if (!vocabulary_) return;
    setVocabulary(nullptr);
}

SampleTrace Session::step() {
    clearUpperVectorState();
    SampleTrace trace = request_.step(*logits_);
    emit historyChanged();
    return trace;
}

void Session::skipDraws(std::uint64_t n) {
    request_.skip_draws(n);
    emit historyChanged();
}

Session::State Session::state() const {
    return State{logits_, labels_, vocabulary_, label_warnings_, matrix_, matrix_row_, source_, request_, mirostat_mu_};
}

void Session::restore(const State& state) {
    logits_ = state.logits;
    labels_ = state.labels;
    vocabulary_ = state.vocabulary;
    label_warnings_ = state.label_warnings;
    matrix_ = state.matrix;
    matrix_row_ = state.matrix_row;
    source_ = state.source;
    request_ = state.request;
    mirostat_mu_ = state.mirostat_mu;
    emit logitsChanged();
    emit labelsChanged();
    emit paramsChanged();
    emit historyChanged();
}

void Session::resetRequest() {
    request_.reset();
    mirostat_mu_.reset();
    emit historyChanged();
}

}  // namespace samplescope::ui
