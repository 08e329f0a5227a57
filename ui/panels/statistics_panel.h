// Entropy, perplexity, top-1 probability, kept count and kept mass of the
// distribution before truncation (after temperature) and after it (the final
// kept set), plus the drawn token's logprob.
#pragma once

#include <memory>

#include <QGroupBox>
#include <QLabel>

#include "ui/common/trace_view.h"

namespace samplescope::ui {

class StatisticsPanel : public QGroupBox {
    Q_OBJECT
public:
    explicit StatisticsPanel(QWidget* parent = nullptr);
    void showView(const std::shared_ptr<const TraceView>& view);

    // The shown text of a cell: row 0..4 (entropy, perplexity, top-1, kept count, kept mass), column 0 before, 1 after.
    QString cell(int row, int column) const;

private:
    QLabel* cells_[5][2] = {};
    QLabel* footer_ = nullptr;
};

}  // namespace samplescope::ui
