// The colours and second cues of every view. Colours are from the Okabe-Ito
// palette (distinguishable with the common colour-vision deficiencies); each
// role also has a cue that does not depend on colour: dropped bars are
// hatched, chosen ones have a heavy black outline and a label, the selected
// token a thick outline and an arrow.
#pragma once

#include <QBrush>
#include <QColor>
#include <QPen>

namespace samplescope::ui::palette {

inline const QColor kBlack{0x00, 0x00, 0x00};
inline const QColor kOrange{0xE6, 0x9F, 0x00};
inline const QColor kSkyBlue{0x56, 0xB4, 0xE9};
inline const QColor kBluishGreen{0x00, 0x9E, 0x73};
inline const QColor kBlue{0x00, 0x72, 0xB2};
inline const QColor kVermillion{0xD5, 0x5E, 0x00};
inline const QColor kReddishPurple{0xCC, 0x79, 0xA7};
inline const QColor kGrey{0x99, 0x99, 0x99};

// Roles.
inline QBrush keptBrush() { return QBrush(kBlue); }
inline QPen keptPen() { return QPen(kBlue.darker(150), 1.0); }
inline QBrush droppedBrush() { return QBrush(kGrey, Qt::BDiagPattern); }
inline QPen droppedPen() { return QPen(kGrey, 1.0, Qt::DashLine); }
inline QBrush chosenBrush() { return QBrush(kVermillion); }
inline QPen chosenPen() { return QPen(kBlack, 2.5); }
inline QBrush restBrush() { return QBrush(kSkyBlue, Qt::Dense4Pattern); }
inline QPen restPen() { return QPen(kSkyBlue.darker(150), 1.0); }
inline QPen selectedPen() { return QPen(kReddishPurple, 3.0); }
inline QPen thresholdPen() { return QPen(kOrange.darker(115), 2.0, Qt::DashLine); }
inline QPen cumulativePen() { return QPen(kBluishGreen, 2.0); }
inline QPen uPen() { return QPen(kBlack, 1.5, Qt::DashLine); }
inline QColor chosenBand() { return QColor(0xD5, 0x5E, 0x00, 60); }

}  // namespace samplescope::ui::palette
