#include "widgets/TimingsPanel.hpp"

#include "compute/experiments/run/RunEvidence.hpp"
#include "compute/experiments/run/RunTables.hpp"
#include "widgets/LabJobs.hpp"
#include "widgets/TableModel.hpp"

#include <QLocale>

namespace inferscope::widgets {

TimingsPanel::TimingsPanel(QWidget* parent)
    : LabPanel("timings", tr("Prefill vs decode"),
               tr("The prompt is processed in one pass that ends in the first token (time to "
                  "first token); every further token needs a pass of its own. The line under "
                  "the chart says how far the decode steps of this run spread."),
               parent),
      model_(new TableModel(this)) {
    setAxis(Qt::Horizontal, tr("generated token"), AxisScale::Linear);
    setAxis(Qt::Vertical, tr("time (ms, log scale)"), AxisScale::Log);
    addSeries(tr("decode step (1 token)"), SeriesKind::Line);
    addSeries(tr("time to first token"), SeriesKind::Scatter);
    addSeries(tr("prefill per prompt token"), SeriesKind::DashedLine);
    setMarkerSize(FirstToken, 16); // one point that carries the headline figure
    setEmptyHint(tr("Press Generate (Ctrl+Return): the prefill and every decode step are timed "
                    "here."));
    connect(model_, &QAbstractItemModel::modelReset, this, &TimingsPanel::rebuild);
    connect(model_, &QAbstractItemModel::rowsInserted, this, &TimingsPanel::rebuild);
    rebuild();
}

void TimingsPanel::setRun(RunRecordPtr run) {
    run_ = std::move(run);
    model_->setTable(run_ ? compute::experiments::timingsTable(*run_) : compute::Table{});
}

std::vector<compute::Table> TimingsPanel::dataTables() const {
    if (model_->rowCount() == 0) return {};
    return {model_->table()};
}

void TimingsPanel::rebuild() {
    const auto& table = model_->table();
    QList<QPointF> decode, first, perPromptToken;
    double lastToken = 0, prefillPerToken = 0;
    if (!table.rows.empty()) {
        const int phase = int(table.columnIndex("phase")),
                  token = int(table.columnIndex("generated token")),
                  time = int(table.columnIndex("time")), fed = int(table.columnIndex("tokens fed"));
        for (int row = 0; row < model_->rowCount(); ++row) {
            QPointF point(model_->number(row, token), model_->number(row, time));
            lastToken = std::max(lastToken, point.x());
            if (model_->data(model_->index(row, phase)).toString() == "prefill") {
                first.append(point);
                prefillPerToken = point.y() / std::max(1.0, model_->number(row, fed));
            } else {
                decode.append(point);
            }
        }
        if (!first.isEmpty())
            perPromptToken = {QPointF(0, prefillPerToken),
                              QPointF(std::max(1.0, lastToken), prefillPerToken)};
    }
    setSeriesPoints(
        {{DecodeSteps, decode}, {FirstToken, first}, {PrefillPerToken, perPromptToken}});

    if (!run_ || table.rows.empty()) {
        setSummary({});
        return;
    }
    QLocale locale;
    QString text = tr("Time to first token %1 ms (%2 prompt tokens, %3 tokens/s)")
                       .arg(locale.toString(run_->prefillSeconds * 1e3, 'f', 1))
                       .arg(run_->promptTokens)
                       .arg(locale.toString(run_->prefillTokensPerSecond(), 'f', 1));
    if (!run_->stepSeconds.empty()) {
        text += tr(" · decode %1 tokens/s over %2 steps (%3 ms per step)")
                    .arg(locale.toString(run_->decodeTokensPerSecond(), 'f', 1))
                    .arg(run_->stepSeconds.size())
                    .arg(locale.toString(1e3 / run_->decodeTokensPerSecond(), 'f', 2));
        // "Flat" only when this run's steps say so; the spread is stated either way.
        const auto spread = compute::experiments::stepSpread(run_->stepSeconds);
        const QString range = tr("steps %1-%2 ms, median %3 ms, spread %4% of the median")
                                  .arg(locale.toString(spread.fastest * 1e3, 'f', 1),
                                       locale.toString(spread.slowest * 1e3, 'f', 1),
                                       locale.toString(spread.median * 1e3, 'f', 1),
                                       locale.toString(spread.relative() * 100, 'f', 0));
        if (spread.steps < 3)
            text += tr(" · %1: too few steps to call the decode flat or not").arg(range);
        else if (spread.flat())
            text += tr(" · %1: flat (within %2%)")
                        .arg(range)
                        .arg(qRound(compute::experiments::StepSpread::kFlatSpread * 100));
        else
            text += tr(" · %1: not flat in this run").arg(range);
    }
    if (run_->cancelled) text += tr(" · stopped");
    setSummary(text);
}

void TimingsPanel::attach(const PanelContext& context) {
    auto* jobs = context.jobs;
    connect(jobs, &LabJobs::runProgressed, this,
            [this](const RunDeltaPtr& delta) { setRun(live_.apply(*delta)); });
    connect(jobs, &LabJobs::runFinished, this, &TimingsPanel::setRun);
    connect(jobs, &LabJobs::modelLoaded, this, [this] { setRun(nullptr); });
}

} // namespace inferscope::widgets
