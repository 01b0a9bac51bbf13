#include "widgets/QuantLevelsPanel.hpp"

#include "widgets/LabJobs.hpp"
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

compute::Table quantLevelsTable(const experiments::ResidualRecording& recording,
                                std::uint32_t layer, std::uint32_t topK) {
    if (layer >= recording.layers)
        throw std::invalid_argument("layer " + std::to_string(layer) + " is out of range");
    const std::uint32_t hidden = recording.hidden, positions = recording.positions;
    // Each dimension's values over the prompt, and its max |h|.
    std::vector<std::vector<float>> columns(hidden, std::vector<float>(positions));
    std::vector<float> maxAbs(hidden, 0.0f);
    for (std::uint32_t p = 0; p < positions; ++p) {
        auto row = recording.at(layer, p);
        for (std::uint32_t d = 0; d < hidden; ++d) {
            columns[d][p] = row[d];
            maxAbs[d] = std::max(maxAbs[d], std::fabs(row[d]));
        }
    }
    std::vector<std::uint32_t> order(hidden);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return maxAbs[a] > maxAbs[b]; });
    const std::uint32_t k = std::min(topK, hidden);
    float all = 0, rest = 0;
    for (std::uint32_t rank = 0; rank < hidden; ++rank) {
        all = std::max(all, maxAbs[order[rank]]);
        if (rank >= k) rest = std::max(rest, maxAbs[order[rank]]);
    }

    compute::Table t;
    t.id = "activation-levels-by-dimension";
    t.title = "Quantization levels used per dimension, layer " + std::to_string(layer) + " (top " +
              std::to_string(k) + " excluded vs one scale)";
    t.addColumn("rank")
        .addColumn("dimension")
        .addColumn("max |h|", "", 4)
        .addColumn("int8 one scale")
        .addColumn("int8 top-k excluded")
        .addColumn("int4 one scale")
        .addColumn("int4 top-k excluded");
    for (std::uint32_t rank = 0; rank < hidden; ++rank) {
        const auto d = order[rank];
        const auto& values = columns[d];
        compute::Cell int8Excluded, int4Excluded;
        if (rank >= k) {
            int8Excluded = std::int64_t{experiments::distinctLevels(values, rest / 127.0f, 127)};
            int4Excluded = std::int64_t{experiments::distinctLevels(values, rest / 7.0f, 7)};
        }
        t.addRow({std::int64_t{rank}, std::int64_t{d}, double(maxAbs[d]),
                  std::int64_t{experiments::distinctLevels(values, all / 127.0f, 127)},
                  int8Excluded, std::int64_t{experiments::distinctLevels(values, all / 7.0f, 7)},
                  int4Excluded});
    }
    t.notes.push_back("one scale: absmax " + std::to_string(all) +
                      " over every dimension; top-k "
                      "excluded: absmax " +
                      std::to_string(rest) + " over the rest");
    return t;
}

QuantLevelsPanel::QuantLevelsPanel(QWidget* parent)
    : ChartPanel("quant-levels", tr("Quantization levels"),
                 tr("Distinct INT8 (of 256) and INT4 (of 16) levels each dimension uses when one "
                    "scale covers the whole layer: the outliers stretch the scale so the other "
                    "dimensions fall on a few levels, until the top K are kept aside."),
                 parent),
      model_(new TableModel(this)) {
    setAxis(Qt::Horizontal, tr("dimension, by max |h| (0: largest)"), AxisScale::Linear);
    setAxis(Qt::Vertical, tr("distinct levels used (log scale)"), AxisScale::Log);
    addSeries(tr("INT8, one scale"), SeriesKind::Line);
    addSeries(tr("INT8, top K excluded"), SeriesKind::Line);
    addSeries(tr("INT4, one scale"), SeriesKind::DashedLine);
    addSeries(tr("INT4, top K excluded"), SeriesKind::DashedLine);

    auto* row = new QHBoxLayout;
    row->addWidget(new QLabel(tr("Layer"), this));
    layerBox_ = new QSpinBox(this);
    layerBox_->setObjectName("levelsLayer");
    layerBox_->setRange(0, 0);
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
    model_->setTable(quantLevelsTable(recording, layer, topK));
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
    setSummary(tr("Layer %1, median dimension: INT8 %2 of 256 levels with one scale, %3 with the "
                  "top %4 excluded; INT4 %5 of 16, %6")
                   .arg(layer_)
                   .arg(median(3))
                   .arg(median(4))
                   .arg(topK_->value())
                   .arg(median(5))
                   .arg(median(6)));
}

void QuantLevelsPanel::subscribe(const LabJobs& jobs) {
    connect(&jobs, &LabJobs::activationsUpdated, this, &QuantLevelsPanel::setActivations);
    connect(&jobs, &LabJobs::modelLoaded, this, [this] { setActivations(nullptr); });
}

} // namespace inferscope::widgets
