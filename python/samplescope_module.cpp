// The `samplescope` Python module: the CLI's trace, sample, batch and verify
// on numpy arrays, with the CLI's parameter names without dashes and the
// CLI's JSON as Python dicts. Bad input raises samplescope.InputError (a
// ValueError) carrying the CLI's one-line message.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "app/cli/pipeline_options.h"
#include "app/request_options.h"
#include "engine/base/input_error.h"
#include "engine/base/number_text.h"
#include "engine/json/params_json.h"
#include "engine/json/pipeline_json.h"
#include "engine/json/trace_json.h"
#include "engine/json/trace_labels.h"
#include "engine/json/verify_json.h"
#include "engine/pipelines/pipeline_runner.h"
#include "engine/pipelines/request.h"
#include "engine/stats/verification.h"
#include "kernels/batch_engine.h"

namespace py = pybind11;
using namespace samplescope;

namespace {

// A JSON value as the Python object json.loads would give.
py::object to_python(const nlohmann::ordered_json& json) {
    return py::module_::import("json").attr("loads")(json.dump());
}

// A Python value as a message shows it: its repr, cut short.
std::string shown(const py::handle& value) {
    std::string text;
    try {
        text = py::cast<std::string>(py::repr(value));
    } catch (const py::error_already_set&) {
        text = "<" + py::cast<std::string>(py::str(py::type::handle_of(value).attr("__name__"))) + ">";
    }
    if (text.size() > 80) text = text.substr(0, 77) + "...";
    return text;
}

bool is_numpy(const py::handle& value, const char* kind) {
    return py::isinstance(value, py::module_::import("numpy").attr(kind));
}

// A Python or numpy integer; a bool is not one here (True would read as 1).
bool is_integer(const py::handle& value) {
    if (py::isinstance<py::bool_>(value) || is_numpy(value, "bool_")) return false;
    return py::isinstance<py::int_>(value) || is_numpy(value, "integer");
}

bool is_real(const py::handle& value) {
    return is_integer(value) || py::isinstance<py::float_>(value) || is_numpy(value, "floating");
}

// A number as the text the CLI's flag would hold: an integer's exact digits,
// a float's shortest round trip (a numpy float as the Python float it equals).
std::string number_text(const std::string& key, const py::handle& value) {
    if (is_integer(value)) return py::cast<std::string>(py::str(py::int_(py::reinterpret_borrow<py::object>(value))));
    if (is_real(value)) return py::cast<std::string>(py::repr(py::float_(py::reinterpret_borrow<py::object>(value))));
    throw InputError(key, key + " must be a number, got " + shown(value));
}

std::string integer_text(const std::string& key, const py::handle& value) {
    if (!is_integer(value)) throw InputError(key, key + " must be an integer, got " + shown(value));
    return py::cast<std::string>(py::str(py::int_(py::reinterpret_borrow<py::object>(value))));
}

std::string string_arg(const std::string& key, const py::handle& value) {
    if (!py::isinstance<py::str>(value)) throw InputError(key, key + " must be a string, got " + shown(value));
    return py::cast<std::string>(value);
}

std::int64_t integer_arg(const std::string& key, const py::handle& value, std::int64_t lo, std::int64_t hi) {
    return parse_int_in_range(integer_text(key, value), key, key, lo, hi);
}

bool bool_arg(const std::string& key, const py::handle& value) {
    if (!py::isinstance<py::bool_>(value) && !is_numpy(value, "bool_")) {
        throw InputError(key, key + " must be True or False, got " + shown(value));
    }
    return py::cast<bool>(py::bool_(py::reinterpret_borrow<py::object>(value)));
}

double real_arg(const std::string& key, const py::handle& value) {
    const std::string text = number_text(key, value);
    const auto parsed = parse_real(text);
    if (!parsed || real_overflows(text)) throw InputError(key, key + " must be a number, got " + shown(value));
    return *parsed;
}

// A list of per-row parameter dicts as JSON: numpy scalars as the Python
// numbers they hold; NaN, infinities and objects JSON has no form for refused.
nlohmann::json params_list_json(const py::handle& object) {
    if (!py::isinstance<py::list>(object) && !py::isinstance<py::tuple>(object)) {
        throw InputError("params_list", "params_list must be a list with one dict per row, got " + shown(object));
    }
    const py::cpp_function item([](const py::object& value) -> py::object {
        if (is_numpy(value, "generic")) return value.attr("item")();
        throw py::type_error("a " + py::cast<std::string>(py::str(py::type::handle_of(value).attr("__name__"))) +
                             " has no JSON form");
    });
    std::string text;
    try {
        text = py::cast<std::string>(py::module_::import("json").attr("dumps")(object, py::arg("allow_nan") = false,
                                                                                  py::arg("default") = item));
    } catch (const py::error_already_set& error) {
        std::string what = error.what();
        what = what.substr(0, what.find('\n'));
        throw InputError("params_list", "params_list holds a value JSON cannot hold (" + what + ")");
    }
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& error) {
        // Only a number past a double's range gets here (10**400).
        throw InputError("params_list", "params_list holds a number outside the range of a double");
    }
}

