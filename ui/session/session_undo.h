// Undo and redo over the session: every change the user makes (a parameter,
// the history, a step, the logits, an example, a file, a vocabulary, an
// engine's defaults) becomes one command holding the session's state before
// and after it. A burst of changes in one event (an example sets logits,
// parameters and history) is one command; a slider drag or repeated edits of
// the same parameters within a moment merge into one.
#pragma once

#include <QObject>
#include <QString>
#include <QUndoStack>

#include "ui/session/session.h"

namespace samplescope::ui {

class SessionUndo : public QObject {
    Q_OBJECT
public:
    explicit SessionUndo(Session* session, QObject* parent = nullptr);

    QUndoStack* stack() { return &stack_; }
    // Records the change not recorded yet, if any (it is otherwise recorded
    // once the current event has been handled).
    void recordNow();
    // Forgets every command: the session's state now is where undo stops.
    void clear();
    // Puts a recorded state back (what a command's undo and redo do).
    void apply(const Session::State& state);

    // What changed from one state to the other, in words ("temperature 0.7 -> 0.8").
    static QString describe(const Session::State& before, const Session::State& after);
    // Whether two states differ in anything the user can change.
    static bool differ(const Session::State& a, const Session::State& b);

private:
    void schedule();

    Session* session_;
    QUndoStack stack_;
    Session::State recorded_;
    bool restoring_ = false;
    bool scheduled_ = false;
};

}  // namespace samplescope::ui
