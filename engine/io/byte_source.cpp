#include "engine/io/byte_source.h"

#include <cctype>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "engine/base/input_error.h"

namespace samplescope {

bool has_extension(const std::string& name, std::string_view extension) {
    if (name.size() < extension.size()) return false;
    for (std::size_t i = 0; i < extension.size(); ++i) {
        const auto c = static_cast<unsigned char>(name[name.size() - extension.size() + i]);
        if (std::tolower(c) != static_cast<unsigned char>(extension[i])) return false;
    }
    return true;
}

void ByteSource::fail(const std::string& problem) const { throw InputError(name_, name_ + ": " + problem); }

std::string ByteSource::read_all(std::uint64_t limit) const {
    const std::uint64_t n = size();
    if (n > limit) {
        fail("the file holds " + std::to_string(n) + " bytes, more than the " + std::to_string(limit) +
             " this text format may have");
    }
    std::string data(static_cast<std::size_t>(n), '\0');
    read(0, std::as_writable_bytes(std::span(data.data(), data.size())));
    return data;
}

FileSource::FileSource(const std::string& path) : ByteSource(path) {
    std::error_code error;
    const auto status = std::filesystem::status(path, error);
    // A missing file says so; any other failure (a symlink loop, a directory
    // that cannot be searched) says what the system said.
    if (error && error != std::errc::no_such_file_or_directory) fail("cannot open the file (" + error.message() + ")");
    if (error || !std::filesystem::exists(status)) fail("cannot open the file (it does not exist)");
    if (std::filesystem::is_directory(status)) fail("is a directory, not a file");
    if (!std::filesystem::is_regular_file(status)) {
        fail("is not a regular file (a FIFO, a device or a socket is refused)");
    }
    const auto bytes = std::filesystem::file_size(path, error);
    if (error) fail("cannot read the file size (" + error.message() + ")");
    size_ = bytes;
    // Large reads go straight from the kernel into the caller's buffer.
    stream_.rdbuf()->pubsetbuf(nullptr, 0);
    stream_.open(path, std::ios::binary);
    if (!stream_) fail("cannot open the file (permission denied?)");
}

void FileSource::read(std::uint64_t offset, std::span<std::byte> out) const {
    if (offset > size_ || out.size() > size_ - offset) {
        fail("truncated: needs bytes up to offset " + std::to_string(offset + out.size()) + " but the file holds " +
             std::to_string(size_));
    }
    stream_.clear();
    stream_.seekg(static_cast<std::streamoff>(offset));
    stream_.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(out.size()));
    if (static_cast<std::size_t>(stream_.gcount()) != out.size()) {
        fail("read error at offset " + std::to_string(offset) + " (the file changed while loading?)");
    }
}

void MemorySource::read(std::uint64_t offset, std::span<std::byte> out) const {
    if (offset > bytes_.size() || out.size() > bytes_.size() - offset) {
        fail("truncated: needs bytes up to offset " + std::to_string(offset + out.size()) + " but the input holds " +
             std::to_string(bytes_.size()));
    }
    if (!out.empty()) std::memcpy(out.data(), bytes_.data() + offset, out.size());
}

SequentialReader::SequentialReader(const ByteSource& source, std::uint64_t start, std::size_t window)
    : source_(source),
      // A small source needs no 1 MiB window (the fuzzers load thousands a second).
      buffer_(static_cast<std::size_t>(std::clamp<std::uint64_t>(source.size() - std::min(start, source.size()), 1, window))),
      buffer_start_(start),
      position_(start) {}

const std::byte* SequentialReader::take(std::size_t n, const char* what) {
    if (n > remaining()) {
        source_.fail(std::string("truncated ") + what + ": needs " + std::to_string(n) + " bytes at offset " +
                     std::to_string(position_) + ", the file holds " + std::to_string(source_.size()));
    }
    if (position_ < buffer_start_ || position_ + n > buffer_start_ + buffer_filled_) {
        if (n > buffer_.size()) buffer_.resize(n);
        buffer_start_ = position_;
        buffer_filled_ = static_cast<std::size_t>(std::min<std::uint64_t>(buffer_.size(), remaining()));
        source_.read(buffer_start_, std::span(buffer_.data(), buffer_filled_));
    }
    const std::byte* at = buffer_.data() + (position_ - buffer_start_);
    position_ += n;
    return at;
}

void SequentialReader::skip(std::uint64_t n, const char* what) {
    if (n > remaining()) {
        source_.fail(std::string("truncated ") + what + ": needs " + std::to_string(n) + " bytes at offset " +
                     std::to_string(position_) + ", the file holds " + std::to_string(source_.size()));
    }
    position_ += n;
}

void SequentialReader::seek(std::uint64_t position) { position_ = position; }

}  // namespace samplescope
