// samplescope-cli generate: its JSON, replay from a seed, and every bad input
// (flags, prompts, model files, rows files) refused with exit 2 and one line
// naming the field and the value.
#include <QtTest>

#include <nlohmann/json.hpp>

#include "engine/io/npy_writer.h"
#include "tests/support/cli_run.h"
#include "tests/support/ngram_builder.h"

using namespace samplescope;

namespace {

using Run = testing::CliRun;

Run cli(const QStringList& args) { return testing::run_cli(args); }

QString tiny_model_path() { return QString::fromStdString(testing::tiny_trigram_model_file()); }

QStringList generate(QStringList args) {
    return QStringList{"generate", "--model-path", tiny_model_path()} + args;
}

}  // namespace

class TestGenerateCli : public QObject {
    Q_OBJECT

private slots:
    void jsonPerTokenAndTheText() {
        const Run run = cli(generate({"--prompt", "A b", "--steps", "6", "--seed", "3", "--ignore-eos", "--top-k", "3"}));
        QCOMPARE(run.code, 0);
        const auto json = nlohmann::json::parse(run.out.toStdString());
        QCOMPARE(json["model_kind"].get<std::string>(), std::string("ngram"));
        QCOMPARE(json["prompt"].size(), 2U);
        QCOMPARE(json["prompt"][0]["text"].get<std::string>(), std::string("a"));
        QCOMPARE(json["prompt"][1]["id"].get<int>(), 3);
        QCOMPARE(json["seed"].get<std::string>(), std::string("3"));
        QCOMPARE(json["tokens"].size(), 6U);
        QCOMPARE(json["tokens_generated"].get<int>(), 6);
        QCOMPARE(json["draws_consumed"].get<int>(), 6);
        std::string text = "a b";
        for (const auto& token : json["tokens"]) {
            QVERIFY(token["kept_count"].get<int>() <= 3);
            QVERIFY(token["rank"].get<int>() >= 1 && token["rank"].get<int>() <= 3);
            QVERIFY(token["probability"].get<double>() > 0.0);
            QVERIFY(token["logprob"].get<double>() <= 0.0);
            const auto word = token["text"].get<std::string>();
            text += (word == "." ? "" : " ") + word;
            bool has_top_k = false;
            for (const auto& stage : token["stages"]) {
                if (stage["name"] == "top_k") has_top_k = stage.contains("kth_logit");
                QVERIFY(!stage.contains("kept"));
            }
            QVERIFY(has_top_k);
        }
        QCOMPARE(json["text"].get<std::string>(), text);
        // The same seed writes the same bytes.
        QCOMPARE(cli(generate({"--prompt", "A b", "--steps", "6", "--seed", "3", "--ignore-eos", "--top-k", "3"})).out,
                 run.out);
    }

    void fullTracesAndPresets() {
        const Run run = cli(generate({"--prompt", "a", "--steps", "3", "--seed", "1", "--full", "--pipeline", "llamacpp",
                                      "--ignore-eos", "--dry-multiplier", "0.8"}));
        QCOMPARE(run.code, 0);
        const auto json = nlohmann::json::parse(run.out.toStdString());
        QCOMPARE(json["pipeline"].get<std::string>(), std::string("llamacpp"));
        for (const auto& token : json["tokens"]) {
            QVERIFY(token.contains("kept"));
            QVERIFY(token.contains("token_text"));
            QVERIFY(token.contains("stages"));
        }
    }

    void stopsAtTheEndOfText() {
        const Run run = cli(generate({"--prompt", "b", "--steps", "50", "--temperature", "0"}));
        QCOMPARE(run.code, 0);
        const auto json = nlohmann::json::parse(run.out.toStdString());
        QVERIFY(json["ended"].get<bool>());
        QVERIFY(json["tokens"].size() < 50U);
        QVERIFY(json["tokens"].back()["ends"].get<bool>());
        QCOMPARE(json["draws_consumed"].get<int>(), 0);
    }

    void rowsModel() {
        std::vector<double> values;
        for (int i = 0; i < 3 * 4; ++i) values.push_back(std::cos(i));
        const auto path = testing::write_temp_file(encode_npy({1, 3, 4}, values), "rows.npy");
        const QString file = QString::fromStdString(path);
        Run run = cli({"generate", "--model", "rows", "--logits", file, "--steps", "3", "--seed", "2"});
        QCOMPARE(run.code, 0);
        const auto json = nlohmann::json::parse(run.out.toStdString());
        QCOMPARE(json["tokens"].size(), 3U);
        QCOMPARE(json["prompt"].size(), 0U);
        // Each token as `trace` draws it from row t with the stream advanced t draws.
        for (int t = 0; t < 3; ++t) {
            QStringList values_t;
            for (int v = 0; v < 4; ++v) values_t << QString::number(std::cos(t * 4 + v), 'g', 17);
            const Run trace = cli({"trace", "--values", values_t.join(','), "--seed", "2", "--skip-draws",
                                   QString::number(t), "--output-ids", [&] {
                                       QStringList ids;
                                       for (int k = 0; k < t; ++k) ids << QString::number(json["tokens"][k]["token"].get<int>());
                                       return ids.join(',');
                                   }()});
            QCOMPARE(trace.code, 0);
            const auto expected = nlohmann::json::parse(trace.out.toStdString());
            QCOMPARE(json["tokens"][t]["token"].get<int>(), expected["token"].get<int>());
            QCOMPARE(json["tokens"][t]["u"].get<double>(), expected["u"].get<double>());
        }
    }

