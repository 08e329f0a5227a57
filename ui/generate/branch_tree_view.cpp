#include "ui/generate/branch_tree_view.h"

#include <algorithm>
#include <string>

#include <QHeaderView>

#include "ui/common/count_text.h"

namespace samplescope::ui {

namespace {

constexpr int kFirstRole = Qt::UserRole;
constexpr int kLastRole = Qt::UserRole + 1;
constexpr int kShownChars = 60;  // an item's text beyond this is elided (its tooltip has it all)

QString elided(const QString& text) {
    return text.size() <= kShownChars ? text : text.left(kShownChars - 1) + QChar(0x2026);
}

}  // namespace

BranchTreeView::BranchTreeView(QWidget* parent) : QTreeWidget(parent) {
    setObjectName(QStringLiteral("branch_tree"));
    setColumnCount(1);
    setHeaderLabels({QStringLiteral("Branches")});
    header()->setStretchLastSection(true);
    setIndentation(14);
    setUniformRowHeights(true);
    setToolTip(QStringLiteral("Every text written from this prompt. Bold: the text on show. Click a branch to show the "
                              "step where its first word was written."));
    connect(this, &QTreeWidget::itemClicked, this, [this](QTreeWidgetItem* item, int) {
        if (!filling_ && item) emit stretchClicked(firstNode(item));
    });
}

int BranchTreeView::firstNode(const QTreeWidgetItem* item) { return item->data(0, kFirstRole).toInt(); }
int BranchTreeView::lastNode(const QTreeWidgetItem* item) { return item->data(0, kLastRole).toInt(); }

QTreeWidgetItem* BranchTreeView::itemFor(int node) const { return items_.value(node, nullptr); }

void BranchTreeView::clearTree(const QString& placeholder) {
    filling_ = true;
    clear();
    items_.clear();
    auto* item = new QTreeWidgetItem(this, {placeholder});
    item->setFlags(Qt::ItemIsEnabled);
    item->setForeground(0, QColor(0x77, 0x77, 0x77));
    filling_ = false;
}

// One item from `first` down the single-child chain to the next fork or leaf, then one below it per branch.
void BranchTreeView::addStretch(const GenerationTree& tree, QTreeWidgetItem* parent, int first,
                                const std::vector<int>& line) {
    std::vector<int> nodes{first};
    while (tree.node(nodes.back()).children.size() == 1) nodes.push_back(tree.node(nodes.back()).children.front());
    std::vector<std::string> texts;
    for (const int n : nodes) texts.push_back(tree.node(n).token.text);
    const QString text = QString::fromStdString(join_token_texts(texts));
    auto* item = new QTreeWidgetItem(parent, {elided(text)});
    item->setData(0, kFirstRole, first);
    item->setData(0, kLastRole, nodes.back());
    item->setToolTip(0, QStringLiteral("%1<br><i>%2; click to show the step that wrote \u201c%3\u201d</i>")
                            .arg(text.toHtmlEscaped(), countText(nodes.size(), QStringLiteral("token"), QStringLiteral("tokens")),
                                 QString::fromStdString(tree.node(first).token.text).toHtmlEscaped()));
    if (std::find(line.begin(), line.end(), first) != line.end()) {
        QFont bold = item->font(0);
        bold.setBold(true);
        item->setFont(0, bold);
    }
    for (const int n : nodes) items_.insert(n, item);
    const auto& children = tree.node(nodes.back()).children;
    if (children.size() > 1) {
        for (const int child : children) addStretch(tree, item, child, line);
    }
}

void BranchTreeView::showTree(const GenerationTree& tree, const QString& prompt, int marked) {
    filling_ = true;
    clear();
    items_.clear();
    const std::vector<int> line = tree.line();
    auto* root = new QTreeWidgetItem(this, {elided(prompt)});
    root->setData(0, kFirstRole, GenerationTree::kRoot);
    root->setData(0, kLastRole, GenerationTree::kRoot);
    root->setForeground(0, QColor(0x55, 0x55, 0x55));
    root->setToolTip(0, QStringLiteral("The prompt: %1<br><i>click to show the step after it</i>").arg(prompt.toHtmlEscaped()));
    items_.insert(GenerationTree::kRoot, root);
    for (const int child : tree.node(GenerationTree::kRoot).children) addStretch(tree, root, child, line);
    expandAll();
    if (QTreeWidgetItem* current = itemFor(marked)) {
        setCurrentItem(current);
        scrollToItem(current);
    }
    filling_ = false;
}

}  // namespace samplescope::ui
