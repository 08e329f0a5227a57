#include "ui/session/session_undo.h"

#include <QDateTime>
#include <QStringList>
#include <QTimer>
#include <QUndoCommand>

#include "engine/base/input_error.h"

namespace samplescope::ui {

namespace {

// Repeated edits of the same parameters closer together than this become one command.
constexpr qint64 kMergeWindowMs = 1500;

QString keyText(std::string_view key) { return QString::fromUtf8(key.data(), static_cast<qsizetype>(key.size())); }

QString number(double value) { return QString::fromStdString(format_number(value)); }

// The numeric parameters that differ, by key.
QStringList changedParams(const SamplingParams& a, const SamplingParams& b) {
    QStringList keys;
    for (const auto& info : kParams) {
        const double x = param_value(a, info.param);
        const double y = param_value(b, info.param);
        if (!(x == y) && !(x != x && y != y)) keys << keyText(info.key);
    }
    if (a.seed != b.seed) keys << QStringLiteral("seed");
    if (a.logit_bias != b.logit_bias) keys << QStringLiteral("logit_bias");
    if (a.dry_sequence_breakers != b.dry_sequence_breakers) keys << QStringLiteral("dry_sequence_breakers");
    return keys;
}

bool onlyParamsDiffer(const Session::State& a, const Session::State& b) {
    return a.logits == b.logits && a.labels == b.labels && a.vocabulary == b.vocabulary && a.matrix == b.matrix &&
           a.matrix_row == b.matrix_row && a.source == b.source && a.request.seed() == b.request.seed() &&
           a.request.prompt_ids() == b.request.prompt_ids() && a.request.output_ids() == b.request.output_ids() &&
           a.request.draws_consumed() == b.request.draws_consumed() && a.mirostat_mu == b.mirostat_mu;
}

class StateCommand : public QUndoCommand {
public:
    StateCommand(SessionUndo* owner, Session::State before, Session::State after)
        : owner_(owner), before_(std::move(before)), after_(std::move(after)),
          when_(QDateTime::currentMSecsSinceEpoch()) {
        setText(SessionUndo::describe(before_, after_));
        if (onlyParamsDiffer(before_, after_)) {
            keys_ = changedParams(before_.request.params(), after_.request.params()).join(QLatin1Char(','));
        }
    }

    void undo() override { owner_->apply(before_); }
    void redo() override {
        // The change itself has already happened when the command is pushed.
        if (first_) {
            first_ = false;
            return;
        }
        owner_->apply(after_);
    }
    int id() const override { return keys_.isEmpty() ? -1 : 1; }
    bool mergeWith(const QUndoCommand* other) override {
        const auto* next = static_cast<const StateCommand*>(other);
        if (next->keys_ != keys_ || next->when_ - when_ > kMergeWindowMs) return false;
        after_ = next->after_;
        when_ = next->when_;
        setText(SessionUndo::describe(before_, after_));
        setObsolete(!SessionUndo::differ(before_, after_));
        return true;
    }

private:
    SessionUndo* owner_;
    Session::State before_;
    Session::State after_;
    qint64 when_;
    QString keys_;  // the parameters a params-only change touched; empty otherwise
    bool first_ = true;
};

}  // namespace

SessionUndo::SessionUndo(Session* session, QObject* parent) : QObject(parent), session_(session), recorded_(session->state()) {
    stack_.setUndoLimit(200);
    for (const auto signal : {&Session::logitsChanged, &Session::paramsChanged, &Session::historyChanged, &Session::labelsChanged}) {
        connect(session_, signal, this, &SessionUndo::schedule);
    }
}

void SessionUndo::schedule() {
    if (restoring_ || scheduled_) return;
    scheduled_ = true;
    QTimer::singleShot(0, this, &SessionUndo::recordNow);
}

void SessionUndo::recordNow() {
    scheduled_ = false;
    Session::State now = session_->state();
    if (!differ(recorded_, now)) return;
    Session::State before = std::move(recorded_);
    recorded_ = now;
    stack_.push(new StateCommand(this, std::move(before), std::move(now)));
}

void SessionUndo::clear() {
    scheduled_ = false;
    stack_.clear();
    recorded_ = session_->state();
}

void SessionUndo::apply(const Session::State& state) {
    restoring_ = true;
    session_->restore(state);
    recorded_ = state;
    restoring_ = false;
}

bool SessionUndo::differ(const Session::State& a, const Session::State& b) {
    return !onlyParamsDiffer(a, b) || !(a.request.params() == b.request.params());
}

QString SessionUndo::describe(const Session::State& before, const Session::State& after) {
    QStringList parts;
    if (before.source != after.source) {
        parts << QStringLiteral("open %1").arg(after.source);
    } else if (before.logits != after.logits || before.matrix_row != after.matrix_row) {
        parts << (before.matrix_row != after.matrix_row ? QStringLiteral("row %1").arg(after.matrix_row)
                                                        : QStringLiteral("edit logits"));
    } else if (before.labels != after.labels && before.vocabulary == after.vocabulary) {
        parts << QStringLiteral("edit labels");
    }
    if (before.vocabulary != after.vocabulary) {
        parts << (after.vocabulary ? QStringLiteral("vocabulary") : QStringLiteral("clear vocabulary"));
    }
    if (before.source == after.source) {
        const QStringList keys = changedParams(before.request.params(), after.request.params());
        QStringList shown;
        for (const QString& key : keys) {
            if (shown.size() == 3) {
                shown << QStringLiteral("%1 more").arg(keys.size() - 3);
                break;
            }
            const auto* info = [&]() -> const ParamInfo* {
                for (const auto& row : kParams) {
                    if (keyText(row.key) == key) return &row;
                }
                return nullptr;
            }();
            if (info) {
                shown << QStringLiteral("%1 %2 -> %3")
                             .arg(key, number(param_value(before.request.params(), info->param)),
                                  number(param_value(after.request.params(), info->param)));
            } else {
                shown << key;
            }
        }
        parts += shown;
        const auto& a = before.request;
        const auto& b = after.request;
        if (a.prompt_ids() != b.prompt_ids() || a.output_ids() != b.output_ids()) {
            const bool stepped = b.prompt_ids() == a.prompt_ids() && b.output_ids().size() == a.output_ids().size() + 1 &&
                                 std::equal(a.output_ids().begin(), a.output_ids().end(), b.output_ids().begin());
            parts << (stepped ? QStringLiteral("step (token %1)").arg(b.output_ids().back()) : QStringLiteral("edit history"));
        } else if (a.draws_consumed() != b.draws_consumed() && a.seed() == b.seed()) {
            parts << (b.draws_consumed() < a.draws_consumed() ? QStringLiteral("reset request")
                                                              : QStringLiteral("skip draws"));
        }
    }
    if (parts.isEmpty()) parts << QStringLiteral("change");
    return parts.join(QStringLiteral(", "));
}

}  // namespace samplescope::ui
