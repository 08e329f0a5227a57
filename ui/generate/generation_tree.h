// The tree of a generation's branches: the prompt at the root, each node one
// written token. A node keeps where the generation stood after it (its draws
// and mirostat's mu; its ids are its path from the root) and what the token
// looked like at its step, never the step's trace: a tree of thousands of
// tokens costs kilobytes, and a node is revisited by rebuilding its Generation
// from state(node) (engine/generation/generation.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/generation/generation.h"

namespace samplescope::ui {

// A written token at its step, for the text's colours and its hover.
struct WrittenToken {
    std::int64_t id = 0;
    std::string text;               // as it reads in running text
    bool ends = false;              // the model's end of text
    bool clicked = false;           // written by a click instead of the drawn token
    std::int64_t drawn = -1;        // the token the step drew (differs from id when clicked)
    double probability = 0.0;       // in the step's final distribution (token_standing)
    std::size_t rank = 0;           // there, 1-based; 0 outside the final kept set
    std::optional<double> logprob;  // the drawn token's logprob (the contract's); none for a clicked word
    std::optional<double> u;        // the step's uniform; none when greedy
    std::size_t kept = 0;           // the step's final kept count
    std::size_t vocab = 0;          // V
    std::uint64_t seed = 0;
    std::uint64_t draws_before = 0;
    std::string settings;           // the parameters the step ran with that differ from their defaults
};

struct GenerationNode {
    int parent = -1;             // -1 for the root
    std::vector<int> children;   // in the order they were first written
    int line_child = -1;         // the child the shown line goes through (-1: the line ends here)
    WrittenToken token;          // the root's is empty
    std::uint64_t draws = 0;     // the stream's draws after the token
    std::optional<double> mirostat_mu;
    bool alive = true;
};

class GenerationTree {
public:
    static constexpr int kRoot = 0;

    // A root at `start` (a fresh generation: no ids, no draws).
    explicit GenerationTree(GenerationState start = {});

    const GenerationNode& node(int id) const { return nodes_.at(static_cast<std::size_t>(id)); }
    bool contains(int id) const;
    std::size_t tokenCount() const;  // nodes alive, the root excluded

    // The child of `parent` that writes `token` and leaves the generation at
    // (draws, mu): the one there is (its token record renewed), else a new one.
    // The line then goes through it.
    int add(int parent, WrittenToken token, std::uint64_t draws, std::optional<double> mirostat_mu);
    // Removes a leaf other than the root; the parent's line then ends.
    void removeLeaf(int id);

    // Where the generation stands after node `id`: its path's ids, its draws and mu.
    GenerationState state(int id) const;
    // The nodes from the root's child to `id` (empty for the root).
    std::vector<int> path(int id) const;
    std::size_t depth(int id) const;
    // The shown line: the root's line child, its line child, ... (the root excluded).
    std::vector<int> line() const;
    int lineEnd() const;
    // Makes the line pass through `id` (and on through its own line children).
    void setLineThrough(int id);

private:
    std::vector<GenerationNode> nodes_;
    std::vector<std::int64_t> start_ids_;
};

}  // namespace samplescope::ui
