// Every malformed input the issue lists (and more), through the loader API and
// through the CLI: an InputError / exit 2 with exactly one line on stderr,
// naming the file and the problem; never a crash.
#include <QtTest>

#include <cmath>
#include <limits>

#include "engine/base/input_error.h"
#include "engine/io/logits_loader.h"
#include "engine/io/npy_writer.h"
#include "engine/io/safetensors_writer.h"
#include "engine/io/vocabulary.h"
#include "tests/support/file_builders.h"

using namespace samplescope;

namespace {

struct BadFile {
    const char* what;
    std::string name;            // file name (its extension picks the format)
    std::string bytes;
    std::string expected;        // part of the message
    LoadOptions options;         // for the API
    QStringList cli_args;        // the same for the CLI
    bool vocabulary = false;     // a --vocab file (logits come from --values)
};

std::string npy_with_header(const std::string& dict, const std::string& data) {
    std::string header = dict;
    while ((10 + header.size() + 1) % 64 != 0) header.push_back(' ');
    header.push_back('\n');
    return std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size() & 0xFF) +
           static_cast<char>(header.size() >> 8) + header + data;
}

std::string safetensors_with_header(const std::string& header, const std::string& data) {
    std::string out;
    for (int b = 0; b < 8; ++b) out.push_back(static_cast<char>((header.size() >> (8 * b)) & 0xFF));
    return out + header + data;
}

std::string le64(std::uint64_t value) {
    std::string out;
    for (int b = 0; b < 8; ++b) out.push_back(static_cast<char>((value >> (8 * b)) & 0xFF));
    return out;
}

// Moves the name in: assigning a literal trips GCC 12's false -Wrestrict alarm.
LoadOptions with_tensor(std::string name) {
    LoadOptions options;
    options.tensor = std::move(name);
    return options;
}

