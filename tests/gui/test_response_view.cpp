// The Response tab, offscreen, driven through its widgets: every example
// opens; a click on a token shows its chart (the alternatives, the token, the
// "rest" bar) and each step's verdict; the fields and the pipeline re-explain;
// bad input keeps what was open; File > Open response... and a token opened
// in the main view as a row, labelled an approximation.
#include <QtTest>

#include <QAction>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTextBlock>
#include <QTextBrowser>

#include <cstdlib>
#include <fstream>

#include <qcustomplot.h>

#include "engine/responses/response_row.h"
#include "ui/responses/response_view.h"
#include "ui/window/main_window.h"

using namespace samplescope;
using namespace samplescope::ui;

namespace {

const QString kExamples = QStringLiteral(SAMPLESCOPE_TEST_DATA "/../../examples/responses/");

// Clicks the text of the token at `position` in the browser, as a user would.
bool clickToken(QTextBrowser* browser, int position) {
    const QString href = QStringLiteral("#t%1").arg(position);
    for (QTextBlock block = browser->document()->begin(); block.isValid(); block = block.next()) {
        for (auto it = block.begin(); !it.atEnd(); ++it) {
            const QTextFragment fragment = it.fragment();
            if (fragment.charFormat().anchorHref() != href) continue;
            QTextCursor cursor(browser->document());
            cursor.setPosition(fragment.position() + std::min(1, fragment.length() - 1));
            const QPoint at = browser->cursorRect(cursor).center();
            QTest::mouseClick(browser->viewport(), Qt::LeftButton, {}, at);
            return true;
        }
    }
    return false;
}

// The cell of the step whose parameter starts `step` ("top_k").
QString cell(QTableWidget* table, const QString& step, int column) {
    for (int row = 0; row < table->rowCount(); ++row) {
        if (table->item(row, 0)->text().startsWith(step)) return table->item(row, column)->text();
    }
    return QStringLiteral("absent");
}

int barCount(QCustomPlot* chart) {
    int n = 0;
    for (int i = 0; i < chart->plottableCount(); ++i) {
        if (auto* bars = qobject_cast<QCPBars*>(chart->plottable(i))) n += bars->data()->size();
    }
    return n;
}

}  // namespace

class TestResponseView : public QObject {
    Q_OBJECT

private slots:
    void opensEveryExample() {
        ResponseView view;
        view.resize(1100, 650);
        view.show();
        const struct {
            const char* file;
            std::size_t tokens;
        } cases[] = {{"openai_chat.json", 9},          {"vllm_chat_stream.txt", 8},
                     {"openai_completion.json", 6},    {"llamacpp_completion.json", 5},
                     {"llamacpp_post_sampling_stream.txt", 3}, {"llamacpp_legacy.json", 5},
                     {"vllm_request_output.json", 5}, {"hf_logits.safetensors", 7},
                     {"vllm_processed_chat.json", 4}};
        for (const auto& c : cases) {
            QVERIFY2(view.openResponseFile(kExamples + c.file), qPrintable(view.errorText()));
            QCOMPARE(view.explanation()->tokens.size(), c.tokens);
            QVERIFY(view.summaryText().contains(QStringLiteral("%1 tokens checked").arg(c.tokens)));
            QCOMPARE(view.selectedPosition(), 0);
        }
    }

    void aClickedTokenShowsItsChartAndSteps() {
        ResponseView view;
        view.resize(1100, 650);
        view.show();
        QVERIFY(view.openResponseFile(kExamples + "vllm_chat_stream.txt"));
        QVERIFY(view.openRequestFile(kExamples + "vllm_chat_stream.request.json"));
        QVERIFY(view.summaryText().startsWith("8 tokens checked: 7 possible, 1 excluded (position 4)"));
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY(clickToken(view.textView(), 4));
        QCOMPARE(view.selectedPosition(), 4);
        QVERIFY(view.tokenLabel()->text().contains("excluded"));
        // The two listed above it, the token itself, and the rest as one bar.
        QCOMPARE(barCount(view.chart()), 4);
        QCOMPARE(cell(view.stageTable(), "top_k", 1), QString("excluded"));
        QVERIFY(cell(view.stageTable(), "top_k", 3).contains("top_k excludes it"));
        // The spin box moves along the tokens too.
        view.positionSpin()->setValue(5);
        QCOMPARE(view.selectedPosition(), 5);
        QCOMPARE(cell(view.stageTable(), "top_k", 1), QString("possible"));
    }

