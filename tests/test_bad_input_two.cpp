// Bad input, round two: hangs, wrap-arounds, aborts and silent guesses, through
// the engine's API and through every subcommand of samplescope-cli. Each is
// refused with exit 2 and one escaped line that names the field and quotes
// what was typed, within a second; valid neighbours still run.
#include <QtTest>

#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdint>
#include <limits>
#include <string>

#include "engine/base/input_error.h"
#include "engine/base/memory_budget.h"
#include "engine/base/number_text.h"
#include "engine/io/logits_loader.h"
#include "engine/io/vocabulary.h"
#include "engine/json/params_json.h"

using namespace samplescope;

namespace {

struct CliResult {
    int exit_code;
    QByteArray out;
    QList<QByteArray> err_lines;
    qint64 millis;
};

CliResult run_cli(const QStringList& args, int timeout_ms = 20000) {
    QProcess process;
    QElapsedTimer timer;
    timer.start();
    process.start(QStringLiteral(SAMPLESCOPE_CLI), args);
    if (!process.waitForFinished(timeout_ms)) {
        process.kill();
        process.waitForFinished();
        return {-2, {}, {"timed out"}, timer.elapsed()};
    }
    QList<QByteArray> lines = process.readAllStandardError().split('\n');
    lines.removeAll(QByteArray());
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1, process.readAllStandardOutput(),
            lines, timer.elapsed()};
}

// Exit 2, nothing on stdout, exactly one line on stderr holding every fragment
// and no raw control byte.
void expect_cli_refused(const QStringList& args, const QList<QByteArray>& fragments, qint64 within_ms = 20000) {
    const CliResult result = run_cli(args);
    const QString what = args.join(' ');
    QVERIFY2(result.exit_code == 2, qPrintable(what + " -> exit " + QString::number(result.exit_code)));
    QVERIFY2(result.millis <= within_ms, qPrintable(what + " took " + QString::number(result.millis) + " ms"));
    QVERIFY2(result.out.isEmpty(), qPrintable(what + " printed " + QString::fromUtf8(result.out.left(200))));
    QVERIFY2(result.err_lines.size() == 1, qPrintable(what + ": " + QString::fromUtf8(result.err_lines.join(" | "))));
    const QByteArray& line = result.err_lines.front();
    for (const char c : line) QVERIFY2(static_cast<unsigned char>(c) >= 0x20 && c != 0x7F, qPrintable(what + ": raw control byte"));
    for (const auto& fragment : fragments) {
        QVERIFY2(line.contains(fragment), qPrintable(what + ": " + QString::fromUtf8(line) + " lacks " + QString::fromUtf8(fragment)));
    }
}

// Exit 0 and stdout one valid JSON document.
QJsonDocument expect_cli_json(const QStringList& args) {
    const CliResult result = run_cli(args, 60000);
    const QString what = args.join(' ');
    if (result.exit_code != 0) {
        qWarning("%s -> exit %d: %s", qPrintable(what), result.exit_code, result.err_lines.join(" | ").constData());
        return {};
    }
    QJsonParseError error{};
    const QJsonDocument doc = QJsonDocument::fromJson(result.out, &error);
    if (error.error != QJsonParseError::NoError) qWarning("%s: invalid JSON: %s", qPrintable(what), qPrintable(error.errorString()));
    return doc;
}

template <typename Fn>
QString refusal(Fn&& fn) {
    try {
        fn();
    } catch (const InputError& error) {
        return QString::fromStdString(error.what());
    }
    return QString();
}

QString write_file(const QTemporaryDir& dir, const QString& name, const QByteArray& bytes) {
    const QString path = dir.filePath(name);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size()) return QString();
    return path;
}

constexpr const char* kMaxU64 = "18446744073709551615";

}  // namespace

