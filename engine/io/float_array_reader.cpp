// Streams a float array out of a .npy or .safetensors file into a
// LogitsMatrix, converting each piece as it arrives: the file's bytes are never
// held whole next to the doubles.
#include <algorithm>
#include <cmath>
#include <limits>
#include <new>
#include <sys/mman.h>
#include <unistd.h>

#include "engine/io/logits_readers.h"

namespace samplescope::detail {

namespace {

std::uint64_t physical_memory_bytes() {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_size = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page_size <= 0) return std::numeric_limits<std::uint64_t>::max();
    return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size);
}

std::string size_text(std::uint64_t bytes) {
    if (bytes < (1u << 20)) return std::to_string(bytes) + " bytes";
    if (bytes < (1u << 30)) return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB";
    return std::to_string((bytes + (1u << 30) - 1) >> 30) + " GiB";
}

// The index of the first NaN or +inf among values[0, count), or count when
// there is none. A branch-free pass over the block (GCC vectorises it) finds
// whether to look; only a block that holds one is scanned element by element.
// The flag is a double on purpose: a select between doubles vectorises with
// SSE2, a bool or integer flag from a double compare does not.
std::size_t first_not_finite(const double* values, std::size_t count) {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    double bad = 0.0;
    for (std::size_t i = 0; i < count; ++i) bad = values[i] < kInf ? bad : 1.0;  // NaN or +inf
    if (bad == 0.0) return count;
    std::size_t i = 0;
    while (values[i] < kInf) ++i;
    return i;
}

// Asks for transparent huge pages over a large result, as numpy does for its
// arrays: where the system grants them on request (the common "madvise"
// setting), 66 MB of doubles cost about 32 page faults instead of 16,000,
// which were most of a large load. Only a hint; the values are the same.
void advise_huge_pages(const double* data, std::size_t count) {
#ifdef MADV_HUGEPAGE
    const std::size_t bytes = count * sizeof(double);
    if (bytes < (std::size_t{4} << 20)) return;
    const long page_size = sysconf(_SC_PAGE_SIZE);
    if (page_size <= 0) return;
    const auto page = static_cast<std::uintptr_t>(page_size);
    const auto start = reinterpret_cast<std::uintptr_t>(data);
    const std::uintptr_t begin = (start + page - 1) / page * page;
    const std::uintptr_t end = (start + bytes) / page * page;
    if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
    (void)data;
    (void)count;
#endif
}

// Decodes `count` elements that lie back to back in the file from `reader`'s
// position in pieces of at most 4,096, a scratch block that stays in L1, and
// hands each to `use(piece, size, offset)`, offset counting the elements
// before it.
template <class Use>
void decode_run(SequentialReader& reader, ElementFormat format, std::uint64_t count, Use use) {
    const std::size_t size = element_size(format.type);
    const std::size_t per_take = std::max<std::size_t>(1, reader.window() / size);
    double scratch[4096];
    std::size_t offset = 0;
    while (count > 0) {
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(count, per_take));
        const std::byte* bytes = reader.take(n * size, "data");
        for (std::size_t done = 0; done < n;) {
            const std::size_t piece = std::min<std::size_t>(n - done, std::size(scratch));
            decode_elements(bytes + done * size, piece, format, scratch);
            use(static_cast<const double*>(scratch), piece, offset + done);
            done += piece;
        }
        offset += n;
        count -= n;
    }
}

// Appends the elements to `values` (whose capacity is reserved already), each
// piece checked for NaN and +inf while it is in L1 (`first_bad` receives the
// index in `values` of the first, unless set already): the result is never
// value-initialised first, which cost a zeroing pass over all of it.
void append_run(SequentialReader& reader, ElementFormat format, std::uint64_t count, std::vector<double>& values,
                std::size_t& first_bad) {
    decode_run(reader, format, count, [&](const double* piece, std::size_t n, std::size_t) {
        if (first_bad == kAllFinite) {
            const std::size_t at = first_not_finite(piece, n);
            if (at != n) first_bad = values.size() + at;
        }
        values.insert(values.end(), piece, piece + n);
    });
}

// Copies the elements to out[0], out[stride], out[2 * stride], ... (Fortran order).
void scatter_run(SequentialReader& reader, ElementFormat format, std::uint64_t count, double* out, std::size_t stride) {
    decode_run(reader, format, count, [&](const double* piece, std::size_t n, std::size_t offset) {
        for (std::size_t i = 0; i < n; ++i) out[(offset + i) * stride] = piece[i];
    });
}

}  // namespace

std::string shape_text(const std::vector<std::uint64_t>& shape) {
    std::string text = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i) text += ", ";
        text += std::to_string(shape[i]);
    }
    if (shape.size() == 1) text += ",";
    return text + ")";
}

