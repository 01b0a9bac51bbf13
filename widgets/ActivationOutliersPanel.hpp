#pragma once
// Chapter item 9: per layer, the largest |h| each residual-stream dimension reached over
// the prompt, as a histogram on octave bins (experiments::activationHistogram, the same table
// `inferscope-cli report activations` prints), the per-layer outlier table and the persistence
// heat map. The panel only draws.
#include "compute/experiments/quantization/ActivationReport.hpp"
#include "widgets/LabPanel.hpp"
#include "widgets/RunRecords.hpp"

#include <span>

class QLabel;
class QSlider;
class QTableView;

namespace inferscope::widgets {

class LabJobs;
class TableModel;

// The panel's tables come from compute/experiments (the CLI prints the same ones).
using compute::experiments::activationHistogram;
using compute::experiments::activationLayers;
using compute::experiments::outlierPersistence;

class ActivationOutliersPanel : public LabPanel {
    Q_OBJECT
public:
    enum Series { Histogram };
    static constexpr std::uint32_t kTopDimensions = 4; // as `report activations` by default

    explicit ActivationOutliersPanel(QWidget* parent = nullptr);
    // Follows the lab's jobs by itself: each run's prompt activations; cleared when a model loads.
    void attach(const PanelContext& context) override;
    void setActivations(ActivationRecordPtr record);
    void setLayer(int layer);
    int layer() const;
    TableModel* histogramModel() const { return histogram_; }
    TableModel* outlierModel() const { return outliers_; }
    TableModel* persistenceModel() const { return persistence_; }
    std::vector<compute::Table> dataTables() const override;

signals:
    void layerChanged(int layer);

private:
    void rebuildHistogram();
    void rebuildChart();
    // The record's ready tables when they were made for this panel's K, else null.
    const compute::ActivationPanelTables* precomputed() const;

    ActivationRecordPtr record_;
    std::int64_t topEdge_ = 1; // the upper edge of the largest bin over every layer
    TableModel* histogram_;
    TableModel* outliers_;
    TableModel* persistence_;
    QSlider* slider_;
    QLabel* layerLabel_;
    QTableView* persistenceView_;
};

} // namespace inferscope::widgets
