#include "engine/models/sphinx_scorer.h"

#include "engine/base/input_error.h"

#ifdef SAMPLESCOPE_HAVE_SPHINXBASE
#include <sphinxbase/err.h>
#include <sphinxbase/logmath.h>
#include <sphinxbase/ngram_model.h>
#endif

namespace samplescope {

#ifdef SAMPLESCOPE_HAVE_SPHINXBASE

struct SphinxScorer::Handles {
    logmath_t* logmath = nullptr;
    ngram_model_t* model = nullptr;
    ~Handles() {
        if (model) ngram_model_free(model);
        if (logmath) logmath_free(logmath);
    }
};

bool SphinxScorer::available() { return true; }

SphinxScorer::SphinxScorer(const std::string& path) : handles_(std::make_unique<Handles>()) {
    err_set_logfp(nullptr);  // sphinxbase logs every step of a read to stderr
    handles_->logmath = logmath_init(1.0001, 0, 0);
    handles_->model = ngram_model_read(nullptr, path.c_str(), NGRAM_BIN, handles_->logmath);
    if (!handles_->model) throw InputError("model", path + ": sphinxbase could not read it");
}

SphinxScorer::~SphinxScorer() = default;

std::uint32_t SphinxScorer::vocab_size() const { return ngram_model_get_counts(handles_->model)[0]; }

std::string SphinxScorer::word(std::uint32_t id) const {
    const char* text = ngram_word(handles_->model, static_cast<int32>(id));
    return text ? text : "";
}

void SphinxScorer::scores(std::span<const std::uint32_t> history, std::vector<std::int32_t>& out) {
    const std::uint32_t vocab = vocab_size();
    out.resize(vocab);
    int32 used = 0;
    for (std::uint32_t w = 0; w < vocab; ++w) {
        const auto word = static_cast<int32>(w);
        if (history.size() >= 2) {
            out[w] = ngram_tg_score(handles_->model, word, static_cast<int32>(history[0]),
                                    static_cast<int32>(history[1]), &used);
        } else if (history.size() == 1) {
            out[w] = ngram_bg_score(handles_->model, word, static_cast<int32>(history[0]), &used);
        } else {
            out[w] = ngram_ng_score(handles_->model, word, nullptr, 0, &used);
        }
    }
}

double SphinxScorer::to_ln(std::int32_t score) const { return logmath_log_to_ln(handles_->logmath, score); }

#else

struct SphinxScorer::Handles {};

bool SphinxScorer::available() { return false; }

SphinxScorer::SphinxScorer(const std::string&) {
    throw InputError("model", "this build has no libsphinxbase (install libsphinxbase-dev and rebuild)");
}

SphinxScorer::~SphinxScorer() = default;
std::uint32_t SphinxScorer::vocab_size() const { return 0; }
std::string SphinxScorer::word(std::uint32_t) const { return {}; }
void SphinxScorer::scores(std::span<const std::uint32_t>, std::vector<std::int32_t>& out) { out.clear(); }
double SphinxScorer::to_ln(std::int32_t) const { return 0.0; }

#endif

}  // namespace samplescope
