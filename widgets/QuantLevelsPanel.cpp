#include "widgets/QuantLevelsPanel.hpp"

#include "widgets/LabJobs.hpp"
#include "widgets/LabSelection.hpp"
#include "widgets/TableModel.hpp"

#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace inferscope::widgets {

namespace experiments = compute::experiments;

QuantLevelsPanel::QuantLevelsPanel(QWidget* parent)
    : LabPanel("quant-levels", tr("Quantization levels"),
               tr("Distinct INT8 (of 256) and INT4 (of 16) levels each dimension uses when one "
                  "absmax scale covers the whole layer, and when the top K dimensions are kept "
                  "aside so the scale follows the rest. A dimension cannot use more levels "
                  "than the prompt has positions."),
               parent),
      model_(new TableModel(this)) {
    setAxis(Qt::Horizontal, tr("dimension, by max |h| (0: largest)"), AxisScale::Linear);
    setAxis(Qt::Vertical, tr("distinct levels used (log scale)"), AxisScale::Log);
    addSeries(tr("INT8, one scale"), SeriesKind::Line);
    addSeries(tr("INT8, top K excluded"), SeriesKind::Line);
    addSeries(tr("INT4, one scale"), SeriesKind::DashedLine);
    addSeries(tr("INT4, top K excluded"), SeriesKind::DashedLine);
    setEmptyHint(tr("Press Generate: the prompt's residual stream is recorded, then each "
                    "dimension's INT8 and INT4 levels are counted here."));

    auto* row = new QHBoxLayout;
    row->addWidget(new QLabel(tr("Layer"), this));
    // "layer 20 (of 0-29)": the box says which end is which.
    layerBox_ = new QSpinBox(this);
    layerBox_->setObjectName("levelsLayer");
    layerBox_->setRange(0, 0);
    layerBox_->setSuffix(tr(" (of 0-0)"));
    layerBox_->setToolTip(tr("The layer whose residual stream is quantized (shared with the "
                             "outlier panel)"));
    row->addWidget(layerBox_);
    row->addWidget(new QLabel(tr("Exclude top K dimensions"), this));
    topK_ = new QSpinBox(this);
    topK_->setObjectName("levelsTopK");
    topK_->setRange(1, 64);
    topK_->setValue(4);
    topK_->setToolTip(tr("How many of the largest dimensions keep their own precision, so the "
                         "shared scale follows the others"));
    row->addWidget(topK_);
    row->addStretch(1);
    extrasLayout()->addLayout(row);
    connect(layerBox_, &QSpinBox::valueChanged, this, [this](int value) {
        if (value == layer_) return;
        layer_ = value;
        recompute();
        emit layerChanged(value);
    });
    connect(topK_, &QSpinBox::valueChanged, this, [this] { recompute(); });
    connect(model_, &QAbstractItemModel::modelReset, this, &QuantLevelsPanel::rebuild);
    connect(model_, &QAbstractItemModel::rowsInserted, this, &QuantLevelsPanel::rebuild);
    rebuild();
}

void QuantLevelsPanel::setActivations(ActivationRecordPtr record) {
    record_ = std::move(record);
    const int layers = record_ && record_->recording ? int(record_->recording->layers) : 0;
    {
        QSignalBlocker block(layerBox_);
        layerBox_->setRange(0, std::max(0, layers - 1));
        layerBox_->setSuffix(tr(" (of 0-%1)").arg(std::max(0, layers - 1)));
        layer_ = std::clamp(layer_, 0, std::max(0, layers - 1));
        layerBox_->setValue(layer_);
    }
    if (layers > 0) topK_->setMaximum(int(record_->recording->hidden) - 1);
    recompute();
}

void QuantLevelsPanel::setLayer(int layer) {
    layerBox_->setValue(layer);         // emits layerChanged when it moves
    if (layerBox_->value() != layer_) { // before any data the range is 0..0
        layer_ = layerBox_->value();
        recompute();
    }
}

