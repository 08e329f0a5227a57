// JSON logits: an array (one row), an array of arrays (a batch), or an object
// {"logits": ..., "tokens": [...], "prompt_ids": [...], "output_ids": [...]}.
// Parsed as a SAX stream straight into the result: no document tree of
// millions of nodes, and a hostile nesting depth is refused at its first step.
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "engine/base/input_error.h"
#include "engine/io/logits_readers.h"

namespace samplescope::detail {

namespace {

using Json = nlohmann::json;

std::string shortened(const std::string& text) {
    return text.size() <= 40 ? text : text.substr(0, 37) + "...";
}

class LogitsSax final : public nlohmann::json_sax<Json> {
public:
    explicit LogitsSax(LogitsMatrix& out) : out_(out) {}

    std::string problem;  // set when a callback returns false

    bool null() override { return scalar("null"); }
    bool boolean(bool) override { return scalar("a boolean"); }
    bool number_integer(number_integer_t value) override { return number(static_cast<double>(value), true, value); }
    bool number_unsigned(number_unsigned_t value) override {
        const bool fits = value <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
        return number(static_cast<double>(value), fits, fits ? static_cast<std::int64_t>(value) : 0);
    }
    bool number_float(number_float_t value, const string_t&) override { return number(value, false, 0); }
    bool string(string_t& value) override {
        if (stack_.empty()) return scalar("a string");
        switch (top()) {
            case Frame::Tokens: out_.labels.push_back(value); return true;
            case Frame::Logits:
            case Frame::Row: {
                // JSON has no NaN or infinity; these spellings stand in for them.
                if (value == "-inf" || value == "-Infinity") return number(-std::numeric_limits<double>::infinity(), false, 0);
                if (value == "inf" || value == "Infinity") return number(std::numeric_limits<double>::infinity(), false, 0);
                if (value == "nan" || value == "NaN") return number(std::numeric_limits<double>::quiet_NaN(), false, 0);
                return fail("expected a number, got the string \"" + shortened(value) + "\"" + where());
            }
            default: return scalar("a string");
        }
    }
    bool binary(binary_t&) override { return scalar("binary data"); }

    bool start_object(std::size_t) override {
        if (stack_.empty()) return push(Frame::Object);
        if (top() == Frame::Skip || top() == Frame::Object) return push(Frame::Skip);
        return fail("expected a number, got an object" + where());
    }
    bool key(string_t& name) override {
        if (top() != Frame::Object) return true;
        key_ = name;
        const bool known = name == "logits" || name == "tokens" || name == "prompt_ids" || name == "output_ids";
        if (known && !seen_keys_.insert(name).second) return fail("the key \"" + name + "\" appears twice");
        return true;
    }
    bool end_object() override {
        stack_.pop_back();
        return true;
    }
    bool start_array(std::size_t) override {
        if (stack_.empty()) return push(Frame::Logits);
        switch (top()) {
            case Frame::Object:
                if (key_ == "logits") return push(Frame::Logits);
                if (key_ == "tokens") return push(Frame::Tokens);
                if (key_ == "prompt_ids") return push(Frame::PromptIds);
                if (key_ == "output_ids") return push(Frame::OutputIds);
                return push(Frame::Skip);
            case Frame::Skip: return push(Frame::Skip);
            case Frame::Logits:
                if (shape_ == Shape::Flat) return fail("a row mixes numbers and arrays (expected numbers, or arrays of numbers)");
                shape_ = Shape::Batch;
                row_values_ = 0;
                return push(Frame::Row);
            default: return fail("expected a number, got an array" + where());
        }
    }
    bool end_array() override {
        if (top() == Frame::Row) {
            ++out_.rows;
            if (out_.rows == 1) {
                out_.cols = row_values_;
            } else if (row_values_ != out_.cols) {
                return fail("ragged rows: row " + std::to_string(out_.rows - 1) + " has " + std::to_string(row_values_) +
                            " values, row 0 has " + std::to_string(out_.cols));
            }
        }
        if (top() == Frame::Logits) saw_logits_ = true;
        stack_.pop_back();
        return true;
    }
    bool parse_error(std::size_t position, const std::string& token, const nlohmann::detail::exception& error) override {
        // The parser's one range error (406): a number such as 1e999.
        if (error.id == 406) return fail("the number " + token + " at byte " + std::to_string(position) +
                                         " is outside the range of a double");
        return fail("malformed JSON at byte " + std::to_string(position));
    }

