#include "widgets/ActivationOutliersPanel.hpp"

#include "widgets/LabJobs.hpp"
#include "widgets/TableModel.hpp"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPainter>
#include <QSlider>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <numeric>

namespace inferscope::widgets {

compute::Table activationHistogram(std::span<const float> maxAbs, double low, double high,
                                   int bins) {
    compute::Table t;
    t.id = "activation-histogram";
    t.title = "Dimensions by their max |h| (log-scaled bins)";
    t.addColumn("bin from", "", 6).addColumn("bin to", "", 6).addColumn("dimensions");
    if (bins <= 0 || !(low > 0) || !(high > low)) return t;
    const double logLow = std::log10(low), step = (std::log10(high) - logLow) / bins;
    std::vector<std::int64_t> counts(static_cast<std::size_t>(bins), 0);
    for (float value : maxAbs) {
        int bin = value > 0
                      ? static_cast<int>(std::floor((std::log10(double(value)) - logLow) / step))
                      : 0;
        ++counts[static_cast<std::size_t>(std::clamp(bin, 0, bins - 1))];
    }
    for (int i = 0; i < bins; ++i)
        t.addRow({std::pow(10.0, logLow + i * step), std::pow(10.0, logLow + (i + 1) * step),
                  counts[static_cast<std::size_t>(i)]});
    return t;
}

compute::Table outlierDimensions(const ActivationRecord& record) {
    compute::Table t;
    t.id = "outlier-dimensions";
    t.title = "Largest residual dimensions per layer";
    t.addColumn("layer")
        .addColumn("median max |h|", "", 4)
        .addColumn("largest max |h|", "", 4)
        .addColumn("largest dimension")
        .addColumn("largest / median", "x", 1)
        .addColumn("top 3 dimensions");
    for (std::size_t layer = 0; layer < record.maxAbsPerLayer.size(); ++layer) {
        const auto& values = record.maxAbsPerLayer[layer];
        if (values.empty()) continue;
        std::vector<std::size_t> order(values.size());
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(),
                         [&](std::size_t a, std::size_t b) { return values[a] > values[b]; });
        std::vector<float> sorted(values.begin(), values.end());
        std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
        double median = sorted[sorted.size() / 2];
        double largest = values[order[0]];
        std::string top;
        for (std::size_t i = 0; i < std::min<std::size_t>(3, order.size()); ++i)
            top += (i ? ", " : "") + std::to_string(order[i]);
        t.addRow({static_cast<std::int64_t>(layer), median, largest,
                  static_cast<std::int64_t>(order[0]), median > 0 ? largest / median : 0.0, top});
    }
    return t;
}

compute::Table outlierPersistence(const ActivationRecord& record, int dimensions) {
    compute::Table t;
    t.id = "outlier-persistence";
    t.title = "Top dimensions across layers (max |h| / layer median)";
    t.addColumn("layer");
    const auto& layers = record.maxAbsPerLayer;
    if (layers.empty() || layers.front().empty() || dimensions <= 0) return t;
    const std::size_t hidden = layers.front().size();
    const std::size_t k = std::min<std::size_t>(std::size_t(dimensions), hidden);
    std::vector<int> timesInTop(hidden, 0);
    std::vector<float> peak(hidden, 0.0f);
    std::vector<double> medians;
    for (const auto& values : layers) {
        std::vector<std::size_t> order(values.size());
        std::iota(order.begin(), order.end(), 0);
        std::partial_sort(order.begin(), order.begin() + std::ptrdiff_t(std::min(k, order.size())),
                          order.end(),
                          [&](std::size_t a, std::size_t b) { return values[a] > values[b]; });
        for (std::size_t i = 0; i < std::min(k, order.size()); ++i)
            if (order[i] < hidden) ++timesInTop[order[i]];
        for (std::size_t d = 0; d < std::min(hidden, values.size()); ++d)
            peak[d] = std::max(peak[d], values[d]);
        std::vector<float> sorted(values.begin(), values.end());
        std::nth_element(sorted.begin(), sorted.begin() + std::ptrdiff_t(sorted.size() / 2),
                         sorted.end());
        medians.push_back(sorted.empty() ? 0.0 : double(sorted[sorted.size() / 2]));
    }
    std::vector<std::size_t> chosen(hidden);
    std::iota(chosen.begin(), chosen.end(), 0);
    std::stable_sort(chosen.begin(), chosen.end(), [&](std::size_t a, std::size_t b) {
        if (timesInTop[a] != timesInTop[b]) return timesInTop[a] > timesInTop[b];
        return peak[a] > peak[b];
    });
    chosen.resize(k);
    for (std::size_t d : chosen) t.addColumn("dim " + std::to_string(d), "x", 1);
    for (std::size_t layer = 0; layer < layers.size(); ++layer) {
        std::vector<compute::Cell> row{static_cast<std::int64_t>(layer)};
        for (std::size_t d : chosen) {
            double value = d < layers[layer].size() ? layers[layer][d] : 0.0;
            row.push_back(medians[layer] > 0 ? value / medians[layer] : 0.0);
        }
        t.addRow(std::move(row));
    }
    return t;
}

