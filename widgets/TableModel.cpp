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
// One number format in every table of the window: thousands grouped in decimals as in whole
// numbers (compute::formatCell groups integers only), so 96,686.00 sits beside 23,040.
std::string groupedNumber(const compute::Cell& cell, const compute::Column& column) {
    std::string text = compute::formatCell(cell, column);
    if (!std::holds_alternative<double>(cell)) return text;
    const std::size_t start = text.find_first_of("0123456789");
    if (start == std::string::npos) return text; // nan, inf
    std::size_t end = text.find('.', start);
    if (end == std::string::npos) end = text.find_first_not_of("0123456789", start);
    if (end == std::string::npos) end = text.size();
    for (std::size_t at = end; at > start + 3; at -= 3) text.insert(at - 3, 1, ',');
    return text;
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
        return QString::fromStdString(groupedNumber(cell, column));
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
