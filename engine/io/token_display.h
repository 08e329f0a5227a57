// Turns a tokenizer's stored piece into text a person can read in a plot or a
// table: byte-level BPE characters (GPT-2's byte-to-unicode table: `Ġ` is a
// space, `Ċ` a newline) become the bytes they stand for, SentencePiece's `▁`
// becomes a space and its `<0x0A>` byte pieces the byte they encode, and then
// spaces, newlines, tabs, control and invisible characters are drawn with
// visible marks (␣ ↵ ⇥, <U+000D> <U+200B> for other controls and invisible
// characters); bytes that are not whole UTF-8 show as <0xE2>.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace samplescope {

enum class TokenEncoding {
    Plain,          // the piece is the text (WordPiece, WordLevel, added tokens)
    ByteLevel,      // GPT-2 style byte-level BPE
    SentencePiece,  // ▁ for spaces, <0xHH> byte-fallback pieces
};

const char* token_encoding_name(TokenEncoding encoding);

// The raw bytes a piece stands for (before any visible marks).
std::string token_bytes(std::string_view piece, TokenEncoding encoding);

// Text with visible marks for whitespace, controls, invisible characters and
// broken UTF-8.
std::string visible_text(std::string_view bytes);

// token_bytes then visible_text: what a label shows.
std::string display_token(std::string_view piece, TokenEncoding encoding);

// The one rule for naming a token on screen: labels[id] where it exists and is
// not empty, else `tok_<id>` (ids outside `labels`, negative ones included).
std::string token_display_label(const std::vector<std::string>& labels, std::int64_t id);

}  // namespace samplescope
