// The window's file inputs: a binary file refused as a vocabulary (the labels
// stay), .npy uint16 data read as bfloat16 through the GUI's own option (and
// a refusal that names that option, not the CLI's flag), and file dialogs
// that start in the folder last used with their kind.
#include <QtTest>

#include <QAction>
#include <QApplication>
#include <QFileDialog>
#include <QMenuBar>
#include <QProcess>
#include <QSettings>
#include <QTemporaryDir>
#include <QTextDocumentFragment>
#include <QTimer>

#include "engine/base/input_error.h"
#include "engine/base/memory_budget.h"
#include "engine/io/logits_loader.h"
#include "engine/io/npy_writer.h"
#include "ui/window/dialog_folders.h"
#include "ui/window/main_window.h"

using namespace samplescope;
using namespace samplescope::ui;

namespace {

// The banner's text without its markup.
QString bannerText(MainWindow& window) { return QTextDocumentFragment::fromHtml(window.errorBanner()->message()).toPlainText(); }

QAction* menuAction(QWidget& window, const QString& text) {
    for (QAction* action : window.findChildren<QAction*>()) {
        if (action->text().remove(QLatin1Char('&')) == text) return action;
    }
    return nullptr;
}

}  // namespace

class GuiFileInputsTest : public QObject {
    Q_OBJECT
private:
    QTemporaryDir dir_;

