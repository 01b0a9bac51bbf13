#pragma once
// A Qt item model over one compute::Table: the small model a panel views. Replacing the
// table with one that only adds rows inserts them (views keep their state); anything else
// resets the model.
#include "compute/Table.hpp"

#include <QAbstractTableModel>

namespace inferscope::widgets {

class TableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    // Raw cell value (int64, double or string) for code that wants numbers, not text.
    static constexpr int RawRole = Qt::UserRole + 1;

    explicit TableModel(QObject* parent = nullptr);

    void setTable(compute::Table table);
    const compute::Table& table() const { return table_; }
    // The cell as a number (NaN for text and empty cells).
    double number(int row, int column) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    compute::Table table_;
};

} // namespace inferscope::widgets
