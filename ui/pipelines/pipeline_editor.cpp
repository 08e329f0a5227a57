#include "ui/pipelines/pipeline_editor.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QToolButton>
#include <QVBoxLayout>

#include "engine/pipelines/pipeline_presets.h"

namespace samplescope {

namespace {

constexpr int kStageRole = Qt::UserRole + 1;

QString text(std::string_view view) { return QString::fromUtf8(view.data(), static_cast<qsizetype>(view.size())); }

// The stages a pipeline orders, in the contract's order.
std::vector<Stage> stepStages() {
    std::vector<Stage> stages;
    for (const auto& info : kStages) {
        if (is_step_stage(info.stage)) stages.push_back(info.stage);
    }
    return stages;
}

}  // namespace

PipelineEditor::PipelineEditor(const QString& title, QWidget* parent) : QWidget(parent) {
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    auto* box = new QGroupBox(title, this);
    outer->addWidget(box);
    auto* layout = new QVBoxLayout(box);

    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Pipeline:"), box));
    preset_ = new QComboBox(box);
    for (const auto& preset : kPresets) preset_->addItem(text(preset.title), text(preset.name));
    preset_->addItem(tr("Custom"), text(kCustomPipelineName));
    preset_->setToolTip(tr("A serving stack's order and rules, or a custom pipeline"));
    // Long names would set the editor's width: the box shrinks, the list shows them whole.
    preset_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    preset_->setMinimumContentsLength(12);
    top->addWidget(preset_, 1);
    auto* defaults = new QPushButton(tr("Load engine defaults"), box);
    defaults->setToolTip(tr("Set the parameters to this stack's own defaults (never done without asking)"));
    defaults_button_ = defaults;
    top->addWidget(defaults);
    details_button_ = new QToolButton(box);
    details_button_->setObjectName(QStringLiteral("pipeline_details"));
    details_button_->setText(tr("Steps and rules"));
    details_button_->setCheckable(true);
    details_button_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    details_button_->setArrowType(Qt::RightArrow);
    details_button_->setToolTip(tr("Show the steps (drag to reorder, tick to enable) and each stage's rule"));
    top->addWidget(details_button_);
    layout->addLayout(top);

    details_ = new QWidget(box);
    auto* details_layout = new QVBoxLayout(details_);
    details_layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(details_);
    order_ = new QLabel(details_);
    order_->setWordWrap(true);
    order_->setStyleSheet(QStringLiteral("color: #555;"));
    details_layout->addWidget(order_);

    auto* body = new QHBoxLayout;
    auto* list_column = new QVBoxLayout;
    auto* steps_caption = new QLabel(tr("Steps (drag to reorder, tick to enable):"), box);
    steps_caption->setWordWrap(true);
    list_column->addWidget(steps_caption);
    steps_ = new QListWidget(box);
    steps_->setDragDropMode(QAbstractItemView::InternalMove);
    steps_->setDefaultDropAction(Qt::MoveAction);
    steps_->setSelectionMode(QAbstractItemView::SingleSelection);
    steps_->setMinimumWidth(150);
    list_column->addWidget(steps_);
    body->addLayout(list_column, 2);

    auto* rules = new QFormLayout;
    rules->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    for (const auto stage : stepStages()) {
        auto* row = new QHBoxLayout;
        auto* combo = new QComboBox(box);
        combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        combo->setMinimumContentsLength(10);
        for (const auto rule : rules_for_stage(stage)) {
            const auto& info = rule_info(rule);
            combo->addItem(text(info.title), static_cast<int>(rule));
            combo->setItemData(combo->count() - 1,
                               text(info.summary) + QStringLiteral("\n") + tr("Used by: ") + text(info.stacks) +
                                   QStringLiteral("\n") + tr("Source: ") + text(info.citation),
                               Qt::ToolTipRole);
        }
        row->addWidget(combo, 1);
        rule_combos_[stage] = combo;
        if (stage_info(stage).truncates) {
            auto* joint = new QCheckBox(tr("joint"), box);
            joint->setToolTip(tr("Decide on the same distribution as the truncation step before (not renormalised)"));
            row->addWidget(joint);
            joint_boxes_[stage] = joint;
            connect(joint, &QCheckBox::toggled, this, &PipelineEditor::editedByUser);
        }
        rules->addRow(text(stage_info(stage).title) + QStringLiteral(":"), row);
        connect(combo, &QComboBox::currentIndexChanged, this, &PipelineEditor::editedByUser);
    }
    body->addLayout(rules, 3);
    details_layout->addLayout(body);
    setDetailsVisible(false);
    connect(details_button_, &QToolButton::toggled, this, [this](bool on) {
        setDetailsVisible(on);
        emit detailsToggled(on);
    });

    connect(preset_, &QComboBox::currentIndexChanged, this, &PipelineEditor::presetChosen);
    connect(steps_->model(), &QAbstractItemModel::rowsMoved, this, &PipelineEditor::editedByUser);
    connect(steps_, &QListWidget::itemChanged, this, &PipelineEditor::editedByUser);
    connect(defaults, &QPushButton::clicked, this,
            [this] { emit engineDefaultsRequested(QString::fromStdString(pipeline_.name)); });

    setPipeline(preset_pipeline("spec"));
}

void PipelineEditor::setDetailsVisible(bool visible) {
    {
        const QSignalBlocker block(details_button_);
        details_button_->setChecked(visible);
    }
    details_button_->setArrowType(visible ? Qt::DownArrow : Qt::RightArrow);
    details_->setVisible(visible);
}

bool PipelineEditor::detailsVisible() const { return !details_->isHidden(); }

void PipelineEditor::setPipeline(const Pipeline& pipeline) {
    pipeline_ = pipeline;
    showPipeline();
}

void PipelineEditor::selectPreset(const QString& name) {
    const int index = preset_->findData(name);
    if (index < 0) return;
    if (index == preset_->currentIndex()) {
        presetChosen(index);  // no signal for an unchanged index
    } else {
        preset_->setCurrentIndex(index);
    }
}

void PipelineEditor::showPipeline() {
    updating_ = true;
    preset_->setCurrentIndex(std::max(0, preset_->findData(QString::fromStdString(pipeline_.name))));
    defaults_button_->setEnabled(pipeline_.name != kCustomPipelineName);

    steps_->clear();
    // The pipeline's own steps first, in its order; the stages it lacks after
    // them, unticked, so a custom pipeline can add them.
    std::vector<PipelineStep> shown = pipeline_.steps;
    for (const auto stage : stepStages()) {
        if (!pipeline_.find_step(stage)) shown.push_back(PipelineStep{stage, rules_for_stage(stage).front(), false, false});
    }
    for (const auto& step : shown) {
        auto* item = new QListWidgetItem(text(stage_info(step.stage).title), steps_);
        item->setData(kStageRole, static_cast<int>(step.stage));
        item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsUserCheckable | Qt::ItemIsDragEnabled);
        item->setCheckState(step.enabled && pipeline_.find_step(step.stage) ? Qt::Checked : Qt::Unchecked);
        item->setToolTip(text(stage_info(step.stage).summary));
    }
    for (const auto& [stage, combo] : rule_combos_) {
        const auto* step = pipeline_.find_step(stage);
        const Rule rule = step ? step->rule : rules_for_stage(stage).front();
        combo->setCurrentIndex(combo->findData(static_cast<int>(rule)));
    }
    for (const auto& [stage, box] : joint_boxes_) {
        const auto* step = pipeline_.find_step(stage);
        box->setChecked(step && step->joint);
    }
    std::string summary;
    for (const auto& step : pipeline_.steps) {
        if (!step.enabled) continue;
        if (!summary.empty()) summary += step.joint ? " | " : " -> ";
        summary += std::string(stage_info(step.stage).name);
    }
    order_->setText(tr("Order: ") + QString::fromStdString(summary));
    updating_ = false;
}

