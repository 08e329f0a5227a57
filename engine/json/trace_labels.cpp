#include "engine/json/trace_labels.h"

namespace samplescope {

namespace {

// Not token_display_label: the JSON gives "" for an id without a label (the CLI's recorded output format).
std::string label_of(const std::vector<std::string>& labels, std::int32_t id) {
    if (id < 0 || static_cast<std::size_t>(id) >= labels.size()) return {};
    return labels[static_cast<std::size_t>(id)];
}

}  // namespace

void add_token_text(nlohmann::ordered_json& trace_json, const SampleTrace& trace, const std::vector<std::string>& labels) {
    if (labels.empty()) return;
    trace_json["token_text"] = label_of(labels, trace.token);
    auto kept = nlohmann::ordered_json::array();
    for (const auto id : trace.final_kept()) kept.push_back(label_of(labels, id));
    trace_json["kept_text"] = std::move(kept);
}

}  // namespace samplescope
