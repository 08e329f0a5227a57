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
void export_plot(QCustomPlot& plot, const QString& path);
// A whole widget (the window, for screenshots) as PNG.
void export_widget_png(QWidget& widget, const QString& path);
void export_trace_json(const SampleTrace& trace, const QString& path);
// Every row in the table's current order and filter, every column, exact numbers.
void export_table_csv(const TokenTableModel& model, const QString& path);

// The JSON text itself (two-space indent, trailing newline, as the CLI prints it).
std::string trace_json_text(const SampleTrace& trace);

}  // namespace samplescope::ui
