// The stage plots' whole-vocabulary view and what every stage plot must not
// do, offscreen: the curve's data (first ranks exact, each bucket's largest q
// kept, the kept region and the cut where the engine put them, an unchanged
// row not sorted again), the view each stage opens in, the hover text of a bar
// and of a point, a click in either view, the chosen label inside the data
// area for a rank-1 chosen bar, legend entries never cut, the top-p star clear
// of its label, notes folded on a short plot, a stage skipped after greedy
// titled as skipped, and the cached legend entries and text elements drawn
// pixel for pixel as QCustomPlot's own.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>

#include "engine/core/element_math.h"
#include "engine/pipelines/sampler.h"
#include "ui/common/examples.h"
#include "ui/common/plot_data.h"
#include "ui/common/trace_view.h"
#include "ui/stages/legend_item.h"
#include "ui/stages/stage_plot.h"
#include "ui/stages/axis_label.h"
#include "ui/stages/item_text.h"
#include "ui/stages/text_element.h"

using namespace samplescope;
using namespace samplescope::ui;

namespace {

SampleTrace traceOf(const Example& example) {
    return trace_once(example.logits, example.params, example.prompt_ids, example.output_ids);
}

std::shared_ptr<const TraceView> viewOf(const SampleTrace& trace, std::size_t top_n) {
    auto view = std::make_shared<TraceView>();
    view->trace = std::make_shared<const SampleTrace>(trace);
    view->labels = std::make_shared<const TokenLabels>();
    view->top_n = top_n;
    RankOrders orders;
    for (const auto& stage : trace.stages) {
        if (stage.stage != Stage::Draw) view->stages.push_back(makeStagePlotData(trace, stage.stage, top_n, -1, &orders));
    }
    return view;
}

// Every candidate of `stage` ranked the plain way.
std::vector<std::int32_t> bruteOrder(const SampleTrace& trace, Stage stage) {
    const Values& logits = *trace.stage(stage).logits;
    std::vector<std::int32_t> order(*trace.stage(inputStage(trace, stage)).kept);
    std::sort(order.begin(), order.end(), [&logits](std::int32_t a, std::int32_t b) {
        return ranks_before(logits[static_cast<std::size_t>(a)], a, logits[static_cast<std::size_t>(b)], b);
    });
    return order;
}

// The pixel rect a text item was drawn in.
QRectF textRect(QCPItemText* text) { return QRectF(text->topLeft->pixelPosition(), text->bottomRight->pixelPosition()).normalized(); }

void showAt(QCustomPlot& plot, int width, int height) {
    plot.resize(width, height);
    plot.show();
    QVERIFY(QTest::qWaitForWindowExposed(&plot));
    plot.replot();
}

}  // namespace

class StagePlotFullTest : public QObject {
    Q_OBJECT
private slots:
    void firstRanksAreExactAndBucketsKeepTheMax() {
        const SampleTrace trace = traceOf(realisticExample());
        RankOrders orders;
        for (const Stage stage : {Stage::Widen, Stage::RepetitionPenalty, Stage::Temperature, Stage::TopK, Stage::TopP}) {
            const VocabCurve curve = makeVocabCurve(trace, stage, orders);
            const auto order = bruteOrder(trace, stage);
            const StageTrace& now = trace.stage(stage);
            const StageTrace& before = trace.stage(inputStage(trace, stage));
            QCOMPARE(curve.candidates, order.size());
            QVERIFY2(curve.points.size() <= 2000, qPrintable(QString::number(curve.points.size())));
            // Every rank up to kExactRanks is a point of its own, in rank order.
            const std::size_t exact = std::min(order.size(), VocabCurve::kExactRanks);
            for (std::size_t r = 1; r <= exact; ++r) {
                const CurvePoint& point = curve.points[r - 1];
                QCOMPARE(point.rank, r);
                QCOMPARE(point.token.id, order[r - 1]);
                QCOMPARE(point.token.logit, (*now.logits)[static_cast<std::size_t>(order[r - 1])]);
            }
            // Each point is the largest q of its kind in its bucket; the buckets cover every rank.
            std::size_t covered = 0;
            for (const auto& point : curve.points) {
                QVERIFY(point.bucket_first <= point.rank && point.rank <= point.bucket_last);
                double best = 0.0;
                for (std::size_t r = point.bucket_first; r <= point.bucket_last; ++r) {
                    const std::int32_t id = order[r - 1];
                    if (now.keeps(id) != point.token.kept) continue;
                    best = std::max(best, point.token.kept ? now.prob_of(id) : before.prob_of(id));
                }
                QCOMPARE(point.shownProb(), best);
                QCOMPARE(point.token.prob_before, before.prob_of(point.token.id));
                covered = std::max(covered, point.bucket_last);
            }
            QCOMPARE(covered, order.size());
        }
    }

