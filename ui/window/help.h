// Help > "How sampling works here" and Help > About: text built from the one
// stage table (kStages) and the one parameter table (kParams), so it never
// drifts from what the engine does.
#pragma once

#include <QString>

class QWidget;

namespace samplescope::ui {

// The stages in the contract's order with what each does, llama.cpp's extra
// samplers after them, and every parameter with its formula and valid range.
QString howSamplingWorksHtml();
QString aboutHtml();

// Opens the text in a scrollable, non-modal dialog.
void showHelpDialog(QWidget* parent, const QString& title, const QString& html);

}  // namespace samplescope::ui
