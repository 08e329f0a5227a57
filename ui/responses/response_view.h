// The "Response" tab: a server's response with logprobs (File > Open
// response...), its generated text with each token coloured by its verdict
// and its probability, and for the token clicked its alternatives as a chart
// (the mass outside them as one "rest" bar), its rank, entropy bounds and
// the verdict of every step of the chosen pipeline with the reason
// (engine/responses/explain.h). The request's parameters come from the file,
// a request file, or the fields here; a token opens in the main view as a row.
#pragma once

#include <optional>

#include <QString>
#include <QWidget>

#include "engine/responses/explain.h"
#include "engine/responses/explain_setup.h"
#include "engine/responses/response.h"
#include "engine/responses/response_row.h"

class QComboBox;
class QCustomPlot;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTableWidget;
class QTextBrowser;

namespace samplescope::ui {

class ResponseView : public QWidget {
    Q_OBJECT
public:
    explicit ResponseView(QWidget* parent = nullptr);

    // Each returns false, shows the one-line refusal and keeps what was open on bad input.
    bool openResponseFile(const QString& path);
    bool openRequestFile(const QString& path);
    // A response already read (tests, other callers).
    bool setResponse(Response response);
    // File dialogs for the two (File > Open response... uses the first).
    void openResponseDialog();
    void openRequestDialog();

    void selectPosition(int position);
    int selectedPosition() const { return selected_; }
    const Response* response() const { return response_ ? &*response_ : nullptr; }
    const ResponseExplanation* explanation() const { return explanation_ ? &*explanation_ : nullptr; }
    const ExplainSetup* setup() const { return setup_ ? &*setup_ : nullptr; }
    // The selected token as a row for the stage views; throws InputError when it has none.
    ResponseRow selectedRow() const;

    QString summaryText() const;
    QString errorText() const { return error_; }
    QTextBrowser* textView() const { return text_; }
    QCustomPlot* chart() const { return chart_; }
    QTableWidget* stageTable() const { return stages_; }
    QComboBox* pipelineCombo() const { return pipeline_combo_; }
    QComboBox* modeCombo() const { return mode_combo_; }
    QLineEdit* paramEdit(Param param) const;
    QSpinBox* positionSpin() const { return position_spin_; }
    QPushButton* openRowButton() const { return open_row_; }
    QLabel* tokenLabel() const { return token_label_; }

signals:
    void openRowRequested();
    void errorRaised(const QString& message);
    void responseOpened(const QString& source);

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    // Explains `response` under `request`; on success both replace what was open.
    bool explainWith(Response response, ExplainRequest request, const QString& what);
    void showError(const QString& message);
    void showParams();
    void renderText();
    void showToken();
    void drawChart(const TokenExplanation& token);
    void fillStages(const TokenExplanation& token);
    void editParam(Param param);

    std::optional<Response> response_;
    ExplainRequest request_;
    std::optional<ExplainSetup> setup_;
    std::optional<ResponseExplanation> explanation_;
    int selected_ = -1;
    QString error_;

    QLabel* source_label_ = nullptr;
    QLabel* summary_label_ = nullptr;
    QLabel* error_label_ = nullptr;
    QComboBox* pipeline_combo_ = nullptr;
    QComboBox* mode_combo_ = nullptr;
    std::vector<std::pair<Param, QLineEdit*>> param_edits_;
    QLineEdit* vocab_edit_ = nullptr;
    QTextBrowser* text_ = nullptr;
    QSpinBox* position_spin_ = nullptr;
    QLabel* token_label_ = nullptr;
    QCustomPlot* chart_ = nullptr;
    QTableWidget* stages_ = nullptr;
    QPushButton* open_row_ = nullptr;
};

}  // namespace samplescope::ui