namespace {
// Paints each ratio cell on a log colour scale: white at 1x (typical), full colour at 1000x.
class HeatDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;
    void paint(QPainter* painter, const QStyleOptionViewItem& option,
               const QModelIndex& index) const override {
        if (index.column() > 0) {
            bool ok = false;
            double ratio = index.data(TableModel::RawRole).toDouble(&ok);
            if (ok && ratio > 0) {
                double heat = std::clamp(std::log10(std::max(ratio, 1.0)) / 3.0, 0.0, 1.0);
                QColor cold(0xF7, 0xFB, 0xFF), hot(0xD5, 0x5E, 0x00);
                QColor colour =
                    QColor::fromRgbF(float(cold.redF() + (hot.redF() - cold.redF()) * heat),
                                     float(cold.greenF() + (hot.greenF() - cold.greenF()) * heat),
                                     float(cold.blueF() + (hot.blueF() - cold.blueF()) * heat));
                painter->fillRect(option.rect, colour);
                QStyleOptionViewItem text = option;
                text.palette.setColor(QPalette::Text, heat > 0.6 ? Qt::white : Qt::black);
                QStyledItemDelegate::paint(painter, text, index);
                return;
            }
        }
        QStyledItemDelegate::paint(painter, option, index);
    }
};
} // namespace

ActivationOutliersPanel::ActivationOutliersPanel(QWidget* parent)
    : ChartPanel("activation-outliers", tr("Activation outliers"),
                 tr("For each dimension of the residual stream, the largest |h| it reached over "
                    "the prompt, counted on log-scaled bins: a handful of dimensions sit far to "
                    "the right, and they are the same ones layer after layer."),
                 parent),
      histogram_(new TableModel(this)), outliers_(new TableModel(this)),
      persistence_(new TableModel(this)) {
    setAxis(Qt::Horizontal, tr("max |h| over the prompt (log scale)"), AxisScale::Log);
    setAxis(Qt::Vertical, tr("dimensions"), AxisScale::Linear);
    addSeries(tr("dimensions per bin"), SeriesKind::Area);

    auto* row = new QHBoxLayout;
    layerLabel_ = new QLabel(tr("Layer"), this);
    slider_ = new QSlider(Qt::Horizontal, this);
    slider_->setObjectName("layerSlider");
    slider_->setRange(0, 0);
    slider_->setEnabled(false);
    slider_->setToolTip(tr("Which layer's residual stream (after the layer) to show"));
    row->addWidget(layerLabel_);
    row->addWidget(slider_, 1);
    extrasLayout()->addLayout(row);
    auto* heat = persistenceView_ = new QTableView(this);
    heat->setObjectName("persistenceView");
    heat->setModel(persistence_);
    heat->setItemDelegate(new HeatDelegate(heat));
    heat->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    heat->verticalHeader()->hide();
    heat->setMaximumHeight(200);
    heat->setToolTip(tr("Layers down, the most persistent top dimensions across: each cell is "
                        "the dimension's max |h| over its layer's median, so a column that stays "
                        "hot shows an outlier dimension that persists through the network"));
    extrasLayout()->addWidget(heat);
    connect(slider_, &QSlider::valueChanged, this, [this](int value) {
        rebuildHistogram();
        if (value < persistence_->rowCount())
            persistenceView_->scrollTo(persistence_->index(value, 0)); // the chosen layer's row
        emit layerChanged(value);
    });
    connect(histogram_, &QAbstractItemModel::modelReset, this,
            &ActivationOutliersPanel::rebuildChart);
    rebuildChart();
}

