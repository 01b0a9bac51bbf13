#pragma once
// The KV blocks panel's picture, as the paged-attention papers draw it: on the left each
// sequence's block table (logical block i -> the physical block written in cell i), on the
// right the physical pool as a grid (block 0 top left, row by row, the first block of each
// row at its left). A block is free (blank), used by one sequence (its sequence's colour;
// a partly filled block coloured only as far as it is written, its empty tail dotted) or
// shared by a prefix (grey, cross-hatched, its reference count written in it). Built from the
// lab's "kv-block-tables" and "kv-block-cells" tables for one snapshot.
#include "compute/Table.hpp"
#include "widgets/PaintedFigure.hpp"

#include <string>
#include <vector>

namespace inferscope::widgets {

struct KvPoolCell {
    int block = 0;
    int references = 0; // 0: free; > 1: shared
    double fill = 0;    // written part, 0..1
    int owner = -1;     // the table row that holds it alone (-1: free or shared)
};

struct KvTableRow {
    QString owner; // "request 12"
    int slot = -1;
    std::vector<int> blocks; // physical block of each logical block
};

class KvBlocksFigure : public PaintedFigure {
    Q_OBJECT
public:
    explicit KvBlocksFigure(ChartPanel* panel);
    // The snapshot `label` of the lab's tables (either may be null: nothing drawn).
    void setSnapshot(const compute::Table* blockTables, const compute::Table* cells,
                     const std::string& label);
    void clear();

    const std::vector<KvPoolCell>& poolCells() const { return cells_; }
    const std::vector<KvTableRow>& tableRows() const { return rows_; }
    // How the last paint laid the pool out: its width, its rows, how many of them were drawn
    // (the free rows after the last used block fold into one line where cells would be too
    // small for a number), the cell's side and the smallest side a number is written in.
    struct PoolLayout {
        int columns = 0, rows = 0, shownRows = 0;
        double cell = 0, legibleCell = 0;
    };
    const PoolLayout& poolLayout() const { return poolLayout_; }
    // What a pool cell says: a shared block's reference count, else nothing.
    static QString poolText(const KvPoolCell& cell);
    QColor rowColour(int row) const;
    QBrush fillOf(const KvPoolCell& cell) const;
    QBrush patternOf(const KvPoolCell& cell) const;

protected:
    double paintPlot(QPainter& painter, const QRectF& area) override;

private:
    // One block as a cell (pool or block table), with `text` written in it.
    void paintCell(QPainter& painter, const QRectF& rect, const KvPoolCell& cell,
                   const QString& text, const QFont& font) const;

    std::vector<KvPoolCell> cells_;
    std::vector<KvTableRow> rows_;
    PoolLayout poolLayout_;
};

} // namespace inferscope::widgets