struct Matrix {
    std::size_t rows = 0;
    std::size_t cols = 0;
    std::vector<double> values;
    bool two_d = false;
    std::vector<double> row(std::size_t r) const {
        return {values.begin() + static_cast<std::ptrdiff_t>(r * cols),
                values.begin() + static_cast<std::ptrdiff_t>((r + 1) * cols)};
    }
};

std::string shape_text(const py::array& array) {
    std::string text = "[";
    for (py::ssize_t d = 0; d < array.ndim(); ++d) text += (d ? ", " : "") + std::to_string(array.shape(d));
    return text + "]";
}

// A numpy array (or what numpy makes of a list) of real numbers: float or
// integer dtypes only; bool, complex, strings and objects are refused, never
// converted.
py::array real_array(const py::handle& object, const char* name) {
    const py::array array = py::array::ensure(object);
    if (!array) throw InputError(name, std::string(name) + " must be an array of numbers, got " + shown(object));
    const char kind = array.dtype().kind();
    if (kind != 'f' && kind != 'i' && kind != 'u') {
        throw InputError(name, std::string(name) + " must hold real numbers, got dtype " +
                                   py::cast<std::string>(py::str(array.dtype())));
    }
    return array;
}

Matrix logits_of(const py::handle& object, const char* name, bool allow_2d) {
    const py::array given = real_array(object, name);
    if (given.ndim() != 1 && !(allow_2d && given.ndim() == 2)) {
        throw InputError(name, std::string(name) + " must be " + (allow_2d ? "[V] or [B, V]" : "[V]") + ", got " +
                                   std::to_string(given.ndim()) + " dimensions");
    }
    if (given.ndim() == 2 && (given.shape(0) == 0 || given.shape(1) == 0)) {
        throw InputError(name, std::string(name) + " of shape " + shape_text(given) + " holds no logits");
    }
    const auto array = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(given);
    Matrix m;
    m.two_d = array.ndim() == 2;
    m.rows = m.two_d ? static_cast<std::size_t>(array.shape(0)) : 1;
    m.cols = static_cast<std::size_t>(array.shape(array.ndim() - 1));
    m.values.assign(array.data(), array.data() + array.size());
    return m;
}

// Token ids: a list, tuple or integer array of integers (a string is not a list of ids).
std::string id_list_text(const std::string& key, const py::handle& object) {
    if (py::isinstance<py::str>(object) || py::isinstance<py::bytes>(object) || !py::isinstance<py::iterable>(object)) {
        throw InputError(key, key + " must be a list of integer ids, got " + shown(object));
    }
    if (py::isinstance<py::array>(object)) {
        const auto array = py::reinterpret_borrow<py::array>(object);
        const char kind = array.dtype().kind();
        if (array.ndim() != 1 || (kind != 'i' && kind != 'u')) {
            throw InputError(key, key + " must be a 1-D integer array of ids, got dtype " +
                                      py::cast<std::string>(py::str(array.dtype())) + " of shape " + shape_text(array));
        }
    }
    std::string text;
    for (const auto& item : object) {
        if (!text.empty()) text += ",";
        text += integer_text(key, item);
    }
    return text;
}