    bool saw_logits() const { return saw_logits_; }
    bool flat() const { return shape_ != Shape::Batch; }

private:
    enum class Frame { Object, Logits, Row, Tokens, PromptIds, OutputIds, Skip };
    enum class Shape { Unknown, Flat, Batch };

    Frame top() const { return stack_.back(); }
    bool push(Frame frame) {
        stack_.push_back(frame);
        return true;
    }
    bool fail(std::string text) {
        problem = std::move(text);
        return false;
    }
    std::string where() const {
        if (top() == Frame::Row) return " (row " + std::to_string(out_.rows) + ", item " + std::to_string(row_values_) + ")";
        if (top() == Frame::Logits) return " (item " + std::to_string(out_.values.size()) + ")";
        return "";
    }
    bool scalar(const std::string& what) {
        if (stack_.empty()) return fail("expected an array of logits or an object with \"logits\", got " + what);
        switch (top()) {
            case Frame::Object:
            case Frame::Skip: return true;
            case Frame::Tokens: return fail("\"tokens\" must hold strings, got " + what);
            case Frame::PromptIds:
            case Frame::OutputIds: return fail("\"" + key_ + "\" must hold integer ids, got " + what);
            default: return fail("expected a number, got " + what + where());
        }
    }
    bool number(double value, bool integral, std::int64_t integer) {
        if (stack_.empty()) return fail("expected an array of logits or an object with \"logits\", got a number");
        switch (top()) {
            case Frame::Logits:
                if (shape_ == Shape::Batch) return fail("a row mixes numbers and arrays (expected numbers, or arrays of numbers)");
                shape_ = Shape::Flat;
                out_.values.push_back(value);
                return true;
            case Frame::Row:
                out_.values.push_back(value);
                ++row_values_;
                return true;
            case Frame::PromptIds:
            case Frame::OutputIds:
                if (!integral) return fail("\"" + key_ + "\" must hold integer ids, got " + format_number(value));
                (top() == Frame::PromptIds ? out_.prompt_ids : out_.output_ids).push_back(integer);
                return true;
            case Frame::Object:
            case Frame::Skip: return true;
            case Frame::Tokens: return fail("\"tokens\" must hold strings, got a number");
        }
        return false;
    }

    LogitsMatrix& out_;
    std::vector<Frame> stack_;
    std::string key_;
    std::set<std::string> seen_keys_;
    Shape shape_ = Shape::Unknown;
    std::size_t row_values_ = 0;
    bool saw_logits_ = false;
};

}  // namespace

LogitsMatrix read_json_logits(const ByteSource& source, const LoadOptions&) {
    const std::string text = source.read_all(kTextLimitBytes);
    LogitsMatrix matrix;
    LogitsSax sax(matrix);
    if (!Json::sax_parse(text, &sax, Json::input_format_t::json, true)) {
        source.fail(sax.problem.empty() ? std::string("malformed JSON") : sax.problem);
    }
    if (!sax.saw_logits()) source.fail("a JSON object must have a \"logits\" array");
    if (sax.flat()) {
        matrix.rows = 1;
        matrix.cols = matrix.values.size();
    }
    if (matrix.values.empty()) source.fail("no logits found (the array is empty)");
    if (!matrix.labels.empty() && matrix.labels.size() != matrix.cols) {
        source.fail("\"tokens\" has " + std::to_string(matrix.labels.size()) + " labels for " + std::to_string(matrix.cols) +
                    " logits");
    }
    return matrix;
}

}  // namespace samplescope::detail
