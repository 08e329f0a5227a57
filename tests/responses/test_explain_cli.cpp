// `samplescope-cli explain` on every example of examples/responses/: its
// exit status (0 none excluded, 1 some, 2 bad input), the JSON per token, the
// summary line, and one escaped line naming the field for bad input.
#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include <fstream>

#include "tests/support/cli_run.h"

namespace {

const QString kExamples = QStringLiteral(SAMPLESCOPE_TEST_DATA "/../../examples/responses/");

samplescope::testing::CliResult explain(const QStringList& args) {
    QProcess process;
    process.start(QStringLiteral(SAMPLESCOPE_CLI), QStringList{"explain"} + args);
    process.waitForFinished(60000);
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
            QString::fromUtf8(process.readAllStandardOutput()),
            QString::fromUtf8(process.readAllStandardError()).split('\n', Qt::SkipEmptyParts)};
}

QJsonObject json_of(const samplescope::testing::CliResult& result) {
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(result.out.toUtf8(), &error);
    if (error.error != QJsonParseError::NoError) qFatal("not JSON: %s", qPrintable(error.errorString()));
    return document.object();
}

QJsonObject token(const QJsonObject& document, int position) { return document["tokens"].toArray()[position].toObject(); }

QString stage_verdict(const QJsonObject& token, const QString& stage) {
    for (const auto& s : token["stages"].toArray()) {
        if (s.toObject()["stage"].toString() == stage) return s.toObject()["verdict"].toString();
    }
    return "absent";
}

}  // namespace

class TestExplainCli : public QObject {
    Q_OBJECT

private slots:
    void everyExampleIsExplained() {
        const struct {
            QStringList args;
            int exit_code;
            QString summary;
        } cases[] = {
            {{"--response", kExamples + "openai_chat.json", "--request", kExamples + "openai_chat.request.json"}, 0,
             "9 tokens checked: 9 possible, 0 excluded, 0 cannot tell"},
            {{"--response", kExamples + "vllm_chat_stream.txt", "--request", kExamples + "vllm_chat_stream.request.json"},
             1, "8 tokens checked: 7 possible, 1 excluded (position 4), 0 cannot tell"},
            {{"--response", kExamples + "vllm_processed_chat.json", "--logprobs-mode", "processed_logprobs"}, 0,
             "4 tokens checked: 4 possible, 0 excluded, 0 cannot tell"},
            {{"--response", kExamples + "openai_completion.json"}, 0,
             "6 tokens checked: 5 possible, 0 excluded, 1 cannot tell"},
            {{"--response", kExamples + "llamacpp_completion.json"}, 0,
             "5 tokens checked: 5 possible, 0 excluded, 0 cannot tell"},
            {{"--response", kExamples + "llamacpp_post_sampling_stream.txt"}, 0,
             "3 tokens checked: 3 possible, 0 excluded, 0 cannot tell"},
            {{"--response", kExamples + "llamacpp_legacy.json"}, 0,
             "5 tokens checked: 5 possible, 0 excluded, 0 cannot tell"},
            {{"--response", kExamples + "vllm_request_output.json"}, 1,
             "5 tokens checked: 4 possible, 1 excluded (position 3), 0 cannot tell"},
            {{"--response", kExamples + "hf_logits.safetensors", "--request", kExamples + "hf_request.json"}, 1,
             "7 tokens checked: 6 possible, 1 excluded (position 4), 0 cannot tell"},
            {{"--response", kExamples + "hf_scores.npy", "--generated-ids", kExamples + "hf_generated_ids.txt",
              "--logprobs-mode", "output_scores", "--request", kExamples + "hf_request.json"},
             1, "7 tokens checked: 6 possible, 1 excluded (position 4), 0 cannot tell"},
        };
        for (const auto& c : cases) {
            const auto result = explain(c.args + QStringList{"--summary"});
            QVERIFY2(result.err_lines.isEmpty(), qPrintable(result.err_lines.join(" | ")));
            QCOMPARE(result.exit_code, c.exit_code);
            QCOMPARE(result.out.trimmed(), c.summary);
            const auto full = explain(c.args);
            QCOMPARE(full.exit_code, c.exit_code);
            QCOMPARE(json_of(full)["summary"].toObject()["line"].toString(), c.summary);
        }
    }