void PipelineEditor::presetChosen(int index) {
    if (updating_ || index < 0) return;
    const QString name = preset_->itemData(index).toString();
    if (name == text(kCustomPipelineName)) {
        editedByUser();
        return;
    }
    setPipeline(preset_pipeline(name.toStdString()));
    emit pipelineChanged();
}

void PipelineEditor::editedByUser() {
    if (updating_) return;
    Pipeline custom;
    custom.name = std::string(kCustomPipelineName);
    custom.title = "Custom";
    custom.penalty_last_n = pipeline_.penalty_last_n;
    for (int row = 0; row < steps_->count(); ++row) {
        const auto* item = steps_->item(row);
        const auto stage = static_cast<Stage>(item->data(kStageRole).toInt());
        PipelineStep step;
        step.stage = stage;
        step.rule = static_cast<Rule>(rule_combos_.at(stage)->currentData().toInt());
        step.enabled = item->checkState() == Qt::Checked;
        const auto joint = joint_boxes_.find(stage);
        step.joint = joint != joint_boxes_.end() && joint->second->isChecked();
        custom.steps.push_back(step);
    }
    // A joint flag that follows no enabled truncation step has no meaning: drop it
    // rather than refuse the edit.
    bool truncation_before = false;
    for (auto& step : custom.steps) {
        if (!step.enabled) continue;
        const bool truncates = stage_info(step.stage).truncates;
        if (step.joint && !truncation_before) step.joint = false;
        truncation_before = truncates;
    }
    pipeline_ = std::move(custom);
    showPipeline();
    emit pipelineChanged();
}

}  // namespace samplescope
