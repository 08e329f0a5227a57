// The token table, the statistics panel and the answer line, offscreen: column
// headers are never elided, the id and label columns stay in view when the
// table scrolls right, counts agree with their nouns, the statistics never
// overlap at a small height, and the two "kept" counts name their denominator.
#include <QtTest>

#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QScrollArea>
#include <QScrollBar>
#include <QTableView>

#include <cmath>
#include <limits>
#include <memory>

#include "engine/pipelines/request.h"
#include "ui/common/plot_data.h"
#include "ui/panels/result_bar.h"
#include "ui/panels/statistics_panel.h"
#include "ui/panels/token_table_panel.h"

using namespace samplescope;
using namespace samplescope::ui;

namespace {

// A row of 16 ids, one of them -inf (so 15 have q > 0), every contract stage on.
std::vector<double> sixteen() {
    std::vector<double> logits;
    for (int i = 0; i < 16; ++i) logits.push_back(std::sin(1.7 * i) * 3.0);
    logits[7] = -std::numeric_limits<double>::infinity();
    return logits;
}

std::shared_ptr<const TraceView> viewOf(const std::vector<double>& logits, SamplingParams params) {
    params.seed = 5;
    Request request(params, {1, 2}, {3});
    auto view = std::make_shared<TraceView>();
    view->trace = std::make_shared<const SampleTrace>(request.step(logits));
    view->raw_logits = std::make_shared<const std::vector<double>>(logits);
    view->labels = std::make_shared<const TokenLabels>();
    view->top_n = 10;
    for (const auto& info : kStages) {
        if (info.contract) view->stages.push_back(makeStagePlotData(*view->trace, info.stage, view->top_n));
    }
    view->stats = makeTruncationStats(*view->trace);
    return view;
}

SamplingParams everyStage() {
    SamplingParams params;
    params.temperature = 0.9;
    params.top_k = 12;
    params.top_p = 0.95;
    params.min_p = 0.01;
    params.repetition_penalty = 1.1;
    params.presence_penalty = 0.2;
    params.frequency_penalty = 0.1;
    return params;
}

}  // namespace

class TablePanelsTest : public QObject {
    Q_OBJECT
private slots:
    // Every header's text fits its column, with room for the sort arrow.
    void headersAreNotElided() {
        TokenTablePanel panel;
        panel.resize(1280, 720);
        panel.setView(viewOf(sixteen(), everyStage()));
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QHeaderView* header = panel.table()->horizontalHeader();
        const QFontMetrics metrics = header->fontMetrics();
        for (int c = 0; c < panel.model()->columnCount(); ++c) {
            const QString text = panel.model()->headerData(c, Qt::Horizontal).toString();
            QVERIFY2(metrics.horizontalAdvance(text) <= header->sectionSize(c),
                     qPrintable(QStringLiteral("%1: %2 px of text in %3 px").arg(text).arg(metrics.horizontalAdvance(text)).arg(header->sectionSize(c))));
            QVERIFY2(header->sectionSize(c) >= header->sectionSizeHint(c), qPrintable(text));
        }
    }

    // Scrolled to the far right, the id and label are still on screen, row for row.
    void idAndLabelStayInView() {
        TokenTablePanel panel;
        panel.resize(520, 400);
        panel.setView(viewOf(sixteen(), everyStage()));
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QTableView* table = panel.table();
        QTableView* frozen = panel.frozenTable();
        QScrollBar* across = table->horizontalScrollBar();
        QVERIFY(across->maximum() > 0);
        across->setValue(across->maximum());
        QCoreApplication::processEvents();
        // The table's own id column has scrolled out of its viewport...
        QVERIFY(table->columnViewportPosition(TokenTableModel::Id) + table->columnWidth(TokenTableModel::Id) <= 0);
        // ...and the frozen view shows id and label over the table's left edge, whole.
        QVERIFY(frozen->isVisible());
        QCOMPARE(frozen->geometry().left(), table->viewport()->geometry().left());
        QCOMPARE(frozen->width(), table->columnWidth(0) + table->columnWidth(1));
        QVERIFY(!frozen->isColumnHidden(TokenTableModel::Id));
        QVERIFY(!frozen->isColumnHidden(TokenTableModel::Label));
        QVERIFY(frozen->isColumnHidden(TokenTableModel::RawLogit));
        QCOMPARE(frozen->columnViewportPosition(TokenTableModel::Id), 0);
        // Scrolling down moves both together.
        table->verticalScrollBar()->setValue(table->verticalScrollBar()->maximum());
        QCoreApplication::processEvents();
        QVERIFY(table->rowAt(0) > 0);
        QCOMPARE(frozen->rowAt(0), table->rowAt(0));
        // Selecting a token keeps the columns where they were.
        panel.selectToken(2);
        QCOMPARE(across->value(), across->maximum());
        QCOMPARE(frozen->selectionModel(), table->selectionModel());
        // A click in the frozen id column selects the token.
        QSignalSpy selected(&panel, &TokenTablePanel::tokenSelected);
        const QModelIndex row = panel.model()->index(panel.model()->rowOf(9), TokenTableModel::Id);
        frozen->scrollTo(row);
        QTest::mouseClick(frozen->viewport(), Qt::LeftButton, {}, frozen->visualRect(row).center());
        QCOMPARE(selected.count(), 1);
        QCOMPARE(selected.at(0).at(0).value<std::int32_t>(), 9);
    }

