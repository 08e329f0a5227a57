// Shared body of the vocabulary fuzz targets: load, then label every id (and
// a few beyond) so the display mapping runs on whatever the file held.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "engine/base/input_error.h"
#include "engine/io/vocabulary.h"

namespace samplescope::fuzz {

inline void load_vocabulary_or_refuse(const std::uint8_t* data, std::size_t size, VocabularyFormat format) {
    try {
        const Vocabulary vocabulary =
            load_vocabulary_bytes(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz", format);
        if (vocabulary.defined.size() != vocabulary.size() || vocabulary.special.size() != vocabulary.size()) std::abort();
        const VocabularyLabels labels = token_labels(vocabulary, vocabulary.size() + 3);
        if (labels.labels.size() != vocabulary.size() + 3 || labels.warnings.size() != 1) std::abort();
    } catch (const InputError&) {
    }
}

}  // namespace samplescope::fuzz
