#include "ui/generate/generation_tree.h"

#include <algorithm>
#include <stdexcept>

namespace samplescope::ui {

GenerationTree::GenerationTree(GenerationState start) : start_ids_(std::move(start.generated)) {
    GenerationNode root;
    root.draws = start.draws;
    root.mirostat_mu = start.mirostat_mu;
    nodes_.push_back(std::move(root));
}

bool GenerationTree::contains(int id) const {
    return id >= 0 && static_cast<std::size_t>(id) < nodes_.size() && nodes_[static_cast<std::size_t>(id)].alive;
}

std::size_t GenerationTree::tokenCount() const {
    return static_cast<std::size_t>(std::count_if(nodes_.begin(), nodes_.end(), [](const auto& n) { return n.alive; })) - 1;
}

int GenerationTree::add(int parent, WrittenToken token, std::uint64_t draws, std::optional<double> mirostat_mu) {
    if (!contains(parent)) throw std::out_of_range("GenerationTree::add: no node " + std::to_string(parent));
    int child = -1;
    for (const int c : node(parent).children) {
        const auto& n = node(c);
        if (n.token.id == token.id && n.draws == draws && n.mirostat_mu == mirostat_mu) child = c;
    }
    if (child < 0) {
        child = static_cast<int>(nodes_.size());
        GenerationNode made;
        made.parent = parent;
        made.draws = draws;
        made.mirostat_mu = mirostat_mu;
        nodes_.push_back(std::move(made));
        nodes_[static_cast<std::size_t>(parent)].children.push_back(child);
    }
    // The same state reached again: its record is the newest visit's (the parameters may have moved).
    nodes_[static_cast<std::size_t>(child)].token = std::move(token);
    nodes_[static_cast<std::size_t>(parent)].line_child = child;
    return child;
}

void GenerationTree::removeLeaf(int id) {
    if (id == kRoot || !contains(id) || !node(id).children.empty()) {
        throw std::logic_error("GenerationTree::removeLeaf: " + std::to_string(id) + " is not a leaf");
    }
    auto& removed = nodes_[static_cast<std::size_t>(id)];
    auto& parent = nodes_[static_cast<std::size_t>(removed.parent)];
    std::erase(parent.children, id);
    if (parent.line_child == id) parent.line_child = -1;
    removed.alive = false;
    removed.token = {};
}

std::vector<int> GenerationTree::path(int id) const {
    std::vector<int> out;
    for (int n = id; n != kRoot; n = node(n).parent) out.push_back(n);
    std::reverse(out.begin(), out.end());
    return out;
}

std::size_t GenerationTree::depth(int id) const {
    std::size_t d = 0;
    for (int n = id; n != kRoot; n = node(n).parent) ++d;
    return d;
}

GenerationState GenerationTree::state(int id) const {
    GenerationState out;
    out.generated = start_ids_;
    for (const int n : path(id)) out.generated.push_back(node(n).token.id);
    out.draws = node(id).draws;
    out.mirostat_mu = node(id).mirostat_mu;
    return out;
}

std::vector<int> GenerationTree::line() const {
    std::vector<int> out;
    for (int n = node(kRoot).line_child; n >= 0; n = node(n).line_child) out.push_back(n);
    return out;
}

int GenerationTree::lineEnd() const {
    int n = kRoot;
    while (node(n).line_child >= 0) n = node(n).line_child;
    return n;
}

void GenerationTree::setLineThrough(int id) {
    for (int n = id; n != kRoot; n = node(n).parent) nodes_[static_cast<std::size_t>(node(n).parent)].line_child = n;
}

}  // namespace samplescope::ui