    void keptRegionAndThresholdRank() {
        const SampleTrace trace = traceOf(realisticExample());
        RankOrders orders;
        const VocabCurve top_k = makeVocabCurve(trace, Stage::TopK, orders);
        QCOMPARE(top_k.kept_first, std::size_t{1});
        QCOMPARE(top_k.kept_last, static_cast<std::size_t>(trace.params.top_k));
        QVERIFY(top_k.kept_prefix);
        // The cut's edges are points: the last kept rank and the first dropped one.
        const auto has_rank = [](const VocabCurve& c, std::size_t r) {
            return std::any_of(c.points.begin(), c.points.end(), [r](const CurvePoint& p) { return p.rank == r; });
        };
        QVERIFY(has_rank(top_k, top_k.kept_last) && has_rank(top_k, top_k.kept_last + 1));
        const VocabCurve top_p = makeVocabCurve(trace, Stage::TopP, orders);
        QCOMPARE(top_p.kept_last, *trace.stage(Stage::TopP).crossing_rank);
        QCOMPARE(top_p.kept, trace.stage(Stage::TopP).kept_count());
        const VocabCurve min_p = makeVocabCurve(trace, Stage::MinP, orders);
        QCOMPARE(min_p.kept_last, trace.stage(Stage::MinP).kept_count());
        QVERIFY(min_p.chosen.has_value());
        QCOMPARE(min_p.chosen->token.id, trace.token);
    }

    void anUnchangedRowIsNotSortedAgain() {
        Example example = realisticExample();
        RankOrders orders;
        const SampleTrace first = traceOf(example);
        for (const auto& stage : first.stages) (void)stage.probs.get();  // as the worker does before it
        QElapsedTimer timer;
        timer.start();
        for (const auto& stage : first.stages) (void)makeVocabCurve(first, stage.stage, orders);
        const double first_ms = static_cast<double>(timer.nsecsElapsed()) / 1e6;
        const std::size_t sorts = orders.fullSorts();
        QVERIFY(sorts >= 1);
        example.params.top_p = 0.5;
        example.params.temperature = 1.3;
        const SampleTrace second = traceOf(example);
        for (const auto& stage : second.stages) (void)stage.probs.get();
        timer.restart();
        for (const auto& stage : second.stages) (void)makeVocabCurve(second, stage.stage, orders);
        qInfo("every stage's curve at V = 128,256: %.1f ms with one sort, %.1f ms for the next trace of the same row",
              first_ms, static_cast<double>(timer.nsecsElapsed()) / 1e6);
        for (const auto& stage : second.stages) {
            const VocabCurve curve = makeVocabCurve(second, stage.stage, orders);
            const auto order = bruteOrder(second, stage.stage);
            for (std::size_t r = 1; r <= std::min<std::size_t>(order.size(), 50); ++r) QCOMPARE(curve.points[r - 1].token.id, order[r - 1]);
        }
        QCOMPARE(orders.fullSorts(), sorts);
    }

    // The summed "rest" bar does not set the probability axis (it would flatten
    // the ranked bars): the axis is the ranked bars' top, the rest is cut there
    // and its mass written on it.
    void restBarDoesNotSetTheAxis() {
        // One id well ahead of 499 equal ones: the top 10 bars carry a tenth, the rest most of the mass.
        std::vector<double> logits(500, 0.0);
        logits[0] = 4.0;
        SamplingParams params;
        params.seed = 0;
        const auto view = viewOf(trace_once(logits, params), 10);
        const StagePlotData& data = view->plot(Stage::Softmax);
        QVERIFY(data.rest_kept_count > 0);
        double top = 0.0;
        for (const auto& token : data.top) top = std::max(top, token.kept ? token.prob_after : token.prob_before);
        QVERIFY2(data.rest_kept_mass > 1.5 * top, "the row must have a rest taller than its bars");
        StagePlot plot(Stage::Softmax);
        plot.setModeOverride(PlotMode::Bars);
        plot.showView(view, -1, false);
        showAt(plot, 420, 300);
        QVERIFY2(plot.yAxis->range().upper < 1.5 * top, qPrintable(QString::number(plot.yAxis->range().upper)));
        QVERIFY(plot.yAxis->range().upper >= top);
        QCPBars* rest = plot.bars(QStringLiteral("rest_kept"));
        QVERIFY(rest);
        QCOMPARE(rest->data()->constBegin()->value, plot.yAxis->range().upper);
        auto* mass = qobject_cast<QCPItemText*>(plot.item(QStringLiteral("rest_kept_mass")));
        QVERIFY(mass);
        QVERIFY2(mass->text().startsWith(QString::number(data.rest_kept_mass, 'g', 3)), qPrintable(mass->text()));
    }

