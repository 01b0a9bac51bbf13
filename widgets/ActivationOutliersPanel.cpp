#include "widgets/ActivationOutliersPanel.hpp"

#include "widgets/LabJobs.hpp"
#include "widgets/LabSelection.hpp"
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

// "−" for the bin [0, 1), else the exponent n of the bin [2ⁿ, 2ⁿ⁺¹): short enough that no
// label is cut to "..." when sixteen bars share a chart beside the controls (and no "<": axis
// labels are rich text).
QString binLabel(std::int64_t lowerEdge) {
    if (lowerEdge < 1) return QString::fromUtf8("−");
    int exponent = 0;
    while ((std::int64_t(1) << (exponent + 1)) <= lowerEdge) ++exponent;
    return QString::number(exponent);
}
} // namespace

ActivationOutliersPanel::ActivationOutliersPanel(QWidget* parent)
    : LabPanel("activation-outliers", tr("Activation outliers"),
               tr("For each dimension of the residual stream, the largest |h| it reached over "
                  "the prompt, counted in doubling bins; the persistence table follows the "
                  "largest dimensions through the layers."),
               parent),
      histogram_(new TableModel(this)), outliers_(new TableModel(this)),
      persistence_(new TableModel(this)) {
    // Each bar is labelled with the exponent of its bin's lower edge (see binLabel).
    setAxis(Qt::Horizontal, tr("max |h| over the prompt (bar n: 2ⁿ to 2ⁿ⁺¹, bar −: under 1)"),
            AxisScale::Category);
    setAxis(Qt::Vertical, tr("dimensions (log scale)"), AxisScale::Log);
    addSeries(tr("dimensions per bin"), SeriesKind::Bars);
    setEmptyHint(tr("Press Generate: the prompt's residual stream is recorded and each "
                    "dimension's largest |h| lands here."));

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
    // One set of bins on the chart for all layers, so moving the slider compares like with
    // like: up to the bin that holds the largest value of any layer.
    float largest = 0;
    if (record_)
        for (const auto& values : record_->maxAbsPerLayer)
            for (float v : values) largest = std::max(largest, v);
    topEdge_ = 1;
    while (double(topEdge_) <= largest) topEdge_ *= 2;
    const auto positions = record_ ? static_cast<std::uint32_t>(record_->positions) : 0u;
    // A lab run hands its tables ready (computed on the job's thread); others are made here.
    const auto* ready = precomputed();
    outliers_->setTable(ready ? ready->layers
                        : record_
                            ? activationLayers(record_->maxAbsPerLayer, kTopDimensions, positions)
                            : compute::Table{});
    persistence_->setTable(ready     ? ready->persistence
                           : record_ ? outlierPersistence(record_->maxAbsPerLayer)
                                     : compute::Table{});
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
    if (!record_ || record_->maxAbsPerLayer.empty() || histogram_->rowCount() == 0) return {};
    return {histogram_->table(), outliers_->table(), persistence_->table()};
}

void ActivationOutliersPanel::rebuildHistogram() {
    int layers = record_ ? static_cast<int>(record_->maxAbsPerLayer.size()) : 0;
    int layer = slider_->value();
    layerLabel_->setText(layers ? tr("Layer %1 (of 0-%2)").arg(layer).arg(layers - 1)
                                : tr("Layer"));
    if (!record_ || layer >= layers ||
        record_->maxAbsPerLayer[static_cast<std::size_t>(layer)].empty()) {
        histogram_->setTable({});
        return;
    }
    const auto* ready = precomputed();
    if (ready && std::size_t(layer) < ready->histograms.size()) {
        histogram_->setTable(ready->histograms[std::size_t(layer)]);
        return;
    }
    histogram_->setTable(
        activationHistogram(record_->maxAbsPerLayer, static_cast<std::uint32_t>(layer)));
}

const compute::ActivationPanelTables* ActivationOutliersPanel::precomputed() const {
    if (!record_ || !record_->panelTables) return nullptr;
    const auto& tables = *record_->panelTables;
    if (tables.topDimensions != kTopDimensions ||
        tables.histograms.size() != record_->maxAbsPerLayer.size())
        return nullptr;
    return &tables;
}

void ActivationOutliersPanel::rebuildChart() {
    QStringList categories;
    QList<qreal> counts;
    if (histogram_->rowCount() > 0) {
        const auto& table = histogram_->table();
        const auto from = table.columnIndex("from"), to = table.columnIndex("to"),
                   count = table.columnIndex("dimensions");
        std::int64_t edge = 0;
        for (int row = 0; row < histogram_->rowCount(); ++row) {
            edge = std::int64_t(histogram_->number(row, int(to)));
            categories << binLabel(std::int64_t(histogram_->number(row, int(from))));
            counts << histogram_->number(row, int(count));
        }
        // Empty bins up to the largest value of any layer: the same axis for every layer.
        for (; edge > 0 && edge < topEdge_; edge *= 2) {
            categories << binLabel(edge);
            counts << 0.0;
        }
    }
    setBarValues(Histogram, categories, counts);
    if (!record_ || outliers_->rowCount() == 0) {
        setSummary({});
        return;
    }
    const auto& table = outliers_->table();
    int row = std::min(layer(), outliers_->rowCount() - 1);
    const int layers = outliers_->rowCount();
    QLocale locale;
    const double median = outliers_->number(row, int(table.columnIndex("median dim max |h|")));
    setSummary(
        tr("Layer %1 (of 0-%2): dimension %3 reaches %4, %5× the median %6 · top "
           "dimensions %7 · over %8 positions")
            .arg(layer())
            .arg(layers - 1)
            .arg(qlonglong(outliers_->number(row, int(table.columnIndex("top dimension")))))
            .arg(locale.toString(outliers_->number(row, int(table.columnIndex("max |h|"))), 'f', 2))
            .arg(locale.toString(outliers_->number(row, int(table.columnIndex("max/median"))), 'f',
                                 1))
            .arg(locale.toString(median, 'f', 3))
            .arg(outliers_->data(outliers_->index(row, 5)).toString())
            .arg(record_->positions));
}

void ActivationOutliersPanel::attach(const PanelContext& context) {
    auto* selection = context.selection;
    connect(context.jobs, &LabJobs::activationsUpdated, this,
            [this, selection](const ActivationRecordPtr& record) {
                setActivations(record);
                // The panel had no layers before its data: now it can show the selected one.
                setLayer(selection->layer());
            });
    connect(context.jobs, &LabJobs::modelLoaded, this, [this] { setActivations(nullptr); });
    connect(this, &ActivationOutliersPanel::layerChanged, selection, &LabSelection::setLayer);
    connect(selection, &LabSelection::layerChanged, this, &ActivationOutliersPanel::setLayer);
}

} // namespace inferscope::widgets
