// The one error type for input a user can get wrong: a parameter, a logit row,
// a history id or a file. Its message is the single line shown to the user.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace samplescope {

// `text` safe to print on one line of a terminal: control bytes (C0, DEL and
// the C1 range), NUL included, become \xNN, and so does every byte that is not
// part of well-formed UTF-8; all else is kept. Escaping twice changes nothing.
std::string escape_text(std::string_view text);

// The offset of the first byte escape_text would escape (a control byte, or
// one that is not part of well-formed UTF-8), control bytes listed in
// `allowed` excepted; text.size() when there is none.
std::size_t first_escaped_byte(std::string_view text, std::string_view allowed = {});

// The length of the longest prefix of `text` made of whole, well-formed UTF-8
// sequences (RFC 3629), the rule escape_text applies: text.size() when all of it is.
std::size_t utf8_valid_prefix(std::string_view text);

class InputError : public std::runtime_error {
public:
    // The message is escaped (escape_text): whatever the input held, it stays one line.
    InputError(std::string field, const std::string& message)
        : std::runtime_error(escape_text(message)), field_(std::move(field)) {}

    // The parameter or input the message is about ("temperature", "logits", a file name).
    const std::string& field() const { return field_; }

private:
    std::string field_;
};

// Formats a double so that it reads back to the same value (shortest round trip).
std::string format_number(double value);

}  // namespace samplescope
