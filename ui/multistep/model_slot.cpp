#include "ui/multistep/model_slot.h"

#include <QFileInfo>
#include <QtConcurrent/QtConcurrentRun>

#include "engine/base/memory_budget.h"
#include "engine/models/model_source.h"
#include "engine/models/ngram_model.h"

namespace samplescope::ui {

ModelSlot::ModelSlot(QObject* parent) : QObject(parent) {
    connect(&watcher_, &QFutureWatcher<ModelLoad>::finished, this, [this] { accept(watcher_.result()); });
}

ModelSlot::~ModelSlot() { watcher_.waitForFinished(); }

void ModelSlot::ensure() {
    if (model_ || state_ == State::Loading || state_ == State::Failed) return;
    if (borrow_) {
        auto model = borrow_();
        const auto* ngram = dynamic_cast<const NgramModel*>(model.get());
        if (ngram && ngram->path() == default_ngram_model_path()) {
            model_ = std::move(model);
            labels_.reset();
            path_.clear();
            state_ = State::Ready;
            emit changed();
            return;
        }
    }
    if (!default_ngram_model_installed()) {
        state_ = State::Missing;
        emit changed();
        return;
    }
    startLoading(QString());
}

bool ModelSlot::ensureForRun() {
    if (state_ == State::Failed) openFile(QString());  // a new try
    ensure();
    return state_ != State::Missing;
}

void ModelSlot::openFile(const QString& path) {
    if (state_ == State::Loading) return;
    startLoading(path);
}

void ModelSlot::setModel(ModelLoad loaded) {
    if (state_ == State::Loading) return;
    loading_path_.clear();
    accept(std::move(loaded));
}

void ModelSlot::startLoading(const QString& path) {
    state_ = State::Loading;
    loading_path_ = path;
    const std::string file = path.toStdString();
    const std::uint64_t budget = default_memory_budget();
    watcher_.setFuture(QtConcurrent::run([file, budget] { return loadModel(file, budget); }));
    emit statusMessage(QStringLiteral("Loading the language model %1...")
                           .arg(QString::fromStdString(file.empty() ? default_ngram_model_path() : file)));
    emit changed();
}

void ModelSlot::accept(ModelLoad loaded) {
    if (!loaded.model) {
        if (model_) {
            state_ = State::Ready;
            emit errorRaised(loaded.error + QStringLiteral(". The previous model is unchanged."));
        } else {
            state_ = State::Failed;
            error_ = loaded.error;
            emit errorRaised(loaded.error);
        }
    } else {
        model_ = std::move(loaded.model);
        labels_ = std::move(loaded.labels);
        path_ = loading_path_;
        state_ = State::Ready;
        error_.clear();
        emit statusMessage(QStringLiteral("Model: %1").arg(QString::fromStdString(model_->description())));
    }
    emit changed();
}

ModelLoad ModelSlot::sharedDefault() const {
    ModelLoad out;
    if (model_ && labels_ && path_.isEmpty()) {
        out.model = model_;
        out.labels = labels_;
    }
    return out;
}

QString ModelSlot::modelLine() const {
    const QString& path = state_ == State::Ready ? path_ : loading_path_;
    const QString file =
        QFileInfo(path.isEmpty() ? QString::fromStdString(default_ngram_model_path()) : path).fileName();
    switch (state_) {
        case State::Ready:
            return QStringLiteral("Model: %1, %2").arg(file, QString::fromStdString(model_->description()));
        case State::Loading:
            return QStringLiteral("Loading %1...").arg(file);
        case State::Missing:
            return QStringLiteral("No model: apt install %1").arg(QString::fromUtf8(kNgramModelPackage));
        case State::Failed:
            return QStringLiteral("%1 could not be read").arg(file);
        case State::NotLoaded:
            break;
    }
    return {};
}

QString ModelSlot::placeholderHtml() const {
    switch (state_) {
        case State::NotLoaded:
        case State::Loading:
            return QStringLiteral("Loading the language model (%1)...")
                .arg(loading_path_.isEmpty() ? QString::fromStdString(default_ngram_model_path()) : loading_path_);
        case State::Missing:
            return missingModelHtml();
        case State::Failed:
            return unreadableModelHtml(error_);
        case State::Ready:
            break;
    }
    return {};
}

}  // namespace samplescope::ui