LogitsMatrix read_float_array(const ByteSource& source, const ArrayLayout& layout, const LoadOptions& options,
                              std::size_t& first_bad) {
    const auto& shape = layout.shape;
    const std::string dtype = float_type_name(layout.format.type);
    if (shape.empty() || shape.size() > 3) {
        source.fail("expected a 1-D [V], 2-D [B, V] or 3-D [B, T, V] array, got shape " + shape_text(shape));
    }
    const std::size_t item = element_size(layout.format.type);
    std::uint64_t elements = 1;
    for (const auto dim : shape) {
        if (dim == 0) source.fail("the array holds no values (shape " + shape_text(shape) + ")");
        if (elements > std::numeric_limits<std::uint64_t>::max() / item / dim) {
            source.fail("the shape " + shape_text(shape) + " is impossibly large");
        }
        elements *= dim;
    }
    const std::uint64_t needed = elements * item;
    if (layout.data_bytes < needed) {
        source.fail("truncated data: shape " + shape_text(shape) + " of " + dtype + " needs " + std::to_string(needed) +
                    " bytes, the file has " + std::to_string(layout.data_bytes));
    }
    if (layout.data_bytes > needed) {
        source.fail("the header does not match the data: shape " + shape_text(shape) + " of " + dtype + " needs " +
                    std::to_string(needed) + " bytes, the file has " + std::to_string(layout.data_bytes));
    }

    const std::uint64_t batch = shape.size() >= 2 ? shape[0] : 1;
    const std::uint64_t positions = shape.size() == 3 ? shape[1] : 1;
    const std::uint64_t vocab = shape.back();
    const bool every_position = options.all_positions_of && shape.size() == 3;
    const std::uint64_t chosen = every_position ? *options.all_positions_of : 0;
    if (every_position && chosen >= batch) {
        source.fail("batch row " + std::to_string(chosen) + " is outside the " + std::to_string(batch) +
                    " batch rows of shape " + shape_text(shape));
    }
    // No overflow: at most `elements`.
    const std::uint64_t kept = every_position ? positions * vocab : batch * vocab;
    const std::uint64_t limit = options.memory_limit_bytes ? options.memory_limit_bytes : physical_memory_bytes();
    if (kept > limit / sizeof(double)) {
        source.fail("too large to load: " + std::to_string(kept) + " logits need " +
                    size_text(kept * sizeof(double)) + " as f64, more than the " + size_text(limit) + " of memory");
    }

    // A [1, V] array is laid out the same in both orders; [1, T, V] is not.
    const bool fortran = layout.fortran_order && (shape.size() == 3 || (shape.size() == 2 && batch > 1));
    LogitsMatrix matrix;
    try {
        matrix.values.reserve(static_cast<std::size_t>(kept));
    } catch (const std::bad_alloc&) {
        source.fail("not enough memory for " + std::to_string(kept) + " logits (" + size_text(kept * sizeof(double)) + ")");
    }
    advise_huge_pages(matrix.values.data(), static_cast<std::size_t>(kept));
    matrix.rows = static_cast<std::size_t>(every_position ? positions : batch);
    matrix.cols = static_cast<std::size_t>(vocab);
    if (every_position) {
        if (batch > 1) {
            matrix.notes.push_back("took every position of batch row " + std::to_string(chosen) + " of shape " +
                                   shape_text(shape));
        }
    } else if (positions > 1) {
        matrix.notes.push_back("took the last position (" + std::to_string(positions - 1) + " of " +
                               std::to_string(positions) + ") of each batch row of shape " + shape_text(shape));
    }

    SequentialReader reader(source, layout.data_offset);
    const auto at = [&](std::uint64_t element) { reader.seek(layout.data_offset + element * item); };
    first_bad = kAllFinite;
    if (every_position && !fortran) {
        // C order: batch row b's T x V values are contiguous at b*T*V.
        at(chosen * positions * vocab);
        append_run(reader, layout.format, positions * vocab, matrix.values, first_bad);
    } else if (every_position) {
        // Fortran order: (b, t, v) lies at b + t*B + v*B*T; with B = 1 each v's
        // T values are contiguous, else each value is read on its own.
        matrix.values.resize(static_cast<std::size_t>(kept));
        double* out = matrix.values.data();
        for (std::uint64_t v = 0; v < vocab; ++v) {
            if (batch == 1) {
                at(v * positions);
                scatter_run(reader, layout.format, positions, out + v, static_cast<std::size_t>(vocab));
                continue;
            }
            for (std::uint64_t t = 0; t < positions; ++t) {
                at(chosen + t * batch + v * batch * positions);
                scatter_run(reader, layout.format, 1, out + t * vocab + v, static_cast<std::size_t>(vocab));
            }
        }
        const std::size_t found = first_not_finite(out, matrix.values.size());
        if (found != matrix.values.size()) first_bad = found;
    } else if (!fortran) {
        // C order: row b is V contiguous elements at b*T*V + (T-1)*V.
        for (std::uint64_t b = 0; b < batch; ++b) {
            at(b * positions * vocab + (positions - 1) * vocab);
            append_run(reader, layout.format, vocab, matrix.values, first_bad);
        }
    } else {
        // Fortran order: (b, t, v) lies at b + t*B + v*B*T, so for each v the B
        // wanted elements are contiguous; they land one row apart. (Within the
        // capacity reserved: resize allocates nothing.)
        matrix.values.resize(static_cast<std::size_t>(kept));
        double* out = matrix.values.data();
        for (std::uint64_t v = 0; v < vocab; ++v) {
            at((positions - 1) * batch + v * batch * positions);
            scatter_run(reader, layout.format, batch, out + v, static_cast<std::size_t>(vocab));
        }
        // Strided writes leave no block in cache to check: one pass at the end.
        const std::size_t found = first_not_finite(out, matrix.values.size());
        if (found != matrix.values.size()) first_bad = found;
    }
    return matrix;
}

void fail_not_finite(const LogitsMatrix& matrix, std::size_t i, const ByteSource& source) {
    const double x = matrix.values[i];
    const std::string where = matrix.rows > 1 ? "row " + std::to_string(i / matrix.cols) + ", id " : "id ";
    source.fail(where + std::to_string(i % matrix.cols) + " is " + (std::isnan(x) ? "nan" : "inf") +
                " (only finite values and -inf are allowed)");
}

void check_finite_or_minus_inf(const LogitsMatrix& matrix, const ByteSource& source) {
    const std::size_t at = first_not_finite(matrix.values.data(), matrix.values.size());
    if (at != matrix.values.size()) fail_not_finite(matrix, at, source);
}

}  // namespace samplescope::detail
