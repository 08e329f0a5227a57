// Exports: a plot to PNG or PDF, the trace to JSON (exactly what
// `samplescope-cli trace` prints for the same input), the token table to CSV.
// Each throws InputError naming the file when it cannot be written.
#pragma once

#include <QString>

#include "engine/core/trace.h"

class QCustomPlot;
class QWidget;

namespace samplescope::ui {

class TokenTableModel;

// By the file's suffix: .pdf, else PNG.
void exportPlot(QCustomPlot& plot, const QString& path);
// A whole widget (the window, for screenshots) as PNG.
void exportWidgetPng(QWidget& widget, const QString& path);
void exportTraceJson(const SampleTrace& trace, const QString& path);
// Every row in the table's current order and filter, every column, exact numbers.
void exportTableCsv(const TokenTableModel& model, const QString& path);

// The JSON text itself (two-space indent, trailing newline, as the CLI prints it).
std::string traceJsonText(const SampleTrace& trace);

}  // namespace samplescope::ui
