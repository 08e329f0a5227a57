// Every logits format and dtype written by the project's writers (or by hand)
// and read back: values, shape, order and labels must come back exactly.
#include <QtTest>

#include <cmath>
#include <limits>
#include <random>

#include "engine/io/float_formats.h"
#include "engine/base/input_error.h"
#include "engine/io/logits_loader.h"
#include "engine/io/npy_writer.h"
#include "engine/io/safetensors_writer.h"

using namespace samplescope;

namespace {

// Random values that the given type represents exactly (so a round trip must
// be bit-exact), with a -inf sprinkled in.
std::vector<double> representable(std::size_t count, FloatType type, std::mt19937_64& rng) {
    std::normal_distribution<double> normal(0.0, 6.0);
    std::vector<double> values(count);
    std::vector<std::byte> bytes(element_size(type));
    for (auto& v : values) {
        encode_elements(std::array{normal(rng)}.data(), 1, {type, false}, bytes.data());
        decode_elements(bytes.data(), 1, {type, false}, &v);
    }
    if (count > 2) values[count / 2] = -std::numeric_limits<double>::infinity();
    return values;
}

// The rows the loader should give for a C-order array of `shape`: 3-D keeps the last position.
std::vector<double> expected_rows(const std::vector<std::uint64_t>& shape, const std::vector<double>& values) {
    if (shape.size() < 3) return values;
    std::vector<double> out;
    const std::size_t t = shape[1];
    const std::size_t v = shape[2];
    for (std::size_t b = 0; b < shape[0]; ++b) {
        const auto start = values.begin() + static_cast<std::ptrdiff_t>((b * t + t - 1) * v);
        out.insert(out.end(), start, start + static_cast<std::ptrdiff_t>(v));
    }
    return out;
}

void compare_exact(const LogitsMatrix& matrix, std::size_t rows, std::size_t cols, const std::vector<double>& expected) {
    QCOMPARE(matrix.rows, rows);
    QCOMPARE(matrix.cols, cols);
    QCOMPARE(matrix.values.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
        if (matrix.values[i] != expected[i]) QFAIL(qPrintable(QString("value %1: got %2, want %3").arg(i).arg(matrix.values[i]).arg(expected[i])));
    }
}

// Moves the name in: assigning a literal trips GCC 12's false -Wrestrict alarm.
LoadOptions with_tensor(std::string name) {
    LoadOptions options;
    options.tensor = std::move(name);
    return options;
}

const std::vector<std::vector<std::uint64_t>> kShapes{{7}, {1, 9}, {3, 5}, {4, 1}, {1, 3, 6}, {2, 4, 5}};

}  // namespace

