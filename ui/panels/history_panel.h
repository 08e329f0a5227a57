// The request's history: prompt ids and generated ids (editable; they feed the
// penalties), the number of draws the stream has consumed, and the actions
// Step (accept the drawn token) and Reset request (back to the seed's first draw).
#pragma once

#include <functional>

#include <cstdint>
#include <vector>

#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>

#include "engine/io/vocabulary.h"
#include "engine/pipelines/request.h"
#include "ui/common/token_labels.h"

namespace samplescope::ui {

class HistoryPanel : public QGroupBox {
    Q_OBJECT
public:
    explicit HistoryPanel(QWidget* parent = nullptr);

    // With a vocabulary the history reads as text: the prompt's and the
    // generated ids' pieces decoded, the newest token highlighted.
    void showRequest(const Request& request, const TokenLabels& labels, const Vocabulary* vocabulary = nullptr);
    QLabel* textLabel() const { return output_labels_; }
    void showError(const QString& field, const QString& message);  // in place, under its box

    QLineEdit* promptEntry() const { return prompt_; }
    QLineEdit* outputEntry() const { return output_; }
    QLabel* drawsLabel() const { return draws_; }
    QPushButton* stepButton() const { return step_; }
    QPushButton* resetButton() const { return reset_; }

signals:
    void historyEdited(const std::vector<std::int64_t>& prompt_ids, const std::vector<std::int64_t>& output_ids);
    void stepRequested();
    void resetRequested();

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void onEdit();
    // Sets the history line's text again for the label's width (its end in two lines).
    std::function<void()> fit_text_;

    QLineEdit* prompt_;
    QLineEdit* output_;
    QLabel* output_labels_;
    QLabel* error_;
    QLabel* draws_;
    QPushButton* step_;
    QPushButton* reset_;
};

// Parses ids such as "1, 2 2"; throws InputError naming the field.
std::vector<std::int64_t> parseIds(const QString& text, const char* field);

}  // namespace samplescope::ui
