#include "app/gui/PanelDeck.hpp"

#include "widgets/ActivationOutliersPanel.hpp"
#include "widgets/AttentionCostPanel.hpp"
#include "widgets/BatchingPanel.hpp"
#include "widgets/CachingPanel.hpp"
#include "widgets/KernelTimingsPanel.hpp"
#include "widgets/KvBlocksPanel.hpp"
#include "widgets/KvCachePanel.hpp"
#include "widgets/MacCountsPanel.hpp"
#include "widgets/MemoryBudgetPanel.hpp"
#include "widgets/ModelCardPanel.hpp"
#include "widgets/QuantLevelsPanel.hpp"
#include "widgets/SchedulerPanel.hpp"
#include "widgets/SchemesPanel.hpp"
#include "widgets/SoftLabelsPanel.hpp"
#include "widgets/SpeculativePanel.hpp"
#include "widgets/TimingsPanel.hpp"

#include <QMap>
#include <QSignalBlocker>
#include <QStackedWidget>
#include <QTabBar>
#include <QVBoxLayout>

namespace inferscope::gui {

PanelDeck::PanelDeck(QWidget* parent) : QWidget(parent) {
    setObjectName("panelDeck");
    groupBar_ = new QTabBar(this);
    groupBar_->setObjectName("panelGroups");
    panelBar_ = new QTabBar(this);
    panelBar_->setObjectName("panelTabs");
    panelBar_->setDocumentMode(true);
    // Few tabs per bar: all in sight at any presentation scale, none cut short.
    for (auto* bar : {groupBar_, panelBar_}) {
        bar->setUsesScrollButtons(false);
        bar->setElideMode(Qt::ElideNone);
        bar->setExpanding(false);
    }
    stack_ = new QStackedWidget(this);
    auto* column = new QVBoxLayout(this);
    column->setContentsMargins(0, 0, 0, 0);
    column->setSpacing(0);
    column->addWidget(groupBar_);
    column->addWidget(panelBar_);
    column->addWidget(stack_, 1);

    timings_ = new widgets::TimingsPanel(stack_);
    kernels_ = new widgets::KernelTimingsPanel(stack_);
    caching_ = new widgets::CachingPanel(stack_);
    attention_ = new widgets::AttentionCostPanel(stack_);
    macs_ = new widgets::MacCountsPanel(stack_);
    kvCache_ = new widgets::KvCachePanel(stack_);
    outliers_ = new widgets::ActivationOutliersPanel(stack_);
    levels_ = new widgets::QuantLevelsPanel(stack_);
    schemes_ = new widgets::SchemesPanel(stack_);
    speculative_ = new widgets::SpeculativePanel(stack_);
    softLabels_ = new widgets::SoftLabelsPanel(stack_);
    batching_ = new widgets::BatchingPanel(stack_);
    scheduler_ = new widgets::SchedulerPanel(stack_);
    kvBlocks_ = new widgets::KvBlocksPanel(stack_);
    budget_ = new widgets::MemoryBudgetPanel(stack_);
    modelCard_ = new widgets::ModelCardPanel(stack_);
    for (auto* panel : panels()) stack_->addWidget(panel);
    addGroup(tr("Run"), {timings_, kernels_, modelCard_});
    addGroup(tr("KV cache"), {caching_, attention_, macs_, kvCache_, budget_});
    addGroup(tr("Batching"), {batching_, scheduler_, kvBlocks_});
    addGroup(tr("Quantization"), {outliers_, levels_, schemes_});
    addGroup(tr("Draft && distil"), {speculative_, softLabels_});

    connect(groupBar_, &QTabBar::currentChanged, this, &PanelDeck::showGroup);
    connect(panelBar_, &QTabBar::currentChanged, this, &PanelDeck::showMember);
    showGroup(0);
}

void PanelDeck::addGroup(const QString& label, const QList<widgets::ChartPanel*>& members) {
    groups_.append({label, members, 0});
    groupBar_->addTab(label);
}

void PanelDeck::showGroup(int group) {
    if (group < 0 || group >= groups_.size()) return;
    // Short names on the tabs; the panel's full title is on its chart and in the tooltip.
    static const QMap<QString, QString> tabNames = {
        {"timings", tr("Prefill/decode")},  {"kernel-timings", tr("Kernels")},
        {"model-card", tr("Model")},        {"cached-vs-uncached", tr("Caching")},
        {"attention-cost", tr("One head")}, {"mac-counts", tr("MACs")},
        {"kv-cache", tr("KV bytes")},       {"memory-budget", tr("Budget")},
        {"batching", tr("Batched decode")}, {"scheduler", tr("Scheduler")},
        {"kv-blocks", tr("KV blocks")},     {"activation-outliers", tr("Outliers")},
        {"quant-levels", tr("Levels")},     {"schemes", tr("Schemes")},
        {"speculative", tr("Speculative")}, {"soft-labels", tr("Soft labels")}};
    {
        const QSignalBlocker block(groupBar_);
        groupBar_->setCurrentIndex(group);
    }
    const QSignalBlocker block(panelBar_);
    while (panelBar_->count() > 0) panelBar_->removeTab(0);
    for (auto* panel : groups_[group].panels) {
        panelBar_->addTab(tabNames.value(panel->panelId(), panel->title()));
        panelBar_->setTabToolTip(panelBar_->count() - 1,
                                 panel->title() + ": " + panel->explanation());
    }
    panelBar_->setCurrentIndex(groups_[group].current);
    stack_->setCurrentWidget(groups_[group].panels.at(groups_[group].current));
}

void PanelDeck::showMember(int index) {
    auto& group = groups_[groupBar_->currentIndex()];
    if (index < 0 || index >= group.panels.size()) return;
    group.current = index;
    stack_->setCurrentWidget(group.panels.at(index));
}

QList<widgets::ChartPanel*> PanelDeck::panels() const {
    return {timings_,   kernels_,  caching_, attention_,   macs_,       kvCache_,
            outliers_,  levels_,   schemes_, speculative_, softLabels_, batching_,
            scheduler_, kvBlocks_, budget_,  modelCard_};
}

QStringList PanelDeck::panelIds() {
    // The order of panels(); a test checks the two against each other.
    return {"timings",    "kernel-timings", "cached-vs-uncached",  "attention-cost",
            "mac-counts", "kv-cache",       "activation-outliers", "quant-levels",
            "schemes",    "speculative",    "soft-labels",         "batching",
            "scheduler",  "kv-blocks",      "memory-budget",       "model-card"};
}

QList<PanelDeck::Group> PanelDeck::groups() const {
    QList<Group> result;
    for (const auto& group : groups_) {
        Group entry{group.label, {}};
        for (auto* panel : group.panels) entry.panelIds << panel->panelId();
        result << entry;
    }
    return result;
}

bool PanelDeck::showPanel(const QString& panelId) {
    for (qsizetype g = 0; g < groups_.size(); ++g)
        for (qsizetype i = 0; i < groups_[g].panels.size(); ++i)
            if (groups_[g].panels[i]->panelId() == panelId) {
                groups_[g].current = int(i);
                showGroup(int(g));
                return true;
            }
    return false;
}

widgets::ChartPanel* PanelDeck::currentPanel() const {
    return qobject_cast<widgets::ChartPanel*>(stack_->currentWidget());
}

void PanelDeck::subscribe(widgets::LabJobs& jobs) {
    timings_->subscribe(jobs);
    kernels_->subscribe(jobs);
    kvCache_->subscribe(jobs);
    modelCard_->subscribe(jobs);
    outliers_->subscribe(jobs);
    levels_->subscribe(jobs);
    caching_->subscribe(jobs);
    schemes_->subscribe(jobs);
    attention_->subscribe(jobs);
    macs_->subscribe(jobs);
    budget_->subscribe(jobs);
    softLabels_->subscribe(jobs);
    speculative_->subscribe(jobs);
    batching_->subscribe(jobs);
    scheduler_->subscribe(jobs);
    kvBlocks_->subscribe(jobs);
}

void PanelDeck::setPresentationScale(double scale) {
    for (auto* panel : panels()) panel->setPresentationScale(scale);
}

} // namespace inferscope::gui
