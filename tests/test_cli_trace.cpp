// `samplescope-cli trace`: the JSON a user gets for each input form and flag.
#include <QtTest>

#include <cmath>

#include "engine/core/generator.h"

namespace {

struct CliRun {
    int exit_code;
    QByteArray out;
    QByteArray err;
};

CliRun run_trace(const QStringList& args) {
    QProcess process;
    process.start(QStringLiteral(SAMPLESCOPE_CLI), QStringList{"trace"} + args);
    process.waitForFinished(60000);
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1, process.readAllStandardOutput(),
            process.readAllStandardError()};
}

QJsonDocument trace_json(const QStringList& args) {
    const CliRun run = run_trace(args);
    if (run.exit_code != 0) qWarning() << run.err;
    QJsonParseError error{};
    const auto doc = QJsonDocument::fromJson(run.out, &error);
    if (error.error != QJsonParseError::NoError) qWarning() << error.errorString() << run.out.left(200);
    return doc;
}

QList<int> ints(const QJsonValue& value) {
    QList<int> out;
    for (const auto& v : value.toArray()) out.append(v.toInt());
    return out;
}

}  // namespace

class CliTraceTest : public QObject {
    Q_OBJECT
private slots:
    void workedExampleJson() {
        const auto doc = trace_json({"--values", "1,3,2,3,-1", "--top-k", "3", "--top-p", "0.8", "--seed", "0"});
        const auto t = doc.object();
        QCOMPARE(t["token"].toInt(), 3);
        QCOMPARE(t["u"].toDouble(), 0.80209496430867);
        QCOMPARE(std::round(t["logprob"].toDouble() * 1e5) / 1e5, -0.92487);
        QCOMPARE(t["seed"].toString(), QString("0"));
        QCOMPARE(t["draws_consumed"].toInt(), 1);
        QCOMPARE(ints(t["kept"]), (QList<int>{1, 3}));
        const auto stages = t["stages"].toArray();
        QStringList names;
        for (const auto& s : stages) names << s.toObject()["name"].toString();
        QCOMPARE(names, (QStringList{"widen", "repetition_penalty", "presence_frequency", "greedy", "temperature",
                                     "top_k", "top_p", "min_p", "softmax", "draw"}));
        const auto top_k = stages[5].toObject();
        QVERIFY(top_k["active"].toBool());
        QCOMPARE(top_k["kept_count"].toInt(), 3);
        QCOMPARE(ints(top_k["kept"]), (QList<int>{1, 2, 3}));
        QCOMPARE(ints(stages[6].toObject()["kept"]), (QList<int>{1, 3}));
        QVERIFY(!stages[7].toObject()["active"].toBool());
        QCOMPARE(ints(stages[7].toObject()["kept"]), (QList<int>{1, 3}));
    }

    // `params` lists what differs from the defaults (then the seed), so a
    // parameter added later leaves every trace made without it as it was; the
    // contract's trace ends with what it ignored, as a preset's trace does.
    void paramsListOnlyWhatDiffersFromTheDefaults() {
        const CliRun run = run_trace({"--values", "1,3,2,3,-1", "--top-k", "3", "--typical-p", "0.5",
                                      "--logit-bias", "0:1", "--temperature", "1", "--seed", "0"});
        QCOMPARE(run.exit_code, 0);
        const auto t = QJsonDocument::fromJson(run.out).object();
        QCOMPARE(t["params"].toObject(),
                 (QJsonObject{{"top_k", 3}, {"typical_p", 0.5}, {"logit_bias", "0:1"}, {"seed", "0"}}));
        // In table order, the lists after, the seed last.
        const auto params_at = run.out.indexOf("\"params\": ");
        const auto at = [&](const char* key) { return run.out.indexOf(QByteArray("\"") + key + "\": ", params_at); };
        QVERIFY(at("top_k") < at("typical_p") && at("typical_p") < at("logit_bias") && at("logit_bias") < at("seed"));
        QCOMPARE(t["ignored_params"].toArray(), (QJsonArray{"typical_p", "logit_bias"}));
        QVERIFY(at("ignored_params") > at("stages"));
        const auto plain = trace_json({"--values", "1,2", "--seed", "5"}).object();
        QCOMPARE(plain["params"].toObject(), (QJsonObject{{"seed", "5"}}));
        QCOMPARE(plain["ignored_params"].toArray(), QJsonArray{});
        // --steps: each trace says what it ignored.
        const auto steps = trace_json({"--values", "1,2", "--seed", "5", "--steps", "2", "--min-keep", "3"}).array();
        for (const auto& step : steps) QCOMPARE(step.toObject()["ignored_params"].toArray(), (QJsonArray{"min_keep"}));
    }