class BadInputTwoTest : public QObject {
    Q_OBJECT
private slots:
    // One parser for every number: decimal only.
    void numberParserAcceptsDecimalsOnly() {
        QCOMPARE(parse_real("1").value_or(-1), 1.0);
        QCOMPARE(parse_real("-2.5").value_or(0), -2.5);
        QCOMPARE(parse_real("+0.5").value_or(0), 0.5);
        QCOMPARE(parse_real(".5").value_or(0), 0.5);
        QCOMPARE(parse_real("5.").value_or(0), 5.0);
        QCOMPARE(parse_real("1e3").value_or(0), 1000.0);
        QCOMPARE(parse_real("-1E-3").value_or(0), -0.001);
        QVERIFY(std::isinf(*parse_real("-inf")) && *parse_real("-inf") < 0);
        QVERIFY(std::isinf(*parse_real("Infinity")));
        QVERIFY(std::isnan(*parse_real("nan")));
        for (const char* bad : {"", " ", "0x2", "0X1p3", "+-1", "-+1", "--1", "++1", "1e", "e5", ".", "-", "+", " 1",
                                "1 ", "1,5", "1e+", "0b1", "1..2", "inff", "nan(1)", "\xef\xbc\x91"}) {
            QVERIFY2(!parse_real(bad).has_value(), bad);
        }
        // Beyond a double: rounded as IEEE 754 says, and a flag can tell.
        QVERIFY(std::isinf(*parse_real("1e999")));
        QVERIFY(real_overflows("-1e999"));
        QVERIFY(!real_overflows("1e308"));
        QCOMPARE(*parse_real("1e-400"), 0.0);
        QVERIFY(!real_overflows("1e-400"));
    }

    void integersAreSignedFirstThenRanged() {
        QCOMPARE(parse_int_in_range("-9223372036854775808", "f", "--f", std::numeric_limits<std::int64_t>::min(), 0),
                 std::numeric_limits<std::int64_t>::min());
        QCOMPARE(parse_uint_in_range(kMaxU64, "f", "--f", 0, std::numeric_limits<std::uint64_t>::max()),
                 std::numeric_limits<std::uint64_t>::max());
        QCOMPARE(parse_int_in_range("+7", "f", "--f", 0, 10), std::int64_t{7});
        QCOMPARE(parse_int_in_range("-0", "f", "--f", 0, 10), std::int64_t{0});
        const auto refused = [](const char* text) {
            return refusal([&] { parse_uint_in_range(text, "skip_draws", "--skip-draws", 0, 100); });
        };
        QCOMPARE(refused("-1"), QStringLiteral("--skip-draws must be an integer in [0, 100], got \"-1\""));
        for (const char* bad : {"", "0x2", "+-1", "1.0", "1e2", " 1", "101", "18446744073709551616", "-18446744073709551616"}) {
            QVERIFY2(refused(bad).contains(QStringLiteral("\"") + bad + "\""), bad);
        }
        QVERIFY(refusal([] { parse_int_in_range("9223372036854775808", "row", "--row", 0, 5); })
                    .contains("\"9223372036854775808\""));
    }

    void drawCounterNeverWraps() {
        const auto max = std::numeric_limits<std::uint64_t>::max();
        check_draw_counter(max - 1, 1, "skip_draws");
        check_draw_counter(0, max, "skip_draws");
        QVERIFY(refusal([&] { check_draw_counter(max, 1, "skip_draws"); }).contains(kMaxU64));
        QVERIFY(!refusal([&] { check_draw_counter(max - 5, 10, "skip_draws"); }).isEmpty());
    }

    // Control bytes and broken UTF-8 never reach a terminal raw.
    void messagesAreEscaped() {
        QCOMPARE(escape_text("\x1b[2J"), std::string("\\x1B[2J"));
        QCOMPARE(escape_text(std::string("a\0b", 3)), std::string("a\\x00b"));
        QCOMPARE(escape_text("line\nnext\r\t\x7f"), std::string("line\\x0Anext\\x0D\\x09\\x7F"));
        QCOMPARE(escape_text("\xff\xfe"), std::string("\\xFF\\xFE"));
        QCOMPARE(escape_text("\xc2\x9b" "1m"), std::string("\\xC2\\x9B1m"));         // C1 CSI
        QCOMPARE(escape_text("\xc0\xaf"), std::string("\\xC0\\xAF"));                // overlong '/'
        QCOMPARE(escape_text("\xed\xa0\x80"), std::string("\\xED\\xA0\\x80"));       // a surrogate
        QCOMPARE(escape_text("\xe2\x82"), std::string("\\xE2\\x82"));                // cut short
        QCOMPARE(escape_text("caf\xc3\xa9 \xe2\x96\x81 \xf0\x9f\x99\x82"), std::string("caf\xc3\xa9 \xe2\x96\x81 \xf0\x9f\x99\x82"));
        const std::string once = escape_text("\x1b\xff\\x41");
        QCOMPARE(escape_text(once), once);
        const InputError error("values", std::string("bad \"\x1b]0;title\x07\0tail\"", 21));
        QCOMPARE(std::string(error.what()), std::string("bad \"\\x1B]0;title\\x07\\x00tail\""));
    }

