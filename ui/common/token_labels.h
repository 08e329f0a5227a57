// Token labels for display: the labels a file, example or vocabulary gives,
// in engine/io/token_display.h's readable form, else `tok_<id>`
// (token_display_label's rule; until a vocabulary is loaded, ids are all a row
// can name).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/io/token_display.h"

namespace samplescope::ui {

class TokenLabels {
public:
    TokenLabels() = default;
    // `raw`: the labels as the row carries them (what the logits editor edits);
    // `display`: what every view shows ("" where an id has none).
    TokenLabels(std::vector<std::string> raw, std::vector<std::string> display)
        : raw_(std::move(raw)), display_(std::move(display)) {}

    std::string label(std::int64_t id) const { return token_display_label(display_, id); }
    bool hasLabels() const { return !display_.empty(); }
    const std::vector<std::string>& raw() const { return raw_; }
    const std::vector<std::string>& display() const { return display_; }

private:
    std::vector<std::string> raw_;
    std::vector<std::string> display_;
};

}  // namespace samplescope::ui
