#pragma once
// Chapter item 12: speculative decoding with a quantized draft. The predicted speedup over
// the draft length g (from the measured alpha and draft cost c) beside the speedups the real
// runs measured and the break-even line; tables of alpha, c and memory per draft scheme and
// of the real runs (greedy output identical to the target's, or not).
#include "compute/experiments/SpeculativeDecoding.hpp"
#include "compute/session/LabSession.hpp"
#include "widgets/ChartPanel.hpp"
#include "widgets/JobControls.hpp"
#include "widgets/LabJobs.hpp"

class QPushButton;
class QSpinBox;

namespace inferscope::widgets {

class TableModel;

class SpeculativePanel : public ChartPanel {
    Q_OBJECT
public:
    enum Series { Predicted, Measured, BreakEven };

    explicit SpeculativePanel(QWidget* parent = nullptr);
    void subscribe(const LabJobs& jobs);
    void setStudy(compute::experiments::SpeculativeStudyPtr study);
    compute::experiments::SpeculativeStudyPtr study() const { return study_; }
    void setRunning(bool running) { controls_->setRunning(running); }
    void setProgress(const QString& line) { controls_->setProgress(line); }
    // The request the controls describe: every draft scheme, g = 2, 4, 8.
    compute::SpeculativeRequest request() const;
    void setPositions(int positions);
    void setRunTokens(int tokens);
    QPushButton* runButton() const { return controls_->runButton(); }
    QPushButton* cancelButton() const { return controls_->cancelButton(); }
    TableModel* acceptanceModel() const { return acceptance_; }
    TableModel* runsModel() const { return runs_; }
    std::vector<compute::Table> dataTables() const override;

signals:
    void runRequested(const inferscope::compute::SpeculativeRequest& request);
    void cancelRequested();

private:
    compute::experiments::SpeculativeStudyPtr study_;
    TableModel* acceptance_;
    TableModel* runs_;
    QSpinBox* positions_;
    QSpinBox* tokens_;
    JobControls* controls_;
};

} // namespace inferscope::widgets
