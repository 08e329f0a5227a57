// JSON written in pieces, byte for byte what dumping the whole value with
// dump(2, ' ', false, error_handler_t::replace) gives (the CLI's format), so a
// large document (a `trace --full` at real V, a --steps array) need never be
// held as one value or one string: each piece is dumped on its own and
// indented as deep as it sits in the whole (a dumped JSON string never holds a
// raw newline, so every line after a piece's first moves right by its depth).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace samplescope {

// Writes `value` as it appears nested `indent` spaces deep in a dump of a
// larger value: its first line as is (it follows a key or an array's
// opening), every later line `indent` spaces further in. With `split_levels`
// > 0 an object's members (an array's elements) are dumped one at a time, that
// many levels down, so the largest string held is one member's text.
void write_json(std::ostream& out, const nlohmann::ordered_json& value, std::size_t indent = 0, int split_levels = 0);

// Writes an array of `size` elements `indent` spaces deep, as write_json would
// write it: write_element(i, element_indent) writes element i (as write_json
// would at element_indent), before the next element is built.
void write_json_array(std::ostream& out, std::size_t size,
                      const std::function<void(std::size_t, std::size_t)>& write_element, std::size_t indent = 0);

// An object's member that is built only while it is written: an array of
// `size` elements, element(i) building each, written with `split_levels`.
struct StreamedArray {
    std::string key;
    std::size_t size = 0;
    std::function<nlohmann::ordered_json(std::size_t)> element;
    int split_levels = 0;
};

// Writes `object` (a JSON object) `indent` spaces deep, each member dumped on
// its own, with its member `streamed.key` (a placeholder holding the key's
// place in the order) written as the streamed array instead.
void write_json_streamed(std::ostream& out, const nlohmann::ordered_json& object, const StreamedArray& streamed,
                         std::size_t indent = 0);

// An array whose length is known only at its end: next(i) builds element i,
// or nothing when the array has ended.
void write_json_array_until(std::ostream& out,
                            const std::function<std::optional<nlohmann::ordered_json>(std::size_t)>& next,
                            std::size_t indent = 0, int split_levels = 0);

// An object written member by member, each member's value written only when
// its turn comes (write(out, indent) as write_json would write it), so a
// member can hold what the members streamed before it found.
struct LateMember {
    std::string key;
    std::function<void(std::ostream&, std::size_t)> write;
};
void write_json_members(std::ostream& out, const std::vector<LateMember>& members, std::size_t indent = 0);

}  // namespace samplescope
