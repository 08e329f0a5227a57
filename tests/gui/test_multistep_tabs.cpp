// The Speculative and Beam tabs, driven offscreen through their real widgets
// on a small model built here (so Debian's model need not be installed):
// each speculative round's columns show min(1, p/q) and u as the engine's own
// run from the same start has them, the residual normalize(max(0, p - q))
// recomputed here from the round's rows, and the running rate against
// sum min(p, q); the beam tree has a node per candidate drawn, pruned ones
// painted grey, the best hypothesis's path highlighted as the engine ranks
// it; and out-of-range k, width or step limits are refused with one line
// while everything stays as it was.
#include <QtTest>

#include <algorithm>
#include <map>

#include <QCheckBox>
#include <QComboBox>
#include <QLineEdit>
#include <QProcess>
#include <QPushButton>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTextDocumentFragment>

#include "engine/generation/beam.h"
#include "engine/generation/speculative.h"
#include "engine/models/ngram_model.h"
#include "tests/support/ngram_builder.h"
#include "tests/support/typing.h"
#include "ui/common/palette.h"
#include "ui/multistep/beam_tree.h"
#include "ui/multistep/speculative_round_view.h"
#include "ui/multistep/uniform_strip.h"
#include "ui/window/main_window.h"

using namespace samplescope;
using namespace samplescope::ui;
using samplescope::test::typeAndEnter;

namespace {

// The tiny model with a longer tail of words, as the Generate tab's test has it: "</s> <s> a b c d", then e..l.
testing::TinyNgram testModel() {
    testing::TinyNgram m = testing::tiny_trigram_model();
    for (char c = 'e'; c <= 'l'; ++c) {
        m.words.emplace_back(1, c);
        m.unigrams.push_back({-9500.0F - 400.0F * static_cast<float>(c - 'e'), -1000.0F});
    }
    return m;
}

// normalize(max(0, p - q)) over the union of both rows' ids, from the definition.
std::map<std::int32_t, double> residualOf(const SpecRow& p, const SpecRow& q) {
    std::map<std::int32_t, double> out;
    double total = 0.0;
    for (std::size_t i = 0; i < p.ids.size(); ++i) {
        const double d = std::max(0.0, p.probs[i] - row_prob(q, p.ids[i]));
        if (d > 0.0) {
            out[p.ids[i]] = d;
            total += d;
        }
    }
    for (auto& [id, value] : out) value /= total;
    return out;
}

double overlapOf(const SpecRow& p, const SpecRow& q) {
    double sum = 0.0;
    for (std::size_t i = 0; i < p.ids.size(); ++i) sum += std::min(p.probs[i], row_prob(q, p.ids[i]));
    return sum;
}

// The colour most of a box's inside is painted in: its fill.
QColor fillOf(const QImage& image, const QRect& box) {
    std::map<QRgb, int> counts;
    for (int y = box.top() + 3; y <= box.bottom() - 3; ++y) {
        for (int x = box.left() + 3; x <= box.right() - 3; ++x) ++counts[image.pixel(x, y)];
    }
    return QColor(std::max_element(counts.begin(), counts.end(), [](auto& a, auto& b) { return a.second < b.second; })->first);
}

}  // namespace