    void memoryBudgetParsesSizes() {
        QCOMPARE(parse_memory_budget("4G"), std::uint64_t{4} << 30);
        QCOMPARE(parse_memory_budget("512m"), std::uint64_t{512} << 20);
        QCOMPARE(parse_memory_budget("1048576"), std::uint64_t{1} << 20);
        QCOMPARE(parse_memory_budget(""), default_memory_budget());
        QVERIFY(default_memory_budget() > 0);
        if (physical_memory_bytes() > 0) QVERIFY(default_memory_budget() <= physical_memory_bytes() / 2);
        for (const char* bad : {"0", "-1G", "1K", "0x10", "4X", "G", "1.5G", "99999999999T"}) {
            QVERIFY2(refusal([&] { parse_memory_budget(bad); }).contains("--max-memory"), bad);
        }
        QCOMPARE(saturating_mul(std::uint64_t{1} << 40, std::uint64_t{1} << 40), std::numeric_limits<std::uint64_t>::max());
        QCOMPARE(saturating_add(std::numeric_limits<std::uint64_t>::max(), 1), std::numeric_limits<std::uint64_t>::max());
        const QString message = refusal([] { check_memory(3ULL << 30, 1ULL << 30, "--generate 1,2"); });
        QVERIFY2(message.contains("--generate 1,2") && message.contains("3072 MiB") && message.contains("1024 MiB") &&
                     message.contains("--max-memory"),
                 qPrintable(message));
        check_memory(1ULL << 30, 1ULL << 30, "fits");
    }

    // Flags: negative counts are refused as typed, never wrapped.
    void countFlagsRefuseWhatWouldWrap() {
        expect_cli_refused({"trace", "--values", "1,2", "--skip-draws", "-1"}, {"--skip-draws", "\"-1\""});
        expect_cli_refused({"trace", "--values", "1,2", "--row", "-1"}, {"--row", "\"-1\""});
        expect_cli_refused({"trace", "--values", "1,2", "--row", "9223372036854775808"}, {"--row", "\"9223372036854775808\""});
        expect_cli_refused({"trace", "--values", "1,2", "--steps", "0x10"}, {"--steps", "\"0x10\""});
        expect_cli_refused({"trace", "--values", "1,2", "--steps", "-3"}, {"--steps", "\"-3\""});
        expect_cli_refused({"trace", "--values", "1,2", "--penalty-last-n", "-2"}, {"--penalty-last-n", "\"-2\""});
        expect_cli_refused({"histogram", "--values", "1,2", "--draws", "-999999"}, {"--draws", "\"-999999\""});
        expect_cli_refused({"batch", "--generate", "2,8", "--generate-seed", "-1"}, {"--generate-seed", "\"-1\""});
        expect_cli_refused({"batch", "--generate", "-2,8"}, {"--generate", "\"-2\""});
        expect_cli_refused({"batch", "--generate", "2,0x8"}, {"--generate", "\"0x8\""});
        expect_cli_refused({"compare", "--generate", "2,8", "--draws", "-1"}, {"--draws", "\"-1\""});
        expect_cli_refused({"compare", "--generate", "2,8", "--draws", "2147483648"}, {"--draws", "\"2147483648\""});
    }

