// Where a loader's bytes come from: a file read in pieces (so a large file is
// never held twice in memory) or a buffer already in memory (pasted text, a
// fuzzer's input). Reads past the end throw InputError naming the source.
#pragma once

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace samplescope {

// Whether a file name ends with `extension` (".npy"), ignoring ASCII case:
// formats are chosen by it.
bool has_extension(const std::string& name, std::string_view extension);

class ByteSource {
public:
    explicit ByteSource(std::string name) : name_(std::move(name)) {}
    virtual ~ByteSource() = default;
    ByteSource(const ByteSource&) = delete;
    ByteSource& operator=(const ByteSource&) = delete;

    // The file name (or "pasted text" etc.) that error messages start with.
    const std::string& name() const { return name_; }
    virtual std::uint64_t size() const = 0;
    // Fills `out` with the bytes at [offset, offset + out.size()); throws
    // InputError ("truncated ...") when the source ends first.
    virtual void read(std::uint64_t offset, std::span<std::byte> out) const = 0;

    // Every byte as a string, refusing sources above `limit` bytes.
    std::string read_all(std::uint64_t limit) const;

    [[noreturn]] void fail(const std::string& problem) const;

private:
    std::string name_;
};

class FileSource final : public ByteSource {
public:
    // Throws InputError when the path cannot be opened or is not a regular file.
    explicit FileSource(const std::string& path);
    std::uint64_t size() const override { return size_; }
    void read(std::uint64_t offset, std::span<std::byte> out) const override;

private:
    mutable std::ifstream stream_;
    std::uint64_t size_ = 0;
};

class MemorySource final : public ByteSource {
public:
    // `bytes` must outlive the source.
    MemorySource(std::string_view bytes, std::string name) : ByteSource(std::move(name)), bytes_(bytes) {}
    std::uint64_t size() const override { return bytes_.size(); }
    void read(std::uint64_t offset, std::span<std::byte> out) const override;

private:
    std::string_view bytes_;
};

// Reads a source front to back through a fixed window, for parsers that walk
// many small fields (GGUF metadata) or stream large arrays piece by piece.
class SequentialReader {
public:
    explicit SequentialReader(const ByteSource& source, std::uint64_t start = 0, std::size_t window = 1 << 20);

    std::uint64_t position() const { return position_; }
    std::uint64_t remaining() const { return source_.size() - position_; }
    // The next `n` bytes (n <= window), valid until the next call; throws
    // InputError naming `what` when the source ends first.
    const std::byte* take(std::size_t n, const char* what);
    void skip(std::uint64_t n, const char* what);
    void seek(std::uint64_t position);
    std::size_t window() const { return buffer_.size(); }

private:
    const ByteSource& source_;
    std::vector<std::byte> buffer_;
    std::uint64_t buffer_start_ = 0;  // file offset of buffer_[0]
    std::size_t buffer_filled_ = 0;
    std::uint64_t position_ = 0;
};

}  // namespace samplescope
