#include "widgets/TableModel.hpp"

#include <cmath>
#include <limits>

namespace inferscope::widgets {

namespace {
bool sameColumns(const compute::Table& a, const compute::Table& b) {
    if (a.columns.size() != b.columns.size()) return false;
    for (std::size_t i = 0; i < a.columns.size(); ++i)
        if (a.columns[i].name != b.columns[i].name || a.columns[i].unit != b.columns[i].unit)
            return false;
    return true;
}
} // namespace

TableModel::TableModel(QObject* parent) : QAbstractTableModel(parent) {}

void TableModel::setTable(compute::Table table) {
    const std::size_t oldRows = table_.rows.size();
    bool onlyAppends = sameColumns(table_, table) && table.rows.size() > oldRows &&
                       std::equal(table_.rows.begin(), table_.rows.end(), table.rows.begin());
    if (onlyAppends) {
        beginInsertRows({}, static_cast<int>(oldRows), static_cast<int>(table.rows.size()) - 1);
        table_ = std::move(table);
        endInsertRows();
        return;
    }
    beginResetModel();
    table_ = std::move(table);
    endResetModel();
}

double TableModel::number(int row, int column) const {
    if (row < 0 || column < 0 || row >= rowCount() || column >= columnCount())
        return std::numeric_limits<double>::quiet_NaN();
    const auto& cell = table_.rows[static_cast<std::size_t>(row)][static_cast<std::size_t>(column)];
    if (auto* i = std::get_if<std::int64_t>(&cell)) return static_cast<double>(*i);
    if (auto* d = std::get_if<double>(&cell)) return *d;
    return std::numeric_limits<double>::quiet_NaN();
}

int TableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(table_.rows.size());
}

int TableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(table_.columns.size());
}

QVariant TableModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto& cell =
        table_
            .rows[static_cast<std::size_t>(index.row())][static_cast<std::size_t>(index.column())];
    const auto& column = table_.columns[static_cast<std::size_t>(index.column())];
    switch (role) {
    case Qt::DisplayRole:
        return QString::fromStdString(compute::formatCell(cell, column));
    case Qt::TextAlignmentRole:
        return std::holds_alternative<std::string>(cell)
                   ? QVariant(int(Qt::AlignLeft | Qt::AlignVCenter))
                   : QVariant(int(Qt::AlignRight | Qt::AlignVCenter));
    case RawRole:
        if (auto* i = std::get_if<std::int64_t>(&cell)) return QVariant::fromValue(qint64(*i));
        if (auto* d = std::get_if<double>(&cell)) return *d;
        if (auto* s = std::get_if<std::string>(&cell)) return QString::fromStdString(*s);
        return {};
    default:
        return {};
    }
}

QVariant TableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (role != Qt::DisplayRole) return {};
    if (orientation == Qt::Vertical) return section + 1;
    if (section < 0 || section >= columnCount()) return {};
    const auto& column = table_.columns[static_cast<std::size_t>(section)];
    QString name = QString::fromStdString(column.name);
    return column.unit.empty() ? name : name + " (" + QString::fromStdString(column.unit) + ")";
}

} // namespace inferscope::widgets
