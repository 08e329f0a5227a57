// Help > "How sampling works here", Help > Glossary and Help > About: text built from the one
// stage table (kStages) and the one parameter table (kParams), so it never
// drifts from what the engine does.
#pragma once

#include <vector>

#include <QString>

class QWidget;

namespace samplescope::ui {

// The stages in the contract's order with what each does, llama.cpp's extra
// samplers after them, and every parameter with its formula and valid range.
QString howSamplingWorksHtml();
QString aboutHtml();

// One term of the glossary: its name and what it means here.
struct GlossaryEntry {
    QString term;
    QString meaning;
};
// Every term the views use, alphabetical: the general ones written here, each
// stage from kStages (its title and summary) and each parameter from kParams
// (its label, key and formula).
std::vector<GlossaryEntry> glossary();
QString glossaryHtml();

// Opens the text in a scrollable, non-modal dialog.
void showHelpDialog(QWidget* parent, const QString& title, const QString& html);

}  // namespace samplescope::ui