    void badInput_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        const QString tiny = tiny_model_path();
        const auto g = [&](QStringList args) { return QStringList{"generate", "--model-path", tiny} + args; };
        QTest::newRow("steps 0") << g({"--prompt", "a", "--steps", "0"}) << "--steps must be an integer in [1, 100000], got \"0\"";
        QTest::newRow("steps 100001") << g({"--prompt", "a", "--steps", "100001"}) << "got \"100001\"";
        QTest::newRow("steps text") << g({"--prompt", "a", "--steps", "ten"}) << "got \"ten\"";
        QTest::newRow("steps 2^64") << g({"--prompt", "a", "--steps", "18446744073709551616"}) << "got \"18446744073709551616\"";
        QTest::newRow("no prompt") << g({}) << "prompt: empty";
        QTest::newRow("blank prompt") << g({"--prompt", "   "}) << "prompt: empty";
        QTest::newRow("control byte") << g({"--prompt", QString("a") + QChar(7) + "b"}) << "a control character at byte 1";
        std::string many;
        for (int i = 0; i < 100000; ++i) many += "a ";
        const auto long_prompt = QString::fromStdString(testing::write_temp_file(many, "long-prompt.txt"));
        QTest::newRow("100,000 words") << g({"--prompt-file", long_prompt}) << "more than 10000 words";
        const auto huge_prompt =
            QString::fromStdString(testing::write_temp_file(std::string((1 << 20) + 5, 'a'), "huge-prompt.txt"));
        QTest::newRow("prompt file over 1 MiB") << g({"--prompt-file", huge_prompt}) << "bytes, more than the 1048576";
        const auto broken_prompt = QString::fromStdString(testing::write_temp_file("caf\xe9 au lait", "latin1.txt"));
        QTest::newRow("invalid UTF-8") << g({"--prompt-file", broken_prompt}) << "not valid UTF-8 at byte 3";
        QTest::newRow("missing prompt file") << g({"--prompt-file", "/nonexistent/prompt.txt"}) << "/nonexistent/prompt.txt";
        QTest::newRow("prompt and ids") << g({"--prompt", "a", "--prompt-ids", "1"}) << "give one of --prompt, --prompt-file and --prompt-ids";
        QTest::newRow("prompt id outside V") << g({"--prompt-ids", "1,6"}) << "prompt id 6 at position 1 is outside [0, 6)";
        QTest::newRow("values") << g({"--prompt", "a", "--values", "1,2"}) << "--values is one row";
        QTest::newRow("unknown model") << g({"--prompt", "a", "--model", "gpt"}) << "--model must be ngram, ngram:trigram";
        QTest::newRow("order 4") << g({"--prompt", "a", "--model", "ngram:4gram"}) << "got \"ngram:4gram\"";
        QTest::newRow("missing model") << QStringList{"generate", "--model-path", "/nonexistent/x.lm.bin", "--prompt", "a"}
                                       << "/nonexistent/x.lm.bin";
        const std::string good = testing::write_ngram_trie(testing::tiny_trigram_model());
        const auto truncated = testing::write_temp_file(good.substr(0, good.size() / 2), "truncated.lm.bin");
        QTest::newRow("truncated model") << QStringList{"generate", "--model-path", QString::fromStdString(truncated),
                                                        "--prompt", "a"} << "truncated.lm.bin: truncated";
        const auto corrupt = testing::write_temp_file("Trie Language Model\x09garbage", "corrupt.lm.bin");
        QTest::newRow("corrupt model") << QStringList{"generate", "--model-path", QString::fromStdString(corrupt),
                                                      "--prompt", "a"} << "corrupt.lm.bin: order 9";
        QTest::newRow("temperature") << g({"--prompt", "a", "--temperature", "-1"}) << "temperature";
        QTest::newRow("logits without rows") << g({"--prompt", "a", "--logits", "x.npy"}) << "give --model rows";
        const auto rows = testing::write_temp_file(encode_npy({2, 4}, std::vector<double>(8, 0.5)), "two-rows.npy");
        QTest::newRow("fewer rows than steps") << QStringList{"generate", "--model", "rows", "--logits",
                                                              QString::fromStdString(rows), "--steps", "3"}
                                               << "--steps 3: recorded rows from";
        QTest::newRow("rows with a prompt") << QStringList{"generate", "--model", "rows", "--logits",
                                                           QString::fromStdString(rows), "--prompt", "hi"}
                                            << "the rows model replays recorded logits and reads no text";
        QTest::newRow("rows without a file") << QStringList{"generate", "--model", "rows"} << "needs a logits file";
        QTest::newRow("model path with rows") << QStringList{"generate", "--model", "rows", "--model-path", "x",
                                                             "--logits", QString::fromStdString(rows)}
                                              << "--model-path names an n-gram model";
    }
    void badInput() {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const Run run = cli(args);
        QCOMPARE(run.code, 2);
        QCOMPARE(run.err.size(), 1);
        QVERIFY2(run.err[0].contains(message), qPrintable(run.err[0]));
        QVERIFY(run.out.isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestGenerateCli)
#include "test_generate_cli.moc"
