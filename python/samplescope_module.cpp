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

nlohmann::json from_python(const py::handle& object) {
    return nlohmann::json::parse(py::cast<std::string>(py::module_::import("json").attr("dumps")(object)));
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

Matrix logits_of(const py::handle& object, const char* name, bool allow_2d) {
    const auto array = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(object);
    if (!array) throw InputError(name, std::string(name) + " must be an array of numbers");
    if (array.ndim() != 1 && !(allow_2d && array.ndim() == 2)) {
        throw InputError(name, std::string(name) + " must be " + (allow_2d ? "[V] or [B, V]" : "[V]") + ", got " +
                                   std::to_string(array.ndim()) + " dimensions");
    }
    Matrix m;
    m.two_d = array.ndim() == 2;
    m.rows = m.two_d ? static_cast<std::size_t>(array.shape(0)) : 1;
    m.cols = static_cast<std::size_t>(array.shape(array.ndim() - 1));
    m.values.assign(array.data(), array.data() + array.size());
    return m;
}

std::string id_list_text(const py::handle& object) {
    std::string text;
    for (const auto& item : object) {
        if (!text.empty()) text += ",";
        text += py::cast<std::string>(py::str(item));
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
            flags.request.param_text[key] = py::cast<std::string>(py::isinstance<py::float_>(value) ? py::repr(value)
                                                                                               : py::str(value));
        } else if (key == "seed") {
            flags.request.seed = py::cast<std::string>(py::str(value));
        } else if (key == "logit_bias") {
            flags.request.logit_bias = py::cast<std::string>(value);
        } else if (key == "dry_sequence_breakers") {
            flags.request.dry_sequence_breakers = py::cast<std::string>(value);
        } else if (key == "mirostat_mu") {
            flags.request.mirostat_mu = py::cast<std::string>(py::isinstance<py::float_>(value) ? py::repr(value)
                                                                                            : py::str(value));
        } else if (key == "prompt_ids") {
            flags.request.prompt_ids = id_list_text(value);
        } else if (key == "output_ids") {
            flags.request.output_ids = id_list_text(value);
        } else if (key == "skip_draws") {
            flags.request.skip_draws = py::cast<std::string>(py::str(value));
        } else if (key == "pipeline") {
            flags.pipeline.name = py::cast<std::string>(value);
        } else if (key == "stages") {
            flags.pipeline.stages = py::cast<std::string>(value);
        } else if (key == "penalty_last_n") {
            flags.pipeline.penalty_last_n = py::cast<std::string>(py::str(value));
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
    const std::int64_t steps = flags.rest.contains("steps") ? py::cast<std::int64_t>(flags.rest["steps"]) : 1;
    const bool full = flags.rest.contains("full") && py::cast<bool>(flags.rest["full"]);
    ResolvedRequest input = resolve_request(flags.request);
    if (steps < 1 || steps > 100000) {
        throw InputError("steps", "steps must be in [1, 100000], got " + std::to_string(steps));
    }
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

py::object run_batch_rows(const py::handle& logits_object, const py::object& params_list, const std::string& mode_name,
                          const std::string& backend_name, std::int32_t draws) {
    if (draws < 1 || draws > 1000000) {
        throw InputError("draws", "draws must be in [1, 1000000], got " + std::to_string(draws));
    }
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
    if (!params_list.is_none()) requests = row_requests_from_json(from_python(params_list), logits.rows, "params_list");
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

py::object verify(const py::handle& logits_object, const py::handle& samples_object, const py::kwargs& kwargs) {
    const Matrix logits = logits_of(logits_object, "logits", true);
    const auto samples = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(samples_object);
    if (!samples || (samples.ndim() != 1 && samples.ndim() != 2)) {
        throw InputError("samples", "samples must be an integer array [N] or [B, N]");
    }
    Flags flags = flags_of(logits.row(0), kwargs, {"alpha", "params_list", "row"});
    const double alpha = flags.rest.contains("alpha") ? py::cast<double>(flags.rest["alpha"]) : kDefaultVerifyAlpha;
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
        const auto requests = row_requests_from_json(from_python(flags.rest["params_list"]), logits.rows, "params_list");
        for (std::size_t r = 0; r < logits.rows; ++r) rows.push_back({logits.row(r), requests[r], r, {}});
    } else if (sample_rows == logits.rows && sample_rows > 1) {
        for (std::size_t r = 0; r < logits.rows; ++r) rows.push_back({logits.row(r), flag_request, r, {}});
    } else {
        const std::size_t r = flags.rest.contains("row") ? py::cast<std::size_t>(flags.rest["row"]) : 0;
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
    m.def("batch", &run_batch_rows, py::arg("logits"), py::arg("params_list") = py::none(), py::arg("mode") = "exact",
          py::arg("backend") = "auto", py::arg("draws") = 1,
          "Every row of a [B, V] batch on the batch engine, as `samplescope-cli batch`; with draws > 1 each row "
          "also gives `tokens`, that many draws from its kept set (positions draws_before + j of its stream)");
    m.def("verify", &verify, py::arg("logits"), py::arg("samples"),
          "A sampler's draws against the exact q, as `samplescope-cli verify` (alpha, params_list, row, pipeline, "
          "and the parameters)");
}
