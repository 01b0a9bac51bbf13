#include "app/gui/PanelDeck.hpp"

#include "app/gui/PanelRegistry.hpp"

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

    for (const auto& label : panelGroups()) {
        groups_.append({label, {}, {}, 0});
        groupBar_->addTab(label);
    }
    for (const auto& spec : panelRegistry()) {
        auto* panel = spec.make(stack_);
        Q_ASSERT(panel->panelId() == spec.id);
        panels_ << panel;
        stack_->addWidget(panel);
        for (auto& group : groups_)
            if (group.label == spec.group) {
                group.panels << panel;
                group.tabNames << spec.tabName;
            }
    }
    connect(groupBar_, &QTabBar::currentChanged, this, &PanelDeck::showGroup);
    connect(panelBar_, &QTabBar::currentChanged, this, &PanelDeck::showMember);
    showGroup(0);
}

void PanelDeck::showGroup(int group) {
    if (group < 0 || group >= groups_.size() || groups_[group].panels.isEmpty()) return;
    {
        const QSignalBlocker block(groupBar_);
        groupBar_->setCurrentIndex(group);
    }
    const QSignalBlocker block(panelBar_);
    while (panelBar_->count() > 0) panelBar_->removeTab(0);
    const auto& members = groups_[group];
    // Short names on the tabs; the panel's full title is on its chart and in the tooltip.
    for (qsizetype i = 0; i < members.panels.size(); ++i) {
        panelBar_->addTab(members.tabNames[i]);
        panelBar_->setTabToolTip(int(i), members.panels[i]->title() + ": " +
                                             members.panels[i]->explanation());
    }
    panelBar_->setCurrentIndex(members.current);
    stack_->setCurrentWidget(members.panels.at(members.current));
}

void PanelDeck::showMember(int index) {
    auto& group = groups_[groupBar_->currentIndex()];
    if (index < 0 || index >= group.panels.size()) return;
    group.current = index;
    stack_->setCurrentWidget(group.panels.at(index));
}

widgets::LabPanel* PanelDeck::panel(const QString& id) const {
    for (auto* panel : panels_)
        if (panel->panelId() == id) return panel;
    return nullptr;
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

void PanelDeck::attach(const widgets::PanelContext& context) {
    for (auto* panel : panels_) panel->attach(context);
}

void PanelDeck::setPresentationScale(double scale) {
    for (auto* panel : panels_) panel->setPresentationScale(scale);
}

} // namespace inferscope::gui
