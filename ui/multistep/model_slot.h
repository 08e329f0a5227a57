// The language model the Speculative and Beam tabs share: loaded once, off
// the GUI thread, when the first of them is shown (or taken from the Generate
// tab when that one has loaded it), and replaced by a file the user opens. A
// refused file leaves the model as it was.
#pragma once

#include <functional>
#include <memory>

#include <QFutureWatcher>
#include <QObject>
#include <QString>

#include "engine/models/language_model.h"
#include "ui/generate/generation_jobs.h"

namespace samplescope::ui {

class ModelSlot : public QObject {
    Q_OBJECT
public:
    enum class State { NotLoaded, Loading, Ready, Missing, Failed };

    explicit ModelSlot(QObject* parent = nullptr);
    ~ModelSlot() override;

    // A model loaded elsewhere (the Generate tab's) that ensure() takes
    // instead of loading the default file again, when it is that file (a
    // model costs about 200 MB).
    void setBorrow(std::function<std::shared_ptr<const LanguageModel>()> borrow) { borrow_ = std::move(borrow); }
    // The default file's model and labels when this slot loaded it (for another view to share); else empty.
    ModelLoad sharedDefault() const;

    // Starts loading the default model unless one is loaded, loading or failed;
    // says what to install when it is missing.
    void ensure();
    // For a run asked for before the model is there: ensure(), retrying a
    // failed load first; false when the model is not installed.
    bool ensureForRun();
    void openFile(const QString& path);
    // A model loaded before the window (the app's flags); a refused load is raised.
    void setModel(ModelLoad loaded);

    State state() const { return state_; }
    bool loading() const { return state_ == State::Loading; }
    const std::shared_ptr<const LanguageModel>& model() const { return model_; }
    // One line for the view's header: the model, or what is happening to it.
    QString modelLine() const;
    // Rich text for a view that has no model to show (empty when Ready).
    QString placeholderHtml() const;

signals:
    void changed();  // the state or the model
    void errorRaised(const QString& message);
    void statusMessage(const QString& message);

private:
    void startLoading(const QString& path);
    void accept(ModelLoad loaded);

    State state_ = State::NotLoaded;
    std::shared_ptr<const LanguageModel> model_;
    std::shared_ptr<const TokenLabels> labels_;  // when this slot loaded the model
    QString path_;          // the model's file, "" for the default
    QString loading_path_;  // the file being loaded (or last tried)
    QString error_;
    std::function<std::shared_ptr<const LanguageModel>()> borrow_;
    QFutureWatcher<ModelLoad> watcher_;
};

}  // namespace samplescope::ui
