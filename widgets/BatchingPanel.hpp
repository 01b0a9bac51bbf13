#pragma once
// Chapter item 6: throughput and per-request latency over the batch size B, both as
// multipliers of the measured B = 1, beside the roofline's throughput (each step reads the
// weights once and every sequence's KV at the measured bandwidth), with the knee marked. The
// sweep (compute/experiments/batching/BatchingLab) runs on the worker thread; the panel starts
// it and draws the tables it returns.
#include "compute/experiments/batching/BatchingLab.hpp"
#include "widgets/JobControls.hpp"
#include "widgets/LabPanel.hpp"

class QSpinBox;

namespace inferscope::widgets {

class TableModel;

class BatchingPanel : public LabPanel {
    Q_OBJECT
public:
    enum Series { Throughput, Latency, Roofline, Knee };

    // The scripted run: B up to this, this many timed steps per B.
    static constexpr int kScriptLargestBatch = 16;
    static constexpr std::uint32_t kScriptSteps = 4;

    explicit BatchingPanel(QWidget* parent = nullptr);
    void attach(const PanelContext& context) override;
    std::optional<quint64> runScripted() override;
    QString emptyReason() const override;
    // Starts the sweep (0: busy).
    quint64 run(const compute::experiments::BatchingRequest& request);
    void setTables(std::vector<compute::Table> tables);
    void clear();
    // What the controls ask for: B = 1, 2, 4, ... up to the largest, the context, the steps.
    compute::experiments::BatchingRequest request() const;
    void setLargestBatch(int batch);
    QPushButton* runButton() const { return controls_->runButton(); }
    QPushButton* cancelButton() const { return controls_->cancelButton(); }
    TableModel* model() const { return model_; }
    std::vector<compute::Table> dataTables() const override;

private:
    QString backend_;
    std::vector<compute::Table> tables_;
    TableModel* model_;
    QSpinBox* largest_;
    QSpinBox* context_;
    JobControls* controls_;
};

} // namespace inferscope::widgets
