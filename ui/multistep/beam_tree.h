// A beam search as a tree: the prompt at the root, each candidate a node
// under the beam it extends, with its token, its cumulative log-probability
// and its fate at its step (kept, finished, ended but not taken, pruned). The
// pruned candidates of one beam at one step beyond the best few are summed up
// in one node, so a step adds a handful of rows rather than w x 2w. Built from
// the engine's BeamStep records, so every number is the engine's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "engine/generation/beam.h"

namespace samplescope::ui {

struct BeamNode {
    int parent = -1;
    std::vector<int> children;  // best cumulative log-probability first, a summary last
    std::int64_t token = -1;    // -1 for the root and a summary
    std::string text;           // the token as it reads (the root: the prompt)
    std::size_t step = 0;       // its depth: the step that made it (0: the root)
    double token_logprob = 0.0;
    double logprob = 0.0;       // summed along the beam
    double score = 0.0;         // length-penalised (finished hypotheses, vLLM's sort key)
    std::size_t rank = 0;
    bool ends = false;
    CandidateFate fate = CandidateFate::Kept;
    std::size_t hidden = 0;     // a summary: this many pruned candidates not drawn (logprob: the best of them)
    bool running = false;       // a beam when the steps shown end
    bool chosen = false;        // on the chosen hypothesis's path
    int hypothesis = -1;        // its place among the hypotheses shown, best first
    std::size_t length = 0;     // what its hypothesis's score divided by
};

class BeamTree {
public:
    static constexpr int kRoot = 0;
    // Pruned candidates drawn per beam and step; the rest are one summary node.
    static constexpr std::size_t kPrunedShown = 2;

    // The first `steps.size()` steps; `hypotheses` marked with their places;
    // `chosen` (tokens) highlighted with its path when given.
    BeamTree(std::span<const BeamStep> steps, std::span<const BeamHypothesis> hypotheses,
             const std::vector<std::int64_t>* chosen, const std::string& prompt, const LanguageModel& model);

    const std::vector<BeamNode>& nodes() const { return nodes_; }
    const BeamNode& node(int id) const { return nodes_.at(static_cast<std::size_t>(id)); }
    // The node whose path from the root writes `tokens` (-1 when none is drawn).
    int find(const std::vector<std::int64_t>& tokens) const;
    std::size_t depth() const { return depth_; }

private:
    int add(int parent, BeamNode node);

    std::vector<BeamNode> nodes_;
    std::map<std::vector<std::int64_t>, int> by_tokens_;
    std::size_t depth_ = 0;
};

}  // namespace samplescope::ui