// The keyword arguments as the CLI's flags: every parameter validated by the
// same code and with the same messages as the CLI's.
struct Flags {
    RequestOptions request;
    cli::PipelineOptions pipeline;
    py::dict rest;  // keywords a function reads itself (steps, full, alpha, ...)
};

Flags flags_of(const std::vector<double>& logits, const py::kwargs& kwargs, const std::vector<std::string>& own) {
    Flags flags;
    std::string values;
    for (const double x : logits) {
        if (!values.empty()) values += ",";
        values += format_number(x);
    }
    flags.request.values = values.empty() ? std::string(" ") : values;
    for (const auto& info : kParams) flags.request.param_text[std::string(info.key)] = "";
    for (const auto& [key_handle, value] : kwargs) {
        const auto key = py::cast<std::string>(key_handle);
        if (flags.request.param_text.count(key)) {
            flags.request.param_text[key] = number_text(key, value);
        } else if (key == "seed") {
            // An integer, or its decimal text (as a params file gives it).
            flags.request.seed = py::isinstance<py::str>(value) ? py::cast<std::string>(value) : integer_text(key, value);
        } else if (key == "logit_bias") {
            flags.request.logit_bias = string_arg(key, value);
        } else if (key == "dry_sequence_breakers") {
            flags.request.dry_sequence_breakers = string_arg(key, value);
        } else if (key == "mirostat_mu") {
            flags.request.mirostat_mu = number_text(key, value);
        } else if (key == "prompt_ids") {
            flags.request.prompt_ids = id_list_text(key, value);
        } else if (key == "output_ids") {
            flags.request.output_ids = id_list_text(key, value);
        } else if (key == "skip_draws") {
            flags.request.skip_draws = integer_text(key, value);
        } else if (key == "pipeline") {
            flags.pipeline.name = string_arg(key, value);
        } else if (key == "stages") {
            flags.pipeline.stages = string_arg(key, value);
        } else if (key == "penalty_last_n") {
            flags.pipeline.penalty_last_n = integer_text(key, value);
        } else if (std::find(own.begin(), own.end(), key) != own.end()) {
            flags.rest[key_handle] = value;
        } else {
            throw InputError(key, "unknown parameter '" + key + "'");
        }
    }
    return flags;
}

py::object trace(const py::handle& logits_object, const py::kwargs& kwargs) {
    const Matrix logits = logits_of(logits_object, "logits", false);
    Flags flags = flags_of(logits.values, kwargs, {"steps", "full"});
    const std::int64_t steps = flags.rest.contains("steps") ? integer_arg("steps", flags.rest["steps"], 1, 100000) : 1;
    const bool full = flags.rest.contains("full") && bool_arg("full", flags.rest["full"]);
    ResolvedRequest input = resolve_request(flags.request);
    const Pipeline pipeline = cli::resolve_pipeline(flags.pipeline);
    const TraceJsonOptions json_options{full};
    // As `trace`: one request for every pipeline, each token appended to the output ids.
    auto traces = nlohmann::ordered_json::array();
    Request request(pipeline, input.params, input.prompt_ids, input.output_ids);
    request.skip_draws(input.skip_draws);
    if (input.mirostat_mu) request.set_mirostat_mu(*input.mirostat_mu);
    for (std::int64_t i = 0; i < steps; ++i) {
        const PipelineTrace step = request.step_pipeline(input.logits);
        auto json = pipeline.reference ? trace_to_json(step.trace, json_options) : pipeline_trace_to_json(step, json_options);
        add_token_text(json, step.trace, input.labels);
        traces.push_back(std::move(json));
    }
    return to_python(steps == 1 ? traces[0] : traces);
}

py::dict sample(const py::handle& logits_object, const py::kwargs& kwargs) {
    const Matrix logits = logits_of(logits_object, "logits", false);
    Flags flags = flags_of(logits.values, kwargs, {});
    const ResolvedRequest input = resolve_request(flags.request);
    const Pipeline pipeline = cli::resolve_pipeline(flags.pipeline);
    py::dict out;
    PipelineInput row{input.logits, input.params, input.prompt_ids, input.output_ids};
    row.mirostat_mu = input.mirostat_mu;
    const PipelineTrace result = trace_pipeline_once(pipeline, row, input.skip_draws);
    out["token"] = result.trace.token;
    out["logprob"] = result.trace.logprob;
    out["u"] = result.trace.u ? py::object(py::float_(*result.trace.u)) : py::object(py::none());
    out["kept"] = result.trace.final_kept().size();
    out["seed"] = std::to_string(result.trace.seed);
    return out;
}

