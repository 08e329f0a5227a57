#include "ui/window/dialog_folders.h"

#include <QDir>
#include <QFileInfo>
#include <QSettings>

namespace samplescope::ui {

QString DialogFolders::folder(const QString& kind) const {
    if (!persist_) return {};
    const QString saved = QSettings().value(settingsKey(kind)).toString();
    return !saved.isEmpty() && QFileInfo(saved).isDir() ? saved : QString();
}

QString DialogFolders::startPath(const QString& kind, const QString& fileName) const {
    const QString start = folder(kind);
    if (start.isEmpty()) return fileName;
    return fileName.isEmpty() ? start : QDir(start).filePath(fileName);
}

void DialogFolders::remember(const QString& kind, const QString& chosen) const {
    if (!persist_ || chosen.isEmpty()) return;
    const QFileInfo info(chosen);
    QSettings().setValue(settingsKey(kind), info.isDir() ? info.absoluteFilePath() : info.absolutePath());
}

}  // namespace samplescope::ui
