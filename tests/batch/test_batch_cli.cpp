// `samplescope-cli batch` and `compare` from the outside: JSON on success, exit
// status 2 with one line on stderr for bad input.
#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <cstring>
#include <string>
#include <vector>

namespace {

struct Run {
    int status;
    QByteArray out;
    QByteArray err;
};

Run cli(const QStringList& args) {
    QProcess process;
    process.start(SAMPLESCOPE_CLI, args);
    process.waitForFinished(120000);
    return {process.exitCode(), process.readAllStandardOutput(), process.readAllStandardError()};
}

// A 2-D little-endian f32 .npy file.
void write_npy(const QString& path, int rows, int cols, const std::vector<float>& values) {
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(rows) + ", " +
                         std::to_string(cols) + "), }";
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    QByteArray bytes("\x93NUMPY\x01\x00", 8);
    bytes.append(static_cast<char>(header.size() & 0xFF));
    bytes.append(static_cast<char>(header.size() >> 8));
    bytes.append(header.c_str(), static_cast<qsizetype>(header.size()));
    bytes.append(reinterpret_cast<const char*>(values.data()), static_cast<qsizetype>(values.size() * sizeof(float)));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(bytes);
}

void write_text(const QString& path, const QByteArray& text) {
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(text);
}

}  // namespace

class BatchCliTest : public QObject {
    Q_OBJECT
private slots:
    void batchPrintsEveryRow() {
        QTemporaryDir dir;
        // Row 0 is the contract's worked example; row 1 is greedy.
        write_npy(dir.filePath("x.npy"), 2, 5, {1, 3, 2, 3, -1, 0, 4, 4, 1, 2});
        write_text(dir.filePath("p.json"), R"([{"top_k": 3, "top_p": 0.8, "seed": "0"}, {"temperature": 0}])");
        for (const char* backend : {"reference", "host"}) {
            const Run run = cli({"batch", "--logits", dir.filePath("x.npy"), "--params", dir.filePath("p.json"),
                                 "--backend", backend, "--mode", "exact"});
            QCOMPARE(run.status, 0);
            const QJsonObject json = QJsonDocument::fromJson(run.out).object();
            QCOMPARE(json["backend"].toString(), QString(backend));
            const QJsonArray rows = json["rows"].toArray();
            QCOMPARE(rows.size(), 2);
            QCOMPARE(rows[0].toObject()["token"].toInt(), 3);
            QCOMPARE(rows[0].toObject()["kept_count"].toInt(), 2);
            QCOMPARE(rows[0].toObject()["draws_consumed"].toInt(), 1);
            QVERIFY(std::fabs(rows[0].toObject()["logprob"].toDouble() + 0.92487) < 5e-6);
            QCOMPARE(rows[1].toObject()["token"].toInt(), 1);  // tie between ids 1 and 2 goes to the lower
            QCOMPARE(rows[1].toObject()["draws_consumed"].toInt(), 0);
        }
    }

    void compareReportsTheFourCounts() {
        const Run exact = cli({"compare", "--generate", "300,64", "--backend", "host", "--mode", "exact"});
        QCOMPARE(exact.status, 0);
        QJsonObject json = QJsonDocument::fromJson(exact.out).object();
        QCOMPARE(json["rows"].toInt(), 300);
        QCOMPARE(json["mismatch"].toInt(), 0);
        QCOMPARE(json["equal"].toInt() + json["near_tie"].toInt(), 300);
        QVERIFY(json.contains("reference_seconds") && json.contains("engine_seconds"));
        const Run fast = cli({"compare", "--generate", "200,64", "--backend", "host", "--mode", "fast", "--draws", "300"});
        QCOMPARE(fast.status, 0);
        json = QJsonDocument::fromJson(fast.out).object();
        QCOMPARE(json["kept_mismatches"].toInt(), 0);
        QVERIFY(json["goodness_of_fit"].toObject()["p_value"].toDouble() > 1e-3);
    }

