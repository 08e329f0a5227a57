// Vocabularies from every format, readable labels for byte-level BPE and
// SentencePiece pieces, size mismatches, and labels in the CLI's JSON.
#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <set>

#include "engine/base/input_error.h"
#include "engine/io/npy_writer.h"
#include "engine/io/safetensors_writer.h"
#include "engine/io/token_display.h"
#include "engine/io/vocabulary.h"
#include "tests/support/file_builders.h"

using namespace samplescope;

namespace {

// U+2423 OPEN BOX, U+21B5 DOWNWARDS ARROW WITH CORNER LEFTWARDS, U+21E5 RIGHTWARDS ARROW TO BAR.
const std::string kSpace = "\xE2\x90\xA3";
const std::string kNewline = "\xE2\x86\xB5";
const std::string kTab = "\xE2\x87\xA5";

std::string utf8(char32_t cp) {
    std::string out;
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
    return out;
}

const std::vector<std::string> kByteLevelPieces{"\xC4\xA0the", "\xC4\x8A", "\xC4\x89x", "caf\xC3\x83\xC2\xA9", "\xC3\xA2\xC4\xA2"};

}  // namespace

class VocabularyTest : public QObject {
    Q_OBJECT
private slots:
    void byteLevelTableFollowsGpt2() {
        // Printable ASCII stands for itself; the 68 other bytes take U+0100.. in
        // order, so 0x00 is U+0100, space (0x20) U+0120 `Ġ`, 0x0A U+010A `Ċ`,
        // and the last, 0xAD (soft hyphen), U+0143.
        for (char c = '!'; c <= '~'; ++c) QCOMPARE(token_bytes(std::string(1, c), TokenEncoding::ByteLevel), std::string(1, c));
        QCOMPARE(token_bytes(utf8(0x100), TokenEncoding::ByteLevel), std::string(1, '\0'));
        QCOMPARE(token_bytes(utf8(0x120), TokenEncoding::ByteLevel), std::string(" "));
        QCOMPARE(token_bytes(utf8(0x10A), TokenEncoding::ByteLevel), std::string("\n"));
        QCOMPARE(token_bytes(utf8(0x143), TokenEncoding::ByteLevel), std::string("\xAD"));
        QCOMPARE(token_bytes(utf8(0xE9), TokenEncoding::ByteLevel), std::string("\xE9"));  // Latin-1 é stands for byte 0xE9
        // The table's 256 characters stand for 256 distinct bytes.
        std::set<std::string> bytes;
        for (char32_t cp = 0x21; cp <= 0x143; ++cp) {
            if (cp == 0x7F) cp = 0xA1;
            if (cp == 0xAD) continue;
            const std::string byte = token_bytes(utf8(cp), TokenEncoding::ByteLevel);
            QCOMPARE(byte.size(), std::size_t{1});
            bytes.insert(byte);
        }
        QCOMPARE(bytes.size(), std::size_t{256});
    }
    void labelsAreReadable() {
        QCOMPARE(display_token("\xC4\xA0the", TokenEncoding::ByteLevel), kSpace + "the");
        QCOMPARE(display_token("\xC4\x8A\xC4\x8A", TokenEncoding::ByteLevel), kNewline + kNewline);
        QCOMPARE(display_token("\xC4\x89", TokenEncoding::ByteLevel), kTab);
        // "café" as byte-level pieces: é is bytes C3 A9, written as `Ã©`.
        QCOMPARE(display_token("caf\xC3\x83\xC2\xA9", TokenEncoding::ByteLevel), std::string("caf\xC3\xA9"));
        // Half of a three-byte character (E2 80) cannot be shown as text.
        QCOMPARE(display_token("\xC3\xA2\xC4\xA2", TokenEncoding::ByteLevel), std::string("<0xE2><0x80>"));
        QCOMPARE(display_token("\xE2\x96\x81the", TokenEncoding::SentencePiece), kSpace + "the");
        QCOMPARE(display_token("<0x0A>", TokenEncoding::SentencePiece), kNewline);
        QCOMPARE(display_token("<0x41>", TokenEncoding::SentencePiece), std::string("A"));
        QCOMPARE(display_token("<0xE2>", TokenEncoding::SentencePiece), std::string("<0xE2>"));
        QCOMPARE(display_token("<0xZZ>", TokenEncoding::SentencePiece), std::string("<0xZZ>"));
        QCOMPARE(display_token("##ing", TokenEncoding::Plain), std::string("##ing"));
        // Controls and invisible characters become their code point (fonts lack the control pictures).
        QCOMPARE(visible_text(std::string("a\x01\x1B\x7F", 4)), std::string("a<U+0001><U+001B><U+007F>"));
        QCOMPARE(visible_text(std::string("\0", 1)), std::string("<U+0000>"));
        QCOMPARE(visible_text("\r"), std::string("<U+000D>"));
        QCOMPARE(visible_text("x\xE2\x80\x8By"), std::string("x<U+200B>y"));
        QCOMPARE(visible_text("\xEF\xBB\xBF"), std::string("<U+FEFF>"));
        QCOMPARE(visible_text("\xC2\xA0"), std::string("<U+00A0>"));
        // Overlong and surrogate encodings are bytes, not characters.
        QCOMPARE(visible_text("\xC0\xAF"), std::string("<0xC0><0xAF>"));
        QCOMPARE(visible_text("\xED\xA0\x80"), std::string("<0xED><0xA0><0x80>"));
        QCOMPARE(visible_text("\xF0\x9F\x98\x80"), std::string("\xF0\x9F\x98\x80"));  // an emoji stays
    }
    void unlabelledTokensAreTokId() {
        const std::vector<std::string> labels{"a", "", "c"};
        QCOMPARE(token_display_label(labels, 0), std::string("a"));
        QCOMPARE(token_display_label(labels, 1), std::string("tok_1"));  // an empty label is no label
        QCOMPARE(token_display_label(labels, 3), std::string("tok_3"));
        QCOMPARE(token_display_label(labels, -1), std::string("tok_-1"));
        QCOMPARE(token_display_label({}, 12825), std::string("tok_12825"));
    }
    void tokenizerJsonByteLevel() {
        const auto vocabulary = load_vocabulary_bytes(testing::tokenizer_json(kByteLevelPieces, {"<|endoftext|>", "<|im start|>"}, true),
                                                      "tokenizer.json");
        QCOMPARE(vocabulary.format, VocabularyFormat::TokenizerJson);
        QCOMPARE(vocabulary.encoding, TokenEncoding::ByteLevel);
        QCOMPARE(vocabulary.size(), std::size_t{7});
        QCOMPARE(vocabulary.label(0), kSpace + "the");
        QCOMPARE(vocabulary.label(1), kNewline);
        QCOMPARE(vocabulary.label(5), std::string("<|endoftext|>"));
        // An added token is shown as written: its space is not a byte-level `Ġ`.
        QCOMPARE(vocabulary.label(6), std::string("<|im") + kSpace + "start|>");
        QVERIFY(vocabulary.special[5] && !vocabulary.special[0]);
        QCOMPARE(vocabulary.label(99), std::string());
    }
    void tokenizerJsonWordPieceAndUnigram() {
        const auto wordpiece = load_vocabulary_bytes(testing::tokenizer_json({"[PAD]", "the", "##s"}, {}, false), "t.json");
        QCOMPARE(wordpiece.encoding, TokenEncoding::Plain);
        QCOMPARE(wordpiece.label(2), std::string("##s"));
        const auto unigram = load_vocabulary_bytes(testing::unigram_tokenizer_json({"<unk>", "\xE2\x96\x81" "a", "<0x0A>"}), "t.json");
        QCOMPARE(unigram.encoding, TokenEncoding::SentencePiece);
        QCOMPARE(unigram.label(1), kSpace + "a");
        QCOMPARE(unigram.label(2), kNewline);
    }
    void vocabJsonAndTxt() {
        const auto json = load_vocabulary_bytes(testing::vocab_json(kByteLevelPieces), "vocab.json");
        QCOMPARE(json.format, VocabularyFormat::VocabJson);
        QCOMPARE(json.encoding, TokenEncoding::ByteLevel);  // guessed from the `Ġ` pieces
        QCOMPARE(json.label(0), kSpace + "the");
        // Holes are allowed: id 1 is named by nobody.
        const auto holes = load_vocabulary_bytes(R"({"a": 0, "c": 2})", "vocab.json");
        QCOMPARE(holes.size(), std::size_t{3});
        QVERIFY(!holes.defined[1]);
        QCOMPARE(holes.label(2), std::string("c"));
        // vocab.txt: line i is id i, blank lines and CRLF included.
        const auto txt = load_vocabulary_bytes("[PAD]\r\nthe\r\n\r\n##s\n", "vocab.txt");
        QCOMPARE(txt.size(), std::size_t{4});
        QCOMPARE(txt.label(1), std::string("the"));
        QCOMPARE(txt.label(2), std::string());
        QCOMPARE(txt.label(3), std::string("##s"));
    }
    void ggufMetadataOnly() {
        testing::GgufVocabSpec spec;
        spec.tokens = {"<|endoftext|>", "\xC4\xA0hi", "\xC4\x8A"};
        spec.token_types = {3, 1, 1};
        const auto gpt2 = load_vocabulary_bytes(testing::encode_gguf_vocab(spec), "model.gguf");
        QCOMPARE(gpt2.format, VocabularyFormat::Gguf);
        QCOMPARE(gpt2.encoding, TokenEncoding::ByteLevel);
        QCOMPARE(gpt2.size(), std::size_t{3});
        QCOMPARE(gpt2.label(0), std::string("<|endoftext|>"));
        QCOMPARE(gpt2.label(1), kSpace + "hi");
        QCOMPARE(gpt2.label(2), kNewline);
        spec.model = "llama";
        spec.tokens = {"<s>", "\xE2\x96\x81hi", "<0x0A>"};
        spec.extra_metadata = false;
        spec.version = 2;
        const auto llama = load_vocabulary_bytes(testing::encode_gguf_vocab(spec), "model.gguf");
        QCOMPARE(llama.encoding, TokenEncoding::SentencePiece);
        QCOMPARE(llama.label(1), kSpace + "hi");
        QCOMPARE(llama.label(2), kNewline);
        // Cut just after the metadata: the tensor infos and weights are never needed.
        std::string bytes = testing::encode_gguf_vocab(spec);
        bytes.resize(bytes.find("token_embd.weight") - 8);
        QCOMPARE(load_vocabulary_bytes(bytes, "model.gguf").size(), std::size_t{3});
        // And the magic alone picks the format when the name does not say.
        QCOMPARE(load_vocabulary_bytes(bytes, "model.bin").format, VocabularyFormat::Gguf);
    }
    void sizesThatDifferFromV() {
        auto vocabulary = load_vocabulary_bytes("a\nb\nc\n", "vocab.txt");
        const auto fewer = token_labels(vocabulary, 5);
        QCOMPARE(fewer.labels, (std::vector<std::string>{"a", "b", "c", "", ""}));
        QCOMPARE(fewer.warnings.size(), std::size_t{1});
        QVERIFY(fewer.warnings[0].find("has 3 tokens but the logits have V = 5; ids 3..4 have no label") != std::string::npos);
        const auto more = token_labels(vocabulary, 2);
        QCOMPARE(more.labels, (std::vector<std::string>{"a", "b"}));
        QVERIFY(more.warnings.at(0).find("tokens 2..2 are not shown") != std::string::npos);
        QVERIFY(token_labels(vocabulary, 3).warnings.empty());
    }
    void binaryFilesAreRefusedByContent() {
        // Each file is read by its name's format (or by its first bytes without
        // one) and refused by what its bytes are, naming the file.
        const auto refusal = [](const std::string& bytes, const std::string& name) -> std::string {
            try {
                (void)load_vocabulary_bytes(bytes, name);
            } catch (const InputError& error) {
                return error.what();
            }
            return "accepted";
        };
        const std::vector<double> row{1.0, 2.0, 3.0};
        const std::string npy = encode_npy({3}, row);
        QCOMPARE(refusal(npy, "x.npy"), std::string("x.npy: is a NumPy array (starts with \\x93NUMPY), not a vocabulary"));
        // The same bytes named as a text or JSON vocabulary, or as GGUF.
        QVERIFY(refusal(npy, "vocab.txt").starts_with("vocab.txt: is a NumPy array"));
        QVERIFY(refusal(npy, "tokenizer.json").starts_with("tokenizer.json: is a NumPy array"));
        QVERIFY(refusal(npy, "model.gguf").starts_with("model.gguf: is a NumPy array"));
        const std::string safetensors = encode_safetensors({{"logits", {3}, row, FloatType::F32, {}}});
        QCOMPARE(refusal(safetensors, "x.safetensors"),
                 std::string("x.safetensors: is a .safetensors file (an 8-byte header size, then a JSON header), not a vocabulary"));
        QVERIFY(refusal(std::string("PK\x03\x04rest", 8), "x.npz").find("is a ZIP archive") != std::string::npos);
        QVERIFY(refusal("\x1F\x8B\x08rest", "vocab.txt.gz").find("is gzip-compressed") != std::string::npos);
        // A GGUF file named as text is not read as lines; a .gguf without the magic says what it found.
        testing::GgufVocabSpec spec;
        spec.tokens = {"a", "b"};
        const std::string gguf = testing::encode_gguf_vocab(spec);
        QCOMPARE(refusal(gguf, "vocab.txt"),
                 std::string("vocab.txt: is a GGUF file (starts with \"GGUF\"), not a vocab.txt: give it the .gguf extension to read its vocabulary"));
        QCOMPARE(refusal("a\nb\n", "model.gguf"), std::string("model.gguf: not a GGUF file (bad magic: expected \"GGUF\", found \"a\\x0Ab\\x0A\")"));
        // A vocab.txt is text: a NUL byte or broken UTF-8 names its line.
        QCOMPARE(refusal(std::string("a\nb\0c\n", 6), "vocab.txt"),
                 std::string("vocab.txt: line 2 holds a NUL byte (at byte 3): a binary file, not a vocab.txt"));
        QCOMPARE(refusal("a\nb\nc\xE2\x80\n", "vocab.txt"),
                 std::string("vocab.txt: line 3 is not valid UTF-8 (byte 0xE2 at byte 5): a binary file or another encoding, not a vocab.txt"));
        QVERIFY(refusal("\xC0\xAF\n", "vocab.txt").find("line 1 is not valid UTF-8 (byte 0xC0") != std::string::npos);  // overlong
        QVERIFY(refusal("\xED\xA0\x80\n", "vocab.txt").find("not valid UTF-8") != std::string::npos);                // a surrogate
        // A binary file without a name to go by is refused the same way.
        QVERIFY(refusal(npy, "labels").starts_with("labels: is a NumPy array"));
        QVERIFY(refusal(std::string("\x01\x00\xFF", 3), "labels").find("holds a NUL byte") != std::string::npos);
        // Text that only looks alike is read: UTF-8 pieces of every length, and a first piece "GGUF".
        const auto text = load_vocabulary_bytes("GGUF\ncaf\xC3\xA9\n\xE2\x96\x81" "a\n\xF0\x9F\x98\x80\n\xC4\xA0the\n", "vocab.txt");
        QCOMPARE(text.size(), std::size_t{5});
        QCOMPARE(text.label(0), std::string("GGUF"));
        QCOMPARE(load_vocabulary_bytes("GGUF\nb\n", "labels").size(), std::size_t{2});
    }
    void labelsInTheCliJson() {
        QTemporaryDir dir;
        const QString tokenizer = dir.filePath("tokenizer.json");
        write_file_bytes(tokenizer.toStdString(), testing::tokenizer_json(kByteLevelPieces, {"<|endoftext|>"}, true));
        // V = 7 against 6 tokens: accepted, with one warning line.
        QProcess process;
        process.start(SAMPLESCOPE_CLI, {"trace", "--values", "9,1,1,1,1,8.5,-inf", "--top-k", "2", "--seed", "0", "--vocab", tokenizer});
        QVERIFY(process.waitForFinished(60000));
        QCOMPARE(process.exitCode(), 0);
        const QString warnings = QString::fromUtf8(process.readAllStandardError());
        QCOMPARE(warnings.count('\n'), 1);
        QVERIFY(warnings.contains("warning") && warnings.contains("V = 7"));
        const QJsonObject trace = QJsonDocument::fromJson(process.readAllStandardOutput()).object();
        QCOMPARE(trace["kept"].toArray(), (QJsonArray{0, 5}));
        QCOMPARE(trace["kept_text"].toArray(), (QJsonArray{QString::fromStdString(kSpace + "the"), "<|endoftext|>"}));
        const int token = trace["token"].toInt();
        QCOMPARE(trace["token_text"].toString(), token == 0 ? QString::fromStdString(kSpace + "the") : QString("<|endoftext|>"));
        // Without --vocab the JSON has no text keys.
        process.start(SAMPLESCOPE_CLI, {"trace", "--values", "1,2", "--seed", "0"});
        QVERIFY(process.waitForFinished(60000));
        QVERIFY(!QJsonDocument::fromJson(process.readAllStandardOutput()).object().contains("token_text"));
    }
};

QTEST_APPLESS_MAIN(VocabularyTest)
#include "test_vocabulary.moc"