py::object run_batch_rows(const py::handle& logits_object, const py::object& params_list, const py::object& mode_object,
                          const py::object& backend_object, const py::object& draws_object) {
    const auto draws = static_cast<std::int32_t>(integer_arg("draws", draws_object, 1, 1000000));
    const std::string mode_name = string_arg("mode", mode_object);
    const std::string backend_name = string_arg("backend", backend_object);
    const Matrix logits = logits_of(logits_object, "logits", true);
    std::vector<float> values;
    values.reserve(logits.values.size());
    for (std::size_t i = 0; i < logits.values.size(); ++i) {
        const double x = logits.values[i];
        if (std::isfinite(x) && std::fabs(x) > static_cast<double>(std::numeric_limits<float>::max())) {
            throw InputError("logits", "logits: logit " + std::to_string(i % logits.cols) + " of row " +
                                           std::to_string(i / logits.cols) + " does not fit in f32");
        }
        values.push_back(static_cast<float>(x));
    }
    std::vector<RowRequest> requests(logits.rows);
    if (!params_list.is_none()) requests = row_requests_from_json(params_list_json(params_list), logits.rows, "params_list");
    const batch::BatchInput input = batch::make_batch_input(values.data(), logits.rows, logits.cols, requests);
    batch::BatchOptions options;
    options.mode = batch::parse_mode(mode_name);
    options.backend = batch::parse_backend(backend_name);
    options.draws = draws;
    batch::BatchOutput output;
    {
        py::gil_scoped_release release;
        output = batch::run_batch(input, options);
    }
    nlohmann::ordered_json json;
    json["backend"] = std::string(batch::backend_name(output.backend));
    json["device"] = output.device;
    if (!output.note.empty()) json["note"] = output.note;
    json["mode"] = std::string(batch::mode_name(options.mode));
    json["rows_count"] = input.rows;
    json["vocab"] = input.vocab;
    auto rows = nlohmann::ordered_json::array();
    for (std::size_t r = 0; r < input.rows; ++r) {
        rows.push_back({{"row", r},
                        {"token", output.token_at(r)},
                        {"logprob", output.logprob_at(r)},
                        {"draws_consumed", output.draws_after[r]},
                        {"kept_count", output.kept_count[r]},
                        {"seed", std::to_string(input.seed[r])}});
        if (draws > 1) {
            auto tokens = nlohmann::ordered_json::array();
            for (std::int32_t d = 0; d < draws; ++d) tokens.push_back(output.token_at(r, d));
            rows.back()["tokens"] = std::move(tokens);
        }
    }
    json["rows"] = std::move(rows);
    return to_python(json);
}

// A sampler's draws: an integer array [N] or [B, N]; floats, bools and ids
// past int64 are refused, never truncated or wrapped.
py::array_t<std::int64_t, py::array::c_style> samples_of(const py::handle& object) {
    const py::array given = py::array::ensure(object);
    if (!given) throw InputError("samples", "samples must be an integer array [N] or [B, N], got " + shown(object));
    const char kind = given.dtype().kind();
    if (kind != 'i' && kind != 'u') {
        throw InputError("samples", "samples must be integer token ids, got dtype " +
                                        py::cast<std::string>(py::str(given.dtype())));
    }
    if (given.ndim() != 1 && given.ndim() != 2) {
        throw InputError("samples", "samples must be [N] or [B, N], got " + std::to_string(given.ndim()) + " dimensions");
    }
    if (given.size() == 0) throw InputError("samples", "samples of shape " + shape_text(given) + " holds no draws");
    if (kind == 'u' && given.itemsize() == 8) {
        const auto wide = py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>::ensure(given);
        for (py::ssize_t i = 0; i < wide.size(); ++i) {
            if (wide.data()[i] > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
                throw InputError("samples", "samples: draw " + std::to_string(i) + " is " + std::to_string(wide.data()[i]) +
                                                ", past the largest token id an int64 holds");
            }
        }
    }
    return py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(given);
}

