#include "ui/multistep/beam_tree.h"

#include <algorithm>

namespace samplescope::ui {

int BeamTree::add(int parent, BeamNode node) {
    node.parent = parent;
    const int id = static_cast<int>(nodes_.size());
    nodes_.push_back(std::move(node));
    nodes_[static_cast<std::size_t>(parent)].children.push_back(id);
    return id;
}

int BeamTree::find(const std::vector<std::int64_t>& tokens) const {
    const auto it = by_tokens_.find(tokens);
    return it == by_tokens_.end() ? -1 : it->second;
}

BeamTree::BeamTree(std::span<const BeamStep> steps, std::span<const BeamHypothesis> hypotheses,
                   const std::vector<std::int64_t>* chosen, const std::string& prompt, const LanguageModel& model) {
    BeamNode root;
    root.text = prompt;
    nodes_.push_back(std::move(root));
    by_tokens_[{}] = kRoot;
    for (const BeamStep& step : steps) {
        depth_ = std::max(depth_, step.step);
        std::map<int, std::size_t> pruned;  // per parent: pruned candidates seen
        std::map<int, int> summary;         // per parent: its summary node
        for (const BeamCandidate& c : step.candidates) {
            const std::vector<std::int64_t>& beam = step.beams.at(c.beam).tokens;
            const int parent = find(beam);
            if (parent < 0) continue;  // a beam whose own node was summed up (cannot happen: pruned beams end)
            if (c.fate == CandidateFate::Pruned && pruned[parent]++ >= kPrunedShown) {
                auto [at, fresh] = summary.try_emplace(parent, -1);
                if (fresh) {
                    BeamNode more;
                    more.step = step.step;
                    more.fate = CandidateFate::Pruned;
                    more.logprob = c.logprob;
                    at->second = add(parent, std::move(more));
                }
                BeamNode& more = nodes_[static_cast<std::size_t>(at->second)];
                ++more.hidden;
                more.logprob = std::max(more.logprob, c.logprob);
                continue;
            }
            BeamNode node;
            node.token = c.token;
            node.text = model.token_text(c.token);
            node.step = step.step;
            node.token_logprob = c.token_logprob;
            node.logprob = c.logprob;
            node.score = c.score;
            node.rank = c.rank;
            node.ends = c.ends;
            node.fate = c.fate;
            std::vector<std::int64_t> tokens = beam;
            tokens.push_back(c.token);
            by_tokens_[std::move(tokens)] = add(parent, std::move(node));
        }
    }
    if (!steps.empty()) {
        for (const Beam& beam : steps.back().kept) {
            if (const int at = find(beam.tokens); at >= 0) nodes_[static_cast<std::size_t>(at)].running = true;
        }
    }
    for (std::size_t i = 0; i < hypotheses.size(); ++i) {
        if (const int at = find(hypotheses[i].tokens); at >= 0) {
            BeamNode& node = nodes_[static_cast<std::size_t>(at)];
            node.hypothesis = static_cast<int>(i);
            node.length = hypotheses[i].length;
            node.score = hypotheses[i].score;
        }
    }
    if (chosen) {
        for (int at = find(*chosen); at >= 0; at = nodes_[static_cast<std::size_t>(at)].parent) {
            nodes_[static_cast<std::size_t>(at)].chosen = true;
        }
    }
    // Children best first, a summary of pruned ones last.
    for (auto& node : nodes_) {
        std::stable_sort(node.children.begin(), node.children.end(), [this](int a, int b) {
            const BeamNode& x = nodes_[static_cast<std::size_t>(a)];
            const BeamNode& y = nodes_[static_cast<std::size_t>(b)];
            if ((x.hidden > 0) != (y.hidden > 0)) return y.hidden > 0;
            return x.logprob > y.logprob;
        });
    }
}

}  // namespace samplescope::ui
