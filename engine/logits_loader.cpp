#include "engine/logits_loader.h"

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/input_error.h"

namespace samplescope {

namespace {

[[noreturn]] void fail(const std::string& source, const std::string& problem) {
    throw InputError(source, source + ": " + problem);
}

std::string read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(path, "cannot open the file");
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) fail(path, "read error");
    return data;
}

bool ends_with(const std::string& text, const std::string& suffix) {
    if (text.size() < suffix.size()) return false;
    for (std::size_t i = 0; i < suffix.size(); ++i) {
        if (std::tolower(static_cast<unsigned char>(text[text.size() - suffix.size() + i])) != suffix[i]) return false;
    }
    return true;
}

std::string trim(const std::string& text) {
    std::size_t begin = 0;
    std::size_t end = text.size();
    while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
    while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
    return text.substr(begin, end - begin);
}

bool parse_number(const std::string& text, double& value) {
    if (text.empty()) return false;
    char* end = nullptr;
    value = std::strtod(text.c_str(), &end);
    return end == text.c_str() + text.size();
}

// --- .npy (little-endian f32/f64, C order, 1-D or 2-D) -------------------------

LogitsMatrix parse_npy(const std::string& data, const std::string& path) {
    if (data.size() < 10 || std::memcmp(data.data(), "\x93NUMPY", 6) != 0) fail(path, "not a .npy file (bad magic)");
    const auto major = static_cast<unsigned char>(data[6]);
    std::size_t header_len = 0;
    std::size_t header_start = 0;
    if (major == 1) {
        header_len = static_cast<unsigned char>(data[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(data[9])) << 8);
        header_start = 10;
    } else if (major == 2 || major == 3) {
        if (data.size() < 12) fail(path, "truncated .npy header");
        header_len = 0;
        for (int i = 0; i < 4; ++i) header_len |= static_cast<std::size_t>(static_cast<unsigned char>(data[8 + i])) << (8 * i);
        header_start = 12;
    } else {
        fail(path, "unsupported .npy version " + std::to_string(major));
    }
    if (header_start + header_len > data.size()) fail(path, "truncated .npy header");
    const std::string header = data.substr(header_start, header_len);

    const auto value_of = [&](const std::string& key) {
        const auto at = header.find("'" + key + "'");
        if (at == std::string::npos) fail(path, "the .npy header has no '" + key + "'");
        const auto colon = header.find(':', at);
        if (colon == std::string::npos) fail(path, "malformed .npy header");
        return trim(header.substr(colon + 1));
    };
    const std::string descr = value_of("descr");
    std::size_t item = 0;
    if (descr.rfind("'<f4'", 0) == 0) {
        item = 4;
    } else if (descr.rfind("'<f8'", 0) == 0) {
        item = 8;
    } else {
        fail(path, "unsupported dtype " + descr.substr(0, descr.find(',')) + " (expected <f4 or <f8)");
    }
    if (value_of("fortran_order").rfind("False", 0) != 0) fail(path, "Fortran-order arrays are not supported");
    const std::string shape_text = value_of("shape");
    const auto open = shape_text.find('(');
    const auto close = shape_text.find(')');
    if (open == std::string::npos || close == std::string::npos) fail(path, "malformed shape in the .npy header");
    std::vector<std::size_t> shape;
    std::stringstream dims(shape_text.substr(open + 1, close - open - 1));
    std::string dim;
    while (std::getline(dims, dim, ',')) {
        dim = trim(dim);
        if (dim.empty()) continue;
        char* end = nullptr;
        const unsigned long long n = std::strtoull(dim.c_str(), &end, 10);
        if (end != dim.c_str() + dim.size()) fail(path, "malformed shape in the .npy header");
        shape.push_back(static_cast<std::size_t>(n));
    }
    if (shape.empty() || shape.size() > 2) fail(path, "expected a 1-D or 2-D array, got " + std::to_string(shape.size()) + "-D");
    LogitsMatrix matrix;
    matrix.rows = shape.size() == 2 ? shape[0] : 1;
    matrix.cols = shape.back();
    if (matrix.cols != 0 && matrix.rows > std::numeric_limits<std::size_t>::max() / matrix.cols / item) {
        fail(path, "shape too large");
    }
    const std::size_t count = matrix.rows * matrix.cols;
    const std::size_t offset = header_start + header_len;
    if (data.size() - offset < count * item) {
        fail(path, "truncated data: the header promises " + std::to_string(count) + " values, the file holds " +
                       std::to_string((data.size() - offset) / item));
    }
    matrix.values.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
        if (item == 4) {
            float f;
            std::memcpy(&f, data.data() + offset + i * 4, 4);
            matrix.values[i] = f;
        } else {
            std::memcpy(&matrix.values[i], data.data() + offset + i * 8, 8);
        }
    }
    return matrix;
}