    QString write(const QString& name, const std::string& bytes) {
        const QString path = dir_.filePath(name);
        write_file_bytes(path.toStdString(), bytes);
        return path;
    }

private slots:
    void initTestCase() {
        QCoreApplication::setOrganizationName(QStringLiteral("SampleScopeTest"));
        QCoreApplication::setApplicationName(QStringLiteral("test_gui_file_inputs"));
        // Settings go to a folder of this test's own, never the user's.
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, dir_.filePath(QStringLiteral("settings")));
    }

    void binaryVocabularyIsRefusedAndTheLabelsStay() {
        MainWindow window(MainWindowOptions{false});
        QVERIFY(window.pasteLogitsText(QStringLiteral("1,2,3,4"), QStringLiteral("typed")));
        QVERIFY(window.openVocabularyFile(write(QStringLiteral("vocab.txt"), "alpha\nbeta\ngamma\ndelta\n")));
        QCOMPARE(window.session().labels()->label(1), std::string("beta"));
        const std::vector<double> row{0.5, 1.5, 2.5, 3.5};
        const QString npy = write(QStringLiteral("x.npy"), encode_npy({4}, row));
        QVERIFY(!window.openVocabularyFile(npy));
        QVERIFY(!window.errorBanner()->isHidden());
        QVERIFY(!window.errorBanner()->isWarning());
        QCOMPARE(bannerText(window),
                 QStringLiteral("Refused: ") + npy + QStringLiteral(": is a NumPy array (starts with \\x93NUMPY), not a vocabulary. "
                                      "The previous labels are unchanged."));
        QCOMPARE(window.session().labels()->label(1), std::string("beta"));
        QCOMPARE(window.session().vocabulary()->source, (dir_.filePath(QStringLiteral("vocab.txt")).toStdString()));
    }

    // The CLI's --max-memory as a menu entry: a file needing more than the limit as doubles is refused, a
    // bad limit is refused naming the menu entry and what was typed, and the limit in force stays.
    void memoryLimitForFilesFromTheMenu() {
        MainWindow window(MainWindowOptions{false});
        QVERIFY(menuAction(window, QStringLiteral("Memory limit for files...")) != nullptr);
        QCOMPARE(window.memoryLimit(), default_memory_budget());
        const std::vector<double> row(262144, 0.5);  // 2 MiB as doubles
        const QString path = write(QStringLiteral("two_mib.npy"), encode_npy({row.size()}, row));
        QVERIFY(window.setMemoryLimitText(QStringLiteral("1M")));
        QCOMPARE(window.memoryLimit(), std::uint64_t{1} << 20);
        QVERIFY(!window.openLogitsFile(path));
        QVERIFY2(bannerText(window).contains(QStringLiteral("too large to load")), qPrintable(bannerText(window)));
        QVERIFY(window.setMemoryLimitText(QStringLiteral(" 4M ")));
        QVERIFY(window.openLogitsFile(path));
        QCOMPARE(window.session().logits()->size(), row.size());
        QVERIFY(!window.setMemoryLimitText(QStringLiteral("abc")));
        const QString message = bannerText(window);
        QVERIFY2(message.contains(QStringLiteral("File > \"Memory limit for files...\"")) && message.contains(QStringLiteral("\"abc\"")) &&
                     !message.contains(QStringLiteral("--max-memory")),
                 qPrintable(message));
        QCOMPARE(window.memoryLimit(), std::uint64_t{4} << 20);
    }

    void u2NpyOpensAsBfloat16ThroughTheGuiOption() {
        MainWindow window(MainWindowOptions{false});
        const std::vector<double> values{1.0, -2.5, 0.15625, 3.0};  // exact in bfloat16
        NpyWriteOptions options;
        options.format = {FloatType::BF16, false};
        options.bfloat16_descr = Bfloat16Descr::Uint16;
        const QString path = write(QStringLiteral("row_u2.npy"), encode_npy({4}, values, options));

        // Refused without the option, naming the menu entry that reads it.
        QVERIFY(!window.openLogitsFile(path));
        const QString message = bannerText(window);
        QVERIFY2(message.contains(QStringLiteral("dtype '<u2' is uint16: if it holds bfloat16 bits, load it with "
                                                 "File > \"Open logits, reading <u2 as bfloat16...\"")),
                 qPrintable(message));
        QVERIFY2(!message.contains(QStringLiteral("--u2-as-bf16")), qPrintable(message));
        QVERIFY(menuAction(window, QStringLiteral("Open logits, reading <u2 as bfloat16...")) != nullptr);
        QVERIFY(*window.session().logits() != values);

        // With it the row is the bfloat16 values.
        QVERIFY(window.openLogitsFile(path, {}, true));
        QCOMPARE(*window.session().logits(), values);
        QVERIFY(window.waitUntilDrawn());
        QCOMPARE(window.currentView()->trace->vocab_size, values.size());

        // The CLI's and the library's wording is unchanged.
        try {
            (void)load_logits_file(path.toStdString());
            QFAIL("a <u2 file was accepted without the option");
        } catch (const InputError& error) {
            QVERIFY(std::string(error.what()).find("load it with --u2-as-bf16 (LoadOptions::u2_as_bfloat16)") != std::string::npos);
        }
    }

    void dialogFoldersAreRememberedPerKind() {
        const QString a = dir_.filePath(QStringLiteral("a"));
        const QString b = dir_.filePath(QStringLiteral("b"));
        QVERIFY(QDir().mkpath(a) && QDir().mkpath(b));
        QSettings().remove(QStringLiteral("dialogs"));

        // Without persistence nothing is read or written.
        const DialogFolders off(false);
        off.remember(QStringLiteral("logits"), QDir(a).filePath(QStringLiteral("row.npy")));
        QVERIFY(!QSettings().contains(DialogFolders::settingsKey(QStringLiteral("logits"))));
        QCOMPARE(off.startPath(QStringLiteral("export_trace"), QStringLiteral("trace.json")), QStringLiteral("trace.json"));

        const DialogFolders on(true);
        QCOMPARE(on.folder(QStringLiteral("logits")), QString());
        QCOMPARE(on.startPath(QStringLiteral("export_trace"), QStringLiteral("trace.json")), QStringLiteral("trace.json"));
        on.remember(QStringLiteral("logits"), QDir(a).filePath(QStringLiteral("row.npy")));   // a file: its folder
        on.remember(QStringLiteral("export_plots"), b);                                      // a folder: itself
        on.remember(QStringLiteral("vocabulary"), QString());                                // cancelled: nothing
        QCOMPARE(on.folder(QStringLiteral("logits")), a);
        QCOMPARE(on.startPath(QStringLiteral("logits")), a);
        QCOMPARE(on.folder(QStringLiteral("export_plots")), b);
        QCOMPARE(on.folder(QStringLiteral("vocabulary")), QString());  // each kind its own
        on.remember(QStringLiteral("export_trace"), QDir(b).filePath(QStringLiteral("mine.json")));  // not written yet
        QCOMPARE(on.startPath(QStringLiteral("export_trace"), QStringLiteral("trace.json")), QDir(b).filePath(QStringLiteral("trace.json")));
        // A folder that is gone is not offered.
        QVERIFY(QDir(a).removeRecursively());
        QCOMPARE(on.folder(QStringLiteral("logits")), QString());
        QVERIFY(QDir().mkpath(a));
    }

    void theVocabularyDialogStartsInTheLastFolder() {
        const QString folder = dir_.filePath(QStringLiteral("vocabularies"));
        QVERIFY(QDir().mkpath(folder));
        QSettings().remove(QStringLiteral("dialogs"));
        DialogFolders(true).remember(QStringLiteral("vocabulary"), QDir(folder).filePath(QStringLiteral("tokenizer.json")));
        MainWindow window(MainWindowOptions{true});
        QAction* open = menuAction(window, QStringLiteral("Open vocabulary..."));
        QVERIFY(open);
        // The dialog is modal: a timer reads where it starts, then cancels it.
        QString shown;
        QTimer poll;
        QObject::connect(&poll, &QTimer::timeout, [&] {
            if (auto* dialog = qobject_cast<QFileDialog*>(QApplication::activeModalWidget())) {
                shown = dialog->directory().absolutePath();
                dialog->reject();
            }
        });
        poll.start(20);
        open->trigger();
        poll.stop();
        QCOMPARE(shown, folder);
        QSettings().remove(QStringLiteral("dialogs"));
    }

    void theAppOpensAFileGivenAsItsArgument() {
        // What a file manager runs from the .desktop entry: `samplescope FILE`.
        const std::vector<double> row{0.5, 1.5, 2.5, 3.5};
        const QString npy = write(QStringLiteral("given.npy"), encode_npy({4}, row));
        const QString png = dir_.filePath(QStringLiteral("given.png"));
        QProcess app;
        app.start(QStringLiteral(SAMPLESCOPE_APP), {npy, QStringLiteral("--screenshot"), png, QStringLiteral("--window-size"),
                                                   QStringLiteral("1280x720")});
        QVERIFY(app.waitForFinished(120000));
        QCOMPARE(app.exitCode(), 0);
        QVERIFY(QFileInfo(png).size() > 0);
        // A file it cannot read is refused in the window's words (a screenshot exits 2 with them).
        const QString bad = write(QStringLiteral("bad.npy"), "not an array");
        app.start(QStringLiteral(SAMPLESCOPE_APP), {bad, QStringLiteral("--screenshot"), png});
        QVERIFY(app.waitForFinished(120000));
        QCOMPARE(app.exitCode(), 2);
        QVERIFY(QString::fromUtf8(app.readAllStandardError()).contains(QStringLiteral("bad.npy: not a .npy file")));
        // With --logits as well it is refused: one input at a time.
        app.start(QStringLiteral(SAMPLESCOPE_APP), {npy, QStringLiteral("--logits"), npy, QStringLiteral("--screenshot"), png});
        QVERIFY(app.waitForFinished(120000));
        QCOMPARE(app.exitCode(), 2);
    }
};

QTEST_MAIN(GuiFileInputsTest)
#include "test_gui_file_inputs.moc"
