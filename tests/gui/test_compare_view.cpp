// The Compare view (ui/compare/compare_view.h), offscreen: a batch generated through
// its widgets and run through its Run button shows exactly what compare_batch
// gives on the same input; refused edits and files keep what was on show; the
// backend line says what really ran; double-clicking a row hands that row on.
#include <QtTest>

#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QTableView>
#include <QTemporaryDir>

#include <cmath>

#include "engine/base/input_error.h"
#include "engine/io/logits_loader.h"
#include "kernels/backend_info.h"
#include "kernels/tools/batch_compare.h"
#include "kernels/tools/batch_generate.h"
#include "ui/compare/batch_params_model.h"
#include "ui/compare/compare_rows_model.h"
#include "ui/compare/compare_view.h"

using namespace samplescope;

namespace {

constexpr int kRunTimeoutMs = 120000;

void choose(QComboBox* combo, int data) {
    const int index = combo->findData(data);
    QVERIFY(index >= 0);
    combo->setCurrentIndex(index);
}

// Generates through the widgets, as a user would.
void generate_with_widgets(CompareView& view, int rows, int vocab, batch::Workload workload, int seed) {
    view.rowsSpin()->setValue(rows);
    view.vocabSpin()->setValue(vocab);
    choose(view.workloadCombo(), static_cast<int>(workload));
    view.generateSeedSpin()->setValue(seed);
    QTest::mouseClick(view.generateButton(), Qt::LeftButton);
}

void run_with_widgets(CompareView& view, batch::Mode mode, batch::Backend backend, int draws = 0) {
    choose(view.modeCombo(), static_cast<int>(mode));
    choose(view.backendCombo(), static_cast<int>(backend));
    if (mode == batch::Mode::Fast) view.drawsSpin()->setValue(draws);
    QSignalSpy finished(&view, &CompareView::comparisonFinished);
    QTest::mouseClick(view.runButton(), Qt::LeftButton);
    // The work is off the GUI thread: the button stays disabled until it is done.
    QVERIFY(!view.runButton()->isEnabled());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kRunTimeoutMs);
    QVERIFY(view.runButton()->isEnabled());
    QVERIFY(view.comparison() != nullptr);
}

// Stops the test when a helper has failed, so nothing reads a result that is not there.
#define RUN_OR_STOP(...)                        \
    do {                                        \
        run_with_widgets(__VA_ARGS__);          \
        if (QTest::currentTestFailed()) return; \
    } while (false)

QString cell(const QAbstractItemModel& model, int row, int column) {
    return model.data(model.index(row, column), Qt::DisplayRole).toString();
}

// A number cell: its sort value, and the text shows it grouped as the window does everywhere.
int number_cell(const QAbstractItemModel& model, int row, int column) {
    const int value = model.data(model.index(row, column), CompareRowsModel::SortRole).toInt();
    const QString shown = cell(model, row, column);
    if (shown != QLocale(QLocale::English).toString(value)) {
        qWarning("cell (%d, %d) shows \"%s\" for %d", row, column, qPrintable(shown), value);
        return -1;
    }
    return value;
}

QString verdict_text(Verdict verdict) { return QString::fromUtf8(verdict_name(verdict).data()); }

// The view's summary and every line against compare_batch's own result.
void check_against(const CompareView& view, const batch::BatchComparison& expected) {
    const QString counts = view.countsLabel()->text();
    QVERIFY2(counts.contains(QStringLiteral("Rows <b>%1</b>").arg(expected.counts.rows)), qPrintable(counts));
    QVERIFY2(counts.contains(QStringLiteral("Equal %1").arg(expected.counts.equal)), qPrintable(counts));
    QVERIFY2(counts.contains(QStringLiteral("Near-tie %1").arg(expected.counts.near_tie)), qPrintable(counts));
    QVERIFY2(counts.contains(QStringLiteral("Mismatch %1").arg(expected.counts.mismatch)), qPrintable(counts));
    const auto& model = *view.rowsModel();
    QCOMPARE(model.rowCount(), static_cast<int>(expected.rows.size()));
    QCOMPARE(view.rowsTable()->model()->rowCount(), static_cast<int>(expected.rows.size()));
    for (int r = 0; r < model.rowCount(); ++r) {
        const auto& row = expected.rows[static_cast<std::size_t>(r)];
        QCOMPARE(number_cell(model, r, CompareRowsModel::ReferenceTokenColumn), row.reference_token);
        QCOMPARE(number_cell(model, r, CompareRowsModel::EngineTokenColumn), row.engine_token);
        QCOMPARE(cell(model, r, CompareRowsModel::VerdictColumn), verdict_text(row.row));
        QCOMPARE(number_cell(model, r, CompareRowsModel::ReferenceKeptColumn), row.reference_kept);
        QCOMPARE(number_cell(model, r, CompareRowsModel::EngineKeptColumn), row.engine_kept);
        QCOMPARE(model.data(model.index(r, CompareRowsModel::LogprobDifferenceColumn), CompareRowsModel::SortRole)
                     .toDouble(),
                 row.logprob_difference);
        // A highlighted row is exactly one that is not equal, and it says so in words too.
        const bool tinted = model.data(model.index(r, CompareRowsModel::EngineTokenColumn), Qt::BackgroundRole).isValid();
        QCOMPARE(tinted, row.row != Verdict::Equal);
    }
}