    void theJsonOfOneToken() {
        const auto result = explain({"--response", kExamples + "vllm_chat_stream.txt", "--request",
                                     kExamples + "vllm_chat_stream.request.json"});
        const QJsonObject document = json_of(result);
        QCOMPARE(document["format"].toString(), QString("openai_chat"));
        QCOMPARE(document["pipeline"].toString(), QString("vllm"));
        QCOMPARE(document["logprobs_mode"].toObject()["mode"].toString(), QString("raw_logprobs"));
        QVERIFY(document["param_sources"].toObject()["top_k"].toString().contains("vllm_chat_stream.request.json"));
        const QJsonObject there = token(document, 4);
        QCOMPARE(there["token"].toString(), QString(" there"));
        QCOMPARE(there["verdict"].toString(), QString("cut"));
        QCOMPARE(there["rank"].toInt(), 3);
        // The alternatives as shown, by number: vLLM listed " there" first, then the top two.
        const QJsonArray top = there["top"].toArray();
        QCOMPARE(top.size(), 3);
        QCOMPARE(top[0].toObject()["token"].toString(), QString(","));
        QCOMPARE(top[2].toObject()["token"].toString(), QString(" there"));
        QCOMPARE(stage_verdict(there, "top_k"), QString("cut"));
        QVERIFY(there["summary"].toString().contains("top_k excludes it"));
        QVERIFY(there["entropy"].toObject()["hi"].isNull());  // V unknown
        // --vocab-size bounds the entropy.
        const QJsonObject bounded = token(json_of(explain({"--response", kExamples + "vllm_chat_stream.txt",
                                                           "--vocab-size", "128256"})), 4);
        QVERIFY(bounded["entropy"].toObject()["hi"].toDouble() > bounded["entropy"].toObject()["lo"].toDouble());
    }

    // A different pipeline decides differently: llama.cpp's truncations see T = 1.
    void thePipelineDecides() {
        const auto vllm = json_of(explain({"--response", kExamples + "vllm_request_output.json"}));
        QCOMPARE(stage_verdict(token(vllm, 3), "min_p"), QString("cut"));
        const auto llama = json_of(explain({"--response", kExamples + "vllm_request_output.json", "--pipeline",
                                            "llamacpp", "--top-k", "0", "--top-p", "1"}));
        QCOMPARE(llama["pipeline"].toString(), QString("llamacpp"));
        QCOMPARE(stage_verdict(token(llama, 3), "min_p"), QString("cut"));
        // Flags win over the recorded request.
        const auto loose = explain({"--response", kExamples + "vllm_request_output.json", "--min-p", "0", "--top-p", "1"});
        QCOMPARE(loose.exit_code, 0);
    }

    void badInputIsOneLine() {
        QTemporaryDir dir;
        const auto write = [&dir](const QString& name, const std::string& text) {
            const QString path = dir.filePath(name);
            std::ofstream(path.toStdString(), std::ios::binary) << text;
            return path;
        };
        const struct {
            QStringList args;
            QString says;
        } cases[] = {
            {{"--response", write("cut.json", "{\"choices\": [{\"index\": 0, \"logprobs\": {\"content\": [{\"token\"")},
             "cut.json: the response: malformed JSON at byte"},
            {{"--response", write("pos.json", "{\"choices\": [{\"index\": 0, \"finish_reason\": \"stop\", \"logprobs\": "
                                              "{\"content\": [{\"token\": \"a\", \"logprob\": 0.5}]}}]}")},
             "choices[0].logprobs.content[0].logprob is 0.5"},
            {{"--response", kExamples + "vllm_request_output.json", "--vocab-size", "100"},
             "outputs[0].logprobs[0]: id 21831 is outside the vocabulary [0, 100)"},
            {{"--response", kExamples + "openai_chat.json", "--logprobs-mode", "cooked"}, "unknown logprobs mode \"cooked\""},
            {{"--response", kExamples + "openai_chat.json", "--pipeline", "nope"}, "unknown pipeline \"nope\""},
            {{"--response", kExamples + "openai_chat.json", "--top-p", "2"}, "top_p"},
            {{"--response", kExamples + "openai_chat.json", "--choice", "3"}, "choices has no choice 3"},
            {{"--response", kExamples + "hf_scores.npy"}, "--logprobs-mode output_scores or output_logits"},
            {{"--response", kExamples + "llamacpp_completion.json", "--logprobs-mode", "post_sampling_probs"},
             "contradicts"},
            {{"--response", dir.filePath("missing.json")}, "missing.json"},
        };
        for (const auto& c : cases) {
            const auto result = explain(c.args);
            QCOMPARE(result.exit_code, 2);
            QCOMPARE(result.err_lines.size(), qsizetype{1});
            QVERIFY2(result.err_lines.front().contains(c.says), qPrintable(result.err_lines.front() + " lacks " + c.says));
            QVERIFY(result.out.isEmpty());
        }
    }
};

QTEST_GUILESS_MAIN(TestExplainCli)
#include "test_explain_cli.moc"
