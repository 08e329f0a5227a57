#include "engine/core/trace.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>

#include "engine/base/buffer_pool.h"
#include "engine/core/row_math.h"

namespace samplescope {

struct StageProbs::Lazy {
    std::shared_ptr<const Values> logits;
    std::shared_ptr<const IdList> kept;
    std::mutex mutex;
    std::shared_ptr<const Values> values;  // set once, never reset
};

namespace {

// Step 9 over the kept ids, as the reference computes it during a run: the
// maximum and the sequential partition in ascending id order, then each
// numerator over the partition.
std::shared_ptr<const Values> softmax_over(const Values& logits, const IdList& kept) {
    // Pooled: every element is written below, and a recycled array's pages are mapped already.
    auto probs = pooled_doubles(kept.size());
    softmax_into(logits.data(), kept.data(), static_cast<std::int64_t>(kept.size()), probs->data());
    return probs;
}

}  // namespace

StageProbs StageProbs::from_logits(std::shared_ptr<const Values> logits, std::shared_ptr<const IdList> kept) {
    StageProbs probs;
    probs.lazy_ = std::make_shared<Lazy>();
    probs.lazy_->logits = std::move(logits);
    probs.lazy_->kept = std::move(kept);
    return probs;
}

const std::shared_ptr<const Values>& StageProbs::get() const {
    if (held_ || !lazy_) return held_;
    const std::lock_guard lock(lazy_->mutex);
    if (!lazy_->values) lazy_->values = softmax_over(*lazy_->logits, *lazy_->kept);
    return lazy_->values;
}

bool StageProbs::ready() const {
    if (held_ || !lazy_) return true;
    const std::lock_guard lock(lazy_->mutex);
    return lazy_->values != nullptr;
}

std::shared_ptr<const Values> StageProbs::once() const {
    if (held_ || !lazy_) return held_;
    {
        const std::lock_guard lock(lazy_->mutex);
        if (lazy_->values) return lazy_->values;
    }
    return softmax_over(*lazy_->logits, *lazy_->kept);
}

namespace {

template <class T>
bool same_content(const std::vector<T>& a, const std::vector<T>& b) {
    return &a == &b || (a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0));
}

}  // namespace

bool StageProbs::adopt(const StageProbs& earlier) const {
    if (!lazy_ || !earlier.lazy_) return false;
    if (lazy_ == earlier.lazy_) return ready();
    std::shared_ptr<const Values> values;
    {
        const std::lock_guard lock(earlier.lazy_->mutex);
        values = earlier.lazy_->values;
    }
    if (!values) return false;
    // The inputs never change after construction: compared without a lock. Bitwise, so the same
    // numbers in, the same sums in the same order, the same q out.
    if (!same_content(*lazy_->logits, *earlier.lazy_->logits) || !same_content(*lazy_->kept, *earlier.lazy_->kept)) return false;
    const std::lock_guard lock(lazy_->mutex);
    if (!lazy_->values) lazy_->values = std::move(values);
    return true;
}

double StageTrace::prob_of(std::int32_t id) const {
    if (!kept) return 0.0;
    const auto it = std::lower_bound(kept->begin(), kept->end(), id);
    if (it == kept->end() || *it != id) return 0.0;
    return (*probs)[static_cast<std::size_t>(it - kept->begin())];
}

bool StageTrace::keeps(std::int32_t id) const { return kept && std::binary_search(kept->begin(), kept->end(), id); }

const StageTrace& SampleTrace::stage(Stage s) const {
    if (const auto* found = find_stage(s)) return *found;
    throw std::out_of_range("this trace has no stage \"" + std::string(stage_info(s).name) + "\"");
}

}  // namespace samplescope
