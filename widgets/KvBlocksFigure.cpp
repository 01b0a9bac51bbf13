#include "widgets/KvBlocksFigure.hpp"

#include <QFontMetricsF>
#include <QPainter>
#include <QStringList>
#include <algorithm>
#include <cmath>
#include <map>

namespace inferscope::widgets {

namespace {
const QColor kSharedFill(0xC4, 0xC4, 0xC4);
const QColor kSharedHatch(0x50, 0x50, 0x50);
const QColor kTailDots(0x70, 0x70, 0x70);

std::string text(const compute::Table& table, std::size_t row, const char* column) {
    const auto& cell = table.at(row, column);
    return std::holds_alternative<std::string>(cell) ? std::get<std::string>(cell) : std::string();
}

// Ticks every k columns so the labels (as wide as `widest`) keep apart.
int tickEvery(double cell, double widest) {
    for (int k : {1, 2, 4, 8, 16, 32, 64})
        if (cell * k >= widest * 1.3) return k;
    return 128;
}
} // namespace

KvBlocksFigure::KvBlocksFigure(ChartPanel* panel) : PaintedFigure(panel) {
    setObjectName("kvBlocksFigure");
    setLegend({{tr("used: its sequence's colour"), palette()[0], Qt::NoBrush},
               {tr("partly filled: empty tail dotted"), Qt::NoBrush,
                QBrush(kTailDots, Qt::Dense6Pattern)},
               {tr("shared prefix: hatched, reference count written"), kSharedFill,
                QBrush(kSharedHatch, Qt::DiagCrossPattern)},
               {tr("free"), Qt::NoBrush, Qt::NoBrush}});
}

void KvBlocksFigure::clear() {
    cells_.clear();
    rows_.clear();
    update();
}

void KvBlocksFigure::setSnapshot(const compute::Table* blockTables, const compute::Table* cells,
                                 const std::string& label) {
    clear();
    if (!blockTables || !cells) return;
    std::map<std::string, int> rowOf;
    for (std::size_t row = 0; row < blockTables->rows.size(); ++row) {
        if (text(*blockTables, row, "snapshot") != label) continue;
        KvTableRow r;
        const auto owner = text(*blockTables, row, "sequence");
        r.owner = QString::fromStdString(owner);
        const auto& slot = blockTables->at(row, "slot");
        if (std::holds_alternative<std::int64_t>(slot)) r.slot = int(std::get<std::int64_t>(slot));
        for (const auto& block : QString::fromStdString(text(*blockTables, row, "block table"))
                                     .split(' ', Qt::SkipEmptyParts))
            r.blocks.push_back(block.toInt());
        rowOf[owner] = int(rows_.size());
        rows_.push_back(std::move(r));
    }
    for (std::size_t row = 0; row < cells->rows.size(); ++row) {
        if (text(*cells, row, "snapshot") != label) continue;
        KvPoolCell c;
        c.block = int(cells->number(row, "block"));
        c.references = int(cells->number(row, "reference count"));
        c.fill = cells->number(row, "filled") / 100.0;
        if (c.references == 1) {
            const auto it = rowOf.find(text(*cells, row, "owner"));
            if (it != rowOf.end()) c.owner = it->second;
        }
        cells_.push_back(c);
    }
    std::sort(cells_.begin(), cells_.end(),
              [](const KvPoolCell& a, const KvPoolCell& b) { return a.block < b.block; });
    update();
}

QString KvBlocksFigure::poolText(const KvPoolCell& cell) {
    return cell.references > 1 ? QString::number(cell.references) : QString();
}

QColor KvBlocksFigure::rowColour(int row) const {
    if (row < 0 || std::size_t(row) >= rows_.size()) return {};
    // By slot where the sequence has one, so a slot keeps its colour across snapshots.
    const int key = rows_[std::size_t(row)].slot >= 0 ? rows_[std::size_t(row)].slot : row;
    return palette()[std::size_t(key) % palette().size()];
}

QBrush KvBlocksFigure::fillOf(const KvPoolCell& cell) const {
    if (cell.references > 1) return kSharedFill;
    if (cell.references == 1) return rowColour(cell.owner);
    return Qt::NoBrush;
}

QBrush KvBlocksFigure::patternOf(const KvPoolCell& cell) const {
    if (cell.references > 1) return QBrush(kSharedHatch, Qt::DiagCrossPattern);
    if (cell.references == 1 && cell.fill < 1.0) return QBrush(kTailDots, Qt::Dense6Pattern);
    return Qt::NoBrush;
}

void KvBlocksFigure::paintCell(QPainter& painter, const QRectF& rect, const KvPoolCell& cell,
                               const QString& label, const QFont& font) const {
    const QRectF inner = rect.adjusted(1, 1, -1, -1);
    if (cell.references == 1 && cell.fill < 1.0) {
        // Coloured as far as written; the empty tail dotted.
        const QRectF written(inner.left(), inner.top(), inner.width() * cell.fill, inner.height());
        const QRectF tail(written.right(), inner.top(), inner.right() - written.right(),
                          inner.height());
        fillRect(painter, written, fillOf(cell), Qt::NoBrush);
        fillRect(painter, tail, Qt::NoBrush, patternOf(cell));
    } else {
        fillRect(painter, inner, fillOf(cell), patternOf(cell));
    }
    const QColor fill = fillOf(cell).color();
    painter.setPen(QPen(cell.references == 0 ? gridColour() : fill.darker(170), 1));
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(inner);
    if (label.isEmpty()) return;
    const QFontMetricsF metrics(font);
    if (metrics.horizontalAdvance(label) + 2 > inner.width() ||
        metrics.height() > inner.height() + 3)
        return;
    painter.setFont(font);
    if (cell.references > 1 || (cell.references == 1 && cell.fill < 0.6)) {
        // On hatching or a mostly empty cell: a light box, tight to the digits and see-through,
        // under the number; the pattern still shows around and through it.
        const double w = metrics.horizontalAdvance(label) + 2, h = metrics.ascent();
        const QRectF box(inner.center().x() - w / 2, inner.center().y() - h / 2, w, h);
        painter.fillRect(box, QColor(255, 255, 255, 170));
        painter.setPen(Qt::black);
    } else {
        painter.setPen(cell.references == 0 ? textColour() : textOn(fill));
    }
    painter.drawText(inner, Qt::AlignCenter, label);
}

double KvBlocksFigure::paintPlot(QPainter& painter, const QRectF& area) {
    if (cells_.empty()) return area.top();
    const QFont labelFont = scaledFont(0.9), headerFont = scaledFont(0.95, true),
                numberFont = scaledFont(0.75);
    const QFontMetricsF labels(labelFont), headers(headerFont), numbers(numberFont);
    // A near-square pool, at least 8 wide, unless another width gives larger cells.
    const int squareColumns = std::max(8, int(std::ceil(std::sqrt(double(cells_.size())))));
    int columns = squareColumns, chosenColumns = columns;
    int logical = 1;
    double ownerWidth = 0;
    for (const auto& r : rows_) {
        logical = std::max(logical, int(r.blocks.size()));
        ownerWidth = std::max(ownerWidth, labels.horizontalAdvance(r.owner));
    }
    ownerWidth += labels.averageCharWidth();
    const double poolLabelWidth =
        labels.horizontalAdvance(QString::number(std::max<int>(0, int(cells_.size()) - 1))) +
        labels.averageCharWidth();
    const double header = headers.height() * 1.3, ticks = labels.height() * 1.1;
    const double gap = labels.averageCharWidth() * 4;
    const double tableRows = std::max<double>(1.0, double(rows_.size())) * 1.15;
    const QString tablesHeader = tr("block tables: logical block -> physical block");
    const QString poolHeader = tr("physical blocks: %1").arg(cells_.size());
    // Side by side, or the pool under the block tables: whichever gives larger cells, with
    // `rows` rows of the pool shown; side by side the tables are as wide as their header.
    struct Layout {
        bool across = true;
        double cell = 0, tablesWidth = 0;
    };
    auto layoutFor = [&](int rows) {
        const double sideBySide =
            std::min((area.width() - ownerWidth - poolLabelWidth - gap) / (logical + columns),
                     (area.height() - header - ticks) / std::max(tableRows, double(rows)));
        const double stacked = std::min(
            (area.width() - std::max(ownerWidth, poolLabelWidth)) / std::max(logical, columns),
            (area.height() - 2 * (header + ticks)) / (tableRows + rows));
        Layout l;
        l.across = sideBySide >= stacked;
        l.cell = std::min(std::max(l.across ? sideBySide : stacked, 2.0), labels.height() * 2.4);
        if (l.across) {
            l.tablesWidth =
                std::max(ownerWidth + logical * l.cell, headers.horizontalAdvance(tablesHeader));
            l.cell = std::max(
                2.0,
                std::min(l.cell, (area.width() - l.tablesWidth - gap - poolLabelWidth) / columns));
        }
        return l;
    };
    // Where the whole pool leaves cells too small for a number, the free rows after the last
    // used block fold into one line that says which blocks they are; the pool's width (8, 16
    // or 32 columns) is the one that leaves the largest cells.
    int lastUsed = -1;
    for (const auto& c : cells_)
        if (c.references > 0) lastUsed = std::max(lastUsed, c.block);
    // Legible: the widest block number in use fits a cell as paintCell writes it.
    const double legible = std::max(
        numbers.horizontalAdvance(QString::number(std::max(lastUsed, 0))) + 4, numbers.height());
    int poolRows = 0, shownRows = 0;
    Layout layout;
    // The whole pool where some width gives legible cells (the largest such), else folded.
    for (const bool fold : {false, true}) {
        for (const int width : {squareColumns, 8, 16, 32}) {
            if (width > int(cells_.size()) && width != squareColumns) continue;
            const int rows = (int(cells_.size()) + width - 1) / width;
            const int shown = fold ? std::min(rows, std::max(1, lastUsed / width + 2)) : rows;
            columns = width; // layoutFor reads it
            const Layout l = layoutFor(shown < rows ? shown + 1 : rows);
            if (!fold && l.cell < legible) continue;
            if (l.cell > layout.cell + 0.5) {
                layout = l;
                poolRows = rows;
                shownRows = shown;
                chosenColumns = width;
            }
        }
        if (poolRows > 0) break;
    }
    columns = chosenColumns;
    const bool across = layout.across;
    const double cell = layout.cell, tablesWidth = layout.tablesWidth;
    const double pitch = std::max(cell * 1.15, labels.height());
    poolLayout_ = {columns, poolRows, shownRows, cell, legible};

    const QPointF tablesAt(area.left() + ownerWidth, area.top() + header + ticks);
    const QPointF poolAt =
        across ? QPointF(area.left() + tablesWidth + gap + poolLabelWidth, tablesAt.y())
               : QPointF(area.left() + poolLabelWidth,
                         tablesAt.y() + double(rows_.size()) * pitch + header + ticks);
    painter.setFont(headerFont);
    painter.setPen(textColour());
    const double tablesHeaderWidth = across ? tablesWidth : area.width();
    painter.drawText(QRectF(area.left(), tablesAt.y() - header - ticks, tablesHeaderWidth, header),
                     Qt::AlignLeft | Qt::AlignVCenter,
                     fitted(headers, tablesHeader, tablesHeaderWidth));
    const double poolHeaderWidth = area.right() - poolAt.x() + poolLabelWidth;
    painter.drawText(
        QRectF(poolAt.x() - poolLabelWidth, poolAt.y() - header - ticks, poolHeaderWidth, header),
        Qt::AlignLeft | Qt::AlignVCenter, fitted(headers, poolHeader, poolHeaderWidth));

    // Column ticks: the logical index over the block tables, the column over the pool.
    painter.setFont(labelFont);
    auto columnTicks = [&](QPointF at, int count) {
        const int every =
            tickEvery(cell, labels.horizontalAdvance(QString::number(std::max(count - 1, 0))));
        for (int c = 0; c < count; c += every)
            painter.drawText(QRectF(at.x() + c * cell - cell, at.y() - ticks, 3 * cell, ticks),
                             Qt::AlignHCenter | Qt::AlignBottom, QString::number(c));
    };
    columnTicks(tablesAt, logical);
    columnTicks(poolAt, columns);

    std::vector<const KvPoolCell*> byBlock(cells_.size(), nullptr);
    for (const auto& c : cells_)
        if (c.block >= 0 && std::size_t(c.block) < byBlock.size())
            byBlock[std::size_t(c.block)] = &c;
    for (std::size_t r = 0; r < rows_.size(); ++r) {
        const double y = tablesAt.y() + double(r) * pitch;
        painter.setFont(labelFont);
        painter.setPen(textColour());
        painter.drawText(QRectF(area.left(), y, ownerWidth - labels.averageCharWidth() / 2, cell),
                         Qt::AlignRight | Qt::AlignVCenter, rows_[r].owner);
        for (std::size_t i = 0; i < rows_[r].blocks.size(); ++i) {
            const int block = rows_[r].blocks[i];
            const KvPoolCell* pool = block >= 0 && std::size_t(block) < byBlock.size()
                                         ? byBlock[std::size_t(block)]
                                         : nullptr;
            const QRectF rect(tablesAt.x() + double(i) * cell, y, cell, cell);
            paintCell(painter, rect, pool ? *pool : KvPoolCell{block, 1, 1.0, int(r)},
                      QString::number(block), numberFont);
        }
    }
    for (int row = 0; row < shownRows; ++row) {
        painter.setFont(labelFont);
        painter.setPen(textColour());
        painter.drawText(QRectF(poolAt.x() - poolLabelWidth, poolAt.y() + row * cell,
                                poolLabelWidth - labels.averageCharWidth() / 2, cell),
                         Qt::AlignRight | Qt::AlignVCenter, QString::number(row * columns));
    }
    for (const auto& c : cells_) {
        if (c.block / columns >= shownRows) continue;
        const QRectF rect(poolAt.x() + (c.block % columns) * cell,
                          poolAt.y() + (c.block / columns) * cell, cell, cell);
        paintCell(painter, rect, c, poolText(c), numberFont);
    }
    double poolEnd = poolAt.y() + shownRows * cell;
    if (shownRows < poolRows) {
        const int first = shownRows * columns, last = int(cells_.size()) - 1;
        painter.setFont(labelFont);
        painter.setPen(textColour());
        painter.drawText(QRectF(poolAt.x(), poolEnd, columns * cell, labels.height() * 1.2),
                         Qt::AlignLeft | Qt::AlignVCenter,
                         fitted(labels, tr("blocks %1-%2: free").arg(first).arg(last),
                                area.right() - poolAt.x()));
        poolEnd += labels.height() * 1.2;
    }
    return std::max(tablesAt.y() + double(rows_.size()) * pitch, poolEnd);
}

} // namespace inferscope::widgets