    void hexEmptyAndDoubleSignsAreRefused() {
        expect_cli_refused({"trace", "--values", "1,2", "--top-k", "0x2"}, {"top_k", "\"0x2\""});
        expect_cli_refused({"trace", "--values", "1,2", "--temperature", ""}, {"--temperature", "empty"});
        expect_cli_refused({"trace", "--values", "1,2", "--temperature", "+-1"}, {"temperature", "\"+-1\""});
        expect_cli_refused({"trace", "--values", "1,2", "--temperature", "1e999"}, {"temperature", "\"1e999\""});
        expect_cli_refused({"trace", "--values", "+-1,2"}, {"values", "\"+-1\""});
        expect_cli_refused({"trace", "--values", "1,,2"}, {"values", "empty field"});
        expect_cli_refused({"trace", "--values", "1,2", "--seed", ""}, {"--seed", "empty"});
    }

    // Skipping 2^64-1 draws is a jump, and the counter after it is refused, not wrapped.
    void hugeSkipsFinishAndNeverWrap() {
        for (const char* command : {"trace", "diff", "histogram"}) {
            expect_cli_refused({command, "--values", "1,2,3", "--seed", "1", "--skip-draws", kMaxU64},
                               {"skip_draws", kMaxU64}, 5000);
        }
        expect_cli_refused({"trace", "--values", "1,2,3", "--skip-draws", "18446744073709551614", "--steps", "2"},
                           {"skip_draws", "18446744073709551614"}, 5000);
        const CliResult last = run_cli({"trace", "--values", "1,2,3", "--seed", "1", "--skip-draws", "18446744073709551614"});
        QCOMPARE(last.exit_code, 0);
        QVERIFY(last.out.contains("\"draws_consumed\": 18446744073709551615"));
        QVERIFY2(last.millis < 5000, qPrintable(QString::number(last.millis)));

        QTemporaryDir dir;
        const QString params = write_file(dir, "p.json", QByteArray("[{\"seed\": \"1\", \"skip_draws\": ") + kMaxU64 + "}]");
        expect_cli_refused({"batch", "--generate", "1,8", "--params", params}, {"p.json", "skip_draws", kMaxU64}, 5000);
        const QString fits = write_file(dir, "q.json", "[{\"seed\": \"1\", \"skip_draws\": 18446744073709551614}]");
        expect_cli_refused({"compare", "--generate", "1,8", "--mode", "fast", "--draws", "2", "--params", fits},
                           {"q.json", "row 0", "skip_draws"}, 5000);
        const QJsonDocument batch = expect_cli_json({"batch", "--generate", "1,8", "--params", fits});
        QCOMPARE(batch["rows"][0]["draws_consumed"].toDouble(), 18446744073709551615.0);
    }

    void paramsFileReaderRefusesWhatItCannotHold() {
        const auto refused = [](const std::string& text) {
            return refusal([&] { row_requests_from_json(nlohmann::json::parse(text), 1, "p.json"); });
        };
        QVERIFY(refused(std::string("[{\"prompt_ids\": [") + kMaxU64 + "]}]").contains(kMaxU64));
        QVERIFY(!refused(std::string("[{\"prompt_ids\": [") + kMaxU64 + "]}]").contains("-1"));
        // A negative id is refused by the reader itself, quoted as typed.
        QVERIFY(refused("[{\"prompt_ids\": [1, -2]}]").contains("got -2"));
        QVERIFY(refused("[{\"output_ids\": [-9223372036854775808]}]").contains("-9223372036854775808"));
        QVERIFY(refused(std::string("[{\"skip_draws\": ") + kMaxU64 + "}]").contains("skip_draws"));
        QVERIFY(refused("[{\"skip_draws\": -1}]").contains("skip_draws"));

        QTemporaryDir dir;
        const QString overflow = write_file(dir, "big.json", "[{\"temperature\": 1e999}]");
        expect_cli_refused({"batch", "--generate", "1,8", "--params", overflow}, {"big.json", "1e999", "outside the range"});
        const QString broken = write_file(dir, "broken.json", "[{\"temperature\": 1,}]");
        expect_cli_refused({"batch", "--generate", "1,8", "--params", broken}, {"broken.json", "not valid JSON"});
    }

