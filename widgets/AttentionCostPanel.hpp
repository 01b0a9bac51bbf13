#pragma once
// Chapter item 1, one attention head timed both ways on the device: the uncached step writes
// and reads the n x n score matrix, the cached step one 1 x n row. Time per n on a log-log
// chart, bytes and the CPU check in the table (compute::experiments::attentionHeadTable).
#include "widgets/ChartPanel.hpp"
#include "widgets/LabJobs.hpp"

class QPushButton;
class QComboBox;

namespace inferscope::widgets {

class TableModel;

class AttentionCostPanel : public ChartPanel {
    Q_OBJECT
public:
    enum Series { Uncached, Cached };

    explicit AttentionCostPanel(QWidget* parent = nullptr);
    void subscribe(const LabJobs& jobs);
    void setTables(const TablesPtr& tables);
    void setRunning(bool running);
    // The lengths the next run measures: 256, 512, ... up to the chosen maximum.
    std::vector<std::uint32_t> lengths() const;
    QComboBox* maxLengthBox() const { return maxLength_; }
    QPushButton* runButton() const { return run_; }
    TableModel* model() const { return model_; }
    std::vector<compute::Table> dataTables() const override;

signals:
    void runRequested(const std::vector<std::uint32_t>& lengths);

private:
    void rebuild();

    TableModel* model_;
    QComboBox* maxLength_;
    QPushButton* run_;
};

} // namespace inferscope::widgets
