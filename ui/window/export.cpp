#include "ui/window/export.h"

#include <QBuffer>
#include <QFile>
#include <QPixmap>
#include <QTextStream>
#include <qcustomplot.h>

#include "engine/base/input_error.h"
#include "engine/json/trace_json.h"
#include "ui/panels/token_table_model.h"

namespace samplescope::ui {

namespace {

[[noreturn]] void cannotWrite(const QString& path, const QString& why) {
    throw InputError(path.toStdString(), path.toStdString() + ": cannot write (" + why.toStdString() + ")");
}

QString csvField(const QString& text) {
    if (!text.contains(QLatin1Char(',')) && !text.contains(QLatin1Char('"')) && !text.contains(QLatin1Char('\n'))) return text;
    QString quoted = text;
    quoted.replace(QLatin1Char('"'), QStringLiteral("\"\""));
    return QLatin1Char('"') + quoted + QLatin1Char('"');
}

// Encoded in memory first, then written: a file that cannot be written is
// reported once, in our words, and libpng never sees it (it would print a
// line of its own on stderr).
void writePng(const QPixmap& image, const QString& path) {
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    if (!image.save(&buffer, "PNG")) cannotWrite(path, QStringLiteral("the image could not be encoded"));
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) cannotWrite(path, file.errorString());
    if (file.write(bytes) != bytes.size() || !file.flush()) cannotWrite(path, file.errorString());
}

}  // namespace

void exportPlot(QCustomPlot& plot, const QString& path) {
    if (path.endsWith(QStringLiteral(".pdf"), Qt::CaseInsensitive)) {
        if (!plot.savePdf(path, plot.width(), plot.height())) cannotWrite(path, QStringLiteral("the plot could not be saved there"));
        return;
    }
    writePng(plot.toPixmap(plot.width(), plot.height(), 2.0), path);
}

void exportWidgetPng(QWidget& widget, const QString& path) { writePng(widget.grab(), path); }

std::string traceJsonText(const SampleTrace& trace) { return trace_to_json(trace).dump(2) + "\n"; }

void exportTraceJson(const SampleTrace& trace, const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) cannotWrite(path, file.errorString());
    const std::string text = traceJsonText(trace);
    if (file.write(text.data(), static_cast<qint64>(text.size())) != static_cast<qint64>(text.size())) {
        cannotWrite(path, file.errorString());
    }
}

void exportTableCsv(const TokenTableModel& model, const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text)) cannotWrite(path, file.errorString());
    QTextStream out(&file);
    const int columns = model.columnCount();
    for (int c = 0; c < columns; ++c) {
        out << csvField(model.headerData(c, Qt::Horizontal).toString()) << (c + 1 < columns ? "," : "\n");
    }
    const int rows = model.rowCount();
    for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < columns; ++c) out << csvField(model.exactText(r, c)) << (c + 1 < columns ? "," : "\n");
    }
    out.flush();
    if (out.status() != QTextStream::Ok) cannotWrite(path, file.errorString());
}

}  // namespace samplescope::ui
