#pragma once
// Chapter item 12: speculative decoding with a quantized draft. The chapter's predicted
// speedup over the draft length g (from the measured alpha and draft cost c, verification at
// one step) and this device's (verification at its measured v(g) steps) beside the speedups
// the real runs measured and the break-even line; tables of alpha, c and memory per draft scheme
// and of the real runs (greedy output identical to the target's, or not).
#include "compute/experiments/speculative/SpeculativeLab.hpp"
#include "widgets/JobControls.hpp"
#include "widgets/LabPanel.hpp"

#include <QStringList>

class QCheckBox;
class QPushButton;
class QSpinBox;

namespace inferscope::widgets {

class TableModel;

class SpeculativePanel : public LabPanel {
    Q_OBJECT
public:
    // Predicted: the chapter's formula (verification costs one step); DevicePredicted: the
    // same with this device's measured verify cost v(g).
    enum Series { Predicted, Measured, BreakEven, DevicePredicted };

    // The scripted run: the quick drafts over this many positions, this many tokens per run
    // (the panel's defaults: the quick drafts, 144 positions, 64 tokens).
    static constexpr int kScriptPositions = 48;
    static constexpr int kScriptTokens = 24;
    // The drafts a run measures unless "every draft scheme" is ticked: an 8-bit and a 4-bit
    // one, which make the chapter's point in about half the time of all four (the default
    // run stays under half a minute on two lavapipe cores).
    static const QStringList& quickDrafts();

    explicit SpeculativePanel(QWidget* parent = nullptr);
    void attach(const PanelContext& context) override;
    std::optional<quint64> runScripted() override;
    QString emptyReason() const override;
    // Starts the study (0: busy).
    quint64 run(const compute::experiments::SpeculativeRequest& request);
    void setStudy(compute::experiments::SpeculativeStudyPtr study);
    compute::experiments::SpeculativeStudyPtr study() const { return study_; }
    // The request the controls describe: the quick drafts or every draft scheme, g = 2, 4, 8.
    compute::experiments::SpeculativeRequest request() const;
    void setPositions(int positions);
    void setRunTokens(int tokens);
    void setEveryDraft(bool every);
    QPushButton* runButton() const { return controls_->runButton(); }
    QPushButton* cancelButton() const { return controls_->cancelButton(); }
    TableModel* acceptanceModel() const { return acceptance_; }
    TableModel* runsModel() const { return runs_; }
    std::vector<compute::Table> dataTables() const override;

private:
    QString backend_;
    compute::experiments::SpeculativeStudyPtr study_;
    TableModel* acceptance_;
    TableModel* runs_;
    QSpinBox* positions_;
    QSpinBox* tokens_;
    QCheckBox* everyDraft_;
    JobControls* controls_;
};

} // namespace inferscope::widgets