void write_file(const QString& path, const QByteArray& bytes) {
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    QCOMPARE(file.write(bytes), bytes.size());
}

// A little-endian f32 .npy of shape (rows, cols), version 1.0.
QByteArray npy_f32(int rows, int cols, const std::vector<float>& values) {
    QByteArray header = QStringLiteral("{'descr': '<f4', 'fortran_order': False, 'shape': (%1, %2), }")
                            .arg(rows)
                            .arg(cols)
                            .toLatin1();
    const int unpadded = 10 + static_cast<int>(header.size()) + 1;
    header.append(QByteArray((64 - unpadded % 64) % 64, ' '));
    header.append('\n');
    QByteArray bytes("\x93NUMPY\x01\x00", 8);
    bytes.append(static_cast<char>(header.size() % 256));
    bytes.append(static_cast<char>(header.size() / 256));
    bytes.append(header);
    bytes.append(reinterpret_cast<const char*>(values.data()), static_cast<qsizetype>(values.size() * sizeof(float)));
    return bytes;
}

}  // namespace

class CompareViewTest : public QObject {
    Q_OBJECT
private slots:
    void exactRunShowsCompareBatchResult() {
        CompareView view;
        generate_with_widgets(view, 36, 257, batch::Workload::Mixed, 11);
        QCOMPARE(view.batch().rows, std::size_t{36});
        QCOMPARE(view.paramsModel()->rowCount(), 36);
        RUN_OR_STOP(view, batch::Mode::Exact, batch::Backend::Auto);

        // The same batch built without the view, compared without it.
        const batch::SyntheticBatch synthetic = batch::generate_batch(36, 257, batch::Workload::Mixed, 11);
        const batch::BatchComparison expected =
            batch::compare_batch(synthetic.input(), {batch::Mode::Exact, batch::Backend::Host, 0, 0});
        check_against(view, expected);
        QCOMPARE(view.comparison()->counts.mismatch, std::size_t{0});
        QVERIFY(view.detailsLabel()->text().contains(QStringLiteral("exact mode")));
        QVERIFY(view.detailsLabel()->text().contains(QStringLiteral("reference")));
        QVERIFY(view.detailsLabel()->text().contains(QStringLiteral("batch engine")));
    }

    // Ids and counts are grouped (12,345) in the text and the table, and sort as numbers.
    void idsAndCountsAreGrouped() {
        CompareView view;
        generate_with_widgets(view, 1, 20000, batch::Workload::TopPOnly, 2);
        QVERIFY2(view.sourceLabel()->text().contains(QStringLiteral("B = 1 row, V = 20,000 ids")),
                 qPrintable(view.sourceLabel()->text()));
        generate_with_widgets(view, 6, 20000, batch::Workload::TopPOnly, 2);
        QVERIFY2(view.sourceLabel()->text().contains(QStringLiteral("B = 6 rows, V = 20,000 ids")),
                 qPrintable(view.sourceLabel()->text()));
        RUN_OR_STOP(view, batch::Mode::Exact, batch::Backend::Host);
        const auto& model = *view.rowsModel();
        int large = 0;
        for (int r = 0; r < model.rowCount(); ++r) {
            const auto& row = view.comparison()->rows[static_cast<std::size_t>(r)];
            QCOMPARE(number_cell(model, r, CompareRowsModel::ReferenceTokenColumn), row.reference_token);
            QCOMPARE(number_cell(model, r, CompareRowsModel::ReferenceKeptColumn), row.reference_kept);
            if (row.reference_token >= 1000) {
                ++large;
                QVERIFY(cell(model, r, CompareRowsModel::ReferenceTokenColumn).contains(QLatin1Char(',')));
            }
        }
        QVERIFY(large > 0);
        // Sorting by token orders the numbers, not their text ("9" after "10,000").
        view.rowsTable()->sortByColumn(CompareRowsModel::ReferenceTokenColumn, Qt::AscendingOrder);
        const QAbstractItemModel* shown = view.rowsTable()->model();
        for (int r = 1; r < shown->rowCount(); ++r) {
            QVERIFY(shown->index(r - 1, CompareRowsModel::ReferenceTokenColumn).data(CompareRowsModel::SortRole).toInt() <=
                    shown->index(r, CompareRowsModel::ReferenceTokenColumn).data(CompareRowsModel::SortRole).toInt());
        }
    }

