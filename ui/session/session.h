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

    // A vocabulary labels every row until it is cleared (it overrides the
    // row's own labels where it names the id, as --vocab does in the CLI).
    void setVocabulary(std::shared_ptr<const Vocabulary> vocabulary);
    void clearVocabulary();
    const std::shared_ptr<const Vocabulary>& vocabulary() const { return vocabulary_; }
    // The loader's warnings for the vocabulary against the current V (another size).
    const std::vector<std::string>& labelWarnings() const { return label_warnings_; }

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
    const std::optional<double>& mirostatMu() const { return mirostat_mu_; }
    void setMirostatMu(std::optional<double> mu) { mirostat_mu_ = mu; }
    // The mu a pipeline step starts from now.
    double mirostatMuNow() const { return mirostat_mu_.value_or(2.0 * request_.params().mirostat_tau); }

    const std::shared_ptr<const std::vector<double>>& logits() const { return logits_; }
    const std::shared_ptr<const TokenLabels>& labels() const { return labels_; }
    std::size_t vocabSize() const { return logits_->size(); }
    std::size_t matrixRows() const { return matrix_ ? matrix_->rows : 1; }
    std::size_t matrixRow() const { return matrix_row_; }
    const QString& source() const { return source_; }
    const Request& request() const { return request_; }
    const SamplingParams& params() const { return request_.params(); }

    // Everything the user can change, as one value (the arrays are shared, so
    // a state costs little): what undo and redo go back and forth between.
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
    State state() const;
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

    std::shared_ptr<const std::vector<double>> logits_;
    std::shared_ptr<const TokenLabels> labels_;
    std::shared_ptr<const Vocabulary> vocabulary_;
    std::vector<std::string> label_warnings_;
    std::shared_ptr<const LogitsMatrix> matrix_;
    std::size_t matrix_row_ = 0;
    QString source_;
    Request request_;
    std::optional<double> mirostat_mu_;
};

}  // namespace samplescope::ui
