#include "engine/json/params_json.h"

#include <cmath>
#include <limits>
#include <string>

#include "engine/base/input_error.h"
#include "engine/base/number_text.h"
#include "engine/io/byte_source.h"

namespace samplescope {

namespace {

std::vector<std::int64_t> id_list(const nlohmann::json& value, const std::string& key, const std::string& where) {
    if (!value.is_array()) throw InputError(key, where + ": " + key + " must be an array of integer ids");
    std::vector<std::int64_t> ids;
    for (const auto& item : value) {
        if (!item.is_number_integer() ||
            (item.is_number_unsigned() &&
             item.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) ||
            (!item.is_number_unsigned() && item.get<std::int64_t>() < 0)) {
            throw InputError(key, where + ": " + key + " must hold integer ids in [0, 9223372036854775807], got " +
                                      item.dump());
        }
        ids.push_back(item.get<std::int64_t>());
    }
    return ids;
}

}  // namespace

RowRequest row_request_from_json(const nlohmann::json& object, const std::string& where) {
    if (!object.is_object()) throw InputError("params", where + ": expected an object of parameters");
    RowRequest row;
    for (const auto& [key, value] : object.items()) {
        if (key == "seed") {
            if (value.is_null()) continue;
            if (value.is_string()) {
                row.params.seed = parse_seed(value.get<std::string>());
            } else if (value.is_number_unsigned()) {
                row.params.seed = value.get<std::uint64_t>();
            } else {
                throw InputError("seed", where + ": seed must be a decimal string, got " + value.dump());
            }
        } else if (const ListParamInfo* list = list_param_from_key(key)) {
            if (!value.is_string()) {
                throw InputError(key, where + ": " + key + " must be a string " + std::string(list->syntax) +
                                          ", got " + value.dump());
            }
            try {
                list->parse(row.params, value.get<std::string>());
            } catch (const InputError& error) {
                throw InputError(key, where + ": " + error.what());
            }
        } else if (key == "prompt_ids") {
            row.prompt_ids = id_list(value, key, where);
        } else if (key == "output_ids") {
            row.output_ids = id_list(value, key, where);
        } else if (key == "skip_draws") {
            if (!value.is_number_unsigned()) {
                throw InputError(key, where + ": skip_draws must be an integer >= 0, got " + value.dump());
            }
            row.skip_draws = value.get<std::uint64_t>();
            // The row's own draw must still fit the 64-bit draw counter.
            check_draw_counter(row.skip_draws, 1, key);
        } else if (const auto param = param_from_key(key)) {
            if (!value.is_number()) throw InputError(key, where + ": " + key + " must be a number, got " + value.dump());
            try {
                if (!param_info(*param).integer()) {
                    set_param(row.params, *param, value.get<double>());
                } else if (value.is_number_integer()) {
                    // Read exactly: a JSON integer never passes through a double.
                    if (value.is_number_unsigned() &&
                        value.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
                        throw InputError(key, key + " must be " + std::string(param_info(*param).valid_range) +
                                                  ", got " + value.dump() + " (beyond the 64-bit range)");
                    }
                    set_integer_param(row.params, *param, value.get<std::int64_t>());
                } else {
                    // A JSON real is a double: whole and within 2^53 it is exact, else refused as written.
                    const double real = value.get<double>();
                    if (!(std::floor(real) == real && std::fabs(real) <= 9007199254740992.0)) {
                        throw InputError(key, key + " must be " + std::string(param_info(*param).valid_range) +
                                                  ", got " + value.dump() +
                                                  (std::floor(real) == real ? " (write an integer past 2^53 without "
                                                                              "a fraction or exponent)"
                                                                            : ""));
                    }
                    set_integer_param(row.params, *param, static_cast<std::int64_t>(real));
                }
            } catch (const InputError& error) {
                throw InputError(key, where + ": " + error.what());
            }
        } else {
            throw InputError(key, where + ": unknown parameter \"" + key + "\"");
        }
    }
    return row;
}

std::vector<RowRequest> row_requests_from_json(const nlohmann::json& list, std::size_t rows, const std::string& source) {
    if (!list.is_array()) throw InputError(source, source + ": expected a list with one object per row");
    if (list.size() != rows) {
        throw InputError(source, source + ": has " + std::to_string(list.size()) + " rows but the logits have " +
                                     std::to_string(rows));
    }
    std::vector<RowRequest> requests;
    requests.reserve(rows);
    for (std::size_t r = 0; r < rows; ++r) {
        try {
            requests.push_back(row_request_from_json(list[r], "row " + std::to_string(r)));
        } catch (const InputError& error) {
            throw InputError(error.field(), source + ": " + error.what());
        }
    }
    return requests;
}

std::vector<RowRequest> load_row_requests_file(const std::string& path, std::size_t rows) {
    // The same checks as every other file argument: a regular file (a FIFO or
    // a device is refused before it is opened), readable, at most the limit.
    const FileSource source(path);
    const std::string text = source.read_all(kParamsFileLimitBytes);
    nlohmann::json json;
    try {
        json = nlohmann::json::parse(text);
    } catch (const nlohmann::json::out_of_range& error) {
        // The only range error of the parser: a number such as 1e999.
        const std::string what = error.what();
        const auto open = what.find('\'');
        const auto close = open == std::string::npos ? open : what.find('\'', open + 1);
        // Built by appending: GCC 12 misreads `" " + std::string` under -Wrestrict.
        std::string message = path;
        message += ": the number";
        if (close != std::string::npos) {
            message += ' ';
            message.append(what, open + 1, close - open - 1);
        }
        message += " is outside the range of a double";
        throw InputError(path, message);
    } catch (const nlohmann::json::exception& error) {
        throw InputError(path, path + ": not valid JSON (" + std::string(error.what()) + ")");
    }
    return row_requests_from_json(json, rows, path);
}

nlohmann::ordered_json params_to_json(const SamplingParams& params) {
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    for (const auto& info : kParams) {
        // Only what differs from the table's default: a parameter added to
        // the table leaves every record made without it as it was.
        if (param_is_default(params, info.param)) continue;
        if (info.integer()) {
            out[std::string(info.key)] = integer_param(params, info.param);
        } else {
            out[std::string(info.key)] = param_value(params, info.param);
        }
    }
    for (const auto& list : kListParams) {
        if (list.set(params)) out[std::string(list.key)] = list.text(params);
    }
    out["seed"] = params.seed ? nlohmann::ordered_json(std::to_string(*params.seed)) : nlohmann::ordered_json(nullptr);
    return out;
}

}  // namespace samplescope
