// The answer at the top of the window: which token the next step draws (or
// greedy picks) with its final q and u, then the contract's logprob (named as
// such: after the penalties, before temperature), the kept count, the seed and
// the draw count. Each term shows what it means, and its exact value, on hover.
#pragma once

#include <memory>

#include <QHash>
#include <QLabel>

#include "ui/common/trace_view.h"

namespace samplescope::ui {

class ResultBar : public QLabel {
    Q_OBJECT
public:
    explicit ResultBar(QWidget* parent = nullptr);
    void showView(const std::shared_ptr<const TraceView>& view);

    // What a term of the line means, with its exact value: "token", "q", "logprob", "u", "kept", "seed",
    // "draws" ("" for a term not on show).
    QString termTip(const QString& term) const { return tips_.value(term); }

signals:
    void lineChanged();  // after each showView: a holder checks the height it gives the bar

protected:
    bool event(QEvent* event) override;

private:
    void applyFont();
    QHash<QString, QString> tips_;
};

// Holds the bar without a layout, so the bar's new text at each key press
// does not start a relayout up to the window (each dock's labels measured
// again: 2 to 3 ms a press). It asks its own layout for a new height only
// when the text needs one.
class ResultBarHolder : public QWidget {
    Q_OBJECT
public:
    explicit ResultBarHolder(ResultBar* bar, QWidget* parent = nullptr);
    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override { return bar_->heightForWidth(width); }
    QSize sizeHint() const override { return {bar_->sizeHint().width(), heightForWidth(width())}; }
    QSize minimumSizeHint() const override { return {bar_->minimumSizeHint().width(), heightForWidth(width())}; }

protected:
    bool event(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void checkHeight();
    ResultBar* bar_;
};

}  // namespace samplescope::ui
