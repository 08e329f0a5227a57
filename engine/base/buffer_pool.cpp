#include "engine/base/buffer_pool.h"

#include <cstdint>
#include <mutex>

namespace samplescope {

namespace {

// Arrays smaller than this are cheap to allocate and are simply freed.
constexpr std::size_t kPooledBytes = 64 * 1024;
// At most this many idle arrays are kept (a few traces' worth).
constexpr std::size_t kMaxIdle = 48;

template <typename T>
class Pool {
public:
    // With `keep_size`, the vector keeps the size (and stale contents) it was
    // given back with, so a resize to the same size writes nothing.
    std::shared_ptr<std::vector<T>> take(bool keep_size = false) {
        std::unique_ptr<std::vector<T>> vector;
        {
            std::lock_guard lock(mutex_);
            if (!idle_.empty()) {
                vector = std::move(idle_.back());
                idle_.pop_back();
            }
        }
        if (!vector) vector = std::make_unique<std::vector<T>>();
        if (!keep_size) vector->clear();
        return {vector.release(), [this](std::vector<T>* done) { give_back(done); }};
    }

private:
    void give_back(std::vector<T>* done) {
        std::unique_ptr<std::vector<T>> owned(done);
        if (owned->capacity() * sizeof(T) < kPooledBytes) return;
        std::lock_guard lock(mutex_);
        if (idle_.size() < kMaxIdle) idle_.push_back(std::move(owned));
    }

    std::mutex mutex_;
    std::vector<std::unique_ptr<std::vector<T>>> idle_;
};

// Leaked on purpose: arrays may come back from other static destructors at exit.
Pool<double>& double_pool() {
    static auto* pool = new Pool<double>();
    return *pool;
}
Pool<std::int32_t>& id_pool() {
    static auto* pool = new Pool<std::int32_t>();
    return *pool;
}

}  // namespace

std::shared_ptr<std::vector<double>> pooled_doubles() { return double_pool().take(); }
std::shared_ptr<std::vector<std::int32_t>> pooled_ids() { return id_pool().take(); }

std::shared_ptr<std::vector<double>> pooled_doubles(std::size_t size) {
    auto vector = double_pool().take(true);
    vector->resize(size);
    return vector;
}

}  // namespace samplescope
