// The per-format vocabulary readers behind load_vocabulary. Internal.
#pragma once

#include "engine/io/byte_source.h"
#include "engine/io/vocabulary.h"

namespace samplescope::detail {

Vocabulary read_tokenizer_json(const ByteSource& source);  // tokenizer.json or vocab.json, by content
Vocabulary read_vocab_txt(const ByteSource& source);
Vocabulary read_gguf_vocabulary(const ByteSource& source);

// Puts `piece` at `id`, growing the tables; refuses an id far beyond the
// number of entries the file has (a hostile id must not size a huge table).
void place_token(Vocabulary& vocabulary, std::uint64_t id, std::string piece, bool special, std::size_t entries,
                 const ByteSource& source);

// Byte-level when pieces use GPT-2's `Ġ`/`Ċ`, SentencePiece when they use `▁`, else plain.
TokenEncoding guess_encoding(const Vocabulary& vocabulary);

inline constexpr std::uint64_t kVocabularyTextLimit = 1ull << 30;

}  // namespace samplescope::detail
