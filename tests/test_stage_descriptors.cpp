// A stage lives in one place: the descriptor its own engine/stages/stage_*.cpp
// registers (engine/core/stage.h). These tests show that what the rest of the
// program knows of a stage is read from that descriptor: the stage, parameter
// and rule tables are its rows in enum order; uses_*() are its gate (and agree
// with the gates the kernels use); a badge is its row's; the batch engine
// refuses exactly the switches outside the contract; each stage reports the
// thresholds its plot mark draws; and a missing or doubled row stops the first
// run with the row named.
#include <QtTest>

#include <algorithm>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/base/input_error.h"
#include "engine/core/gates.h"
#include "engine/core/stage.h"
#include "engine/json/params_json.h"
#include "engine/pipelines/pipeline_presets.h"
#include "engine/stages/stage_unit.h"
#include "kernels/batch_engine.h"
#include "tests/support/random_cases.h"
#include "tests/support/sampler_runs.h"

using namespace samplescope;
using samplescope::testing::random_params;
using samplescope::testing::run;

namespace {

std::vector<const StageDescriptor*> registered() {
    const auto all = registered_stage_descriptors();
    return {all.begin(), all.end()};
}

// The message check_stage_descriptors gives for `descriptors`, or "" when it accepts them.
std::string refusal(const std::vector<const StageDescriptor*>& descriptors) {
    try {
        check_stage_descriptors(descriptors);
    } catch (const std::logic_error& error) {
        return error.what();
    }
    return {};
}

// A value of `info` that its row says is on, with the other parameters at their defaults (none: nullopt).
std::optional<SamplingParams> switched_on(const ParamInfo& info, std::size_t vocab) {
    for (const double value : {info.slider_max, info.slider_min, 1.0, 0.5, 2.0}) {
        if (param_error(info.param, value)) continue;
        SamplingParams p;
        set_param(p, info.param, value);
        if (info.on(p, vocab)) return p;
    }
    return std::nullopt;
}

bool refused_by_batch(const SamplingParams& params, std::size_t vocab, std::string* message = nullptr) {
    const std::vector<float> logits(vocab, 0.0f);
    const RowRequest request{params, {}, {}, 0};
    try {
        (void)batch::make_batch_input(logits.data(), 1, vocab, std::span<const RowRequest>(&request, 1));
    } catch (const InputError& error) {
        if (message) *message = error.what();
        return true;
    }
    return false;
}

}  // namespace

class TestStageDescriptors : public QObject {
    Q_OBJECT

private slots:
    // The descriptors the build lists make whole tables, each row at its enum value.
    void tablesAreTheDescriptorsInEnumOrder() {
        const auto descriptors = registered();
        QCOMPARE(refusal(descriptors), std::string());
        QCOMPARE(descriptors.size(), kStageCount);
        QCOMPARE(kStages.size(), kStageCount);
        for (std::size_t i = 0; i < kStageCount; ++i) {
            const auto stage = static_cast<Stage>(i);
            QCOMPARE(kStages[i].stage, stage);
            QCOMPARE(&stage_info(stage), &kStages[i]);
            QCOMPARE(stage_from_name(kStages[i].name), std::optional<Stage>(stage));
            // Its own descriptor, as its file registered it.
            const auto mine = std::count_if(descriptors.begin(), descriptors.end(), [&](const StageDescriptor* d) {
                return d->stage == stage && d->name == kStages[i].name && d->unit == kStages[i].unit;
            });
            QCOMPARE(mine, 1);
        }
        for (std::size_t i = 0; i < kParamCount; ++i) QCOMPARE(kParams[i].param, static_cast<Param>(i));
        for (std::size_t i = 0; i < kRuleCount; ++i) QCOMPARE(kRules[i].rule, static_cast<Rule>(i));
        // The contract's parameters are the table's first rows, as the kernels' plain fields are.
        for (std::size_t i = 0; i < kParamCount; ++i) QCOMPARE(kParams[i].contract, i < kContractParamCount);
    }