// --- JSON -------------------------------------------------------------------------

double json_number(const nlohmann::json& value, const std::string& path) {
    if (value.is_number()) return value.get<double>();
    if (value.is_string() && value.get<std::string>() == "-inf") return -std::numeric_limits<double>::infinity();
    fail(path, "expected a number, got " + value.dump());
}

LogitsMatrix parse_json(const std::string& data, const std::string& path) {
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(data);
    } catch (const nlohmann::json::exception& error) {
        fail(path, std::string("malformed JSON: ") + error.what());
    }
    LogitsMatrix matrix;
    const nlohmann::json* array = &doc;
    if (doc.is_object()) {
        if (!doc.contains("logits")) fail(path, "a JSON object must have a \"logits\" key");
        array = &doc["logits"];
        if (doc.contains("tokens")) {
            for (const auto& token : doc["tokens"]) {
                if (!token.is_string()) fail(path, "\"tokens\" must be strings");
                matrix.labels.push_back(token.get<std::string>());
            }
        }
    }
    if (!array->is_array()) fail(path, "expected a JSON array of logits");
    if (!array->empty() && (*array)[0].is_array()) {
        matrix.rows = array->size();
        matrix.cols = (*array)[0].size();
        for (std::size_t r = 0; r < array->size(); ++r) {
            const auto& row = (*array)[r];
            if (!row.is_array() || row.size() != matrix.cols) fail(path, "ragged rows: row " + std::to_string(r) + " differs in length from row 0");
            for (const auto& v : row) matrix.values.push_back(json_number(v, path));
        }
    } else {
        matrix.rows = 1;
        matrix.cols = array->size();
        for (const auto& v : *array) matrix.values.push_back(json_number(v, path));
    }
    if (!matrix.labels.empty() && matrix.labels.size() != matrix.cols) {
        fail(path, "\"tokens\" has " + std::to_string(matrix.labels.size()) + " labels for " + std::to_string(matrix.cols) + " logits");
    }
    return matrix;
}

}  // namespace

LogitsMatrix parse_logits_text(const std::string& text, const std::string& source) {
    LogitsMatrix matrix;
    std::vector<std::string> labels;
    std::istringstream lines(text);
    std::string line;
    std::size_t line_number = 0;
    bool labelled = false;
    while (std::getline(lines, line)) {
        ++line_number;
        line = trim(line);
        if (line.empty() || line[0] == '#') continue;
        // `label<TAB or colon>logit`: the last separator splits label from value.
        const auto sep = line.find_last_of(":\t");
        double value = 0.0;
        if (sep != std::string::npos && !parse_number(trim(line.substr(0, sep)), value)) {
            if (!parse_number(trim(line.substr(sep + 1)), value)) {
                fail(source, "line " + std::to_string(line_number) + ": \"" + trim(line.substr(sep + 1)) + "\" is not a number");
            }
            labelled = true;
            labels.push_back(trim(line.substr(0, sep)));
            matrix.values.push_back(value);
            continue;
        }
        std::string item;
        for (std::size_t i = 0; i <= line.size(); ++i) {
            const char c = i < line.size() ? line[i] : ',';
            if (c == ',' || c == '\t' || c == ' ' || c == ';') {
                const std::string token = trim(item);
                item.clear();
                if (token.empty()) continue;
                if (!parse_number(token, value)) {
                    fail(source, "line " + std::to_string(line_number) + ": \"" + token + "\" is not a number");
                }
                matrix.values.push_back(value);
                labels.emplace_back();
            } else {
                item.push_back(c);
            }
        }
    }
    if (matrix.values.empty()) fail(source, "no logits found (empty input)");
    matrix.rows = 1;
    matrix.cols = matrix.values.size();
    if (labelled) matrix.labels = std::move(labels);
    return matrix;
}

LogitsMatrix load_logits_file(const std::string& path) {
    const std::string data = read_all(path);
    if (data.empty()) fail(path, "the file is empty");
    if (ends_with(path, ".npy")) return parse_npy(data, path);
    if (ends_with(path, ".json")) return parse_json(data, path);
    return parse_logits_text(data, path);
}

}  // namespace samplescope
