// The tables every part of the program reads (kStages, kParams, kListParams,
// kRules), built once from the stage descriptors, and the checks that they
// are whole: a missing or doubled row fails the first run that reads a table,
// with the row named, rather than leaving a stage silently out.
#include <algorithm>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/base/input_error.h"
#include "engine/core/stage.h"

namespace samplescope {

namespace {

// Built by appending: GCC 12 misreads `"\"" + std::string` under -Wrestrict.
std::string quoted(std::string_view text) {
    std::string out(1, '"');
    out += text;
    out += '"';
    return out;
}

// The row's field in default-constructed parameters.
double field_default(const ParamInfo& info) {
    const SamplingParams defaults;
    return info.whole ? static_cast<double>(defaults.*info.whole) : defaults.*info.real;
}

bool fixed_stage(Stage stage) { return stage == Stage::Widen || stage == Stage::Softmax || stage == Stage::Draw; }

struct Registry {
    std::vector<StageDescriptor> stages;  // by Stage
    std::vector<ParamInfo> params;        // by Param
    std::vector<Stage> param_owner;       // by Param
    std::vector<ListParamInfo> lists;     // in stage order
    std::vector<Stage> list_owner;
    std::vector<RuleInfo> rules;          // by Rule
};

Registry build(std::span<const StageDescriptor* const> descriptors) {
    check_stage_descriptors(descriptors);
    Registry r;
    r.stages.resize(kStageCount);
    r.params.resize(kParamCount);
    r.param_owner.resize(kParamCount);
    r.rules.resize(kRuleCount);
    for (const auto* d : descriptors) r.stages[static_cast<std::size_t>(d->stage)] = *d;
    for (const auto& d : r.stages) {
        for (const auto& row : d.params) {
            r.params[static_cast<std::size_t>(row.param)] = row;
            r.param_owner[static_cast<std::size_t>(row.param)] = d.stage;
        }
        for (const auto& list : d.lists) {
            r.lists.push_back(list);
            r.list_owner.push_back(d.stage);
        }
        for (const auto& rule : d.rules) r.rules[static_cast<std::size_t>(rule.rule)] = rule;
    }
    return r;
}

const Registry& registry() {
    static const Registry built = build(registered_stage_descriptors());
    return built;
}

}  // namespace

void check_stage_descriptors(std::span<const StageDescriptor* const> descriptors) {
    const auto fail = [](const std::string& what) {
        throw std::logic_error("stage descriptors (engine/stages/stage_*.cpp): " + what);
    };
    std::vector<const StageDescriptor*> by_stage(kStageCount, nullptr);
    std::vector<const ParamInfo*> by_param(kParamCount, nullptr);
    std::vector<const RuleInfo*> by_rule(kRuleCount, nullptr);
    std::vector<std::string_view> keys;
    const auto new_key = [&](std::string_view key) {
        if (key.empty()) fail("a parameter has no key");
        if (std::find(keys.begin(), keys.end(), key) != keys.end()) fail("two parameters are keyed " + quoted(key));
        keys.push_back(key);
    };
    const SamplingParams defaults;
    for (const auto* d : descriptors) {
        const auto index = static_cast<std::size_t>(d->stage);
        if (index >= kStageCount) fail("stage " + quoted(d->name) + " has a Stage value after Draw");
        if (by_stage[index]) {
            fail("stages " + quoted(by_stage[index]->name) + " and " + quoted(d->name) + " have the same Stage value");
        }
        by_stage[index] = d;
        if (d->name.empty() || d->title.empty() || d->summary.empty()) {
            fail("Stage " + std::to_string(index) + " needs a name, a title and a summary");
        }
        const std::string name = quoted(d->name);
        if (fixed_stage(d->stage) != (d->unit == nullptr)) {
            fail("stage " + name + (d->unit ? " is run by the runner and has no unit" : " has no unit to run"));
        }
        if (!fixed_stage(d->stage) && (!d->gate || d->rules.empty())) fail("stage " + name + " needs a gate and a rule");
        for (const auto& row : d->params) {
            const auto p = static_cast<std::size_t>(row.param);
            if (p >= kParamCount) fail("stage " + name + " has parameter " + quoted(row.key) + " after Param::Count");
            if (by_param[p]) fail("parameter " + quoted(row.key) + " has two rows (its Param is " + std::to_string(p) + ")");
            by_param[p] = &row;
            new_key(row.key);
            if ((row.real == nullptr) == (row.whole == nullptr)) {
                fail("parameter " + quoted(row.key) + " needs exactly one field (real or whole)");
            }
            if (!row.on) fail("parameter " + quoted(row.key) + " needs `on`");
            if (field_default(row) != row.default_value) {
                fail("parameter " + quoted(row.key) + ": SamplingParams holds " + format_number(field_default(row)) +
                     " by default, its row says " + format_number(row.default_value));
            }
            if (row.contract != (p < kContractParamCount)) {
                fail("parameter " + quoted(row.key) + ": the contract's parameters are the first " +
                     std::to_string(kContractParamCount) + " of Param, and only those");
            }
            if (row.contract && !d->contract) fail("parameter " + quoted(row.key) + " is the contract's, its stage is not");
        }
        for (const auto& list : d->lists) {
            new_key(list.key);
            if (!list.set || !list.on || !list.text || !list.parse || !list.check) {
                fail("list parameter " + quoted(list.key) + " needs set, on, text, parse and check");
            }
            if (list.set(defaults)) fail("list parameter " + quoted(list.key) + " must be empty by default");
        }
        // The batch engine refuses a stage outside the contract by its switches (outside_contract_switch).
        const bool switched = std::any_of(d->params.begin(), d->params.end(),
                                          [](const ParamInfo& row) { return row.role == ParamRole::Switch; }) ||
                              std::any_of(d->lists.begin(), d->lists.end(),
                                          [](const ListParamInfo& list) { return list.role == ParamRole::Switch; });
        if (!d->contract && !fixed_stage(d->stage) && !switched) {
            fail("stage " + name + " is outside the contract and has no Switch parameter the batch engine could refuse");
        }
        Rule last = Rule::Count;
        for (const auto& rule : d->rules) {
            const auto r = static_cast<std::size_t>(rule.rule);
            if (r >= kRuleCount) fail("stage " + name + " has rule " + quoted(rule.name) + " after Rule::Count");
            if (by_rule[r]) fail("rule " + std::to_string(r) + " (" + quoted(rule.name) + ") has two rows");
            by_rule[r] = &rule;
            if (rule.stage != d->stage) fail("rule " + quoted(rule.name) + " is listed by stage " + name + " but names another stage");
            if (last != Rule::Count && rule.rule < last) fail("stage " + name + " lists its rules out of Rule's order");
            last = rule.rule;
            for (const auto& other : d->rules) {
                if (&other != &rule && other.name == rule.name) fail("stage " + name + " has two rules named " + quoted(rule.name));
            }
        }
    }
    for (std::size_t i = 0; i < kStageCount; ++i) {
        if (!by_stage[i]) {
            fail("Stage value " + std::to_string(i) + " has no descriptor: give it a stage_<name>.cpp in engine/stages");
        }
    }
    for (std::size_t i = 0; i < kParamCount; ++i) {
        if (!by_param[i]) fail("Param value " + std::to_string(i) + " has no row in any stage's descriptor");
    }
    for (std::size_t i = 0; i < kRuleCount; ++i) {
        if (!by_rule[i]) fail("Rule value " + std::to_string(i) + " has no row in any stage's descriptor");
    }
    for (std::size_t i = 0; i < kStageCount; ++i) {
        for (std::size_t j = 0; j < i; ++j) {
            if (by_stage[i]->name == by_stage[j]->name) fail("two stages are named " + quoted(by_stage[i]->name));
        }
    }
}

const StageDescriptor* StageTable::begin() const { return registry().stages.data(); }
const StageDescriptor* StageTable::end() const { return registry().stages.data() + kStageCount; }
const RuleInfo* RuleTable::begin() const { return registry().rules.data(); }
const RuleInfo* RuleTable::end() const { return registry().rules.data() + kRuleCount; }
const ParamInfo* ParamTable::begin() const { return registry().params.data(); }
const ParamInfo* ParamTable::end() const { return registry().params.data() + kParamCount; }
const ListParamInfo* ListParamTable::begin() const { return registry().lists.data(); }
const ListParamInfo* ListParamTable::end() const { return registry().lists.data() + registry().lists.size(); }

const StageDescriptor& stage_info(Stage stage) { return registry().stages.at(static_cast<std::size_t>(stage)); }

std::optional<Stage> stage_from_name(std::string_view name) {
    for (const auto& info : kStages) {
        if (info.name == name) return info.stage;
    }
    return std::nullopt;
}

bool stage_on(Stage stage, const SamplingParams& params, std::size_t vocab) {
    const auto& info = stage_info(stage);
    return !info.gate || info.gate(params, vocab);
}

Stage param_stage(Param param) { return registry().param_owner.at(static_cast<std::size_t>(param)); }

Stage list_param_stage(const ListParamInfo& info) {
    const auto& r = registry();
    for (std::size_t i = 0; i < r.lists.size(); ++i) {
        if (r.lists[i].key == info.key) return r.list_owner[i];
    }
    throw std::logic_error("no list parameter " + quoted(info.key));
}

const RuleInfo& rule_info(Rule rule) { return registry().rules.at(static_cast<std::size_t>(rule)); }

}  // namespace samplescope
