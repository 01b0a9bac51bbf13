#pragma once
// Chapter item 10: how many INT8 (of 256) and INT4 (of 16) levels each residual dimension
// of one layer really uses when the whole tensor shares one absmax scale, and again when the
// top-K outlier dimensions are kept aside (their own precision) so the scale follows the rest.
#include "compute/experiments/quantization/ActivationReport.hpp"
#include "widgets/LabPanel.hpp"
#include "widgets/RunRecords.hpp"

class QLabel;
class QSpinBox;

namespace inferscope::widgets {

class LabJobs;
class TableModel;

// The panel draws experiments::levelsByDimension and shows experiments::activationReport's
// level tables; it computes none of its own.
using compute::experiments::levelsByDimension;

class QuantLevelsPanel : public LabPanel {
    Q_OBJECT
public:
    enum Series { Int8Tensor, Int8Excluded, Int4Tensor, Int4Excluded };

    explicit QuantLevelsPanel(QWidget* parent = nullptr);
    // Follows the lab's jobs by itself: each run's prompt recording; cleared when a model loads.
    void attach(const PanelContext& context) override;
    QString emptyReason() const override {
        return tr("this run did not record the residual stream");
    }
    void setActivations(ActivationRecordPtr record);
    void setLayer(int layer);
    int layer() const { return layer_; }
    QSpinBox* topKBox() const { return topK_; }
    TableModel* model() const { return model_; }
    std::vector<compute::Table> dataTables() const override;

signals:
    void layerChanged(int layer);

private:
    void recompute();
    void rebuild();

    ActivationRecordPtr record_;
    int layer_ = 0;
    TableModel* model_;
    std::vector<compute::Table> report_; // experiments::activationReport's level tables
    QSpinBox* layerBox_;
    QSpinBox* topK_;
};

} // namespace inferscope::widgets
