#include "widgets/CachingPanel.hpp"

#include "compute/experiments/caching/CachingLab.hpp"
#include "widgets/LabJobs.hpp"
#include "widgets/TableModel.hpp"

#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace inferscope::widgets {

CachingPanel::CachingPanel(QWidget* parent)
    : LabPanel("cached-vs-uncached", tr("Cached vs uncached"),
               tr("Each step's time with the KV cache (one new row of attention) and without it "
                  "(the whole sequence recomputed every step), greedy both times; the line "
                  "under the chart gives the totals and whether the tokens are identical."),
               parent),
      model_(new TableModel(this)) {
    setAxis(Qt::Horizontal, tr("generated token (1: prefill)"), AxisScale::Linear);
    setAxis(Qt::Vertical, tr("step time (ms, log scale)"), AxisScale::Log);
    addSeries(tr("cached"), SeriesKind::Line);
    addSeries(tr("uncached (recomputes the sequence)"), SeriesKind::Line);
    setEmptyHint(tr("Press \"Run cached, then uncached\" below: the same prompt runs twice "
                    "and each step is timed here."));
    auto* row = new QHBoxLayout;
    row->addWidget(new QLabel(tr("Tokens to generate"), this));
    tokens_ = new QSpinBox(this);
    tokens_->setObjectName("cachingTokens");
    tokens_->setRange(2, 512);
    tokens_->setValue(32);
    tokens_->setToolTip(tr("How many tokens each of the two greedy runs generates"));
    controls_ = new JobControls(this, "caching", tr("Run cached, then uncached"));
    controls_->runButton()->setToolTip(
        tr("Runs the prompt twice on the worker thread with greedy decoding: first with the KV "
           "cache, then recomputing the sequence every step"));
    row->addWidget(tokens_);
    row->addWidget(controls_->runButton());
    row->addWidget(controls_->cancelButton());
    row->addWidget(controls_->progressLabel(), 1);
    extrasLayout()->addLayout(row);
    connect(controls_->runButton(), &QPushButton::clicked, this, [this] { run(tokens_->value()); });
    connect(controls_, &JobControls::ended, this, [this](bool ok, const QString& error) {
        emit jobEnded(tr("Cached vs uncached"), ok, error);
    });
    connect(model_, &QAbstractItemModel::modelReset, this, &CachingPanel::rebuild);
    connect(model_, &QAbstractItemModel::rowsInserted, this, &CachingPanel::rebuild);
    rebuild();
}

void CachingPanel::setComparison(CachingComparisonPtr comparison) {
    comparison_ = std::move(comparison);
    model_->setTable(comparison_ ? compute::experiments::cachingComparisonTable(*comparison_)
                                 : compute::Table{});
}

std::vector<compute::Table> CachingPanel::dataTables() const {
    if (model_->rowCount() == 0) return {};
    return {model_->table()};
}

void CachingPanel::rebuild() {
    QList<QPointF> cached, uncached;
    for (int row = 0; row < model_->rowCount(); ++row) {
        double token = model_->number(row, 0);
        double a = model_->number(row, 1), b = model_->number(row, 2);
        if (!std::isnan(a)) cached.append(QPointF(token, a));
        if (!std::isnan(b)) uncached.append(QPointF(token, b));
    }
    setSeriesPoints({{Cached, cached}, {Uncached, uncached}});
    if (!comparison_) {
        setSummary({});
        return;
    }
    const auto& c = *comparison_;
    QLocale locale;
    double ratio =
        c.cachedTotalSeconds() > 0 ? c.uncachedTotalSeconds() / c.cachedTotalSeconds() : 0.0;
    setSummary(tr("%1 tokens · cached %2 ms, uncached %3 ms in total: %4× · tokens %5%6")
                   .arg(c.cachedTokens.size())
                   .arg(locale.toString(c.cachedTotalSeconds() * 1e3, 'f', 1))
                   .arg(locale.toString(c.uncachedTotalSeconds() * 1e3, 'f', 1))
                   .arg(locale.toString(ratio, 'f', 2))
                   .arg(c.identicalTokens() ? tr("identical") : tr("DIFFER"))
                   .arg(c.cancelled ? tr(" · stopped") : QString()));
}

void CachingPanel::attach(const PanelContext& context) {
    context_ = context;
    controls_->attach(*context.jobs);
    context.jobs->listen<compute::experiments::CachingLab>(
        this, [this](const CachingComparisonPtr& comparison) { setComparison(comparison); });
    connect(context.jobs, &LabJobs::modelLoaded, this, [this] { setComparison(nullptr); });
}

quint64 CachingPanel::run(int tokens) {
    return controls_->run([this, tokens](LabJobs& jobs) {
        compute::PromptSpec prompt = context_.prompt();
        prompt.maxNewTokens = tokens;
        return jobs.runLab<compute::experiments::CachingLab>(prompt);
    });
}

} // namespace inferscope::widgets
