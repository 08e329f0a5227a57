// How a written token is coloured by its probability at its step: five bands
// of one blue (the palette's kept colour, darker for likelier words), so the
// text reads as "how sure the model was" at a glance; the rank is written as a
// small number beside the word (no number: the most probable word), a cue
// that needs no colour. Shared by every view that shows generated text.
#pragma once

#include <array>

#include <QColor>
#include <QString>

#include "ui/common/palette.h"

namespace samplescope::ui {

struct ProbabilityBand {
    double from;         // the band holds probabilities >= from (and below the previous band's)
    QColor background;
    QColor text;
    const char* label;   // the legend's words
};

inline const std::array<ProbabilityBand, 5>& probabilityBands() {
    static const std::array<ProbabilityBand, 5> bands{{
        {0.5, palette::kBlue, QColor(Qt::white), "q \u2265 0.5"},
        {0.2, QColor(0x56, 0xA0, 0xD3), QColor(Qt::black), "0.2\u20130.5"},
        {0.05, QColor(0x9C, 0xC8, 0xE8), QColor(Qt::black), "0.05\u20130.2"},
        {0.01, QColor(0xD3, 0xE6, 0xF5), QColor(Qt::black), "0.01\u20130.05"},
        {0.0, QColor(Qt::white), QColor(Qt::black), "< 0.01"},
    }};
    return bands;
}

inline const ProbabilityBand& probabilityBand(double probability) {
    for (const auto& band : probabilityBands()) {
        if (probability >= band.from) return band;
    }
    return probabilityBands().back();
}

}  // namespace samplescope::ui
