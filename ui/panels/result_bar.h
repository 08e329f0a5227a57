// The one-line answer at the top of the window: which token the next step
// draws (or greedy picks), its logprob, u, the seed and the draw count.
#pragma once

#include <memory>

#include <QLabel>

#include "ui/common/trace_view.h"

namespace samplescope::ui {

class ResultBar : public QLabel {
    Q_OBJECT
public:
    explicit ResultBar(QWidget* parent = nullptr);
    void showView(const std::shared_ptr<const TraceView>& view);
};

}  // namespace samplescope::ui
