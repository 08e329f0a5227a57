// One line per row of a CPU-vs-batch-engine comparison (kernels/tools/batch_compare.h):
// both tokens, the verdict, the logprob difference and both kept counts. The
// cells are formatted when the view asks for them, so a batch of thousands of
// rows costs nothing until it is scrolled to. Mismatches and near-ties carry a
// colour-blind-safe background (Okabe-Ito vermillion / orange), a shape icon and
// the verdict's name, so no cue depends on colour alone.
#pragma once

#include <QAbstractTableModel>
#include <QIcon>

#include <memory>

#include "kernels/tools/batch_compare.h"

namespace samplescope {

class CompareRowsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { RowColumn, VerdictColumn, ReferenceTokenColumn, EngineTokenColumn, LogprobDifferenceColumn,
                  ReferenceKeptColumn, EngineKeptColumn, DetailColumn, ColumnCount };
    // The row's Verdict as an int, for filtering and tests.
    static constexpr int VerdictRole = Qt::UserRole + 1;
    // The cell's value as a number, so sorting by a column sorts numerically.
    static constexpr int SortRole = Qt::UserRole + 2;

    explicit CompareRowsModel(QObject* parent = nullptr);

    void setComparison(std::shared_ptr<const batch::BatchComparison> comparison);
    void clear();
    const batch::BatchComparison* comparison() const { return comparison_.get(); }

    static QColor background(Verdict verdict);  // none (invalid) for Equal
    static QIcon icon(Verdict verdict);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    QString detail(const batch::RowComparison& row) const;

    std::shared_ptr<const batch::BatchComparison> comparison_;
};

}  // namespace samplescope