    // Every file argument: a regular file, within its size limit, readable.
    void fileArgumentsMustBeRegularFiles() {
        QTemporaryDir dir;
        const QString fifo = dir.filePath("fifo.json");
        QCOMPARE(::mkfifo(fifo.toLocal8Bit().constData(), 0600), 0);
        expect_cli_refused({"batch", "--generate", "1,8", "--params", fifo}, {"fifo.json", "not a regular file"}, 5000);
        expect_cli_refused({"trace", "--logits", fifo}, {"fifo.json", "not a regular file"}, 5000);
        expect_cli_refused({"trace", "--values", "1,2", "--vocab", fifo}, {"fifo.json", "not a regular file"}, 5000);
        expect_cli_refused({"batch", "--generate", "1,8", "--params", "/dev/zero"}, {"/dev/zero", "not a regular file"}, 5000);
        expect_cli_refused({"trace", "--logits", "/dev/zero"}, {"/dev/zero", "not a regular file"}, 5000);
        expect_cli_refused({"batch", "--generate", "1,8", "--params", dir.path()}, {"directory"}, 5000);
        expect_cli_refused({"batch", "--generate", "1,8", "--params", dir.filePath("none.json")}, {"does not exist"});

        const QString loop = dir.filePath("loop.json");
        QVERIFY(QFile::link(loop, loop));
        const CliResult looped = run_cli({"batch", "--generate", "1,8", "--params", loop});
        QCOMPARE(looped.exit_code, 2);
        QCOMPARE(looped.err_lines.size(), 1);
        QVERIFY2(!looped.err_lines.front().contains("does not exist"), looped.err_lines.front().constData());

        if (::geteuid() != 0) {
            const QString locked = write_file(dir, "locked.json", "[{}]");
            QVERIFY(QFile::setPermissions(locked, QFileDevice::WriteOwner));
            expect_cli_refused({"batch", "--generate", "1,8", "--params", locked}, {"locked.json", "cannot open"});
        }
    }

    // Empty CSV fields shift every id after them: refused, not dropped.
    void emptyCsvFieldsAreRefused() {
        const auto text_refusal = [](const char* text) {
            return refusal([&] { load_logits_bytes(text, "x.csv"); });
        };
        QVERIFY(text_refusal("1,,3\n").contains("empty field at column 2"));
        QVERIFY(text_refusal(",1,3\n").contains("empty field at column 1"));
        QVERIFY(text_refusal("1,3,\n").contains("empty field"));
        QVERIFY(text_refusal("1;;3\n").contains("empty field"));
        QVERIFY(text_refusal("1\t\t3\n").contains("empty field"));
        QVERIFY(text_refusal("1, ,3\n").contains("empty field"));
        QVERIFY(text_refusal("1,2,3\n4,,5,6\n").contains("line 2"));
        QVERIFY(text_refusal("+-1,2\n").contains("+-1"));
        QVERIFY(text_refusal("0x1,2\n").contains("0x1"));
        // Spaces around separators, and runs of spaces, still read as before.
        QCOMPARE(load_logits_bytes("1, 2 ,3\n", "x.csv").cols, std::size_t{3});
        QCOMPARE(load_logits_bytes("1   2 3\n", "x.txt").cols, std::size_t{3});
        QCOMPARE(load_logits_bytes("1,2\n3,4\n", "x.csv").rows, std::size_t{2});

        QTemporaryDir dir;
        expect_cli_refused({"trace", "--logits", write_file(dir, "gap.csv", "1,,3\n")}, {"gap.csv", "empty field"});
    }

    void jsonNumberOutOfRangeIsNamed() {
        const QString message = refusal([] { load_logits_bytes("[1, 1e999]", "x.json"); });
        QVERIFY2(message.contains("1e999") && message.contains("outside the range") && !message.contains("malformed"),
                 qPrintable(message));
    }

    void overlappingSafetensorsAreRefused() {
        const auto file = [](const std::string& header, std::size_t data) {
            std::string bytes(8, '\0');
            for (int i = 0; i < 8; ++i) bytes[static_cast<std::size_t>(i)] = static_cast<char>((header.size() >> (8 * i)) & 0xFF);
            return bytes + header + std::string(data, '\0');
        };
        const std::string overlapping = file(
            R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", 12);
        LoadOptions options;
        options.tensor = "a";
        const QString message = refusal([&] { load_logits_bytes(overlapping, "x.safetensors", options); });
        QVERIFY2(message.contains("overlap") && message.contains("\"a\"") && message.contains("\"b\""), qPrintable(message));
        const std::string apart = file(
            R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})", 16);
        QCOMPARE(load_logits_bytes(apart, "x.safetensors", options).cols, std::size_t{2});
    }

