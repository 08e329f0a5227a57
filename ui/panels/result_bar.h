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

protected:
    bool event(QEvent* event) override;

private:
    void applyFont();
    QHash<QString, QString> tips_;
};

}  // namespace samplescope::ui