    // kParams holds exactly the descriptors' rows (each once, its owner
    // recorded), kListParams their lists in stage order.
    void parameterTableIsTheConcatenationOfTheDescriptorsRows() {
        std::vector<std::string_view> from_descriptors;
        std::vector<std::string_view> lists;
        for (const auto& d : kStages) {
            for (const auto& row : d.params) {
                from_descriptors.push_back(row.key);
                QCOMPARE(param_stage(row.param), d.stage);
                // The table's row is the descriptor's, field for field.
                const ParamInfo& table = param_info(row.param);
                QCOMPARE(table.key, row.key);
                QVERIFY(table.real == row.real && table.whole == row.whole && table.on == row.on);
                QCOMPARE(table.default_value, row.default_value);
            }
            for (const auto& list : d.lists) {
                lists.push_back(list.key);
                QCOMPARE(list_param_stage(list), d.stage);
            }
        }
        std::vector<std::string_view> table;
        for (const auto& info : kParams) table.push_back(info.key);
        std::vector<std::string_view> sorted_descriptors = from_descriptors;
        std::sort(sorted_descriptors.begin(), sorted_descriptors.end());
        std::vector<std::string_view> sorted_table = table;
        std::sort(sorted_table.begin(), sorted_table.end());
        QCOMPARE(sorted_descriptors, sorted_table);
        QCOMPARE(std::set<std::string_view>(table.begin(), table.end()).size(), kParamCount);
        std::vector<std::string_view> list_table;
        for (const auto& list : kListParams) list_table.push_back(list.key);
        QCOMPARE(list_table, lists);
        QVERIFY(list_param_from_key("logit_bias") && list_param_from_key("dry_sequence_breakers"));
        // A parameter table row is found by its key, a list by its own.
        for (const auto& info : kParams) QCOMPARE(param_from_key(info.key), std::optional<Param>(info.param));
        for (const auto& list : kListParams) QCOMPARE(list_param_from_key(list.key), &list);
    }

    // kRules is the descriptors' rules, and a stage's rules are its own, the contract's first.
    void ruleTableIsTheConcatenationOfTheDescriptorsRules() {
        std::size_t rules = 0;
        for (const auto& d : kStages) {
            std::vector<Rule> own;
            for (const auto& rule : d.rules) {
                own.push_back(rule.rule);
                QCOMPARE(rule_info(rule.rule).stage, d.stage);
                QCOMPARE(rule_info(rule.rule).citation, rule.citation);
                QVERIFY2(!rule.citation.empty(), rule.name.data());
                QCOMPARE(rule_from_name(d.stage, rule.name), std::optional<Rule>(rule.rule));
            }
            QCOMPARE(rules_for_stage(d.stage), own);
            QCOMPARE(is_step_stage(d.stage), !own.empty());
            if (d.contract && !own.empty()) QVERIFY(rule_info(own.front()).stacks.find("spec") != std::string_view::npos);
            rules += own.size();
        }
        QCOMPARE(rules, kRuleCount);
    }

