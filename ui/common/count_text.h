// Counts and ids shown as numbers, one convention for every view: English
// digit grouping whatever the system locale (128,256, as the answer line and
// the statistics write them), and a noun that agrees with its count ("1 row",
// "2 rows"); and an exact value in full, as a tooltip gives it.
#pragma once

#include <concepts>
#include <type_traits>

#include <QLocale>
#include <QString>

#include "engine/base/input_error.h"

namespace samplescope::ui {

template <std::integral T>
QString groupedNumber(T n) {
    const QLocale english(QLocale::English);
    if constexpr (std::is_signed_v<T>) {
        return english.toString(static_cast<qlonglong>(n));
    } else {
        return english.toString(static_cast<qulonglong>(n));
    }
}

template <std::integral T>
QString countText(T n, const QString& one, const QString& many) {
    return groupedNumber(n) + QLatin1Char(' ') + (n == 1 ? one : many);
}

// The shortest text that reads back as the same double (format_number).
inline QString exactNumber(double value) { return QString::fromStdString(format_number(value)); }

}  // namespace samplescope::ui
