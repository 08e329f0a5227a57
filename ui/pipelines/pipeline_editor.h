// Picks a pipeline: a preset, or a custom one whose steps the user drags into
// order, switches on and off, and gives a rule each.
#pragma once

#include <QWidget>

#include <map>

#include "engine/stages/pipeline.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QListWidget;
class QToolButton;

namespace samplescope {

class PipelineEditor : public QWidget {
    Q_OBJECT
public:
    explicit PipelineEditor(const QString& title, QWidget* parent = nullptr);

    // Shows a preset or custom pipeline; does not emit pipelineChanged.
    void setPipeline(const Pipeline& pipeline);
    const Pipeline& pipeline() const { return pipeline_; }

    // For tests and the examples menu: choose a preset by name.
    void selectPreset(const QString& name);

    QComboBox* presetCombo() const { return preset_; }
    // The steps and rules under the preset's row: hidden until asked for, so the
    // comparison itself fits a laptop's screen.
    void setDetailsVisible(bool visible);
    bool detailsVisible() const;
    QToolButton* detailsButton() const { return details_button_; }
    QListWidget* stepList() const { return steps_; }
    QComboBox* ruleCombo(Stage stage) const { return rule_combos_.at(stage); }
    QCheckBox* jointBox(Stage stage) const { return joint_boxes_.at(stage); }

signals:
    void pipelineChanged();
    // The user asked for this pipeline's own parameter defaults.
    void engineDefaultsRequested(const QString& preset);
    void detailsToggled(bool visible);

private:
    void showPipeline();
    void presetChosen(int index);
    void editedByUser();  // any change to steps, rules or joint flags: becomes custom

    Pipeline pipeline_;
    QComboBox* preset_ = nullptr;
    QListWidget* steps_ = nullptr;
    QLabel* order_ = nullptr;
    std::map<Stage, QComboBox*> rule_combos_;
    std::map<Stage, QCheckBox*> joint_boxes_;
    QWidget* defaults_button_ = nullptr;
    QToolButton* details_button_ = nullptr;
    QWidget* details_ = nullptr;
    bool updating_ = false;
};

}  // namespace samplescope
