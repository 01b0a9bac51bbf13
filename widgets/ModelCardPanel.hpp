#pragma once
// What the loaded model is: its shape (experiments::modelInfo), what its weights weigh by
// tensor type (experiments::weightBytesByType, drawn as bars) and its KV cache cost per
// token (experiments::kvCacheBytes).
#include "widgets/ChartPanel.hpp"
#include "widgets/RunRecords.hpp"

class QTableView;

namespace inferscope::widgets {

class LabJobs;
class TableModel;

class ModelCardPanel : public ChartPanel {
    Q_OBJECT
public:
    enum Series { WeightBytes };

    explicit ModelCardPanel(QWidget* parent = nullptr);
    // Follows the lab's jobs by itself: each model that loads.
    void subscribe(const LabJobs& jobs);
    void setModel(ModelRecordPtr model);
    ModelRecordPtr modelRecord() const { return model_; }
    TableModel* infoModel() const { return info_; }
    TableModel* weightModel() const { return weights_; }
    TableModel* kvModel() const { return kv_; }
    std::vector<compute::Table> dataTables() const override;

private:
    void rebuild();

    ModelRecordPtr model_;
    TableModel* info_;
    TableModel* weights_;
    TableModel* kv_;
    QTableView* infoView_;
    QTableView* kvView_;
};

} // namespace inferscope::widgets