    // A stage plot repaints by copying its opaque buffer, and the copy shows what QCustomPlot's own
    // repaint (its background brush, the transparent buffer blended over it) shows, to the last
    // row and column, up to a few levels of rounding at antialiased edges.
    void opaqueRepaintShowsWhatQCustomPlotBlends() {
        const auto view = viewOf(traceOf(realisticExample()), 10);
        for (const Stage stage : {Stage::TopK, Stage::Temperature}) {
            StagePlot plot(stage);
            plot.showView(view, -1, false);
            showAt(plot, 420, 320);
            const QImage copied = plot.grab().toImage().convertToFormat(QImage::Format_RGB32);
            QVERIFY(plot.copiedLastPaint());
            plot.layer(OpaquePlot::kFillLayer)->setVisible(false);
            plot.replot();
            const QImage blended = plot.grab().toImage().convertToFormat(QImage::Format_RGB32);
            QVERIFY(!plot.copiedLastPaint());
            QCOMPARE(copied.size(), blended.size());
            int largest = 0;
            int differing = 0;
            for (int y = 0; y < copied.height(); ++y) {
                for (int x = 0; x < copied.width(); ++x) {
                    const QRgb a = copied.pixel(x, y);
                    const QRgb b = blended.pixel(x, y);
                    const int gap = std::max({std::abs(qRed(a) - qRed(b)), std::abs(qGreen(a) - qGreen(b)), std::abs(qBlue(a) - qBlue(b))});
                    largest = std::max(largest, gap);
                    differing += gap > 0 ? 1 : 0;
                }
            }
            QVERIFY2(largest <= 4, qPrintable(QStringLiteral("largest gap %1").arg(largest)));
            QVERIFY2(differing < copied.width() * copied.height() / 20, qPrintable(QString::number(differing)));
        }
    }

