#pragma once
// What the loaded model is: its shape (experiments::modelInfo), what its weights weigh by
// tensor type (experiments::weightBytesByType, drawn as bars), its KV cache cost per
// token (experiments::kvCacheBytes) and what it takes on the device and the host in the
// chosen backend and format against what they have (compute::loadFootprintTable).
#include "widgets/LabPanel.hpp"
#include "widgets/RunRecords.hpp"

class QTableView;

namespace inferscope::widgets {

class LabJobs;
class TableModel;

class ModelCardPanel : public LabPanel {
    Q_OBJECT
public:
    enum Series { WeightBytes };

    explicit ModelCardPanel(QWidget* parent = nullptr);
    // Follows the lab's jobs by itself: each model that loads.
    void attach(const PanelContext& context) override;
    void setModel(ModelRecordPtr model);
    ModelRecordPtr modelRecord() const { return model_; }
    TableModel* infoModel() const { return info_; }
    TableModel* weightModel() const { return weights_; }
    TableModel* kvModel() const { return kv_; }
    TableModel* footprintModel() const { return footprint_; }
    std::vector<compute::Table> dataTables() const override;

private:
    void rebuild();
    QString footprintSummary() const;

    ModelRecordPtr model_;
    TableModel* info_;
    TableModel* weights_;
    TableModel* kv_;
    TableModel* footprint_;
    QTableView* infoView_;
    QTableView* kvView_;
    QTableView* footprintView_;
};

} // namespace inferscope::widgets
