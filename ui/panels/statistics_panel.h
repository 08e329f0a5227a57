// Entropy, perplexity, top-1 probability, kept count and kept mass of the
// distribution before truncation (after temperature) and after it (the final
// kept set), plus the drawn token's logprob. The table scrolls inside the box
// when the box is short, so its lines never overlap.
#pragma once

#include <memory>

#include <QGroupBox>
#include <QLabel>

class QScrollArea;

#include "ui/common/trace_view.h"

namespace samplescope::ui {

class StatisticsPanel : public QGroupBox {
    Q_OBJECT
public:
    explicit StatisticsPanel(QWidget* parent = nullptr);
    void showView(const std::shared_ptr<const TraceView>& view);

    // The shown text of a cell: row 0..4 (entropy, perplexity, top-1, ids with q > 0, kept mass), column 0 before, 1 after.
    QString cell(int row, int column) const;
    QString footer() const { return footer_->text(); }
    QScrollArea* scrollArea() const { return scroll_; }
    QWidget* content() const { return content_; }

private:
    QLabel* cells_[5][2] = {};
    QLabel* footer_ = nullptr;
    QScrollArea* scroll_ = nullptr;
    QWidget* content_ = nullptr;
};

}  // namespace samplescope::ui
