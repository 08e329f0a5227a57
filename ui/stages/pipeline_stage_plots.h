// One pipeline run's stages as stage plots, side by side in its own order and
// scrolled sideways: the pipeline views' way to show llama.cpp's extra stages
// (DRY, XTC, mirostat, dynamic temperature), which the main view never runs.
// The plots are built when the widget is on show, so a hidden tab costs nothing.
#pragma once

#include <memory>

#include <QList>
#include <QScrollArea>

#include "engine/stages/pipeline.h"
#include "ui/common/token_labels.h"

class QHBoxLayout;
class QLabel;

namespace samplescope::ui {

class StagePlot;

class PipelineStagePlots : public QScrollArea {
    Q_OBJECT
public:
    explicit PipelineStagePlots(QWidget* parent = nullptr);

    // Null clears the plots and shows `message` instead.
    void setTrace(std::shared_ptr<const PipelineTrace> trace, std::shared_ptr<const TokenLabels> labels,
                  const QString& message = {});

    // The plots on show, in the pipeline's order (empty until shown); null for a stage it lacks.
    const QList<StagePlot*>& plots() const { return plots_; }
    StagePlot* plot(Stage stage) const;
    // Builds the plots now, shown or not (tests and screenshots).
    void build();
    // A stage that did nothing gets no plot, only its name in one line (on by default).
    void setHideOff(bool hide);
    bool hideOff() const { return hide_off_; }

protected:
    void showEvent(QShowEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void fitHeights();
    void scrollToSampler();

    std::shared_ptr<const PipelineTrace> trace_;
    std::shared_ptr<const TokenLabels> labels_;
    bool built_ = false;
    QWidget* content_ = nullptr;
    QHBoxLayout* row_ = nullptr;
    QLabel* message_ = nullptr;
    QLabel* off_note_ = nullptr;
    bool hide_off_ = true;
    QList<StagePlot*> plots_;
};

}  // namespace samplescope::ui