std::vector<BadFile> bad_files() {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<double> four{1, 2, 3, 4};
    const std::string good_npy = encode_npy({4}, four);
    const std::string floats16(16, '\0');
    // Zeros with NaN or +inf at the given row-major indices.
    const auto with_bad = [&](std::size_t n, std::vector<std::pair<std::size_t, double>> bad) {
        std::vector<double> values(n, 0.0);
        for (const auto& [at, value] : bad) values[at] = value;
        return values;
    };
    std::vector<BadFile> cases{
        // Wrong magic.
        {"npy bad magic", "a.npy", "NOTNUMPY" + std::string(40, ' '), "bad magic", {}, {}},
        {"safetensors bad magic", "a.safetensors", "this is text, not tensors", "not a .safetensors file", {}, {}},
        {"safetensors not json", "a.safetensors", safetensors_with_header("{nope}", ""), "malformed .safetensors header", {}, {}},
        {"npy unknown version", "a.npy", std::string("\x93NUMPY\x09\x00\x00\x00", 10), "unsupported .npy version 9", {}, {}},
        // A header that lies about the shape.
        {"npy shape smaller than data", "a.npy", npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", floats16),
         "does not match the data", {}, {}},
        {"npy shape larger than data", "a.npy", npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", floats16),
         "truncated data", {}, {}},
        {"npy shape overflows", "a.npy",
         npy_with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", floats16),
         "impossibly large", {}, {}},
        {"safetensors offsets disagree with shape", "a.safetensors",
         safetensors_with_header(R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,16]}})", floats16), "does not match the data", {}, {}},
        {"safetensors negative dimension", "a.safetensors",
         safetensors_with_header(R"({"x":{"dtype":"F32","shape":[-4],"data_offsets":[0,16]}})", floats16), "non-negative integers", {}, {}},
        {"safetensors offsets backwards", "a.safetensors",
         safetensors_with_header(R"({"x":{"dtype":"F32","shape":[4],"data_offsets":[16,0]}})", floats16), "end before they begin", {}, {}},
        // Truncated header or data.
        {"npy truncated header", "a.npy", good_npy.substr(0, 40), "truncated .npy header", {}, {}},
        {"npy truncated data", "a.npy", good_npy.substr(0, good_npy.size() - 3), "truncated data", {}, {}},
        {"safetensors truncated header", "a.safetensors", le64(500) + "{\"x\":", "truncated .safetensors header", {}, {}},
        {"safetensors truncated data", "a.safetensors",
         safetensors_with_header(R"({"x":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", floats16.substr(0, 9)), "truncated data", {}, {}},
        {"safetensors absurd header length", "a.safetensors", le64(1ull << 40) + "{}", "not a .safetensors file", {}, {}},
        // Unsupported dtypes.
        {"npy int32", "a.npy", npy_with_header("{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }", floats16),
         "unsupported dtype '<i4'", {}, {}},
        {"npy uint16 without the flag", "a.npy", npy_with_header("{'descr': '<u2', 'fortran_order': False, 'shape': (4,), }", std::string(8, '\0')),
         "--u2-as-bf16", {}, {}},
        {"npy structured", "a.npy", npy_with_header("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (4,), }", floats16),
         "structured", {}, {}},
        {"safetensors int8", "a.safetensors",
         safetensors_with_header(R"({"x":{"dtype":"I8","shape":[4],"data_offsets":[0,4]}})", "abcd"), "unsupported dtype I8", {}, {}},
        // NaN and +inf (the contract: refused, naming the first such id).
        {"npy NaN", "a.npy", encode_npy({2, 2}, std::vector<double>{0, 1, nan, 2}), "row 1, id 0 is nan", {}, {}},
        {"npy f16 +inf", "a.npy", encode_npy({3}, std::vector<double>{0, inf, 1}, {{FloatType::F16, false}}), "id 1 is inf", {}, {}},
        {"safetensors bf16 NaN", "a.safetensors", encode_safetensors({{"logits", {2}, {nan, 0}, FloatType::BF16, {}}}), "id 0 is nan", {}, {}},
        {"text NaN", "a.txt", "1, 2, nan", "id 2 is nan", {}, {}},
        {"text overflow to inf", "a.csv", "1, 1e999", "id 1 is inf", {}, {}},
        {"json inf", "a.json", "[0, \"inf\"]", "id 1 is inf", {}, {}},
        // The first in row-major order, wherever the conversion's pieces (4096
        // values) and the file's order put them.
        {"npy first bad past a piece", "a.npy", encode_npy({10000}, with_bad(10000, {{9000, nan}, {9500, inf}})), "id 9000 is nan", {}, {}},
        {"npy first bad of a later row", "a.npy",
         encode_npy({3, 5000}, with_bad(15000, {{2 * 5000 + 10, nan}, {5000 + 4999, inf}})), "row 1, id 4999 is inf", {}, {}},
        {"npy Fortran first bad in row order", "a.npy",
         encode_npy({2, 3}, with_bad(6, {{2, inf}, {3, nan}}), {{FloatType::F64, false}, true}), "row 0, id 2 is inf", {}, {}},
        {"npy 3-D first bad of the last position", "a.npy",
         encode_npy({2, 2, 3}, with_bad(12, {{1, nan}, {3 + 2, inf}, {9 + 1, nan}})), "row 0, id 2 is inf", {}, {}},
        // A bad ids tensor is read after the logits and still reported first, as
        // when the NaN check was a pass of its own after the whole load.
        {"safetensors NaN and bad ids", "a.safetensors",
         encode_safetensors({{"logits", {2}, {nan, 0}, FloatType::F32, {}}, {"prompt_ids", {2}, {1, 2}, FloatType::F32, {}}}),
         "tensor \"prompt_ids\" must be I64 or I32 ids, not F32", {}, {}},
        // Ragged rows.
        {"json ragged", "a.json", "[[1, 2, 3], [4, 5]]", "ragged rows: row 1 has 2 values, row 0 has 3", {}, {}},
        {"csv ragged", "a.csv", "1,2,3\n4,5\n", "line 2: ragged rows", {}, {}},
        {"json mixed", "a.json", "[1, [2]]", "mixes numbers and arrays", {}, {}},
        // Empty files, in every format.
        {"empty npy", "a.npy", "", "the file is empty", {}, {}},
        {"empty safetensors", "a.safetensors", "", "the file is empty", {}, {}},
        {"empty json", "a.json", "", "the file is empty", {}, {}},
        {"empty text", "a.txt", "", "the file is empty", {}, {}},
        {"only comments", "a.txt", "# nothing\n\n", "no logits found", {}, {}},
        {"empty json array", "a.json", "[]", "no logits found", {}, {}},
        // Shapes that are not rows of logits.
        {"npy 4-D", "a.npy", encode_npy({1, 1, 2, 2}, four), "expected a 1-D [V], 2-D [B, V] or 3-D [B, T, V]", {}, {}},
        {"npy scalar", "a.npy", npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", std::string(4, '\0')), "0-D", {}, {}},
        {"npy zero rows", "a.npy", npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 5), }", ""), "holds no values", {}, {}},
        {"npy malformed dict", "a.npy", npy_with_header("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (4,), }", floats16),
         "malformed .npy header", {}, {}},
        {"npy missing key", "a.npy", npy_with_header("{'descr': '<f4', 'shape': (4,), }", floats16), "no 'fortran_order'", {}, {}},
        // Other text and JSON mistakes.
        {"json malformed", "a.json", "[1, 2,", "malformed JSON", {}, {}},
        {"json object without logits", "a.json", R"({"values": [1]})", "must have a \"logits\" array", {}, {}},
        {"json tokens count", "a.json", R"({"logits": [1, 2], "tokens": ["a"]})", "\"tokens\" has 1 labels for 2 logits", {}, {}},
        {"json top-level string", "a.json", "\"logits\"", "expected an array of logits", {}, {}},  // found by fuzz_json_logits
        {"json deep nesting", "a.json", "[[[1]]]", "expected a number, got an array", {}, {}},
        {"text word", "a.txt", "1, 2, three", "line 1: \"three\" is not a number", {}, {}},
        {"text label then plain number", "a.txt", "a: 1\n2\n", "line 2: numbers without a label", {}, {}},
        {"text plain number then label", "a.txt", "1\nb: 2\n", "line 2: a `label<TAB>logit` line after", {}, {}},
        // Tensor choice.
        {"safetensors several tensors", "a.safetensors",
         encode_safetensors({{"a", {1}, {1}, FloatType::F32, {}}, {"b", {1}, {2}, FloatType::F32, {}}}), "pick one with --tensor", {}, {}},
    };
    cases.push_back({"safetensors missing tensor", "a.safetensors", encode_safetensors({{"a", {1}, {1}, FloatType::F32, {}}}),
                     "has no tensor \"nope\"; it holds: a", with_tensor("nope"), {"--tensor", "nope"}});
    BadFile too_large{"larger than the memory allowed", "a.npy", encode_npy({2, 64}, std::vector<double>(128, 1.0)),
                      "too large to load: 128 logits need 1024 bytes as f64", {}, {}};
    too_large.options.memory_limit_bytes = 512;  // the CLI's version uses a sparse file: see largerThanMemoryThroughTheCli
    cases.push_back(too_large);

    // Vocabularies.
    testing::GgufVocabSpec spec;
    spec.tokens = {"a", "b", "c"};
    const std::string gguf = testing::encode_gguf_vocab(spec);
    std::string lying_gguf = gguf;
    const auto tokens_at = lying_gguf.find("tokenizer.ggml.tokens") + std::string("tokenizer.ggml.tokens").size() + 4 + 4 + 8;
    lying_gguf.replace(tokens_at, 8, le64(1ull << 50));  // the first token's length
    testing::GgufVocabSpec no_tokens_spec;
    no_tokens_spec.tokens = {"a"};
    std::string no_tokens = testing::encode_gguf_vocab(no_tokens_spec);
    no_tokens.replace(no_tokens.find("tokenizer.ggml.tokens"), 21, "tokenizer.ggml.tokenz");
    std::string version1 = gguf;
    version1[4] = '\x01';
    const std::vector<BadFile> vocabularies{
        {"gguf bad magic", "v.gguf", "GGML" + gguf.substr(4), "bad magic", {}, {}, true},
        {"gguf truncated", "v.gguf", gguf.substr(0, gguf.find("tokenizer.ggml.tokens") + 30), "truncated", {}, {}, true},
        {"gguf length lies", "v.gguf", lying_gguf, "runs past the end of the file", {}, {}, true},
        {"gguf without tokens", "v.gguf", no_tokens, "no tokenizer.ggml.tokens", {}, {}, true},
        {"gguf version 1", "v.gguf", version1, "version 1 is not supported", {}, {}, true},
        {"gguf big-endian", "v.gguf", std::string("GGUF\x00\x00\x00\x03", 8) + gguf.substr(8), "big-endian", {}, {}, true},
        {"tokenizer.json malformed", "tokenizer.json", "{\"model\": {", "malformed JSON", {}, {}, true},
        {"tokenizer.json without vocab", "tokenizer.json", R"({"model": {"type": "BPE"}})", "has no \"vocab\"", {}, {}, true},
        {"vocab.json huge id", "vocab.json", R"({"a": 0, "b": 4000000000})", "token id 4000000000 is far beyond", {}, {}, true},
        {"vocab.json shared id", "vocab.json", R"({"a": 0, "b": 0})", "share id 0", {}, {}, true},
        {"vocab.json negative id", "vocab.json", R"({"a": -1})", "not a non-negative integer", {}, {}, true},
        {"vocab.json not an object", "vocab.json", R"(["a", "b"])", "expected a JSON object", {}, {}, true},
        {"empty vocab.txt", "vocab.txt", "", "the file is empty", {}, {}, true},
    };
    cases.insert(cases.end(), vocabularies.begin(), vocabularies.end());
    return cases;
}

