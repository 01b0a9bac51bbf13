#pragma once
// Chapter item 1, one attention head timed both ways on the device: the uncached step writes
// and reads the n x n score matrix, the cached step one 1 x n row. Time per n on a log-log
// chart, bytes and the CPU check in the table (compute::experiments::attentionHeadTable).
#include "widgets/JobControls.hpp"
#include "widgets/LabPanel.hpp"

class QPushButton;
class QComboBox;

namespace inferscope::widgets {

class TableModel;

class AttentionCostPanel : public LabPanel {
    Q_OBJECT
public:
    enum Series { Uncached, Cached };

    // The scripted run times the head up to this length (the panel goes to 4,096).
    static constexpr std::uint32_t kScriptMaxLength = 1024;

    explicit AttentionCostPanel(QWidget* parent = nullptr);
    void attach(const PanelContext& context) override;
    std::optional<quint64> runScripted() override;
    // Times the head at these lengths on the device (0: busy). Needs no model.
    quint64 run(const std::vector<std::uint32_t>& lengths);
    void setTables(const std::vector<compute::Table>& tables);
    // The lengths the next run measures: 256, 512, ... up to the chosen maximum.
    std::vector<std::uint32_t> lengths() const;
    QComboBox* maxLengthBox() const { return maxLength_; }
    QPushButton* runButton() const { return controls_->runButton(); }
    QPushButton* cancelButton() const { return controls_->cancelButton(); }
    TableModel* model() const { return model_; }
    std::vector<compute::Table> dataTables() const override;

private:
    void rebuild();

    TableModel* model_;
    QComboBox* maxLength_;
    JobControls* controls_;
};

} // namespace inferscope::widgets
