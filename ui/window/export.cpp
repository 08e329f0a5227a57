#include "ui/window/export.h"

#include <QFile>
#include <QPixmap>
#include <QTextStream>
#include <qcustomplot.h>

#include "engine/base/input_error.h"
#include "engine/json/trace_json.h"
#include "ui/panels/token_table_model.h"

namespace samplescope::ui {

namespace {

[[noreturn]] void cannot_write(const QString& path, const QString& why) {
    throw InputError(path.toStdString(), path.toStdString() + ": cannot write (" + why.toStdString() + ")");
}

QString csv_field(const QString& text) {
    if (!text.contains(QLatin1Char(',')) && !text.contains(QLatin1Char('"')) && !text.contains(QLatin1Char('\n'))) return text;
    QString quoted = text;
    quoted.replace(QLatin1Char('"'), QStringLiteral("\"\""));
    return QLatin1Char('"') + quoted + QLatin1Char('"');
}

}  // namespace

void export_plot(QCustomPlot& plot, const QString& path) {
    const bool ok = path.endsWith(QStringLiteral(".pdf"), Qt::CaseInsensitive)
                        ? plot.savePdf(path, plot.width(), plot.height())
                        : plot.savePng(path, plot.width(), plot.height(), 2.0);
    if (!ok) cannot_write(path, QStringLiteral("the plot could not be saved there"));
}

void export_widget_png(QWidget& widget, const QString& path) {
    if (!widget.grab().save(path, "PNG")) cannot_write(path, QStringLiteral("the image could not be saved there"));
}

std::string trace_json_text(const SampleTrace& trace) { return trace_to_json(trace).dump(2) + "\n"; }

void export_trace_json(const SampleTrace& trace, const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) cannot_write(path, file.errorString());
    const std::string text = trace_json_text(trace);
    if (file.write(text.data(), static_cast<qint64>(text.size())) != static_cast<qint64>(text.size())) {
        cannot_write(path, file.errorString());
    }
}

void export_table_csv(const TokenTableModel& model, const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text)) cannot_write(path, file.errorString());
    QTextStream out(&file);
    const int columns = model.columnCount();
    for (int c = 0; c < columns; ++c) {
        out << csv_field(model.headerData(c, Qt::Horizontal).toString()) << (c + 1 < columns ? "," : "\n");
    }
    const int rows = model.rowCount();
    for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < columns; ++c) out << csv_field(model.exact_text(r, c)) << (c + 1 < columns ? "," : "\n");
    }
    out.flush();
    if (out.status() != QTextStream::Ok) cannot_write(path, file.errorString());
}

}  // namespace samplescope::ui
