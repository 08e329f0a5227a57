// Where the main window's file dialogs start: in the folder last used with a
// dialog of the same kind ("logits", "vocabulary", "export_plot", ...), kept
// in QSettings under dialogs/<kind>_folder. Without persistence nothing is
// read or written and every dialog starts where Qt starts it.
#pragma once

#include <QString>

namespace samplescope::ui {

class DialogFolders {
public:
    explicit DialogFolders(bool persist) : persist_(persist) {}

    // The folder `kind` last used, "" when none is saved, persistence is off
    // or the folder no longer exists.
    QString folder(const QString& kind) const;
    // What the dialog starts on: `fileName` (a save dialog's suggestion) in
    // that folder, or the folder, or `fileName` alone when there is none.
    QString startPath(const QString& kind, const QString& fileName = {}) const;
    // Saves the folder of `chosen`: the file's folder, or `chosen` itself when
    // it is a folder (a folder dialog's answer). An empty `chosen` (cancelled) saves nothing.
    void remember(const QString& kind, const QString& chosen) const;

    static QString settingsKey(const QString& kind) { return QStringLiteral("dialogs/") + kind + QStringLiteral("_folder"); }

private:
    bool persist_;
};

}  // namespace samplescope::ui
