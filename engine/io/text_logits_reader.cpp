// Plain text, CSV and TSV: numbers separated by commas, semicolons, tabs or
// spaces, one row per line (a single column is one row), or one
// `label<TAB or colon>logit` per line. Numbers are read with std::from_chars,
// which ignores the C locale (a GUI may run under a decimal-comma locale).
#include <cctype>
#include <charconv>
#include <limits>

#include "engine/base/number_text.h"
#include "engine/io/logits_readers.h"

namespace samplescope::detail {

namespace {

std::string_view trim(std::string_view text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
    return text;
}

// The project's one number parser (engine/base/number_text.h): no hex, no
// "+-", no empty field; out of range rounds to +-inf or +-0.
bool parse_number(std::string_view text, double& value) {
    const auto parsed = parse_real(text);
    if (parsed) value = *parsed;
    return parsed.has_value();
}

bool is_hard_separator(char c) { return c == ',' || c == ';' || c == '\t'; }

bool is_separator(char c) { return c == ',' || c == ';' || c == '\t' || c == ' '; }

std::string shortened(std::string_view text) {
    return text.size() <= 40 ? std::string(text) : std::string(text.substr(0, 37)) + "...";
}

// Built by appending: GCC 12 misreads `"\"" + std::string + "..."` under -Wrestrict.
std::string not_a_number(std::string_view field) {
    std::string message = "\"";
    message += shortened(field);
    message += "\" is not a number";
    return message;
}

}  // namespace

LogitsMatrix parse_text_logits(std::string_view text, const ByteSource& source) {
    if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // UTF-8 byte order mark
    LogitsMatrix matrix;
    std::vector<std::string> labels;
    std::size_t line_number = 0;
    std::size_t first_row_line = 0;
    std::size_t numeric_lines = 0;
    std::size_t labelled_lines = 0;
    std::size_t widest_line = 0;  // values on the first numeric line
    const auto line_error = [&](const std::string& problem) {
        source.fail("line " + std::to_string(line_number) + ": " + problem);
    };
    std::vector<double> fields;
    while (!text.empty()) {
        const auto newline = text.find('\n');
        const std::string_view raw = text.substr(0, newline);
        text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
        ++line_number;
        const std::string_view line = trim(raw);
        if (line.empty() || line.front() == '#') continue;

        // Once lines are `label<TAB or colon>logit`, every line is: a label may
        // itself look like a number, or be only spaces (a space token).
        const bool labelled_line = labelled_lines > 0 && raw.find_first_of(":\t") != std::string_view::npos;
        fields.clear();
        bool all_numbers = !labelled_line;
        std::string_view bad_field;
        // An empty field between two commas, semicolons or tabs (or before the
        // first, or after the last) would shift every id after it: refused
        // once the line is known to be numbers. Runs of spaces are one separator.
        std::size_t empty_field = 0;  // 1-based column of the first empty field
        bool after_hard = true;       // nothing but spaces since the line start or the last hard separator
        for (std::size_t start = 0; all_numbers && start <= line.size();) {
            std::size_t end = start;
            while (end < line.size() && !is_separator(line[end])) ++end;
            const std::string_view field = trim(line.substr(start, end - start));
            const bool hard_end = end == line.size() || is_hard_separator(line[end]);
            start = end + 1;
            if (field.empty()) {
                if (hard_end && after_hard && empty_field == 0) empty_field = fields.size() + 1;
                if (end < line.size() && is_hard_separator(line[end])) after_hard = true;
                continue;
            }
            after_hard = end < line.size() && is_hard_separator(line[end]);
            double value = 0.0;
            if (!parse_number(field, value)) {
                all_numbers = false;
                bad_field = field;
                break;
            }
            fields.push_back(value);
        }
        if (all_numbers && empty_field != 0) {
            line_error("empty field at column " + std::to_string(empty_field) +
                       " (a value is missing; every id after it would shift)");
        }
        if (all_numbers) {
            if (labelled_lines) line_error("numbers without a label after `label<TAB>logit` lines");
            if (numeric_lines == 0) {
                widest_line = fields.size();
                first_row_line = line_number;
            } else if (fields.size() != widest_line && (widest_line > 1 || fields.size() > 1)) {
                line_error("ragged rows: " + std::to_string(fields.size()) + " values, line " + std::to_string(first_row_line) +
                           " has " + std::to_string(widest_line));
            }
            ++numeric_lines;
            matrix.values.insert(matrix.values.end(), fields.begin(), fields.end());
            continue;
        }
        // `label<TAB or colon>logit`: the last separator splits label from value.
        // The label keeps its spaces after a tab (" the" is a token); before a
        // colon they are trimmed ("New York: -2").
        std::string_view content = raw;
        if (!content.empty() && content.back() == '\r') content.remove_suffix(1);
        const auto sep = content.find_last_of(":\t");
        if (sep == std::string_view::npos) line_error(not_a_number(bad_field));
        double value = 0.0;
        const std::string_view value_text = trim(content.substr(sep + 1));
        if (!parse_number(value_text, value)) line_error(not_a_number(value_text));
        if (numeric_lines) line_error("a `label<TAB>logit` line after lines of plain numbers");
        ++labelled_lines;
        labels.emplace_back(content[sep] == '\t' ? content.substr(0, sep) : trim(content.substr(0, sep)));
        matrix.values.push_back(value);
    }
    if (matrix.values.empty()) source.fail("no logits found (the file has no numbers)");
    if (numeric_lines > 1 && widest_line > 1) {
        matrix.rows = numeric_lines;
        matrix.cols = widest_line;
    } else {
        matrix.rows = 1;
        matrix.cols = matrix.values.size();
    }
    if (labelled_lines) matrix.labels = std::move(labels);
    return matrix;
}

LogitsMatrix read_text_logits(const ByteSource& source, const LoadOptions&) {
    const std::string text = source.read_all(kTextLimitBytes);
    return parse_text_logits(text, source);
}

}  // namespace samplescope::detail