    void ggufTokenArrayGivenTwiceIsRefused() {
        const auto u32 = [](std::uint32_t v) {
            std::string s(4, '\0');
            for (int i = 0; i < 4; ++i) s[static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xFF);
            return s;
        };
        const auto u64 = [](std::uint64_t v) {
            std::string s(8, '\0');
            for (int i = 0; i < 8; ++i) s[static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xFF);
            return s;
        };
        const auto str = [&](const std::string& s) { return u64(s.size()) + s; };
        const auto tokens = [&](std::initializer_list<const char*> pieces) {
            std::string kv = str("tokenizer.ggml.tokens") + u32(9) + u32(8) + u64(pieces.size());
            for (const char* piece : pieces) kv += str(piece);
            return kv;
        };
        const std::string once = "GGUF" + u32(3) + u64(0) + u64(1) + tokens({"a", "b"});
        QCOMPARE(load_vocabulary_bytes(once, "v.gguf").pieces.size(), std::size_t{2});
        const std::string twice = "GGUF" + u32(3) + u64(0) + u64(2) + tokens({"a", "b"}) + tokens({"c"});
        const QString message = refusal([&] { load_vocabulary_bytes(twice, "v.gguf"); });
        QVERIFY2(message.contains("tokenizer.ggml.tokens") && message.contains("twice"), qPrintable(message));
    }

    // Non-UTF-8 labels and file names: valid JSON out from every command.
    void nonUtf8LabelsAndNamesGiveValidJson() {
        QTemporaryDir dir;
        const QString labelled = write_file(dir, "labels.tsv", "a\xff\t1\n\xc3(\t2\nok\t0.5\n");
        QVERIFY(expect_cli_json({"trace", "--logits", labelled, "--seed", "1"}).isObject());
        QVERIFY(expect_cli_json({"histogram", "--logits", labelled, "--seed", "1", "--draws", "100"}).isObject());
        QVERIFY(expect_cli_json({"diff", "--logits", labelled, "--seed", "1", "--pipeline-b", "llamacpp"}).isObject());
        const QByteArray odd_name = QFile::encodeName(dir.path()) + "/rows\xff.csv";
        {
            QFile file(QFile::decodeName(odd_name));
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write("1,2,3\n3,2,1\n");
        }
        const QString name = QFile::decodeName(odd_name);
        QVERIFY(expect_cli_json({"batch", "--logits", name}).isObject());
        QVERIFY(expect_cli_json({"compare", "--logits", name}).isObject());
    }

    void controlBytesInInputAreEscapedInMessages() {
        expect_cli_refused({"trace", "--values", "1,\x1b[2J"}, {"\\x1B[2J"});
        QTemporaryDir dir;
        expect_cli_refused({"trace", "--logits", write_file(dir, "nul.csv", QByteArray("1,2\x00" "3,4\n", 9))}, {"\\x00"});
        expect_cli_refused({"trace", "--logits", write_file(dir, "esc.txt", "1 \x1b[2J\x07\n")}, {"\\x1B[2J\\x07"});
    }

    // A repetition penalty far below 1 overflows by dividing: "smaller" was the wrong advice.
    void penaltyAdviceFitsBothDirections() {
        expect_cli_refused({"trace", "--values", "1000,2", "--prompt-ids", "0", "--repetition-penalty", "1e-320"},
                           {"repetition_penalty", "closer to its off value"});
        expect_cli_refused({"batch", "--generate", "1,8", "--params",
                            [] {
                                static QTemporaryDir dir;
                                return write_file(dir, "pen.json", "[{\"repetition_penalty\": 1e-320, \"prompt_ids\": [0, 1, 2, 3, 4, 5, 6, 7]}]");
                            }()},
                           {"closer to its off value"});
    }

