#include "engine/json/json_stream.h"

#include <algorithm>
#include <string_view>

namespace samplescope {

namespace {

constexpr int kIndentStep = 2;
constexpr std::size_t kFlushBytes = 1 << 20;

std::string dump(const nlohmann::ordered_json& value) {
    return value.dump(kIndentStep, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

// The text a dump writes before a member's value: "\"key\": ", the key escaped
// as a dumped string is.
std::string member_prefix(const std::string& key) {
    return dump(nlohmann::ordered_json(key)) + ": ";
}

// Copies `text` to `out`, every line after the first `indent` spaces further
// in, through a bounded buffer (not one write per line).
void write_indented(std::ostream& out, std::string_view text, std::size_t indent) {
    if (indent == 0) {
        out << text;
        return;
    }
    std::string buffer;
    buffer.reserve(std::min(text.size(), kFlushBytes) + indent + 1);
    for (const char c : text) {
        buffer.push_back(c);
        if (c == '\n') buffer.append(indent, ' ');
        if (buffer.size() >= kFlushBytes) {
            out << buffer;
            buffer.clear();
        }
    }
    out << buffer;
}

// An object written member by member: write_member(i, key, indent) writes the
// value of member i.
void write_object(std::ostream& out, const nlohmann::ordered_json& object, std::size_t indent,
                  const std::function<void(const std::string&, const nlohmann::ordered_json&, std::size_t)>& write_member) {
    if (object.empty()) {
        out << "{}";
        return;
    }
    const std::size_t inner = indent + kIndentStep;
    const std::string inner_spaces(inner, ' ');
    out << "{\n";
    bool first = true;
    for (const auto& [key, value] : object.items()) {
        if (!first) out << ",\n";
        first = false;
        out << inner_spaces << member_prefix(key);
        write_member(key, value, inner);
    }
    out << "\n" << std::string(indent, ' ') << "}";
}

}  // namespace

void write_json(std::ostream& out, const nlohmann::ordered_json& value, std::size_t indent, int split_levels) {
    if (split_levels > 0 && !value.empty() && value.is_object()) {
        write_object(out, value, indent, [&out, split_levels](const std::string&, const nlohmann::ordered_json& member,
                                                              std::size_t member_indent) {
            write_json(out, member, member_indent, split_levels - 1);
        });
        return;
    }
    if (split_levels > 0 && !value.empty() && value.is_array()) {
        write_json_array(
            out, value.size(),
            [&out, &value, split_levels](std::size_t i, std::size_t element_indent) {
                write_json(out, value[i], element_indent, split_levels - 1);
            },
            indent);
        return;
    }
    write_indented(out, dump(value), indent);
}

void write_json_array(std::ostream& out, std::size_t size,
                      const std::function<void(std::size_t, std::size_t)>& write_element, std::size_t indent) {
    if (size == 0) {
        out << "[]";
        return;
    }
    const std::size_t inner = indent + kIndentStep;
    const std::string inner_spaces(inner, ' ');
    out << "[\n";
    for (std::size_t i = 0; i < size; ++i) {
        out << (i == 0 ? "" : ",\n") << inner_spaces;
        write_element(i, inner);
    }
    out << "\n" << std::string(indent, ' ') << "]";
}

void write_json_streamed(std::ostream& out, const nlohmann::ordered_json& object, const StreamedArray& streamed,
                         std::size_t indent) {
    write_object(out, object, indent,
                 [&out, &streamed](const std::string& key, const nlohmann::ordered_json& member, std::size_t inner) {
                     if (key != streamed.key) {
                         write_json(out, member, inner);
                         return;
                     }
                     write_json_array(
                         out, streamed.size,
                         [&out, &streamed](std::size_t i, std::size_t element_indent) {
                             write_json(out, streamed.element(i), element_indent, streamed.split_levels);
                         },
                         inner);
                 });
}

void write_json_array_until(std::ostream& out,
                            const std::function<std::optional<nlohmann::ordered_json>(std::size_t)>& next,
                            std::size_t indent, int split_levels) {
    const std::size_t inner = indent + kIndentStep;
    const std::string inner_spaces(inner, ' ');
    std::size_t i = 0;
    for (auto element = next(0); element; element = next(++i)) {
        out << (i == 0 ? "[\n" : ",\n") << inner_spaces;
        write_json(out, *element, inner, split_levels);
    }
    if (i == 0) {
        out << "[]";
        return;
    }
    out << "\n" << std::string(indent, ' ') << "]";
}

void write_json_members(std::ostream& out, const std::vector<LateMember>& members, std::size_t indent) {
    if (members.empty()) {
        out << "{}";
        return;
    }
    const std::size_t inner = indent + kIndentStep;
    const std::string inner_spaces(inner, ' ');
    out << "{\n";
    for (std::size_t i = 0; i < members.size(); ++i) {
        out << (i == 0 ? "" : ",\n") << inner_spaces << member_prefix(members[i].key);
        members[i].write(out, inner);
    }
    out << "\n" << std::string(indent, ' ') << "}";
}

}  // namespace samplescope