struct CliResult {
    int exit_code = -1;
    QString stderr_text;
    QString stdout_text;
};

CliResult run_cli(const QStringList& args) {
    QProcess process;
    process.start(SAMPLESCOPE_CLI, args);
    if (!process.waitForFinished(60000)) return {};
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
            QString::fromUtf8(process.readAllStandardError()), QString::fromUtf8(process.readAllStandardOutput())};
}

void expect_one_line_error(const CliResult& result, const QString& path, const QString& expected) {
    QCOMPARE(result.exit_code, 2);
    QVERIFY2(result.stderr_text.endsWith('\n') && result.stderr_text.count('\n') == 1,
             qPrintable("stderr is not one line: " + result.stderr_text));
    QVERIFY2(result.stderr_text.contains(path), qPrintable("stderr does not name the file: " + result.stderr_text));
    QVERIFY2(result.stderr_text.contains(expected), qPrintable("stderr lacks \"" + expected + "\": " + result.stderr_text));
    QVERIFY(result.stdout_text.isEmpty());
}

}  // namespace

class LoadersMalformedTest : public QObject {
    Q_OBJECT
private slots:
    void throughTheApi_data() {
        QTest::addColumn<int>("index");
        const auto cases = bad_files();
        for (std::size_t i = 0; i < cases.size(); ++i) QTest::newRow(cases[i].what) << static_cast<int>(i);
    }
    void throughTheApi() {
        QFETCH(int, index);
        const BadFile bad = bad_files()[static_cast<std::size_t>(index)];
        QTemporaryDir dir;
        const std::string path = dir.filePath(QString::fromStdString(bad.name)).toStdString();
        write_file_bytes(path, bad.bytes);
        try {
            if (bad.vocabulary) {
                (void)load_vocabulary(path);
            } else {
                (void)load_logits_file(path, bad.options);
            }
            QFAIL("no error");
        } catch (const InputError& error) {
            const std::string message = error.what();
            QVERIFY2(message.starts_with(path + ": "), message.c_str());
            QVERIFY2(message.find(bad.expected) != std::string::npos, message.c_str());
            QVERIFY2(message.find('\n') == std::string::npos, message.c_str());
            QCOMPARE(error.field(), path);
        }
        // The same bytes from memory (the fuzzers' path) give the same answer.
        try {
            if (bad.vocabulary) {
                (void)load_vocabulary_bytes(bad.bytes, bad.name);
            } else {
                (void)load_logits_bytes(bad.bytes, bad.name, bad.options);
            }
            QFAIL("no error from memory");
        } catch (const InputError& error) {
            QVERIFY2(std::string(error.what()).find(bad.expected) != std::string::npos, error.what());
        }
    }
    void throughTheCli_data() {
        QTest::addColumn<int>("index");
        const auto cases = bad_files();
        for (std::size_t i = 0; i < cases.size(); ++i) {
            // A memory limit is an API option; largerThanMemoryThroughTheCli covers the CLI.
            if (cases[i].options.memory_limit_bytes == 0) QTest::newRow(cases[i].what) << static_cast<int>(i);
        }
    }
    void throughTheCli() {
        QFETCH(int, index);
        const BadFile bad = bad_files()[static_cast<std::size_t>(index)];
        QTemporaryDir dir;
        const QString path = dir.filePath(QString::fromStdString(bad.name));
        write_file_bytes(path.toStdString(), bad.bytes);
        QStringList args{"trace", "--seed", "0"};
        if (bad.vocabulary) {
            args << "--values" << "1,2,3" << "--vocab" << path;
        } else {
            args << "--logits" << path;
        }
        args << bad.cli_args;
        expect_one_line_error(run_cli(args), path, QString::fromStdString(bad.expected));
    }
    void missingAndDirectory() {
        QTemporaryDir dir;
        const QString missing = dir.filePath("none.npy");
        expect_one_line_error(run_cli({"trace", "--logits", missing}), missing, "does not exist");
        expect_one_line_error(run_cli({"trace", "--values", "1,2", "--vocab", missing}), missing, "does not exist");
        expect_one_line_error(run_cli({"trace", "--logits", dir.path()}), dir.path(), "is a directory");
        QVERIFY_THROWS_EXCEPTION(InputError, load_logits_file(missing.toStdString()));
    }
    void largerThanMemoryThroughTheCli() {
        // A sparse file whose header promises 2^40 f32 values (4 TiB on disk,
        // no blocks written): the data is all there, but 8 TiB of doubles is
        // more memory than any machine running this has.
        QTemporaryDir dir;
        const QString path = dir.filePath("huge.npy");
        const std::string small = encode_npy({1, 1}, std::vector<double>{0.0});
        std::string big_header = small.substr(0, small.size() - 4);  // without its one f32
        const std::string big_shape = "(1048576, 1048576)";
        big_header.replace(big_header.find("(1, 1)"), 6, big_shape);
        big_header.erase(big_header.find('\n') - (big_shape.size() - 6), big_shape.size() - 6);  // keep the length
        QCOMPARE(big_header.size(), small.size() - 4);
        write_file_bytes(path.toStdString(), big_header);
        QFile file(path);
        if (!file.resize(static_cast<qint64>(big_header.size()) + (qint64{1} << 42))) QSKIP("this file system cannot hold a sparse 4 TiB file");
        expect_one_line_error(run_cli({"trace", "--logits", path}), path, "too large to load");
        QVERIFY_THROWS_EXCEPTION(InputError, load_logits_file(path.toStdString()));
    }
    void aFailedLoadLeavesTheCallersDataAlone() {
        const LogitsMatrix before = load_logits_bytes("1, 2, 3", "a.txt");
        LogitsMatrix held = before;
        try {
            held = load_logits_bytes("1, x", "b.txt");
        } catch (const InputError&) {
        }
        QCOMPARE(held.values, before.values);
        QCOMPARE(held.cols, std::size_t{3});
    }
};

QTEST_APPLESS_MAIN(LoadersMalformedTest)
#include "test_loaders_malformed.moc"