    void theFieldsAndThePipelineReexplain() {
        ResponseView view;
        view.show();
        QVERIFY(view.openResponseFile(kExamples + "vllm_chat_stream.txt"));
        QVERIFY(view.openRequestFile(kExamples + "vllm_chat_stream.request.json"));
        QCOMPARE(view.explanation()->excluded, std::size_t{1});
        QLineEdit* top_k = view.paramEdit(Param::TopK);
        QCOMPARE(top_k->text(), QString("2"));
        top_k->selectAll();
        QTest::keyClicks(top_k, "3");
        QTest::keyClick(top_k, Qt::Key_Return);
        QCOMPARE(view.explanation()->excluded, std::size_t{0});
        // A value the table refuses: the banner's line, the field back, nothing else changed.
        top_k->selectAll();
        QTest::keyClicks(top_k, "-4");
        QTest::keyClick(top_k, Qt::Key_Return);
        QVERIFY(view.errorText().contains("top_k"));
        QCOMPARE(top_k->text(), QString("3"));
        QCOMPARE(view.explanation()->excluded, std::size_t{0});
        // Another pipeline: SGLang's numbers are after temperature by default.
        view.pipelineCombo()->setCurrentIndex(view.pipelineCombo()->findData(QString("sglang")));
        QCOMPARE(view.setup()->settings.pipeline.name, std::string("sglang"));
        QCOMPARE(std::string(view.setup()->settings.mode->mode), std::string("logprob"));
        // A mode the file contradicts is refused and the combo goes back.
        QVERIFY(view.openResponseFile(kExamples + "llamacpp_post_sampling_stream.txt"));
        const int before = view.modeCombo()->currentIndex();
        view.modeCombo()->setCurrentIndex(view.modeCombo()->findData(QString("n_probs")));
        QVERIFY(view.errorText().contains("contradicts"));
        QCOMPARE(view.modeCombo()->currentIndex(), before);
    }

    void badInputKeepsWhatWasOpen() {
        ResponseView view;
        QVERIFY(view.openResponseFile(kExamples + "openai_chat.json"));
        const QString summary = view.summaryText();
        QTemporaryDir dir;
        const QString cut = dir.filePath("cut.json");
        std::ofstream(cut.toStdString()) << "{\"choices\": [{\"index\": 0, \"logprobs\": {\"content\": [";
        QSignalSpy errors(&view, &ResponseView::errorRaised);
        QVERIFY(!view.openResponseFile(cut));
        QCOMPARE(errors.size(), 1);
        QVERIFY(view.errorText().contains("malformed JSON at byte"));
        QVERIFY(view.errorText().contains("previous response is unchanged"));
        QCOMPARE(view.summaryText(), summary);
        QVERIFY(view.response()->source.ends_with("openai_chat.json"));
        QVERIFY(!view.openRequestFile(dir.filePath("missing.json")));
        QCOMPARE(view.summaryText(), summary);
    }

    void aTokenOpensInTheMainViewAsARow() {
        MainWindow window(MainWindowOptions{false});
        window.resize(1280, 720);
        QAction* open = window.findChild<QAction*>(QStringLiteral("action_open_response"));
        QVERIFY(open);
        ResponseView* view = window.responseView();
        QVERIFY(view->openResponseFile(kExamples + "vllm_chat_stream.txt"));
        view->selectPosition(4);
        QVERIFY(view->openRowButton()->isEnabled());
        QTest::mouseClick(view->openRowButton(), Qt::LeftButton);
        QVERIFY(window.waitUntilDrawn());
        // Three listed ids and the rest: labelled an approximation in the row, the title and the banner.
        QCOMPARE(window.session().vocabSize(), std::size_t{4});
        QCOMPARE(window.session().labels()->raw().back(), std::string(kRestLabel));
        QVERIFY(window.session().source().contains("approximation"));
        QVERIFY(!window.errorBanner()->isHidden());
        QVERIFY(window.errorBanner()->isWarning());
        QVERIFY(window.errorBanner()->message().contains("approximation"));
        QCOMPARE(window.selectedToken(), 2);  // " there", third by its number
        // SAMPLESCOPE_RESPONSE_SHOT=FILE.png saves the window so, to look at.
        if (const char* shot = std::getenv("SAMPLESCOPE_RESPONSE_SHOT")) window.saveScreenshot(QString::fromUtf8(shot));
        // A full row opens exactly, with no rest token.
        QVERIFY(view->openResponseFile(kExamples + "hf_logits.safetensors"));
        view->selectPosition(4);
        QVERIFY(window.openResponseRow());
        QCOMPARE(window.session().vocabSize(), std::size_t{16});
        QVERIFY(!window.session().source().contains("approximation"));
    }
};

QTEST_MAIN(TestResponseView)
#include "test_response_view.moc"
