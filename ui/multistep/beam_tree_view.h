// A beam tree drawn left to right, a column per step: each node a box with
// its token and its cumulative log-probability, pruned candidates greyed
// with dashed edges, finished hypotheses outlined in green with their
// length-penalised score beside them, the beams still running at the last
// step shown in bold, and the chosen hypothesis's path filled in blue. Hover
// a node for its numbers. Painted by hand: a tree of boxes with labels beside
// them is not a plot, and QTreeWidget cannot show the columns of steps.
#pragma once

#include <optional>
#include <vector>

#include <QWidget>

#include "ui/multistep/beam_tree.h"

namespace samplescope::ui {

class BeamTreeView : public QWidget {
    Q_OBJECT
public:
    explicit BeamTreeView(QWidget* parent = nullptr);

    void setTree(std::optional<BeamTree> tree, double length_penalty);
    const std::optional<BeamTree>& tree() const { return tree_; }
    // Where a node is drawn (empty when it is not).
    QRect nodeRect(int node) const;
    int nodeAt(const QPoint& point) const;
    QString tooltipFor(int node) const;
    // The label drawn beside a node ("" for none): a hypothesis's score and place.
    QString besideText(int node) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    bool event(QEvent* event) override;
    void paintEvent(QPaintEvent* event) override;

private:
    void layoutTree();
    QString boxText(const BeamNode& node) const;
    QString logprobText(const BeamNode& node) const;

    std::optional<BeamTree> tree_;
    double length_penalty_ = 1.0;
    std::vector<QRect> boxes_;
    std::vector<int> column_x_;
    QSize size_;
};

}  // namespace samplescope::ui
