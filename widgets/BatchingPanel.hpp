#pragma once
// Chapter item 6: throughput and per-request latency over the batch size B, both as
// multipliers of the measured B = 1, beside the roofline's throughput (each step reads the
// weights once and every sequence's KV at the measured bandwidth), with the knee marked. The
// sweep runs on the worker thread (LabJobs::batchingSweep); the panel asks for it and shows
// the tables it returns (experiments/BatchingSweep).
#include "compute/session/LabSession.hpp"
#include "widgets/ChartPanel.hpp"
#include "widgets/JobControls.hpp"

class QSpinBox;

namespace inferscope::widgets {

class TableModel;

class BatchingPanel : public ChartPanel {
    Q_OBJECT
public:
    enum Series { Throughput, Latency, Roofline, Knee };

    explicit BatchingPanel(QWidget* parent = nullptr);
    void subscribe(const LabJobs& jobs);
    void setTables(std::vector<compute::Table> tables);
    void clear();
    void setRunning(bool running) { controls_->setRunning(running); }
    void setProgress(const QString& line) { controls_->setProgress(line); }
    // What the controls ask for: B = 1, 2, 4, ... up to the largest, the context, the steps.
    compute::BatchingRequest request() const;
    void setLargestBatch(int batch);
    QPushButton* runButton() const { return controls_->runButton(); }
    QPushButton* cancelButton() const { return controls_->cancelButton(); }
    TableModel* model() const { return model_; }
    std::vector<compute::Table> dataTables() const override;

signals:
    void sweepRequested(const compute::BatchingRequest& request);
    void cancelRequested();

private:
    std::vector<compute::Table> tables_;
    TableModel* model_;
    QSpinBox* largest_;
    QSpinBox* context_;
    JobControls* controls_;
};

} // namespace inferscope::widgets