class LoadersRoundTripTest : public QObject {
    Q_OBJECT
private slots:
    void npyEveryTypeOrderAndShape() {
        std::mt19937_64 rng(11);
        for (const auto type : {FloatType::F16, FloatType::BF16, FloatType::F32, FloatType::F64}) {
            for (const bool big : {false, true}) {
                for (const bool fortran : {false, true}) {
                    for (const auto& shape : kShapes) {
                        std::size_t count = 1;
                        for (const auto d : shape) count *= d;
                        const auto values = representable(count, type, rng);
                        NpyWriteOptions options{{type, big}, fortran, big ? Bfloat16Descr::Uint16 : Bfloat16Descr::Void};
                        LoadOptions load;
                        load.u2_as_bfloat16 = type == FloatType::BF16 && big;
                        const std::string bytes = encode_npy(shape, values, options);
                        const LogitsMatrix matrix = load_logits_bytes(bytes, "x.npy", load);
                        const std::size_t rows = shape.size() > 1 ? shape[0] : 1;
                        compare_exact(matrix, rows, shape.back(), expected_rows(shape, values));
                        QCOMPARE(matrix.notes.size(), std::size_t(shape.size() == 3 ? 1 : 0));
                    }
                }
            }
        }
    }
    void npyHandBuiltBytes() {
        // Written out byte by byte, as numpy writes [[1, -2], [0.5, 3]] in Fortran
        // order as big-endian f32: column-major data 1, 0.5, -2, 3.
        std::string header = "{'descr': '>f4', 'fortran_order': True, 'shape': (2, 2), }";
        while ((10 + header.size() + 1) % 64 != 0) header.push_back(' ');
        header.push_back('\n');
        std::string bytes = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) + '\0' + header;
        bytes += std::string("\x3F\x80\x00\x00\x3F\x00\x00\x00\xC0\x00\x00\x00\x40\x40\x00\x00", 16);
        compare_exact(load_logits_bytes(bytes, "hand.npy"), 2, 2, {1.0, -2.0, 0.5, 3.0});
        // Version 2.0 header (4-byte length) and a bf16 written by ml_dtypes ('<V2').
        std::string header2 = "{'descr': '|V2', 'fortran_order': False, 'shape': (3,), }\n";
        // Appended piece by piece: GCC 12 misreads the chained operator+ as an out-of-bounds copy (-Warray-bounds).
        std::string v2("\x93NUMPY\x02\x00", 8);
        v2.push_back(static_cast<char>(header2.size()));
        v2.append(3, '\0');
        v2.append(header2);
        v2 += std::string("\x80\x3F\x00\xC0\x00\x00", 6);
        compare_exact(load_logits_bytes(v2, "bf16.npy"), 1, 3, {1.0, -2.0, 0.0});
    }
    void npyFromAFileOnDisk() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("big.npy").toStdString();
        std::mt19937_64 rng(3);
        const std::vector<std::uint64_t> shape{3, 70000};  // larger than the 1 MiB read window
        const auto values = representable(3 * 70000, FloatType::F32, rng);
        write_file_bytes(path, encode_npy(shape, values, {{FloatType::F32, false}}));
        compare_exact(load_logits_file(path), 3, 70000, values);
        write_file_bytes(path, encode_npy(shape, values, {{FloatType::F32, false}, true}));
        compare_exact(load_logits_file(path), 3, 70000, values);
    }
    void safetensorsEveryTypeAndShape() {
        std::mt19937_64 rng(5);
        for (const auto type : {FloatType::F16, FloatType::BF16, FloatType::F32, FloatType::F64}) {
            for (const auto& shape : kShapes) {
                std::size_t count = 1;
                for (const auto d : shape) count *= d;
                const auto values = representable(count, type, rng);
                const std::string bytes = encode_safetensors({{"logits", shape, values, type, {}}});
                const std::size_t rows = shape.size() > 1 ? shape[0] : 1;
                compare_exact(load_logits_bytes(bytes, "x.safetensors"), rows, shape.back(), expected_rows(shape, values));
            }
        }
    }
    void safetensorsPicksTensorsAndReadsIds() {
        const std::vector<double> a{1, 2, 3};
        const std::vector<double> b{4, 5, 6, 7};
        const std::string bytes = encode_safetensors({{"a", {3}, a, FloatType::F32, {}},
                                                      {"b", {4}, b, FloatType::F64, {}},
                                                      {"prompt_ids", {2}, {}, FloatType::F32, {9, -1}},
                                                      {"output_ids", {1}, {}, FloatType::F32, {12}}});
        const auto matrix = load_logits_bytes(bytes, "x.safetensors", with_tensor("b"));
        compare_exact(matrix, 1, 4, b);
        QCOMPARE(matrix.prompt_ids, (std::vector<std::int64_t>{9, -1}));
        QCOMPARE(matrix.output_ids, (std::vector<std::int64_t>{12}));
        compare_exact(load_logits_bytes(bytes, "x.safetensors", with_tensor("a")), 1, 3, a);
        // With a tensor called "logits", no name is needed.
        const std::string named = encode_safetensors({{"logits", {3}, a, FloatType::F32, {}}, {"other", {4}, b, FloatType::F32, {}}});
        compare_exact(load_logits_bytes(named, "x.safetensors"), 1, 3, a);
    }
    void safetensorsListsItsFloatTensors() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("two.safetensors").toStdString();
        write_file_bytes(path, encode_safetensors({{"zeta", {2}, {1, 2}, FloatType::BF16, {}},
                                                   {"alpha", {1, 2}, {3, 4}, FloatType::F16, {}},
                                                   {"prompt_ids", {1}, {}, FloatType::F32, {0}}}));
        // The id tensor is not a logits tensor.
        QCOMPARE(safetensors_float_tensors(path), (std::vector<std::string>{"alpha", "zeta"}));
        for (const auto& name : safetensors_float_tensors(path)) {
            QCOMPARE(load_logits_file(path, with_tensor(name)).cols, std::size_t{2});
        }
        const std::string text = dir.filePath("not.safetensors").toStdString();
        write_file_bytes(text, "1, 2, 3\n");
        QVERIFY_EXCEPTION_THROWN(safetensors_float_tensors(text), InputError);
    }
    void jsonShapes() {
        compare_exact(load_logits_bytes("[1, 3, 2.5, \"-inf\", -1]", "x.json"), 1, 5,
                      {1, 3, 2.5, -std::numeric_limits<double>::infinity(), -1});
        compare_exact(load_logits_bytes("[[1, 2], [3, 4], [5, 6]]", "x.json"), 3, 2, {1, 2, 3, 4, 5, 6});
        const auto object = load_logits_bytes(
            R"({"model": "m", "logits": [0.5, 1e2], "tokens": ["a", " b"], "prompt_ids": [1, 0], "output_ids": [], "extra": {"x": [1, [2]]}})",
            "x.json");
        compare_exact(object, 1, 2, {0.5, 100});
        QCOMPARE(object.labels, (std::vector<std::string>{"a", " b"}));
        QCOMPARE(object.prompt_ids, (std::vector<std::int64_t>{1, 0}));
        compare_exact(load_logits_bytes(R"({"logits": [[1, 2], [3, 4]]})", "x.json"), 2, 2, {1, 2, 3, 4});
    }
    void textShapes() {
        compare_exact(load_logits_bytes("1, 3, 2, 3, -1\n", "x.txt"), 1, 5, {1, 3, 2, 3, -1});
        compare_exact(load_logits_bytes("1\n3\n+2\n-inf\n", "x.txt"), 1, 4, {1, 3, 2, -std::numeric_limits<double>::infinity()});
        compare_exact(load_logits_bytes("# batch\n1,2,3\r\n4,5,6\r\n", "x.csv"), 2, 3, {1, 2, 3, 4, 5, 6});
        compare_exact(load_logits_bytes("1\t2\t3\n4\t5\t6\n", "x.tsv"), 2, 3, {1, 2, 3, 4, 5, 6});
        compare_exact(load_logits_bytes("\xEF\xBB\xBF" "1e-400 2e3", "x.txt"), 1, 2, {0.0, 2000.0});
        const auto labelled = load_logits_bytes("the\t1.5\nNew York: -2\nweird:label\t0\n", "x.tsv");
        compare_exact(labelled, 1, 3, {1.5, -2, 0});
        QCOMPARE(labelled.labels, (std::vector<std::string>{"the", "New York", "weird:label"}));
        // After a tab a label keeps its spaces, and may look like a number.
        const auto spaced = load_logits_bytes("x\t1\n the\t2\n \t3\n42\t4\n", "x.tsv");
        compare_exact(spaced, 1, 4, {1, 2, 3, 4});
        QCOMPARE(spaced.labels, (std::vector<std::string>{"x", " the", " ", "42"}));
        // One line of tab-separated numbers is a row of numbers, not `label<TAB>logit`:
        // a line is labelled only when its label is not a number.
        for (const std::string source : {"clipboard", "x.tsv", "x.txt"}) {
            const auto row = load_logits_bytes("1\t2\t3", source);
            compare_exact(row, 1, 3, {1, 2, 3});
            QVERIFY(row.labels.empty());
            compare_exact(load_logits_bytes("1\t2\r\n", source), 1, 2, {1, 2});
            compare_exact(parse_logits_text("-1.5\t2e0\t-inf\t0\n", source), 1, 4,
                          {-1.5, 2, -std::numeric_limits<double>::infinity(), 0});
            QCOMPARE(load_logits_bytes("a\t2", source).labels, (std::vector<std::string>{"a"}));
        }
        // Any row of numbers joined by tabs reads back as that row.
        std::mt19937_64 rng(11);
        std::normal_distribution<double> normal(0.0, 5.0);
        for (int trial = 0; trial < 200; ++trial) {
            std::vector<double> row(1 + rng() % 9);
            std::string line;
            for (auto& v : row) {
                v = normal(rng);
                if (!line.empty()) line += '\t';
                line += format_number(v);
            }
            const auto parsed = parse_logits_text(line, "clipboard");
            compare_exact(parsed, 1, row.size(), row);
            QVERIFY(parsed.labels.empty());
        }
        // The old entry point still parses text in memory.
        compare_exact(parse_logits_text("0.5;0.25", "typed"), 1, 2, {0.5, 0.25});
    }
    void formatsAreSniffedWithoutAnExtension() {
        const std::vector<double> values{1, 2};
        compare_exact(load_logits_bytes(encode_npy({2}, values), "dump.bin"), 1, 2, values);
        compare_exact(load_logits_bytes(encode_safetensors({{"t", {2}, values, FloatType::F32, {}}}), "dump.bin"), 1, 2, values);
        compare_exact(load_logits_bytes(" [1, 2]", "dump.bin"), 1, 2, values);
        compare_exact(load_logits_bytes("1 2", "dump.bin"), 1, 2, values);
    }
    void everyTextValueReadsBackExactly() {
        // Shortest round-trip text of random doubles parses to the same bits.
        std::mt19937_64 rng(9);
        std::uniform_real_distribution<double> uniform(-1e6, 1e6);
        std::vector<double> values(2000);
        std::string text;
        for (auto& v : values) {
            v = uniform(rng) * std::ldexp(1.0, static_cast<int>(rng() % 80) - 40);
            text += format_number(v) + "\n";
        }
        compare_exact(load_logits_bytes(text, "x.txt"), 1, values.size(), values);
    }
};

QTEST_APPLESS_MAIN(LoadersRoundTripTest)
#include "test_loaders_roundtrip.moc"
