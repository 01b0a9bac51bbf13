#pragma once
// Chapter item 7, the paged KV cache from inside (experiments/KvBlockMap), drawn as the
// paged-attention picture (KvBlocksFigure): each sequence's block table (logical -> physical)
// beside the physical pool, free, used, partly filled and shared blocks apart, a shared
// block's reference count written in it. The table under it is each snapshot's figures (internal
// fragmentation against reserving every slot's maximum context), and the prefix-sharing run
// below that. Filled by the scheduler lab (SchedulerLab, started by the Scheduler panel), which
// takes the snapshots during its continuous-batching run.
#include "widgets/LabPanel.hpp"

class QComboBox;

namespace inferscope::widgets {

class KvBlocksFigure;
class LabJobs;
class TableModel;

class KvBlocksPanel : public LabPanel {
    Q_OBJECT
public:
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
    KvBlocksFigure* figure() const { return figure_; }
    TableModel* mapModel() const { return mapModel_; }
    TableModel* prefixModel() const { return prefixModel_; }
    std::vector<compute::Table> dataTables() const override;

private:
    void draw();

    std::vector<compute::Table> tables_;
    QString backend_;
    KvBlocksFigure* figure_;
    QComboBox* snapshot_;
    TableModel* mapModel_;
    TableModel* prefixModel_;
};

} // namespace inferscope::widgets