    void greedyHasNullU() {
        const auto t = trace_json({"--values", "0.5,2,2", "--temperature", "0", "--seed", "4"}).object();
        QCOMPARE(t["token"].toInt(), 1);
        QVERIFY(t["u"].isNull());
        QCOMPARE(t["draws_consumed"].toInt(), 0);
        QVERIFY(t["greedy"].toBool());
    }

    void seedIsReportedWhenChosen() {
        const auto t = trace_json({"--values", "1,2"}).object();
        bool ok = false;
        t["seed"].toString().toULongLong(&ok);
        QVERIFY(ok);
    }

    void stepsFormOneRequest() {
        const auto doc = trace_json({"--values", "1,1,1,1", "--steps", "5", "--seed", "11", "--frequency-penalty", "0.5",
                                     "--skip-draws", "2"});
        QVERIFY(doc.isArray());
        const auto steps = doc.array();
        QCOMPARE(steps.size(), 5);
        samplescope::Pcg32 rng = samplescope::stream(11, samplescope::kSampleLabel);
        rng.uniform_f64();
        rng.uniform_f64();
        for (int i = 0; i < steps.size(); ++i) {
            const auto t = steps[i].toObject();
            QCOMPARE(t["draws_consumed"].toInt(), i + 3);
            QCOMPARE(t["u"].toDouble(), rng.uniform_f64());
        }
    }

    void fileForms() {
        QTemporaryDir dir;
        const auto write = [&](const QString& name, const QByteArray& bytes) -> QString {
            QFile file(dir.filePath(name));
            if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size()) return QString();
            return dir.filePath(name);
        };
        const QStringList flags{"--top-k", "3", "--top-p", "0.8", "--seed", "0"};
        for (const auto& path : {write("x.txt", "1\n3\n2\n3\n-1\n"), write("x.csv", "1,3,2,3,-1\n"),
                                 write("x.json", "[1, 3, 2, 3, -1]"), write("labels.txt", "a: 1\nb: 3\nc\t2\nd: 3\ne: -1\n")}) {
            const auto t = trace_json(QStringList{"--logits", path} + flags).object();
            QCOMPARE(t["token"].toInt(), 3);
        }
        // A 2-D f32 .npy: row 1 is the worked example.
        QByteArray header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 5), }";
        while ((10 + header.size() + 1) % 64 != 0) header.append(' ');
        header.append('\n');
        QByteArray npy("\x93NUMPY\x01\x00", 8);
        npy.append(static_cast<char>(header.size() & 0xff));
        npy.append(static_cast<char>(header.size() >> 8));
        npy.append(header);
        for (const float v : {0.f, 0.f, 0.f, 0.f, 9.f, 1.f, 3.f, 2.f, 3.f, -1.f}) npy.append(reinterpret_cast<const char*>(&v), 4);
        const QString npy_path = write("x.npy", npy);
        QCOMPARE(trace_json(QStringList{"--logits", npy_path, "--row", "1"} + flags).object()["token"].toInt(), 3);
        QCOMPARE(trace_json(QStringList{"--logits", npy_path, "--row", "0"} + flags).object()["token"].toInt(), 4);
        const CliRun bad_row = run_trace(QStringList{"--logits", npy_path, "--row", "2"} + flags);
        QCOMPARE(bad_row.exit_code, 2);
        QVERIFY(bad_row.err.contains("--row 2"));
    }

    void helpDocumentsEveryFlag() {
        const CliRun help = run_trace({"--help"});
        QCOMPARE(help.exit_code, 0);
        for (const char* flag : {"--logits", "--values", "--row", "--temperature", "--top-k", "--top-p", "--min-p",
                                 "--repetition-penalty", "--presence-penalty", "--frequency-penalty", "--seed",
                                 "--prompt-ids", "--output-ids", "--skip-draws", "--steps"}) {
            QVERIFY2(help.out.contains(flag), flag);
        }
    }
};

QTEST_GUILESS_MAIN(CliTraceTest)
#include "test_cli_trace.moc"
