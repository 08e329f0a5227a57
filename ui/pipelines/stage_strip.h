// One pipeline's stages in its own order, as a strip of boxes: the stage, its
// rule, how many ids it keeps, and the flags it raised (tie at the boundary,
// decision near the boundary).
#pragma once

#include <QWidget>

#include "engine/stages/pipeline.h"

class QHBoxLayout;
class QLabel;
class QScrollArea;

namespace samplescope {

class StageStrip : public QWidget {
    Q_OBJECT
public:
    explicit StageStrip(QWidget* parent = nullptr);

    void setTrace(const QString& heading, const PipelineTrace& trace);
    void clear(const QString& message = {});

    // The text of each box, in order (for tests and accessibility).
    QStringList boxTexts() const;

protected:
    void changeEvent(QEvent* event) override;

private:
    QLabel* heading_ = nullptr;
    void fitHeight();
    void fitBoxes();
    QScrollArea* area_ = nullptr;
    QWidget* content_ = nullptr;
    QHBoxLayout* boxes_ = nullptr;
    QList<QLabel*> labels_;
    QList<QPair<QString, QString>> titles_;  // each box's stage title and rule title, for its width
};

}  // namespace samplescope
