#include "ui/common/examples.h"

#include <cmath>
#include <iterator>

#include "engine/core/synthetic_logits.h"
#include "engine/pipelines/pipeline_presets.h"

namespace samplescope::ui {

Example workedExample() {
    Example example;
    example.name = "Contract worked example (V = 5)";
    example.description = "The sampling contract's worked example: x = [1, 3, 2, 3, -1], T = 1, top_k = 3, "
                          "top_p = 0.8, seed 0; the token is 3 with logprob -0.92487.";
    example.logits = {1.0, 3.0, 2.0, 3.0, -1.0};
    example.params.top_k = 3;
    example.params.top_p = 0.8;
    example.params.seed = 0;
    return example;
}

Example abcdExample() {
    Example example;
    example.name = "Four tokens A, B, C, D";
    example.description = "The teaching page's logits [3, 2, 1, 0] for A, B, C, D at T = 1 with top_p = 0.9: "
                          "A, B and C survive (cumulative 0.6439, 0.8808, 0.9679).";
    example.logits = {3.0, 2.0, 1.0, 0.0};
    example.labels = {"A", "B", "C", "D"};
    example.params.top_p = 0.9;
    example.params.seed = 0;
    return example;
}

Example realisticExample() {
    Example example;
    example.name = "Realistic row (V = 128,256)";
    example.description = "A generated full-size row after \"and the cat sat\" \"very very still\": Zipf-like "
                          "(logit falls with log rank) plus small deterministic noise, every stage switched on.";
    example.logits = realistic_logits(kRealisticVocab);
    example.params.temperature = 0.8;
    example.params.repetition_penalty = 1.1;
    example.params.presence_penalty = 0.3;
    example.params.frequency_penalty = 0.2;
    example.params.top_k = 100;
    example.params.top_p = 0.9;
    example.params.min_p = 0.02;
    example.params.seed = 42;
    // The history names a few of the most likely tokens, so the penalties visibly move them.
    const auto id_of_rank = [](std::size_t rank) { return realistic_id_of_rank(rank, kRealisticVocab); };
    example.prompt_ids = {id_of_rank(0), id_of_rank(3), id_of_rank(17), id_of_rank(250)};
    example.output_ids = {id_of_rank(1), id_of_rank(1), id_of_rank(5)};
    // Words for the ranks a reader sees (the top 100 and the history): "and the cat sat" then
    // "very very still"; the rest of the row stays tok_<id>. Invented, like the logits.
    static constexpr const char* kWords[] = {
        "and", "very", "tonight", "the", "awhile", "still", "on", "in", "for", "with", "quietly", "while", "as", "by",
        "near", "beside", "until", "cat", "so", "alone", "again", "there", "now", "then", "today", "too", "all",
        "at", "under", "inside", "outside", "long", "that", "but", "or", "like", "quite", "soft", "warm", "calm",
        "waiting", "watching", "listening", "asleep", "awake", "happy", "content", "patient", "silent", "upright",
        "below", "above", "beneath", "across", "through", "after", "before", "during", "without", "because", "if",
        "when", "where", "which", "who", "it", "she", "he", "they", "we", "you", "I", "a", "an", "this", "these",
        "those", "his", "her", "its", "their", "our", "my", "your", "one", "two", "three", "some", "many", "few",
        "more", "most", "less", "just", "only", "even", "also", "not", "never", "always", "often", "sometimes",
        "here", "away", "back", "down", "up", "out", "off", "over", "round", "along", "behind", "toward", "upon",
        "within", "ever", "yet", "almost", "nearly", "perhaps", "maybe", "indeed", "really", "truly"};
    const auto label = [&example](std::int64_t id, const char* word) {
        const auto at = static_cast<std::size_t>(id);
        if (example.labels.size() <= at) example.labels.resize(at + 1);
        example.labels[at] = word;
    };
    for (std::size_t rank = 0; rank < std::size(kWords); ++rank) label(id_of_rank(rank), kWords[rank]);
    label(id_of_rank(250), "sat");
    return example;
}

std::vector<Example> builtInExamples() { return {workedExample(), abcdExample(), realisticExample()}; }

namespace {

// Logits whose softmax is the given distribution (up to rounding).
std::vector<double> logOf(std::initializer_list<double> probs) {
    std::vector<double> logits;
    for (const double p : probs) logits.push_back(std::log(p));
    return logits;
}

std::vector<SamplerExample> buildSamplerExamples() {
    std::vector<SamplerExample> list;
    SamplingParams seeded;
    seeded.seed = 0;
    {
        // "the cat sat on the mat . the cat sat on the": the next "mat" would repeat five tokens.
        SamplerExample e{"dry", "DRY: a repeat of length 5",
                         "DRY on (multiplier 0.8, base 1.75, allowed 2): the history ends \"the cat sat on the\", "
                         "which came before followed by \"mat\"; \"mat\" would extend a repeat of L = 5 and loses "
                         "0.8 x 1.75^3 = 4.29. The contract's pipeline has no DRY.",
                         {1.0, 0.5, 0.2, 0.0, 3.0, 0.8, 1.5}, {"the", "cat", "sat", "on", "mat", ".", "dog"},
                         seeded, {}, {0, 1, 2, 3, 0, 4, 5, 0, 1, 2, 3, 0}, "spec", "llamacpp", 1};
        e.params.dry_multiplier = 0.8;
        list.push_back(e);
    }
    {
        SamplerExample e{"xtc", "XTC: exclude the top choices",
                         "XTC with probability 0.5 and threshold 0.15 on q = [.35, .25, .2, .1, .06, .04]: three ids "
                         "reach the threshold; when the coin fires (u < 0.5, as seed 8's first coin does) the two "
                         "likeliest are removed and the least likely of the three stays. The exact distribution "
                         "mixes both outcomes.",
                         logOf({0.35, 0.25, 0.2, 0.1, 0.06, 0.04}), {"A", "B", "C", "D", "E", "F"}, seeded, {}, {},
                         "spec", "llamacpp", 1};
        e.params.seed = 8;
        e.params.xtc_probability = 0.5;
        e.params.xtc_threshold = 0.15;
        list.push_back(e);
    }
    {
        SamplerExample e{"mirostat2", "Mirostat 2: keep the surprise below mu",
                         "Mirostat 2 with tau 2 (mu starts at 4 bits): ids with -log2 q <= 4, q >= 1/16, are kept. "
                         "Step (Ctrl+Return) moves mu by eta (surprise - tau); Reset request puts it back to 2 tau.",
                         logOf({0.3, 0.2, 0.15, 0.1, 0.08, 0.06, 0.04, 0.03, 0.02, 0.02}),
                         {"A", "B", "C", "D", "E", "F", "G", "H", "I", "J"}, seeded, {}, {}, "spec", "llamacpp", 1};
        e.params.mirostat = 2;
        e.params.mirostat_tau = 2.0;
        e.params.mirostat_eta = 0.5;
        list.push_back(e);
    }
    {
        SamplerExample e{"mirostat1", "Mirostat 1: the k that Zipf's law gives",
                         "Mirostat 1 with tau 3 (mu starts at 6 bits) on a Zipf-like row of 200 ids: s_hat is fitted "
                         "from the top ranks and the k it gives for mu is kept.",
                         {}, {}, seeded, {}, {}, "spec", "llamacpp", 1};
        for (int rank = 1; rank <= 200; ++rank) e.logits.push_back(-1.1 * std::log(static_cast<double>(rank)));
        e.params.mirostat = 1;
        e.params.mirostat_tau = 3.0;
        list.push_back(e);
    }
    {
        SamplerExample e{"dynatemp", "Dynamic temperature: T from the entropy",
                         "T 1 with a dynamic range of 0.8 on a peaked row: H / log n is about 0.15, so T' = 0.2 + "
                         "1.6 x 0.15, about 0.44, near the low end max(0, 1 - 0.8) = 0.2, and q sharpens further; the "
                         "contract's pipeline divides by T = 1.",
                         logOf({0.95, 0.02, 0.01, 0.01, 0.005, 0.005}), {"A", "B", "C", "D", "E", "F"}, seeded, {}, {},
                         "spec", "llamacpp", 1};
        e.params.dynatemp_range = 0.8;
        list.push_back(e);
    }
    {
        SamplerExample e{"typical", "Typical-p: the ids nearest exp(-H)",
                         "Typical-p 0.5: ids are taken by how close -log q is to the entropy H, not by rank, so the "
                         "most likely id can be left out.",
                         logOf({0.5, 0.15, 0.12, 0.1, 0.08, 0.05}), {"A", "B", "C", "D", "E", "F"}, seeded, {}, {},
                         "spec", "llamacpp", 1};
        e.params.typical_p = 0.5;
        list.push_back(e);
    }
    {
        SamplerExample e{"top_n_sigma", "Top-n-sigma: logits within n sigma of the max",
                         "Top-n-sigma 1: logits below max - 1 x sigma of the candidates' logits are dropped.",
                         {4.0, 3.6, 3.0, 1.0, 0.5, 0.0, -0.5, -1.0}, {"A", "B", "C", "D", "E", "F", "G", "H"},
                         seeded, {}, {}, "spec", "llamacpp", 1};
        e.params.top_n_sigma = 1.0;
        list.push_back(e);
    }
    {
        SamplerExample e{"order_xtc", "Order: top-k before vs after XTC",
                         "q = [.4, .3, .2, .1], top_k 2, XTC always firing (p 1, threshold 0.1). Top-k first leaves "
                         "{A, B}, both above the threshold: XTC keeps B. XTC first sees all four above it and keeps "
                         "D, which top-k then keeps alone.",
                         logOf({0.4, 0.3, 0.2, 0.1}), {"A", "B", "C", "D"}, seeded, {}, {}, "top_k,xtc", "xtc,top_k", 0};
        e.params.top_k = 2;
        e.params.xtc_probability = 1.0;
        e.params.xtc_threshold = 0.1;
        list.push_back(e);
    }
    return list;
}

}  // namespace

const std::vector<SamplerExample>& samplerExamples() {
    static const std::vector<SamplerExample> examples = buildSamplerExamples();
    return examples;
}

Pipeline samplerExamplePipeline(const std::string& name_or_steps) {
    for (const auto& preset : kPresets) {
        if (preset.name == name_or_steps) return preset_pipeline(name_or_steps);
    }
    return custom_pipeline(name_or_steps);
}

}  // namespace samplescope::ui