    // uses_*() are the descriptors' gates, and those agree with the gates the
    // kernels use (engine/core/gates.h), on random parameters of every row.
    void everyGateIsItsSwitch() {
        std::mt19937_64 random(29);
        for (int i = 0; i < 20000; ++i) {
            const SamplingParams p = random_params(random);
            const std::size_t vocab = 1 + random() % 300;
            const auto v = static_cast<std::int64_t>(vocab);
            QCOMPARE(is_greedy(p), gate_greedy(p.temperature));
            QCOMPARE(uses_repetition_penalty(p), gate_repetition(p.repetition_penalty));
            QCOMPARE(uses_presence_frequency(p), gate_presence_frequency(p.presence_penalty, p.frequency_penalty));
            QCOMPARE(uses_temperature(p), gate_temperature(p.temperature));
            QCOMPARE(uses_top_k(p, vocab), gate_top_k(p.top_k, v));
            QCOMPARE(uses_top_p(p), gate_top_p(p.top_p));
            QCOMPARE(uses_min_p(p), gate_min_p(p.min_p));
            QCOMPARE(uses_typical_p(p), gate_typical_p(p.typical_p));
            QCOMPARE(uses_top_n_sigma(p), gate_top_n_sigma(p.top_n_sigma));
            QCOMPARE(uses_dynatemp(p), gate_dynatemp(p.dynatemp_range));
            QCOMPARE(uses_xtc(p), gate_xtc(p.xtc_probability, p.xtc_threshold));
            QCOMPARE(uses_dry(p), gate_dry(p.dry_multiplier, p.dry_penalty_last_n));
            QCOMPARE(uses_mirostat(p), gate_mirostat(p.mirostat));
            QCOMPARE(uses_logit_bias(p), !p.logit_bias.empty());
            for (const auto& d : kStages) {
                QCOMPARE(stage_on(d.stage, p, vocab), !d.gate || d.gate(p, vocab));
                // A stage whose switch is one row: that row's badge says on exactly when the stage is.
                const auto switches =
                    std::count_if(d.params.begin(), d.params.end(),
                                  [](const ParamInfo& row) { return row.role == ParamRole::Switch; }) +
                    std::count_if(d.lists.begin(), d.lists.end(),
                                  [](const ListParamInfo& list) { return list.role == ParamRole::Switch; });
                if (switches == 1 && !d.params.empty() && d.stage != Stage::Temperature) {
                    const auto& row = *std::find_if(d.params.begin(), d.params.end(),
                                                    [](const ParamInfo& r) { return r.role == ParamRole::Switch; });
                    QCOMPARE(param_badge(row, p, vocab).on, stage_on(d.stage, p, vocab));
                }
            }
        }
    }

    // Every badge is its row's: "on" exactly when the row is on, a Switch's
    // summary only outside the contract, and a switch outside the contract
    // named by the llama.cpp group's summary line.
    void badgesComeFromTheRows() {
        std::mt19937_64 random(7);
        for (int i = 0; i < 5000; ++i) {
            const SamplingParams p = random_params(random);
            const std::size_t vocab = 1 + random() % 300;
            for (const auto& info : kParams) {
                const ParamBadge badge = param_badge(info, p, vocab);
                QVERIFY(!badge.text.empty());
                if (info.param != Param::Temperature) QCOMPARE(badge.on, info.on(p, vocab));
                if (!badge.summary.empty()) {
                    QVERIFY(!info.contract && info.role == ParamRole::Switch && badge.on);
                }
                if (!info.contract && info.role == ParamRole::Switch) QCOMPARE(!badge.summary.empty(), badge.on);
            }
            for (const auto& list : kListParams) QCOMPARE(list_param_badge(list, p, vocab).on, list.on(p, vocab));
        }
        // Defaults: nothing is on but what the defaults switch on (none).
        for (const auto& info : kParams) QVERIFY2(!param_badge(info, SamplingParams{}, 10).on, info.key.data());
    }

