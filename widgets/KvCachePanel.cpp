#include "widgets/KvCachePanel.hpp"

#include "compute/experiments/run/RunTables.hpp"
#include "widgets/LabJobs.hpp"
#include "widgets/TableModel.hpp"

#include <QHeaderView>
#include <QLocale>
#include <QTableView>
#include <QVBoxLayout>

namespace inferscope::widgets {

namespace {
constexpr double kKiB = 1024.0;
}

KvCachePanel::KvCachePanel(QWidget* parent)
    : LabPanel("kv-cache", tr("KV cache"),
               tr("Every token kept in context stores one key and one value vector per layer "
                  "and KV head. The dots are the bytes the backend reports in use; the dashed "
                  "lines the formula 2 × layers × KV heads × head dim × bytes per element."),
               parent),
      model_(new TableModel(this)), perLayer_(new TableModel(this)) {
    setAxis(Qt::Horizontal, tr("tokens in the cache"), AxisScale::Linear);
    setAxis(Qt::Vertical, tr("KV cache (KiB)"), AxisScale::Linear);
    // The measured series as dots: on the formula's line it must stay visible, not hide
    // under it.
    addSeries(tr("measured"), SeriesKind::Scatter);
    addSeries(tr("formula, fp32"), SeriesKind::DashedLine);
    addSeries(tr("formula, fp16"), SeriesKind::DashedLine);
    addSeries(tr("allocated blocks"), SeriesKind::Line);
    setMarkerSize(Measured, 7);
    setEmptyHint(tr("Press Generate: the cache's bytes are read after every step and drawn "
                    "against the formula."));
    auto* view = new QTableView(this);
    view->setObjectName("kvPerLayer");
    view->setModel(perLayer_);
    view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    view->setMaximumHeight(150);
    view->verticalHeader()->hide();
    view->setToolTip(tr("Each layer keeps its own keys and values: the cache is the same "
                        "slice per layer, times the number of layers"));
    extrasLayout()->addWidget(view);
    connect(model_, &QAbstractItemModel::modelReset, this, &KvCachePanel::rebuild);
    connect(model_, &QAbstractItemModel::rowsInserted, this, &KvCachePanel::rebuild);
    rebuild();
}

void KvCachePanel::setRun(RunRecordPtr run) {
    run_ = std::move(run);
    namespace ex = compute::experiments;
    perLayer_->setTable(run_ ? ex::kvCachePerLayerTable(*run_) : compute::Table{});
    model_->setTable(run_ ? ex::kvCacheGrowthTable(*run_) : compute::Table{});
}

std::vector<compute::Table> KvCachePanel::dataTables() const {
    if (model_->rowCount() == 0) return {};
    if (perLayer_->rowCount() == 0) return {model_->table()};
    return {model_->table(), perLayer_->table()};
}

void KvCachePanel::rebuild() {
    QList<QPointF> measured, fp32, fp16, allocated;
    for (int row = 0; row < model_->rowCount(); ++row) {
        double tokens = model_->number(row, 0);
        measured.append(QPointF(tokens, model_->number(row, 1) / kKiB));
        fp32.append(QPointF(tokens, model_->number(row, 2) / kKiB));
        fp16.append(QPointF(tokens, model_->number(row, 3) / kKiB));
        if (model_->number(row, 4) > 0)
            allocated.append(QPointF(tokens, model_->number(row, 4) / kKiB));
    }
    setSeriesPoints(
        {{Measured, measured}, {FormulaFp32, fp32}, {FormulaFp16, fp16}, {Allocated, allocated}});
    if (!run_ || run_->kvSamples.empty()) {
        setSummary({});
        return;
    }
    QLocale locale;
    const auto& last = run_->kvSamples.back();
    const auto& c = run_->config;
    // One expression per element size: 2 × layers × KV heads × head dim × bytes = B/token.
    auto formula = [&](int bytes, const QString& element) {
        return tr("2 × %1 layers × %2 KV heads × %3 dims × %4 B (%5) = %6 B/token")
            .arg(c.layers)
            .arg(c.kvHeads)
            .arg(c.headDim)
            .arg(bytes)
            .arg(element, locale.toString(qulonglong(c.kvBytesPerToken(bytes))));
    };
    QString text;
    if (last.bytes == 0) {
        text = tr("The %1 backend does not report its cache · formula: %2")
                   .arg(QString::fromStdString(run_->backend), formula(2, "fp16"));
    } else {
        double perToken = static_cast<double>(last.bytes) /
                          static_cast<double>(std::max<std::int64_t>(1, last.tokens));
        // The formula line for the element size the measurement matches (else both).
        const bool fp32 = std::llround(perToken) == std::llround(double(c.kvBytesPerToken(4)));
        text = tr("Measured %1 B/token at %2 tokens (%3 KiB) · formula: %4")
                   .arg(locale.toString(perToken, 'f', 0))
                   .arg(last.tokens)
                   .arg(locale.toString(static_cast<double>(last.bytes) / kKiB, 'f', 1),
                        fp32 ? formula(4, "fp32") +
                                   tr("; at fp16 %1")
                                       .arg(locale.toString(qulonglong(c.kvBytesPerToken(2))))
                             : formula(2, "fp16") +
                                   tr("; at fp32 %1")
                                       .arg(locale.toString(qulonglong(c.kvBytesPerToken(4)))));
    }
    if (run_->kvBlockSize > 0 && last.usedBlocks > 0)
        text += tr(" · %1 blocks of %2 positions in use (of %3), %4 KiB allocated")
                    .arg(last.usedBlocks)
                    .arg(run_->kvBlockSize)
                    .arg(run_->kvCapacityBlocks)
                    .arg(locale.toString(static_cast<double>(last.allocatedBytes) / kKiB, 'f', 1));
    setSummary(text);
}

void KvCachePanel::attach(const PanelContext& context) {
    auto* jobs = context.jobs;
    connect(jobs, &LabJobs::runProgressed, this,
            [this](const RunDeltaPtr& delta) { setRun(live_.apply(*delta)); });
    connect(jobs, &LabJobs::runFinished, this, &KvCachePanel::setRun);
    connect(jobs, &LabJobs::modelLoaded, this, [this] { setRun(nullptr); });
}

} // namespace inferscope::widgets
