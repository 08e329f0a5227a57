// Every token of the row, lazily: the view asks only for the rows it shows, so
// 128,256 rows cost nothing until scrolled to. Columns: id, label, raw,
// penalised and scaled logit, then q after each stage (or "dropped").
// Sorting and filtering keep one vector of row ids (no proxy model: a proxy
// would re-map every row on each new trace).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <QAbstractTableModel>

#include "engine/core/stage.h"
#include "ui/common/trace_view.h"

namespace samplescope::ui {

class TokenTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column : int { Id, Label, RawLogit, PenalisedLogit, ScaledLogit, FirstStage };
    static constexpr int kSortKeyRole = Qt::UserRole + 1;

    explicit TokenTableModel(QObject* parent = nullptr);

    void setView(std::shared_ptr<const TraceView> view);
    // Keeps rows whose label contains the text (case-insensitive) or whose id equals it; empty shows all.
    void setFilter(const QString& text);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;

    std::int32_t idAt(int row) const;
    int rowOf(std::int32_t id) const;  // -1 when filtered out
    // The exact text of a cell (round-trip numbers), for CSV export.
    QString exactText(int row, int column) const;
    static Stage stageOfColumn(int column);

private:
    double sortKey(std::int32_t id, int column) const;
    void rebuildRows();

    std::shared_ptr<const TraceView> view_;
    std::vector<std::int32_t> rows_;  // ids in display order; empty means "all ids, ascending"
    bool all_rows_ = true;
    QString filter_;
    int sort_column_ = Id;
    Qt::SortOrder sort_order_ = Qt::AscendingOrder;
};

// The stages that get a probability column (every stage but the draw, which
// has no distribution of its own).
std::vector<Stage> tableStages();

}  // namespace samplescope::ui
