// Typing into the real widgets as a user would, for the GUI tests.
#pragma once

#include <QLineEdit>
#include <QTest>

namespace samplescope::test {

// Replaces an entry's text by typing, then presses Enter.
inline void typeAndEnter(QLineEdit* entry, const QString& text) {
    entry->setFocus();
    entry->selectAll();
    QTest::keyClicks(entry, text);
    QTest::keyClick(entry, Qt::Key_Return);
}

}  // namespace samplescope::test