    // The raw logits are plotted as logits (not as temperature 1's probabilities).
    void rawLogitsArePlottedAsLogits() {
        const auto view = viewOf(traceOf(realisticExample()), 10);
        const StagePlotData& data = view->plot(Stage::Widen);
        StagePlot plot(Stage::Widen);
        plot.setModeOverride(PlotMode::Bars);
        plot.showView(view, -1, false);
        showAt(plot, 420, 300);
        QVERIFY2(plot.yAxis->label().startsWith(QStringLiteral("logit")), qPrintable(plot.yAxis->label()));
        int bars_seen = 0;
        for (const char* name : {"kept", "chosen", "dropped"}) {
            QCPBars* bars = plot.bars(QString::fromLatin1(name));
            if (!bars) continue;
            for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it) {
                const auto& token = data.top[static_cast<std::size_t>(it->key) - 1];
                QCOMPARE(it->value, token.logit);
                ++bars_seen;
            }
        }
        QCOMPARE(bars_seen, static_cast<int>(data.top.size()));
        QVERIFY(!plot.bars(QStringLiteral("rest_kept")));  // logits do not add up
    }

    void defaultViewPerStage() {
        const auto broad = viewOf(traceOf(realisticExample()), 30);
        QCOMPARE(defaultPlotMode(Stage::Widen, broad->plot(Stage::Widen), 30), PlotMode::Vocabulary);
        QCOMPARE(defaultPlotMode(Stage::RepetitionPenalty, broad->plot(Stage::RepetitionPenalty), 30), PlotMode::Bars);
        QCOMPARE(defaultPlotMode(Stage::PresenceFrequency, broad->plot(Stage::PresenceFrequency), 30), PlotMode::Bars);
        QCOMPARE(defaultPlotMode(Stage::Temperature, broad->plot(Stage::Temperature), 30), PlotMode::Bars);
        QCOMPARE(defaultPlotMode(Stage::TopK, broad->plot(Stage::TopK), 30), PlotMode::Vocabulary);
        QCOMPARE(defaultPlotMode(Stage::TopP, broad->plot(Stage::TopP), 30), PlotMode::Vocabulary);  // 100 candidates
        QCOMPARE(defaultPlotMode(Stage::Softmax, broad->plot(Stage::Softmax), 30), PlotMode::Bars);
        // A row the bars show whole: bars everywhere.
        const auto small = viewOf(traceOf(workedExample()), 30);
        for (const auto& data : small->stages) QCOMPARE(defaultPlotMode(data.stage, data, 30), PlotMode::Bars);
        // The plot follows the default, and the override.
        StagePlot plot(Stage::TopK);
        plot.showView(broad, -1, false);
        QCOMPARE(plot.mode(), PlotMode::Vocabulary);
        QVERIFY(plot.graphNamed(QStringLiteral("vocab_kept")));
        QVERIFY(plot.graphNamed(QStringLiteral("vocab_dropped")));
        auto* cut = qobject_cast<QCPItemStraightLine*>(plot.item(QStringLiteral("cut")));
        QVERIFY(cut);
        QCOMPARE(cut->point1->coords().x(), static_cast<double>(broad->trace->params.top_k) + 0.5);
        QVERIFY(plot.item(QStringLiteral("kept_region")));
        plot.setModeOverride(PlotMode::Bars);
        QCOMPARE(plot.mode(), PlotMode::Bars);
        QVERIFY(plot.bars(QStringLiteral("kept")));
        QVERIFY(!plot.graphNamed(QStringLiteral("vocab_kept")));
    }

    void tooltipOfABarAndAPoint() {
        RankedToken token;
        token.id = 12345;
        token.logit = 9.75;
        token.prob_before = 0.25;
        token.prob_after = 0.5;
        token.kept = true;
        const QString text = candidateTooltip(Stage::TopK, token, 3, 128256, QStringLiteral("<b>"));
        for (const QString& part : {QStringLiteral("&lt;b&gt;"), QStringLiteral("id 12,345"), QStringLiteral("rank 3 of 128,256"),
                                    QStringLiteral("logit at this stage: 9.75"), QStringLiteral("q before: 0.25"),
                                    QStringLiteral("q after: 0.5"), QStringLiteral("kept by Top-k")}) {
            QVERIFY2(text.contains(part), qPrintable(text));
        }
        token.kept = false;
        QVERIFY(candidateTooltip(Stage::TopK, token, 3, 128256, QStringLiteral("x")).contains(QStringLiteral("dropped by Top-k")));

        // A bar: the worked example's top-k plot, bar 2 (id 3).
        const auto worked = viewOf(traceOf(workedExample()), 30);
        StagePlot bars(Stage::TopK);
        bars.showView(worked, -1, false);
        showAt(bars, 420, 360);
        const RankedToken& second = worked->plot(Stage::TopK).top[1];
        const QPointF bar(bars.xAxis->coordToPixel(2.0), bars.yAxis->coordToPixel(second.prob_after / 2.0));
        const QString bar_tip = bars.tooltipAt(bar);
        QVERIFY2(bar_tip.contains(QStringLiteral("(id %1)").arg(second.id)) && bar_tip.contains(QStringLiteral("rank 2 of 5")) &&
                     bar_tip.contains(QStringLiteral("kept by Top-k")),
                 qPrintable(bar_tip));
        QSignalSpy clicked(&bars, &StagePlot::tokenClicked);
        QTest::mouseClick(&bars, Qt::LeftButton, {}, bar.toPoint());
        QCOMPARE(clicked.size(), 1);
        QCOMPARE(clicked.at(0).at(0).value<std::int32_t>(), second.id);

        // A point: the realistic row's top-k plot, the point at rank 3 (kept; points further out lie a pixel apart).
        const auto broad = viewOf(traceOf(realisticExample()), 30);
        StagePlot full(Stage::TopK);
        full.showView(broad, -1, true);
        showAt(full, 480, 400);
        const CurvePoint& point = broad->plot(Stage::TopK).curve.points[2];
        const QPointF at(std::round(full.xAxis->coordToPixel(3.0)), std::round(full.yAxis->coordToPixel(point.shownProb())));
        const QString point_tip = full.tooltipAt(at);
        QVERIFY2(point_tip.contains(QStringLiteral("(id %1)").arg(QLocale(QLocale::English).toString(point.token.id))) &&
                     point_tip.contains(QStringLiteral("rank 3 of")) && point_tip.contains(QStringLiteral("kept by Top-k")),
                 qPrintable(point_tip));
        QSignalSpy clicked_full(&full, &StagePlot::tokenClicked);
        QTest::mouseClick(&full, Qt::LeftButton, {}, at.toPoint());
        QCOMPARE(clicked_full.size(), 1);
        QCOMPARE(clicked_full.at(0).at(0).value<std::int32_t>(), point.token.id);
        QVERIFY(full.tooltipAt(QPointF(2, 2)).isEmpty());  // outside the data area
    }

    void chosenLabelInsideForARankOneBar() {
        // The chosen token is rank 1 and the tallest bar: its word must fit above or beside it.
        SamplingParams params;
        params.seed = 0;
        params.top_k = 2;
        const SampleTrace trace = trace_once(std::vector<double>{6.0, 1.0, 0.5, 0.2, 0.1, 0.0}, params);
        QCOMPARE(trace.token, 0);
        const auto view = viewOf(trace, 30);
        for (const Stage stage : {Stage::Widen, Stage::TopK, Stage::Softmax}) {
            for (const QSize size : {QSize(250, 250), QSize(300, 330), QSize(520, 400)}) {
                StagePlot plot(stage);
                plot.showView(view, 0, false);
                showAt(plot, size.width(), size.height());
                auto* label = qobject_cast<QCPItemText*>(plot.item(QStringLiteral("chosen_label")));
                QVERIFY(label);
                // With its value: q after the stage, or the logit on Raw logits.
                const QString value = stage == Stage::Widen ? QStringLiteral("logit 6")
                                                            : QStringLiteral("q ") + QString::number(trace.stage(stage).prob_of(0), 'g', 3);
                QCOMPARE(label->text(), QStringLiteral("chosen, selected: ") + value);
                const QRectF rect = textRect(label);
                const QRectF area = QRectF(plot.axisRect()->rect());
                QVERIFY2(area.contains(rect), qPrintable(QStringLiteral("%1 at %2x%3: label %4,%5 %6x%7 outside %8,%9 %10x%11")
                                                             .arg(QString::number(static_cast<int>(stage)))
                                                             .arg(size.width())
                                                             .arg(size.height())
                                                             .arg(rect.x())
                                                             .arg(rect.y())
                                                             .arg(rect.width())
                                                             .arg(rect.height())
                                                             .arg(area.x())
                                                             .arg(area.y())
                                                             .arg(area.width())
                                                             .arg(area.height())));
                // The full word fits its rect.
                QVERIFY(rect.width() >= QFontMetricsF(label->font()).horizontalAdvance(label->text()));
            }
        }
    }

    void legendEntriesAreNeverCut() {
        // Kept, chosen, dropped, rest kept and rest dropped: five entries on a narrow plot.
        std::vector<double> logits(400);
        for (std::size_t i = 0; i < logits.size(); ++i) logits[i] = -0.01 * static_cast<double>(i);
        SamplingParams params;
        params.seed = 3;
        params.top_k = 200;
        const auto view = viewOf(trace_once(logits, params), 10);
        for (const int width : {250, 330, 600}) {
            StagePlot plot(Stage::TopK);
            plot.setModeOverride(PlotMode::Bars);
            plot.showView(view, -1, false);
            showAt(plot, width, 420);
            int entries = 0;
            for (int i = 0; i < plot.legend->itemCount(); ++i) {
                QCPAbstractLegendItem* item = plot.legend->item(i);
                if (!item) continue;  // an empty cell of the grid
                ++entries;
                QVERIFY2(item->outerRect().width() >= item->minimumOuterSizeHint().width(),
                         qPrintable(QStringLiteral("width %1: entry %2 cut").arg(width).arg(i)));
                QVERIFY(QRectF(plot.viewport()).contains(QRectF(item->outerRect())));
            }
            QVERIFY(entries >= 4);
        }
    }

    void topPStarClearOfItsLabel() {
        const auto view = viewOf(traceOf(workedExample()), 30);
        for (const QSize size : {QSize(250, 250), QSize(320, 300), QSize(500, 380)}) {
            StagePlot plot(Stage::TopP);
            plot.showView(view, -1, false);
            showAt(plot, size.width(), size.height());
            QCPGraph* star = plot.graphNamed(QStringLiteral("crossing"));
            QVERIFY(star);
            const auto& at = *star->data()->begin();
            const QPointF centre(plot.xAxis->coordToPixel(at.key), plot.yAxis2->coordToPixel(at.value));
            const QRectF star_rect(centre.x() - 7, centre.y() - 7, 14, 14);
            auto* label = qobject_cast<QCPItemText*>(plot.item(QStringLiteral("threshold_label")));
            QVERIFY(label);
            QVERIFY2(!textRect(label).intersects(star_rect), qPrintable(QStringLiteral("%1x%2").arg(size.width()).arg(size.height())));
            QVERIFY(QRectF(plot.axisRect()->rect()).contains(textRect(label)));
        }
    }

    void notesFoldOnAShortPlot() {
        const auto view = viewOf(traceOf(realisticExample()), 30);
        StagePlot plot(Stage::TopP);
        plot.setModeOverride(PlotMode::Bars);
        plot.showView(view, -1, false);
        showAt(plot, 300, 300);
        QVERIFY(plot.notesCollapsed());
        QVERIFY(plot.fullNoteText().contains(QStringLiteral("crosses p at rank")));
        QVERIFY(plot.toolTip().contains(QStringLiteral("crosses p at rank")));
        QVERIFY2(plot.axisRect()->rect().height() >= StagePlot::kMinDataHeight - 20,
                 qPrintable(QString::number(plot.axisRect()->rect().height())));
        showAt(plot, 400, 700);
        QVERIFY(!plot.notesCollapsed());
    }

    // The cached legend entries and text elements draw what QCustomPlot's own draw, pixel for
    // pixel, and ask the layout for the same sizes: names and texts of the stage plots (one line,
    // several lines, a new one, one seen before), in the plots' fonts.
    void cachedTextDrawsAsQCustomPlotDoes() {
        struct Rendered {
            QImage image;
            std::vector<QSize> sizes;    // each legend entry's and text element's minimum size
            std::vector<QRect> regions;  // where each was placed
        };
        const auto render = [](bool cached, const QStringList& texts, const QFont& font, double scale = 1.0) {
            QCustomPlot plot;
            plot.resize(420, 360);
            plot.legend->setVisible(true);
            plot.legend->setFont(font);
            plot.legend->setIconSize(18, 10);
            plot.legend->setBorderPen(Qt::NoPen);
            for (const QString& name : {QStringLiteral("kept"), QStringLiteral("chosen"), QStringLiteral("q before"),
                                        QStringLiteral("rest, dropped")}) {
                auto* bars = new QCPBars(plot.xAxis, plot.yAxis);
                bars->setName(name);
                bars->setBrush(QColor(0x00, 0x72, 0xB2));
            }
            auto* graph = plot.addGraph();
            graph->setName(QStringLiteral("kept: q after"));
            graph->setPen(QPen(QColor(0x00, 0x72, 0xB2), 1.0));
            int row = 0;
            for (const QString& text : texts) {
                plot.plotLayout()->insertRow(row);
                QCPTextElement* element = cached ? new TextElement(&plot, text, font) : new QCPTextElement(&plot, text, font);
                plot.plotLayout()->addElement(row++, 0, element);
            }
            if (cached) useCachedLegendItems(plot.legend);
            Rendered out;
            out.image = plot.toPixmap(420, 360, scale).toImage();
            std::vector<QCPLayoutElement*> elements;
            for (int i = 0; i < plot.legend->itemCount(); ++i) elements.push_back(plot.legend->item(i));
            for (int i = 0; i < row; ++i) elements.push_back(plot.plotLayout()->element(i, 0));
            for (QCPLayoutElement* element : elements) {
                out.sizes.push_back(element->minimumOuterSizeHint());
                out.regions.push_back(element->outerRect());
            }
            return out;
        };
        // The bounding box of what is drawn in `region` (logical pixels) of an image drawn at `scale`.
        const auto inkBox = [](const QImage& image, const QRect& region, int scale) {
            QRect box;
            const QRect area = QRect(region.topLeft() * scale, region.size() * scale) & image.rect();
            for (int y = area.top(); y <= area.bottom(); ++y) {
                for (int x = area.left(); x <= area.right(); ++x) {
                    if (qGray(image.pixel(x, y)) < 250) box |= QRect(x, y, 1, 1);
                }
            }
            return box;
        };
        QFont font = QApplication::font();
        font.setPointSizeF(8.0);
        const QStringList texts{QStringLiteral("5. Temperature"), QStringLiteral("Every logit divided by T."),
                                QStringLiteral("kept 128,256 of 128,256 (more: hover)\nsummed beyond the top 30: 128,226 kept (q 0.366)"),
                                QStringLiteral("Keep ids with q >= min_p x max q over the kept\nset."),
                                QStringLiteral("Every logit divided by T.")};
        for (const QFont& f : {font, QApplication::font()}) {
            const Rendered plain = render(false, texts, f);
            const Rendered cached = render(true, texts, f);
            QCOMPARE(cached.sizes, plain.sizes);
            QCOMPARE(cached.regions, plain.regions);
            QCOMPARE(cached.image, plain.image);
            // Again, from the caches.
            QCOMPARE(render(true, texts, f).image, plain.image);
            // At twice the size, as File > Export writes a PNG, the scaled glyphs are placed to a
            // subpixel differently: each entry's and text's ink in the same box, within a pixel.
            const Rendered plain2 = render(false, texts, f, 2.0);
            const Rendered cached2 = render(true, texts, f, 2.0);
            for (std::size_t i = 0; i < plain2.regions.size(); ++i) {
                const QRect a = inkBox(plain2.image, plain2.regions[i], 2);
                const QRect b = inkBox(cached2.image, cached2.regions[i], 2);
                QVERIFY2(!a.isEmpty() && a.marginsAdded(QMargins(1, 1, 1, 1)).contains(b) &&
                             b.marginsAdded(QMargins(1, 1, 1, 1)).contains(a),
                         qPrintable(QStringLiteral("element %1: ink at %2,%3 %4x%5 against %6,%7 %8x%9")
                                        .arg(i).arg(b.x()).arg(b.y()).arg(b.width()).arg(b.height())
                                        .arg(a.x()).arg(a.y()).arg(a.width()).arg(a.height())));
            }
        }
        // The legend really holds the cached kind.
        QCustomPlot plot;
        new QCPBars(plot.xAxis, plot.yAxis);
        useCachedLegendItems(plot.legend);
        QVERIFY(dynamic_cast<LegendItem*>(plot.legend->item(0)));
    }

    // The labels on the plots (ItemText) draw as QCustomPlot's own QCPItemText: the same pixels at
    // 1x over alignments, padding, a box, several lines and a turn; at 2x each label's ink within a
    // pixel of it. And the size placeLabels places a label by is QFontMetricsF's.
    void cachedItemTextDrawsAsQCustomPlotDoes() {
        struct Label {
            QString text;
            QPointF at;  // axis rect ratio
            Qt::Alignment position;
            Qt::Alignment text_alignment;
            QMargins padding;
            bool box;
            double rotation;
        };
        const std::vector<Label> labels{
            {QStringLiteral("chosen: q 0.0274"), {0.2, 0.2}, Qt::AlignHCenter | Qt::AlignBottom, Qt::AlignLeft, {2, 1, 2, 1}, true, 0.0},
            {QStringLiteral("k = 100\nranks 1-100 kept"), {0.7, 0.3}, Qt::AlignLeft | Qt::AlignTop, Qt::AlignLeft, {2, 1, 2, 1}, true, 0.0},
            {QStringLiteral("crossing rank 28\ncumulative 0.903 >= p 0.9\nranks 1-28"), {0.5, 0.6}, Qt::AlignLeft | Qt::AlignVCenter,
             Qt::AlignLeft, {0, 0, 0, 0}, false, 0.0},
            {QStringLiteral("off: top_p = 1\n(off at >= 1)"), {0.5, 0.85}, Qt::AlignCenter, Qt::AlignCenter, {0, 0, 0, 0}, false, 0.0},
            {QStringLiteral("0.366 \u2191"), {0.9, 0.1}, Qt::AlignRight | Qt::AlignTop, Qt::AlignRight, {0, 0, 0, 5}, false, 0.0},
            {QStringLiteral("u = 0.834543"), {0.3, 0.8}, Qt::AlignLeft | Qt::AlignBottom, Qt::AlignLeft, {3, 2, 3, 2}, true, 90.0},
        };
        const auto render = [&labels](bool cached, double scale) {
            QCustomPlot plot;
            plot.resize(420, 300);
            QFont font = QApplication::font();
            font.setPointSizeF(7.5);
            for (const Label& label : labels) {
                QCPItemText* item = cached ? new ItemText(&plot) : new QCPItemText(&plot);
                item->setFont(font);
                item->setText(label.text);
                item->position->setType(QCPItemPosition::ptAxisRectRatio);
                item->position->setCoords(label.at);
                item->setPositionAlignment(label.position);
                item->setTextAlignment(label.text_alignment);
                item->setPadding(label.padding);
                item->setRotation(label.rotation);
                if (label.box) {
                    item->setBrush(QBrush(QColor(255, 255, 255, 215)));
                    item->setPen(QPen(QColor(0xD5, 0x5E, 0x00)));
                }
            }
            return plot.toPixmap(420, 300, scale).toImage();
        };
        QCOMPARE(render(true, 1.0), render(false, 1.0));
        QCOMPARE(render(true, 1.0), render(false, 1.0));  // again, from the cache
        // At 2x the glyphs are placed to a subpixel differently: the ink within a pixel.
        const QImage plain = render(false, 2.0);
        const QImage cached = render(true, 2.0);
        QCOMPARE(cached.size(), plain.size());
        const auto ink = [](const QImage& image) {
            QRect box;
            for (int y = 0; y < image.height(); ++y) {
                for (int x = 0; x < image.width(); ++x) {
                    if (qGray(image.pixel(x, y)) < 200 && qRed(image.pixel(x, y)) == qGreen(image.pixel(x, y))) box |= QRect(x, y, 1, 1);
                }
            }
            return box;
        };
        const QRect a = ink(plain);
        const QRect b = ink(cached);
        QVERIFY(!a.isEmpty() && a.marginsAdded(QMargins(1, 1, 1, 1)).contains(b) && b.marginsAdded(QMargins(1, 1, 1, 1)).contains(a));
        // The size a label is placed by.
        QCustomPlot plot;
        auto* item = new ItemText(&plot);
        item->setText(labels[1].text);
        const QSizeF expected =
            QFontMetricsF(item->font()).boundingRect(QRectF(0, 0, 10000, 10000), Qt::AlignLeft | Qt::AlignTop, item->text()).size();
        QCOMPARE(item->textSize(), expected);
    }

    // Axis titles from the cache (useCachedAxisLabel) land where QCustomPlot puts its own, with the
    // same margins: the same pixels at 1x on all four sides, with tick labels outside, inside,
    // turned or none, an offset and padding, over the titles the plots show; at 2x the ink within
    // a pixel.
    void cachedAxisTitlesDrawAsQCustomPlotDoes() {
        const auto render = [](bool cached, int variant, double scale) {
            QCustomPlot plot;
            plot.resize(440, 320);
            QFont font = QApplication::font();
            font.setPointSizeF(8.5);
            for (QCPAxis* axis : {plot.xAxis, plot.yAxis, plot.xAxis2, plot.yAxis2}) {
                if (cached) useCachedAxisLabel(axis);
                axis->setVisible(true);
                axis->setLabelFont(font);
            }
            plot.xAxis->setLabel(QStringLiteral("rank (logit desc, id asc)"));
            plot.yAxis->setLabel(QStringLiteral("probability"));
            plot.xAxis2->setLabel(QStringLiteral("cumulative q"));
            plot.yAxis2->setLabel(QStringLiteral("penalty"));
            plot.xAxis->setRange(0.3, 30.6);
            plot.yAxis->setRange(0.0, 0.334);
            if (variant == 1) {
                plot.yAxis->setTickLabelSide(QCPAxis::lsInside);
                plot.xAxis->setOffset(4);
                plot.xAxis->setLabelPadding(9);
                plot.yAxis2->setTickLabels(false);
            }
            if (variant == 4) {
                plot.yAxis->setLabel(QStringLiteral("cumulative q"));
                plot.yAxis->setRange(0.0, 1.05);
                plot.yAxis2->setLabel(QStringLiteral("probability"));
            }
            if (variant == 3) {
                plot.xAxis->setLabel(QStringLiteral("tokens in rank order (logit desc, id asc)"));
                plot.yAxis->setLabel(QStringLiteral("logit (as given)"));
                plot.xAxis2->setLabel(QStringLiteral("final kept ids, ascending (ticks show ids)"));
                plot.yAxis2->setLabel(QStringLiteral("cumulative q"));
            }
            if (variant == 2) {
                plot.xAxis->setTickLabelRotation(-45);
                plot.xAxis->setLabel(QStringLiteral("tokens by rank"));
                plot.yAxis->setTicks(false);
            }
            return std::make_pair(plot.toPixmap(440, 320, scale).toImage(), plot.axisRect()->rect());
        };
        // The ink of `image` (drawn at 2x) in a margin of the axis rect `inner` (logical pixels).
        const auto inkIn = [](const QImage& image, const QRect& margin) {
            QRect box;
            const QRect area = QRect(margin.topLeft() * 2, margin.size() * 2) & image.rect();
            for (int y = area.top(); y <= area.bottom(); ++y) {
                for (int x = area.left(); x <= area.right(); ++x) {
                    if (qGray(image.pixel(x, y)) < 200) box |= QRect(x, y, 1, 1);
                }
            }
            return box;
        };
        for (int variant = 0; variant < 5; ++variant) {
            const auto plain = render(false, variant, 1.0);
            const auto cached = render(true, variant, 1.0);
            QCOMPARE(cached.second, plain.second);  // the same margins
            QCOMPARE(cached.first, plain.first);
            // At 2x (File > Export) the glyphs are placed to a subpixel differently: each side's ink within a pixel.
            const QImage plain2 = render(false, variant, 2.0).first;
            const QImage cached2 = render(true, variant, 2.0).first;
            const QRect inner = plain.second;
            const QRect all(0, 0, 440, 320);
            for (const QRect& margin : {QRect(QPoint(0, 0), QPoint(inner.left() - 1, all.bottom())),
                                        QRect(QPoint(inner.right() + 1, 0), all.bottomRight()),
                                        QRect(QPoint(inner.left(), 0), QPoint(inner.right(), inner.top() - 1)),
                                        QRect(QPoint(inner.left(), inner.bottom() + 1), QPoint(inner.right(), all.bottom()))}) {
                const QRect a = inkIn(plain2, margin);
                const QRect b = inkIn(cached2, margin);
                QVERIFY2((a.isEmpty() && b.isEmpty()) ||
                             (a.marginsAdded(QMargins(1, 1, 1, 1)).contains(b) && b.marginsAdded(QMargins(1, 1, 1, 1)).contains(a)),
                         qPrintable(QStringLiteral("variant %1: ink %2,%3 %4x%5 against %6,%7 %8x%9")
                                        .arg(variant).arg(b.x()).arg(b.y()).arg(b.width()).arg(b.height())
                                        .arg(a.x()).arg(a.y()).arg(a.width()).arg(a.height())));
            }
        }
        QCustomPlot plot;
        QVERIFY(!usesCachedAxisLabel(plot.xAxis));
        useCachedAxisLabel(plot.xAxis);
        QVERIFY(usesCachedAxisLabel(plot.xAxis));
    }

    void skippedAfterGreedySaysSo() {
        Example example = workedExample();
        example.params.temperature = 0.0;
        const auto view = viewOf(traceOf(example), 30);
        StagePlot plot(Stage::TopP);
        plot.showView(view, -1, false);
        QVERIFY2(plot.titleText().endsWith(QStringLiteral("Top-p: skipped (after greedy)")), qPrintable(plot.titleText()));
        StagePlot off(Stage::RepetitionPenalty);
        off.showView(view, -1, false);
        QVERIFY(off.titleText().endsWith(QStringLiteral(": off")));
    }
};

QTEST_MAIN(StagePlotFullTest)
#include "test_stage_plot_full.moc"
