// The one error type for input a user can get wrong: a parameter, a logit row,
// a history id or a file. Its message is the single line shown to the user.
#pragma once

#include <stdexcept>
#include <string>

namespace samplescope {

class InputError : public std::runtime_error {
public:
    InputError(std::string field, const std::string& message)
        : std::runtime_error(message), field_(std::move(field)) {}

    // The parameter or input the message is about ("temperature", "logits", a file name).
    const std::string& field() const { return field_; }

private:
    std::string field_;
};

// Formats a double so that it reads back to the same value (shortest round trip).
std::string format_number(double value);

}  // namespace samplescope
