// The committed example files and fuzz seeds are exactly what the project's
// generator writes, and every example opens as examples/README.md says.
#include <QtTest>

#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>

#include <fstream>
#include <iterator>

#include "engine/base/input_error.h"
#include "engine/io/logits_loader.h"
#include "engine/io/vocabulary.h"
#include "tests/support/example_data.h"

using namespace samplescope;

namespace {

const QString kRoot = QDir::cleanPath(QStringLiteral(SAMPLESCOPE_TEST_DATA "/../.."));

std::string path_of(const std::string& relative) { return (kRoot + "/" + QString::fromStdString(relative)).toStdString(); }

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<double> example_row(std::size_t r) {
    const auto all = testing::example_logits();
    return {all.begin() + static_cast<std::ptrdiff_t>(r * testing::kExampleVocab),
            all.begin() + static_cast<std::ptrdiff_t>((r + 1) * testing::kExampleVocab)};
}

}  // namespace

class ExampleDataTest : public QObject {
    Q_OBJECT
private slots:
    void committedFilesMatchTheGenerator() {
        for (auto* files : {&testing::example_data_files, &testing::fuzz_seed_files}) {
            for (const auto& [relative, bytes] : (*files)()) {
                QVERIFY2(read_file(path_of(relative)) == bytes,
                         qPrintable(QString::fromStdString(relative) + " differs from the generator: run make_example_data"));
            }
        }
    }
    void everyLogitsExampleLoads() {
        const auto logits = testing::example_logits();
        const auto row0 = example_row(0);
        const struct {
            const char* name;
            std::size_t rows;
            bool u2;
            std::string tensor;
        } cases[] = {
            {"logits_f32.npy", 2, false, ""},           {"logits_f64_fortran.npy", 2, false, ""},
            {"logits_f16_big_endian.npy", 1, false, ""}, {"logits_bf16.npy", 2, false, ""},
            {"logits_bf16_u2.npy", 1, true, ""},         {"logits_f32.safetensors", 1, false, ""},
            {"logits_bf16.safetensors", 1, false, ""},   {"logits_f16_sequence.safetensors", 1, false, ""},
            {"logits_f64_two_steps.safetensors", 1, false, "step1"},
            {"logits.json", 1, false, ""},               {"logits_batch.json", 2, false, ""},
            {"logits_batch.csv", 2, false, ""},          {"logits_row.txt", 1, false, ""},
            {"logits_labelled.tsv", 1, false, ""},
        };
        for (const auto& c : cases) {
            LoadOptions options;
            options.u2_as_bfloat16 = c.u2;
            options.tensor = c.tensor;
            const auto matrix = load_logits_file(path_of(std::string("examples/data/") + c.name), options);
            QCOMPARE(matrix.rows, c.rows);
            QCOMPARE(matrix.cols, testing::kExampleVocab);
            // The example values are exact in every dtype.
            const auto expected = c.tensor == "step1" ? example_row(1) : c.rows == 2 ? logits : row0;
            QVERIFY2(matrix.values == expected, c.name);
        }
        const auto json = load_logits_file(path_of("examples/data/logits.json"));
        QCOMPARE(json.labels.size(), testing::kExampleVocab);
        QCOMPARE(json.prompt_ids, (std::vector<std::int64_t>{10, 4, 5, 7}));
        const auto safetensors = load_logits_file(path_of("examples/data/logits_f32.safetensors"));
        QCOMPARE(safetensors.output_ids, (std::vector<std::int64_t>{3}));
        QVERIFY_THROWS_EXCEPTION(InputError, load_logits_file(path_of("examples/data/logits_bf16_u2.npy")));
        QVERIFY_THROWS_EXCEPTION(InputError, load_logits_file(path_of("examples/data/logits_f64_two_steps.safetensors")));
    }
    void everyVocabularyExampleLoads() {
        for (const char* name : {"tokenizer.json", "vocab.json", "vocab.gguf"}) {
            const auto vocabulary = load_vocabulary(path_of(std::string("examples/data/") + name));
            QCOMPARE(vocabulary.size(), testing::kExampleVocab);
            QCOMPARE(vocabulary.encoding, TokenEncoding::ByteLevel);
            QCOMPARE(vocabulary.label(3), std::string("\xE2\x90\xA3the"));
        }
        for (const char* name : {"vocab.txt", "tokenizer_unigram.json", "vocab_sentencepiece.gguf"}) {
            QCOMPARE(load_vocabulary(path_of(std::string("examples/data/") + name)).size(), testing::kExampleVocab);
        }
    }
    void theReadmeCommandWorks() {
        QProcess process;
        process.start(SAMPLESCOPE_CLI, {"trace", "--logits", QString::fromStdString(path_of("examples/data/logits_f32.safetensors")),
                                        "--vocab", QString::fromStdString(path_of("examples/data/tokenizer.json")),
                                        "--repetition-penalty", "1.3", "--top-k", "3", "--seed", "1"});
        QVERIFY(process.waitForFinished(60000));
        QCOMPARE(process.exitCode(), 0);
        QCOMPARE(process.readAllStandardError(), QByteArray());
        const QJsonObject trace = QJsonDocument::fromJson(process.readAllStandardOutput()).object();
        QVERIFY(trace.contains("token_text"));
        QCOMPARE(trace["kept_text"].toArray().size(), 3);
    }
};

QTEST_APPLESS_MAIN(ExampleDataTest)
#include "test_example_data.moc"