void QuantLevelsPanel::recompute() {
    report_.clear();
    if (!record_ || !record_->recording || record_->recording->layers == 0) {
        model_->setTable({});
        return;
    }
    const auto& recording = *record_->recording;
    const auto layer = static_cast<std::uint32_t>(layer_);
    const auto topK = static_cast<std::uint32_t>(topK_->value());
    // A lab run hands the level tables ready for its K (counted on the job's thread); another
    // K, or a record made elsewhere, is counted here.
    if (const auto& ready = record_->panelTables; ready && ready->levelsTopK == topK &&
                                                  layer < ready->levels.size() &&
                                                  ready->levels[layer].size() == 3) {
        model_->setTable(ready->levels[layer][0]);
        report_.assign(ready->levels[layer].begin() + 1, ready->levels[layer].end());
        return;
    }
    model_->setTable(levelsByDimension(recording, layer, topK));
    experiments::ActivationReportOptions options;
    options.layer = layer;
    options.topK = topK;
    for (auto& table : experiments::activationReport(recording, options))
        if (table.id == "activation-levels" || table.id == "activation-levels-per-dim")
            report_.push_back(std::move(table));
}

std::vector<compute::Table> QuantLevelsPanel::dataTables() const {
    if (model_->rowCount() == 0) return {};
    std::vector<compute::Table> tables{model_->table()};
    tables.insert(tables.end(), report_.begin(), report_.end());
    return tables;
}

void QuantLevelsPanel::rebuild() {
    QList<QPointF> series[4];
    for (int row = 0; row < model_->rowCount(); ++row) {
        double rank = model_->number(row, 0);
        for (int s = 0; s < 4; ++s) {
            double levels = model_->number(row, 3 + s);
            if (!std::isnan(levels)) series[s].append(QPointF(rank, levels));
        }
    }
    setSeriesPoints({{Int8Tensor, series[0]},
                     {Int8Excluded, series[1]},
                     {Int4Tensor, series[2]},
                     {Int4Excluded, series[3]}});
    if (model_->rowCount() == 0) {
        setSummary(record_ && !record_->recording
                       ? tr("This run did not record the residual stream; generate again.")
                       : QString());
        return;
    }
    auto median = [&](int column) {
        std::vector<double> values;
        for (int row = 0; row < model_->rowCount(); ++row)
            if (double v = model_->number(row, column); !std::isnan(v)) values.push_back(v);
        if (values.empty()) return 0.0;
        std::nth_element(values.begin(), values.begin() + std::ptrdiff_t(values.size() / 2),
                         values.end());
        return values[values.size() / 2];
    };
    // The counts can never exceed the positions recorded: say when that, not the format,
    // is the limit.
    const auto positions = record_->recording->positions;
    const int layers = int(record_->recording->layers);
    QString ceiling =
        positions < 256
            ? tr(" · ceiling: %1 prompt positions, so at most %1 levels per dimension (INT8 "
                 "counts are capped by the prompt, not by the 256 levels)")
                  .arg(positions)
            : tr(" · over %1 prompt positions").arg(positions);
    setSummary(tr("Layer %1 (of 0-%2), median dimension: INT8 %3 of 256 levels with one scale, "
                  "%4 with the top %5 excluded; INT4 %6 of 16, %7%8")
                   .arg(layer_)
                   .arg(layers - 1)
                   .arg(median(3))
                   .arg(median(4))
                   .arg(topK_->value())
                   .arg(median(5))
                   .arg(median(6))
                   .arg(ceiling));
}

void QuantLevelsPanel::attach(const PanelContext& context) {
    auto* selection = context.selection;
    connect(context.jobs, &LabJobs::activationsUpdated, this,
            [this, selection](const ActivationRecordPtr& record) {
                setActivations(record);
                // The panel had no layers before its data: now it can show the selected one.
                setLayer(selection->layer());
            });
    connect(context.jobs, &LabJobs::modelLoaded, this, [this] { setActivations(nullptr); });
    connect(this, &QuantLevelsPanel::layerChanged, selection, &LabSelection::setLayer);
    connect(selection, &LabSelection::layerChanged, this, &QuantLevelsPanel::setLayer);
}

} // namespace inferscope::widgets