class MultistepTabsTest : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<MainWindow> window_;
    std::shared_ptr<const NgramModel> model_;

    SpeculativeView* spec() const { return window_->speculativeView(); }
    BeamView* beam() const { return window_->beamView(); }
    Session& session() const { return window_->session(); }
    // The banner's line as plain text (it is shown as rich text).
    QString banner() const {
        return window_->errorBanner()->isHidden() ? QString()
                                                  : QTextDocumentFragment::fromHtml(window_->errorBanner()->message()).toPlainText();
    }

    void show(QWidget* view) {
        window_->showView(view);
        QVERIFY(window_->waitUntilDrawn());
        QCOMPARE(window_->multistepModel()->state(), ModelSlot::State::Ready);
    }
    void press(QAbstractButton* button) {
        QVERIFY2(button->isEnabled(), qPrintable(button->text()));
        QTest::mouseClick(button, Qt::LeftButton);
        QVERIFY(window_->waitUntilDrawn());
    }
    void typeIntoBox(QSpinBox* box, const QString& text) {
        box->setFocus();
        box->selectAll();
        QTest::keyClicks(box, text);
        QTest::keyClick(box, Qt::Key_Return);
        QVERIFY(window_->waitUntilDrawn());
    }
    // The speculative run with the tab's settings below, as the engine runs it.
    Speculation engineRun(const char* prompt) const {
        SpeculativeOptions options;
        options.k = 3;
        options.preset = &spec_preset("spec");
        options.stop_at_end = false;
        return Speculation(model_, model_->restricted(1), session().request().pipeline(), session().params(),
                           model_->tokenize(prompt), options);
    }
    void startSpeculation(const char* prompt) {
        show(spec());
        spec()->draftBox()->setCurrentIndex(spec()->draftBox()->findData(QStringLiteral("ngram:unigram")));
        spec()->kBox()->setValue(3);
        spec()->rulesBox()->setCurrentIndex(spec()->rulesBox()->findData(QStringLiteral("spec")));
        spec()->pastEndBox()->setChecked(true);
        typeAndEnter(spec()->promptEntry(), QString::fromLatin1(prompt));
        QVERIFY(window_->waitUntilDrawn());
        QVERIFY(spec()->hasRun());
        window_->errorBanner()->hide();
    }
    void startBeam(int width, int steps) {
        beam()->promptEntry()->setText(QStringLiteral("a"));  // the default prompt's words are not the tiny model's
        show(beam());
        beam()->widthBox()->setValue(width);
        beam()->stepsBox()->setValue(steps);
        QVERIFY(window_->waitUntilDrawn());
        typeAndEnter(beam()->promptEntry(), QStringLiteral("a"));
        QVERIFY(window_->waitUntilDrawn());
        QVERIFY(beam()->hasSearch());
        QCOMPARE(beam()->promptWords().size(), std::size_t{1});
        window_->errorBanner()->hide();
    }

