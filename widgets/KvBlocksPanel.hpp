#pragma once
// Chapter item 7, the paged KV cache from inside (experiments/KvBlockMap): every physical
// block of one snapshot as a square of a grid (block 0 top left, row by row), coloured by the
// slot that holds it, a small mark on a partly filled last block, shared blocks (a common
// prefix) and free blocks apart. The table under it is each snapshot's figures (internal
// fragmentation against reserving every slot's maximum context), and the prefix-sharing run
// below that. Filled by the scheduler lab (SchedulerLab, started by the Scheduler panel), which
// takes the snapshots during its continuous-batching run.
#include "widgets/LabPanel.hpp"

class QComboBox;

namespace inferscope::widgets {

class LabJobs;
class TableModel;

class KvBlocksPanel : public LabPanel {
    Q_OBJECT
public:
    // Slots share colours modulo this many owner series (the palette's six).
    static constexpr int kOwnerColours = 6;
    enum Series { FirstOwner = 0, PartlyFilled = kOwnerColours, Shared, Free };

    explicit KvBlocksPanel(QWidget* parent = nullptr);
    // The Scheduler panel's run carries the block map.
    void attach(const PanelContext& context) override;
    QString emptyReason() const override;
    // Keeps the kv-block-* and prefix-sharing tables among a scheduler result's tables.
    void setTables(std::vector<compute::Table> tables);
    void clear();
    // Which snapshot (a row of kv-block-map) the grid draws.
    void setSnapshot(int index);
    int snapshot() const;
    QComboBox* snapshotBox() const { return snapshot_; }
    TableModel* mapModel() const { return mapModel_; }
    TableModel* prefixModel() const { return prefixModel_; }
    std::vector<compute::Table> dataTables() const override;

private:
    void draw();

    std::vector<compute::Table> tables_;
    QString backend_;
    QComboBox* snapshot_;
    TableModel* mapModel_;
    TableModel* prefixModel_;
};

} // namespace inferscope::widgets
