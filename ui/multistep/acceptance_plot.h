// The running acceptance rate of a speculation, round after round, against
// its expected value: after each round, accepted / tested over the run so
// far, and the mean over the same tested positions of sum min(p, q) (each
// position's chance of acceptance), with a band of 1.96 standard errors
// around it. The round on show is marked.
#pragma once

#include <vector>

#include <qcustomplot.h>

#include "ui/multistep/speculative_jobs.h"

namespace samplescope::ui {

class AcceptancePlot : public QCustomPlot {
    Q_OBJECT
public:
    explicit AcceptancePlot(QWidget* parent = nullptr);

    // `shown`: the index of the round on show (-1: none).
    void showRounds(const std::vector<SpecRoundRecord>& rounds, int shown);

    QCPGraph* measured() const { return measured_; }
    QCPGraph* expected() const { return expected_; }

private:
    QCPGraph* measured_;
    QCPGraph* expected_;
    QCPGraph* upper_;
    QCPGraph* lower_;
    QCPItemStraightLine* shown_;
};

}  // namespace samplescope::ui