private slots:
    void initTestCase() {
        const std::string path = testing::write_temp_file(testing::write_ngram_trie(testModel()), "multistep-tabs.lm.bin");
        qputenv("SAMPLESCOPE_NGRAM_MODEL", QByteArray::fromStdString(path));
        model_ = NgramModel::load(path);
    }
    void init() {
        window_ = std::make_unique<MainWindow>(MainWindowOptions{false});
        window_->resize(1600, 1000);
        window_->show();
        QVERIFY(window_->waitUntilDrawn());
    }
    void cleanup() { window_.reset(); }

    void tabsAreThere() {
        QCOMPARE(window_->views()->tabText(window_->views()->indexOf(spec())), QStringLiteral("Speculative"));
        QCOMPARE(window_->views()->tabText(window_->views()->indexOf(beam())), QStringLiteral("Beam"));
    }

    // Every round's columns against the engine's run: min(1, p/q), u, the verdict,
    // the residual after a rejection, the bonus row after none, the running rates.
    void speculativeRoundsShowTheEnginesNumbers() {
        startSpeculation("a");
        Speculation engine = engineRun("a");
        std::size_t tested = 0, accepted = 0, rejections = 0, bonuses = 0;
        double expected = 0.0;
        for (int r = 0; r < 12; ++r) {
            press(spec()->roundButton());
            QCOMPARE(spec()->rounds().size(), static_cast<std::size_t>(r + 1));
            QCOMPARE(spec()->shownRound(), r);
            const SpeculativeRound want = engine.round();
            const SpecVerification& v = want.verification;
            const auto& columns = spec()->roundView()->columns();
            std::size_t c = 0;
            for (std::size_t i = 0; i < want.k; ++i, ++c) {
                QVERIFY(c < columns.size());
                SpecColumn* column = columns[c];
                QCOMPARE(column->position(), i);
                const double q = row_prob(want.rows.draft[i], v.positions[i].token);
                const double p = row_prob(want.rows.target[i], v.positions[i].token);
                const double rule = std::min(1.0, p / q);
                const SpecPositionRecord& shown = spec()->rounds().back().positions[i];
                QCOMPARE(shown.token, v.positions[i].token);
                QCOMPARE(shown.acceptance, rule);
                // The strip: the accept stretch is min(1, p/q) long, u marked where the engine drew it.
                QCOMPARE(column->strip()->stretches().at(0).width, rule);
                QCOMPARE(column->strip()->u(), v.positions[i].u);
                QCOMPARE(column->kind(), v.positions[i].tested ? SpecColumn::Kind::Tested : SpecColumn::Kind::Untested);
                if (v.positions[i].tested) {
                    QCOMPARE(*v.positions[i].u < rule, v.positions[i].accepted);
                    QVERIFY(column->verdictLabel()->text().contains(v.positions[i].accepted ? QStringLiteral("accepted") : QStringLiteral("rejected")));
                    ++tested;
                    accepted += v.positions[i].accepted ? 1 : 0;
                    expected += overlapOf(want.rows.target[i], want.rows.draft[i]);
                }
                if (i == v.final.position) {
                    // The final draw's column right after the rejected position.
                    ++c;
                    QVERIFY(c < columns.size());
                    SpecColumn* final = columns[c];
                    QCOMPARE(final->kind(), SpecColumn::Kind::Final);
                    QCOMPARE(final->strip()->u(), v.final.u);
                    const auto residual = residualOf(want.rows.target[i], want.rows.draft[i]);
                    QVERIFY(!final->bars().empty());
                    for (const SpecBar& bar : final->bars()) {
                        QVERIFY2(residual.count(bar.id), bar.text.c_str());
                        QVERIFY2(std::abs(bar.q - residual.at(bar.id)) < 1e-12, bar.text.c_str());
                    }
                    QVERIFY(final->titleLabel()->text().contains(QStringLiteral("Residual")));
                    ++rejections;
                }
            }
            if (v.final.bonus) {
                QVERIFY(c < columns.size());
                QCOMPARE(columns[c]->kind(), SpecColumn::Kind::Final);
                QVERIFY(columns[c]->titleLabel()->text().contains(QStringLiteral("Bonus")));
                for (const SpecBar& bar : columns[c]->bars()) QCOMPARE(bar.q, row_prob(want.rows.target[want.k], bar.id));
                ++bonuses;
            }
            // The running rate and its expectation, counted here.
            const auto* measured = spec()->acceptancePlot()->measured()->data().data();
            const auto* expectation = spec()->acceptancePlot()->expected()->data().data();
            QCOMPARE(measured->size(), r + 1);
            QCOMPARE((measured->constEnd() - 1)->value, static_cast<double>(accepted) / static_cast<double>(tested));
            QVERIFY(std::abs((expectation->constEnd() - 1)->value - expected / static_cast<double>(tested)) < 1e-12);
            QVERIFY(spec()->acceptanceLabel()->text().contains(QStringLiteral("Accepted %1 of %2").arg(accepted).arg(tested)));
        }
        // The unigram draft against the trigram target is rejected often, and accepted throughout now and then.
        QVERIFY2(rejections > 0, "no rejection in 12 rounds: the residual was never drawn");
        QCOMPARE(spec()->speculation().generated_text(), engine.generated_text());
        Q_UNUSED(bonuses);
    }

    void speculativeRefusesBadInput() {
        startSpeculation("a");
        press(spec()->roundButton());
        const auto rounds = spec()->rounds().size();
        const std::string text = spec()->speculation().generated_text();
        typeIntoBox(spec()->kBox(), QStringLiteral("99"));
        QCOMPARE(spec()->kBox()->value(), 3);
        QVERIFY2(banner().contains(QStringLiteral("k must be an integer in [1, 32], got \"99\"")), qPrintable(banner()));
        QVERIFY(!banner().contains(QLatin1Char('\n')));
        window_->errorBanner()->hide();
        typeIntoBox(spec()->kBox(), QStringLiteral("0"));
        QCOMPARE(spec()->kBox()->value(), 3);
        QVERIFY2(banner().contains(QStringLiteral("got \"0\"")), qPrintable(banner()));
        window_->errorBanner()->hide();
        spec()->start(QStringLiteral("a\u0001b"));
        QVERIFY(window_->waitUntilDrawn());
        QVERIFY(!banner().isEmpty());
        QCOMPARE(spec()->rounds().size(), rounds);
        QCOMPARE(spec()->speculation().generated_text(), text);
    }

    // The tree against the engine's search: a node per candidate drawn (pruned
    // ones past the first two of a beam summed in one), pruned boxes grey, the
    // best hypothesis's path marked and its last box filled blue.
    void beamTreeShowsTheSearch() {
        startBeam(2, 6);
        BeamOptions options;
        options.width = 2;
        options.steps = 6;
        BeamSearch engine(model_, model_->tokenize("a"), options);
        std::vector<BeamStep> steps;
        while (!engine.done()) steps.push_back(engine.step());
        const auto result = engine.result();
        QCOMPARE(beam()->steps().size(), steps.size());
        QCOMPARE(beam()->result().size(), result.size());
        QCOMPARE(beam()->result().front().tokens, result.front().tokens);
        QCOMPARE(beam()->result().front().score, result.front().score);

        const auto& tree = beam()->treeView()->tree();
        QVERIFY(tree.has_value());
        std::size_t expected_nodes = 1, pruned_drawn = 0;
        for (const BeamStep& step : steps) {
            std::map<std::size_t, std::size_t> pruned;  // per beam
            for (const BeamCandidate& c : step.candidates) {
                std::vector<std::int64_t> tokens = step.beams[c.beam].tokens;
                tokens.push_back(c.token);
                if (c.fate == CandidateFate::Pruned && pruned[c.beam]++ >= BeamTree::kPrunedShown) continue;
                ++expected_nodes;
                const int at = tree->find(tokens);
                QVERIFY(at > 0);
                QCOMPARE(tree->node(at).logprob, c.logprob);
                QCOMPARE(tree->node(at).fate, c.fate);
                pruned_drawn += c.fate == CandidateFate::Pruned ? 1 : 0;
            }
            for (const auto& [b, n] : pruned) expected_nodes += n > BeamTree::kPrunedShown ? 1 : 0;
        }
        QCOMPARE(tree->nodes().size(), expected_nodes);
        QVERIFY(pruned_drawn > 0);

        const QImage image = beam()->treeView()->grab().toImage();
        const QColor grey(0xF4, 0xF4, 0xF4);
        int greys = 0;
        for (std::size_t i = 1; i < tree->nodes().size(); ++i) {
            const BeamNode& node = tree->nodes()[i];
            const QRect box = beam()->treeView()->nodeRect(static_cast<int>(i));
            QVERIFY(box.isValid());
            // Greyed: pruned, or ended without being taken as a hypothesis.
            const bool pruned = node.fate == CandidateFate::Pruned || node.fate == CandidateFate::NotFinished || node.hidden > 0;
            if (pruned) {
                QCOMPARE(fillOf(image, box), grey);
                ++greys;
            } else {
                QVERIFY(fillOf(image, box) != grey);
            }
        }
        QVERIFY(greys > 0);
        // The best hypothesis: every node of its path marked, its last one filled blue, its text beside.
        const int best = tree->find(result.front().tokens);
        QVERIFY(best > 0);
        QCOMPARE(tree->node(best).hypothesis, 0);
        QCOMPARE(fillOf(image, beam()->treeView()->nodeRect(best)), QColor(palette::kBlue));
        int chosen = 0;
        for (const auto& node : tree->nodes()) chosen += node.chosen ? 1 : 0;
        QCOMPARE(static_cast<std::size_t>(chosen), result.front().tokens.size() + 1);  // and the root
        for (int at = best; at >= 0; at = tree->node(at).parent) QVERIFY(tree->node(at).chosen);
    }

    // The tree's layout: a column per step, each parent's children from its own row down, so a
    // column is as tall as its own nodes need. (A row for every leaf of the whole tree, as the
    // first layout had, put later children far below their parents.)
    void beamTreeIsCompact() {
        startBeam(4, 8);
        const BeamTreeView* view = beam()->treeView();
        const auto& tree = view->tree();
        QVERIFY(tree.has_value());
        const auto& nodes = tree->nodes();
        std::size_t leaves = 0;
        std::map<std::size_t, std::vector<int>> columns;  // step -> nodes, top to bottom
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            leaves += nodes[i].children.empty() ? 1 : 0;
            columns[nodes[i].step].push_back(static_cast<int>(i));
        }
        const int row = view->nodeRect(BeamTree::kRoot).height();
        for (auto& [step, ids] : columns) {
            std::sort(ids.begin(), ids.end(), [&](int a, int b) { return view->nodeRect(a).top() < view->nodeRect(b).top(); });
            for (std::size_t k = 0; k < ids.size(); ++k) {
                const QRect box = view->nodeRect(ids[k]);
                QVERIFY(box.isValid());
                const int parent = nodes[static_cast<std::size_t>(ids[k])].parent;
                if (parent < 0) continue;
                const QRect above = k > 0 ? view->nodeRect(ids[k - 1]) : QRect();
                // Never above its parent; right under the node before it, or level with its parent.
                QVERIFY(box.top() >= view->nodeRect(parent).top());
                if (k > 0) {
                    QVERIFY(box.top() > above.bottom());  // no overlap
                    // The children keep their parents' order down the column.
                    QVERIFY(view->nodeRect(parent).top() >= view->nodeRect(nodes[static_cast<std::size_t>(ids[k - 1])].parent).top());
                }
                const int gap = k > 0 ? box.top() - above.bottom() : 0;
                QVERIFY2(k == 0 || gap <= row / 2 || box.top() == view->nodeRect(parent).top(),
                         qPrintable(QStringLiteral("step %1 node %2: a gap of %3 px").arg(step).arg(ids[k]).arg(gap)));
            }
        }
        // Far fewer rows than leaves.
        const int rows_tall = view->sizeHint().height() / row;
        QVERIFY2(static_cast<std::size_t>(rows_tall) * 2 < leaves,
                 qPrintable(QStringLiteral("%1 rows for %2 leaves").arg(rows_tall).arg(leaves)));
    }

    void beamRefusesBadInput() {
        startBeam(2, 6);
        const auto tokens = beam()->result().front().tokens;
        const auto nodes = beam()->treeView()->tree()->nodes().size();
        typeIntoBox(beam()->widthBox(), QStringLiteral("0"));
        QCOMPARE(beam()->widthBox()->value(), 2);
        QVERIFY2(banner().contains(QStringLiteral("width must be an integer in [1, 64], got \"0\"")), qPrintable(banner()));
        QVERIFY(!banner().contains(QLatin1Char('\n')));
        window_->errorBanner()->hide();
        typeIntoBox(beam()->widthBox(), QStringLiteral("65"));
        QCOMPARE(beam()->widthBox()->value(), 2);
        QVERIFY2(banner().contains(QStringLiteral("got \"65\"")), qPrintable(banner()));
        window_->errorBanner()->hide();
        typeIntoBox(beam()->stepsBox(), QStringLiteral("101"));
        QCOMPARE(beam()->stepsBox()->value(), 6);
        QVERIFY2(banner().contains(QStringLiteral("steps must be an integer in [1, 100], got \"101\"")), qPrintable(banner()));
        window_->errorBanner()->hide();
        typeAndEnter(beam()->lengthPenaltyEntry(), QStringLiteral("x"));
        QVERIFY(window_->waitUntilDrawn());
        QVERIFY2(banner().contains(QStringLiteral("length-penalty")), qPrintable(banner()));
        QCOMPARE(beam()->lengthPenaltyEntry()->text(), QStringLiteral("1"));
        QCOMPARE(beam()->result().front().tokens, tokens);
        QCOMPARE(beam()->treeView()->tree()->nodes().size(), nodes);
    }

    // The app opens either tab with --tab (on --prompt, --steps rounds or the step limit); bad flags exit 2 in one line.
    void theAppOpensEitherTab() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        for (const QString& tab : {QStringLiteral("speculative"), QStringLiteral("beam")}) {
            const QString png = dir.filePath(tab + QStringLiteral(".png"));
            QProcess app;
            app.start(QStringLiteral(SAMPLESCOPE_APP), {QStringLiteral("--screenshot"), png, QStringLiteral("--tab"), tab,
                                                         QStringLiteral("--prompt"), QStringLiteral("a"), QStringLiteral("--steps"),
                                                         QStringLiteral("3"), QStringLiteral("--window-size"), QStringLiteral("1280x720")});
            QVERIFY(app.waitForFinished(60000));
            QVERIFY2(app.exitCode() == 0, app.readAllStandardError().constData());
            QCOMPARE(QImage(png).size(), QSize(1280, 720));
        }
        const QList<QStringList> bad{
            {QStringLiteral("--tab"), QStringLiteral("beam"), QStringLiteral("--steps"), QStringLiteral("0")},
            {QStringLiteral("--tab"), QStringLiteral("beam"), QStringLiteral("--steps"), QStringLiteral("101")},
            {QStringLiteral("--tab"), QStringLiteral("speculative"), QStringLiteral("--steps"), QStringLiteral("1001")},
            {QStringLiteral("--tab"), QStringLiteral("speculative"), QStringLiteral("--values"), QStringLiteral("1,2")},
        };
        for (const QStringList& flags : bad) {
            QProcess refused;
            refused.start(QStringLiteral(SAMPLESCOPE_APP), QStringList{QStringLiteral("--screenshot"), dir.filePath(QStringLiteral("bad.png"))} + flags);
            QVERIFY(refused.waitForFinished(60000));
            const QByteArray err = refused.readAllStandardError();
            QVERIFY2(refused.exitCode() == 2, qPrintable(flags.join(QLatin1Char(' ')) + QStringLiteral(": ") + QString::fromUtf8(err)));
            QCOMPARE(err.count('\n'), 1);
        }
    }
};

QTEST_MAIN(MultistepTabsTest)
#include "test_multistep_tabs.moc"