    // The batch engine refuses a row exactly when a stage outside the contract
    // (or a part of a contract stage it cannot run) is on, naming the
    // switch and its value; every stage outside the contract is refused by one.
    void batchRefusesExactlyTheSwitchesOutsideTheContract() {
        std::mt19937_64 random(11);
        for (int i = 0; i < 3000; ++i) {
            const SamplingParams p = random_params(random);
            const std::size_t vocab = 3 + random() % 20;
            bool outside = false;
            for (const auto& d : kStages) outside = outside || (!d.contract && d.gate && d.gate(p, vocab));
            for (const auto& info : kParams) {
                outside = outside || (!info.contract && info.role == ParamRole::Switch && info.on(p, vocab));
            }
            std::string message;
            QCOMPARE(refused_by_batch(p, vocab, &message), outside);
            if (outside) {
                const auto setting = outside_contract_switch(p, vocab);
                QVERIFY(setting);
                QCOMPARE(message, "row 0: " + setting->key + " = " + setting->value +
                                      " is not a stage of the batch engine (it runs the contract's stages only)");
            }
        }
        // Each switch of a stage outside the contract, alone, is refused by its own name and value.
        std::size_t outside_stages = 0;
        for (const auto& d : kStages) {
            if (d.contract) continue;
            ++outside_stages;
            bool refused_one = false;
            for (const auto& row : d.params) {
                if (row.role != ParamRole::Switch) continue;
                const auto p = switched_on(row, 10);
                QVERIFY2(p, row.key.data());
                QVERIFY(d.gate(*p, 10));
                std::string message;
                QVERIFY(refused_by_batch(*p, 10, &message));
                QVERIFY2(message.find(std::string(row.key) + " = " + format_number(param_value(*p, row.param))) !=
                             std::string::npos,
                         message.c_str());
                refused_one = true;
            }
            for (const auto& list : d.lists) {
                if (list.role != ParamRole::Switch) continue;
                SamplingParams p;
                list.parse(p, "0:1");
                std::string message;
                QVERIFY(refused_by_batch(p, 10, &message));
                QVERIFY2(message.find(std::string(list.key) + " = 0:1") != std::string::npos, message.c_str());
                refused_one = true;
            }
            QVERIFY2(refused_one, d.name.data());
        }
        QVERIFY(outside_stages > 0);
        // The contract's switches are the batch engine's own.
        for (std::size_t i = 0; i < kContractParamCount; ++i) {
            const auto p = switched_on(kParams[i], 10);
            QVERIFY2(p, kParams[i].key.data());
            QVERIFY(!refused_by_batch(*p, 10));
        }
    }

    // Each step stage, on, reports the thresholds its descriptor's plot mark
    // draws (ui/stages/stage_plot.cpp reads only those), and the contract's
    // pipeline lists its own switches as ignored.
    void everyStageReportsWhatItsPlotMarks() {
        const std::vector<double> logits{3.0, 2.5, 2.0, 1.0, 0.5, 0.0, -1.0, -2.0};
        for (const auto& d : kStages) {
            if (!d.unit) continue;
            SamplingParams p;
            p.seed = 1;
            testing::switch_stage_on(p, d.stage, logits.size());
            if (d.stage == Stage::TopK) p.top_k = 3;
            if (d.stage == Stage::Greedy) p.temperature = 0.0;  // greedy reads temperature, which another stage owns
            // The rule that reads every parameter the stage owns (llama.cpp's temperature has the dynamic range).
            const auto* rule = &d.rules.front();
            for (const auto& r : d.rules) {
                const bool reads_all = std::all_of(d.params.begin(), d.params.end(), [&](const ParamInfo& row) {
                    return !d.unit->rule_reads || d.unit->rule_reads(r.rule, row.param);
                });
                if (reads_all) {
                    rule = &r;
                    break;
                }
            }
            QVERIFY2(d.gate(p, logits.size()) || d.stage == Stage::Temperature, d.name.data());
            const std::string stages = std::string(d.name) + ":" + std::string(rule->name);
            const PipelineTrace t = run(stages, logits, p, {}, {1, 2, 1, 2, 1}, 0.0);
            const StageTrace& s = t.trace.stage(d.stage);
            QVERIFY2(s.active, d.name.data());
            switch (d.mark) {
                case PlotMark::KthLogit: QVERIFY(s.kth_logit); break;
                case PlotMark::CumulativeMass: QVERIFY(s.crossing_rank && s.crossing_mass && s.walk_mass); break;
                case PlotMark::ProbFloor: QVERIFY(s.prob_floor && s.max_prob); break;
                case PlotMark::TypicalEntropy: QVERIFY(s.entropy && s.crossing_rank && s.crossing_mass); break;
                case PlotMark::LogitFloor: QVERIFY(s.logit_floor && s.max_logit && s.logit_sigma && s.logit_mean); break;
                case PlotMark::LogitBiasList: QVERIFY(!t.trace.params.logit_bias.empty()); break;
                case PlotMark::DryPenalties: QVERIFY(s.dry_ids && s.dry_lengths && s.dry_penalties); break;
                case PlotMark::XtcRemoved: QVERIFY(s.xtc_coin && s.xtc_fired && s.xtc_removed); break;
                case PlotMark::MirostatMu: QVERIFY(s.mirostat_mu); break;
                case PlotMark::DynamicTemperature: QVERIFY(s.temperature_used && s.max_entropy); break;
                case PlotMark::None: break;
            }
            // The logits change only where the descriptor says they do.
            const StageTrace& widen = t.trace.stage(Stage::Widen);
            if (!d.changes_logits) QVERIFY2(*s.logits == *widen.logits, d.name.data());
            // The contract never runs a stage outside it: its switches are ignored there, by key.
            if (!d.contract) {
                const PipelineTrace spec = run(preset_pipeline("spec"), logits, p);
                QVERIFY2(!spec.trace.find_stage(d.stage), d.name.data());
                for (const auto& row : d.params) {
                    if (row.role != ParamRole::Switch) continue;
                    const auto& ignored = spec.trace.ignored_params;
                    QVERIFY2(std::find(ignored.begin(), ignored.end(), row.key) != ignored.end(), row.key.data());
                }
            }
        }
    }

