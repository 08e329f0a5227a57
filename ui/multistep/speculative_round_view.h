// One speculative round as a row of columns, read left to right as the
// verification reads it: a column per proposed position (the draft's q and
// the target's p for its best tokens on one scale, min(1, p/q) for the
// proposed token with the acceptance uniform u marked against it, and the
// verdict), the final draw's column right after the position where it
// happened (the residual normalize(max(0, p - q)) after a rejection, p_k for
// the bonus token), then the positions the chain never reached, greyed.
#pragma once

#include <cstddef>
#include <vector>

#include <QColor>
#include <QFrame>

#include "engine/generation/speculative.h"
#include "ui/common/palette.h"
#include "ui/multistep/speculative_jobs.h"

class QCustomPlot;
class QHBoxLayout;
class QLabel;

namespace samplescope::ui {

class UniformStrip;

// The roles' colours (Okabe-Ito), shared by the round, the text and the legends.
namespace spec_colours {
inline const QColor& draft() { return palette::kOrange; }
inline const QColor& target() { return palette::kBlue; }
inline const QColor& accept() { return palette::kBluishGreen; }
inline const QColor& reject() { return palette::kVermillion; }
inline const QColor& residual() { return palette::kReddishPurple; }
}  // namespace spec_colours

class SpecColumn : public QFrame {
    Q_OBJECT
public:
    enum class Kind { Tested, Untested, Final };

    explicit SpecColumn(QWidget* parent = nullptr);

    // Position `i` of a round; `stop` is where the chain stopped (k when all were accepted).
    void showPosition(const SpecPositionRecord& at, std::size_t i, std::size_t stop, const SpecPreset& preset);
    void showFinal(const SpecFinalRecord& final, const SpecPreset& preset);

    Kind kind() const { return kind_; }
    std::size_t position() const { return position_; }
    const std::vector<SpecBar>& bars() const { return bars_; }
    QLabel* titleLabel() const { return title_; }
    QLabel* numbersLabel() const { return numbers_; }
    QCustomPlot* plot() const { return plot_; }
    UniformStrip* strip() const { return strip_; }
    QLabel* verdictLabel() const { return verdict_; }

private:
    void drawBars(const std::vector<SpecBar>& bars, std::int32_t marked, bool two, const QColor& single);

    Kind kind_ = Kind::Tested;
    std::size_t position_ = 0;
    std::vector<SpecBar> bars_;
    QLabel* title_;
    QLabel* numbers_;
    QCustomPlot* plot_;
    UniformStrip* strip_;
    QLabel* verdict_;
};

class SpeculativeRoundView : public QWidget {
    Q_OBJECT
public:
    explicit SpeculativeRoundView(QWidget* parent = nullptr);

    // Null: no round (the columns go).
    void showRound(const SpecRoundRecord* round, const SpecPreset& preset);
    const std::vector<SpecColumn*>& columns() const { return columns_; }

private:
    QHBoxLayout* row_;
    std::vector<SpecColumn*> columns_;
};

// The acceptance test of a preset, as its verdict reads ("u < min(1, p/q)").
QString acceptRuleText(const SpecPreset& preset, bool accepted);

}  // namespace samplescope::ui
