// What the plots' text caches share (a legend entry's name, a text element, a
// label, an axis title): the text laid out as drawText lays it out, and one
// cache per kind of made thing, keyed by the font and a text.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>

#include <QFont>
#include <QStaticText>
#include <QString>

#include "ui/common/font_scale.h"

namespace samplescope::ui {

// `text` laid out in `font` as drawText lays out a plain text: lines broken at
// '\n', each aligned by `alignment` (its horizontal part) in `width` pixels
// (none: as wide as the text). Prepared for drawing untransformed.
QStaticText preparedText(const QString& text, const QFont& font, std::optional<int> width, Qt::Alignment alignment);

// What `make()` makes for `key` (a text, with whatever else the making reads)
// in `font`, made once and kept: process-wide, one cache per kind of thing
// made, read by the GUI thread only. Never destroyed, so no laid-out text (and
// its font) is torn down after the application object; past `bound` entries
// (texts made from data are many over a session) it starts again rather than
// grow. What it returns stays valid as long as it is held.
template <class Made, class Make>
std::shared_ptr<const Made> cachedText(const QFont& font, const QString& key, std::size_t bound, Make&& make) {
    static auto& cache = *new std::unordered_map<QString, std::shared_ptr<const Made>>;
    const QString full = fontKey(font) + QLatin1Char('\x1f') + key;
    if (const auto found = cache.find(full); found != cache.end()) return found->second;
    if (cache.size() >= bound) cache.clear();
    auto made = std::make_shared<const Made>(std::forward<Make>(make)());
    cache.emplace(full, made);
    return made;
}

}  // namespace samplescope::ui
