// A uniform draw shown on its [0, 1) line: coloured stretches (an acceptance
// test's accept range, or the ids of a final draw in the order the draw walks
// them), the stretch the draw lands in outlined, u marked by a line and its
// value above the strip, and the stretches' edges named below it. Painted by
// hand: it is a single bar with a marker, which a plot would bury in axes.
#pragma once

#include <optional>
#include <vector>

#include <QColor>
#include <QString>
#include <QWidget>

namespace samplescope::ui {

class UniformStrip : public QWidget {
    Q_OBJECT
public:
    struct Stretch {
        double start = 0.0;
        double width = 0.0;
        QColor colour;
        QString label;      // written inside when it fits
        bool chosen = false;  // outlined
    };
    struct Edge {
        double at = 0.0;
        QString label;  // written below the strip at `at`
    };

    explicit UniformStrip(QWidget* parent = nullptr);

    // `note`: said where u would be when there is none (a greedy test).
    void setStrip(std::vector<Stretch> stretches, std::vector<Edge> edges, std::optional<double> u, const QString& note);
    void setDimmed(bool dimmed);

    const std::vector<Stretch>& stretches() const { return stretches_; }
    const std::vector<Edge>& edges() const { return edges_; }
    std::optional<double> u() const { return u_; }
    const QString& note() const { return note_; }
    // The x of a place on the line (for tests and hit areas).
    double xOf(double at) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    QRectF barRect() const;

    std::vector<Stretch> stretches_;
    std::vector<Edge> edges_;
    std::optional<double> u_;
    QString note_;
    bool dimmed_ = false;
};

}  // namespace samplescope::ui
