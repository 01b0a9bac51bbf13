#pragma once
// Chapter item 9: per layer, the largest |h| each residual-stream dimension reached over
// the prompt, as a histogram on log-scaled bins. A few dimensions sit orders of magnitude
// above the rest, and the same ones do so in every layer.
#include "widgets/ChartPanel.hpp"
#include "widgets/RunRecords.hpp"

#include <span>

class QLabel;
class QSlider;
class QTableView;

namespace inferscope::widgets {

class LabJobs;
class TableModel;

// Bin edges equally spaced in log10 between low and high (both > 0); values <= low
// (zeros included) count in the first bin, values >= high in the last.
compute::Table activationHistogram(std::span<const float> maxAbs, double low, double high,
                                   int bins);
// Per layer: median and largest per-dimension max |h|, the largest's dimension, their
// ratio, and the top three dimensions (do the same ones persist across layers?).
compute::Table outlierDimensions(const ActivationRecord& record);
// Layers x top dimensions: the `dimensions` dimensions that most often rank among the top
// `dimensions` of a layer (ties: the larger peak), as columns "dim <d>"; each cell is that
// dimension's max |h| over its layer's median. Columns that stay large down the rows are
// outliers that persist across layers.
compute::Table outlierPersistence(const ActivationRecord& record, int dimensions = 8);

class ActivationOutliersPanel : public ChartPanel {
    Q_OBJECT
public:
    enum Series { Histogram };
    static constexpr int kBinsPerDecade = 8;

    explicit ActivationOutliersPanel(QWidget* parent = nullptr);
    // Follows the lab's jobs by itself: each run's prompt activations; cleared when a model loads.
    void subscribe(const LabJobs& jobs);
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

    ActivationRecordPtr record_;
    double low_ = 1e-3, high_ = 1e3;
    TableModel* histogram_;
    TableModel* outliers_;
    TableModel* persistence_;
    QSlider* slider_;
    QLabel* layerLabel_;
    QTableView* persistenceView_;
};

} // namespace inferscope::widgets
