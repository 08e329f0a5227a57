// The draw: the cumulative sum over the final kept set in ascending id order
// (the contract's inverse-CDF walk), the line at u, the interval u falls in,
// and the chosen token with its logprob. Greedy says that no draw was taken.
#pragma once

#include <cstdint>
#include <memory>

#include <qcustomplot.h>

#include "ui/common/trace_view.h"
#include "ui/stages/opaque_plot.h"

namespace samplescope::ui {

class DrawPlot : public OpaquePlot {
    Q_OBJECT
public:
    explicit DrawPlot(QWidget* parent = nullptr);

    void showView(const std::shared_ptr<const TraceView>& view, std::int32_t selected_id);

    QCPGraph* graphNamed(const QString& name);
    QCPAbstractItem* item(const QString& name);
    QString titleText() const { return title_->text(); }
    QString captionText() const { return caption_->text(); }

signals:
    void tokenClicked(std::int32_t id);

private:
    QCPTextElement* title_ = nullptr;
    QCPTextElement* caption_ = nullptr;
    std::shared_ptr<const TraceView> view_;
};

}  // namespace samplescope::ui
