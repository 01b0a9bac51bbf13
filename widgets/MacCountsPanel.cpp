#include "widgets/MacCountsPanel.hpp"

#include "compute/experiments/caching/CacheSavings.hpp"
#include "compute/experiments/caching/CachingLab.hpp"
#include "widgets/LabJobs.hpp"
#include "widgets/RunRecords.hpp"
#include "widgets/TableModel.hpp"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QSpinBox>
#include <QTableView>

namespace inferscope::widgets {

namespace ex = compute::experiments;

MacCountsPanel::MacCountsPanel(QWidget* parent)
    : LabPanel("mac-counts", tr("Multiply-accumulates, cached vs uncached"),
               tr("MACs to generate T tokens after the prompt, from the formula for this "
                  "model: cached attention grows as T^2, uncached as T^3. After a run on the "
                  "Caching tab, the engine's own counter is checked against the formula step "
                  "by step, beside the measured step times and peak memory."),
               parent),
      counter_(new TableModel(this)), peak_(new TableModel(this)) {
    setAxis(Qt::Horizontal, tr("generated tokens T (log scale)"), AxisScale::Log);
    setAxis(Qt::Vertical, tr("multiply-accumulates (log scale)"), AxisScale::Log);
    addSeries(tr("attention, cached"), SeriesKind::Line);
    addSeries(tr("attention, uncached"), SeriesKind::Line);
    addSeries(tr("projections, cached"), SeriesKind::DashedLine);
    addSeries(tr("projections, uncached"), SeriesKind::DashedLine);
    setEmptyHint(tr("Load a model: the counts follow from its shape."));
    auto* row = new QHBoxLayout;
    row->addWidget(new QLabel(tr("Generate up to T ="), this));
    generated_ = new QSpinBox(this);
    generated_->setObjectName("macsGenerated");
    generated_->setRange(2, 1 << 20);
    generated_->setValue(256);
    row->addWidget(generated_);
    row->addStretch(1);
    extrasLayout()->addLayout(row);
    for (auto* model : {counter_, peak_}) {
        auto* view = new QTableView(this);
        view->setObjectName(model == counter_ ? "macCounter" : "peakMemory");
        view->setModel(model);
        view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
        view->verticalHeader()->hide();
        view->setMaximumHeight(model == counter_ ? 150 : 110);
        extrasLayout()->addWidget(view);
    }
    connect(generated_, &QSpinBox::valueChanged, this, &MacCountsPanel::rebuild);
    rebuild();
}

void MacCountsPanel::attach(const PanelContext& context) {
    connect(context.jobs, &LabJobs::modelLoaded, this, [this](const LoadedModelPtr& loaded) {
        comparison_ = nullptr;
        setModelConfig(loaded && loaded->card ? std::optional(loaded->card->config) : std::nullopt);
    });
    // The Caching panel's comparison carries the engine's counter and both runs' peaks.
    context.jobs->listen<ex::CachingLab>(
        this, [this](const CachingComparisonPtr& comparison) { setComparison(comparison); });
}

void MacCountsPanel::setModelConfig(std::optional<models::ModelConfig> config) {
    config_ = std::move(config);
    rebuild();
}

void MacCountsPanel::setComparison(compute::CachingComparisonPtr comparison) {
    comparison_ = std::move(comparison);
    rebuild();
}

std::uint64_t MacCountsPanel::promptTokens() const {
    return comparison_ && comparison_->promptTokens > 0 ? std::uint64_t(comparison_->promptTokens)
                                                        : 16;
}

std::vector<compute::Table> MacCountsPanel::dataTables() const {
    return tables_;
}

void MacCountsPanel::rebuild() {
    tables_.clear();
    counter_->setTable({});
    peak_->setTable({});
    if (!config_) {
        setSeriesPoints({{CachedAttention, {}},
                         {UncachedAttention, {}},
                         {CachedProjections, {}},
                         {UncachedProjections, {}}});
        setSummary({});
        return;
    }
    const auto growth = ex::macGrowthTable(*config_, promptTokens(),
                                           ex::doublingCounts(std::uint64_t(generated_->value())));
    QList<QPointF> series[4];
    const char* columns[4] = {"cached attention", "uncached attention", "cached projections",
                              "uncached projections"};
    for (std::size_t r = 0; r < growth.rows.size(); ++r)
        for (int s = 0; s < 4; ++s)
            series[s].append(QPointF(growth.number(r, "T"), growth.number(r, columns[s])));
    setSeriesPoints({{CachedAttention, series[0]},
                     {UncachedAttention, series[1]},
                     {CachedProjections, series[2]},
                     {UncachedProjections, series[3]}});
    tables_.push_back(growth);
    QLocale locale;
    const std::size_t last = growth.rows.size() - 1;
    QString summary =
        tr("T = %1 after %2 prompt tokens: uncached needs %3x the MACs, %4x for "
           "attention")
            .arg(locale.toString(qint64(growth.number(last, "T"))))
            .arg(promptTokens())
            .arg(locale.toString(growth.number(last, "uncached / cached"), 'f', 1))
            .arg(locale.toString(growth.number(last, "attention uncached / cached"), 'f', 1));
    if (comparison_ && !comparison_->cachedStepMacs.empty() &&
        !comparison_->uncachedStepMacs.empty()) {
        auto counter = ex::macCounterTable(*config_, *comparison_);
        counter_->setTable(counter);
        tables_.push_back(std::move(counter));
        summary += ex::macCounterAgrees(*config_, *comparison_)
                       ? tr(" · the engine's counter equals the formula at every step")
                       : tr(" · the engine's counter DISAGREES with the formula");
    }
    if (comparison_ && comparison_->cachedPeak && comparison_->uncachedPeak) {
        auto peak = ex::peakMemoryTable(*config_, *comparison_);
        peak_->setTable(peak);
        tables_.push_back(std::move(peak));
        const double ratio =
            double(comparison_->uncachedPeak->inUseWithoutWeights()) /
            double(std::max<std::uint64_t>(1, comparison_->cachedPeak->inUseWithoutWeights()));
        summary += tr(" · peak memory beyond weights: uncached %1x cached")
                       .arg(locale.toString(ratio, 'f', 2));
    }
    setSummary(summary);
}

} // namespace inferscope::widgets