    // A thread that cannot start is exit 2, never an abort; absurd counts are refused first.
    void threadCountsAreBounded() {
        expect_cli_refused({"batch", "--generate", "4,8", "--threads", "100000"}, {"--threads", "\"100000\""});
        expect_cli_refused({"batch", "--generate", "4,8", "--threads", "-1"}, {"--threads", "\"-1\""});
        QVERIFY(expect_cli_json({"batch", "--generate", "4,8", "--threads", "1024"}).isObject());
    }

    // The budget covers the whole run, not only the input matrix.
    void memoryBudgetRefusesLargeRuns() {
        expect_cli_refused({"batch", "--generate", "31000,128256", "--max-memory", "1G"},
                           {"--generate 31000,128256", "MiB", "--max-memory"}, 5000);
        expect_cli_refused({"compare", "--generate", "2,16", "--mode", "fast", "--draws", "2147483647", "--max-memory", "8G"},
                           {"MiB", "--max-memory"}, 5000);
        expect_cli_refused({"trace", "--values", "1,2,3", "--max-memory", "0x10"}, {"--max-memory", "\"0x10\""});
        QTemporaryDir dir;
        QByteArray row;
        for (int i = 0; i < 200000; ++i) row += QByteArray::number(i % 7) + ' ';
        const QString wide = write_file(dir, "wide.txt", row + "\n");
        expect_cli_refused({"trace", "--logits", wide, "--max-memory", "16M"}, {"V = 200000", "--max-memory"}, 10000);
        QVERIFY(expect_cli_json({"trace", "--logits", wide, "--seed", "1", "--max-memory", "256M"}).isObject());

        // A 2 GB sparse f16 .npy whose doubles alone need 8 GiB: refused from the
        // header, before anything is allocated, by both commands.
        std::string header = "{'descr': '<f2', 'fortran_order': False, 'shape': (8000, 128256), }";
        while ((10 + header.size() + 1) % 64 != 0) header += ' ';
        header += '\n';
        QByteArray npy("\x93NUMPY\x01\x00", 8);
        npy += static_cast<char>(header.size() & 0xFF);
        npy += static_cast<char>(header.size() >> 8);
        npy += QByteArray::fromStdString(header);
        const QString sparse = write_file(dir, "sparse.npy", npy);
        {
            QFile file(sparse);
            QVERIFY(file.resize(npy.size() + qint64{8000} * 128256 * 2));
        }
        expect_cli_refused({"batch", "--logits", sparse, "--max-memory", "4G"}, {"sparse.npy", "too large to load"}, 5000);
        expect_cli_refused({"trace", "--logits", sparse, "--max-memory", "4G"}, {"sparse.npy", "too large to load"}, 5000);
    }

    // Under an address-space limit the default budget shrinks with it: refused
    // with exit 2 and the numbers, not std::bad_alloc.
    void defaultBudgetFollowsUlimit() {
#if defined(__SANITIZE_ADDRESS__)
        // AddressSanitizer reserves terabytes of shadow address space at start,
        // which no `ulimit -v` leaves room for; the Release run covers this.
        QSKIP("ulimit -v and AddressSanitizer's shadow memory cannot coexist");
#endif
        const QString cli = QStringLiteral(SAMPLESCOPE_CLI);
        const auto limited = [&](const QString& args) {
            QProcess process;
            process.start("/bin/sh", {"-c", "ulimit -v 4000000 && exec \"" + cli + "\" " + args});
            process.waitForFinished(30000);
            return std::make_pair(process.exitCode(), process.readAllStandardError());
        };
        for (const QString& args : {QStringLiteral("batch --generate 31000,128256"),
                                    QStringLiteral("compare --generate 4,16 --mode fast --draws 2147483647")}) {
            const auto [code, err] = limited(args);
            QVERIFY2(code == 2, qPrintable(args + " -> " + QString::number(code) + ": " + QString::fromUtf8(err)));
            QVERIFY2(err.contains("memory budget") && err.count('\n') == 1, err.constData());
        }
    }
};

QTEST_GUILESS_MAIN(BadInputTwoTest)
#include "test_bad_input_two.moc"
