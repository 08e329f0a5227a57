#include "ui/stages/text_cache.h"

#include <QTextOption>

namespace samplescope::ui {

QStaticText preparedText(const QString& text, const QFont& font, std::optional<int> width, Qt::Alignment alignment) {
    // QStaticText breaks lines at U+2028 only; drawText breaks at '\n' too.
    QString lines = text;
    lines.replace(QLatin1Char('\n'), QChar::LineSeparator);
    QStaticText made(lines);
    made.setTextFormat(Qt::PlainText);
    made.setPerformanceHint(QStaticText::AggressiveCaching);
    if (width) {
        made.setTextWidth(*width);
        QTextOption option = made.textOption();
        option.setAlignment(alignment & Qt::AlignHorizontal_Mask);
        made.setTextOption(option);
    }
    made.prepare(QTransform(), font);
    return made;
}

}  // namespace samplescope::ui
