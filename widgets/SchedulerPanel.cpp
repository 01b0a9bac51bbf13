#include "widgets/SchedulerPanel.hpp"

#include "widgets/LabJobs.hpp"
#include "widgets/TableModel.hpp"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QSpinBox>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

namespace inferscope::widgets {

namespace {} // namespace

SchedulerPanel::SchedulerPanel(QWidget* parent)
    : LabPanel("scheduler", tr("Scheduler"),
               tr("Which request holds each slot at each step, run on the engine. Static "
                  "(lower slots): a group holds its slots until its longest member is done "
                  "(padding). Continuous (upper): a freed slot takes the next request."),
               parent),
      model_(new TableModel(this)) {
    setAxis(Qt::Horizontal, tr("step"), AxisScale::Linear);
    setAxis(Qt::Vertical, tr("slot (static below, continuous above)"), AxisScale::Linear);
    addSeries(tr("static: a request generating"), SeriesKind::Scatter);
    addSeries(tr("static: the next request"), SeriesKind::Scatter);
    addSeries(tr("static: padding (finished, slot still held)"), SeriesKind::Scatter);
    addSeries(tr("continuous: a request generating"), SeriesKind::Scatter);
    addSeries(tr("continuous: the next request"), SeriesKind::Scatter);
    for (int s = StaticEven; s <= ContinuousOdd; ++s) setMarkerSize(s, 4);
    setEmptyHint(tr("Press \"Run static vs continuous\" below: the request mix runs twice on "
                    "the GPU engine."));

    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Slots"), this));
    slots_ = new QSpinBox(this);
    slots_->setObjectName("schedulerSlots");
    slots_->setRange(1, 64);
    slots_->setValue(8);
    controls->addWidget(slots_);
    mix_ = new QComboBox(this);
    mix_->setObjectName("schedulerMix");
    mix_->addItem(tr("64 requests: median 18, longest 231, 1,874 tokens (the chapter's)"));
    mix_->addItem(tr("16 requests: median 12, longest 64, 300 tokens (quick)"));
    // The mix's full description is its text; the box need not be as wide as the longest
    // one (it would set the width of every panel in the window's stack).
    mix_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    mix_->setMinimumContentsLength(16);
    controls->addWidget(mix_, 1);
    controls->addWidget(new QLabel(tr("Seed"), this));
    seed_ = new QSpinBox(this);
    seed_->setObjectName("schedulerSeed");
    seed_->setRange(0, 1000000);
    seed_->setValue(1);
    controls->addWidget(seed_);
    controls_ = new JobControls(this, "scheduler", tr("Run static vs continuous"));
    extrasLayout()->addLayout(controls);
    controls = new QHBoxLayout;
    controls->addWidget(controls_->runButton());
    controls->addWidget(controls_->cancelButton());
    controls->addStretch(1);
    extrasLayout()->addLayout(controls);
    extrasLayout()->addWidget(controls_->progressLabel());

    auto* view = new QTableView(this);
    view->setObjectName("schedulerTable");
    view->setModel(model_);
    view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    view->setMaximumHeight(170);
    extrasLayout()->addWidget(view);

    connect(controls_->runButton(), &QPushButton::clicked, this, [this] { run(request()); });
    connect(controls_, &JobControls::ended, this, [this](bool ok, const QString& error) {
        emit jobEnded(tr("Static vs continuous batching"), ok, error);
    });
}

compute::experiments::SchedulingRequest SchedulerPanel::request() const {
    compute::experiments::SchedulingRequest r;
    r.slotCount = std::uint32_t(slots_->value());
    if (mix_->currentIndex() == 1) {
        r.mix = {16, 12, 64, 300, 1};
        r.prefixRequests = 4; // the small mix is for a quick look: four share a prompt
    }
    r.mix.seed = std::uint64_t(seed_->value());
    return r;
}

void SchedulerPanel::setSmallMix(bool small) {
    mix_->setCurrentIndex(small ? 1 : 0);
}

void SchedulerPanel::setSlots(int slotCount) {
    slots_->setValue(slotCount);
}

void SchedulerPanel::setTables(std::vector<compute::Table> tables) {
    // The KV block map and prefix sharing of the same job are the KV blocks panel's.
    std::erase_if(tables, [](const compute::Table& t) { return t.id.rfind("scheduler-", 0) != 0; });
    tables_ = std::move(tables);
    const auto* policies = compute::findTable(tables_, "scheduler-policies");
    const auto* timeline = compute::findTable(tables_, "scheduler-timeline");
    model_->setTable(policies ? *policies : compute::Table{});
    QList<QPointF> points[5];
    if (timeline) {
        // Static on slots 0..S-1, continuous on S+1..2S (one empty row between them).
        double slotCount = 0;
        for (std::size_t row = 0; row < timeline->rows.size(); ++row)
            slotCount = std::max(slotCount, timeline->number(row, "slot") + 1);
        for (std::size_t row = 0; row < timeline->rows.size(); ++row) {
            const bool isStatic = std::get<std::string>(timeline->at(row, "policy")) == "static";
            const bool padding = std::get<std::string>(timeline->at(row, "state")) == "padding";
            const double step = timeline->number(row, "step");
            const double slot = timeline->number(row, "slot") + (isStatic ? 0 : slotCount + 1);
            const bool odd = std::int64_t(timeline->number(row, "request")) % 2 != 0;
            int series = isStatic ? (padding ? StaticPadding
                                     : odd   ? StaticOdd
                                             : StaticEven)
                                  : (odd ? ContinuousOdd : ContinuousEven);
            points[series] << QPointF(step, slot);
        }
    }
    setSeriesPoints({{StaticEven, points[StaticEven]},
                     {StaticOdd, points[StaticOdd]},
                     {StaticPadding, points[StaticPadding]},
                     {ContinuousEven, points[ContinuousEven]},
                     {ContinuousOdd, points[ContinuousOdd]}});
    if (!policies || policies->rows.empty()) {
        setSummary({});
        return;
    }
    QLocale locale;
    QStringList parts;
    for (std::size_t row = 0; row < policies->rows.size(); ++row) {
        if (std::get<std::string>(policies->at(row, "figures")) != "measured") continue;
        parts << tr("%1 %2 s, %3 tokens/s, mean latency %4 s, %5 idle")
                     .arg(
                         QString::fromStdString(std::get<std::string>(policies->at(row, "policy"))))
                     .arg(locale.toString(policies->number(row, "total"), 'f', 2))
                     .arg(locale.toString(policies->number(row, "tokens/s"), 'f', 1))
                     .arg(locale.toString(policies->number(row, "mean latency"), 'f', 2))
                     .arg(policies->number(row, "idle slot-steps"));
    }
    setSummary(parts.join(tr(" · ")));
}

void SchedulerPanel::clear() {
    setTables({});
}

std::vector<compute::Table> SchedulerPanel::dataTables() const {
    return tables_;
}

void SchedulerPanel::attach(const PanelContext& context) {
    controls_->attach(*context.jobs);
    context.jobs->listen<compute::experiments::SchedulerLab>(
        this, [this](const std::vector<compute::Table>& tables) { setTables(tables); });
    connect(context.jobs, &LabJobs::modelLoaded, this, [this](const LoadedModelPtr& model) {
        backend_ = QString::fromStdString(model->backend);
        clear();
    });
}

quint64 SchedulerPanel::run(const compute::experiments::SchedulingRequest& request) {
    return controls_->run(
        [&](LabJobs& jobs) { return jobs.runLab<compute::experiments::SchedulerLab>(request); });
}

std::optional<quint64> SchedulerPanel::runScripted() {
    setSmallMix(true);
    setSlots(kScriptSlots);
    return run(request());
}

QString SchedulerPanel::emptyReason() const {
    return tr("batching runs on the GPU engine; the backend (%1) serves one sequence")
        .arg(backend_);
}

} // namespace inferscope::widgets