py::object verify(const py::handle& logits_object, const py::handle& samples_object, const py::kwargs& kwargs) {
    const Matrix logits = logits_of(logits_object, "logits", true);
    const auto samples = samples_of(samples_object);
    Flags flags = flags_of(logits.row(0), kwargs, {"alpha", "params_list", "row"});
    const double alpha = flags.rest.contains("alpha") ? real_arg("alpha", flags.rest["alpha"]) : kDefaultVerifyAlpha;
    if (!(alpha > 0.0 && alpha < 1.0)) {
        throw InputError("alpha", "alpha must be in (0, 1), got " + format_number(alpha));
    }
    const ResolvedRequest input = resolve_request(flags.request);
    const Pipeline pipeline = cli::resolve_pipeline(flags.pipeline);
    const RowRequest flag_request{input.params, input.prompt_ids, input.output_ids, input.skip_draws};
    const std::size_t sample_rows = samples.ndim() == 2 ? static_cast<std::size_t>(samples.shape(0)) : 1;
    const std::size_t n = static_cast<std::size_t>(samples.shape(samples.ndim() - 1));
    std::vector<SamplerRow> rows;
    if (flags.rest.contains("params_list") && !flags.rest["params_list"].is_none()) {
        const auto requests =
            row_requests_from_json(params_list_json(flags.rest["params_list"]), logits.rows, "params_list");
        for (std::size_t r = 0; r < logits.rows; ++r) rows.push_back({logits.row(r), requests[r], r, {}});
    } else if (sample_rows == logits.rows && sample_rows > 1) {
        for (std::size_t r = 0; r < logits.rows; ++r) rows.push_back({logits.row(r), flag_request, r, {}});
    } else {
        const auto r = flags.rest.contains("row")
                           ? static_cast<std::size_t>(integer_arg("row", flags.rest["row"], 0,
                                                                  std::numeric_limits<std::int64_t>::max()))
                           : std::size_t{0};
        if (r >= logits.rows) {
            throw InputError("row", "row " + std::to_string(r) + " is outside [0, " + std::to_string(logits.rows) + ")");
        }
        rows.push_back({logits.row(r), flag_request, r, {}});
    }
    if (sample_rows != rows.size()) {
        throw InputError("samples", "samples: " + std::to_string(sample_rows) + " rows of draws, the logits give " +
                                        std::to_string(rows.size()) + " rows to verify (one row of draws per logits row)");
    }
    for (std::size_t r = 0; r < rows.size(); ++r) rows[r].samples.assign(samples.data() + r * n, samples.data() + (r + 1) * n);
    SamplerVerification verification;
    {
        py::gil_scoped_release release;
        verification = verify_sampler(pipeline, rows, alpha);
    }
    return to_python(verification_to_json(verification, pipeline));
}

}  // namespace

PYBIND11_MODULE(samplescope, m) {
    m.doc() = "SampleScope: the exact sampling reference, its traces, the batch engine and sampler verification";
    py::register_exception<InputError>(m, "InputError", PyExc_ValueError);
    m.def("trace", &trace, py::arg("logits"),
          "Every stage of one sampling step as `samplescope-cli trace` prints it (a list when steps > 1)");
    m.def("sample", &sample, py::arg("logits"), "One draw: token, logprob, u (None when greedy), kept (kept count), seed");
    m.def("batch", &run_batch_rows, py::arg("logits"), py::arg("params_list") = py::none(),
          py::arg("mode") = py::str("exact"), py::arg("backend") = py::str("auto"), py::arg("draws") = py::int_(1),
          "Every row of a [B, V] batch on the batch engine, as `samplescope-cli batch`; with draws > 1 each row "
          "also gives `tokens`, that many draws from its kept set (positions draws_before + j of its stream)");
    m.def("verify", &verify, py::arg("logits"), py::arg("samples"),
          "A sampler's draws against the exact q, as `samplescope-cli verify` (alpha, params_list, row, pipeline, "
          "and the parameters)");
}
