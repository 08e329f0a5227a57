// Every branch of a generation as a tree: the prompt at the top, then one
// item per stretch of text up to the next fork, its alternatives below it.
// The shown line is bold and the stretch holding the step on show is
// current; clicking an item shows the step where its first word was written
// and makes the line go through it.
#pragma once

#include <vector>

#include <QHash>
#include <QString>
#include <QTreeWidget>

#include "ui/generate/generation_tree.h"

namespace samplescope::ui {

class BranchTreeView : public QTreeWidget {
    Q_OBJECT
public:
    explicit BranchTreeView(QWidget* parent = nullptr);

    // `marked`: the node of the step on show (its stretch becomes current), -1 none.
    void showTree(const GenerationTree& tree, const QString& prompt, int marked);
    void clearTree(const QString& placeholder);

    // The item whose stretch holds `node` (the root item for the root), or null.
    QTreeWidgetItem* itemFor(int node) const;
    // The first and last node of an item's stretch (the root item: the root, twice).
    static int firstNode(const QTreeWidgetItem* item);
    static int lastNode(const QTreeWidgetItem* item);

signals:
    // The first node of the stretch clicked (GenerationTree::kRoot for the prompt).
    void stretchClicked(int first);

private:
    void addStretch(const GenerationTree& tree, QTreeWidgetItem* parent, int first, const std::vector<int>& line);

    QHash<int, QTreeWidgetItem*> items_;  // each node's item
    bool filling_ = false;
};

}  // namespace samplescope::ui