    // A token selected before the table is on screen is scrolled to once it is
    // shown (the frozen view, laid out later, must not pull the table back).
    void selectionBeforeShowScrollsToTheRow() {
        std::vector<double> logits(3000);
        for (std::size_t i = 0; i < logits.size(); ++i) logits[i] = std::sin(0.37 * static_cast<double>(i));
        TokenTablePanel panel;
        panel.resize(700, 400);
        panel.setView(viewOf(logits, SamplingParams{}));
        panel.selectToken(2500);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        panel.selectToken(2500);
        QCoreApplication::processEvents();
        QTableView* table = panel.table();
        const int top = table->rowAt(0);
        const int bottom = table->rowAt(table->viewport()->height() - 1);
        QVERIFY2(top <= 2500 && 2500 <= bottom, qPrintable(QStringLiteral("rows %1..%2").arg(top).arg(bottom)));
        QCOMPARE(panel.frozenTable()->rowAt(0), top);
    }

    void rowCountAgreesWithItsNoun() {
        TokenTablePanel panel;
        panel.setView(viewOf(sixteen(), everyStage()));
        QCOMPARE(panel.countLabel()->text(), QStringLiteral("16 rows"));
        panel.search()->setText(QStringLiteral("15"));
        QCOMPARE(panel.countLabel()->text(), QStringLiteral("1 row"));
        panel.search()->setText(QStringLiteral("no such label"));
        QCOMPARE(panel.countLabel()->text(), QStringLiteral("0 rows"));
    }

    // At a small height the statistics scroll: no two of its lines overlap.
    void statisticsNeverOverlap() {
        QWidget host;
        host.resize(300, 110);
        auto* panel = new StatisticsPanel(&host);
        panel->setGeometry(0, 0, 300, 110);  // a short dock: below what the panel asks for
        panel->showView(viewOf(sixteen(), everyStage()));
        host.show();
        QVERIFY(QTest::qWaitForWindowExposed(&host));
        QCoreApplication::processEvents();
        QVERIFY(!panel->footer().isEmpty());
        const QList<QLabel*> labels = panel->findChildren<QLabel*>();
        QVERIFY(labels.size() >= 13);
        for (int i = 0; i < labels.size(); ++i) {
            if (!labels[i]->isVisible() || labels[i]->text().isEmpty()) continue;
            const QRect a(labels[i]->mapTo(panel, QPoint(0, 0)), labels[i]->size());
            QVERIFY2(labels[i]->height() >= labels[i]->heightForWidth(labels[i]->width()) ||
                         !labels[i]->hasHeightForWidth(),
                     qPrintable(labels[i]->text()));
            for (int j = i + 1; j < labels.size(); ++j) {
                if (!labels[j]->isVisible() || labels[j]->text().isEmpty()) continue;
                const QRect b(labels[j]->mapTo(panel, QPoint(0, 0)), labels[j]->size());
                QVERIFY2(!a.intersects(b), qPrintable(labels[i]->text() + QStringLiteral(" / ") + labels[j]->text()));
            }
        }
        // The rest is reached by scrolling.
        QVERIFY(panel->scrollArea()->verticalScrollBar()->maximum() > 0);
    }

    // The answer line and the statistics count kept ids against the same V and say so.
    void keptCountsNameTheirDenominator() {
        SamplingParams params;  // no truncation: all 15 ids with a finite logit are kept
        const auto view = viewOf(sixteen(), params);
        ResultBar bar;
        bar.showView(view);
        QVERIFY2(bar.text().contains(QStringLiteral("kept 15 of V = 16")), qPrintable(bar.text()));
        StatisticsPanel stats;
        stats.showView(view);
        QVERIFY2(stats.footer().contains(QStringLiteral("kept 15 of the 15 candidates (V = 16)")),
                 qPrintable(stats.footer()));
        QCOMPARE(stats.cell(3, 0), QStringLiteral("15"));
    }
};

QTEST_MAIN(TablePanelsTest)
#include "test_table_panels.moc"