    // The params JSON names only what differs from a row's default, and reads
    // back into the same parameters: a parameter added at its default changes
    // no record made without it.
    void paramsJsonNamesOnlyWhatDiffers() {
        std::mt19937_64 random(5);
        for (int i = 0; i < 5000; ++i) {
            const SamplingParams p = random_params(random);
            const auto json = params_to_json(p);
            for (const auto& info : kParams) QCOMPARE(json.contains(std::string(info.key)), !param_is_default(p, info.param));
            for (const auto& list : kListParams) QCOMPARE(json.contains(std::string(list.key)), list.set(p));
            QCOMPARE(json.back(), nlohmann::ordered_json(std::to_string(*p.seed)));
            QCOMPARE(row_request_from_json(nlohmann::json::parse(json.dump()), "row 0").params, p);
        }
        QCOMPARE(params_to_json(SamplingParams{}).dump(), std::string(R"({"seed":null})"));
    }

    // A missing, doubled or wrong row stops the first read of the tables, naming it.
    void aMissingOrDoubledRowFailsWithItsName() {
        const auto contains = [](const std::string& text, const std::string& part) {
            return text.find(part) != std::string::npos;
        };
        auto without_xtc = registered();
        std::erase_if(without_xtc, [](const StageDescriptor* d) { return d->stage == Stage::Xtc; });
        QVERIFY(contains(refusal(without_xtc), "Stage value 12 has no descriptor"));

        auto doubled = registered();
        doubled.push_back(&stage_info(Stage::Xtc));
        QVERIFY(contains(refusal(doubled), "have the same Stage value"));

        // A stage whose row disagrees with SamplingParams' default.
        StageDescriptor top_k = stage_info(Stage::TopK);
        ParamInfo row = top_k.params.front();
        row.default_value = 5.0;
        top_k.params = std::span<const ParamInfo>(&row, 1);
        auto wrong_default = registered();
        std::replace_if(wrong_default.begin(), wrong_default.end(),
                        [](const StageDescriptor* d) { return d->stage == Stage::TopK; }, &top_k);
        QVERIFY(contains(refusal(wrong_default), "parameter \"top_k\": SamplingParams holds 0 by default, its row says 5"));

        // A stage that forgot its rows: its parameter and its rules are missing.
        StageDescriptor bare = stage_info(Stage::TopNSigma);
        bare.params = {};
        auto no_row = registered();
        std::replace_if(no_row.begin(), no_row.end(),
                        [](const StageDescriptor* d) { return d->stage == Stage::TopNSigma; }, &bare);
        QVERIFY(contains(refusal(no_row), "has no Switch parameter"));
        bare.rules = {};
        QVERIFY(contains(refusal(no_row), "needs a gate and a rule"));
    }
};

QTEST_GUILESS_MAIN(TestStageDescriptors)
#include "test_stage_descriptors.moc"
