// The per-format readers behind load_response_file (one file each). Internal
// to the loader: callers use engine/responses/response_loader.h.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/io/byte_source.h"
#include "engine/responses/response_loader.h"

namespace samplescope::response_detail {

using Json = nlohmann::ordered_json;

// One JSON document of a stream, with the line it came from (0 for a JSON array's elements).
struct Chunk {
    Json value;
    std::size_t line = 0;
    std::string where;  // "line 12" or "chunks[3]"
};

// A stream, as chunks in order; `done` when it ended with `data: [DONE]`.
struct ChunkStream {
    std::vector<Chunk> chunks;
    bool done = false;
    std::string last_where;  // where the last chunk was, for "stops before its end"
};

// Whether the numbers of a response are logits, by the caller's mode else by
// the format (`format_logits`).
bool reads_logits(const ResponseLoadOptions& options, bool format_logits);

// Reads bytes: an array [0..255] as a string, naming `where` on a bad element.
std::string byte_array(const Json& value, const std::string& source, const std::string& where);
// A required string, integer or number member; InputError naming the path otherwise.
const std::string& string_member(const Json& object, const char* key, const std::string& source, const std::string& where);
std::int64_t integer_value(const Json& value, const std::string& source, const std::string& where);
double number_value(const Json& value, const std::string& source, const std::string& where);
const Json& array_member(const Json& object, const char* key, const std::string& source, const std::string& where);
[[noreturn]] void fail(const std::string& source, const std::string& message);
std::string type_name(const Json& value);

// Joins the tokens' bytes into Response::text and sets each position's offset.
void assemble_text(Response& response);

Response read_openai(const Json& document, const std::string& source, const ResponseLoadOptions& options);
Response read_openai_chunks(const ChunkStream& stream, const std::string& source, const ResponseLoadOptions& options);
Response read_llamacpp(const Json& document, const std::string& source, const ResponseLoadOptions& options);
Response read_llamacpp_chunks(const ChunkStream& stream, const std::string& source, const ResponseLoadOptions& options);
Response read_vllm(const Json& document, const std::string& source, const ResponseLoadOptions& options);
Response read_hf_rows(const ByteSource* file, std::string_view bytes, const std::string& source,
                      const ResponseLoadOptions& options);

}  // namespace samplescope::response_detail
