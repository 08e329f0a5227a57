// What the user is working on: the logits row (and the file matrix it came
// from), labels (the row's own, or a loaded vocabulary's), parameters and the
// engine Request that owns the seed's stream and the history. Every change is
// validated first and refused whole, so bad input never replaces what was there.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <QObject>
#include <QString>

#include "engine/io/logits_loader.h"
#include "engine/pipelines/request.h"
#include "engine/io/vocabulary.h"
#include "ui/common/token_labels.h"

namespace samplescope::ui {

struct Example;

class Session : public QObject {
    Q_OBJECT
public:
    explicit Session(QObject* parent = nullptr);

    // Each throws InputError and changes nothing when the input is not valid.
    void setLogits(std::vector<double> logits, std::vector<std::string> labels, const QString& source);
    // Shows row 0; ids the file carries (prompt_ids, output_ids) become the history.
    void setMatrix(LogitsMatrix matrix, const QString& source);
    void setMatrixRow(std::size_t row);
    void setLogit(std::size_t id, double value);
    void setLabel(std::size_t id, const std::string& label);
    void insertTokens(std::size_t at, std::size_t count, double value);
    void removeTokens(std::vector<std::size_t> ids);  // all or none
    void setParams(const SamplingParams& params);  // a new seed starts a new request
    void setHistory(std::vector<std::int64_t> prompt_ids, std::vector<std::int64_t> output_ids);
    void loadExample(const Example& example);
    // One step of a text a model writes (ui/generate/): the model's row for the
    // text so far, labelled by the model (a loaded vocabulary is set aside), and
    // a fresh request on the same parameters standing where the text does: the
    // prompt's known ids, the ids written so far and the draws they consumed.
    // The arrays are shared, not copied: a step costs no relabelling.
    void showGenerationStep(std::shared_ptr<const std::vector<double>> row, std::shared_ptr<const TokenLabels> labels,
                            const QString& source, std::vector<std::int64_t> prompt_ids,
                            std::vector<std::int64_t> output_ids, std::uint64_t draws);

    // A vocabulary labels every row until it is cleared (it overrides the
    // row's own labels where it names the id, as --vocab does in the CLI).
    void setVocabulary(std::shared_ptr<const Vocabulary> vocabulary);
    void clearVocabulary();
    const std::shared_ptr<const Vocabulary>& vocabulary() const { return state_.vocabulary; }
    // The loader's warnings for the vocabulary against the current V (another size).
    const std::vector<std::string>& labelWarnings() const { return state_.label_warnings; }

    // Discards n uniforms of the stream (a decode worker after a prefill worker's draws).
    void skipDraws(std::uint64_t n);
    // Samples the next token for real: appends it and advances the stream.
    SampleTrace step();
    // Back to the seed's first draw and the history the request started with,
    // and mirostat's mu back to 2 tau.
    void resetRequest();

    // Mirostat's state for the pipeline views (the contract's pipeline never
    // runs mirostat): the mu the last Step left on a pipeline that ran it, or
    // nothing for a fresh request (2 tau, Request::mirostat_mu's rule).
    // Cleared with the request: reset, a new seed, an example, a file's history.
    const std::optional<double>& mirostatMu() const { return state_.mirostat_mu; }
    void setMirostatMu(std::optional<double> mu) { state_.mirostat_mu = mu; }
    // The mu a pipeline step starts from now.
    double mirostatMuNow() const { return state_.mirostat_mu.value_or(2.0 * state_.request.params().mirostat_tau); }

    const std::shared_ptr<const std::vector<double>>& logits() const { return state_.logits; }
    const std::shared_ptr<const TokenLabels>& labels() const { return state_.labels; }
    std::size_t vocabSize() const { return state_.logits->size(); }
    std::size_t matrixRows() const { return state_.matrix ? state_.matrix->rows : 1; }
    std::size_t matrixRow() const { return state_.matrix_row; }
    const QString& source() const { return state_.source; }
    const Request& request() const { return state_.request; }
    const SamplingParams& params() const { return state_.request.params(); }

    // Everything the user can change, held as one value (the arrays are
    // shared, so a copy costs little): what undo and redo go back and forth between.
    struct State {
        std::shared_ptr<const std::vector<double>> logits;
        std::shared_ptr<const TokenLabels> labels;
        std::shared_ptr<const Vocabulary> vocabulary;
        std::vector<std::string> label_warnings;
        std::shared_ptr<const LogitsMatrix> matrix;
        std::size_t matrix_row = 0;
        QString source;
        Request request;
        std::optional<double> mirostat_mu;
    };
    const State& state() const { return state_; }
    // Puts a state back whole and tells every listener, as a change of each part would.
    void restore(const State& state);

signals:
    void logitsChanged();
    void paramsChanged();
    void historyChanged();
    void labelsChanged();  // a vocabulary was set or cleared (logitsChanged covers the rest)

private:
    void replaceLogits(std::vector<double> logits, std::vector<std::string> labels);
    void relabel(std::vector<std::string> row_labels);
    void keepHistoryInRange();

    State state_;
};

}  // namespace samplescope::ui