void ActivationOutliersPanel::setActivations(ActivationRecordPtr record) {
    record_ = std::move(record);
    int layers = record_ ? static_cast<int>(record_->maxAbsPerLayer.size()) : 0;
    // One bin range for all layers, so moving the slider compares like with like.
    float smallest = std::numeric_limits<float>::infinity(), largest = 0;
    if (record_)
        for (const auto& values : record_->maxAbsPerLayer)
            for (float v : values) {
                if (v > 0) smallest = std::min(smallest, v);
                largest = std::max(largest, v);
            }
    if (largest > 0) {
        low_ = std::pow(10.0, std::floor(std::log10(double(smallest))));
        high_ = std::pow(10.0, std::ceil(std::log10(double(largest))));
        if (high_ <= low_) high_ = low_ * 10;
    }
    outliers_->setTable(record_ ? outlierDimensions(*record_) : compute::Table{});
    persistence_->setTable(record_ ? outlierPersistence(*record_) : compute::Table{});
    QSignalBlocker block(slider_);
    slider_->setRange(0, std::max(0, layers - 1));
    slider_->setEnabled(layers > 1);
    rebuildHistogram();
}

void ActivationOutliersPanel::setLayer(int layer) {
    slider_->setValue(layer);
}
int ActivationOutliersPanel::layer() const {
    return slider_->value();
}

std::vector<compute::Table> ActivationOutliersPanel::dataTables() const {
    if (!record_ || record_->maxAbsPerLayer.empty()) return {};
    auto histogram = histogram_->table();
    histogram.title += " - layer " + std::to_string(layer());
    return {histogram, outliers_->table(), persistence_->table()};
}

void ActivationOutliersPanel::rebuildHistogram() {
    int layers = record_ ? static_cast<int>(record_->maxAbsPerLayer.size()) : 0;
    int layer = slider_->value();
    layerLabel_->setText(layers ? tr("Layer %1 of %2").arg(layer).arg(layers - 1) : tr("Layer"));
    if (!record_ || layer >= layers) {
        histogram_->setTable({});
        return;
    }
    int decades = static_cast<int>(std::lround(std::log10(high_ / low_)));
    histogram_->setTable(
        activationHistogram(record_->maxAbsPerLayer[static_cast<std::size_t>(layer)], low_, high_,
                            std::max(1, decades) * kBinsPerDecade));
}

void ActivationOutliersPanel::rebuildChart() {
    // A step outline: each bin is a flat top from its lower to its upper edge.
    QList<QPointF> steps;
    for (int row = 0; row < histogram_->rowCount(); ++row) {
        double from = histogram_->number(row, 0), to = histogram_->number(row, 1);
        double count = histogram_->number(row, 2);
        if (row == 0) steps.append(QPointF(from, 0));
        steps.append(QPointF(from, count));
        steps.append(QPointF(to, count));
        if (row + 1 == histogram_->rowCount()) steps.append(QPointF(to, 0));
    }
    setSeriesPoints(Histogram, steps);
    if (!record_ || outliers_->rowCount() == 0) {
        setSummary({});
        return;
    }
    int row = std::min(layer(), outliers_->rowCount() - 1);
    QLocale locale;
    setSummary(tr("Layer %1: dimension %2 reaches %3, %4× the median %5 · top dimensions %6 · over "
                  "%7 positions")
                   .arg(layer())
                   .arg(qlonglong(outliers_->number(row, 3)))
                   .arg(locale.toString(outliers_->number(row, 2), 'g', 4))
                   .arg(locale.toString(outliers_->number(row, 4), 'f', 1))
                   .arg(locale.toString(outliers_->number(row, 1), 'g', 3))
                   .arg(outliers_->data(outliers_->index(row, 5)).toString())
                   .arg(record_->positions));
}

void ActivationOutliersPanel::subscribe(const LabJobs& jobs) {
    connect(&jobs, &LabJobs::activationsUpdated, this, &ActivationOutliersPanel::setActivations);
    connect(&jobs, &LabJobs::modelLoaded, this, [this] { setActivations(nullptr); });
}

} // namespace inferscope::widgets