    void fastRunShowsCountsAndFit() {
        CompareView view;
        generate_with_widgets(view, 16, 500, batch::Workload::EveryStage, 3);
        RUN_OR_STOP(view, batch::Mode::Fast, batch::Backend::Host, 300);
        const batch::SyntheticBatch synthetic = batch::generate_batch(16, 500, batch::Workload::EveryStage, 3);
        const batch::BatchComparison expected =
            batch::compare_batch(synthetic.input(), {batch::Mode::Fast, batch::Backend::Host, 300, 0});
        check_against(view, expected);
        QVERIFY(expected.fit.has_value());
        const QString details = view.detailsLabel()->text();
        QVERIFY2(details.contains(QStringLiteral("goodness of fit p = %1").arg(expected.fit->p_value, 0, 'g', 3)),
                 qPrintable(details));
        QVERIFY(details.contains(QStringLiteral("fast mode")));
    }

    void backendStatementSaysWhatRan() {
        CompareView view;
        generate_with_widgets(view, 4, 64, batch::Workload::TopPOnly, 0);
        RUN_OR_STOP(view, batch::Mode::Exact, batch::Backend::Auto);
        const BackendInfo info = detect_backend();
        const QString statement = view.backendStatement();
        if (info.gpu_available) {
            QVERIFY2(statement.contains(QStringLiteral("ran on a GPU")), qPrintable(statement));
            QVERIFY(statement.contains(QString::fromStdString(view.comparison()->device)));
        } else {
            QVERIFY2(statement.contains(QStringLiteral("host twin")), qPrintable(statement));
            QVERIFY(statement.contains(QStringLiteral("not on a GPU")));
            // Auto fell back: the engine's reason is given.
            QVERIFY(!view.comparison()->note.empty());
            const std::string& note = view.comparison()->note;
            QVERIFY(statement.contains(QString::fromStdString(note.substr(note.find(':') + 2))));
        }
        RUN_OR_STOP(view, batch::Mode::Exact, batch::Backend::Host);
        QVERIFY(view.backendStatement().contains(QStringLiteral("host twin")));
        QVERIFY(view.backendStatement().contains(QStringLiteral("the host backend was chosen")));
    }