    void badInputExitsTwoWithOneLine() {
        QTemporaryDir dir;
        write_npy(dir.filePath("x.npy"), 2, 3, {1, 2, 3, 4, 5, 6});
        write_text(dir.filePath("one.json"), R"([{"top_k": 2}])");
        write_text(dir.filePath("bad.json"), R"([{"top_p": 2}, {}])");
        write_text(dir.filePath("broken.json"), R"([{"top_p": )");
        write_text(dir.filePath("ids.json"), R"([{"prompt_ids": [7]}, {}])");
        // Samplers beyond the contract's stages: refused, never silently left out.
        write_text(dir.filePath("typical.json"), R"([{}, {"typical_p": 0.5}])");
        write_text(dir.filePath("sigma.json"), R"([{"top_n_sigma": 1}, {}])");
        write_text(dir.filePath("bias.json"), R"([{"logit_bias": "1:-inf"}, {}])");
        // llama.cpp's extra samplers, each when on: refused with one line that names it.
        const std::vector<std::pair<QString, QByteArray>> extra{
            {"xtc_probability", R"([{}, {"xtc_probability": 0.5}])"},
            {"dry_multiplier", R"([{"dry_multiplier": 0.8}, {}])"},
            {"dynatemp_range", R"([{"dynatemp_range": 0.5}, {}])"},
            {"mirostat", R"([{}, {"mirostat": 2}])"},
        };
        for (const auto& [key, text] : extra) write_text(dir.filePath(key + ".json"), text);
        // A params file's dry_sequence_breakers is a string, never a number.
        write_text(dir.filePath("breakers.json"), R"([{"dry_sequence_breakers": 13}, {}])");
        const QList<QStringList> cases{
            {"batch", "--generate", "0,5"},
            {"batch", "--generate", "4"},
            {"batch"},
            {"batch", "--logits", dir.filePath("missing.npy")},
            {"batch", "--logits", dir.filePath("x.npy"), "--params", dir.filePath("one.json")},
            {"batch", "--logits", dir.filePath("x.npy"), "--params", dir.filePath("bad.json")},
            {"batch", "--logits", dir.filePath("x.npy"), "--params", dir.filePath("broken.json")},
            {"batch", "--logits", dir.filePath("x.npy"), "--params", dir.filePath("ids.json")},
            {"batch", "--logits", dir.filePath("x.npy"), "--params", dir.filePath("typical.json")},
            {"batch", "--logits", dir.filePath("x.npy"), "--params", dir.filePath("sigma.json")},
            {"batch", "--logits", dir.filePath("x.npy"), "--params", dir.filePath("bias.json")},
            {"batch", "--logits", dir.filePath("x.npy"), "--params", dir.filePath("breakers.json")},
            {"batch", "--generate", "2,5", "--mode", "quick"},
            {"batch", "--generate", "2,5", "--backend", "tpu"},
            {"compare", "--generate", "2,5", "--draws", "-3", "--mode", "fast"},
            {"batch", "--generate", "2,5", "--workload", "nonsense"},
        };
        for (const auto& args : cases) {
            const Run run = cli(args);
            QVERIFY2(run.status == 2, qPrintable(args.join(' ') + " -> " + QString::number(run.status)));
            QCOMPARE(run.err.count('\n'), 1);
        }
        for (const auto& [key, text] : extra) {
            for (const char* backend : {"reference", "host"}) {
                const Run run = cli({"batch", "--logits", dir.filePath("x.npy"), "--params",
                                     dir.filePath(key + ".json"), "--backend", backend});
                QVERIFY2(run.status == 2, qPrintable(key + " -> " + QString::number(run.status)));
                QCOMPARE(run.err.count('\n'), 1);
                QVERIFY2(run.err.contains(key.toUtf8()), run.err.constData());
            }
        }
        // Two on in one row: the first in table order is named, the lists after the table.
        write_text(dir.filePath("both.json"), R"([{"logit_bias": "1:-inf", "typical_p": 0.5}, {}])");
        const Run both = cli({"batch", "--logits", dir.filePath("x.npy"), "--params", dir.filePath("both.json")});
        QCOMPARE(both.status, 2);
        QVERIFY2(both.err.contains("typical_p = 0.5 is not a stage of the batch engine"), both.err.constData());
        const Run breakers =
            cli({"batch", "--logits", dir.filePath("x.npy"), "--params", dir.filePath("breakers.json")});
        QVERIFY2(breakers.err.contains("dry_sequence_breakers must be a string"), breakers.err.constData());
    }

    // Asking for the GPU where there is none is an error that says why, not a crash.
    void cudaWithoutGpuSaysWhy() {
        const Run probe = cli({"batch", "--generate", "2,8", "--backend", "auto"});
        QCOMPARE(probe.status, 0);
        const QJsonObject json = QJsonDocument::fromJson(probe.out).object();
        if (json["backend"].toString() == "cuda") QSKIP("a GPU is present");
        QVERIFY(json["note"].toString().startsWith("no GPU"));
        const Run run = cli({"batch", "--generate", "2,8", "--backend", "cuda"});
        QCOMPARE(run.status, 2);
        QVERIFY(run.err.contains("cuda backend cannot run"));
    }
};

QTEST_APPLESS_MAIN(BatchCliTest)
#include "test_batch_cli.moc"
