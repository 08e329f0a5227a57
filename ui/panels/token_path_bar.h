// The selected token followed through the pipeline, one line under the
// answer: "Selected tok_11 (id 11): logit 9.73 -> Repetition penalty 8.85 ->
// / T 0.8 = 11.06 (q 0.0273) -> Top-k: kept, rank 3 of 40 -> ...". Hidden
// when no token is selected; "clear" deselects.
#pragma once

#include <cstdint>
#include <memory>

#include <QLabel>

#include "ui/common/trace_view.h"

namespace samplescope::ui {

class TokenPathBar : public QLabel {
    Q_OBJECT
public:
    explicit TokenPathBar(QWidget* parent = nullptr);
    void showToken(const std::shared_ptr<const TraceView>& view, std::int32_t id);
    // The line as plain text (what tests read).
    QString plainText() const { return plain_; }

signals:
    void clearRequested();

private:
    QString plain_;
};

}  // namespace samplescope::ui