    void cudaWithoutGpuIsAnErrorNotACrash() {
        if (detect_backend().gpu_available) QSKIP("a GPU is present: the cuda backend runs");
        CompareView view;
        generate_with_widgets(view, 4, 64, batch::Workload::Greedy, 0);
        choose(view.backendCombo(), static_cast<int>(batch::Backend::Cuda));
        QSignalSpy failed(&view, &CompareView::comparisonFailed);
        QVERIFY(view.runComparison());
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, kRunTimeoutMs);
        QVERIFY(view.errorText().contains(QStringLiteral("cuda backend cannot run")));
        QVERIFY(view.comparison() == nullptr);
    }

    void refusedEditsKeepThePreviousValue_data() {
        QTest::addColumn<int>("column");
        QTest::addColumn<QString>("typed");
        QTest::addColumn<QString>("message");  // the contract's message, built by the engine
        const auto param_message = [](Param param, double value) {
            return QString::fromStdString(*param_error(param, value));
        };
        const auto col = [](Param param) { return BatchParamsModel::columnOf(param); };
        QTest::newRow("top_p") << col(Param::TopP) << "1.5" << param_message(Param::TopP, 1.5);
        QTest::newRow("temperature") << col(Param::Temperature) << "-0.5" << param_message(Param::Temperature, -0.5);
        QTest::newRow("top_k") << col(Param::TopK) << "2.5" << param_message(Param::TopK, 2.5);
        QTest::newRow("min_p") << col(Param::MinP) << "nan" << param_message(Param::MinP, std::nan(""));
        QTest::newRow("repetition") << col(Param::RepetitionPenalty) << "0"
                                    << param_message(Param::RepetitionPenalty, 0.0);
        QTest::newRow("presence") << col(Param::PresencePenalty) << "abc"
                                  << QStringLiteral("presence_penalty must be a number, got \"abc\"");
        QString seed_message;
        try {
            parse_seed("12x");
        } catch (const InputError& error) {
            seed_message = QString::fromStdString(error.what());
        }
        QTest::newRow("seed") << BatchParamsModel::kSeedColumn << "12x" << seed_message;
        QTest::newRow("prompt id") << BatchParamsModel::kPromptColumn << "1, 64"
                                   << QStringLiteral("prompt_ids has id 64 outside [0, 64)");
        QTest::newRow("output id") << BatchParamsModel::kOutputColumn << "-3"
                                   << QStringLiteral("output_ids has id -3 outside [0, 64)");
        QTest::newRow("output list") << BatchParamsModel::kOutputColumn << "1;2"
                                     << QStringLiteral("output_ids must be a comma-separated list of integer ids, got \"1;2\"");
        QTest::newRow("skip_draws") << BatchParamsModel::kSkipDrawsColumn << "-1"
                                    << QStringLiteral("skip_draws must be an integer >= 0, got \"-1\"");
    }

    void refusedEditsKeepThePreviousValue() {
        QFETCH(int, column);
        QFETCH(QString, typed);
        QFETCH(QString, message);
        CompareView view;
        view.resize(1200, 800);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        generate_with_widgets(view, 5, 64, batch::Workload::Mixed, 2);
        const int row = 2;
        const QModelIndex index = view.paramsModel()->index(row, column);
        const QString before = index.data().toString();
        const std::vector<RowRequest> requests_before = view.requests();

        // Typed into the cell's editor and committed with Return.
        view.paramsTable()->setCurrentIndex(index);
        view.paramsTable()->edit(index);
        auto* editor = view.paramsTable()->viewport()->findChild<QLineEdit*>();
        QVERIFY(editor != nullptr);
        editor->selectAll();
        QTest::keyClicks(editor, typed);
        QTest::keyClick(editor, Qt::Key_Return);

        const QString expected = QStringLiteral("row %1: %2").arg(row).arg(message);
        QTRY_COMPARE(view.paramsModel()->lastError(), expected);  // the delegate commits queued
        QVERIFY2(view.errorText().contains(expected), qPrintable(view.errorText()));
        QCOMPARE(index.data().toString(), before);
        const std::vector<RowRequest> requests_after = view.requests();
        QCOMPARE(requests_after.size(), requests_before.size());
        for (std::size_t r = 0; r < requests_after.size(); ++r) {
            QVERIFY(requests_after[r].params == requests_before[r].params);
            QCOMPARE(requests_after[r].prompt_ids, requests_before[r].prompt_ids);
            QCOMPARE(requests_after[r].output_ids, requests_before[r].output_ids);
            QCOMPARE(requests_after[r].skip_draws, requests_before[r].skip_draws);
        }
    }

    void acceptedEditRunsAndMarksOldResults() {
        CompareView view;
        generate_with_widgets(view, 6, 80, batch::Workload::Greedy, 5);
        RUN_OR_STOP(view, batch::Mode::Exact, batch::Backend::Host);
        auto* model = view.paramsModel();
        const int temperature = BatchParamsModel::columnOf(Param::Temperature);
        QVERIFY(model->setData(model->index(1, temperature), QStringLiteral("0.8")));
        QVERIFY(model->setData(model->index(1, BatchParamsModel::kOutputColumn), QStringLiteral("3, 3, 79")));
        QVERIFY(model->setData(model->index(1, BatchParamsModel::kSeedColumn), QStringLiteral("18446744073709551615")));
        QVERIFY(model->lastError().isEmpty());
        QCOMPARE(view.requests()[1].params.temperature, 0.8);
        QCOMPARE(view.requests()[1].output_ids, (std::vector<std::int64_t>{3, 3, 79}));
        QCOMPARE(*view.requests()[1].params.seed, std::numeric_limits<std::uint64_t>::max());
        QVERIFY(view.detailsLabel()->text().contains(QStringLiteral("parameters changed since this run")));
        // An emptied seed gets a new one at once, so the row stays replayable.
        QVERIFY(model->setData(model->index(2, BatchParamsModel::kSeedColumn), QString()));
        QVERIFY(view.requests()[2].params.seed.has_value());

        RUN_OR_STOP(view, batch::Mode::Exact, batch::Backend::Host);
        QVERIFY(!view.detailsLabel()->text().contains(QStringLiteral("parameters changed since this run")));
        batch::SyntheticBatch synthetic = batch::generate_batch(6, 80, batch::Workload::Greedy, 5);
        synthetic.requests = view.requests();
        check_against(view, batch::compare_batch(synthetic.input(), {batch::Mode::Exact, batch::Backend::Host, 0, 0}));
    }

    void filesLoadAndBadFilesKeepTheBatch() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::vector<float> values{1, 3, 2, 3, -1, 0.5f, 4, 4, 1, 2, 0, -2, 7, 1, 1};
        write_file(dir.filePath(QStringLiteral("x.npy")), npy_f32(3, 5, values));
        write_file(dir.filePath(QStringLiteral("p.json")),
                   R"([{"temperature": 0}, {"top_k": 2, "seed": "42"}, {"repetition_penalty": 1.3, "prompt_ids": [2, 2], "seed": "7"}])");
        write_file(dir.filePath(QStringLiteral("two.json")), R"([{}, {}])");
        write_file(dir.filePath(QStringLiteral("bad.json")), R"([{}, {"top_p": 2}, {}])");
        write_file(dir.filePath(QStringLiteral("ids.json")), R"([{}, {"output_ids": [5]}, {}])");
        QByteArray truncated = npy_f32(3, 5, values);
        truncated.chop(7);
        write_file(dir.filePath(QStringLiteral("truncated.npy")), truncated);
        write_file(dir.filePath(QStringLiteral("garbage.npy")), "not a numpy file at all");

        CompareView view;
        QVERIFY(view.loadFiles(dir.filePath(QStringLiteral("x.npy")), dir.filePath(QStringLiteral("p.json"))));
        QCOMPARE(view.batch().rows, std::size_t{3});
        QCOMPARE(view.batch().vocab, std::size_t{5});
        QCOMPARE(view.requests()[1].params.top_k, std::int64_t{2});
        QCOMPARE(*view.requests()[2].params.seed, std::uint64_t{7});
        QVERIFY(view.requests()[0].params.seed.has_value());  // chosen now, shown in the table
        const QString source = view.sourceLabel()->text();
        QVERIFY(source.contains(QStringLiteral("x.npy + p.json")));
        QVERIFY(view.sourceLabel()->toolTip().contains(dir.filePath(QStringLiteral("x.npy"))));

        // Every refused file leaves the loaded batch and its parameters as they were.
        const auto keeps_batch = [&](bool loaded, const QString& file) {
            QVERIFY(!loaded);
            QVERIFY2(view.errorText().contains(file), qPrintable(view.errorText()));
            QCOMPARE(view.batch().rows, std::size_t{3});
            QCOMPARE(view.requests()[1].params.top_k, std::int64_t{2});
            QCOMPARE(view.sourceLabel()->text(), source);
        };
        for (const QString& name : {QStringLiteral("truncated.npy"), QStringLiteral("garbage.npy"),
                                   QStringLiteral("missing.npy")}) {
            const QString path = dir.filePath(name);
            std::string expected;
            try {
                (void)load_logits_file(path.toStdString());
            } catch (const InputError& error) {
                expected = error.what();
            }
            QVERIFY(!expected.empty());
            keeps_batch(view.loadFiles(path), name);
            QVERIFY(view.errorText().contains(QString::fromStdString(expected)));
        }
        keeps_batch(view.loadParamsFile(dir.filePath(QStringLiteral("two.json"))), QStringLiteral("two.json"));
        QVERIFY(view.errorText().contains(QStringLiteral("has 2 rows but the logits have 3")));
        keeps_batch(view.loadParamsFile(dir.filePath(QStringLiteral("bad.json"))), QStringLiteral("bad.json"));
        QVERIFY(view.errorText().contains(QStringLiteral("row 1: top_p must be in [0, 1], got 2")));
        keeps_batch(view.loadParamsFile(dir.filePath(QStringLiteral("ids.json"))), QStringLiteral("ids.json"));
        QVERIFY(view.errorText().contains(QStringLiteral("row 1: output_ids has id 5 outside [0, 5)")));

        // The loaded batch runs like any other.
        RUN_OR_STOP(view, batch::Mode::Exact, batch::Backend::Host);
        const batch::BatchInput input = batch::make_batch_input(values.data(), 3, 5, view.requests());
        check_against(view, batch::compare_batch(input, {batch::Mode::Exact, batch::Backend::Host, 0, 0}));
        QCOMPARE(view.comparison()->rows[0].engine_token, 1);  // greedy: the lowest id of the maximum 3
    }

    // Rows whose top-p or min-p sits on the boundary between keeping one more
    // id or not: the f32 fast path and the f64 reference may decide either way,
    // and the near-tie rule calls such a row a near-tie, not a mismatch.
    void fastNearTieIsHighlighted() {
        const std::vector<float> base{2.0f, 1.25f, 0.5f, 0.0f, -1.0f, -3.0f};
        double z = 0.0;
        for (const float l : base) z += std::exp(static_cast<double>(l) - 2.0);
        const double top_two_mass = (1.0 + std::exp(1.25 - 2.0)) / z;  // q of ids 0 and 1, in f64
        const double second_ratio = std::exp(1.25 - 2.0);               // q1 / q0
        std::vector<float> values;
        QByteArray params("[");
        const std::vector<double> offsets{-1e-6, -1e-7, 0.0, 1e-7, 1e-6};
        for (const char* key : {"top_p", "min_p"}) {
            for (const double offset : offsets) {
                values.insert(values.end(), base.begin(), base.end());
                const double value = (std::string(key) == "top_p" ? top_two_mass : second_ratio) + offset;
                params += QStringLiteral("%1{\"%2\": %3, \"seed\": \"%4\"}")
                              .arg(values.size() == base.size() ? "" : ", ", key)
                              .arg(value, 0, 'g', 17)
                              .arg(values.size())
                              .toLatin1();
            }
        }
        params += "]";
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const int rows = static_cast<int>(values.size() / base.size());
        write_file(dir.filePath(QStringLiteral("boundary.npy")), npy_f32(rows, static_cast<int>(base.size()), values));
        write_file(dir.filePath(QStringLiteral("boundary.json")), params);

        CompareView view;
        view.resize(1200, 760);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY2(view.loadFiles(dir.filePath(QStringLiteral("boundary.npy")), dir.filePath(QStringLiteral("boundary.json"))),
                 qPrintable(view.errorText()));
        RUN_OR_STOP(view, batch::Mode::Fast, batch::Backend::Auto, 2000);
        const batch::BatchComparison expected = batch::compare_batch(
            batch::make_batch_input(values.data(), static_cast<std::size_t>(rows), base.size(), view.requests()),
            {batch::Mode::Fast, batch::Backend::Host, 2000, 0});
        QVERIFY2(expected.counts.near_tie >= 1, "no row landed on the boundary: the highlight goes untested");
        QCOMPARE(expected.counts.mismatch, std::size_t{0});
        check_against(view, expected);

        // "Only rows that are not equal" keeps exactly the highlighted rows.
        view.onlyDifferencesCheck()->setChecked(true);
        QCOMPARE(view.rowsTable()->model()->rowCount(),
                 static_cast<int>(expected.counts.near_tie + expected.counts.mismatch));
        view.onlyDifferencesCheck()->setChecked(false);
        QCOMPARE(view.rowsTable()->model()->rowCount(), rows);

        // A screenshot for the documentation when asked for one.
        const QByteArray shot = qgetenv("SAMPLESCOPE_COMPARE_SCREENSHOT");
        if (!shot.isEmpty()) QVERIFY(view.grab().save(QString::fromLocal8Bit(shot)));
    }

    // Every verdict gets its own tint, icon and word; equal rows get no tint.
    void rowsModelMarksEveryVerdict() {
        auto comparison = std::make_shared<batch::BatchComparison>();
        for (const Verdict verdict : {Verdict::Equal, Verdict::NearTie, Verdict::Mismatch}) {
            batch::RowComparison row;
            row.reference_token = 4;
            row.engine_token = verdict == Verdict::Mismatch ? 9 : 4;
            row.kept = verdict;
            row.token = verdict;
            row.row = verdict;
            if (verdict == Verdict::Mismatch) row.kept_mismatched_ids = {9};
            comparison->rows.push_back(row);
            comparison->counts.add(verdict);
        }
        CompareRowsModel model;
        model.setComparison(comparison);
        QCOMPARE(model.rowCount(), 3);
        QSet<QRgb> tints;
        QSet<qint64> icons;
        for (int r = 0; r < 3; ++r) {
            const Verdict verdict = comparison->rows[static_cast<std::size_t>(r)].row;
            QCOMPARE(cell(model, r, CompareRowsModel::VerdictColumn), verdict_text(verdict));
            const QVariant tint = model.data(model.index(r, CompareRowsModel::RowColumn), Qt::BackgroundRole);
            QCOMPARE(tint.isValid(), verdict != Verdict::Equal);
            if (tint.isValid()) tints.insert(tint.value<QBrush>().color().rgb());
            const auto icon = model.data(model.index(r, CompareRowsModel::VerdictColumn), Qt::DecorationRole).value<QIcon>();
            QVERIFY(!icon.isNull());
            icons.insert(icon.cacheKey());
            QCOMPARE(model.data(model.index(r, 0), CompareRowsModel::VerdictRole).toInt(), static_cast<int>(verdict));
        }
        QCOMPARE(tints.size(), 2);
        QCOMPARE(icons.size(), 3);
        QCOMPARE(cell(model, 1, CompareRowsModel::DetailColumn), QStringLiteral("token near-tie; kept set near-tie"));
        QCOMPARE(cell(model, 2, CompareRowsModel::DetailColumn),
                 QStringLiteral("token mismatch; kept set mismatch at ids 9"));
        model.clear();
        QCOMPARE(model.rowCount(), 0);
    }

    void doubleClickOpensThatRow() {
        CompareView view;
        view.resize(1200, 800);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        generate_with_widgets(view, 12, 120, batch::Workload::Mixed, 9);
        RUN_OR_STOP(view, batch::Mode::Exact, batch::Backend::Host);
        // Sorted newest-last-first, so the table's first line is the batch's last row.
        view.rowsTable()->sortByColumn(CompareRowsModel::RowColumn, Qt::DescendingOrder);

        std::vector<double> logits;
        SamplingParams params;
        std::vector<std::int64_t> prompt;
        std::vector<std::int64_t> output;
        std::uint64_t skip = ~0ULL;
        int opened = 0;
        connect(&view, &CompareView::openRowRequested, this,
                [&](std::vector<double> l, SamplingParams p, std::vector<std::int64_t> pr, std::vector<std::int64_t> o,
                    std::uint64_t s) {
                    logits = std::move(l);
                    params = p;
                    prompt = std::move(pr);
                    output = std::move(o);
                    skip = s;
                    ++opened;
                });
        QTableView* table = view.rowsTable();
        const QRect rect = table->visualRect(table->model()->index(0, CompareRowsModel::EngineTokenColumn));
        QVERIFY(rect.isValid());
        // A real double-click starts with a press; QTest's mouseDClick sends only the second click.
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, rect.center());
        QTest::mouseDClick(table->viewport(), Qt::LeftButton, {}, rect.center());
        QCOMPARE(opened, 1);

        const std::size_t row = 11;
        const batch::SyntheticBatch synthetic = batch::generate_batch(12, 120, batch::Workload::Mixed, 9);
        QCOMPARE(logits.size(), std::size_t{120});
        for (std::size_t i = 0; i < logits.size(); ++i) {
            QCOMPARE(logits[i], static_cast<double>(synthetic.logits[row * 120 + i]));
        }
        QVERIFY(params == synthetic.requests[row].params);
        QCOMPARE(prompt, synthetic.requests[row].prompt_ids);
        QCOMPARE(output, synthetic.requests[row].output_ids);
        QCOMPARE(skip, synthetic.requests[row].skip_draws);
    }
};

QTEST_MAIN(CompareViewTest)
#include "test_compare_view.moc"
