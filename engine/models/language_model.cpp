#include "engine/models/language_model.h"

#include "engine/base/input_error.h"
#include "engine/io/token_display.h"

namespace samplescope {

std::string LanguageModel::token_text(std::int64_t id) const { return token_display_label(labels(), id); }

void check_prompt_text(std::string_view prompt) {
    if (prompt.size() > kMaxPromptBytes) {
        throw InputError("prompt", "prompt: " + std::to_string(prompt.size()) + " bytes, more than the " +
                                       std::to_string(kMaxPromptBytes) + " a prompt may hold");
    }
    const std::size_t bad = first_escaped_byte(prompt, "\t\n\r");
    if (bad != prompt.size()) {
        const auto byte = static_cast<unsigned char>(prompt[bad]);
        const bool control = byte < 0x20 || byte == 0x7F || byte == 0xC2;
        throw InputError("prompt", std::string("prompt: ") +
                                       (control ? "a control character" : "a byte that is not valid UTF-8") +
                                       " at byte " + std::to_string(bad) + " of \"" +
                                       std::string(prompt.substr(0, std::min<std::size_t>(prompt.size(), 80))) +
                                       (prompt.size() > 80 ? "...\"" : "\""));
    }
}

}  // namespace samplescope
