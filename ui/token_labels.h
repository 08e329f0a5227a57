// Token labels for display: the labels a file or example carried, else
// `tok_<id>` (until a vocabulary is loaded, ids are all a row can name).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace samplescope::ui {

class TokenLabels {
public:
    TokenLabels() = default;
    explicit TokenLabels(std::vector<std::string> labels) : labels_(std::move(labels)) {}

    std::string label(std::int64_t id) const {
        if (id >= 0 && static_cast<std::size_t>(id) < labels_.size() && !labels_[static_cast<std::size_t>(id)].empty()) {
            return labels_[static_cast<std::size_t>(id)];
        }
        return "tok_" + std::to_string(id);
    }
    bool has_labels() const { return !labels_.empty(); }
    const std::vector<std::string>& raw() const { return labels_; }

private:
    std::vector<std::string> labels_;
};

}  // namespace samplescope::ui
