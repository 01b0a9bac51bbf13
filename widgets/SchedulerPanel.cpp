#include "widgets/SchedulerPanel.hpp"

#include "widgets/GanttFigure.hpp"
#include "widgets/GuiThreadPost.hpp"
#include "widgets/LabJobs.hpp"
#include "widgets/PanelControls.hpp"
#include "widgets/TableModel.hpp"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QPointer>
#include <QPushButton>
#include <QSpinBox>
#include <QTableView>
#include <QVBoxLayout>

namespace inferscope::widgets {

namespace {
// The quick mix: skewed as the chapter's (a long tail), small enough that both policies, the
// step-cost sweep, the checks and the prefix demo finish in seconds on lavapipe.
constexpr compute::experiments::RequestMixSpec kQuickMix{12, 8, 32, 140, 1};
constexpr std::uint32_t kQuickVerify = 1;
constexpr std::uint32_t kQuickPrefixRequests = 3;
constexpr std::uint32_t kQuickPrefixOutput = 8;
} // namespace

SchedulerPanel::SchedulerPanel(QWidget* parent)
    : LabPanel("scheduler", tr("Scheduler"),
               tr("Which request holds each slot at each step, run on the engine. Static "
                  "(upper group): a group holds its slots until its longest member is done "
                  "(hatched padding). Continuous (lower): a freed slot takes the next request."),
               parent),
      model_(new TableModel(this)) {
    gantt_ = new GanttFigure(this);
    setFigure(gantt_);
    setEmptyHint(tr("Press \"Run static vs continuous\" below: the request mix runs twice on "
                    "the GPU engine."));

    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Slots"), this));
    slots_ = makeSpinBox(this, "schedulerSlots", 1, 64, kDefaultSlots);
    controls->addWidget(slots_);
    mix_ = new QComboBox(this);
    mix_->setObjectName("schedulerMix");
    mix_->addItem(tr("%1 requests: median %2, longest %3, %4 tokens (quick)")
                      .arg(kQuickMix.requests)
                      .arg(kQuickMix.median)
                      .arg(kQuickMix.longest)
                      .arg(kQuickMix.total));
    mix_->addItem(tr("64 requests: median 18, longest 231, 1,874 tokens (the chapter's; "
                     "minutes)"));
    // The mix's full description is its text; the box need not be as wide as the longest
    // one (it would set the width of every panel in the window's stack).
    mix_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    mix_->setMinimumContentsLength(16);
    controls->addWidget(mix_, 1);
    controls->addWidget(new QLabel(tr("Seed"), this));
    seed_ = makeSpinBox(this, "schedulerSeed", 0, 1000000, 1);
    controls->addWidget(seed_);
    controls_ = new JobControls(this, "scheduler", tr("Run static vs continuous"));
    extrasLayout()->addLayout(controls);
    controls = new QHBoxLayout;
    controls->addWidget(controls_->runButton());
    controls->addWidget(controls_->cancelButton());
    controls->addStretch(1);
    extrasLayout()->addLayout(controls);
    extrasLayout()->addWidget(controls_->progressLabel());
    extrasLayout()->addWidget(makeTableView(this, "schedulerTable", model_, 170));

    connect(controls_->runButton(), &QPushButton::clicked, this, [this] { run(request()); });
    connect(controls_, &JobControls::ended, this, [this](bool ok, const QString& error) {
        emit jobEnded(tr("Static vs continuous batching"), ok, error);
    });
}

compute::experiments::SchedulingRequest SchedulerPanel::request() const {
    compute::experiments::SchedulingRequest r;
    r.slotCount = std::uint32_t(slots_->value());
    if (mix_->currentIndex() == QuickMix) {
        r.mix = kQuickMix;
        r.verifyRequests = kQuickVerify;
        r.prefixRequests = kQuickPrefixRequests;
        r.prefixOutputTokens = kQuickPrefixOutput;
    }
    r.mix.seed = std::uint64_t(seed_->value());
    return r;
}

void SchedulerPanel::setMix(Mix mix) {
    mix_->setCurrentIndex(int(mix));
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
    if (timeline)
        gantt_->setTimeline(*timeline);
    else
        gantt_->clear();
    setFigureHasData(!gantt_->bars().empty());
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

quint64 SchedulerPanel::run(compute::experiments::SchedulingRequest request) {
    const quint64 serial = ++runSerial_;
    request.onTimeline = [self = QPointer<SchedulerPanel>(this),
                          serial](const compute::Table& timeline) {
        // The job's thread: drawn on the GUI thread, for the latest run of a live panel.
        postToWidget(self, [serial, timeline](SchedulerPanel& panel) {
            if (panel.runSerial_ == serial) panel.setTables({timeline});
        });
    };
    const quint64 id = controls_->run(
        [&](LabJobs& jobs) { return jobs.runLab<compute::experiments::SchedulerLab>(request); });
    if (id != 0) clear();
    return id;
}

std::optional<quint64> SchedulerPanel::runScripted() {
    // The window's default, so the scripted run times what a class waits for.
    setMix(QuickMix);
    setSlots(kDefaultSlots);
    return run(request());
}

QString SchedulerPanel::emptyReason() const {
    return tr("batching runs on the GPU engine; the backend (%1) serves one sequence")
        .arg(backend_);
}

} // namespace inferscope::widgets
