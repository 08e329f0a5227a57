#include "kernels/tools/branch_rows.h"

#include <algorithm>
#include <limits>

namespace samplescope::batch {

namespace {

const float kMinusInf = -std::numeric_limits<float>::infinity();

}  // namespace

void RowBatch::add(const std::vector<float>& row, const RowRequest& request) {
    logits.insert(logits.end(), row.begin(), row.end());
    requests.push_back(request);
}

BatchInput RowBatch::input() const { return make_batch_input(logits.data(), rows(), vocab, requests); }

std::vector<float> spread_row(std::uint64_t seed, float low, float high, std::size_t vocab) {
    std::vector<float> row(vocab);
    std::uint64_t state = seed * 0x9E3779B97F4A7C15ULL + 1;
    for (auto& x : row) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        const double unit = static_cast<double>(state >> 11) * 0x1.0p-53;
        x = static_cast<float>(low + (high - low) * unit);
    }
    return row;
}

RowRequest request_with(std::uint64_t seed) {
    RowRequest request;
    request.params.seed = seed;
    return request;
}

RowBatch top_p_past_level_zero_rows() {
    RowBatch rows;
    for (const double p : {0.9, 0.5}) {
        RowRequest request = request_with(rows.rows() + 1);
        request.params.top_p = p;
        rows.add(spread_row(rows.rows() + 1, 0.0f, 1.0f), request);
    }
    return rows;
}

RowBatch top_k_above_capacity_rows() {
    RowBatch rows;
    RowRequest k_only = request_with(3);
    k_only.params.top_k = 5000;
    rows.add(spread_row(3, -4.0f, 6.0f), k_only);
    RowRequest k_and_p = request_with(4);
    k_and_p.params.top_k = 5000;
    k_and_p.params.top_p = 0.5;
    rows.add(spread_row(4, 0.0f, 1.0f), k_and_p);
    return rows;
}

RowBatch all_tied_rows() {
    RowBatch rows;
    const std::vector<float> tied(kBranchVocab, 1.5f);
    RowRequest k5 = request_with(5);
    k5.params.top_k = 5;
    rows.add(tied, k5);
    RowRequest p_only = request_with(6);
    p_only.params.top_p = 0.3;
    rows.add(tied, p_only);
    return rows;
}

RowBatch k_above_finite_count_rows() {
    RowBatch rows;
    std::vector<float> alternate = spread_row(7, -3.0f, 3.0f);
    for (std::size_t i = 0; i < kBranchVocab; i += 2) alternate[i] = kMinusInf;
    std::vector<float> lower_half = spread_row(8, 0.0f, 1.0f);
    std::fill(lower_half.begin(), lower_half.begin() + static_cast<std::ptrdiff_t>(kBranchVocab / 2), kMinusInf);
    for (const auto* row : {&alternate, &lower_half}) {
        RowRequest request = request_with(rows.rows() + 9);
        request.params.top_k = 100000;
        rows.add(*row, request);
    }
    return rows;
}

RowBatch min_p_alone_rows() {
    RowBatch rows;
    RowRequest request = request_with(11);
    request.params.min_p = 0.05;
    request.params.temperature = 0.8;
    rows.add(spread_row(11, -6.0f, 4.0f), request);
    request.params.min_p = 0.5;
    request.params.temperature = 1.3;
    request.params.seed = 12;
    rows.add(spread_row(12, 0.0f, 1.0f), request);
    return rows;
}

RowBatch every_branch_rows() {
    RowBatch rows;
    const std::vector<float> tied(kBranchVocab, 1.5f);
    RowRequest request = request_with(21);
    request.params.top_p = 0.9;
    rows.add(spread_row(21, 0.0f, 1.0f), request);
    request = request_with(22);
    request.params.top_k = 5000;
    request.params.top_p = 0.5;
    rows.add(spread_row(22, 0.0f, 1.0f), request);
    request = request_with(23);
    request.params.top_k = 5;
    rows.add(tied, request);
    request = request_with(24);
    request.params.min_p = 0.05;
    request.params.temperature = 0.8;
    rows.add(spread_row(24, -6.0f, 4.0f), request);
    return rows;
}

RowBatch refused_logit_rows() {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    RowBatch rows;
    RowRequest request = request_with(31);
    request.params.top_p = 0.9;
    std::vector<float> row = spread_row(31, 0.0f, 1.0f);
    rows.add(row, request);  // row 0: clean
    row[70000] = nan;
    rows.add(row, request);  // row 1: NaN
    row[70000] = 0.5f;
    row[9] = nan;
    row[5] = inf;
    rows.add(row, request);  // row 2: +inf before a NaN: the first id is named
    row[9] = row[5] = 0.5f;
    row[kBranchVocab - 1] = inf;
    rows.add(row, request);  // row 3: +inf in the last id
    std::fill(row.begin(), row.end(), kMinusInf);
    rows.add(row, request);  // row 4: every logit -inf
    return rows;
}

}  // namespace samplescope::batch
